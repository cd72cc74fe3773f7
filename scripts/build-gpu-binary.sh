#!/usr/bin/env bash
# Builds the small prove-only binary with the CUDA backend for the GPU machine (no polars,
# no plotters) into dist/proofscope.xz (xz -9: ~17 MB where gzip gives ~25 MB, and a device call
# carries 64 MiB with reports/ in it; scripts/device/unpack.sh restores it there). Needs nvcc: $NVCC, PATH, or scripts/install-nvcc.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export NVCC=${NVCC:-$(bash scripts/install-nvcc.sh)}
cargo build --release -p proofscope --no-default-features --features cuda
mkdir -p dist
target=${CARGO_TARGET_DIR:-target}
# Shipped compressed: the embedded PTX is text and compresses ~10x, and what a device call
# carries is limited (64 MiB). On the GPU machine, scripts/device/unpack.sh restores
# dist/proofscope (the device scripts call it).
rm -f dist/proofscope dist/proofscope.gz
xz -9 -T0 -c "$target/release/proofscope" > dist/proofscope.xz.tmp && mv dist/proofscope.xz.tmp dist/proofscope.xz
# The tree it was built from, for the machine.txt of runs made with it (a device's copy of
# the repository may carry a stale .git).
git describe --always --dirty --abbrev=7 > dist/COMMIT 2>/dev/null || echo unknown > dist/COMMIT
ls -la dist/proofscope.xz
