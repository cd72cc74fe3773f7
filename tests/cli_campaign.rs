//! `proofscope campaign predict|sets|score` through the built binary, where the working
//! directory matters: a registration made from one directory is scored from another.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{run, PHASE8};

const LIMIT: Duration = Duration::from_secs(120);

fn ok(cwd: &Path, args: &[&str]) -> String {
    let r = run(args, cwd, LIMIT);
    assert_eq!(r.code, Some(0), "proofscope {args:?} in {}: {}", cwd.display(), r.stderr);
    r.stdout
}

#[test]
fn a_registration_made_from_one_directory_is_scored_from_another() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    std::fs::create_dir_all(w.join("models")).unwrap();
    std::fs::write(w.join("models/phase8.toml"), PHASE8).unwrap();
    std::fs::write(w.join("grid.txt"), "cal 2 1 whole false 1\nb 4 1 kernels true 1\n").unwrap();
    // Registered from a/b/, the model outside the campaign folder and given relative to a/b/
    // (relative to the folder, ../../models would be outside the temp folder).
    let cwd = w.join("a/b");
    std::fs::create_dir_all(&cwd).unwrap();
    let common = ["--proofs", "3", "--partitions", "2", "--backend", "cpu"];
    let mut args = vec!["campaign", "predict", "../../grid.txt", "--model", "porep-like=../../models/phase8.toml", "--calibration", "cal", "--size", "2^27", "--replications", "3", "-o", "../../camp"];
    args.extend(common);
    ok(&cwd, &args);
    // The predicted run: the model's own simulation of it (`campaign sets` gives its
    // pipeline), its timeline started 1 s after its .start file.
    let mut sim = vec!["simulate".to_string(), "models/phase8.toml".into(), "--timeline".into(), "camp/runs/b.jsonl".into(), "--json".into()];
    let mut sets_args = vec!["campaign", "sets", "grid.txt", "b"];
    sets_args.extend(common);
    for kv in ok(w, &sets_args).lines() {
        sim.extend(["--set".to_string(), kv.to_string()]);
    }
    std::fs::create_dir_all(w.join("camp/runs")).unwrap();
    ok(w, &sim.iter().map(String::as_str).collect::<Vec<_>>());
    let path = w.join("camp/runs/b.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let mut meta: serde_json::Value = serde_json::from_str(first).unwrap();
    meta["started_at"] = "2200-01-01T00:00:01Z".into();
    std::fs::write(&path, format!("{meta}\n{rest}")).unwrap();
    std::fs::write(w.join("camp/runs/b.start"), "2200-01-01T00:00:00Z\n").unwrap();
    std::fs::write(w.join("camp/runs/b.status"), "ok wall_s=1\n").unwrap();
    // Scored from another directory: the model is found and checked.
    let elsewhere = w.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let out = ok(&elsewhere, &["campaign", "score", "../camp", "--predictions", "../camp/predictions.json"]);
    assert!(out.contains("1 runs of predicted configurations, all started after it"), "{out}");
}
