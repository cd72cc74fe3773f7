#!/usr/bin/env bash
# Proofs byte-identical across the engine's [cuda] settings set through `prove --set`
# (the TOML path, not the environment), and equal to the CPU backend's proofs of the same
# seed: the CUDA backend computes the same Groth16 proofs whatever its placement, lanes,
# chunking or NTT plan. Also checks that the run meta records the resolved settings.
#   bash scripts/device/settings-check.sh        (after scripts/build-gpu-binary.sh; carry dist)
# Knobs: LOG (default 16), PROOFS (2), PARTS (3), SETS (a list of "name:--set a=b --set c=d").
set -uo pipefail
cd "$(dirname "$0")/../.."
[ -n "${BIN:-}" ] || bash scripts/device/unpack.sh || exit 2
BIN=${BIN:-dist/proofscope}
export OUT=${OUT:-/tmp/proofscope-gpu-out}
mkdir -p "$OUT"
log=${LOG:-16}
p=/tmp/params-settings-$log.bin
[ -s "$p" ] || "$BIN" setup --constraints $((1 << log)) --params "$p" 2>&1 | tail -1 | tee -a "$OUT/settings.txt"
rc=0
prove() { # name backend args...
  local name=$1 backend=$2; shift 2
  timeout "${PROVE_TIMEOUT:-200}" "$BIN" prove --params "$p" --backend "$backend" --proofs "${PROOFS:-2}" --partitions "${PARTS:-3}" \
    --pw 2 --gw 2 --seed 11 --verify --quiet --timeline "$OUT/settings-$name.jsonl" -o "/tmp/settings-proofs-$name" "$@" 2>&1 | tail -2 | tee -a "$OUT/settings.txt"
  [ "${PIPESTATUS[0]}" = 0 ] || { echo "settings-check: $name FAILED" | tee -a "$OUT/settings.txt"; rc=1; }
}
prove cpu cpu
prove cuda cuda
SETS=${SETS:-"serial:--set cuda.msm_batch=off|stream:--set cuda.params=stream|chunked:--set cuda.params=stream --set cuda.stream_chunk=5000|pre:--set cuda.msm_precomp=on|radix2:--set cuda.ntt_radix=2 --set cuda.ntt_bitrev=tile|g2cpu:--set g2_msm=cpu"}
IFS='|' read -ra sets <<<"$SETS"
for s in "${sets[@]}"; do
  name=${s%%:*}; args=${s#*:}
  # shellcheck disable=SC2086
  prove "$name" cuda $args
done
for d in /tmp/settings-proofs-*; do
  n=${d#/tmp/settings-proofs-}
  [ "$n" = cpu ] && continue
  if diff -r -q /tmp/settings-proofs-cpu "$d" > /dev/null; then echo "settings-check: $n proofs identical to the CPU backend's" | tee -a "$OUT/settings.txt"
  else echo "settings-check: $n PROOFS DIFFER from the CPU backend's" | tee -a "$OUT/settings.txt"; rc=1; fi
done
# The resolved [cuda] settings are in the run meta.
head -c 2000 "$OUT/settings-serial.jsonl" | head -1 | grep -o '"cuda":{[^}]*}' | tee -a "$OUT/settings.txt" | grep -q '"msm_batch":"off"' \
  || { echo "settings-check: meta.extra.cuda does not record msm_batch=off" | tee -a "$OUT/settings.txt"; rc=1; }
gzip -f "$OUT"/settings-*.jsonl
echo "settings-check: exit $rc" | tee -a "$OUT/settings.txt"
exit $rc
