#!/usr/bin/env bash
# Issue 19, step 2, one configuration per device call: PROOFS proofs x PARTS partitions of the
# porep-like circuit at 2^LOG constraints, parameters made in process by the GPU setup
# (`prove --setup-on-device`), CUDA backend, every proof verified. The prediction for the same
# configuration must be committed before this runs (reports/gpu/<run>/prediction-*.md).
# Everything (machine facts, logs, /usr/bin/time's peak RSS, nvidia-smi samples, the
# compressed timeline) goes into one archive, $OUT/full-scale-step2.tgz.
# Knobs: LOG (27), PROOFS (3), PARTS (10), PW (4), GW (1), RAM_BUDGET (unset: the binary's
# default; "auto" or e.g. 100GiB where the binary has --ram-budget), EXTRA (more prove flags),
# BUDGET (seconds for the whole script, default 560), BIN.
set -uo pipefail
[ -n "${BIN:-}" ] || bash "$(dirname "$0")/unpack.sh" || exit 2
BIN=${BIN:-dist/proofscope}
OUT=${OUT:-/tmp/proofscope-gpu-out}
W=$(mktemp -d /tmp/fs2.XXXX)
LOG=${LOG:-27}; PROOFS=${PROOFS:-3}; PARTS=${PARTS:-10}; PW=${PW:-4}; GW=${GW:-1}
budget=${BUDGET:-560}
start=$(date +%s)
pack() {
  kill "${SMI:-0}" 2>/dev/null
  gzip -9 -f "$W"/*.jsonl "$W"/*.log.cuzk 2>/dev/null
  tar -C "$W" -czf "$OUT/full-scale-step2.tgz" . && ls -la "$OUT"
}
trap pack EXIT
mkdir -p "$OUT"
{
  date -u +%FT%TZ
  echo "binary from commit $(cat "${COMMIT_FILE:-dist/COMMIT}" 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,power.limit --format=csv 2>&1
  nproc; free -g; df -h /tmp | tail -1
  echo "config: LOG=$LOG PROOFS=$PROOFS PARTS=$PARTS PW=$PW GW=$GW RAM_BUDGET=${RAM_BUDGET:-default} EXTRA=${EXTRA:-}"
} > "$W/machine.txt" 2>&1
cat "$W/machine.txt"
# Device memory every second, for the peak VRAM.
nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv,noheader -l 1 > "$W/nvidia-smi.csv" 2>&1 &
SMI=$!
TIME=$(command -v /usr/bin/time || true)
t=$((budget - ($(date +%s) - start)))
${TIME:+$TIME -v -o "$W/time.txt"} timeout "$t" "$BIN" prove --setup-on-device --constraints $((1 << LOG)) --setup-seed 1 \
    --backend cuda --pw "$PW" --gw "$GW" --proofs "$PROOFS" --partitions "$PARTS" --verify --quiet \
    ${RAM_BUDGET:+--ram-budget "$RAM_BUDGET"} ${EXTRA:-} \
    --timeline "$W/fs2.jsonl" -o /tmp/fs2-proofs > "$W/prove.log" 2>&1
rc=$?
tail -5 "$W/prove.log"
echo "prove exit $rc after $(( $(date +%s) - start )) s; peak RSS: $(grep -h 'Maximum resident' "$W/time.txt" 2>/dev/null)" | tee -a "$W/prove.log"
ls /tmp/fs2-proofs 2>/dev/null | head -20 >> "$W/prove.log"
