#!/usr/bin/env bash
# On the GPU machine: restore dist/proofscope from the dist/proofscope.gz that
# scripts/build-gpu-binary.sh ships (gzipped to fit what a device call carries).
# Idempotent; a no-op when dist/proofscope is already newer than the archive.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -f dist/proofscope.gz ] && { [ ! -x dist/proofscope ] || [ dist/proofscope.gz -nt dist/proofscope ]; }; then
  gzip -dc dist/proofscope.gz > dist/proofscope.tmp && chmod +x dist/proofscope.tmp && mv dist/proofscope.tmp dist/proofscope
fi
[ -x dist/proofscope ] || { echo "unpack: no dist/proofscope(.gz): run scripts/build-gpu-binary.sh and carry dist" >&2; exit 2; }
