#!/usr/bin/env python3
"""Issue 21: for each timeline (.jsonl.gz), the mean number of syntheses running beside each
synthesis (n̄, itself included: the overlap of every synthesis span with it ÷ its length) and
the mean synthesis time, with those that ran alone (n̄ < 1.5). The figures of docs/fidelity.md's
"synthesis pools" item (campaign 2026-12-03-prereg4).

    python3 scripts/device/synthesis-concurrency.py runs/*.jsonl.gz
"""
import sys,json,gzip,statistics as st
for f in sys.argv[1:]:
    iv=[]
    for l in gzip.open(f,'rt'):
        e=json.loads(l)
        if e['type']=='span' and e['kind']=='synthesis' and 'end_ns' in e: iv.append((e['start_ns'],e['end_ns']))
    iv.sort()
    res=[]
    for a,b in iv:
        # mean number of syntheses running over [a,b]
        tot=0
        for c,d in iv:
            o=min(b,d)-max(a,c)
            if o>0: tot+=o
        res.append((tot/(b-a),(b-a)/1e9))
    ns=[r[0] for r in res]; ts=[r[1] for r in res]
    name=f.split('/')[-1].replace('.jsonl.gz','')
    lo=[t for n,t in res if n<1.5]; 
    print(f"{name:22s} n̄ {st.mean(ns):5.2f}  synth {st.mean(ts):.3f} s  (n<1.5: {len(lo)} at {st.mean(lo) if lo else float('nan'):.3f})")
