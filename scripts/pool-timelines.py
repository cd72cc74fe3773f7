#!/usr/bin/env python3
"""Side-by-side statistics of measured and simulated timelines (issue 21, the binding miss at pw >= 8).

usage: pool-timelines.py RUN.jsonl[.gz] [...]           (details per run)
       pool-timelines.py --table RUN.jsonl[.gz] [...]   (one line per run)

Table columns: pw; synthesis wall mean, first wave, later (ms); its spread (cv); syntheses at
once (time average); burst (share of completion spacings < 20 ms); kernels and device work per
partition (ms, copies by gpu_ns as the analyzer counts them); gpu_queue wait (ms); the
analyzer's synthesis and GPU floors (s/proof) and their ratio; nest (share of syntheses ending
within 3 ms of a later-started one's end); slot (share of the permits' time synthesising);
gpuwk (share of the GPU workers' time in a prove call over the steady window); the larger floor.

Per run: the syntheses' wall times (first wave = started before the first synthesis ended;
steady = the rest), how many ran at once, the spacing of their completions, the GPU's idle
gaps (union of the device-work spans, as the analyzer's kernel_ns) and what ended each,
and each partition's device work (kernels, uploads, their union: the analyzer's GPU floor).
"""
import gzip, json, sys, statistics as st

DEVICE = {"ntt", "msm_h", "ntt_msm_h", "msm_rest", "msm_l", "msm_a", "msm_b_g1", "msm_b_g2",
          "batch_add", "tail_msm", "h2d", "d2h", "kernel", "memcpy", "memset"}
COPIES = {"h2d", "d2h", "memcpy", "memset"}


def read(path):
    op = gzip.open if path.endswith(".gz") else open
    meta, spans = None, []
    with op(path, "rt") as f:
        for line in f:
            d = json.loads(line)
            if d.get("type") == "meta":
                meta = d
            elif d.get("type") == "span" and d.get("end_ns") is not None:
                spans.append(d)
    return meta, spans


def union(iv):
    iv = sorted(iv)
    out = []
    for s, e in iv:
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def q(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p
    i = int(k)
    return xs[i] + (xs[min(i + 1, len(xs) - 1)] - xs[i]) * (k - i)


def fmt(xs, scale=1e-6):
    xs = [x * scale for x in xs]
    if not xs:
        return "-"
    m = st.mean(xs)
    cv = st.pstdev(xs) / m if m else 0
    return f"n {len(xs):2d} mean {m:7.1f} p10 {q(xs,.1):7.1f} p50 {q(xs,.5):7.1f} p90 {q(xs,.9):7.1f} max {max(xs):7.1f} cv {cv:.2f}"


def dev_iv(s):
    """The span's device interval, as the analyzer's Span::device_interval: a copy that reports
    its device time (gpu_ns) counts only [end - finish_ns - gpu_ns, end - finish_ns)."""
    a = s.get("args") or {}
    if s["kind"] in ("h2d", "d2h", "memcpy") and a.get("gpu_ns") is not None:
        e = max(s["end_ns"] - int(a.get("finish_ns") or 0), s["start_ns"])
        return (max(e - int(a["gpu_ns"]), s["start_ns"]), e)
    return (s["start_ns"], s["end_ns"])


def key(s):
    return (s.get("job"), s.get("partition"))


def analyse(path):
    meta, spans = read(path)
    cfg = (meta or {}).get("config", {})
    pw = cfg.get("pw")
    syn = sorted([s for s in spans if s["kind"] == "synthesis"], key=lambda s: s["start_ns"])
    gpu = [s for s in spans if s["kind"] == "gpu"]
    t0 = min(s["start_ns"] for s in syn)
    first_end = min(s["end_ns"] for s in syn)
    first_gpu = min(s["start_ns"] for s in gpu)
    wave = [s for s in syn if s["start_ns"] < first_end]
    rest = [s for s in syn if s["start_ns"] >= first_end]
    print(f"== {path}  pw {pw} gw {cfg.get('gw')} lock {cfg.get('lock')}  syntheses {len(syn)}")
    print(f"  synthesis wall (ms) all:        {fmt([s['end_ns']-s['start_ns'] for s in syn])}")
    print(f"  synthesis wall (ms) first wave: {fmt([s['end_ns']-s['start_ns'] for s in wave])}")
    print(f"  synthesis wall (ms) later:      {fmt([s['end_ns']-s['start_ns'] for s in rest])}")
    # sub-phases where present
    for k in ("witness", "constraints"):
        xs = [s["end_ns"] - s["start_ns"] for s in spans if s["kind"] == k]
        if xs:
            print(f"  {k:11s} (ms):               {fmt(xs)}")
    # concurrency over time: time-weighted number of running syntheses between the first start
    # and the last synthesis end
    ev = sorted([(s["start_ns"], 1) for s in syn] + [(s["end_ns"], -1) for s in syn], key=lambda x: (x[0], x[1]))
    n, last, hist = 0, ev[0][0], {}
    for t, d in ev:
        hist[n] = hist.get(n, 0) + (t - last)
        n += d
        last = t
    tot = sum(hist.values())
    mean_n = sum(k * v for k, v in hist.items()) / tot
    top = " ".join(f"{k}:{100*v/tot:.0f}%" for k, v in sorted(hist.items()) if v / tot >= 0.02)
    print(f"  syntheses at once (time share): mean {mean_n:.2f}  {top}")
    # completion spacing (steady: after the first wave's ends)
    ends = sorted(s["end_ns"] for s in syn)
    gaps = [b - a for a, b in zip(ends, ends[1:])]
    print(f"  completion spacing (ms):         {fmt(gaps)}")
    burst = sum(1 for g in gaps if g < 20e6)
    print(f"    < 20 ms apart: {burst} of {len(gaps)}; clumps (ends within 50 ms of the previous): "
          + " ".join(str(c) for c in clumps(ends, 50e6)))
    # device work per partition
    parts = {}
    for s in spans:
        if s["kind"] in DEVICE and s.get("job") is not None and (s.get("args") or {}).get("what") != "params":
            parts.setdefault(key(s), []).append(s)
    dev_u, ker_u, cp_u = [], [], []
    for k, ss in parts.items():
        dev_u.append(sum(e - b for b, e in union([dev_iv(s) for s in ss])))
        ker_u.append(sum(e - b for b, e in union([(s["start_ns"], s["end_ns"]) for s in ss if s["kind"] not in COPIES])))
        cp_u.append(sum(e - b for b, e in union([dev_iv(s) for s in ss if s["kind"] in COPIES])))
    print(f"  per partition device-work union (ms): {fmt(dev_u)}")
    print(f"                kernels union (ms):     {fmt(ker_u)}")
    print(f"                copies union (ms):      {fmt(cp_u)}")
    lh = [s["end_ns"] - s["start_ns"] for s in spans if s["kind"] == "lock_hold"]
    print(f"  lock_hold (ms):                  {fmt(lh)}")
    print(f"  gpu call (ms):                   {fmt([s['end_ns']-s['start_ns'] for s in gpu])}")
    pm = [s["end_ns"] - s["start_ns"] for s in spans if s["kind"] == "prep_msm"]
    print(f"  prep_msm (ms):                   {fmt(pm)}")
    # floors as the analyzer computes them
    P = cfg.get("partitions") or 3
    if pw:
        sf = st.mean([s["end_ns"] - s["start_ns"] for s in syn]) * P / pw / 1e9
        gf = st.mean(dev_u) * P / 1e9
        print(f"  floors: synthesis {sf:.3f} s/proof, GPU (device-work union) {gf:.3f} s/proof, ratio syn/gpu {sf/gf:.3f}")
    # GPU idle: gaps in the union of the device-work spans (all workers), after the first GPU work
    dw = union([dev_iv(s) for s in spans if s["kind"] in DEVICE and (s.get("args") or {}).get("what") != "params"])
    idle = [(a[1], b[0]) for a, b in zip(dw, dw[1:]) if b[0] - a[1] >= 1e6]
    # a gap is ended by a synthesis when the queue was empty: the next device work's partition
    # ended its synthesis inside the gap (or later than the gap start)
    synend = {key(s): s["end_ns"] for s in syn}
    starts = sorted((s["start_ns"], key(s)) for s in spans if s["kind"] in DEVICE and s.get("job") is not None)
    by_syn, other = [], []
    import bisect
    st_t = [x[0] for x in starts]
    for a, b in idle:
        i = bisect.bisect_left(st_t, b)
        k = starts[i][1] if i < len(starts) else None
        if k in synend and synend[k] > a:
            by_syn.append(b - a)
        else:
            other.append(b - a)
    window = dw[-1][1] - dw[0][0]
    print(f"  device idle in window {sum(b-a for a,b in idle)/1e9:.3f} s of {window/1e9:.3f} s ({100*sum(b-a for a,b in idle)/window:.1f} %); "
          f"ended by a synthesis that finished inside the gap: {len(by_syn)} gaps {sum(by_syn)/1e9:.3f} s; other: {len(other)} gaps {sum(other)/1e9:.3f} s")
    # GPU call idle (union of gpu spans), and kernel idle
    gu = union([(s["start_ns"], s["end_ns"]) for s in gpu])
    gidle = sum(b[0] - a[1] for a, b in zip(gu, gu[1:]))
    print(f"  gpu-span union idle after first call: {gidle/1e9:.3f} s of {(gu[-1][1]-gu[0][0])/1e9:.3f} s")
    # queue: partitions waiting in gpu_queue over time (time share with queue empty while a worker is idle)
    qs = [s for s in spans if s["kind"] == "gpu_queue"]
    qw = [s["end_ns"] - s["start_ns"] for s in qs]
    print(f"  gpu_queue wait (ms):             {fmt(qw)}")
    print(f"  first synthesis start {t0/1e9:.3f} s, first end {first_end/1e9:.3f} s, first GPU {first_gpu/1e9:.3f} s, last end {max(s['end_ns'] for s in spans)/1e9:.3f} s")


def clumps(ends, tol):
    out, c = [], 1
    for a, b in zip(ends, ends[1:]):
        if b - a <= tol:
            c += 1
        else:
            out.append(c)
            c = 1
    out.append(c)
    return out


def row(path, label=None):
    """One line: the figures behind the analyzer's floors and the synthesis pattern."""
    meta, spans = read(path)
    cfg = (meta or {}).get("config", {})
    pw, P = cfg.get("pw"), cfg.get("partitions") or 3
    syn = [s for s in spans if s["kind"] == "synthesis"]
    first_end = min(s["end_ns"] for s in syn)
    w = [s["end_ns"] - s["start_ns"] for s in syn]
    wave = [s["end_ns"] - s["start_ns"] for s in syn if s["start_ns"] < first_end]
    later = [s["end_ns"] - s["start_ns"] for s in syn if s["start_ns"] >= first_end]
    ev = sorted([(s["start_ns"], 1) for s in syn] + [(s["end_ns"], -1) for s in syn], key=lambda x: (x[0], x[1]))
    n, last, area = 0, ev[0][0], 0
    for t, d in ev:
        area += n * (t - last)
        n += d
        last = t
    conc = area / (ev[-1][0] - ev[0][0])
    parts = {}
    for s in spans:
        if s["kind"] in DEVICE and s.get("job") is not None and (s.get("args") or {}).get("what") != "params":
            parts.setdefault(key(s), []).append(s)
    dev_u = st.mean(sum(e - b for b, e in union([dev_iv(s) for s in ss])) for ss in parts.values())
    ker_u = st.mean(sum(e - b for b, e in union([(s["start_ns"], s["end_ns"]) for s in ss if s["kind"] not in COPIES])) for ss in parts.values())
    cpu = [s["end_ns"] - s["start_ns"] for s in spans if s["kind"] in ("prep_msm", "cpu_msm_b_g2", "finalize") and s.get("device") is not None]
    gw = cfg.get("gw") or 1
    sf = st.mean(w) * P / pw / 1e9
    gf = dev_u * P / 1e9
    cf = sum(cpu) / len(parts) * P / gw / 1e9 if cpu else 0
    b = max((sf, "synthesis"), (gf, "gpu"), (cf, "cpu_prep/finalize"))[1]
    ends = sorted(s["end_ns"] for s in syn)
    gaps = [b_ - a for a, b_ in zip(ends, ends[1:])]
    burst = sum(1 for g in gaps if g < 20e6) / len(gaps)
    qw = st.mean(s["end_ns"] - s["start_ns"] for s in spans if s["kind"] == "gpu_queue") / 1e6
    print(f"{(label or path)[:34]:34s} {pw:3d} {st.mean(w)/1e6:7.0f} {st.mean(wave)/1e6:6.0f} {st.mean(later)/1e6:6.0f} {st.pstdev(w)/st.mean(w):5.2f} {conc:5.2f} {burst:5.2f} "
          f"{ker_u/1e6:6.1f} {dev_u/1e6:6.1f} {qw:6.0f} {sf:6.3f} {gf:6.3f} {sf/gf:5.2f} {nested_share(syn):5.2f} {slot_share(syn):5.2f} {worker_share(spans):5.2f} {b}")


def nested_share(syn):
    """Of the syntheses with a later-started one beside them (started > 5 ms after), the share
    that ended within 3 ms of such a one's end: rayon's nesting (an older synthesis cannot
    return before the newer one a thread of it took on has)."""
    cand = held = 0
    for s in syn:
        later = [o for o in syn if s["start_ns"] + 5e6 < o["start_ns"] < s["end_ns"]]
        if later:
            cand += 1
            held += any(abs(o["end_ns"] - s["end_ns"]) <= 3e6 for o in later)
    return held / cand if cand else float("nan")


def slot_share(syn):
    """Share of the permits' time spent synthesising between the first synthesis end and the
    last synthesis start (the rest: finished, waiting to send, or idle)."""
    a = min(s["end_ns"] for s in syn)
    b = max(s["start_ns"] for s in syn)
    slots = {s.get("worker") for s in syn}
    busy = sum(max(0, min(s["end_ns"], b) - max(s["start_ns"], a)) for s in syn)
    return busy / (len(slots) * (b - a)) if b > a else float("nan")


def worker_share(spans):
    """Share of the GPU workers' time inside a prove call (`gpu` spans) over the steady window:
    from the start of the fifth of the calls in start order to the end of the last fifth's
    (ramp and tail left out). Below 1: the workers waited for partitions."""
    calls = sorted((s["start_ns"], s["end_ns"], (s.get("device"), s.get("worker"))) for s in spans if s["kind"] == "gpu")
    if len(calls) < 5:
        return float("nan")
    t0, t1 = calls[len(calls) // 5][0], calls[-(len(calls) // 5)][1]
    workers = {c[2] for c in calls}
    busy = sum(max(0, min(b, t1) - max(a, t0)) for a, b, _ in calls)
    return busy / (len(workers) * (t1 - t0)) if t1 > t0 else float("nan")


def table(paths):
    print(f"{'run':34s} {'pw':>3s} {'syn ms':>7s} {'wave':>6s} {'later':>6s} {'cv':>5s} {'conc':>5s} {'burst':>5s} {'kern':>6s} {'devwk':>6s} {'queue':>6s} {'synF':>6s} {'gpuF':>6s} {'s/g':>5s} {'nest':>5s} {'slot':>5s} {'gpuwk':>5s} floor-verdict")
    for p in paths:
        row(p)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--table"]:
        table(sys.argv[2:])
    else:
        for p in sys.argv[1:]:
            analyse(p)
