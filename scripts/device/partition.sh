#!/usr/bin/env bash
# Whole partitions on the GPU machine: TEST-ONLY setup of the PoRep-like circuit at
# 2^LOG constraints (made there: the parameter files are too big to send), then `prove`
# with the CUDA backend for each engine shape in CONFIGS ("pw:gw:proofs:partitions"), and
# once with the CPU backend unless SKIP_CPU is set. Timelines and logs under $OUT.
# Usage (after scripts/build-gpu-binary.sh, carry dist):
#   LOGS="20" CONFIGS="2:2:3:1" bash scripts/device/partition.sh
set -uo pipefail
[ -n "${BIN:-}" ] || bash "$(dirname "$0")/unpack.sh" || exit 2
BIN=${BIN:-dist/proofscope}
OUT=${OUT:-/tmp/proofscope-gpu-out}
mkdir -p "$OUT"
for log in ${LOGS:-20}; do
  n=$((1 << log))
  p=/tmp/params-$log.bin
  { timeout "${SETUP_TIMEOUT:-200}" "$BIN" setup --constraints $n -o $p 2>&1 | tail -1; } | tee -a "$OUT/prove.txt"
  [ -f $p ] || { echo "setup 2^$log did not finish" | tee -a "$OUT/prove.txt"; continue; }
  for cfg in ${CONFIGS:-2:2:3:1}; do
    IFS=: read -r pw gw proofs parts <<<"$cfg"
    echo "== 2^$log cuda pw=$pw gw=$gw proofs=$proofs partitions=$parts" | tee -a "$OUT/prove.txt"
    timeout "${PROVE_TIMEOUT:-150}" "$BIN" prove --params $p --backend cuda --pw $pw --gw $gw --proofs $proofs --partitions $parts --verify --quiet \
        --timeline "$OUT/cuda-$log-pw$pw-gw$gw.jsonl" -o /tmp/proofs-cuda-$log 2>&1 | tail -2 | tee -a "$OUT/prove.txt"
  done
  if [ -z "${SKIP_CPU:-}" ]; then
    echo "== 2^$log cpu" | tee -a "$OUT/prove.txt"
    timeout "${PROVE_TIMEOUT:-150}" "$BIN" prove --params $p --backend cpu --proofs 1 --partitions 1 --verify --quiet \
        --timeline "$OUT/cpu-$log.jsonl" -o /tmp/proofs-cpu-$log 2>&1 | tail -2 | tee -a "$OUT/prove.txt"
  fi
done
