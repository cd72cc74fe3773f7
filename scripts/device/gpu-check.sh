#!/usr/bin/env bash
# One device call = this script: GPU state, `gpu info`, `gpu check`, then `gpu bench` at
# several sizes; every log goes under $OUT (what the device tool brings back).
# Build first, here:  bash scripts/build-gpu-binary.sh   (puts dist/proofscope)
# Then on the GPU machine (carry dist):  bash scripts/device/gpu-check.sh
# Knobs: BIN, CHECK_ARGS (e.g. --quick), MSM, NTT, MSM_G2 (sizes; "" skips a family), RUNS,
#        SKIP_CHECK=1, SKIP_BENCH=1.
set -uo pipefail
[ -n "${BIN:-}" ] || bash "$(dirname "$0")/unpack.sh" || exit 2
BIN=${BIN:-dist/proofscope}
OUT=${OUT:-/tmp/proofscope-gpu-out}
mkdir -p "$OUT"
chmod +x "$BIN" 2>/dev/null || true
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,memory.used --format=csv 2>&1
  nproc
} | tee "$OUT/machine.txt"
"$BIN" gpu info 2>&1 | tee -a "$OUT/machine.txt"
rc=0
if [ -z "${SKIP_CHECK:-}" ]; then
  timeout "${CHECK_TIMEOUT:-240}" "$BIN" gpu check ${CHECK_ARGS:-} 2>&1 | tee "$OUT/check.txt"
  rc=${PIPESTATUS[0]}
fi
if [ -z "${SKIP_BENCH:-}" ]; then
  timeout "${BENCH_TIMEOUT:-300}" "$BIN" gpu bench --msm "${MSM-16..26:2}" --ntt "${NTT-16..26:2}" --msm-g2 "${MSM_G2-16..22:2}" --runs "${RUNS:-5}" --json "$OUT/bench.json" 2>&1 | tee "$OUT/bench.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
fi
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv 2>&1 | tee -a "$OUT/machine.txt"
echo "gpu-check.sh: exit $rc"
exit $rc
