#!/usr/bin/env bash
# Issue 17's interop check, run by .ci/run: Meta's Holistic Trace Analysis (HTA) loads the
# trace.json that `proofscope analyze` writes for a real GPU run, and its idle-time and
# temporal breakdowns run on it (scripts/hta-check.py). The trace is made fresh by this
# build's binary from a committed H200 timeline, so the check follows the code, not an old file.
#
#   bash scripts/ci-hta.sh [BINARY]      # default: $CARGO_TARGET_DIR/debug/proofscope
#
# HTA (pinned) lives in its own venv, $HOME/.cache/proofscope-htavenv (or $HTA_VENV), made on
# first use (~1 min; it pulls jupyterlab, plotly, pandas, networkx): a warm cache works offline.
# Exit 0 when HTA ran and found GPU work, 1 when it did not, 2 on a setup problem.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-${CARGO_TARGET_DIR:-$HOME/.cache/proofscope-target}/debug/proofscope}
VENV=${HTA_VENV:-$HOME/.cache/proofscope-htavenv}
PIN=HolisticTraceAnalysis==0.5.0
LOG=reports/gpu/data/2026-12-02-run72-fs27-F16x4-pw12-gw2-vram16-lean.jsonl.gz
[ -x "$BIN" ] || { echo "ci-hta: no binary at $BIN (cargo build first)" >&2; exit 2; }
[ -f "$LOG" ] || { echo "ci-hta: the timeline $LOG is missing" >&2; exit 2; }
if ! "$VENV/bin/python" -c 'import hta' 2>/dev/null; then
  echo "ci-hta: installing $PIN into $VENV" >&2
  { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q "$PIN"; } || { echo "ci-hta: cannot install $PIN" >&2; exit 2; }
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$BIN" analyze "$LOG" -o "$out" > "$out/analyze.txt" 2>&1 || { cat "$out/analyze.txt" >&2; echo "ci-hta: analyze failed" >&2; exit 1; }
[ -s "$out/trace.json" ] || { echo "ci-hta: analyze wrote no trace.json" >&2; exit 1; }
"$VENV/bin/python" scripts/hta-check.py "$out/trace.json" 2> "$out/hta.log" || { tail -20 "$out/hta.log" >&2; exit 1; }
