#!/usr/bin/env bash
# "Simulate before implementing", checked on real runs: calibrate the simulator on an engine
# run whose G2 MSM ran on the CPU, predict the same configuration with the G2 MSM moved to the
# GPU — with the estimate one would make before writing the kernels (3 x the measured B_G1 MSM:
# an Fp2 product is three Fp products) and with the G2 kernels' measured time — and compare
# both predictions with a run where the G2 MSM did run on the GPU.
#
#   bash scripts/whatif-g2.sh CPU_G2_RUN.jsonl[.gz] GPU_G2_RUN.jsonl[.gz] MACHINE.txt OUTDIR
#
# OUTDIR gets base.toml, model.toml, calibrate.txt, predict-estimate/ and predict-measured/
# (parity reports) and README.md (the table). Knob: PROOFSCOPE (binary; default: cargo build).
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: whatif-g2.sh CPU_G2_RUN GPU_G2_RUN MACHINE.txt OUTDIR" >&2; exit 2; }
CALLER=$PWD
abs() { case $1 in /*) echo "$1" ;; *) echo "$CALLER/$1" ;; esac; }
CPU_RUN=$(abs "$1"); GPU_RUN=$(abs "$2"); MACHINE=$(abs "$3"); OUT=$(abs "$4")
for f in "$CPU_RUN" "$GPU_RUN" "$MACHINE"; do [ -f "$f" ] || { echo "whatif-g2: $f: no such file" >&2; exit 2; }; done
cd "$(dirname "$0")/.."
if [ -z "${PROOFSCOPE:-}" ]; then
  cargo build -q -p proofscope
  PROOFSCOPE=${CARGO_TARGET_DIR:-target}/debug/proofscope
fi
PS=$PROOFSCOPE
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
cat_any() { case $1 in *.gz) gunzip -c "$1" ;; *) cat "$1" ;; esac; }
cat_any "$CPU_RUN" > "$TMP/cpu.jsonl"
cat_any "$GPU_RUN" > "$TMP/gpu.jsonl"
rm -rf "$OUT"; mkdir -p "$OUT"
"$PS" campaign base "$MACHINE" "$TMP/cpu.jsonl" -o "$OUT"
"$PS" calibrate "$TMP/cpu.jsonl" --base "$OUT/base.toml" -o "$OUT" > "$OUT/calibrate.txt"
# Mean device time of the B_G1 MSM (CPU-G2 run) and of the G2 MSM (GPU-G2 run), ms.
mean_ms() { python3 -c '
import json, sys
d = [(e["end_ns"] - e["start_ns"]) / 1e6 for e in map(json.loads, open(sys.argv[1])) if e.get("kind") == sys.argv[2] and e.get("end_ns")]
print(f"{sum(d) / len(d):.1f}" if d else "")' "$1" "$2"; }
B1=$(mean_ms "$TMP/cpu.jsonl" msm_b_g1); G2=$(mean_ms "$TMP/gpu.jsonl" msm_b_g2)
[ -n "$B1" ] && [ -n "$G2" ] || { echo "whatif-g2: need msm_b_g1 spans in the CPU-G2 run and msm_b_g2 spans in the GPU-G2 run" >&2; exit 1; }
EST=$(python3 -c "print(f'{3 * $B1:.1f}')")
row() { # label msm_b_g2 dir
  "$PS" simulate "$OUT/model.toml" --set "msm_b_g2=$2" --set b_g2_msm=0 --compare-to "$TMP/gpu.jsonl" -o "$OUT/$3" > "$OUT/$3.txt"
  python3 - "$OUT/$3/parity.json" "$1" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
m = {x["metric"]: x for x in p["metrics"]}
def cell(k):
    x = m.get(k)
    return f"{x['measured']:.2f} / {x['predicted']:.2f} ({x['error_pct']:+.1f} %)" if x else "–"
print(f"| {sys.argv[2]} | {sys.argv[3]} | {cell('total s/proof')} | {cell('steady s/proof (partition rate)')} |")
PY
}
{
  echo "# What if the G2 MSM ran on the GPU? Predicted from a run where it did not, checked against one where it did"
  echo
  echo "Calibrated on \`$(basename "$CPU_RUN")\` (G2 MSM on the CPU, in the finisher); the prediction moves it to the GPU (\`--set b_g2_msm=0 --set msm_b_g2=X\`: out of the finisher, into the kernels under the GPU lock) and is compared with \`$(basename "$GPU_RUN")\`, the same configuration with the G2 MSM on the GPU. Written by \`scripts/whatif-g2.sh\`."
  echo
  echo "| G2 MSM on the GPU, per partition | X (ms) | total s/proof: measured / predicted (error) | steady s/proof, partition rate: measured / predicted (error) |"
  echo "|---|---:|---:|---:|"
  row "estimate before writing the kernels: 3 × B_G1 MSM ($B1 ms measured)" "$EST" predict-estimate
  row "measured mean of the msm_b_g2 spans" "$G2" predict-measured
  echo
  echo "Calibration notes: [calibrate.txt](calibrate.txt). Parity reports: [predict-estimate/parity.md](predict-estimate/parity.md), [predict-measured/parity.md](predict-measured/parity.md)."
} > "$OUT/README.md"
cat "$OUT/README.md"
