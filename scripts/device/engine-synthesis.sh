#!/usr/bin/env bash
# End to end with the pre-compiled constraints (PCE) against the circuit path: porep-like
# 2^LOG × PARTS partitions, PROOFS proofs per run, every proof verified, on the CUDA backend;
# each configuration "name:synthesis:pw:gw:lock" once; timelines kept gzipped. The first
# PCE run extracts the matrices and writes the cache next to the parameters (span
# pce_build); later runs read it.
#   bash scripts/device/engine-synthesis.sh      (after scripts/build-gpu-binary.sh; carry dist)
# Knobs: LOG (22), PARTS (10), PROOFS (5), CONFIGS, PROVE_TIMEOUT (180).
set -uo pipefail
cd "$(dirname "$0")/../.."
[ -n "${BIN:-}" ] || bash scripts/device/unpack.sh || exit 2
BIN=${BIN:-dist/proofscope}
OUT=${OUT:-/tmp/proofscope-engine-out}
mkdir -p "$OUT"
log=${LOG:-22}
p=/tmp/params-engine-$log.bin
t0=$(date +%s)
[ -s "$p" ] || "$BIN" setup --constraints $((1 << log)) --params "$p" 2>&1 | tail -1 | tee -a "$OUT/engine-synthesis.txt"
echo "setup done at $(( $(date +%s) - t0 )) s" | tee -a "$OUT/engine-synthesis.txt"
rc=0
for c in ${CONFIGS:-pce-pw8-gw2:pce:8:2:kernels circuit-pw8-gw2:circuit:8:2:kernels pce-pw4-gw2:pce:4:2:kernels pce-pw12-gw2:pce:12:2:kernels}; do
  IFS=: read -r name synth pw gw lock <<<"$c"
  echo "== $name (synthesis=$synth pw=$pw gw=$gw lock=$lock) at $(( $(date +%s) - t0 )) s" | tee -a "$OUT/engine-synthesis.txt"
  timeout "${PROVE_TIMEOUT:-180}" "$BIN" prove --params "$p" --backend cuda --synthesis "$synth" --pw "$pw" --gw "$gw" --lock "$lock" \
    --proofs "${PROOFS:-5}" --partitions "${PARTS:-10}" --verify --seed 1 --quiet \
    --timeline "$OUT/engine-$name.jsonl" -o "/tmp/engine-proofs-$name" 2>&1 | tail -2 | tee -a "$OUT/engine-synthesis.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
done
for d in /tmp/engine-proofs-*; do
  [ "$d" = /tmp/engine-proofs-circuit-pw8-gw2 ] && continue
  if diff -r -q /tmp/engine-proofs-circuit-pw8-gw2 "$d" > /dev/null; then echo "engine-synthesis: ${d#/tmp/engine-proofs-} proofs identical to the circuit path's" | tee -a "$OUT/engine-synthesis.txt"
  else echo "engine-synthesis: ${d#/tmp/engine-proofs-} PROOFS DIFFER" | tee -a "$OUT/engine-synthesis.txt"; rc=1; fi
done
gzip -f "$OUT"/engine-*.jsonl
echo "engine-synthesis: exit $rc after $(( $(date +%s) - t0 )) s" | tee -a "$OUT/engine-synthesis.txt"
exit $rc
