#!/usr/bin/env python3
"""The a/b/c uploads of prover timelines, one Markdown row per run: medians of the `abc` h2d
spans' host steps (fill for a staged upload, lock for a registered one, the copies' CUDA-event
time, the wait, the finish) with the GPU call and the MSM preparation beside them.

Usage: scripts/abc-upload-stats.py NAME=timeline.jsonl.gz [NAME=...]
(kept beside reports/gpu/2026-12-04-run136-143.md, whose 2^22 rows it made).
"""
import gzip,json,statistics as st,sys
print("| run | abc uploads | fill ms (median) | lock ms | copies (gpu) ms | wait ms | finish ms | h2d wall ms | GPU call ms (median) | prep ms |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for arg in sys.argv[1:]:
    name,path=arg.split('=',1)
    rows=[];calls=[];preps=[]
    for line in gzip.open(path,'rt'):
        e=json.loads(line)
        k=e.get('kind')
        d=e.get('dur_ns')
        if d is None and 'end_ns' in e and 'start_ns' in e: d=e['end_ns']-e['start_ns']
        if k=='h2d' and e.get('args',{}).get('what')=='abc': rows.append((e,d))
        elif k=='gpu': calls.append(d)
        elif k=='prep_msm': preps.append(d)
    m=lambda key: st.median([r[0]['args'].get(key,0)/1e6 for r in rows])
    w=st.median([(r[1] or 0)/1e6 for r in rows])
    c=st.median([x/1e6 for x in calls if x]) if calls else float('nan')
    p=st.median([x/1e6 for x in preps if x]) if preps else float('nan')
    print(f"| {name} | {len(rows)} | {m('fill_ns'):.1f} | {m('lock_ns'):.1f} | {m('gpu_ns'):.1f} | {m('wait_ns'):.1f} | {m('finish_ns'):.1f} | {w:.1f} | {c:.0f} | {p:.0f} |")
