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
#   proofscope simulate model.toml --set … (`proofscope campaign sets`: the configuration's
#       pipeline, as `campaign predict` maps it) --compare-to runs/<cfg>.jsonl -> <cfg>/parity/
#       (parity.md/json/svg), prediction.json
#   proofscope compare <every cfg> -> evolution.md (throughput evolution: x baseline, x previous)
#   proofscope campaign score -> campaign.json / campaign.md / parity-campaign.svg /
#       host-runs.json: per configuration predicted vs measured steady-state s/proof, GPU
#       utilisation and latency, error %, MAPE, rankings and best configuration, bottleneck
#       and floors; every run's synthesis time beside the host's load.
# Timelines are copied (gzipped) into runs/. base.toml (what a log cannot tell: cores, RAM,
# footprints, CPU demands) is derived by `proofscope campaign base` from
# simulator/configs/phase8.toml, machine.txt and the calibration run's RSS counter; its
# header says which values are guesses. This script only orchestrates: the figures are
# computed in Rust (simulator::campaign). The report folder is rewritten from scratch
# (idempotent); the reports/README.md index is then regenerated (when the report folder is
# under reports/: a report written elsewhere, e.g. a dry run's, leaves the index alone).
# Knobs: PROOFSCOPE (binary; default: cargo build -p proofscope), CAL (override), REPEAT (the
# campaign.log of another run of the same grid: writes noise.md, the run-to-run spread).
#
# A pre-registered campaign (scripts/campaign-prereg.sh: CAMPAIGN_DIR holds predictions.json)
# is not calibrated nor predicted here: `proofscope campaign score --predictions` first
# checks the registration — predictions.json against predictions.sha256, the model files
# against their registered sha256, every run of a predicted configuration started
# (runs/<run>.start) after the registration's timestamp — and stops the script (exit 2)
# when it does not hold; then it scores the registered figures (point, 80 % interval,
# binding resource, peak RSS) against every run. The report folder gets the registration
# (predictions.json, .sha256, .txt, cal/) beside the analyses.
set -euo pipefail
CALLER=$PWD
abs() { case $1 in /*) echo "$1" ;; *) echo "$CALLER/$1" ;; esac; }
cd "$(dirname "$0")/.."
ROOT=$PWD
CAMP=$(abs "${1:?usage: campaign-analyze.sh CAMPAIGN_DIR [REPORT_DIR]}")
[ -d "$CAMP" ] || { echo "campaign-analyze: $CAMP is not a folder" >&2; exit 2; }
[ -f "$CAMP/campaign.env" ] || { echo "campaign-analyze: $CAMP/campaign.env missing: not a folder written by scripts/campaign.sh" >&2; exit 2; }
env_of() { sed -n "s/^$1=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$CAMP/campaign.env" | head -n 1; }
SIZE=$(env_of SIZE); PROOFS=$(env_of PROOFS); PARTITIONS=$(env_of PARTITIONS); BACKEND=$(env_of BACKEND)
CAL=${CAL:-$(env_of CAL)}
PREREG=""
[ -f "$CAMP/predictions.json" ] && PREREG=1
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
for c in $CAL; do
  grep -q "^$c " "$CAMP/grid.txt" || { echo "campaign-analyze: calibration configuration $c is not in grid.txt" >&2; exit 2; }
  ok "$c" || { echo "campaign-analyze: the calibration run $c did not complete (runs/$c.status)" >&2; exit 1; }
done

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

if [ -n "$PREREG" ]; then
  # The registration travels with the report; it is checked before anything else is done.
  cp "$CAMP"/runs/*.start "$OUT/runs/"
  cp "$CAMP/predictions.json" "$CAMP/predictions.sha256" "$OUT/"
  for f in predictions.txt; do [ -f "$CAMP/$f" ] && cp "$CAMP/$f" "$OUT/"; done
  cp -r "$CAMP/cal" "$OUT/cal"
  echo "campaign-analyze: checking the pre-registration" >&2
  "$PS" campaign score "$OUT" --predictions "$OUT/predictions.json" >&2
fi

CONFIGS=()
while read -r name pw gw lock split _; do
  [ -n "$name" ] || continue
  if ok "$name"; then CONFIGS+=("$name"); else echo "campaign-analyze: $name: not analysed ($(cat "$CAMP/runs/$name.status" 2>/dev/null || echo 'never ran'))" >&2; fi
done < "$CAMP/grid.txt"

echo "campaign-analyze: analysing ${#CONFIGS[@]} runs" >&2
for c in "${CONFIGS[@]}"; do
  gunzip -c "$CAMP/runs/$c.jsonl.gz" > "$TMP/$c.jsonl"
  mkdir -p "$OUT/$c"
  # Lean: summary.json and report.md per configuration; the waterfall and the Perfetto trace
  # only for the calibration configuration and (below) the measured best — the full analysis
  # of any configuration is `proofscope analyze runs/<cfg>.jsonl.gz` (reports/ travels with
  # the tree to the device machine and must stay small).
  case " $CAL " in *" $c "*) lean=(--charts waterfall --no-tables) ;; *) lean=(--no-charts --no-tables) ;; esac
  "$PS" analyze "$TMP/$c.jsonl" -o "$OUT/$c" "${lean[@]}" > "$OUT/$c/analyze.txt"
  # The Perfetto trace gzipped (ui.perfetto.dev opens .json.gz).
  [ -f "$OUT/$c/trace.json" ] && gzip -9 -f "$OUT/$c/trace.json"
  # summary.json gzipped too (~170 KB each raw; `campaign score` and `compare` read the .gz).
  gzip -n -9 -f "$OUT/$c/summary.json"
  rm -f "$OUT/$c/.proofscope.lock"
done

if [ -z "$PREREG" ]; then
# base.toml: the reference config with this machine's sizes.
"$PS" campaign base "$CAMP/machine.txt" "$TMP/$CAL.jsonl" -o "$OUT"

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
"$PS" calibrate "${cal_files[@]}" --base "$OUT/base.toml" -o "$OUT" > "$OUT/calibrate.txt"
for c in "${CONFIGS[@]}"; do
  # The model's pipeline for this configuration: `campaign sets`, the mapping `campaign
  # predict` applies too (simulator::prereg::pipeline_sets: pw, gw, lock, split, finalizers,
  # proofs all in flight, partitions, the engine's queue and permit defaults).
  sets=()
  kvs=$("$PS" campaign sets "$CAMP/grid.txt" "$c" --proofs "$PROOFS" --partitions "$PARTITIONS" --backend "$BACKEND")
  for kv in $kvs; do sets+=(--set "$kv"); done
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

fi # not PREREG

labels=$(IFS=,; echo "${CONFIGS[*]}")
dirs=()
for c in "${CONFIGS[@]}"; do dirs+=("$OUT/$c"); done
"$PS" compare "${dirs[@]}" --labels "$labels" > "$OUT/evolution.md"

# campaign.json, campaign.md, parity-campaign.svg and host-runs.json (every run in the order it
# ran, from campaign.log: synthesis speed and what else the host did meanwhile).
if [ -n "$PREREG" ]; then
  "$PS" campaign score "$OUT" --predictions "$OUT/predictions.json" >&2
else
  "$PS" campaign score "$OUT" --calibration "$CAL" --cal-runs "${#cal_files[@]}" --configs "$labels" >&2
fi
# The measured best configuration gets its waterfall and trace too.
best=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("best_measured") or "")' "$OUT/campaign.json")
if [ -n "$best" ] && ! case " $CAL " in *" $best "*) true ;; *) false ;; esac && [ -f "$TMP/$best.jsonl" ]; then
  "$PS" analyze "$TMP/$best.jsonl" -o "$OUT/$best" --charts waterfall --no-tables > "$OUT/$best/analyze.txt"
  gzip -9 -f "$OUT/$best/trace.json"
  rm -f "$OUT/$best/.proofscope.lock"
fi

GPU=$(sed -n 's/^gpu: //p' "$OUT/machine.txt" | head -n 1)
{
if [ -n "$PREREG" ]; then
  REPEATS=$(env_of REPEATS)
  echo "# Campaign of $DAY: pre-registered predictions, then the measurements"
  echo
  echo "$PROOFS proofs × $PARTITIONS partitions per run at $SIZE constraints per partition, backend $BACKEND, ${REPEATS:-1} runs per predicted configuration ([grid.txt](grid.txt): the grid as run, knobs resolved). On the measuring machine, in the same call, the simulator was calibrated on **$CAL** ([cal/](cal/)) and every configuration predicted — [predictions.json](predictions.json), sha256 in [predictions.sha256](predictions.sha256), table in [predictions.txt](predictions.txt) — before the first predicted run started; \`campaign score --predictions\` checked that (see the top of [campaign.md](campaign.md)) and scored the registered figures, not new ones. Results: [campaign.md](campaign.md) (MAPE of steady and total s/proof, coverage of the 80 % intervals, binding resource, peak RSS, best configuration against the model's tie band), [parity-campaign.svg](parity-campaign.svg), [evolution.md](evolution.md). Each configuration's folder holds the analysis of its first run."
  echo
  echo "Generated by \`scripts/campaign-prereg.sh\` (calibration, registration, measurements, in one call on the GPU machine) and \`scripts/campaign-analyze.sh\` (this folder); do not edit."
else
  echo "# Campaign of $DAY: measured configurations, calibrated predictions"
  echo
  echo "$PROOFS proofs × $PARTITIONS partitions of the PoRep-like circuit at $SIZE constraints per partition, backend $BACKEND, one run per configuration ([grid.txt](grid.txt)); the simulator calibrated on **$CAL** predicts the others. Results: [campaign.md](campaign.md) (predicted vs measured, MAPE, ranking, floors), [parity-campaign.svg](parity-campaign.svg), [evolution.md](evolution.md) (\`proofscope compare\`: × baseline, × previous, binding resource). Each configuration's folder holds its analysis (report.md, waterfall.svg, utilization.svg, Parquet tables) and parity/ (the prediction of that configuration)."
  echo
  echo "Generated by \`scripts/campaign.sh\` (measurements) and \`scripts/campaign-analyze.sh\` (this folder); do not edit."
fi
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
  if [ -n "$PREREG" ]; then
    echo "SIZE=$SIZE PROOFS=$PROOFS PARTITIONS=$PARTITIONS BACKEND=$BACKEND bash scripts/campaign-prereg.sh CAMPAIGN_DIR   # on the GPU machine${GPU:+ ($GPU)}"
  else
    echo "SIZE=$SIZE PROOFS=$PROOFS PARTITIONS=$PARTITIONS bash scripts/campaign.sh CAMPAIGN_DIR   # on the GPU machine${GPU:+ ($GPU)}"
  fi
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

case $OUT in "$ROOT"/reports/*) INDEX_ONLY=1 PROOFSCOPE="$PS" bash scripts/make-reports.sh ;; esac
big=$(find "$OUT" -type f -size +2M)
[ -z "$big" ] || { echo "campaign-analyze: files over 2 MB: $big" >&2; exit 1; }
echo "campaign-analyze: wrote $OUT" >&2
