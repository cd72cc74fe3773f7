#!/usr/bin/env python3
"""Writes the fleet fixture (four hosts, see fleet-README.md) into fleet/. Deterministic."""
import os
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fleet"))
import gzip, json, datetime

def partitioned(job, n, synth0, synth1, gpu0, call=100):
    """n partitions synthesised together, then serial GPU calls of `call` ms on worker 0."""
    ev = []
    for p in range(n):
        ev.append((synth0, f"SYNTH_START,{job},partition={p}"))
    for p in range(n):
        ev.append((synth1, f"SYNTH_END,{job},partition={p},synth_ms={synth1 - synth0}"))
        ev.append((synth1, f"GPU_QUEUE,{job},partition={p}"))
    for p in range(n):
        s = gpu0 + call * p
        ev.append((s, f"GPU_PICKUP,{job},worker=0,partition={p}"))
        ev.append((s, f"GPU_START,{job},worker=0,partition={p}"))
        ev.append((s + call, f"GPU_END,{job},worker=0,partition={p},gpu_ms={call}"))
    return ev

def whole(job, kind, synth0, synth1, start, end):
    return [(synth0, f"SYNTH_START,{job},kind={kind}"), (synth1, f"SYNTH_END,{job},synth_ms={synth1 - synth0}"),
            (synth1, f"GPU_QUEUE,{job},monolithic"), (start, f"GPU_PICKUP,{job},worker=0"),
            (start, f"GPU_START,{job},worker=0"), (end, f"GPU_END,{job},worker=0,gpu_ms={end - start}")]

def lines(ev):
    return [(t, f"TIMELINE,{t},{rest}") for t, rest in sorted(ev, key=lambda e: e[0])]

INFO = "2024-12-01T13:00:00.000Z  INFO cuzk_core::engine: partition synthesis complete, pushing to GPU queue"

# host-a: plain lines, gzip; two PoRep jobs (10 partitions, no kind=) and a WinningPoSt.
a = lines(partitioned("a1", 10, 0, 1000, 1000) + partitioned("a2", 10, 1000, 2500, 2500) + whole("a-wp", "winning-post", 3500, 3600, 3600, 3800))
text = "".join(f"{l}\n" + (f"{INFO}\n" if i % 7 == 0 else "") for i, (_, l) in enumerate(a))
with open("host-a.log.gz", "wb") as f:
    f.write(gzip.compress(text.encode(), mtime=0))

# host-b: journalctl's short-precise prefix; the daemon restarted 20 s after its first start.
base = datetime.datetime(2000, 12, 1, 13, 0, 0)
out = []
for anchor_s, ev in [(0, partitioned("b1", 10, 10000, 11000, 11000)), (20, partitioned("b2", 10, 0, 1000, 1000))]:
    for t, l in lines(ev):
        w = base + datetime.timedelta(seconds=anchor_s, milliseconds=t)
        out.append(f"{w.strftime('%b %d %H:%M:%S')}.{w.microsecond:06d} host-b cuzk[{4000 + anchor_s}]: {l}\n")
    out.append(f"{(base + datetime.timedelta(seconds=anchor_s + 15)).strftime('%b %d %H:%M:%S')} host-b systemd[1]: cuzk.service: Main process exited, code=killed\n")
open("host-b.log", "w").write("".join(out))

# host-c: journalctl -o json; two SnapDeals jobs (16 partitions, no kind=), the daemon's
# JSON log lines inside MESSAGE too.
t0_us = 1733058000000000
out = []
for i, (t, l) in enumerate(lines(partitioned("c1", 16, 0, 1000, 1000) + partitioned("c2", 16, 1000, 2600, 2600))):
    out.append(json.dumps({"__CURSOR": f"s={i}", "__REALTIME_TIMESTAMP": str(t0_us + t * 1000), "_HOSTNAME": "host-c", "SYSLOG_IDENTIFIER": "cuzk", "MESSAGE": l}) + "\n")
    if i % 9 == 0:
        msg = json.dumps({"timestamp": "2024-12-01T13:00:00Z", "level": "INFO", "fields": {"message": "proof queued"}, "target": "cuzk_core"})
        out.append(json.dumps({"__REALTIME_TIMESTAMP": str(t0_us + t * 1000), "_HOSTNAME": "host-c", "MESSAGE": msg}) + "\n")
open("host-c.jsonl", "w").write("".join(out))

# host-d: Docker json-file; one PoRep job and a WindowPoSt.
t0 = datetime.datetime(2024, 12, 1, 13, 0, 0)
out = []
for t, l in lines(partitioned("d1", 10, 0, 1000, 1000) + whole("d-wp", "window-post", 2000, 2200, 2300, 2700)):
    w = t0 + datetime.timedelta(milliseconds=t)
    out.append(json.dumps({"log": l + "\n", "stream": "stderr", "time": w.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"}) + "\n")
open("host-d.log", "w").write("".join(out))
