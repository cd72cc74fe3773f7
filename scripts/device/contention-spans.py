#!/usr/bin/env python3
"""Issue 21, with scripts/device/contention-probe.sh: one line per timeline (.jsonl.gz) with the
mean duration (ms) of its synthesis, witness, constraints, prep_msm, verify, finalize and gpu
spans, the mean of its cpu_busy_cores / host_busy_cores / host_steal_cores counters, and its
steady s/proof from the finalize ends (last three quarters of the partitions; 8 partitions a
proof). A quick look beside `proofscope analyze`, which gives each figure with its context.

    python3 scripts/device/contention-spans.py runs/*.jsonl.gz
"""
import sys,json,gzip,collections,statistics as st
print(f"{'run':22s} {'syn':>6s} {'wit':>6s} {'cons':>6s} {'prep':>6s} {'verify':>6s} {'fin':>6s} {'gpu':>6s} {'busy':>6s} {'host':>6s} {'steal':>6s} {'s/proof':>7s}")
for f in sys.argv[1:]:
    d=collections.defaultdict(list); cnt=collections.defaultdict(list); ends=[]
    opens={}
    for l in gzip.open(f,'rt'):
        e=json.loads(l)
        if e['type']=='span':
            if 'dur_ns' in e: d[e['kind']].append(e['dur_ns']/1e6)
            elif 'end_ns' in e and 'start_ns' in e: d[e['kind']].append((e['end_ns']-e['start_ns'])/1e6)
            if e['kind']=='finalize': ends.append(e.get('end_ns',0))
        elif e['type']=='counter': cnt[e['name']].append(e['value'])
    m=lambda k: st.mean(d[k]) if d[k] else float('nan')
    c=lambda k: st.mean(cnt[k]) if cnt[k] else float('nan')
    name=f.split('/')[-1].replace('.jsonl.gz','')
    ends.sort(); sp=(ends[-1]-ends[len(ends)//4])/1e9/((len(ends)-1-len(ends)//4)/8) if len(ends)>4 else 0
    print(f"{name:22s} {m('synthesis'):6.1f} {m('witness'):6.1f} {m('constraints'):6.1f} {m('prep_msm'):6.1f} {m('verify'):6.1f} {m('finalize'):6.1f} {m('gpu'):6.1f} {c('cpu_busy_cores'):6.2f} {c('host_busy_cores'):6.2f} {c('host_steal_cores'):6.2f} {sp:7.3f}")
