#!/usr/bin/env bash
# One device call that checks and times everything the CUDA backend has: the kernels
# (`gpu check` against the CPU path, every MSM variant in PROOFSCOPE_MSM_VARIANTS), their
# timings (`gpu bench`), then whole partitions through the engine at 2^LOG constraints
# (TEST-ONLY setup made there), verified, with the timeline kept: with the defaults, with the
# fastest G1 MSM variant the bench found at the largest MSM size, with the G2 MSM on the
# CPU (--g2-msm cpu) instead of the GPU, and with tables of shifted bases for the G1 queries
# (PROOFSCOPE_MSM_PRECOMP=on), with every query streamed instead of resident
# (PROOFSCOPE_GPU_PARAMS=stream), and with the MSMs of a partition one after the other
# instead of on lanes (PROOFSCOPE_MSM_BATCH=off), and streamed in chunks of 300 000 terms
# (PROOFSCOPE_STREAM_CHUNK); all must give byte-identical proofs. (The PROOFSCOPE_* variables
# override keys of the engine's [cuda] section; each timeline's meta records those applied.)
# Build first, here: bash scripts/build-gpu-binary.sh   (carry dist)
# Knobs: everything gpu-check.sh takes (MSM, NTT, RUNS, CHECK_ARGS, PROOFSCOPE_MSM_VARIANTS),
#        LOG (default 20), ENGINE ("pw:gw:proofs:partitions", default 2:2:2:4), SKIP_ENGINE=1.
set -uo pipefail
cd "$(dirname "$0")/../.."
[ -n "${BIN:-}" ] || bash "$(dirname "$0")/unpack.sh" || exit 2
BIN=${BIN:-dist/proofscope}
export OUT=${OUT:-/tmp/proofscope-gpu-out}
mkdir -p "$OUT"
t0=$(date +%s)
bash scripts/device/gpu-check.sh
rc=$?
echo "check-all: kernels done in $(( $(date +%s) - t0 )) s (rc $rc)" | tee -a "$OUT/engine.txt"
[ -n "${SKIP_ENGINE:-}" ] && exit $rc
log=${LOG:-20}
p=/tmp/params-$log.bin
{ timeout "${SETUP_TIMEOUT:-200}" "$BIN" setup --constraints $((1 << log)) --params "$p" 2>&1 | tail -1; } | tee -a "$OUT/engine.txt"
[ -f "$p" ] || { echo "check-all: setup 2^$log did not finish" | tee -a "$OUT/engine.txt"; exit 1; }
IFS=: read -r pw gw proofs parts <<<"${ENGINE:-2:2:2:4}"
fastest=$(sed -n 's/^fastest MSM variant at 2^[0-9]*: \([^ ]*\).*/\1/p' "$OUT/bench.txt" 2>/dev/null | tail -n 1)
variants="default ${fastest:+msm-$fastest} g2-cpu pre stream serial chunked"
for v in $variants; do
  case $v in
    default) envs=(); args=() ;;
    # A +pre variant (over shifted-base tables) becomes tables of its c for the engine.
    msm-*+pre*) spec=${v#msm-}; c=$(cut -s -d: -f2 <<<"$spec")
                envs=("PROOFSCOPE_MSM_ACC=${spec%%+pre*}" "PROOFSCOPE_MSM_PRECOMP=${c:-on}"); args=() ;;
    msm-*) envs=("PROOFSCOPE_MSM_ACC=${v#msm-}"); args=() ;;
    g2-cpu) envs=(); args=(--g2-msm cpu) ;;
    pre) envs=("PROOFSCOPE_MSM_PRECOMP=on"); args=() ;;
    stream) envs=("PROOFSCOPE_GPU_PARAMS=stream"); args=() ;;
    serial) envs=("PROOFSCOPE_MSM_BATCH=off"); args=() ;;
    chunked) envs=("PROOFSCOPE_GPU_PARAMS=stream" "PROOFSCOPE_STREAM_CHUNK=300000"); args=() ;;
  esac
  f=${v//[:+]/_}  # file names: the device tool brings back plain names only
  echo "== 2^$log cuda pw=$pw gw=$gw proofs=$proofs partitions=$parts variant=$v" | tee -a "$OUT/engine.txt"
  env "${envs[@]}" timeout "${PROVE_TIMEOUT:-150}" "$BIN" prove --params "$p" --backend cuda "${args[@]}" \
      --pw "$pw" --gw "$gw" --proofs "$proofs" --partitions "$parts" --verify --seed 1 --quiet \
      --timeline "$OUT/engine-$log-$f.jsonl" -o "/tmp/proofs-$log-$f" 2>&1 | tail -3 | tee -a "$OUT/engine.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
done
# The same proofs from every variant (same seed): byte-identical proof files.
for v in $variants; do
  [ "$v" = default ] && continue
  if diff -r -q "/tmp/proofs-$log-default" "/tmp/proofs-$log-${v//[:+]/_}" >/dev/null 2>&1; then
    echo "check-all: proofs identical with default and $v" | tee -a "$OUT/engine.txt"
  else
    echo "check-all: PROOFS DIFFER between default and $v" | tee -a "$OUT/engine.txt"; rc=1
  fi
done
gzip -f "$OUT"/engine-*.jsonl
echo "check-all: exit $rc after $(( $(date +%s) - t0 )) s" | tee -a "$OUT/engine.txt"
exit $rc
