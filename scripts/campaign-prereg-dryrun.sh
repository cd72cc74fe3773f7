#!/usr/bin/env bash
# The CPU dry run of the campaign scripts, with checks: the whole flow of
# scripts/campaign-prereg.sh without a GPU (the CPU backend at 2^10; 2 cores: ~10 min), then
# what its review asked of it. No device needed.
#
#   PROOFSCOPE=$CARGO_TARGET_DIR/debug/proofscope bash scripts/campaign-prereg-dryrun.sh [DIR]
#
# Checks, each named when it fails (exit 1 at the end; DIR is kept for a look):
#  1. the dry run (BACKEND=cpu SIZE=2^10 BUDGET_S=300 HARD_S=340 OVERHEAD_S=1) into
#     DIR/campaign exits 0 and ends before HARD_S;
#  2. a rerun into it with a BUDGET_S that sizes PARTITIONS otherwise keeps the registered
#     PARTITIONS and runs nothing again; a rerun with another PARTITIONS is refused (exit 2);
#  3. a campaign given HARD_S=20 at 2^18 (a fresh parameter cache: the setup alone takes
#     longer) ends before HARD_S: every step's limit is cut to it;
#  4. campaign-analyze.sh on DIR/campaign (DIR/report): the registration is checked, every
#     predicted run's .start against its timeline, and scored;
#  5. a predicted run's .start moved a minute later than its timeline's start: the scoring
#     refuses it, naming the run and both times;
#  6. the two-half flow (campaign.sh, two configurations, then campaign-analyze.sh): the
#     model told each configuration's pipeline by `campaign sets`.
# Knobs: PROOFSCOPE (default: as scripts/find-binary.sh finds it), SKIP_RUN=1 (checks 2-6
# on a DIR/campaign already made).
set -uo pipefail
CALLER=$PWD
DIR=${1:-${TMPDIR:-/tmp}/campaign-prereg-dryrun}
case $DIR in /*) ;; *) DIR=$CALLER/$DIR ;; esac
cd "$(dirname "$0")/.."
. scripts/find-binary.sh campaign-prereg-dryrun
PS=$(cd "$(dirname "$PS")" && pwd)/$(basename "$PS")
export PROOFSCOPE=$PS
mkdir -p "$DIR"
failed=0
fail() { echo "campaign-prereg-dryrun: FAILED: $*" >&2; failed=$((failed + 1)); }
pass() { echo "campaign-prereg-dryrun: ok: $*" >&2; }
DRY=(BACKEND=cpu SIZE=2^10 BUDGET_S=300 HARD_S=340 OVERHEAD_S=1 PARAMS_DIR="$DIR/params")

# 1. The dry run.
C=$DIR/campaign
if [ -z "${SKIP_RUN:-}" ]; then
  rm -rf "$C"
  t0=$(date +%s)
  env "${DRY[@]}" bash scripts/campaign-prereg.sh "$C" > "$DIR/run.out" 2> "$DIR/run.err"
  rc=$? took=$(( $(date +%s) - t0 ))
  if [ "$rc" = 0 ] && [ "$took" -le 340 ]; then pass "1. the dry run: exit 0 in ${took}s (HARD_S 340)"; else fail "1. the dry run: exit $rc in ${took}s (HARD_S 340; $DIR/run.err)"; fi
fi
PARTS=$(sed -n 's/^PARTITIONS=//p' "$C/campaign.env")

# 2. Reruns into the same folder, with a budget that the probe's sizing turns into another
# PARTITIONS (2 for a budget of 1 s, 16 for a huge one): runs not yet ok would be skipped.
RB=1; [ "$PARTS" = 2 ] && RB=1000000
env "${DRY[@]}" BUDGET_S=$RB bash scripts/campaign-prereg.sh "$C" > "$DIR/rerun.out" 2> "$DIR/rerun.err"
rc=$?
if [ "$rc" = 0 ] && grep -q "rerun: PARTITIONS=$PARTS, registered in predictions.json (not sized again)" "$DIR/rerun.err" && ! grep -q ' limit [0-9]*s, started' "$DIR/rerun.err"; then
  pass "2. a rerun with another budget keeps PARTITIONS=$PARTS and runs nothing"
else
  fail "2. a rerun with another budget: exit $rc ($DIR/rerun.err)"
fi
env "${DRY[@]}" PARTITIONS=$((PARTS + 1)) bash scripts/campaign-prereg.sh "$C" > /dev/null 2> "$DIR/rerun-parts.err"
rc=$?
if [ "$rc" = 2 ] && grep -q "PARTITIONS=$PARTS registered in predictions.json, now PARTITIONS=$((PARTS + 1)): use a new folder" "$DIR/rerun-parts.err"; then
  pass "2. a rerun with another PARTITIONS is refused"
else
  fail "2. a rerun with PARTITIONS=$((PARTS + 1)): exit $rc ($DIR/rerun-parts.err)"
fi

# 3. A hard limit shorter than the setup.
rm -rf "$DIR/short" "$DIR/short-params"
t0=$(date +%s)
env "${DRY[@]}" SIZE=2^18 HARD_S=20 PARAMS_DIR="$DIR/short-params" bash scripts/campaign-prereg.sh "$DIR/short" > /dev/null 2> "$DIR/short.err"
rc=$? took=$(( $(date +%s) - t0 ))
if [ "$took" -le 21 ] && [ "$rc" != 0 ]; then pass "3. HARD_S=20: stopped (exit $rc) after ${took}s"; else fail "3. HARD_S=20: exit $rc after ${took}s ($DIR/short.err)"; fi

# 4. The analysis: the registration and every predicted run's start checked.
if bash scripts/campaign-analyze.sh "$C" "$DIR/report" > "$DIR/analyze.out" 2> "$DIR/analyze.err" && grep -q 'all started after it' "$DIR/analyze.err"; then
  pass "4. campaign-analyze.sh: $(grep -m1 '^campaign: MAPE' "$DIR/analyze.err")"
else
  fail "4. campaign-analyze.sh ($DIR/analyze.err)"
fi

# 5. A .start file that is not its run's.
run=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["preregistration"]["first_predicted_run"])' "$DIR/report/campaign.json" 2>/dev/null)
if [ -n "$run" ]; then
  rm -rf "$DIR/moved"; cp -r "$DIR/report" "$DIR/moved"
  was=$(cat "$DIR/moved/runs/$run.start")
  date -u -d "@$(( $(date -u -d "$was" +%s) + 60 ))" +%Y-%m-%dT%H:%M:%S.%NZ > "$DIR/moved/runs/$run.start"
  "$PS" campaign score "$DIR/moved" --predictions "$DIR/moved/predictions.json" > /dev/null 2> "$DIR/moved.err"
  rc=$?
  if [ "$rc" != 0 ] && grep -q "run $run: runs/$run.start says it started at $(cat "$DIR/moved/runs/$run.start"), its timeline at" "$DIR/moved.err"; then
    pass "5. $run's .start a minute late is refused: $(grep -o 'its timeline at [^)]*)' "$DIR/moved.err")"
  else
    fail "5. $run's .start a minute late: exit $rc ($DIR/moved.err)"
  fi
else
  fail "5. no first predicted run in $DIR/report/campaign.json"
fi

# 6. The two-half flow, two configurations.
rm -rf "$DIR/two-half" "$DIR/two-half-report"
if env BACKEND=cpu SIZE=2^10 PROOFS=2 PARTITIONS=2 PARAMS_DIR="$DIR/params" CONFIGS="pw4-gw2-kernels-split pw2-gw1-whole-nosplit" \
    bash scripts/campaign.sh "$DIR/two-half" > /dev/null 2> "$DIR/two-half.err" &&
  bash scripts/campaign-analyze.sh "$DIR/two-half" "$DIR/two-half-report" > /dev/null 2>> "$DIR/two-half.err" &&
  [ -s "$DIR/two-half-report/pw2-gw1-whole-nosplit/parity/prediction.json" ]; then
  pass "6. the two-half flow: $(grep -m1 '^campaign: MAPE' "$DIR/two-half.err")"
else
  fail "6. the two-half flow ($DIR/two-half.err)"
fi

[ "$failed" = 0 ] || { echo "campaign-prereg-dryrun: $failed check(s) failed; see $DIR" >&2; exit 1; }
echo "campaign-prereg-dryrun: every check holds ($DIR)" >&2
