"""Write the notebooks of this folder from the cell sources below.

The .ipynb files are generated (without outputs) so that their code is reviewable as
plain Python here and never carries stale outputs: edit this file, then run
`python3 notebooks/make_notebooks.py`. `scripts/ci-notebooks.sh` executes the results.
Only the standard library is needed.
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Shared first code cell: find the repository root whether the kernel runs in
# notebooks/ (nbclient, Jupyter) or at the root.
SETUP = '''\
import json
import os
from pathlib import Path

import matplotlib.pyplot as plt
import polars as pl


def repo_root() -> Path:
    here = Path.cwd().resolve()
    for d in [here, *here.parents]:
        if (d / "reports").is_dir() and (d / "Cargo.toml").is_file():
            return d
    raise FileNotFoundError(f"no repository root (a folder with reports/ and Cargo.toml) at or above {here}")


ROOT = repo_root()
REPORTS = ROOT / "reports"
print("reports:", REPORTS)'''

WATERFALL = [
    ("md", """\
# Waterfall and idle gaps of a run

Loads the tables that `proofscope analyze` wrote into a report folder (`spans.parquet`,
`summary.json`), redraws the waterfall from the raw spans, recomputes the GPU utilisation
the analyzer reported (union of `gpu` spans per device over first start → last end) and
plots the idle-gap histogram by cause.

The report defaults to `reports/demo-cpu` (a real proof run) and falls back to
`reports/sample-cuzk`; set `PROOFSCOPE_REPORT=<folder under reports/>` to pick another
(e.g. a campaign run's analysis)."""),
    ("code", SETUP),
    ("code", '''\
choices = [os.environ.get("PROOFSCOPE_REPORT"), "demo-cpu", "sample-cuzk"]
report = None
for c in choices:
    if c and (REPORTS / c / "spans.parquet").is_file() and (REPORTS / c / "summary.json").is_file():
        report = REPORTS / c
        break
if report is None:
    raise FileNotFoundError(f"none of {choices} under {REPORTS} has spans.parquet and summary.json: run scripts/make-reports.sh")
spans = pl.read_parquet(report / "spans.parquet")
summary = json.loads((report / "summary.json").read_text())
print(report.relative_to(ROOT), "-", spans.height, "spans,", summary["proofs_completed"], "proofs")
print("verdict:", summary["verdict"]["headline"])'''),
    ("md", "Span durations per kind (open spans excluded):"),
    ("code", '''\
per_kind = (
    spans.filter(pl.col("duration_ns").is_not_null())
    .group_by("kind")
    .agg(
        n=pl.len(),
        mean_ms=pl.col("duration_ns").mean() / 1e6,
        p50_ms=pl.col("duration_ns").median() / 1e6,
        p95_ms=pl.col("duration_ns").quantile(0.95) / 1e6,
        total_s=pl.col("duration_ns").sum() / 1e9,
    )
    .sort("total_s", descending=True)
)
per_kind'''),
    ("md", """\
## GPU utilisation, recomputed

Sweep-line union of the closed `gpu` spans of each device over [first start, last end];
it must equal the analyzer's `utilization.devices[].gpu_utilization`."""),
    ("code", '''\
def union_ns(intervals):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


gpu = spans.filter((pl.col("kind") == "gpu") & pl.col("end_ns").is_not_null()).with_columns(pl.col("device").fill_null(0))
mine = {}
for (dev,), g in gpu.group_by(["device"]):
    iv = list(zip(g["start_ns"].to_list(), g["end_ns"].to_list()))
    window = max(e for _, e in iv) - min(s for s, _ in iv)
    mine[dev] = union_ns(iv) / window
theirs = {d["device"]: d["gpu_utilization"] for d in summary["utilization"]["devices"] if d["gpu_utilization"] is not None}
for dev in sorted(theirs):
    print(f"gpu {dev}: notebook {100 * mine[dev]:.3f} %  analyzer {100 * theirs[dev]:.3f} %")
    assert abs(mine[dev] - theirs[dev]) < 1e-6, (dev, mine[dev], theirs[dev])'''),
    ("md", """\
## Waterfall

One row per synthesis lane (spans packed greedily onto the fewest lanes, as the analyzer
does for cuzk logs that do not name workers), one per GPU worker (`gpu` calls), and one
per device for the device work (kernels and copies), which the lock serialises."""),
    ("code", '''\
DEVICE_WORK = {"ntt", "msm_h", "msm_l", "msm_a", "msm_b_g1", "batch_add", "tail_msm", "h2d", "d2h"}
closed = spans.filter(pl.col("end_ns").is_not_null()).with_columns(pl.col("device").fill_null(0), pl.col("worker").fill_null(0))
t0 = spans["start_ns"].min()


def pack(df):
    """Greedy lanes: each span goes to the first lane free at its start."""
    ends, lanes = [], []
    for s, e in zip(df["start_ns"].to_list(), df["end_ns"].to_list()):
        for i, last in enumerate(ends):
            if last <= s:
                ends[i] = e
                lanes.append(i)
                break
        else:
            ends.append(e)
            lanes.append(len(ends) - 1)
    return lanes


rows = []  # (label, [(start_s, width_s)], colour)
synth = closed.filter(pl.col("kind") == "synthesis").sort("start_ns")
lane_of = pack(synth)
for lane in range(max(lane_of, default=-1) + 1):
    bars = [((s - t0) / 1e9, (e - s) / 1e9) for (s, e), l in zip(zip(synth["start_ns"], synth["end_ns"]), lane_of) if l == lane]
    rows.append((f"synth {lane}", bars, "tab:green"))
for (dev, worker), g in sorted(closed.filter(pl.col("kind") == "gpu").group_by(["device", "worker"]), key=lambda x: x[0]):
    rows.append((f"gpu{dev} w{worker}", [((s - t0) / 1e9, (e - s) / 1e9) for s, e in zip(g["start_ns"], g["end_ns"])], "tab:blue"))
for (dev,), g in sorted(closed.filter(pl.col("kind").is_in(list(DEVICE_WORK))).group_by(["device"]), key=lambda x: x[0]):
    rows.append((f"gpu{dev} device work", [((s - t0) / 1e9, (e - s) / 1e9) for s, e in zip(g["start_ns"], g["end_ns"])], "tab:red"))

fig, ax = plt.subplots(figsize=(14, 0.35 * len(rows) + 1.5))
for i, (label, bars, colour) in enumerate(rows):
    ax.broken_barh(bars, (i - 0.4, 0.8), facecolors=colour, edgecolor="white", linewidth=0.3)
ax.set_yticks(range(len(rows)), [r[0] for r in rows])
ax.invert_yaxis()
ax.set_xlabel("time since the run epoch (s)")
ax.set_title(f"{report.name}: {summary['verdict']['headline'][:110]}")
plt.tight_layout()
plt.show()
assert sum(len(b) for _, b, _ in rows) > 0, "nothing to draw"'''),
    ("md", """\
## Idle gaps

`summary.json`'s `idle_gaps` (gaps at least `min_gap_ms` long; the leading gap is the
wait for the first partition), as a histogram of durations on log-spaced bins, stacked by
the cause the analyzer attributed."""),
    ("code", '''\
gaps = pl.DataFrame(summary["idle_gaps"], infer_schema_length=None) if summary["idle_gaps"] else pl.DataFrame({"cause": [], "duration_ms": [], "leading": []})
if gaps.height:
    by_cause = gaps.group_by("cause").agg(n=pl.len(), total_ms=pl.col("duration_ms").sum()).sort("total_ms", descending=True)
    print(by_cause)
    import numpy as np

    lo, hi = max(gaps["duration_ms"].min(), 1e-3), gaps["duration_ms"].max()
    bins = np.logspace(np.log10(lo) - 0.05, np.log10(hi) + 0.05, 25)
    causes = by_cause["cause"].to_list()
    data = [gaps.filter(pl.col("cause") == c)["duration_ms"].to_list() for c in causes]
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.hist(data, bins=bins, stacked=True, label=[f"{c} ({len(d)})" for c, d in zip(causes, data)])
    ax.set_xscale("log")
    ax.set_xlabel("idle gap (ms)")
    ax.set_ylabel("gaps")
    ax.set_title(f"{report.name}: idle gaps by cause")
    ax.legend()
    plt.tight_layout()
    plt.show()
    # The analyzer's per-cause totals count the same listed gaps.
    totals = {t["cause"]: t for t in summary["idle_gap_totals"]["by_cause"]}
    for row in by_cause.iter_rows(named=True):
        assert totals[row["cause"]]["count"] == row["n"], (row, totals.get(row["cause"]))
else:
    print("no idle gap above the threshold in this run")'''),
]

SWEEP = [
    ("md", """\
# Sweep curves

Loads `sweep.parquet` written by `proofscope sweep` (default `reports/sweep-phase8`; set
`PROOFSCOPE_SWEEP=<folder under reports/>` for another) and draws s/proof and peak RAM
against pw, one curve per gw, marking the fastest feasible point."""),
    ("code", SETUP),
    ("code", '''\
folder = REPORTS / os.environ.get("PROOFSCOPE_SWEEP", "sweep-phase8")
sweep = pl.read_parquet(folder / "sweep.parquet")
axes = [c for c in ("pw", "gw") if c in sweep.columns]
assert axes == ["pw", "gw"], f"this notebook plots pw x gw sweeps; {folder} varies {sweep.columns[:3]}"
sweep = sweep.with_columns(pl.col("pw").cast(pl.Int64), pl.col("gw").cast(pl.Int64)).sort(["gw", "pw"])
sweep.select("pw", "gw", "feasible", "steady_state_s_per_proof", "total_s_per_proof", "peak_ram_gib", "binding")'''),
    ("md", "The Parquet table and `sweep.json` are two views of the same results:"),
    ("code", '''\
points = json.loads((folder / "sweep.json").read_text())
as_json = {(int(dict(p["params"])["pw"]), int(dict(p["params"])["gw"])): p["result"] for p in points}
assert len(as_json) == sweep.height
# Since issue 17 a row says `feasible` itself, and an infeasible row has no figures (null result).
for p in points:
    if "feasible" in p:
        assert (p["result"] is None) == (not p["feasible"]) and (p["failure"] is None) == p["feasible"], p
for r in sweep.iter_rows(named=True):
    j = as_json[(r["pw"], r["gw"])]
    if r["steady_state_s_per_proof"] is not None:
        assert abs(j["steady_state_s_per_proof"] - r["steady_state_s_per_proof"]) < 1e-9, (r, j["steady_state_s_per_proof"])
print(len(as_json), "points agree")'''),
    ("code", '''\
feasible = sweep.filter(pl.col("feasible"))
best = feasible.sort(["total_s_per_proof", "peak_ram_gib"]).row(0, named=True)
print(f"fastest feasible: pw={best['pw']} gw={best['gw']}: {best['total_s_per_proof']:.2f} s/proof total, "
      f"{best['steady_state_s_per_proof']:.2f} steady, peak RAM {best['peak_ram_gib']:.0f} GiB")

fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 4.5))
for (gw,), g in sorted(feasible.group_by(["gw"]), key=lambda x: x[0]):
    a1.plot(g["pw"], g["total_s_per_proof"], marker="o", label=f"gw={gw} total")
    a1.plot(g["pw"], g["steady_state_s_per_proof"], marker=".", linestyle="--", label=f"gw={gw} steady")
    a2.plot(g["pw"], g["peak_ram_gib"], marker="o", label=f"gw={gw}")
a1.scatter([best["pw"]], [best["total_s_per_proof"]], s=160, facecolors="none", edgecolors="k", label="fastest")
a1.set_xlabel("pw (partition workers)")
a1.set_ylabel("s/proof")
a1.set_title("s/proof vs pw")
a1.legend()
a2.set_xlabel("pw (partition workers)")
a2.set_ylabel("peak RAM (GiB)")
a2.set_title("peak RAM vs pw")
a2.legend()
plt.tight_layout()
plt.show()'''),
]

PARITY = [
    ("md", """\
# Parity: predicted vs measured

Every `parity.json` under `reports/` (written by `proofscope simulate --compare-to` and
`proofscope predict`) as a parity plot: predicted against measured on log axes, the
y = x line and a ±5% band. When a campaign report exists (`reports/campaign-*/campaign.json`,
from `scripts/campaign-analyze.sh`), its per-configuration predictions get their own plot
and the MAPE is recomputed here."""),
    ("code", SETUP),
    ("code", '''\
files = sorted(p for p in REPORTS.rglob("parity.json") if "gpu" not in p.relative_to(REPORTS).parts[:1])
assert files, "no parity.json under reports/: run scripts/make-reports.sh"
frames = []
for f in files:
    p = json.loads(f.read_text())
    df = pl.DataFrame(p["metrics"]).with_columns(pl.lit(str(f.parent.relative_to(REPORTS))).alias("report"))
    # The stored error is (predicted - measured) / measured.
    recomputed = (df["predicted"] - df["measured"]) / df["measured"] * 100
    assert ((recomputed - df["error_pct"]).abs() < 1e-9).all(), f
    assert p["within_5pct"] == int((df["error_pct"].abs() <= 5).sum()), f
    # Older files have no stable `key` per metric: the columns every version has.
    frames.append(df.select("report", "metric", "unit", "measured", "predicted", "error_pct"))
parity = pl.concat(frames)
parity.select("report", "metric", "measured", "predicted", "error_pct")'''),
    ("code", '''\
def parity_plot(ax, measured, predicted, labels, title):
    lo = min(min(measured), min(predicted)) * 0.7
    hi = max(max(measured), max(predicted)) * 1.4
    xs = [lo, hi]
    ax.fill_between(xs, [x * 0.95 for x in xs], [x * 1.05 for x in xs], color="tab:green", alpha=0.2, label="±5 %")
    ax.plot(xs, xs, color="k", linewidth=0.8, label="y = x")
    ax.scatter(measured, predicted, zorder=3)
    for x, y, t in zip(measured, predicted, labels):
        ax.annotate(t, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured")
    ax.set_ylabel("predicted")
    ax.set_title(title)
    ax.legend(loc="upper left")


reports = parity["report"].unique(maintain_order=True).to_list()
fig, axs = plt.subplots(1, len(reports), figsize=(6 * len(reports), 5.5), squeeze=False)
for ax, r in zip(axs[0], reports):
    d = parity.filter((pl.col("report") == r) & (pl.col("measured") > 0) & (pl.col("predicted") > 0))
    parity_plot(ax, d["measured"].to_list(), d["predicted"].to_list(), [f"{m} ({e:+.1f}%)" for m, e in zip(d["metric"], d["error_pct"])], r)
plt.tight_layout()
plt.show()'''),
    ("md", """\
## Campaign (when present)

Per configuration: measured and predicted steady-state s/proof, from the campaign table.
MAPE = mean of |predicted − measured| / measured over the predicted configurations (the
calibration run excluded)."""),
    ("code", '''\
campaigns = sorted(REPORTS.glob("campaign-*/campaign.json"))
if not campaigns:
    print("no campaign report yet (scripts/campaign.sh on a GPU machine, then scripts/campaign-analyze.sh)")
for f in campaigns:
    c = json.loads(f.read_text())
    rows = pl.DataFrame(c["configs"], infer_schema_length=None)
    print(f.parent.name, "- calibrated on", c["calibrated_on"])
    print(rows.select("config", "measured_steady_s", "predicted_steady_s", "error_pct", "calibration"))
    pred = rows.filter(~pl.col("calibration") & pl.col("measured_steady_s").is_not_null() & pl.col("predicted_steady_s").is_not_null())
    if pred.height:
        mape = float(((pred["predicted_steady_s"] - pred["measured_steady_s"]).abs() / pred["measured_steady_s"]).mean() * 100)
        print(f"MAPE {mape:.2f} % (campaign.json says {c['mape_pct']:.2f} %)")
        assert abs(mape - c["mape_pct"]) < 1e-6
        fig, ax = plt.subplots(figsize=(6.5, 6))
        parity_plot(ax, pred["measured_steady_s"].to_list(), pred["predicted_steady_s"].to_list(), pred["config"].to_list(), f"{f.parent.name}: steady s/proof, MAPE {mape:.1f} %")
        plt.tight_layout()
        plt.show()'''),
]

STACK = [
    ("md", """\
# Stacking runs: one table for many runs and hosts

Every table `proofscope analyze` writes starts with the key columns `run_id`, `label`, `host`
and `proof_type` (docs/reference/summary-json.md#parquet-tables), so the tables of several
runs stack with a plain concat. This notebook analyses the four-host fleet fixture
(`timeline/tests/data/fleet/`: mixed proof types, wrapped lines, a daemon restart) into a
temporary folder, stacks the hosts' `spans.parquet` with polars, computes s/proof per run and
proof type from the raw spans, checks it against each host's `summary.json`, and runs the
DuckDB recipe of the docs on the same files.

The `proofscope` binary: `$PROOFSCOPE_BIN`, else the build under `$CARGO_TARGET_DIR` or
`target/` (debug, then release), else `proofscope` on the PATH."""),
    ("code", SETUP),
    ("code", '''\
import shutil
import subprocess
import tempfile


def find_proofscope() -> str:
    if os.environ.get("PROOFSCOPE_BIN"):
        return os.environ["PROOFSCOPE_BIN"]
    targets = [Path(os.environ["CARGO_TARGET_DIR"])] if os.environ.get("CARGO_TARGET_DIR") else []
    targets.append(ROOT / "target")
    for t in targets:
        for profile in ("debug", "release"):
            if (t / profile / "proofscope").is_file():
                return str(t / profile / "proofscope")
    found = shutil.which("proofscope")
    if found:
        return found
    raise FileNotFoundError("no proofscope binary: build it (cargo build) or set PROOFSCOPE_BIN")


PROOFSCOPE = find_proofscope()
WORK = Path(tempfile.mkdtemp(prefix="proofscope-stack-"))
fleet = ROOT / "timeline" / "tests" / "data" / "fleet"
done = subprocess.run([PROOFSCOPE, "analyze", str(fleet), "-o", str(WORK / "runs"), "--no-charts"], capture_output=True, text=True)
assert done.returncode == 0, done.stderr
print(done.stdout)
hosts = sorted(p.parent.name for p in (WORK / "runs").glob("*/spans.parquet"))
print("hosts:", hosts)'''),
    ("md", "The hosts' spans as one table (`diagonal_relaxed`: tables of another version, with a column more or less, stack too):"),
    ("code", '''\
spans = pl.concat([pl.read_parquet(p) for p in sorted((WORK / "runs").glob("*/spans.parquet"))], how="diagonal_relaxed")
assert spans.columns[:4] == ["run_id", "label", "host", "proof_type"], spans.columns[:4]
assert sorted(spans["label"].unique().to_list()) == hosts
assert spans["run_id"].n_unique() == len(hosts), "one run id per host"
assert spans.schema["gpu_ms"] == pl.Float64 and spans.schema["lane"] == pl.Int64
spans.group_by("label", "host", "proof_type").agg(spans=pl.len(), jobs=pl.col("job").n_unique()).sort("label", "proof_type")'''),
    ("md", """\
## s/proof per run and proof type

A job starts at its first synthesis and is done at its last GPU call's end. Total s/proof =
(last done − first start) ÷ proofs; steady state = (last done − first done) ÷ (proofs − 1).
These are the analyzer's definitions, so they must equal each host's `summary.json`
(`proof_types[]`)."""),
    ("code", '''\
jobs = (
    spans.filter(pl.col("job").is_not_null())
    .group_by("run_id", "label", "proof_type", "job")
    .agg(
        start_ns=pl.col("start_ns").filter(pl.col("kind") == "synthesis").min(),
        done_ns=pl.col("end_ns").filter(pl.col("kind") == "gpu").max(),
    )
    .filter(pl.col("done_ns").is_not_null())
)
per_run = (
    jobs.group_by("run_id", "label", "proof_type")
    .agg(
        proofs=pl.len(),
        total_s_per_proof=(pl.col("done_ns").max() - pl.col("start_ns").min()) / 1e9 / pl.len(),
        steady_s_per_proof=pl.when(pl.len() > 1).then((pl.col("done_ns").max() - pl.col("done_ns").min()) / 1e9 / (pl.len() - 1)),
    )
    .sort("label", "proof_type")
)
for r in per_run.iter_rows(named=True):
    summary = json.loads((WORK / "runs" / r["label"] / "summary.json").read_text())
    t = next(t for t in summary["proof_types"] if t["proof_type"] == r["proof_type"])
    assert t["proofs_completed"] == r["proofs"], (r, t["proofs_completed"])
    assert abs(t["total_s_per_proof"] - r["total_s_per_proof"]) < 1e-9, (r, t["total_s_per_proof"])
    if r["steady_s_per_proof"] is not None:
        assert abs(t["steady_state_s_per_proof"] - r["steady_s_per_proof"]) < 1e-9, (r, t["steady_state_s_per_proof"])
print(len(per_run), "(run, proof type) figures agree with summary.json")
per_run.select("label", "proof_type", "proofs", "total_s_per_proof", "steady_s_per_proof")'''),
    ("code", '''\
fig, ax = plt.subplots(figsize=(9, 4))
labels = [f"{l}\\n{t}" for l, t in zip(per_run["label"], per_run["proof_type"])]
ax.bar(labels, per_run["total_s_per_proof"], label="total", color="tab:blue")
steady = [v if v is not None else float("nan") for v in per_run["steady_s_per_proof"]]
ax.scatter(labels, steady, color="k", zorder=3, label="steady state")
ax.set_ylabel("s/proof")
ax.set_title("s/proof per host and proof type (the fleet fixture)")
ax.legend()
plt.tight_layout()
plt.show()'''),
    ("md", """\
## The DuckDB recipe

The SQL of docs/reference/summary-json.md ("Querying several runs"), read from the docs and
run as written over `runs/*/spans.parquet`: it must give the same figures."""),
    ("code", '''\
import re

import duckdb

doc = (ROOT / "docs" / "reference" / "summary-json.md").read_text()
section = doc[doc.index("### Querying several runs"):]
sql = re.search(r"```sql\\n(.*?)```", section, re.S).group(1)
first, second = [q.strip() for q in sql.split(";") if q.strip()]
os.chdir(WORK)
con = duckdb.connect()


def frame(query: str) -> pl.DataFrame:
    rel = con.sql(query)
    return pl.DataFrame(rel.fetchall(), schema=rel.columns, orient="row")


by_sql = frame(first)
print(by_sql)
joined = by_sql.join(per_run, on=["label", "proof_type"], how="full", coalesce=True)
assert joined.height == per_run.height == by_sql.height, joined
for r in joined.iter_rows(named=True):
    assert r["proofs"] == r["proofs_right"], r
    assert abs(r["total_s_per_proof"] - round(r["total_s_per_proof_right"], 3)) < 1e-9, r
    assert (r["steady_s_per_proof"] is None) == (r["steady_s_per_proof_right"] is None), r
idle = frame(second)
print(idle)
# host-b's 9 s of synthesis starvation across its daemon restart (fleet-README.md).
assert idle.filter((pl.col("label") == "host-b") & (pl.col("cause") == "synthesis_starved"))["idle_s"].to_list() == [9.0], idle
con.close()
os.chdir(ROOT)
shutil.rmtree(WORK)'''),
]


def notebook(cells, name):
    out = []
    for i, (kind, src) in enumerate(cells):
        lines = src.splitlines(keepends=True)
        cell = {"cell_type": "markdown" if kind == "md" else "code", "id": f"{name}-{i}", "metadata": {}, "source": lines}
        if kind == "code":
            cell["execution_count"] = None
            cell["outputs"] = []
        out.append(cell)
    return {
        "cells": out,
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (proofscope)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


if __name__ == "__main__":
    for name, cells in [("waterfall", WATERFALL), ("sweep", SWEEP), ("parity", PARITY), ("stack_runs", STACK)]:
        path = HERE / f"{name}.ipynb"
        path.write_text(json.dumps(notebook(cells, name), indent=1, ensure_ascii=False) + "\n")
        print("wrote", path)
