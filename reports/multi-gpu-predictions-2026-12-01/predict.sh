#!/usr/bin/env bash
# The simulator's predictions for issue 22's planned runs on the x2 host (2 H200, 32 cores,
# 256 GiB RAM), gpus = 1 and 2, written before any run. Run from the repository root:
#   BIN=target/debug/proofscope bash reports/multi-gpu-predictions-2026-12-01/predict.sh
# Models (each calibrated on a single-GPU run only):
#   2^22 x 10: reports/campaign-2026-11-30-run7-2e22/model.toml (pw4-gw2-kernels-split, H200)
#   2^27 x 10: reports/full-scale-predictions-2026-12-01/model.toml + common-overrides.txt
set -euo pipefail
BIN=${BIN:-target/debug/proofscope}
D=reports/multi-gpu-predictions-2026-12-01
# The x2 host, and the engine's placement (one shared queue; issue 22).
HOST="--set machine.cpu_cores=32 --set machine.ram_gib=256 --set pipeline.placement=memory"
# 2^22: 5 proofs of 10 partitions, all submitted at once (the engine's `prove`).
M22=reports/campaign-2026-11-30-run7-2e22/model.toml
C22="--set pipeline.proofs=5 --set pipeline.in_flight=5 --set pipeline.partitions=10"
for pw in 8 16 24 32; do
  for g in 1 2; do
    name=2e22-pw$pw-gw2-gpus$g
    args="--set pipeline.pw=$pw --set pipeline.gw=2 --set machine.gpus=$g"
    echo "$args" > "$D/$name.args"
    "$BIN" simulate "$M22" $HOST $C22 $args --replications 20 > "$D/$name.txt"
    "$BIN" simulate "$M22" $HOST $C22 $args --replications 20 --json > "$D/$name.json"
  done
done
# 2^27 (full scale): 2 proofs of 10 partitions (what one device call holds beside the
# setup, as the full-scale addendum), RAM budget auto (256 GiB − 5 GiB).
MFS=reports/full-scale-predictions-2026-12-01/model.toml
CFS=$(sed 's/proofs=3/proofs=2/; s/in_flight=3/in_flight=2/' reports/full-scale-predictions-2026-12-01/common-overrides.txt)
for pw in 12 24; do
  for gw in 1 2; do
    for g in 1 2; do
      name=2e27-pw$pw-gw$gw-gpus$g
      args="--set pipeline.pw=$pw --set pipeline.gw=$gw --set machine.gpus=$g"
      echo "$args" > "$D/$name.args"
      "$BIN" simulate "$MFS" $CFS $HOST $args --replications 20 > "$D/$name.txt"
      "$BIN" simulate "$MFS" $CFS $HOST $args --replications 20 --json > "$D/$name.json"
    done
  done
done
