#!/usr/bin/env bash
# Fleet analysis speed and memory (issue 17): HOSTS hosts' cuzk logs of ~EVENTS TIMELINE
# lines each, generated with our cuzk writer (`proofscope simulate --cuzk-log`, Phase-8
# model, DISTINCT seeds hard-linked round-robin so that generation stays short), then
# `proofscope analyze DIR -o OUT --no-charts --no-tables` timed with /usr/bin/time.
# Baseline in the same run: one host's log analysed alone (time and peak RSS), so the
# fleet's figures read as ratios. Generated data lives in a temporary folder, never in git.
#
#   BIN=target/release/proofscope HOSTS=100 PROOFS=2000 scripts/fleet-bench.sh
set -euo pipefail
BIN=${BIN:-target/release/proofscope}
HOSTS=${HOSTS:-100}
PROOFS=${PROOFS:-2000}
DISTINCT=${DISTINCT:-4}
EXTRA=${EXTRA:---no-charts --no-tables}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/logs" "$work/gen"
for s in $(seq 1 "$DISTINCT"); do
  "$BIN" simulate simulator/configs/phase8.toml --set proofs="$PROOFS" --seed "$s" --cuzk-log "$work/gen/seed-$s.log" >/dev/null
done
events=$(grep -c '^TIMELINE,' "$work/gen/seed-1.log")
for i in $(seq 1 "$HOSTS"); do
  ln "$work/gen/seed-$(( (i - 1) % DISTINCT + 1 )).log" "$work/logs/host-$(printf %03d "$i").log"
done
measure() { # label, args...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/t" "$BIN" analyze "$@" $EXTRA >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
  read -r wall rss <"$work/t"
  echo "$label: ${wall} s wall, peak RSS $((rss / 1024)) MiB"
}
echo "hosts $HOSTS × $events TIMELINE lines (${PROOFS} proofs each) = $((HOSTS * events)) lines; $(nproc) cores; analyze $EXTRA"
measure "one host alone " "$work/logs/host-001.log" -o "$work/one"
measure "fleet of $HOSTS     " "$work/logs" -o "$work/fleet"
test -s "$work/fleet/fleet.json" && test -s "$work/fleet/host-$(printf %03d "$HOSTS")/summary.json"
