#!/usr/bin/env bash
# One partition's synthesis on the GPU machine's CPU (no GPU used): the circuit path against
# the pre-compiled constraints (PCE), `proofscope circuit --synthesis-bench`, PoRep-like at
# 2^22 and 2^24 with all cores (16 threads × 1 synthesis), then the same cores split between
# concurrent syntheses at 2^22 (8×2, 4×4, 2×8: threads per synthesis × syntheses), then mix16
# at 2^22. Each run reports the median of REPS rounds of both paths, the PCE's bytes per
# constraint, its extraction time (and, at 2^24, its cache file's write and read times), the
# witness in pieces on the synthesis's pool against the same witness on one thread, the
# memory bandwidth (STREAM-like triad with the same threads), the products' floor and
# measured ÷ floor. Whole runs are skipped once BUDGET seconds (default 450) would be
# exceeded, so the script ends within ~7.5 minutes whatever the host's speed.
#
# Outputs in $OUT: synthesis.jsonl (one report per run), synthesis.txt (log and summary
# table), machine.txt.
#
# Usage: build the binary here and carry dist (the bench needs no CUDA; either build works):
#   scripts/build-gpu-binary.sh                        # with the CUDA backend, or:
#   cargo build --release -p proofscope --no-default-features && mkdir -p dist \
#     && xz -9 -c "${CARGO_TARGET_DIR:-target}/release/proofscope" > dist/proofscope.xz
# then on the machine (device run, carry ["dist"]):
#   bash scripts/device/synthesis.sh
#   LOGS_FULL="22" SPLITS="8x2" REPS=5 BUDGET=300 bash scripts/device/synthesis.sh
# (LOGS_FULL: sizes with all cores, "" for none; SPLITS: threads x syntheses at SPLIT_LOG; SPLITS_SKIP_CIRCUIT
# set: the splits time the PCE path only; MIX_LOG: the mix16 run, "" for none; CACHE_LOG: the
# size whose cache file is timed.)
set -uo pipefail
[ -n "${BIN:-}" ] || bash "$(dirname "$0")/unpack.sh" || exit 2
BIN=${BIN:-dist/proofscope}
OUT=${OUT:-/tmp/proofscope-synthesis-out}
REPS=${REPS:-3}
BUDGET=${BUDGET:-450}
CORES=$(nproc)
LOGS_FULL=${LOGS_FULL-"22 24"}
SPLITS=${SPLITS-"$((CORES / 2))x2 $((CORES / 4))x4 $((CORES / 8))x8"}
SPLIT_LOG=${SPLIT_LOG:-22}
MIX_LOG=${MIX_LOG-22}
CACHE_LOG=${CACHE_LOG:-24}
mkdir -p "$OUT"
: > "$OUT/synthesis.jsonl"
{
  echo "host $(hostname 2>/dev/null) cores $CORES"
  grep -m1 "model name" /proc/cpuinfo
  grep -E "MemTotal|MemAvailable" /proc/meminfo
  echo "binary commit $(cat dist/COMMIT 2>/dev/null || echo unknown)"
  uptime
} > "$OUT/machine.txt" 2>&1
start=$(date +%s)

# run NAME CAP_S ARGS...: one bench, its JSON appended to synthesis.jsonl (tagged with NAME).
run() {
  local name=$1 cap=$2
  shift 2
  local left=$((BUDGET - ($(date +%s) - start)))
  if [ "$left" -lt 20 ]; then
    echo "== $name: skipped (budget of ${BUDGET} s spent)" | tee -a "$OUT/synthesis.txt"
    return
  fi
  [ "$cap" -gt "$left" ] && cap=$left
  echo "== $name (limit ${cap} s): circuit $*" | tee -a "$OUT/synthesis.txt"
  local t0=$(date +%s)
  if timeout "$cap" "$BIN" circuit "$@" --synthesis-bench --reps "$REPS" --json > "$OUT/run.json" 2>> "$OUT/synthesis.txt"; then
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["run"]=sys.argv[2]; print(json.dumps(r))' "$OUT/run.json" "$name" >> "$OUT/synthesis.jsonl" 2>> "$OUT/synthesis.txt" \
      || { printf '{"run":"%s","report":' "$name"; tr -d '\n' < "$OUT/run.json"; echo '}'; } >> "$OUT/synthesis.jsonl"
    echo "   done in $(($(date +%s) - t0)) s" | tee -a "$OUT/synthesis.txt"
  else
    echo "   FAILED or timed out (rc $?) after $(($(date +%s) - t0)) s" | tee -a "$OUT/synthesis.txt"
  fi
  rm -f "$OUT/run.json"
}

for log in $LOGS_FULL; do
  cache=()
  [ "$log" = "$CACHE_LOG" ] && cache=(--pce-cache "/tmp/proofscope-pce-$log.pce")
  cap=150
  [ "$log" -ge 24 ] && cap=280
  run "porep-like-$log-${CORES}x1" "$cap" --constraints "2^$log" --threads "$CORES" --concurrent 1 "${cache[@]}"
  rm -f "/tmp/proofscope-pce-$log.pce"
done
for split in $SPLITS; do
  t=${split%x*}
  k=${split#*x}
  [ "$t" -ge 1 ] || continue
  run "porep-like-$SPLIT_LOG-${t}x${k}" 120 --constraints "2^$SPLIT_LOG" --threads "$t" --concurrent "$k" ${SPLITS_SKIP_CIRCUIT:+--skip-circuit}
done
[ -n "$MIX_LOG" ] && run "mix16-$MIX_LOG-${CORES}x1" 90 --circuit mix16 --constraints "2^$MIX_LOG" --threads "$CORES" --concurrent 1

# Summary table (python3; the JSON lines are the record either way).
python3 - "$OUT/synthesis.jsonl" <<'EOF' 2>&1 | tee -a "$OUT/synthesis.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print()
print("| run | B/constraint | extract s | circuit s | pce s (witness + products) | witness 1 thread -> pieces s | speedup | syntheses/s circuit -> pce | triad GB/s | products floor s | products / floor | reused vectors: products s / floor | streaming stores: s / floor | buffered, plain stores: s |")
print("|---|---:|---:|---:|---|---|---:|---|---:|---:|---:|---|---|---:|")
for r in rows:
    if "pce" not in r:
        print(f"| {r.get('run')} | (unparsed) |")
        continue
    c = r.get("circuit_path") or {}
    p = r["pce_path"]
    print(f"| {r['run']} | {r['pce']['size']['bytes_per_constraint']:.1f} | {r['pce']['extract_s']:.2f} | {c.get('median_s', float('nan')):.3f} | "
          f"{p['median_s']:.3f} ({p['witness_s']:.3f} + {p['products_s']:.3f}) | "
          f"{p.get('witness_sequential_s') or float('nan'):.3f} -> {p['witness_s']:.3f} ({r.get('witness_speedup') or float('nan'):.2f}x, {p.get('witness_pieces', 0)} pieces) | {r.get('speedup') or float('nan'):.2f}x | "
          f"{r.get('circuit_per_s') or float('nan'):.2f} -> {r['pce_per_s']:.2f} | {r['bandwidth']['triad_gbs']:.1f} | {r['products_floor_s']:.4f} | {r['products_vs_floor']:.2f} | "
          f"{r.get('products_reused_s') or float('nan'):.4f} / {r.get('products_reused_vs_floor') or float('nan'):.2f} | "
          f"{r.get('products_streamed_s') or float('nan'):.4f} / {r.get('products_streamed_vs_floor') or float('nan'):.2f} | "
          f"{r.get('products_buffered_s') or float('nan'):.4f} |")
    cache = r["pce"].get("cache")
    if cache:
        print(f"|   cache {cache['file_bytes'] / 2**20:.0f} MiB: write {cache['write_s']:.2f} s, read {cache['load_s']:.2f} s | | | | | | | | | | | | | |")
EOF
echo "total $(($(date +%s) - start)) s" | tee -a "$OUT/synthesis.txt"
