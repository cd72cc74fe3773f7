#!/usr/bin/env bash
# A pre-registered campaign (issue 21), in ONE call on the GPU machine: the calibration runs,
# then the model calibrated and every prediction written down — predictions.json, timestamped
# and hashed — and only then the predicted runs. Back here, scoring reads the registered
# predictions (it does not predict again) and fails unless every predicted run started after
# the registration and the file is the one registered.
#
#   bash scripts/build-gpu-binary.sh                    # here: dist/proofscope.xz (prove-only, CUDA)
#   bash scripts/campaign-prereg.sh OUTDIR              # on the GPU machine (carry dist/), < 9 min
#   bash scripts/campaign-analyze.sh OUTDIR             # back here: reports/campaign-<date>/, scored
#
# Through the device tool (one call; dist/ is git-ignored, so carry it), into a folder
# OUTSIDE $OUT, packed into $OUT at the end (the tool brings back a limited number of files,
# none whose name has an `@`, none deeper than a few folders: run 76 wrote straight under $OUT
# and lost every timeline):
#   run(command='bash scripts/campaign-prereg.sh /tmp/c; tar -C /tmp -czf "$OUT/c.tgz" c',
#       carry=["dist"], timeout_s=600)
# (HARD_S, 560 s by default, leaves the tar its time inside the call's 600 s), then
# campaign-analyze.sh on the unpacked c/. Dry run
# without a GPU: BACKEND=cpu SIZE=2^10 BUDGET_S=300 HARD_S=340 OVERHEAD_S=1, with its checks:
# scripts/campaign-prereg-dryrun.sh (docs/reference/reports.md).
#
# The pre-registration rule: the predictions of every configuration other than the
# calibration ones are made from the calibration runs alone and written (predictions.json, a
# UTC timestamp inside; predictions.sha256 beside it; the sha256 also printed to stdout, i.e.
# into the device call's output, which the analysis machine did not write) before the first
# predicted run starts; each run's start is logged (runs/<run>.start, UTC with ns, written
# just before the prover starts, and campaign.log). `campaign score --predictions` refuses a
# campaign where a predicted run started before the registration, where predictions.json or
# a model file no longer has its registered hash, or where a predicted run has no start time.
#
# Steps (everything under OUTDIR; the parameter files are cached in PARAMS_DIR, outside it):
#  1. machine.txt; TEST-ONLY setup at SIZE of each circuit family the grid uses (porep-like,
#     mix16; on the GPU with BACKEND=cuda);
#  2. a probe (1 proof x 2 partitions, pw 1, verified) that sizes PARTITIONS so that the whole
#     call fits BUDGET_S (unless PARTITIONS is given);
#  3. the knobs resolved against the engine's own figures (grid.txt: the grid as run):
#     `ram=K` -> a RAM budget of the engine's resident items + room for K syntheses (and half
#     of one), from the figures its refusal of a tiny budget names (`ram_gib=… ram_parts=K`);
#     `vram=tight` -> the least VRAM budget the engine accepts + VRAM_MARGIN_GIB, from its
#     refusal of a tiny one: every query streamed, calls tight (no MSM lanes)
#     (`vram_gib=… vram_call_gib=… params_gib=…`);
#  4. the calibration configurations (CAL; at most two: two pw of one circuit, or one per
#     circuit), each CAL_REPEATS times;
#  5. ON THIS MACHINE: `campaign base` + `calibrate` per family on the runs of every
#     calibration configuration of that family (cal/<family>/model.toml,
#     calibrate.txt), then `campaign predict` -> predictions.json + predictions.sha256
#     (point and 80 % interval of steady and total s/proof, binding resource, peak RSS, per
#     configuration; REPLICATIONS seeds) and predictions.txt (the table printed);
#  6. only then the predicted configurations, each REPEATS times (all once, then the repeats),
#     PROOFS proofs per run; a deadline guard skips (status `skipped`) a run whose estimate
#     would end it after BUDGET_S.
# Outputs: machine.txt, campaign.env, grid.txt, campaign.log, setup-*.out, cal/, predictions.*,
# runs/<run>.jsonl.gz (the timelines), .out (what prove printed), .status, .start.
# Not idempotent across the registration: a rerun into a folder with predictions.json keeps
# it (checked with sha256sum) and its PARTITIONS (the probe does not size it again; another
# PARTITIONS, SIZE, PROOFS or BACKEND is refused, exit 2) and only makes the runs not yet ok.
# A rerun into a folder with runs but no registration keeps campaign.env's PARTITIONS.
#
# Knobs (environment):
#   PROOFSCOPE   binary (default dist/proofscope, unpacked from dist/proofscope.xz; else target/release)
#   SIZE         constraints per partition (default 2^20)
#   PROOFS       proofs per run (default 10: a steady state exists)
#   PARTITIONS   partitions per proof (default: from the probe and the budget, 2..16; on a
#                rerun, the folder's)
#   REPEATS      runs per predicted configuration (default 2); CAL_REPEATS per calibration one (2)
#   BUDGET_S     no run starts that would end after this many seconds from the start (default 510)
#   HARD_S       nothing may go past this (default 560: the device call allows 600): every step's
#                limit (setup, probes, runs, calibrate, predict) is cut to end before it, the
#                15 s from SIGINT to SIGKILL included; a step left under 1 s (a run: 5 s) is
#                not started (a run's status says `skipped`)
#   OVERHEAD_S   a run's fixed cost in the estimates (process start, parameters, device; default 3)
#   SPEEDUP_CAP  the estimate's most parallel speedup over pw = 1 (default 3)
#   SIZING_SAFETY  share of the time left that PARTITIONS is sized to fill (default 0.8; the
#                deadline guard, not the sizing, keeps the call inside BUDGET_S)
#   MODEL_RESERVE_S  seconds kept for the calibration and the predictions (default 30)
#   RUN_TIMEOUT_S    least limit per run (default 60; raised to 2x its estimate + 20)
#   SETUP_TIMEOUT_S  limit of each setup (default 200)
#   REPLICATIONS seeds per prediction (default 20)
#   TRACK_RECORD the earlier scored campaigns whose errors make the 80 % intervals
#                (`campaign predict --track-record`, docs/reference/fidelity.md): space-separated
#                campaign.json paths; default the three newest registered campaigns in reports/
#                of the same SIZE and BACKEND (none found: the replications' intervals); `none`:
#                the replications' intervals
#   RAM_PARTS    K of `ram=K` when the grid says `ram=default` (unused by the default grid)
#   VRAM_MARGIN_GIB  above the least VRAM budget (default 0.04: below a 2^20 call's MSM uploads)
#   BACKEND      cuda (default) or cpu (a dry run without a GPU: BACKEND=cpu SIZE=2^10)
#   CAL          the calibration configurations (default "cal-pw1 cal-pw8": one circuit, two pw;
#                "cal-porep cal-mix16": one per circuit, as the campaigns of 2026-12-02)
#   CONFIGS      a subset of the predicted configurations (names below)
#   PARAMS_DIR   parameter cache (default ${TMPDIR:-/tmp}/proofscope-campaign-params)
set -uo pipefail
OUTDIR=${1:-campaign-out}
mkdir -p "$OUTDIR/runs" || exit 2
OUTDIR=$(cd "$OUTDIR" && pwd)
cd "$(dirname "$0")/.."
START=$(date +%s)

. scripts/find-binary.sh campaign-prereg
for sub in calibrate simulate "campaign predict"; do
  # shellcheck disable=SC2086  # "campaign predict" is two words
  "$PS" $sub --help >/dev/null 2>&1 || { echo "campaign-prereg: $PS has no \`$sub\`: build it from this tree (bash scripts/build-gpu-binary.sh)" >&2; exit 2; }
done

SIZE=${SIZE:-2^20}
PROOFS=${PROOFS:-10}
REPEATS=${REPEATS:-2}
CAL_REPEATS=${CAL_REPEATS:-2}
BUDGET_S=${BUDGET_S:-510}
HARD_S=${HARD_S:-560}
OVERHEAD_S=${OVERHEAD_S:-3}
SPEEDUP_CAP=${SPEEDUP_CAP:-3}
SIZING_SAFETY=${SIZING_SAFETY:-0.8}
MODEL_RESERVE_S=${MODEL_RESERVE_S:-30}
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-60}
SETUP_TIMEOUT_S=${SETUP_TIMEOUT_S:-200}
REPLICATIONS=${REPLICATIONS:-20}
if [ -z "${TRACK_RECORD:-}" ]; then
  TRACK_RECORD=$(for d in $(ls -d reports/campaign-*-prereg* 2>/dev/null | sort -V); do
      [ -f "$d/campaign.json" ] && grep -qx "SIZE=${SIZE:-2^20}" "$d/campaign.env" 2>/dev/null \
        && grep -qx "BACKEND=${BACKEND:-cuda}" "$d/campaign.env" 2>/dev/null && echo "$d/campaign.json"
    done | tail -3 | tr '\n' ' ')
fi
[ "$TRACK_RECORD" = none ] && TRACK_RECORD=
track_args=()
for f in $TRACK_RECORD; do track_args+=(--track-record "$f"); done
VRAM_MARGIN_GIB=${VRAM_MARGIN_GIB:-0.04}
PARAMS_DIR=${PARAMS_DIR:-${TMPDIR:-/tmp}/proofscope-campaign-params}
BACKEND=${BACKEND:-cuda}
CAL=${CAL:-cal-pw1 cal-pw8}
for v in REPEATS CAL_REPEATS PROOFS; do
  case ${!v} in ''|*[!0-9]*|0) echo "campaign-prereg: $v=${!v} is not a whole number >= 1" >&2; exit 2 ;; esac
done

# The grid: name pw gw lock split finalizers [knob=value ...]. Knobs: circuit (porep-like,
# mix16; default porep-like), threads (the engine's synthesis_threads: a pool of N threads per
# synthesis worker; default 0 = a pool of the machine's cores per synthesis worker, the
# engine's default since 2026-12-04: binaries before 2aaa7aee shared one pool), prep_threads (the
# engine's prep_threads: the GPU workers' CPU work on a pool of N threads), ram=K (a RAM budget with
# room for K syntheses), vram=tight (the least VRAM budget the engine accepts). The regimes on
# the H200 host (16 cores): synthesis-bound (few syntheses), the contended middle (pw 8-12,
# issue 21's hard regime) with all three lock modes, the CPU pool saturated (pw x threads >
# cores), GPU-bound (many syntheses at 2^22; mix16: a light synthesis), RAM-bound, VRAM-bound.
# The calibration pair (default CAL) is one circuit at two pw, 1 and 8: the synthesis alone
# gives its cost, eight at once the CPU capacity the host delivers (calibrate fits it by
# simulating the pw 8 runs; one pw cannot show it: campaign 2026-12-02, `syn-` lines +45 to
# +105 %; calibrated at pw 2, with no synthesis alone, a contention slope stands in and one
# synthesis alone was predicted 41-56 % slow, 2^22 campaigns of 2026-12-03). The `wif-` lines,
# and every line one change away from cal-pw8 (the lock, synthesis threads), are the what-if
# validation: each effect against the calibration configuration is predicted before it is
# measured. cal-pw1, syn-pw4, cal-pw8 and the two `gpu-pw*-kernels` lines are one pw series
# (1, 4, 8, 12, 16; the rest alike): where the GPU starts to bind along it is scored against
# the model's (`campaign score`'s switch points, issue 21: within one step of the grid).
# Lines of a circuit that no calibration configuration covers (mix16 unless CAL names
# cal-mix16) are left out of the predictions, said in the log.
GRID="
cal-pw1                 1  2 kernels  true  1
cal-pw2                 2  2 kernels  true  1
cal-pw8                 8  2 kernels  true  1
cal-porep               4  2 kernels  true  1
cal-mix16               8  2 kernels  true  1  circuit=mix16
syn-pw1-whole           1  1 whole    false 1
syn-pw4                 4  2 kernels  true  1
syn-pw4-t2              4  2 kernels  true  1  threads=2
mid-pw8-whole           8  2 whole    false 1
mid-pw8-two_lock        8  2 two_lock true  1
mid-pw12-kernels-f2    12  2 kernels  true  2
cpu-pw8-t4              8  2 kernels  true  1  threads=4
cpu-pw16-t2-f2         16  2 kernels  true  2  threads=2
gpu-pw12-kernels       12  2 kernels  true  1
gpu-pw16-kernels       16  2 kernels  true  1
gpu-mix-pw8-gw1-whole   8  1 whole    false 1  circuit=mix16
gpu-mix-pw12-kernels   12  2 kernels  true  2  circuit=mix16
gpu-mix-pw8-two_lock    8  2 two_lock true  1  circuit=mix16
ram-pw8-2parts          8  2 kernels  true  1  ram=2
vram-pw8-tight          8  2 kernels  true  1  vram=tight
wif-split-off           8  2 kernels  false 1
wif-prep2               8  2 kernels  true  1  prep_threads=2
"
grid_line() { echo "$GRID" | awk -v n="$1" '$1 == n'; }
known=$(echo "$GRID" | awk 'NF {printf "%s ", $1}')
knob() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1; }
circuit_of() { local c; c=$(knob circuit "$(grid_line "$1")"); echo "${c:-porep-like}"; }
CAL_CIRCUITS=$(for c in $CAL; do circuit_of "$c"; done | sort -u)
# The default list: the grid's lines other than CAL, of a circuit some calibration
# configuration covers (the other cal- lines are calibration configurations of other CAL
# choices, never predictions).
PRED=""; left=""
for c in $(echo "$GRID" | awk 'NF {print $1}'); do
  case " $CAL " in *" $c "*) continue ;; esac
  case $c in cal-*) continue ;; esac
  case " $(echo $CAL_CIRCUITS) " in *" $(circuit_of "$c") "*) PRED="$PRED $c" ;; *) left="$left $c" ;; esac
done
if [ -n "${CONFIGS:-}" ]; then
  PRED=$CONFIGS
elif [ -n "$left" ]; then
  echo "campaign-prereg: not predicted (no calibration configuration of their circuit in CAL=$CAL):$left" >&2
fi
for c in $CAL $PRED; do
  [ -n "$(grid_line "$c")" ] || { echo "campaign-prereg: unknown configuration $c (known: $known)" >&2; exit 2; }
done
[ "$(echo "$CAL" | wc -w)" -le 2 ] || { echo "campaign-prereg: at most two calibration configurations (CAL=$CAL)" >&2; exit 2; }
CIRCUITS=$(for c in $CAL $PRED; do circuit_of "$c"; done | sort -u)
for f in $CIRCUITS; do
  ok=""; for c in $CAL; do [ "$(circuit_of "$c")" = "$f" ] && ok=1; done
  [ -n "$ok" ] || { echo "campaign-prereg: circuit $f has no calibration configuration in CAL=$CAL" >&2; exit 2; }
done

log() { echo "campaign [$(( $(date +%s) - START ))s]: $*" | tee -a "$OUTDIR/campaign.log" >&2; }
calc() { awk "BEGIN { print $1 }"; }
elapsed() { echo $(( $(date +%s) - START )); }
# Every step runs under a limit cut so that, stopped at it (SIGINT, then SIGKILL KILL_S
# later), it still ends before HARD_S: `capped WANT` prints min(WANT, HARD_S - elapsed -
# KILL_S) and fails under 1 s; `step WHAT WANT cmd…` runs cmd under that limit, or logs that
# WHAT was not started and returns 124.
KILL_S=15
capped() { awk -v w="$1" -v h="$HARD_S" -v e="$(elapsed)" -v k="$KILL_S" 'BEGIN { l = h - e - k; if (w < l) l = w; if (l < 1) exit 1; printf "%d", l }'; }
step() {
  local what=$1 want=$2 lim
  shift 2
  lim=$(capped "$want") || { log "$what: not started: $(elapsed)s gone, HARD_S=${HARD_S}s leaves less than ${KILL_S}s + 1s"; return 124; }
  timeout -s INT -k "$KILL_S" "$lim" "$@"
}

step "machine facts" 60 bash scripts/machine-facts.sh "$PS" > "$OUTDIR/machine.txt"
cat "$OUTDIR/machine.txt" >&2

# ---- 1. parameters, one file per circuit family ----
mkdir -p "$PARAMS_DIR" || exit 2
SETUP_ON=cpu; [ "$BACKEND" = cuda ] && SETUP_ON=gpu
params_of() { echo "$PARAMS_DIR/params-$1-$(echo "$SIZE" | tr -c '0-9a-zA-Z' '_').bin"; }
for f in $CIRCUITS; do
  p=$(params_of "$f")
  [ -s "$p" ] && continue
  log "setup --circuit $f --constraints $SIZE --on $SETUP_ON (TEST-ONLY parameters)"
  if ! step "setup of $f" "$SETUP_TIMEOUT_S" "$PS" setup --circuit "$f" --constraints "$SIZE" --on "$SETUP_ON" --params "$p.tmp" > "$OUTDIR/setup-$f.out" 2>&1; then
    log "setup of $f failed: $(tail -3 "$OUTDIR/setup-$f.out")"
    exit 1
  fi
  [ -f "$p.tmp.pce" ] && mv "$p.tmp.pce" "$p.pce"
  mv "$p.tmp" "$p"
done
PORP=$(params_of porep-like)

# One run: prove with the configuration's flags; status ok | failed | timeout; start logged.
# usage: run_one RUN PROOFS PARTITIONS LIMIT_S [extra prove flags]
run_one() {
  local run=$1 proofs=$2 parts=$3 limit=$4
  shift 4
  local cfg=${run%@*} r=$OUTDIR/runs/$run t0 rc wall line pw gw lock split fin knobs threads pt ramg vramg
  line=$(grid_line "$cfg")
  read -r _ pw gw lock split fin knobs <<< "$line"
  # grid.txt holds the resolved knobs (ram_gib, vram_gib) once they are resolved.
  [ -f "$OUTDIR/grid.txt" ] && line=$(awk -v n="$cfg" '$1 == n' "$OUTDIR/grid.txt") && read -r _ pw gw lock split fin knobs <<< "$line"
  local flags=(--params "$(params_of "$(circuit_of "$cfg")")" --pw "$pw" --gw "$gw" --lock "$lock" --split-finalize "$split" --finalizers "$fin")
  threads=$(knob threads "$knobs"); [ -n "$threads" ] && flags+=(--set "synthesis_threads=$threads")
  pt=$(knob prep_threads "$knobs"); [ -n "$pt" ] && flags+=(--set "prep_threads=$pt")
  ramg=$(knob ram_gib "$knobs"); [ -n "$ramg" ] && flags+=(--ram-budget "$ramg" --params-host keep)
  vramg=$(knob vram_gib "$knobs"); [ -n "$vramg" ] && flags+=(--vram-budget "$vramg")
  rm -f "$r.jsonl" "$r.jsonl.gz"
  date -u +%Y-%m-%dT%H:%M:%S.%NZ > "$r.start"
  log "$run: pw=$pw gw=$gw lock=$lock split_finalize=$split finalizers=$fin ${knobs:+$knobs }- $proofs proofs x $parts partitions, limit ${limit}s, started $(cat "$r.start")"
  t0=$(date +%s.%N)
  timeout -s INT -k "$KILL_S" "$limit" "$PS" prove "${flags[@]}" --backend "$BACKEND" --devices 1 --proofs "$proofs" --partitions "$parts" \
    --seed 1 --witness-seed 7 --timeline "$r.jsonl" -o "$r.proofs" --quiet "$@" > "$r.out" 2>&1
  rc=$?
  wall=$(calc "$(date +%s.%N) - $t0")
  rm -rf "$r.proofs"
  [ -f "$r.jsonl" ] && gzip -n -f "$r.jsonl"
  case $rc in
    0) echo "ok wall_s=$wall" > "$r.status" ;;
    124|130|137) echo "timeout wall_s=$wall rc=$rc" > "$r.status" ;;
    *) echo "failed wall_s=$wall rc=$rc" > "$r.status" ;;
  esac
  log "$run: $(cat "$r.status"); $(grep -m1 'proved\|proofs ×' "$r.out" || tail -1 "$r.out")"
  return $rc
}
done_ok() { grep -q '^ok' "$OUTDIR/runs/$1.status" 2>/dev/null && [ -f "$OUTDIR/runs/$1.jsonl.gz" ]; }

# ---- 2. the probe ----
if ! done_ok probe; then
  r=$OUTDIR/runs/probe
  date -u +%Y-%m-%dT%H:%M:%S.%NZ > "$r.start"
  log "probe: 1 proof x 2 partitions at $SIZE, pw=1 gw=1 whole lock, verified"
  step probe "$SETUP_TIMEOUT_S" "$PS" prove --params "$PORP" --backend "$BACKEND" --devices 1 --proofs 1 --partitions 2 \
    --pw 1 --gw 1 --lock whole --seed 1 --timeline "$r.jsonl" -o "$r.proofs" --quiet --verify > "$r.out" 2>&1
  rc=$?
  rm -rf "$r.proofs"; [ -f "$r.jsonl" ] && gzip -n -f "$r.jsonl"
  [ "$rc" = 0 ] || { echo "failed rc=$rc" > "$r.status"; log "probe failed: $(tail -3 "$r.out")"; exit 1; }
  echo "ok" > "$r.status"
fi
probe_s=$(sed -n 's/.*(\([0-9.]*\) s wall).*/\1/p' "$OUTDIR/runs/probe.out" | head -n 1)
[ -n "$probe_s" ] || { log "probe: no '(… s wall)' in runs/probe.out"; exit 1; }
t_part=$(calc "$probe_s / 2")

# ---- 3. the knobs against the engine's figures ----
to_gib() { awk -v v="$1" -v u="$2" 'BEGIN { f = (u == "GiB") ? 1 : (u == "MiB") ? 1/1024 : (u == "KiB") ? 1/1048576 : 1/1073741824; printf "%.6f", v * f }'; }
if [ ! -f "$OUTDIR/grid.txt" ]; then
  resolved=""
  for c in $CAL $PRED; do
    line=$(grid_line "$c")
    read -r name pw gw lock split fin knobs <<< "$line"
    out="$name $pw $gw $lock $split $fin"
    for kv in $knobs; do
      case $kv in
        ram=*)
          k=${kv#ram=}
          msg=$(step "$c: RAM probe" "$RUN_TIMEOUT_S" "$PS" prove --params "$(params_of "$(circuit_of "$c")")" --backend "$BACKEND" --ram-budget 0.0001 --params-host keep \
            --pw "$pw" --gw "$gw" --proofs 1 --partitions 1 --timeline "$OUTDIR/runs/ram-probe.jsonl" -o "$OUTDIR/runs/ram-probe.proofs" --quiet 2>&1)
          rm -rf "$OUTDIR/runs/ram-probe".*
          need=$(echo "$msg" | sed -n 's/.*cannot hold one partition: \([0-9.]*\) \([KMG]iB\) needed.*/\1 \2/p' | head -n 1)
          part=$(echo "$msg" | sed -n "s/.*one partition's working set \([0-9.]*\) \([KMG]iB\).*/\1 \2/p" | head -n 1)
          [ -n "$need" ] && [ -n "$part" ] || { log "$c: the engine did not name its RAM figures: $msg"; exit 1; }
          need_g=$(to_gib $need); part_g=$(to_gib $part)
          budget=$(awk -v n="$need_g" -v p="$part_g" -v k="$k" 'BEGIN { printf "%.4f", n + (k - 0.5) * p }')
          log "$c: RAM: the engine needs ${need_g} GiB for one synthesis (its resident items + one working set of ${part_g} GiB): budget ${budget} GiB admits $k"
          out="$out ram_gib=$budget ram_parts=$k" ;;
        vram=tight)
          msg=$(step "$c: VRAM probe" "$RUN_TIMEOUT_S" "$PS" prove --params "$(params_of "$(circuit_of "$c")")" --backend "$BACKEND" --vram-budget 0.001 \
            --pw 1 --gw "$gw" --proofs 1 --partitions 1 --timeline "$OUTDIR/runs/vram-probe.jsonl" -o "$OUTDIR/runs/vram-probe.proofs" --quiet 2>&1)
          rm -rf "$OUTDIR/runs/vram-probe".*
          req=$(echo "$msg" | sed -n 's/.*needs at least \([0-9.]*\) \([KMG]iB\).*/\1 \2/p' | head -n 1)
          [ -n "$req" ] || { log "$c: the engine did not name its least VRAM budget: $msg"; exit 1; }
          req_g=$(to_gib $req)
          budget=$(calc "$req_g + $VRAM_MARGIN_GIB")
          callg=$(awk -v r="$req_g" 'BEGIN { c = r - 1; if (c < 0.001) c = 0.001; printf "%.4f", c }')
          pg=$(awk -v b="$(stat -c %s "$(params_of "$(circuit_of "$c")")")" 'BEGIN { printf "%.4f", b / 1073741824 }')
          log "$c: VRAM: the engine requires ${req_g} GiB (one tight call + 1 GiB to spare): budget ${budget} GiB"
          out="$out vram_gib=$budget vram_call_gib=$callg params_gib=$pg" ;;
        *) out="$out $kv" ;;
      esac
    done
    resolved="$resolved$out"$'\n'
  done
  printf '%s' "$resolved" > "$OUTDIR/grid.txt"
fi

# ---- sizing: PARTITIONS so that every run fits the budget ----
# A run's estimate: OVERHEAD_S + PROOFS x PARTITIONS x t_part / eff, eff = min(pw, SPEEDUP_CAP,
# ram_parts), t_part the probe's serial seconds per partition.
eff_of() {
  awk -v n="$1" '$1 == n { e = $2; for (i = 7; i <= NF; i++) if ($i ~ /^ram_parts=/) { split($i, a, "="); if (a[2] < e) e = a[2] } print e }' "$OUTDIR/grid.txt" |
    awk -v cap="$SPEEDUP_CAP" '{ print ($1 < cap) ? $1 : cap }'
}
inv_sum=0
for c in $CAL; do inv_sum=$(calc "$inv_sum + $CAL_REPEATS / $(eff_of "$c")"); done
for c in $PRED; do inv_sum=$(calc "$inv_sum + $REPEATS / $(eff_of "$c")"); done
nruns=$(( $(echo "$CAL" | wc -w) * CAL_REPEATS + $(echo "$PRED" | wc -w) * REPEATS ))
# A rerun into this folder keeps its PARTITIONS: the registered one (predictions.json's
# workload), else the one recorded with the runs already made (campaign.env). Sized again,
# with the time gone by then, it would differ from what was predicted.
kept=""
if [ -f "$OUTDIR/predictions.json" ]; then
  kept=$(sed -n '/"workload": {/,/}/ s/^ *"partitions": *\([0-9][0-9]*\).*/\1/p' "$OUTDIR/predictions.json" | head -n 1)
  [ -n "$kept" ] || { log "$OUTDIR/predictions.json names no workload partitions: cannot rerun into this folder; use a new one"; exit 2; }
  kept_from="registered in predictions.json"
elif [ -f "$OUTDIR/campaign.env" ]; then
  kept=$(sed -n 's/^PARTITIONS=\([0-9][0-9]*\)$/\1/p' "$OUTDIR/campaign.env" | head -n 1)
  kept_from="recorded in campaign.env"
fi
if [ -n "$kept" ]; then
  if [ -n "${PARTITIONS:-}" ] && [ "$PARTITIONS" != "$kept" ]; then
    log "$OUTDIR: PARTITIONS=$kept $kept_from, now PARTITIONS=$PARTITIONS: use a new folder"
    exit 2
  fi
  PARTITIONS=$kept
  log "rerun: PARTITIONS=$PARTITIONS, $kept_from (not sized again)"
fi
if [ -z "${PARTITIONS:-}" ]; then
  PARTITIONS=$(awk -v b="$BUDGET_S" -v e="$(elapsed)" -v r="$MODEL_RESERVE_S" -v n="$nruns" -v o="$OVERHEAD_S" -v j="$PROOFS" -v t="$t_part" -v s="$inv_sum" -v f="$SIZING_SAFETY" \
    'BEGIN { k = int(f * (b - e - r - n * o) / (j * t * s)); if (k < 2) k = 2; if (k > 16) k = 16; print k }')
  log "probe: ${probe_s}s for 2 partitions -> PARTITIONS=$PARTITIONS ($nruns runs of $PROOFS proofs in ${BUDGET_S}s, $(elapsed)s gone)"
fi
if [ -f "$OUTDIR/campaign.env" ]; then
  for kv in "SIZE=$SIZE" "PROOFS=$PROOFS" "PARTITIONS=$PARTITIONS" "BACKEND=$BACKEND"; do
    grep -qxF "$kv" "$OUTDIR/campaign.env" || { log "$OUTDIR holds runs of another workload ($(grep "^${kv%%=*}=" "$OUTDIR/campaign.env"), now $kv): use a new folder"; exit 2; }
  done
fi
cat > "$OUTDIR/campaign.env" <<EOF
SIZE=$SIZE
PROOFS=$PROOFS
PARTITIONS=$PARTITIONS
BACKEND=$BACKEND
CAL="$CAL"
REPEATS=$REPEATS
CAL_REPEATS=$CAL_REPEATS
BUDGET_S=$BUDGET_S
PROBE_S=$probe_s
REPLICATIONS=$REPLICATIONS
PREREG=1
GRID_ORDER="$(awk '{printf "%s ", $1}' "$OUTDIR/grid.txt")"
EOF

estimate() {  # run name -> seconds: its configuration's last run, else the formula x the ratio seen so far
  local cfg=${1%@*} prev
  prev=$(for s in "$OUTDIR/runs/$cfg.status" "$OUTDIR"/runs/"$cfg"@*.status; do [ -f "$s" ] && sed -n 's/^ok wall_s=\([0-9.]*\).*/\1/p' "$s"; done | tail -n 1)
  if [ -n "$prev" ]; then echo "$prev"; return; fi
  awk -v o="$OVERHEAD_S" -v j="$PROOFS" -v k="$PARTITIONS" -v t="$t_part" -v e="$(eff_of "$cfg")" -v q="${RATIO:-1}" 'BEGIN { printf "%.1f", (o + j * k * t / e) * q }'
}
RATIO=1; sum_est=0; sum_act=0
# Run a list of runs under the deadline guard; a run's limit is 2x its estimate + 20 s (at
# least RUN_TIMEOUT_S), cut so that it ends before HARD_S (`capped`); a run left less than
# 5 s by that is skipped.
run_list() {
  local run est now limit act
  for run in "$@"; do
    if done_ok "$run"; then log "$run: already done"; continue; fi
    est=$(estimate "$run")
    now=$(elapsed)
    if awk -v e="$now" -v l="$est" -v b="$BUDGET_S" 'BEGIN { exit !(e + l > b) }'; then
      echo "skipped elapsed_s=$now estimate_s=$est budget_s=$BUDGET_S" > "$OUTDIR/runs/$run.status"
      log "$run: skipped (elapsed ${now}s + about ${est}s > budget ${BUDGET_S}s)"
      continue
    fi
    limit=$(capped "$(awk -v e="$est" -v m="$RUN_TIMEOUT_S" 'BEGIN { l = 2 * e + 20; if (l < m) l = m; printf "%d", l }')")
    if [ -z "$limit" ] || [ "$limit" -lt 5 ]; then
      echo "skipped elapsed_s=$now estimate_s=$est hard_s=$HARD_S" > "$OUTDIR/runs/$run.status"
      log "$run: skipped (elapsed ${now}s leaves less than 5s + ${KILL_S}s before HARD_S=${HARD_S}s)"
      continue
    fi
    run_one "$run" "$PROOFS" "$PARTITIONS" "$limit" || failures=$((failures + 1))
    act=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$OUTDIR/runs/$run.status")
    if [ -n "$act" ]; then
      sum_est=$(calc "$sum_est + $est"); sum_act=$(calc "$sum_act + $act")
      RATIO=$(calc "$sum_act / $sum_est")
    fi
  done
}
failures=0

# ---- 4. the calibration runs ----
cal_runs=""
for k in $(seq 1 "$CAL_REPEATS"); do
  for c in $CAL; do if [ "$k" = 1 ]; then cal_runs="$cal_runs $c"; else cal_runs="$cal_runs $c@$k"; fi; done
done
# shellcheck disable=SC2086
run_list $cal_runs

# ---- 5. the model and the registration, here, before any predicted run ----
if [ -f "$OUTDIR/predictions.json" ]; then
  if command -v sha256sum >/dev/null && ! (cd "$OUTDIR" && sha256sum -c --status predictions.sha256); then
    log "predictions.json does not match predictions.sha256: this folder's registration was changed; start a new folder"
    exit 1
  fi
  log "predictions already registered: $(cat "$OUTDIR/predictions.sha256")"
else
  models=()
  for f in $CAL_CIRCUITS; do
    files=(); names=""
    for c in $CAL; do
      [ "$(circuit_of "$c")" = "$f" ] || continue
      names="$names $c"; n=0
      for run in $cal_runs; do [ "${run%@*}" = "$c" ] && done_ok "$run" && files+=("$OUTDIR/runs/$run.jsonl.gz") && n=$((n + 1)); done
      [ "$n" -gt 0 ] || { log "calibration configuration $c has no completed run: nothing to predict from"; exit 1; }
    done
    c=${names# }
    mkdir -p "$OUTDIR/cal/$f"
    step "campaign base ($f)" "$HARD_S" "$PS" campaign base "$OUTDIR/machine.txt" "${files[0]}" -o "$OUTDIR/cal/$f" 2>> "$OUTDIR/cal/$f/calibrate.txt" || { log "campaign base failed for $f"; exit 1; }
    step "calibrate ($f)" "$HARD_S" "$PS" calibrate "${files[@]}" --base "$OUTDIR/cal/$f/base.toml" -o "$OUTDIR/cal/$f" >> "$OUTDIR/cal/$f/calibrate.txt" 2>&1 || { log "calibrate failed for $f: $(tail -3 "$OUTDIR/cal/$f/calibrate.txt")"; exit 1; }
    models+=(--model "$f=$OUTDIR/cal/$f/model.toml")
    log "calibrated $f on ${#files[@]} run(s) of $c: cal/$f/model.toml"
  done
  if ! step "campaign predict" "$HARD_S" "$PS" campaign predict "$OUTDIR/grid.txt" "${models[@]}" --calibration "$(echo $CAL | tr ' ' ',')" --proofs "$PROOFS" --partitions "$PARTITIONS" \
      --backend "$BACKEND" --size "$SIZE" --replications "$REPLICATIONS" "${track_args[@]}" -o "$OUTDIR" > "$OUTDIR/predictions.txt" 2> "$OUTDIR/predictions.err"; then
    log "campaign predict failed: $(tail -5 "$OUTDIR/predictions.err")"
    exit 1
  fi
  cat "$OUTDIR/predictions.txt" >&2
  log "REGISTERED before any predicted run: sha256 $(cat "$OUTDIR/predictions.sha256")"
  echo "campaign-prereg: predictions.sha256 = $(cat "$OUTDIR/predictions.sha256")"
fi

# ---- 6. the predicted runs: every configuration once, then the repeats ----
pred_runs=""
for k in $(seq 1 "$REPEATS"); do
  for c in $PRED; do if [ "$k" = 1 ]; then pred_runs="$pred_runs $c"; else pred_runs="$pred_runs $c@$k"; fi; done
done
# shellcheck disable=SC2086
run_list $pred_runs

log "done in $(elapsed)s; $failures failed run(s); statuses:"
for s in "$OUTDIR"/runs/*.status; do echo "  $(basename "$s" .status): $(cat "$s")"; done | tee -a "$OUTDIR/campaign.log" >&2
echo "campaign-prereg: predictions.sha256 = $(cat "$OUTDIR/predictions.sha256" 2>/dev/null)"
echo "campaign-prereg: next, on a machine with the full binary: bash scripts/campaign-analyze.sh $OUTDIR" >&2
[ "$failures" = 0 ]
