#!/usr/bin/env bash
# Issue 19, "parameters at 2^27" in one device call: the GPU setup writes a parameter file (and
# the pre-compiled constraints beside it, PARAMS.pce), then `prove --params` loads it (mapped,
# BLAKE3 over all cores, decoded), uploads the queries, releases the host copy and proves
# PROOFS x PARTS partitions, every proof verified. Targets (issue 19): setup with the file
# written <= 3 min; parameters resident <= 60 s from a warm page cache, <= 2 min cold (COLD=1
# drops the page cache before the prove, which needs root there).
# Everything goes into one archive, $OUT/params-file.tgz. The file itself is deleted at the end.
# Knobs: LOG (27), COMPRESSED (set: --compressed, ~22 GiB instead of ~44), PROOFS (1),
# PARTS (2), PW (2), GW (1), COLD, BUDGET (seconds for the whole script, default 560), BIN; ON (gpu)
# and BACKEND (cuda) let the script itself be tried on a machine without a GPU.
set -uo pipefail
[ -n "${BIN:-}" ] || bash "$(dirname "$0")/unpack.sh" || exit 2
BIN=${BIN:-dist/proofscope}
OUT=${OUT:-/tmp/proofscope-gpu-out}
W=$(mktemp -d /tmp/pf.XXXX)
D=${PARAMS_DIR:-/tmp/pf-params}
LOG=${LOG:-27}; PROOFS=${PROOFS:-1}; PARTS=${PARTS:-2}; PW=${PW:-2}; GW=${GW:-1}
budget=${BUDGET:-560}
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start))); }
pack() {
  rm -rf "$D"
  gzip -9 -f "$W"/*.jsonl 2>/dev/null
  tar -C "$W" -czf "$OUT/params-file.tgz" . && ls -la "$OUT"
}
trap pack EXIT
mkdir -p "$OUT" "$D"
{
  date -u +%FT%TZ
  echo "binary from commit $(cat "${COMMIT_FILE:-dist/COMMIT}" 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv 2>&1
  nproc; free -g; df -h "$D" | tail -1
  echo "config: LOG=$LOG COMPRESSED=${COMPRESSED:-} PROOFS=$PROOFS PARTS=$PARTS PW=$PW GW=$GW COLD=${COLD:-}"
} > "$W/machine.txt" 2>&1
cat "$W/machine.txt"
TIME=$(command -v /usr/bin/time || true)
${TIME:+$TIME -v -o "$W/time-setup.txt"} timeout "$(left)" "$BIN" setup --on "${ON:-gpu}" --constraints $((1 << LOG)) --seed 1 \
    --params "$D/p.bin" ${COMPRESSED:+--compressed} > "$W/setup.log" 2>&1
echo "setup exit $? after $(( $(date +%s) - start )) s" | tee -a "$W/setup.log"
tail -4 "$W/setup.log"
ls -la "$D" | tee -a "$W/setup.log"; df -h "$D" | tail -1 | tee -a "$W/setup.log"
[ -f "$D/p.bin" ] || exit 1
if [ -n "${COLD:-}" ]; then
  sync; (echo 3 > /proc/sys/vm/drop_caches) 2>&1 | tee -a "$W/setup.log"; free -g | tee -a "$W/setup.log"
fi
nvidia-smi --query-gpu=timestamp,memory.used --format=csv,noheader -l 1 > "$W/nvidia-smi.csv" 2>&1 &
SMI=$!
${TIME:+$TIME -v -o "$W/time-prove.txt"} timeout "$(left)" "$BIN" prove --params "$D/p.bin" --backend "${BACKEND:-cuda}" --pw "$PW" --gw "$GW" \
    --proofs "$PROOFS" --partitions "$PARTS" --verify --ram-budget auto \
    --timeline "$W/pf.jsonl" -o /tmp/pf-proofs > "$W/prove.log" 2>&1
rc=$?
kill $SMI 2>/dev/null
grep -iE "loaded|hash|decode|released|pce|setup|proofs ×|error" "$W/prove.log" | head -20
echo "prove exit $rc after $(( $(date +%s) - start )) s; peak RSS: $(grep -h 'Maximum resident' "$W/time-prove.txt" 2>/dev/null)" | tee -a "$W/prove.log"
rm -rf /tmp/pf-proofs
