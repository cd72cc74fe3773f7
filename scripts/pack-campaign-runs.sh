#!/usr/bin/env bash
# Keeps a campaign report small enough for reports/ (which travels with every device call,
# ~35 MB at most): the run timelines (runs/*.jsonl.gz, ~120 KB each, 30-40 per campaign, all
# alike) go into ONE solid archive, runs/timelines.tar.xz (~60 % of the gzip files: xz sees
# the runs side by side), and the Perfetto traces (trace.json.gz: `proofscope analyze` of a
# timeline writes them again) are dropped; the SVG charts are minified
# (scripts/minify-svg.py). Everything else stays as it is (.start, .status, .out, summaries,
# campaign.json/md, predictions).
#
#   bash scripts/pack-campaign-runs.sh REPORT_DIR            # pack (idempotent)
#   bash scripts/pack-campaign-runs.sh --unpack REPORT_DIR   # restore runs/*.jsonl.gz (to
#                                                            # re-score or re-analyse)
#
# The archive is written whole (temporary file + rename) before any timeline is removed, and
# checked (every member listed) first: an interrupted pack loses nothing.
set -euo pipefail
unpack=""
if [ "${1:-}" = --unpack ]; then unpack=1; shift; fi
DIR=${1:?usage: pack-campaign-runs.sh [--unpack] REPORT_DIR}
RUNS=$DIR/runs
[ -d "$RUNS" ] || { echo "pack-campaign-runs: $RUNS: no such folder" >&2; exit 2; }
ARCH=$RUNS/timelines.tar.xz
if [ -n "$unpack" ]; then
  [ -f "$ARCH" ] || { echo "pack-campaign-runs: $ARCH: nothing to unpack" >&2; exit 2; }
  T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
  tar -C "$T" -xJf "$ARCH"
  for f in "$T"/*.jsonl; do
    gzip -n -9 -c "$f" > "$RUNS/$(basename "$f").gz.tmp" && mv "$RUNS/$(basename "$f").gz.tmp" "$RUNS/$(basename "$f").gz"
  done
  echo "pack-campaign-runs: restored $(ls "$T" | wc -l) timelines into $RUNS" >&2
  exit 0
fi
shopt -s nullglob
gz=("$RUNS"/*.jsonl.gz)
if [ ${#gz[@]} -gt 0 ]; then
  [ ! -f "$ARCH" ] || { echo "pack-campaign-runs: $ARCH exists beside unpacked timelines: unpack or remove one" >&2; exit 2; }
  T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
  for f in "${gz[@]}"; do gunzip -c "$f" > "$T/$(basename "$f" .gz)"; done
  (cd "$T" && ls -- *.jsonl | LC_ALL=C sort | tar -cf - -T - --owner=0 --group=0 --mtime=@0) | xz -9e -T2 > "$ARCH.tmp"
  [ "$(tar -tJf "$ARCH.tmp" | wc -l)" -eq ${#gz[@]} ] || { echo "pack-campaign-runs: $ARCH.tmp does not list every timeline" >&2; rm -f "$ARCH.tmp"; exit 1; }
  mv "$ARCH.tmp" "$ARCH"
  rm -f "${gz[@]}"
fi
find "$DIR" -name trace.json.gz -delete
svgs=$(find "$DIR" -name '*.svg')
# shellcheck disable=SC2086  # one path per word (no spaces in report paths)
[ -z "$svgs" ] || python3 "$(dirname "$0")/minify-svg.py" $svgs >/dev/null
echo "pack-campaign-runs: $DIR: $(du -sh "$DIR" | cut -f1)" >&2
