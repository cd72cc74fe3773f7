#!/usr/bin/env bash
# On the GPU machine: a partition's a/b/c pooled (`cuda.abc_upload = "pooled"`: written by the
# products into vectors kept and page-locked once, copied in place) against staged, in one
# call: `gpu check --quick` (the quotient checked with all three upload modes) and the engine at
# 2^22 x 10 partitions (pw 8, gw 5, nice 10, 20 proofs) staged then pooled.
# Knobs: OUT (results), BIN, MODES (default "staged pooled"). Runs ~4 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.."
bash scripts/device/unpack.sh >/dev/null || exit 2
OUT=${OUT:-/tmp/abc-pooled}
BIN=${BIN:-dist/proofscope}
mkdir -p "$OUT"
BIN=$BIN bash scripts/device/machine.sh > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

timeout 200 "$BIN" gpu check --quick > "$OUT/check.txt" 2>&1
echo "gpu check --quick exit $?"
grep -E "pooled upload|FAIL|failed|passed" "$OUT/check.txt" | tail -8

for v in ${MODES:-staged pooled}; do
  echo "== 2^22 x 10, pw 8, gw 5, nice 10, abc_upload $v"
  OUT=$OUT/g5-$v LOG=22 PROOFS=20 PW=8 GW=5 RAM_BUDGET=auto BUDGET=85 \
    EXTRA="--set synthesis_nice=10 --set cuda.abc_upload=$v" bash scripts/device/full-scale-step2.sh 2>&1 | tail -3
done
