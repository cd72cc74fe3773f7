//! The sweep's outputs: the recommendation per RAM budget is consistent (each pick fits its
//! budget, bigger budgets never pick slower points, the largest picks the global best), the
//! Markdown table has one row per point, and the Parquet table and charts are written.

use std::path::PathBuf;

use simulator::sweep::{self, Vary, RAM_BUDGETS_GIB};
use simulator::Config;

fn sweep_rows() -> (Vec<Vary>, Vec<sweep::Row>) {
    let base = Config::load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/phase8.toml")).unwrap();
    let axes: Vec<Vary> = ["pw=2..12:2", "gw=1,2", "lock=whole,kernels"].iter().map(|s| s.parse().unwrap()).collect();
    let points = sweep::expand(&base, &axes).unwrap();
    assert_eq!(points.len(), 6 * 2 * 2);
    let ticks = std::sync::atomic::AtomicUsize::new(0);
    let rows = sweep::run_points(&points, &|| {
        ticks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    assert_eq!(ticks.into_inner(), points.len());
    (axes, rows)
}

#[test]
fn recommendations_are_consistent() {
    let (axes, rows) = sweep_rows();
    let recs = sweep::recommend(&rows);
    assert_eq!(recs.len(), RAM_BUDGETS_GIB.len());
    let mut last: Option<f64> = None;
    for r in &recs {
        if let Some(i) = r.row {
            let x = &rows[i].result;
            assert!(x.feasible && x.peak_ram_gib <= r.ram_budget_gib);
            if let Some(prev) = last {
                assert!(x.total_s_per_proof <= prev * 1.01);
            }
            last = Some(x.total_s_per_proof);
        } else {
            assert!(last.is_none(), "a bigger budget found nothing after a smaller one did");
        }
    }
    let all: Vec<_> = rows.iter().map(|r| r.result.clone()).collect();
    assert_eq!(recs.last().unwrap().row, sweep::best_index(&all));
    assert!(recs.iter().any(|r| r.row.is_some()));
    // A small budget forces fewer workers than the overall best.
    let first_fit = recs.iter().find(|r| r.row.is_some()).unwrap();
    let best = &rows[recs.last().unwrap().row.unwrap()];
    assert!(rows[first_fit.row.unwrap()].result.peak_ram_gib <= best.result.peak_ram_gib);
    let md = sweep::markdown(&rows, &axes);
    assert_eq!(md.lines().filter(|l| l.starts_with("| ") && l.contains(" yes |")).count(), rows.len());
    assert!(md.contains("Recommendation per RAM budget"));
}

#[cfg(feature = "analysis")]
#[test]
fn parquet_and_charts_are_written() {
    use polars::prelude::*;
    let (axes, rows) = sweep_rows();
    let dir = std::env::temp_dir().join(format!("simulator-sweep-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pq = dir.join("sweep.parquet");
    sweep::outputs::write_parquet(&rows, &axes, &pq).unwrap();
    let df = ParquetReader::new(std::fs::File::open(&pq).unwrap()).finish().unwrap();
    assert_eq!(df.height(), rows.len());
    for col in ["pw", "gw", "lock", "total_s_per_proof", "peak_ram_gib", "binding"] {
        assert!(df.column(col).is_ok(), "{col}");
    }
    // Issue 17: numbers are numbers (pw and gw were strings), names stay strings.
    assert_eq!(df.column("pw").unwrap().dtype(), &DataType::Int64);
    assert_eq!(df.column("gw").unwrap().dtype(), &DataType::Int64);
    assert_eq!(df.column("lock").unwrap().dtype(), &DataType::String);
    assert_eq!(df.column("total_s_per_proof").unwrap().dtype(), &DataType::Float64);
    let charts = sweep::outputs::write_charts(&rows, &axes, &dir).unwrap();
    assert_eq!(charts.len(), 3);
    for c in &charts {
        let svg = std::fs::read_to_string(c).unwrap();
        assert!(svg.contains("<svg") && svg.contains("gw=2"), "{}", c.display());
        // pw 2..12 is one decade: a linear axis, and nothing says otherwise.
        assert!(!svg.contains("(log scale)"), "{}", c.display());
    }
    // The recommended point (the best total s/proof) is called out with its configuration,
    // on the s/proof and the peak-RAM charts.
    let all: Vec<_> = rows.iter().map(|r| r.result.clone()).collect();
    let best = &rows[sweep::best_index(&all).unwrap()];
    let cfg: Vec<String> = best.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let callout = format!("recommended: {} — {:.1} s/proof", cfg.join(" "), best.result.total_s_per_proof);
    assert!(read("s_per_proof.svg").contains(&callout), "{callout}");
    assert!(read("peak_ram.svg").contains(&format!("recommended: {} — {:.1} GiB", cfg.join(" "), best.result.peak_ram_gib)));
    // No budget varied: the recommendation's budgets up to the first above every peak.
    let ram = read("peak_ram.svg");
    let peak = rows.iter().map(|r| r.result.peak_ram_gib).fold(0.0, f64::max);
    let above = RAM_BUDGETS_GIB.iter().copied().find(|&b| b >= peak).unwrap();
    assert!(ram.contains(&format!("RAM budget {above:.0} GiB")), "{above}");
    assert!(ram.contains("RAM budget 128 GiB"));
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 17: a sweep that varies the RAM budget draws each budget as a line on the peak-RAM
/// chart; a wide x axis (pw over two decades) is drawn logarithmic and labelled so.
#[cfg(feature = "analysis")]
#[test]
fn a_varied_budget_is_drawn_and_a_log_axis_says_so() {
    let base = Config::load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/phase8.toml")).unwrap();
    let axes: Vec<Vary> = ["pw=1,4,16,128", "total_budget=160GiB,400GiB"].iter().map(|s| s.parse().unwrap()).collect();
    let rows = sweep::run_points(&sweep::expand(&base, &axes).unwrap(), &|| {});
    let lines = sweep::outputs::ram_lines(&rows, &axes);
    let ys: Vec<f64> = lines.iter().map(|l| l.y).collect();
    assert_eq!(ys, [160.0, 400.0]);
    let dir = std::env::temp_dir().join(format!("simulator-sweep-budget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    sweep::outputs::write_charts(&rows, &axes, &dir).unwrap();
    let ram = std::fs::read_to_string(dir.join("peak_ram.svg")).unwrap();
    assert!(ram.contains("RAM budget 160 GiB (total_budget)") && ram.contains("RAM budget 400 GiB (total_budget)"), "{ram}");
    assert!(ram.contains("pw (log scale)"));
    assert!(std::fs::read_to_string(dir.join("s_per_proof.svg")).unwrap().contains("pw (log scale)"));
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 17: an infeasible row carries nulls and its failure, never the time it failed at.
#[cfg(feature = "analysis")]
#[test]
fn infeasible_rows_are_nulls_with_their_failure() {
    let (axes, mut rows) = sweep_rows();
    rows[0].result.feasible = false;
    rows[0].result.failure = Some(simulator::report::Failure { kind: "vram_oom".into(), t_s: 38.0, detail: "a hand-made failure".into() });
    rows[0].result.steady_state_s_per_proof = 38.0;
    let df = sweep::outputs::frame(&rows, &axes).unwrap();
    let steady = df.column("steady_state_s_per_proof").unwrap().f64().unwrap().clone();
    assert_eq!(steady.get(0), None, "no number for a failed row");
    assert!(steady.get(1).is_some(), "a feasible row keeps its figure");
    assert_eq!(df.column("binding").unwrap().str().unwrap().get(0), None);
    assert_eq!(df.column("failure").unwrap().str().unwrap().get(0), Some("vram_oom"));
    assert_eq!(df.column("feasible").unwrap().bool().unwrap().get(0), Some(false));
    // sweep.json says the same: no figures (a null result), the failure at the row.
    rows[2].result.feasible = false;
    let json = serde_json::to_value(sweep::json_rows(&rows)).unwrap();
    assert_eq!((&json[0]["feasible"], &json[0]["failure"]["kind"], &json[0]["failure"]["t_s"]), (&false.into(), &"vram_oom".into(), &38.0.into()));
    assert!(json[0]["result"].is_null(), "{}", json[0]);
    assert!(json[1]["failure"].is_null() && json[1]["result"]["steady_state_s_per_proof"].is_number(), "{}", json[1]);
    // Infeasible without a failure (proofs left): `incomplete`, in the JSON and the Parquet.
    assert_eq!(json[2]["failure"]["kind"], "incomplete");
    assert!(json[2]["result"].is_null());
    let df = sweep::outputs::frame(&rows, &axes).unwrap();
    assert_eq!(df.column("failure").unwrap().str().unwrap().get(2), Some("incomplete"));
    // The Markdown row has no figure either.
    let md = sweep::markdown(&rows, &axes);
    let line = md.lines().find(|l| l.contains("vram_oom at 38 s")).unwrap();
    assert!(!line.contains("38.00") && line.matches('—').count() >= 8, "{line}");
}
