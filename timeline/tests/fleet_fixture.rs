//! The fleet fixture (timeline/tests/data/fleet/, README.md there): four hosts' logs as
//! providers keep them — gzip, journald's prefix with a daemon restart, `journalctl -o
//! json` with the daemon's JSON log mixed in, Docker json-file; mixed proof types — against
//! answers computed by hand.

use std::path::PathBuf;

use timeline::analysis::fleet::{self, FleetHost};
use timeline::analysis::gaps::GapCause;
use timeline::analysis::{summarize, AnalyzeOptions, Summary};
use timeline::read::read_path;

fn host(file: &str) -> Summary {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/fleet").join(file);
    let run = read_path(&p, None).unwrap();
    assert_eq!(run.diagnostics.lines_rejected, 0, "{file}: {:?}", run.diagnostics.warnings);
    assert!(run.diagnostics.problems.is_empty(), "{file}: {:?}", run.diagnostics.problems);
    summarize(&run, &AnalyzeOptions::default())
}

fn eq(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

/// (type, proofs, steady s/proof, total s/proof) per proof type.
fn types(s: &Summary) -> Vec<(String, u64, Option<f64>, Option<f64>)> {
    s.proof_types.iter().map(|t| (t.proof_type.clone(), t.proofs_completed, t.steady_state_s_per_proof, t.total_s_per_proof)).collect()
}

fn idle(s: &Summary, c: GapCause) -> f64 {
    s.idle_gap_totals.total_ms(c)
}

#[test]
fn each_host_matches_the_hand_computed_answers() {
    let a = host("host-a.log.gz");
    let t = types(&a);
    assert_eq!(t.len(), 2, "{t:?}");
    assert_eq!((t[0].0.as_str(), t[0].1), ("porep-c2", 2));
    assert!(eq(t[0].2, 1.5) && eq(t[0].3, 1.75), "{t:?}");
    assert_eq!((t[1].0.as_str(), t[1].1, t[1].2), ("winning-post", 1, None));
    assert!(eq(t[1].3, 0.3), "{t:?}");
    assert_eq!(a.proof_types[0].inferred_from, "partition_count");
    assert_eq!(a.proof_types[1].inferred_from, "kind");
    assert!(eq(a.steady_state_s_per_proof, 1.5), "the top level is the PoRep's");
    assert_eq!((idle(&a, GapCause::ColdStart), idle(&a, GapCause::SynthesisStarved)), (1000.0, 600.0));
    let g = a.idle_gaps.iter().find(|g| g.start_ms == 3500.0).unwrap();
    assert_eq!((g.before_type.as_deref(), g.after_type.as_deref()), (Some("porep-c2"), Some("winning-post")));

    let b = host("host-b.log");
    assert_eq!(b.meta.host.as_deref(), Some("host-b"));
    let d = &b.diagnostics.daemon_runs;
    assert_eq!(d.len(), 2);
    assert_eq!((d[0].placed_by.as_str(), d[1].start_ms), ("wall_clock", 20000.0));
    let t = types(&b);
    assert_eq!(t.len(), 1);
    assert_eq!((t[0].0.as_str(), t[0].1), ("porep-c2", 2));
    assert!(eq(t[0].2, 10.0) && eq(t[0].3, 6.0), "{t:?}");
    assert_eq!(b.daemon_runs.len(), 2);
    for r in &b.daemon_runs {
        assert_eq!(r.proof_types[0].proofs_completed, 1);
        assert!(eq(r.proof_types[0].total_s_per_proof, 2.0), "{r:?}");
    }
    assert_eq!((idle(&b, GapCause::ColdStart), idle(&b, GapCause::SynthesisStarved)), (1000.0, 9000.0));
    assert!(b.jobs.iter().all(|j| !j.job.contains("@run")));

    let c = host("host-c.jsonl");
    assert_eq!(c.meta.host.as_deref(), Some("host-c"));
    let t = types(&c);
    assert_eq!((t[0].0.as_str(), t[0].1), ("snap-deals", 2));
    assert!(eq(t[0].2, 1.6) && eq(t[0].3, 2.1), "{t:?}");
    assert_eq!((idle(&c, GapCause::ColdStart), idle(&c, GapCause::SynthesisStarved)), (1000.0, 0.0));
    assert!(c.diagnostics.lines_ignored > 0, "the daemon's JSON log lines are skipped and counted");

    let dd = host("host-d.log");
    let t = types(&dd);
    assert_eq!(t.len(), 2);
    assert_eq!((t[0].0.as_str(), t[0].1), ("porep-c2", 1));
    assert!(eq(t[0].3, 2.0), "{t:?}");
    assert_eq!((t[1].0.as_str(), t[1].1), ("window-post", 1));
    assert!(eq(t[1].3, 0.7), "{t:?}");
    assert_eq!((idle(&dd, GapCause::ColdStart), idle(&dd, GapCause::SynthesisStarved)), (1000.0, 300.0));
}

#[test]
fn the_fleet_table_matches_the_hand_computed_answers() {
    let rows: Vec<FleetHost> = [("a", "host-a.log.gz"), ("b", "host-b.log"), ("c", "host-c.jsonl"), ("d", "host-d.log")]
        .iter()
        .map(|(l, f)| FleetHost::of(l, l, &host(f)))
        .collect();
    let f = fleet::build(rows, &AnalyzeOptions::default());
    let t: Vec<(&str, u64, u32)> = f.types.iter().map(|t| (t.proof_type.as_str(), t.proofs_completed, t.hosts)).collect();
    assert_eq!(t, [("porep-c2", 5, 3), ("snap-deals", 2, 1), ("window-post", 1, 1), ("winning-post", 1, 1)]);
    assert!(eq(f.types[0].median_s_per_proof, 2.0));
    assert_eq!(f.types[0].best_host.as_deref(), Some("a"));
    let w = f.worst_host.as_ref().unwrap();
    assert_eq!((w.label.as_str(), w.proof_type.as_deref()), ("b", Some("porep-c2")));
    assert!(eq(w.vs_median, 5.0));
    assert!(w.why.contains("2 daemon runs") && w.why.contains("synthesis_starved"), "{}", w.why);
    assert_eq!(f.idle_ms_by_cause["cold_start"], 4000.0);
    assert_eq!(f.idle_ms_by_cause["synthesis_starved"], 9900.0);
    assert_eq!(f.hosts[1].daemon_runs, 2);
}
