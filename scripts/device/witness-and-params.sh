#!/usr/bin/env bash
# One device call for two things that need no engine run (issue 19 and issue 20):
#  1. the witness in pieces on the H200 host's CPU: scripts/device/synthesis.sh at 2^24 with
#     every core for one synthesis (16x1) and split between five at once (3x5, about what the
#     RAM budget admitted in run 56), each against the same witnesses on one thread;
#  2. the 2^27 parameter file: scripts/device/params-file.sh (setup writes it uncompressed,
#     prove --params loads it and proves PROOFS x PARTS).
# Outputs under $OUT: synthesis.jsonl / synthesis.txt / machine.txt (1) and params-file.tgz (2).
# Knobs: SYNTH_BUDGET (seconds for 1, default 150), FILE_BUDGET (for 2, default 420), and the
# two scripts' own knobs.
set -uo pipefail
cd "$(dirname "$0")/../.."
bash scripts/device/unpack.sh || exit 2
OUT=${OUT:-/tmp/proofscope-gpu-out}
export OUT
LOGS_FULL=24 SPLITS=3x5 SPLIT_LOG=24 SPLITS_SKIP_CIRCUIT=1 MIX_LOG="" CACHE_LOG=none REPS=${REPS:-2} BUDGET=${SYNTH_BUDGET:-150} \
  bash scripts/device/synthesis.sh
BUDGET=${FILE_BUDGET:-420} bash scripts/device/params-file.sh
