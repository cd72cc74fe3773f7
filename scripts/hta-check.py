#!/usr/bin/env python3
"""Run Meta's Holistic Trace Analysis (HTA, PyPI `HolisticTraceAnalysis`) on a trace.json that
`proofscope analyze` wrote: its idle-time and temporal breakdowns must run and find GPU work.
Exit 0 when both ran on a non-empty kernel set, 1 otherwise. CI runs it through
scripts/ci-hta.sh (its own venv: HTA pulls jupyterlab, plotly, pandas, networkx, pydot and
pytest). Usage:
    pip install HolisticTraceAnalysis==0.5.0
    python3 scripts/hta-check.py out/run/trace.json[.gz]"""
import gzip
import shutil
import sys
import tempfile
from pathlib import Path


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src = Path(sys.argv[1])
    try:
        from hta.trace_analysis import TraceAnalysis
    except ImportError as e:
        print(f"hta-check: HTA is not installed ({e}); pip install HolisticTraceAnalysis==0.5.0", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as d:
        # HTA reads a folder of per-rank traces.
        opener = gzip.open if src.suffix == ".gz" else open
        with opener(src, "rb") as f, open(Path(d) / "rank-0.json", "wb") as g:
            shutil.copyfileobj(f, g)
        try:
            a = TraceAnalysis(trace_dir=d)
            idle = a.get_idle_time_breakdown(visualize=False)[0]
            temporal = a.get_temporal_breakdown(visualize=False)
        except Exception as e:  # HTA raises on a trace without GPU work
            print(f"hta-check: {src}: HTA's breakdowns failed ({type(e).__name__}: {e}); a trace.json older than the `stream` argument has none", file=sys.stderr)
            return 1
    if idle.empty or temporal.empty:
        print("hta-check: HTA found no GPU work in the trace", file=sys.stderr)
        return 1
    row = temporal.iloc[0]
    print(f"hta-check: {src}: {idle['stream'].nunique()} stream(s); idle {row['idle_time(us)'] / 1e6:.1f} s, "
          f"compute {row['compute_time(us)'] / 1e6:.1f} s of a {row['kernel_time(us)'] / 1e6:.1f} s kernel window "
          f"({row['compute_time_pctg']:.2f} % compute)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
