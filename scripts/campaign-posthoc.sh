#!/usr/bin/env bash
# Re-predict a finished campaign with the model of THIS checkout, labelled post hoc: the
# question "would the model as it is now have predicted those runs better?" — the way a
# model change is tried on measured campaigns before a new campaign registers it (a
# post-hoc figure is never a registered one: docs/fidelity.md keeps them apart).
#
#   bash scripts/campaign-posthoc.sh CAMPAIGN_DIR MEASURED_CAMPAIGN_JSON OUT_DIR [TRACK_RECORD_JSON...]
#
# CAMPAIGN_DIR: the folder scripts/campaign-prereg.sh wrote (grid.txt, campaign.env,
# machine.txt, runs/<run>.jsonl.gz). MEASURED_CAMPAIGN_JSON: that campaign's scored
# campaign.json (reports/campaign-*/campaign.json), whose measured figures are compared.
# OUT_DIR gets cal/<circuit>/ (base.toml, model.toml, calibrate.txt), predictions.json/.txt
# and posthoc.txt: per configuration predicted vs measured steady and total s/proof, binding
# and peak RSS, then the MAPEs — computed by `proofscope campaign posthoc` in Rust, the
# same scoring as `campaign score`. PROOFSCOPE: the binary (default: the release build).
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,15p "$0"; exit 2; }
SRC=$1 MEASURED=$2 OUT=$3
shift 3
PS=${PROOFSCOPE:-${CARGO_TARGET_DIR:-target}/release/proofscope}
[ -x "$PS" ] || { echo "campaign-posthoc: no binary at $PS (set PROOFSCOPE)" >&2; exit 2; }
for f in grid.txt campaign.env machine.txt; do [ -f "$SRC/$f" ] || { echo "campaign-posthoc: $SRC/$f missing" >&2; exit 2; }; done
[ -f "$MEASURED" ] || { echo "campaign-posthoc: $MEASURED missing" >&2; exit 2; }
# shellcheck disable=SC1091
. "$SRC/campaign.env"
mkdir -p "$OUT"
track=()
for t in "$@"; do track+=(--track-record "$t"); done
models=()
circuit_of() { local l; l=$(grep -E "^$1 " "$SRC/grid.txt" | head -1); case $l in *circuit=*) echo "${l##*circuit=}" | cut -d' ' -f1 ;; *) echo porep-like ;; esac; }
for f in $(for c in $CAL; do circuit_of "$c"; done | sort -u); do
  files=()
  for c in $CAL; do
    [ "$(circuit_of "$c")" = "$f" ] || continue
    for g in "$SRC/runs/$c.jsonl.gz" "$SRC"/runs/"$c"@*.jsonl.gz; do [ -f "$g" ] && files+=("$g"); done
  done
  [ ${#files[@]} -gt 0 ] || { echo "campaign-posthoc: no calibration run for $f" >&2; exit 1; }
  mkdir -p "$OUT/cal/$f"
  "$PS" campaign base "$SRC/machine.txt" "${files[0]}" -o "$OUT/cal/$f" 2> "$OUT/cal/$f/calibrate.txt"
  "$PS" calibrate "${files[@]}" --base "$OUT/cal/$f/base.toml" -o "$OUT/cal/$f" >> "$OUT/cal/$f/calibrate.txt" 2>&1
  models+=(--model "$f=$OUT/cal/$f/model.toml")
done
"$PS" campaign predict "$SRC/grid.txt" "${models[@]}" --calibration "$(echo "$CAL" | tr ' ' ',')" --proofs "$PROOFS" --partitions "$PARTITIONS" \
  --backend "${BACKEND:-cuda}" --size "$SIZE" --replications "${REPLICATIONS:-20}" "${track[@]}" -o "$OUT" > "$OUT/predictions.txt" 2> "$OUT/predictions.err"
"$PS" campaign posthoc "$OUT/predictions.json" "$MEASURED" | tee "$OUT/posthoc.txt"
