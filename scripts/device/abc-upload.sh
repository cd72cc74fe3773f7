#!/usr/bin/env bash
# On the GPU machine: a partition's a/b/c uploaded staged (filled into page-locked chunks) or
# registered (their own pages page-locked in place, `cuda.abc_upload`), measured four ways in
# one call: `gpu check --quick` (the quotient checked with both), `gpu upload` (4 GiB, alone
# and beside 12 threads streaming host memory), the engine at 2^22 x 10 partitions with each
# (pw 8, nice 10, gw 5 and 3), and the RAM check before the setup's multiplications (2^27 with
# a 40 GiB budget: refused after the extraction, not after the whole setup).
# Knobs: OUT (results), BIN. Runs ~6 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.."
bash scripts/device/unpack.sh >/dev/null || exit 2
OUT=${OUT:-/tmp/abc-upload}
BIN=${BIN:-dist/proofscope}
mkdir -p "$OUT"
BIN=$BIN bash scripts/device/machine.sh > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

timeout 200 "$BIN" gpu check --quick > "$OUT/check.txt" 2>&1
echo "gpu check --quick exit $?"
grep -E "h quotient|FAIL|failed|passed" "$OUT/check.txt" | tail -8

timeout 150 "$BIN" gpu upload --gib 4 --chunks 64 --modes parallel,registered --load 0,12 --runs 3 --json "$OUT/upload.json" > "$OUT/upload.txt" 2>&1
echo "gpu upload exit $?"
grep "^upload" "$OUT/upload.txt"

t0=$(date +%s)
timeout 150 "$BIN" prove --setup-on-device --constraints $((1 << 27)) --backend cuda --pw 4 --gw 1 --proofs 1 \
  --ram-budget 40GiB --timeline /tmp/refuse.jsonl -o /tmp/refuse-out > "$OUT/refuse.txt" 2>&1
echo "2^27 with a 40 GiB budget: exit $? after $(( $(date +%s) - t0 )) s"
tail -3 "$OUT/refuse.txt"

for v in staged registered; do
  for gw in 5 3; do
    echo "== 2^22 x 10, pw 8, gw $gw, nice 10, abc_upload $v"
    OUT=$OUT/g$gw-$v LOG=22 PROOFS=20 PW=8 GW=$gw RAM_BUDGET=auto BUDGET=85 \
      EXTRA="--set synthesis_nice=10 --set cuda.abc_upload=$v" bash scripts/device/full-scale-step2.sh 2>&1 | tail -3
  done
done
