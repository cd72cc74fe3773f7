#!/usr/bin/env bash
# Compiles prover/cuda/field.cuh, fp2.cuh, curve.cuh (+ msm_digits.cuh) for the host (PTX carry chains
# emulated) and runs their algebraic identity tests, then runs the MSM kernels of msm.cu on
# the host (host_msm_test.cpp: every accumulation variant, several window sizes) against
# the expected sum: catches carry-chain, layout and indexing bugs without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${TMPDIR:-/tmp}/proofscope-host-field-test
${CXX:-c++} -O2 -std=c++17 -Wno-unknown-pragmas prover/cuda/test/host_field_test.cpp -o "$out"
"$out"
${CXX:-c++} -O2 -std=c++20 -pthread -Wno-unknown-pragmas prover/cuda/test/host_msm_test.cpp -o "$out-msm"
"$out-msm"
