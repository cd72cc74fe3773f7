#!/usr/bin/env python3
"""Thin a prover timeline for reports/ (JSON lines, gzip in and out): spans, meta and event
counters (ram_reserved_bytes, queue_depth, ...) are kept whole; the periodic 50 ms samples
(RSS, CPU, NVML) are kept at one per second per counter and device. Written whole or not at
all (temporary file, then rename). Usage: thin-timeline.py IN.jsonl.gz OUT.jsonl.gz"""
import gzip, json, sys
PERIODIC = {"rss_bytes", "cpu_busy_cores", "host_busy_cores", "host_steal_cores", "gpu_util_pct",
            "mem_util_pct", "gpu_mem_used_bytes", "gpu_power_w", "sm_clock_mhz"}
src, dst = sys.argv[1], sys.argv[2]
last = {}
kept = total = 0
with gzip.open(src, "rt") as f, gzip.open(dst + ".tmp", "wt", compresslevel=9) as g:
    for line in f:
        total += 1
        e = json.loads(line)
        if e.get("type") == "counter" and e.get("name") in PERIODIC:
            key = (e["name"], e.get("device"))
            sec = e["t_ns"] // 1_000_000_000
            if last.get(key) == sec:
                continue
            last[key] = sec
        g.write(line)
        kept += 1
import os; os.replace(dst + ".tmp", dst)
print(f"{src}: kept {kept} of {total} lines -> {dst} ({os.path.getsize(dst)} B)")
