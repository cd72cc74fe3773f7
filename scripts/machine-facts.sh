#!/usr/bin/env bash
# The machine a campaign ran on, as `key: value` lines on stdout (campaign.sh and
# campaign-prereg.sh write them to machine.txt; campaign-analyze.sh reads them back).
#   bash scripts/machine-facts.sh BINARY
PS=$1
echo "date: $(date -u +%FT%TZ)"
# The tree the binary was built from (dist/COMMIT, written by build-gpu-binary.sh): a
# device's copy of the repository may carry a stale .git.
if [ -s "$(dirname "$PS")/COMMIT" ]; then
  echo "commit: $(cat "$(dirname "$PS")/COMMIT") (binary's tree)"
else
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
fi
echo "binary: $PS ($("$PS" --version 2>&1))"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores"
echo "ram_gib: $(awk '/MemTotal/ {printf "%.0f", $2 / 1048576}' /proc/meminfo)"
echo "nproc: $(nproc)"
# Topology and virtualisation: hyperthread siblings and other tenants shape CPU-bound runs.
if command -v lscpu >/dev/null; then
  lscpu | grep -E '^(Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|NUMA node\(s\)|Hypervisor vendor|Virtualization type|CPU max MHz|L3 cache):' | sed 's/^/lscpu: /; s/  */ /g'
fi
[ -r /sys/kernel/mm/transparent_hugepage/enabled ] && echo "thp: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
else
  echo "gpu: none (nvidia-smi not found)"
fi
