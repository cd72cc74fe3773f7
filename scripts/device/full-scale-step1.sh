#!/usr/bin/env bash
# Issue 19, step 1, in one device call: one partition of porep-like at 2^25, 2^26 and 2^27
# constraints, gw 1, parameters made in process by the GPU setup (`prove --setup-on-device`:
# no file, the 2^27 one would not fit the disk uncompressed), proof verified. Before that the
# setup's checks (`gpu check --setup-only`: GPU comb vs CPU comb at 2^10..2^18, whole setups
# CPU vs GPU). Every log, /usr/bin/time's peak RSS and the compressed timelines go into one
# archive, $OUT/full-scale-step1.tgz (the device tool brings back at most 8 files).
# Build first, here: bash scripts/build-gpu-binary.sh (dist/COMMIT must be the tree's commit).
# Knobs: LOGS ("25 26 27"), BUDGET (seconds for the whole script, default 540), SKIP_CHECK
# (set: no setup check), BIN.
set -uo pipefail
[ -n "${BIN:-}" ] || bash "$(dirname "$0")/unpack.sh" || exit 2
BIN=${BIN:-dist/proofscope}
OUT=${OUT:-/tmp/proofscope-gpu-out}
W=$(mktemp -d /tmp/fs1.XXXX)
start=$(date +%s)
budget=${BUDGET:-540}
left() { echo $((budget - ($(date +%s) - start))); }
pack() {
  gzip -9 -f "$W"/*.jsonl 2>/dev/null
  tar -C "$W" -czf "$OUT/full-scale-step1.tgz" . && ls -la "$OUT"
}
trap pack EXIT
mkdir -p "$OUT"
{
  date -u +%FT%TZ
  echo "binary from commit $(cat "${COMMIT_FILE:-dist/COMMIT}" 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,power.limit --format=csv 2>&1
  nproc; free -g; df -h /tmp | tail -1
} > "$W/machine.txt" 2>&1
cat "$W/machine.txt"
if [ -z "${SKIP_CHECK:-}" ]; then
  timeout 90 "$BIN" gpu check --setup-only --seed 19 --json "$W/check-setup.json" > "$W/check-setup.txt" 2>&1
  echo "gpu check --setup-only: exit $?" | tee -a "$W/check-setup.txt"
  tail -14 "$W/check-setup.txt"
fi
TIME=$(command -v /usr/bin/time || true)
for log in ${LOGS:-25 26 27}; do
  t=$(left)
  if [ "$t" -lt 40 ]; then echo "2^$log skipped: ${t} s of the budget left" | tee -a "$W/prove.txt"; continue; fi
  echo "== porep-like 2^$log, setup on device, cuda pw 1 gw 1, 1 proof x 1 partition (timeout ${t} s)" | tee -a "$W/prove.txt"
  ${TIME:+$TIME -v -o "$W/time-$log.txt"} timeout "$t" "$BIN" prove --setup-on-device --constraints $((1 << log)) --setup-seed 1 \
      --backend cuda --pw 1 --gw 1 --proofs 1 --partitions 1 --verify --quiet \
      --timeline "$W/fs-$log.jsonl" -o /tmp/fs-proofs-$log > "$W/prove-$log.log" 2>&1
  rc=$?
  tail -3 "$W/prove-$log.log" | tee -a "$W/prove.txt"
  echo "exit $rc after $(( $(date +%s) - start )) s; peak RSS: $(grep -h 'Maximum resident' "$W/time-$log.txt" 2>/dev/null)" | tee -a "$W/prove.txt"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader >> "$W/prove.txt" 2>&1
  rm -rf /tmp/fs-proofs-$log
done
