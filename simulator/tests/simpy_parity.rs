//! Cross-check against an independent implementation: the SimPy model of the same
//! pipeline (simulator/baseline/simpy_pipeline.py, fixed costs, no CPU sharing or
//! memory limits) must give the same s/proof as ours on the configs it covers. Skipped
//! with a message when python3 with simpy is not installed.

use std::path::PathBuf;
use std::process::Command;

use simulator::{simulate, Config, Options};

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("baseline/simpy_pipeline.py")
}

fn simpy_available() -> bool {
    Command::new("python3").args(["-c", "import simpy"]).output().map(|o| o.status.success()).unwrap_or(false)
}

#[test]
fn same_s_per_proof_as_the_simpy_model() {
    if !simpy_available() {
        eprintln!("skipped: python3 with simpy not found (pip install simpy)");
        return;
    }
    let base = Config::load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/phase8.toml")).unwrap();
    for (pw, gw, lock, j, split) in [(10, 2, "kernels", 3, false), (20, 1, "whole", 3, false), (12, 2, "kernels", 2, true), (5, 1, "kernels", 1, true), (16, 2, "whole", 5, true)] {
        let out = Command::new("python3")
            .arg(script())
            .args(["one", &pw.to_string(), &gw.to_string(), lock, &j.to_string(), &split.to_string()])
            .output()
            .expect("run python3");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        let v: Vec<f64> = text.split_whitespace().map(|x| x.parse().unwrap()).collect();
        let mut c = base.clone();
        for (k, val) in [("pw", pw.to_string()), ("gw", gw.to_string()), ("lock", lock.to_string()), ("j", j.to_string()), ("split", split.to_string()), ("cores", "10000".into()), ("bandwidth", "100000".into()), ("ram", "100000".into()), ("slope", "0".into())] {
            c.set(k, &val).unwrap();
        }
        let r = simulate(&c, Options::default()).result;
        let case = format!("pw={pw} gw={gw} lock={lock} j={j} split={split}");
        assert!((r.total_s_per_proof - v[0]).abs() < 1e-3, "{case}: total {} vs simpy {}", r.total_s_per_proof, v[0]);
        assert!((r.steady_state_s_per_proof - v[1]).abs() < 1e-3, "{case}: steady {} vs simpy {}", r.steady_state_s_per_proof, v[1]);
    }
}
