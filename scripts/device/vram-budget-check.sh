#!/usr/bin/env bash
# Issue 19, the VRAM budget on the device, in one call (before the full-scale runs rely on it):
#  1. porep-like 2^22 with --vram-budget 1.8 GiB, gw 2: the device plan must stream the queries
#     and run tight (the engine's log says both), and every proof verify;
#  2. the same with 0.5 GiB: refused before the setup, naming the figures (exit 2);
#  3. porep-like 2^25 with --vram-budget 7 GiB, gw 2, 1 proof x 2 partitions (tight, streamed);
#  then, with what is left of BUDGET, step 1 (scripts/device/full-scale-step1.sh, LOGS).
# Everything goes into $OUT/vram-budget-check.tgz (and step 1's own archive).
# Knobs: BUDGET (seconds for the whole script, default 560), LOGS ("25 26"), BIN.
set -uo pipefail
[ -n "${BIN:-}" ] || bash "$(dirname "$0")/unpack.sh" || exit 2
BIN=${BIN:-dist/proofscope}
OUT=${OUT:-/tmp/proofscope-gpu-out}
W=$(mktemp -d /tmp/vb.XXXX)
start=$(date +%s)
budget=${BUDGET:-560}
left() { echo $((budget - ($(date +%s) - start))); }
pack() {
  gzip -9 -f "$W"/*.jsonl 2>/dev/null
  tar -C "$W" -czf "$OUT/vram-budget-check.tgz" . && ls -la "$OUT"
}
trap pack EXIT
mkdir -p "$OUT"
TIME=$(command -v /usr/bin/time || true)
run() { # name, log2 size, budget GiB, gw, proofs, partitions
  local name=$1 log=$2 vb=$3 gw=$4 proofs=$5 parts=$6 t
  t=$(left)
  if [ "$t" -lt 30 ]; then echo "$name skipped: ${t} s left" | tee -a "$W/summary.txt"; return; fi
  echo "== $name: porep-like 2^$log, --vram-budget $vb, pw 2, gw $gw, $proofs x $parts (timeout $t s)" | tee -a "$W/summary.txt"
  ${TIME:+$TIME -v -o "$W/time-$name.txt"} timeout "$t" "$BIN" prove --setup-on-device --constraints $((1 << log)) --setup-seed 1 \
      --backend cuda --pw 2 --gw "$gw" --proofs "$proofs" --partitions "$parts" --verify --quiet --vram-budget "$vb" \
      --timeline "$W/$name.jsonl" -o "/tmp/vb-$name" > "$W/$name.log" 2>&1
  local rc=$?
  grep -E "VRAM budget|streamed|tight|take turns|error|failed|proofs" "$W/$name.log" | tail -12 | tee -a "$W/summary.txt"
  echo "$name: exit $rc after $(( $(date +%s) - start )) s; peak RSS: $(grep -h 'Maximum resident' "$W/time-$name.txt" 2>/dev/null)" | tee -a "$W/summary.txt"
  rm -rf "/tmp/vb-$name"
}
echo "binary from commit $(cat "${COMMIT_FILE:-dist/COMMIT}" 2>/dev/null || echo unknown)" | tee "$W/summary.txt"
run tight22 22 1.8 2 2 2
run refused22 22 0.5 2 1 1
run tight25 25 7 2 1 2
t=$(left)
if [ "$t" -gt 60 ]; then BUDGET=$((t - 5)) LOGS=${LOGS:-25 26} BIN=$BIN OUT=$OUT bash "$(dirname "$0")/full-scale-step1.sh"; fi
