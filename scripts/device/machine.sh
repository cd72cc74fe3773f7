#!/usr/bin/env bash
# On the GPU machine: the facts a run record names, on stdout — the time, the binary's commit,
# the GPU, transparent huge pages, cores, memory, and the host's memory bandwidth (the
# synthesis bench's copy/triad probe, 16 threads). BIN: the unpacked binary (dist/proofscope).
BIN=${BIN:-dist/proofscope}
date -u +%FT%TZ
echo "binary from commit $(cat dist/COMMIT 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
echo "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>&1)"
nproc; free -g | head -2
timeout 60 "$BIN" circuit --constraints 2^20 --threads 16 --concurrent 1 --synthesis-bench --reps 1 --skip-circuit 2>&1 | grep triad
