#!/usr/bin/env bash
# The analysis half of issue 6's campaign, on a machine with the full binary (charts,
# Parquet): turns the folder written by scripts/campaign.sh into reports/campaign-<date>/.
#
#   bash scripts/campaign-analyze.sh CAMPAIGN_DIR [REPORT_DIR]
#
# For every configuration that ran (status ok):
#   proofscope analyze  -> <cfg>/ (summary.json, report.md, waterfall, utilisation, Parquet)
# then, calibrating from ONE run (CAL in campaign.env):
#   proofscope calibrate runs/CAL.jsonl --base base.toml -> model.toml
#   proofscope simulate model.toml --set pw=.. --set gw=.. --set lock=.. --set split=..
#       --compare-to runs/<cfg>.jsonl -> <cfg>/parity/ (parity.md/json/svg), prediction.json
#   proofscope compare <every cfg> -> evolution.md (throughput evolution: x baseline, x previous)
# and campaign.json / campaign.md / parity-campaign.svg: per configuration predicted vs
# measured steady-state s/proof, GPU utilisation and latency, error %, MAPE, rankings and
# best configuration, bottleneck and floors. Timelines are copied (gzipped) into runs/.
# base.toml (what a log cannot tell: cores, RAM, footprints, CPU demands) is derived from
# simulator/configs/phase8.toml, machine.txt and the calibration run's RSS counter; its
# header says which values are guesses. The report folder is rewritten from scratch
# (idempotent); the reports/README.md index is then regenerated.
# Knobs: PROOFSCOPE (binary; default: cargo build -p proofscope), CAL (override), REPEAT (the
# campaign.log of another run of the same grid: writes noise.md, the run-to-run spread).
set -euo pipefail
CALLER=$PWD
abs() { case $1 in /*) echo "$1" ;; *) echo "$CALLER/$1" ;; esac; }
cd "$(dirname "$0")/.."
ROOT=$PWD
# base.toml: the reference config with a machine's sizes.
# usage: write_base MACHINE_TXT CALIBRATION_RUN.jsonl OUT.toml
write_base() {
python3 - "$ROOT/simulator/configs/phase8.toml" "$1" "$2" "$3" <<'EOF'
import json, re, sys
src, machine, cal, out = sys.argv[1:]
text = open(src).read()
text = text[re.search(r"(?m)^name\s*=", text).start():]  # drop phase8's header: it describes the reference box
text = re.sub(r"(?m)^\[machine\].*$", "[machine]", text)
m = dict(l.split(": ", 1) for l in open(machine).read().splitlines() if ": " in l)
cores = int(m.get("nproc", "16"))
ram = float(m.get("ram_gib", "128"))
vram = 80.0
g = re.search(r"gpu: [^,]*, (\d+) MiB", open(machine).read())
if g:
    vram = int(g.group(1)) / 1024
rss = [json.loads(l)["value"] for l in open(cal) if '"rss_bytes"' in l]
cfg = next((json.loads(l)["config"] for l in open(cal) if '"type":"meta"' in l.replace(" ", "")), {})
base_gib = min(rss) / 2**30 if rss else 1.0
peak_gib = max(rss) / 2**30 if rss else 2.0
holders = max(1, cfg.get("pw", 1) + cfg.get("gw", 1) * cfg.get("gpus", 1))
part_gib = max(0.01, (peak_gib - base_gib) / holders)
def put(key, value, why):
    global text
    text, n = re.subn(rf"(?m)^{key}\s*=.*$", f"{key} = {value}  # {why}", text, count=1)
    assert n == 1, key
put("name", '"campaign-base"', "derived by scripts/campaign-analyze.sh from phase8.toml")
put("cpu_cores", cores, "machine.txt (nproc)")
put("ram_gib", f"{ram:.1f}", "machine.txt (MemTotal)")
put("gpus", 1, "the campaign uses one device")
put("vram_gib", f"{vram:.1f}", "machine.txt (nvidia-smi memory.total), else 80")
put("baseline_gib", f"{base_gib:.3f}", "smallest rss_bytes sample of the calibration run")
put("partition_gib", f"{part_gib:.3f}", "ROUGH: (peak - smallest rss) / (pw + gw) of the calibration run")
put("abc_gib", f"{0.75 * part_gib:.3f}", "ROUGH: 3/4 of partition_gib")
put("vram_baseline_gib", "1.0", "GUESS")
put("call_vram_gib", "1.0", "GUESS")
put("synth_cores", "1.0", "GUESS: one partition's synthesis runs on one thread")
put("prep_cores", f"{max(1.0, cores / 2):.1f}", "GUESS (fitted from cpu_busy_cores when present): rayon-parallel")
put("finalize_cores", f"{max(1.0, 0.75 * cores):.1f}", "GUESS (calibrate fits it from cpu_busy_cores when the run has it): blst's G2 MSM uses the cores it finds")
open(out, "w").write(
    "# Base config of the measured machine: what a timeline cannot tell (written by scripts/campaign-analyze.sh\n"
    "# from simulator/configs/phase8.toml; values marked GUESS or ROUGH are not measured). Costs and\n"
    "# contention below are phase8's and are replaced by `proofscope calibrate`.\n" + text)
EOF
}
# `campaign-analyze.sh --base-config MACHINE_TXT RUN.jsonl OUT.toml`: only write the base
# config (make-reports.sh uses it for the CPU demo's calibration).
if [ "${1:-}" = "--base-config" ]; then
  write_base "$(abs "${2:?machine.txt}")" "$(abs "${3:?run.jsonl}")" "$(abs "${4:?out.toml}")"
  exit 0
fi
CAMP=$(abs "${1:?usage: campaign-analyze.sh CAMPAIGN_DIR [REPORT_DIR]}")
[ -d "$CAMP" ] || { echo "campaign-analyze: $CAMP is not a folder" >&2; exit 2; }
[ -f "$CAMP/campaign.env" ] || { echo "campaign-analyze: $CAMP/campaign.env missing: not a folder written by scripts/campaign.sh" >&2; exit 2; }
env_of() { sed -n "s/^$1=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$CAMP/campaign.env" | head -n 1; }
SIZE=$(env_of SIZE); PROOFS=$(env_of PROOFS); PARTITIONS=$(env_of PARTITIONS); BACKEND=$(env_of BACKEND)
CAL=${CAL:-$(env_of CAL)}
DAY=$(sed -n 's/^date: \([0-9-]*\)T.*/\1/p' "$CAMP/machine.txt" | head -n 1)
OUT=${2:+$(abs "$2")}
OUT=${OUT:-$ROOT/reports/campaign-${DAY:-$(date -u +%F)}}

if [ -z "${PROOFSCOPE:-}" ]; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/proofscope-target}"
  cargo build -q -p proofscope
  PROOFSCOPE="$CARGO_TARGET_DIR/debug/proofscope"
fi
PS=$PROOFSCOPE
ok() { grep -q '^ok' "$CAMP/runs/$1.status" 2>/dev/null && [ -f "$CAMP/runs/$1.jsonl.gz" ]; }
grep -q "^$CAL " "$CAMP/grid.txt" || { echo "campaign-analyze: calibration configuration $CAL is not in grid.txt" >&2; exit 2; }
ok "$CAL" || { echo "campaign-analyze: the calibration run $CAL did not complete (runs/$CAL.status)" >&2; exit 1; }

# The report folder is rewritten: refuse anything that is not empty or a previous report.
case $OUT in "$ROOT"|"$ROOT/reports"|"$CAMP"|/|"$HOME") echo "campaign-analyze: refusing to rewrite $OUT" >&2; exit 2 ;; esac
if [ -d "$OUT" ] && [ -n "$(ls -A "$OUT")" ] && [ ! -f "$OUT/campaign.env" ]; then
  echo "campaign-analyze: $OUT exists and is not a campaign report: refusing to delete it" >&2
  exit 2
fi
rm -rf "$OUT"
mkdir -p "$OUT/runs"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp "$CAMP/machine.txt" "$CAMP/campaign.env" "$CAMP/grid.txt" "$OUT/"
[ -f "$CAMP/campaign.log" ] && cp "$CAMP/campaign.log" "$OUT/"
cp "$CAMP"/runs/*.status "$CAMP"/runs/*.out "$OUT/runs/" 2>/dev/null || true
cp "$CAMP"/runs/*.gz "$OUT/runs/"

CONFIGS=()
while read -r name pw gw lock split _; do
  [ -n "$name" ] || continue
  if ok "$name"; then CONFIGS+=("$name"); else echo "campaign-analyze: $name: not analysed ($(cat "$CAMP/runs/$name.status" 2>/dev/null || echo 'never ran'))" >&2; fi
done < "$CAMP/grid.txt"

echo "campaign-analyze: analysing ${#CONFIGS[@]} runs" >&2
for c in "${CONFIGS[@]}"; do
  gunzip -c "$CAMP/runs/$c.jsonl.gz" > "$TMP/$c.jsonl"
  mkdir -p "$OUT/$c"
  "$PS" analyze "$TMP/$c.jsonl" -o "$OUT/$c" > "$OUT/$c/analyze.txt"
  # The Perfetto trace gzipped (ui.perfetto.dev opens .json.gz): 11 configurations of ~0.8 MB
  # each made a campaign folder too heavy to travel with the tree to a device machine.
  gzip -9 -f "$OUT/$c/trace.json"
done

write_base "$CAMP/machine.txt" "$TMP/$CAL.jsonl" "$OUT/base.toml"

# The calibration configuration's runs: all of them when the campaign repeated it
# (CAL_RUNS=all, the default: one configuration, its run-to-run noise averaged), or its first
# run only (CAL_RUNS=first).
cal_files=("$TMP/$CAL.jsonl")
if [ "${CAL_RUNS:-all}" = all ]; then
  for rep in "$CAMP"/runs/"$CAL"@*.jsonl.gz; do
    [ -f "$rep" ] || continue
    k=$(basename "$rep" .jsonl.gz)
    ok "$k" || continue
    gunzip -c "$rep" > "$TMP/$k.jsonl"
    cal_files+=("$TMP/$k.jsonl")
  done
fi
echo "${#cal_files[@]}" > "$TMP/cal_runs"
"$PS" calibrate "${cal_files[@]}" --base "$OUT/base.toml" -o "$OUT/model.toml" > "$OUT/calibrate.txt"
for c in "${CONFIGS[@]}"; do
  read -r _ pw gw lock split fin <<< "$(grep "^$c " "$CAMP/grid.txt")"
  sets=(--set "pw=$pw" --set "gw=$gw" --set "lock=$lock" --set "split=$split" --set "finalizers=${fin:-1}" --set "c=$PROOFS" --set "partitions=$PARTITIONS")
  # The CUDA backend's uploads: before the compute lock with `kernels` (pre-staged), inside
  # the lock with `whole` (see calibrate's prestage note).
  if [ "$BACKEND" = cuda ]; then sets+=(--set "prestage=$([ "$lock" = kernels ] && echo true || echo false)"); fi
  mkdir -p "$OUT/$c/parity"
  "$PS" simulate "$OUT/model.toml" "${sets[@]}" --compare-to "$TMP/$c.jsonl" -o "$OUT/$c/parity" > "$OUT/$c/parity/simulate.txt"
  "$PS" simulate "$OUT/model.toml" "${sets[@]}" --json > "$OUT/$c/parity/prediction.json"
  # Repeated runs of this configuration (REPEATS in campaign.sh): the same prediction against
  # each, in parity@K/; the tables use the mean over all runs of the configuration.
  for rep in "$CAMP"/runs/"$c"@*.jsonl.gz; do
    [ -f "$rep" ] || continue
    k=$(basename "$rep" .jsonl.gz); k=${k##*@}
    ok "$c@$k" || continue
    gunzip -c "$rep" > "$TMP/$c@$k.jsonl"
    mkdir -p "$OUT/$c/parity@$k"
    "$PS" simulate "$OUT/model.toml" "${sets[@]}" --compare-to "$TMP/$c@$k.jsonl" -o "$OUT/$c/parity@$k" > "$OUT/$c/parity@$k/simulate.txt"
  done
done

labels=$(IFS=,; echo "${CONFIGS[*]}")
dirs=()
for c in "${CONFIGS[@]}"; do dirs+=("$OUT/$c"); done
"$PS" compare "${dirs[@]}" --labels "$labels" -o "$OUT/evolution.md" > /dev/null

python3 - "$OUT" "$CAL" "$(cat "$TMP/cal_runs")" "${CONFIGS[@]}" <<'EOF'
import json, math, sys
from pathlib import Path
out, cal, cal_runs, configs = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4:]

def metric(parity, name):
    for m in parity["metrics"]:
        if m["metric"] == name:
            return m["measured"], m["predicted"], m["error_pct"]
    return None, None, None

def mean_metric(pars, name):
    """Measured mean over the runs of a configuration, the (single) prediction, the error
    against the mean, and the spread (max - min) / mean of the measurements in %."""
    vals = [m for m in (metric(p, name)[0] for p in pars) if m is not None]
    _, pred, err = metric(pars[0], name)
    if not vals:
        return None, pred, err, None
    mean = sum(vals) / len(vals)
    if pred is not None and mean:
        err = 100 * (pred - mean) / mean
    spread = 100 * (max(vals) - min(vals)) / mean if len(vals) > 1 and mean else None
    return mean, pred, err, spread

rows = []
for c in configs:
    par = json.loads((out / c / "parity" / "parity.json").read_text())
    reps = [par] + [json.loads(p.read_text()) for p in sorted((out / c).glob("parity@*/parity.json"))]
    pred = json.loads((out / c / "parity" / "prediction.json").read_text())
    summ = json.loads((out / c / "summary.json").read_text())
    # Throughput: partition completions (robust when few proofs interleave); the rate
    # from proof completions is kept beside it.
    ms, ps, es, spread = mean_metric(reps, "steady s/proof (partition rate)")
    mq, pq, eq, _ = mean_metric(reps, "steady s/proof")
    mu, pu, eu, _ = mean_metric(reps, "GPU union utilisation")
    ml, pl, el, _ = mean_metric(reps, "latency (mean)")
    mt, pt, et, _ = mean_metric(reps, "total s/proof")
    v = summ["verdict"]
    fl = v.get("floors") or {}
    rows.append(dict(
        config=c, calibration=(c == cal), runs=len(reps), measured_spread_pct=spread,
        measured_steady_s=ms, predicted_steady_s=ps, error_pct=es,
        measured_steady_proof_ends_s=mq, predicted_steady_proof_ends_s=pq, proof_ends_error_pct=eq,
        measured_gpu_util_pct=mu, predicted_gpu_util_pct=pu, util_error_pct=eu,
        measured_latency_s=ml, predicted_latency_s=pl, latency_error_pct=el,
        measured_total_s=mt, predicted_total_s=pt, total_error_pct=et,
        measured_binding=v.get("binding"), measured_headline=v.get("headline"),
        gpu_floor_s=fl.get("gpu_floor_s_per_proof"), synthesis_floor_s=fl.get("synthesis_floor_s_per_proof"),
        cpu_floor_s=fl.get("cpu_floor_s_per_proof"), efficiency_vs_floor=v.get("efficiency_vs_floor"),
        predicted_verdict=pred["floors"]["verdict"],
        predicted_theoretical_floor_s=pred["floors"]["theoretical_s_per_proof"],
        predicted_practical_floor_s=pred["floors"]["practical_s_per_proof"],
        predicted_practical_binding=pred["floors"]["practical_binding"],
    ))

def mape(key_m, key_p):
    xs = [abs(r[key_p] - r[key_m]) / r[key_m] for r in rows if not r["calibration"] and r[key_m] and r[key_p] is not None]
    return 100 * sum(xs) / len(xs) if xs else None

def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    for pos, i in enumerate(order):
        r[i] = pos + 1.0
    return r

ranked = [r for r in rows if r["measured_steady_s"] and r["predicted_steady_s"]]
by_measured = [r["config"] for r in sorted(ranked, key=lambda r: r["measured_steady_s"])]
by_predicted = [r["config"] for r in sorted(ranked, key=lambda r: r["predicted_steady_s"])]
spearman = None
if len(ranked) >= 3:
    a = ranks([r["measured_steady_s"] for r in ranked])
    b = ranks([r["predicted_steady_s"] for r in ranked])
    n = len(ranked)
    spearman = 1 - 6 * sum((x - y) ** 2 for x, y in zip(a, b)) / (n * (n * n - 1))
res = dict(
    calibrated_on=cal, configs=rows,
    mape_pct=mape("measured_steady_s", "predicted_steady_s"),
    mape_proof_ends_pct=mape("measured_steady_proof_ends_s", "predicted_steady_proof_ends_s"),
    mape_gpu_util_pct=mape("measured_gpu_util_pct", "predicted_gpu_util_pct"),
    mape_latency_pct=mape("measured_latency_s", "predicted_latency_s"),
    mape_total_pct=mape("measured_total_s", "predicted_total_s"),
    ranking_measured=by_measured, ranking_predicted=by_predicted, spearman_rho=spearman,
    best_measured=by_measured[0] if by_measured else None,
    best_predicted=by_predicted[0] if by_predicted else None,
)
res["same_best_strict"] = res["best_measured"] is not None and res["best_measured"] == res["best_predicted"]
# Ties. Measured: configurations whose mean is within the best's run-to-run spread of it are
# not told apart by the measurements (only with REPEATS > 1; else the best alone). Predicted:
# configurations predicted within 0.5 % of the lowest prediction are the model's tied best.
# The best configurations agree when the measured best is among the model's tied best.
TIE_PRED_PCT = 0.5
best_row = next((r for r in ranked if r["config"] == res["best_measured"]), None)
spread = (best_row or {}).get("measured_spread_pct") or 0.0
res["tied_best_measured"] = [r["config"] for r in ranked if best_row and r["measured_steady_s"] <= best_row["measured_steady_s"] * (1 + spread / 100)]
low = min((r["predicted_steady_s"] for r in ranked), default=None)
res["tied_best_predicted"] = [r["config"] for r in ranked if low is not None and r["predicted_steady_s"] <= low * (1 + TIE_PRED_PCT / 100)]
res["same_best"] = res["best_measured"] is not None and res["best_measured"] in res["tied_best_predicted"]
res["target_met"] = res["mape_pct"] is not None and res["mape_pct"] <= 5 and res["same_best"]
(out / "campaign.json").write_text(json.dumps(res, indent=1) + "\n")

f = lambda x, d=2: "—" if x is None else f"{x:.{d}f}"
pc = lambda x: "—" if x is None else f"{x:+.1f}%"
repeated = any(r["runs"] > 1 for r in rows)
md = ["| config | " + ("runs | spread | " if repeated else "") + "measured s/proof | predicted | error | GPU util meas. | pred. | error | latency meas. s | pred. | error | measured bottleneck | predicted verdict |",
      "|---|" + ("---:|---:|" if repeated else "") + "---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
for r in rows:
    name = r["config"] + (" (calibration)" if r["calibration"] else "")
    rep = f"{r['runs']} | {'—' if r['measured_spread_pct'] is None else format(r['measured_spread_pct'], '.1f') + '%'} | " if repeated else ""
    md.append(f"| {name} | {rep}{f(r['measured_steady_s'])} | {f(r['predicted_steady_s'])} | {pc(r['error_pct'])} | {f(r['measured_gpu_util_pct'], 1)} | {f(r['predicted_gpu_util_pct'], 1)} | {pc(r['util_error_pct'])} | {f(r['measured_latency_s'])} | {f(r['predicted_latency_s'])} | {pc(r['latency_error_pct'])} | {r['measured_binding']} | {r['predicted_verdict']} |")
if repeated:
    md.append("")
    md.append("With repeated runs (`REPEATS`), the measured figures are the mean over a configuration's runs, errors are against that mean, and *spread* is (max − min) ÷ mean of its runs' steady s/proof: the run-to-run noise the prediction is up against.")
fl = ["| config | measured s/proof (steady) | GPU floor | synthesis floor | CPU floor | best floor ÷ measured | predicted theoretical floor | predicted practical floor (binding) |",
      "|---|---:|---:|---:|---:|---:|---:|---|"]
for r in rows:
    fl.append(f"| {r['config']} | {f(r['measured_steady_s'])} | {f(r['gpu_floor_s'])} | {f(r['synthesis_floor_s'])} | {f(r['cpu_floor_s'])} | {f(r['efficiency_vs_floor'])} | {f(r['predicted_theoretical_floor_s'])} | {f(r['predicted_practical_floor_s'])} ({r['predicted_practical_binding']}) |")
lines = [
    "# Campaign: predictions vs measurements", "",
    f"Model calibrated on **{cal}** only ({'its ' + str(cal_runs) + ' runs together' if cal_runs > 1 else 'one run'}; `model.toml`, fit notes in `calibrate.txt`), then simulated at every other configuration. Steady-state s/proof, GPU union utilisation and mean latency are computed the same way on the measured and the simulated timelines (`simulator::parity::measure`). Steady-state s/proof is the partition completion rate × partitions per proof ((last − first partition end) ÷ (n − 1)): with a handful of proofs whose partitions interleave, the spacing of *proof* completions depends on which partition happens to finish last (its MAPE is given too). Errors are (predicted − measured) ÷ measured.", "",
    *md, "",
    f"- **MAPE (steady s/proof, {sum(1 for r in rows if not r['calibration'])} predicted configurations): {f(res['mape_pct'])} %** (target ≤ 5 %); GPU utilisation {f(res['mape_gpu_util_pct'])} %; latency {f(res['mape_latency_pct'])} %; total s/proof (makespan ÷ proofs) {f(res['mape_total_pct'])} %; steady s/proof from proof completions {f(res['mape_proof_ends_pct'])} %.",
    f"- Best configuration measured: **{res['best_measured']}**; predicted: **{res['best_predicted']}** ({'same' if res['same_best_strict'] else 'different names'}). "
    f"Tied best measured (within the best's run-to-run spread): {', '.join(res['tied_best_measured']) or '—'}; tied best predicted (within 0.5 % of the lowest prediction): {', '.join(res['tied_best_predicted']) or '—'}. "
    f"The measured best is {'among' if res['same_best'] else 'NOT among'} the model's tied best, so the best configurations {'agree' if res['same_best'] else 'DISAGREE'}.",
    f"- Ranking measured: {', '.join(by_measured)}", f"- Ranking predicted: {', '.join(by_predicted)}",
    f"- Spearman rank correlation: {f(spearman, 3)}.",
    f"- Target (MAPE ≤ 5 % and the same best configuration): **{'met' if res['target_met'] else 'NOT met'}**.", "",
    "## Floors and bottlenecks", "", *fl, "",
    "Measured floors are the analyzer's (`summary.json` → `verdict.floors`); predicted ones the simulator's (`prediction.json` → `floors`).", "",
    "Parity plot: [parity-campaign.svg](parity-campaign.svg). Throughput evolution: [evolution.md](evolution.md).", "",
]
(out / "campaign.md").write_text("\n".join(lines))

# Parity plot (SVG by hand: no plotting library needed here).
pts = [(r["measured_steady_s"], r["predicted_steady_s"], r["config"], r["calibration"]) for r in ranked]
W, H, M = 720, 640, 70
if pts:
    lo = min(min(p[0], p[1]) for p in pts) * 0.8
    hi = max(max(p[0], p[1]) for p in pts) * 1.25
    lx = lambda v: M + (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo)) * (W - 2 * M)
    ly = lambda v: H - M - (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo)) * (H - 2 * M)
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="DejaVu Sans, sans-serif" font-size="11">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W/2}" y="24" text-anchor="middle" font-size="14">Campaign parity: steady s/proof, MAPE {f(res["mape_pct"])} % (calibrated on {cal})</text>']
    band = [(lo, lo * 0.95), (hi, hi * 0.95), (hi, hi * 1.05), (lo, lo * 1.05)]
    s.append('<polygon fill="#2ca02c" fill-opacity="0.2" points="' + " ".join(f"{lx(x):.1f},{ly(min(max(y, lo), hi)):.1f}" for x, y in band) + '"/>')
    s.append(f'<line x1="{lx(lo):.1f}" y1="{ly(lo):.1f}" x2="{lx(hi):.1f}" y2="{ly(hi):.1f}" stroke="black"/>')
    s.append(f'<rect x="{M}" y="{M}" width="{W-2*M}" height="{H-2*M}" fill="none" stroke="#444"/>')
    e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    for e in range(e0, e1 + 1):
        for k in (1, 2, 5):
            v = k * 10 ** e
            if lo <= v <= hi:
                s.append(f'<text x="{lx(v):.1f}" y="{H-M+16}" text-anchor="middle">{v:g}</text><line x1="{lx(v):.1f}" y1="{H-M}" x2="{lx(v):.1f}" y2="{H-M+4}" stroke="#444"/>')
                s.append(f'<text x="{M-6}" y="{ly(v)+4:.1f}" text-anchor="end">{v:g}</text><line x1="{M-4}" y1="{ly(v):.1f}" x2="{M}" y2="{ly(v):.1f}" stroke="#444"/>')
    s.append(f'<text x="{W/2}" y="{H-24}" text-anchor="middle">measured steady s/proof</text>')
    s.append(f'<text x="20" y="{H/2}" text-anchor="middle" transform="rotate(-90 20 {H/2})">predicted steady s/proof</text>')
    for x, y, name, is_cal in pts:
        colour = "#d62728" if is_cal else "#1f77b4"
        s.append(f'<circle cx="{lx(x):.1f}" cy="{ly(y):.1f}" r="4" fill="{colour}"/><text x="{lx(x)+6:.1f}" y="{ly(y)-6:.1f}" font-size="9">{name}</text>')
    s.append(f'<text x="{M+8}" y="{M+16}">green band: ±5 %; line: y = x; red: the calibration run</text>')
    s.append("</svg>")
    (out / "parity-campaign.svg").write_text("\n".join(s) + "\n")
print(f"campaign-analyze: MAPE {f(res['mape_pct'])} %, best measured {res['best_measured']}, predicted {res['best_predicted']}", file=sys.stderr)
EOF

# Every run in the order it ran: synthesis speed and what else the host did meanwhile (the
# prover's host_busy_cores / host_steal_cores counters), so that drift between runs shows
# next to its possible causes. Appended to campaign.md.
python3 - "$CAMP" "$TMP" "$OUT" <<'EOF'
import json, re, sys
from pathlib import Path
camp, tmp, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
order = []
for line in (camp / "campaign.log").read_text().splitlines():
    m = re.match(r"campaign \[(\d+)s\]: (\S+): pw=", line)
    if m and (tmp / f"{m.group(2)}.jsonl").exists() and m.group(2) not in [o[1] for o in order]:
        order.append((int(m.group(1)), m.group(2)))
rows = []
for start, name in order:
    syn, cnt = [], {}
    for line in (tmp / f"{name}.jsonl").open():
        e = json.loads(line)
        if e.get("type") == "span" and e.get("kind") == "synthesis" and e.get("end_ns") is not None:
            syn.append((e["end_ns"] - e["start_ns"]) / 1e9)
        elif e.get("type") == "counter" and e["name"] in ("cpu_busy_cores", "host_busy_cores", "host_steal_cores"):
            cnt.setdefault(e["name"], []).append(e["value"])
    mean = lambda v: sum(v) / len(v) if v else None
    proc, host, steal = (mean(cnt.get(k, [])) for k in ("cpu_busy_cores", "host_busy_cores", "host_steal_cores"))
    rows.append(dict(run=name, start_s=start, synthesis_mean_s=mean(syn), synthesis_min_s=min(syn) if syn else None,
                     synthesis_max_s=max(syn) if syn else None, process_cores=proc,
                     other_cores=None if host is None or proc is None else max(host - proc, 0.0), steal_cores=steal))
(out / "host-runs.json").write_text(json.dumps(rows, indent=1) + "\n")
f = lambda x, d=2: "—" if x is None else f"{x:.{d}f}"
md = ["## Synthesis and the host, run by run", "",
      "Every run in the order it ran (start in seconds from the campaign's start): the mean, min and max synthesis time of one partition, the cores the prover kept busy, what other processes on the machine took, and the hypervisor's steal (other tenants of the host). The last two come from the prover's `host_busy_cores` and `host_steal_cores` counters (/proc/stat); — where the binary did not record them. Data: [host-runs.json](host-runs.json).", "",
      "| run | start s | synthesis mean s | min | max | prover cores | other processes | steal |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
for r in rows:
    md.append(f"| {r['run']} | {r['start_s']} | {f(r['synthesis_mean_s'])} | {f(r['synthesis_min_s'])} | {f(r['synthesis_max_s'])} | {f(r['process_cores'], 1)} | {f(r['other_cores'], 2)} | {f(r['steal_cores'], 2)} |")
with (out / "campaign.md").open("a") as fh:
    fh.write("\n".join(md) + "\n")
EOF

GPU=$(sed -n 's/^gpu: //p' "$OUT/machine.txt" | head -n 1)
{
  echo "# Campaign of $DAY: measured configurations, calibrated predictions"
  echo
  echo "$PROOFS proofs × $PARTITIONS partitions of the PoRep-like circuit at $SIZE constraints per partition, backend $BACKEND, one run per configuration ([grid.txt](grid.txt)); the simulator calibrated on **$CAL** predicts the others. Results: [campaign.md](campaign.md) (predicted vs measured, MAPE, ranking, floors), [parity-campaign.svg](parity-campaign.svg), [evolution.md](evolution.md) (\`proofscope compare\`: × baseline, × previous, binding resource). Each configuration's folder holds its analysis (report.md, waterfall.svg, utilization.svg, Parquet tables) and parity/ (the prediction of that configuration)."
  echo
  echo "Generated by \`scripts/campaign.sh\` (measurements) and \`scripts/campaign-analyze.sh\` (this folder); do not edit."
  echo
  echo "| | |"
  echo "|---|---|"
  sed -n 's/^\(date\|commit\|binary\|cpu\|gpu\): \(.*\)/| measured: \1 | \2 |/p' "$OUT/machine.txt"
  echo "| analysed: date | $(date -u +%FT%TZ) |"
  echo "| analysed: commit | $(git rev-parse --short HEAD 2>/dev/null || echo unknown) |"
  echo
  echo "Commands:"
  echo
  echo '```'
  echo "bash scripts/build-gpu-binary.sh"
  echo "SIZE=$SIZE PROOFS=$PROOFS PARTITIONS=$PARTITIONS bash scripts/campaign.sh CAMPAIGN_DIR   # on the GPU machine${GPU:+ ($GPU)}"
  echo "bash scripts/campaign-analyze.sh CAMPAIGN_DIR ${OUT#"$ROOT"/}"
  echo '```'
  echo
  echo "Configurations:"
  echo
  for c in "${CONFIGS[@]}"; do echo "- [$c/]($c/report.md): $(grep -m1 '^verdict' "$OUT/$c/analyze.txt" | sed 's/^verdict *//')"; done
} > "$OUT/README.md"

# The same grid measured twice (REPEAT = another run's campaign.log): the run-to-run noise,
# the floor under any MAPE (noise.md, scripts/campaign-noise.sh).
if [ -n "${REPEAT:-}" ]; then
  cp "$(abs "$REPEAT")" "$OUT/repeat-a.campaign.log"
  (cd "$OUT" && bash "$ROOT/scripts/campaign-noise.sh" repeat-a.campaign.log campaign.log noise.md)
  echo "- Run-to-run noise (the same grid measured twice): [noise.md](noise.md)" >> "$OUT/README.md"
fi

INDEX_ONLY=1 PROOFSCOPE="$PS" bash scripts/make-reports.sh
big=$(find "$OUT" -type f -size +2M)
[ -z "$big" ] || { echo "campaign-analyze: files over 2 MB: $big" >&2; exit 1; }
echo "campaign-analyze: wrote $OUT" >&2
