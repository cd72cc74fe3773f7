#!/usr/bin/env bash
# Builds the small prove-only binary with the CUDA backend for the GPU machine (no polars,
# no plotters) into dist/proofscope. Needs nvcc: $NVCC, PATH, or scripts/install-nvcc.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export NVCC=${NVCC:-$(bash scripts/install-nvcc.sh)}
cargo build --release -p proofscope --no-default-features --features cuda
mkdir -p dist
target=${CARGO_TARGET_DIR:-target}
cp "$target/release/proofscope" dist/proofscope
ls -la dist/proofscope
