#!/usr/bin/env bash
# Compiles prover/cuda/field.cuh + g1.cuh for the host (PTX carry chains emulated) and
# runs their algebraic identity tests: catches carry-chain bugs without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${TMPDIR:-/tmp}/proofscope-host-field-test
${CXX:-c++} -O2 -std=c++17 -Wno-unknown-pragmas prover/cuda/test/host_field_test.cpp -o "$out"
"$out"
