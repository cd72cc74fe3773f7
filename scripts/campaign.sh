#!/usr/bin/env bash
# The measured half of issue 6's campaign: one command on a GPU machine that proves the
# same workload under a grid of engine configurations and keeps every timeline.
#
#   bash scripts/build-gpu-binary.sh                    # here: dist/proofscope (prove-only, CUDA)
#   bash scripts/campaign.sh OUTDIR                     # on the GPU machine (carry dist/)
#   bash scripts/campaign-analyze.sh OUTDIR             # back here, full binary: reports/campaign-<date>/
#
# Everything goes under OUTDIR (default: campaign-out): machine.txt, campaign.env,
# grid.txt, campaign.log, runs/<cfg>.jsonl.gz and .cuzk.log.gz (the timelines),
# runs/<cfg>.out (what prove printed), runs/<cfg>.status. The parameter file (348 MiB
# at 2^20) is a cache kept OUTSIDE it, in PARAMS_DIR (default
# ${TMPDIR:-/tmp}/proofscope-campaign-params), so that a killed run never leaves it in
# the folder that is shipped back.
# Idempotent: a configuration whose status says `ok` is not run again; delete its
# status file (or the folder) to redo it. Nothing outside OUTDIR is written.
#
# Time: the whole script is meant to fit in < 9 minutes of wall time on one H200.
# A probe (1 proof x 2 partitions, verified) measures a partition at SIZE, then
# PARTITIONS is chosen so that a proof takes about TARGET_PROOF_S serially (unless
# PARTITIONS is given). A deadline guard skips configurations that would end after
# BUDGET_S (status `skipped`), and each run is stopped (SIGINT: the prover flushes its
# timeline, open spans marked) after RUN_TIMEOUT_S. Knobs (environment):
#   PROOFSCOPE   binary (default dist/proofscope, else target/release/proofscope)
#   SIZE         constraints per partition (default 2^20: on the H200 host a partition is ~0.55-1.1 s
#                of synthesis and ~0.15-0.2 s of device call with the G2 MSM on the GPU, and setup
#                takes ~20 s (reports/gpu/2026-11-30-run10-g2.md); `proofscope circuit --constraints SIZE`)
#   PROOFS       proofs per run (default 5)
#   PARTITIONS   partitions per proof (default: from the probe, 2..16)
#   TARGET_PROOF_S  serial seconds per proof the probe sizes PARTITIONS for (default 8)
#   BUDGET_S     wall-time budget of the whole script (default 440; the last run may
#                overshoot it by at most RUN_TIMEOUT_S)
#   RUN_TIMEOUT_S   limit per run (default 80), raised for a run to 1.5x its estimate from
#                the probe (serial seconds per partition x proofs x partitions / pw) + 20 s, so
#                that a slow host does not cut the pw=1 runs short; SETUP_TIMEOUT_S limit of
#                the setup (default 200)
#   PARAMS_DIR   where the parameter file is cached (see above)
#   BACKEND      cuda (default) or cpu (a dry run of the script without a GPU)
#   CONFIGS      space-separated subset of the configuration names below
#   CAL          configuration the analysis calibrates from (default pw4-gw2-kernels-split)
#   REPEATS      runs per configuration (default 1): the second and later runs of a
#                configuration are runs/<cfg>@2, @3, ..., made after every configuration ran
#                once (a budget cut keeps the grid whole first); the analysis compares the
#                prediction with their mean and reports their spread (the run-to-run noise
#                measured 12 % on the H200 host, reports/campaign-2026-11-30-run3-g2gpu/noise.md)
set -uo pipefail
OUTDIR=${1:-campaign-out}
mkdir -p "$OUTDIR/runs" || exit 2
OUTDIR=$(cd "$OUTDIR" && pwd)
cd "$(dirname "$0")/.."
START=$(date +%s)

. scripts/find-binary.sh campaign

SIZE=${SIZE:-2^20}
PROOFS=${PROOFS:-5}
TARGET_PROOF_S=${TARGET_PROOF_S:-8}
BUDGET_S=${BUDGET_S:-440}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-80}
SETUP_TIMEOUT_S=${SETUP_TIMEOUT_S:-200}
PARAMS_DIR=${PARAMS_DIR:-${TMPDIR:-/tmp}/proofscope-campaign-params}
BACKEND=${BACKEND:-cuda}
CAL=${CAL:-pw4-gw2-kernels-split}
REPEATS=${REPEATS:-1}
case $REPEATS in ''|*[!0-9]*|0) echo "campaign: REPEATS=$REPEATS is not a whole number >= 1" >&2; exit 2 ;; esac

# The grid, in "evolution" order (the first is the baseline of the compare table):
# name pw gw lock split [finalizers, default 1]. At least 8 configurations over pw {1,2,4,8},
# gw {1,2}, lock {whole,kernels}, split finalisation {off,on}; the last one changes a knob
# no other run varies (two finaliser threads), so its prediction is of a configuration the
# calibration has never seen in any form.
GRID="
pw1-gw1-whole-nosplit 1 1 whole false
pw2-gw1-whole-nosplit 2 1 whole false
pw2-gw2-whole-nosplit 2 2 whole false
pw2-gw2-kernels-nosplit 2 2 kernels false
pw4-gw2-kernels-nosplit 4 2 kernels false
pw4-gw1-kernels-split 4 1 kernels true
pw4-gw2-kernels-split 4 2 kernels true
pw8-gw2-kernels-split 8 2 kernels true
pw8-gw1-whole-split 8 1 whole true
pw8-gw2-whole-nosplit 8 2 whole false
pw8-gw2-kernels-split-f2 8 2 kernels true 2
"
# Run order: the calibration configuration first, then a spread, so that a deadline cut
# still leaves something to predict.
ORDER="$CAL pw1-gw1-whole-nosplit pw2-gw2-kernels-nosplit pw8-gw2-kernels-split pw2-gw2-whole-nosplit pw4-gw1-kernels-split pw2-gw1-whole-nosplit pw4-gw2-kernels-nosplit pw8-gw1-whole-split pw8-gw2-whole-nosplit pw8-gw2-kernels-split-f2"
[ -n "${CONFIGS:-}" ] && ORDER=$CONFIGS

log() { echo "campaign [$(( $(date +%s) - START ))s]: $*" | tee -a "$OUTDIR/campaign.log" >&2; }
grid_line() { echo "$GRID" | awk -v n="$1" '$1 == n'; }
for c in $ORDER; do
  [ -n "$(grid_line "$c")" ] || { echo "campaign: unknown configuration $c (known: $(echo "$GRID" | awk 'NF {printf "%s ", $1}'))" >&2; exit 2; }
done

bash scripts/machine-facts.sh "$PS" > "$OUTDIR/machine.txt"
cat "$OUTDIR/machine.txt" >&2

mkdir -p "$PARAMS_DIR" || exit 2
PARAMS=$PARAMS_DIR/params-$(echo "$SIZE" | tr -c '0-9a-zA-Z' '_').bin
# Parameters are made only when a run needs them (a rerun with every run done makes none).
ensure_params() {
  [ -s "$PARAMS" ] && return 0
  log "setup --constraints $SIZE (TEST-ONLY parameters)"
  if ! timeout "$SETUP_TIMEOUT_S" "$PS" setup --constraints "$SIZE" --params "$PARAMS.tmp" > "$OUTDIR/setup.out" 2>&1; then
    log "setup failed: $(tail -3 "$OUTDIR/setup.out")"
    exit 1
  fi
  mv "$PARAMS.tmp" "$PARAMS"
}
calc() { awk "BEGIN { print $1 }"; }

# One run: prove with the given knobs; status ok | failed (rc) | timeout.
# usage: run_one NAME PW GW LOCK SPLIT PROOFS PARTITIONS [extra prove flags]
run_one() {
  local name=$1 pw=$2 gw=$3 lock=$4 split=$5 proofs=$6 parts=$7
  shift 7
  local r=$OUTDIR/runs/$name t0 rc
  ensure_params
  rm -f "$r.jsonl" "$r.cuzk.log" "$r.jsonl.gz" "$r.cuzk.log.gz"
  t0=$(date +%s.%N)
  local limit=$RUN_TIMEOUT_S
  if [ -n "${probe_s:-}" ]; then
    limit=$(awk -v m="$RUN_TIMEOUT_S" -v p="$probe_s" -v j="$proofs" -v k="$parts" -v w="$pw" \
      'BEGIN { e = 1.5 * p / 2 * j * k / w + 20; printf "%d", (e > m ? e : m) }')
  fi
  timeout -s INT -k 15 "$limit" "$PS" prove --params "$PARAMS" --backend "$BACKEND" --devices 1 \
    --proofs "$proofs" --partitions "$parts" --pw "$pw" --gw "$gw" --lock "$lock" --split-finalize "$split" \
    --seed 1 --witness-seed 7 --timeline "$r.jsonl" --cuzk-log "$r.cuzk.log" -o "$r.proofs" --quiet "$@" \
    > "$r.out" 2>&1
  rc=$?
  local wall
  wall=$(calc "$(date +%s.%N) - $t0")
  rm -rf "$r.proofs"
  [ -f "$r.jsonl" ] && gzip -n -f "$r.jsonl"
  [ -f "$r.cuzk.log" ] && gzip -n -f "$r.cuzk.log"
  case $rc in
    0) echo "ok wall_s=$wall" > "$r.status" ;;
    124|130|137) echo "timeout wall_s=$wall rc=$rc" > "$r.status" ;;
    *) echo "failed wall_s=$wall rc=$rc" > "$r.status" ;;
  esac
  log "$name: $(cat "$r.status"); $(grep -m1 'proved' "$r.out" || tail -1 "$r.out")"
  return $rc
}

# Probe: one verified proof of 2 partitions, to check the backend and size the runs.
if ! grep -q '^ok' "$OUTDIR/runs/probe.status" 2>/dev/null; then
  log "probe: 1 proof x 2 partitions at $SIZE, pw=1 gw=1 whole lock, verified"
  run_one probe 1 1 whole false 1 2 --verify || { log "probe failed: see $OUTDIR/runs/probe.out"; exit 1; }
fi
# The engine's own wall time (parameter loading and process start excluded), else the script's.
probe_s=$(sed -n 's/.*(\([0-9.]*\) s wall).*/\1/p' "$OUTDIR/runs/probe.out" | head -n 1)
[ -n "$probe_s" ] || probe_s=$(sed -n 's/^ok wall_s=\([0-9.]*\).*/\1/p' "$OUTDIR/runs/probe.status")
if [ -z "${PARTITIONS:-}" ]; then
  # Serial seconds per partition (pw=1 gw=1 whole lock: nothing overlaps).
  PARTITIONS=$(awk -v t="$TARGET_PROOF_S" -v p="$probe_s" 'BEGIN { n = int(t / (p / 2)); if (n < 2) n = 2; if (n > 16) n = 16; print n }')
  log "probe: ${probe_s}s for 2 partitions -> PARTITIONS=$PARTITIONS (about ${TARGET_PROOF_S}s of serial work per proof)"
fi
# A rerun must measure the same workload as the runs already there.
if [ -f "$OUTDIR/campaign.env" ]; then
  for kv in "SIZE=$SIZE" "PROOFS=$PROOFS" "PARTITIONS=$PARTITIONS" "BACKEND=$BACKEND"; do
    if ! grep -qxF "$kv" "$OUTDIR/campaign.env"; then
      log "$OUTDIR holds runs of another workload ($(grep "^${kv%%=*}=" "$OUTDIR/campaign.env"), now $kv): use a new folder"
      exit 2
    fi
  done
fi
cat > "$OUTDIR/campaign.env" <<EOF
SIZE=$SIZE
PROOFS=$PROOFS
PARTITIONS=$PARTITIONS
BACKEND=$BACKEND
CAL=$CAL
REPEATS=$REPEATS
BUDGET_S=$BUDGET_S
PROBE_S=$probe_s
GRID_ORDER="$(echo "$GRID" | awk 'NF {printf "%s ", $1}')"
EOF
echo "$GRID" | awk 'NF' > "$OUTDIR/grid.txt"

last_s=$(calc "$probe_s * $PROOFS * $PARTITIONS / 2")   # pessimistic first estimate
failures=0
RUNS=$ORDER
for k in $(seq 2 "$REPEATS"); do
  for c in $ORDER; do RUNS="$RUNS $c@$k"; done
done
for name in $RUNS; do
  r=$OUTDIR/runs/$name
  if grep -q '^ok' "$r.status" 2>/dev/null && [ -f "$r.jsonl.gz" ]; then
    log "$name: already done"
    continue
  fi
  elapsed=$(( $(date +%s) - START ))
  if awk -v e="$elapsed" -v l="$last_s" -v b="$BUDGET_S" 'BEGIN { exit !(e + l > b) }'; then
    echo "skipped elapsed_s=$elapsed estimate_s=$last_s budget_s=$BUDGET_S" > "$r.status"
    log "$name: skipped (elapsed ${elapsed}s + about ${last_s}s > budget ${BUDGET_S}s)"
    continue
  fi
  read -r _ pw gw lock split fin <<< "$(grid_line "${name%@*}")"
  fin=${fin:-1}
  log "$name: pw=$pw gw=$gw lock=$lock split_finalize=$split finalizers=$fin, $PROOFS proofs x $PARTITIONS partitions"
  run_one "$name" "$pw" "$gw" "$lock" "$split" "$PROOFS" "$PARTITIONS" --finalizers "$fin" || failures=$((failures + 1))
  last_s=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$r.status")
done

log "done in $(( $(date +%s) - START ))s; $failures failed run(s); statuses:"
for s in "$OUTDIR"/runs/*.status; do echo "  $(basename "$s" .status): $(cat "$s")"; done | tee -a "$OUTDIR/campaign.log" >&2
echo "campaign: next, on a machine with the full binary: bash scripts/campaign-analyze.sh $OUTDIR" >&2
[ "$failures" = 0 ]
