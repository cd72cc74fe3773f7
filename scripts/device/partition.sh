#!/usr/bin/env bash
# Whole partitions on the GPU machine: TEST-ONLY setup of a benchmark circuit (CIRCUIT:
# porep-like, the default, or mix16) at 2^LOG constraints (made there: the parameter files
# are too big to send), then `prove` with the CUDA backend for each engine shape in CONFIGS
# ("pw:gw:proofs:partitions"; PROVE_ARGS are added to each, e.g. "--lock kernels"), and once
# with the CPU backend unless SKIP_CPU is set. Timelines and logs under $OUT; TAG is added
# to the timelines' names (runs of the same shape with other settings in the environment).
# Usage (after scripts/build-gpu-binary.sh, carry dist):
#   LOGS="20" CONFIGS="2:2:3:1" bash scripts/device/partition.sh
#   CIRCUIT=mix16 LOGS=24 CONFIGS="1:1:3:1" SKIP_CPU=1 bash scripts/device/partition.sh
set -uo pipefail
[ -n "${BIN:-}" ] || bash "$(dirname "$0")/unpack.sh" || exit 2
BIN=${BIN:-dist/proofscope}
OUT=${OUT:-/tmp/proofscope-gpu-out}
mkdir -p "$OUT"
for log in ${LOGS:-20}; do
  n=$((1 << log))
  c=${CIRCUIT:-porep-like}
  p=/tmp/params-$c-$log.bin
  [ -s "$p" ] || { timeout "${SETUP_TIMEOUT:-200}" "$BIN" setup --circuit "$c" --constraints $n --params $p 2>&1 | tail -1; } | tee -a "$OUT/prove.txt"
  [ -f $p ] || { echo "setup 2^$log did not finish" | tee -a "$OUT/prove.txt"; continue; }
  for cfg in ${CONFIGS:-2:2:3:1}; do
    IFS=: read -r pw gw proofs parts <<<"$cfg"
    echo "== $c 2^$log cuda pw=$pw gw=$gw proofs=$proofs partitions=$parts ${PROVE_ARGS:-} ${TAG:-}" | tee -a "$OUT/prove.txt"
    timeout "${PROVE_TIMEOUT:-150}" "$BIN" prove --params $p --backend cuda --pw $pw --gw $gw --proofs $proofs --partitions $parts --verify --quiet ${PROVE_ARGS:-} \
        --timeline "$OUT/cuda-$c-$log-pw$pw-gw$gw${TAG:+-$TAG}.jsonl" -o /tmp/proofs-cuda-$c-$log 2>&1 | tail -2 | tee -a "$OUT/prove.txt"
  done
  if [ -z "${SKIP_CPU:-}" ]; then
    echo "== 2^$log cpu" | tee -a "$OUT/prove.txt"
    timeout "${PROVE_TIMEOUT:-150}" "$BIN" prove --params $p --backend cpu --proofs 1 --partitions 1 --verify --quiet \
        --timeline "$OUT/cpu-$c-$log.jsonl" -o /tmp/proofs-cpu-$c-$log 2>&1 | tail -2 | tee -a "$OUT/prove.txt"
  fi
done
