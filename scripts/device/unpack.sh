#!/usr/bin/env bash
# On the GPU machine: restore dist/proofscope from the dist/proofscope.xz (or, from older
# builds, .gz) that scripts/build-gpu-binary.sh ships (compressed to fit what a device call carries).
# Idempotent; a no-op when dist/proofscope is already newer than the archive.
set -euo pipefail
cd "$(dirname "$0")/../.."
for a in dist/proofscope.xz dist/proofscope.gz; do
  [ -f "$a" ] || continue
  if [ ! -x dist/proofscope ] || [ "$a" -nt dist/proofscope ]; then
    case $a in *.xz) xz -dc "$a" ;; *) gzip -dc "$a" ;; esac > dist/proofscope.tmp && chmod +x dist/proofscope.tmp && mv dist/proofscope.tmp dist/proofscope
  fi
  break
done
[ -x dist/proofscope ] || { echo "unpack: no dist/proofscope(.xz|.gz): run scripts/build-gpu-binary.sh and carry dist" >&2; exit 2; }
