//! The fresh engine's one-time startup (`[startup]`): each item tested alone where its effect
//! can be computed by hand (one partition through an idle pipeline: the makespan grows by
//! exactly what is added), its spans where the analyzer and `calibrate` read them, and a
//! calibration round trip that gives every figure back.

use std::path::PathBuf;

use simulator::calibrate::calibrate;
use simulator::config::ParamsUpload;
use simulator::{simulate, Config, Options};
use timeline::{Run, SpanKind};

fn phase9() -> Config {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/phase9.toml");
    let mut c = Config::load(&p).unwrap_or_else(|e| panic!("{e}"));
    // This engine's call order: the upload (with its staging) in the call, no pre-staged buffer.
    c.set("upload_after_prep", "true").unwrap();
    c
}

/// One partition, one worker of each kind: every step waits for the one before it.
fn serial() -> Config {
    let mut c = phase9();
    for (k, v) in [("proofs", "1"), ("partitions", "1"), ("pw", "1"), ("gw", "1"), ("j", "1")] {
        c.set(k, v).unwrap();
    }
    c
}

fn with_startup(mut c: Config, engine: f64, params: f64, pce: f64, staging: f64) -> Config {
    c.startup.engine_s = engine;
    c.startup.params_upload_s = params;
    c.startup.pce_load_s = pce;
    c.startup.staging_alloc_s = staging;
    c.validate().unwrap();
    c
}

fn makespan(c: &Config) -> f64 {
    let r = simulate(c, Options::default()).result;
    assert!(r.feasible, "{:?}", r.failure);
    r.makespan_s
}

fn recorded(c: &Config) -> Run {
    let out = simulate(c, Options { record: true });
    assert!(out.result.feasible, "{:?}", out.result.failure);
    out.run.unwrap()
}

#[test]
fn each_item_adds_its_time_to_a_lone_partition() {
    let base = makespan(&serial());
    let close = |got: f64, want: f64, what: &str| assert!((got - want).abs() < 1e-6, "{what}: {got} vs {want}");
    close(makespan(&with_startup(serial(), 0.5, 0.0, 0.0, 0.0)) - base, 0.5, "engine");
    close(makespan(&with_startup(serial(), 0.0, 2.0, 0.0, 0.0)) - base, 2.0, "parameters at the start");
    close(makespan(&with_startup(serial(), 0.0, 0.0, 3.0, 0.0)) - base, 3.0, "PCE read");
    close(makespan(&with_startup(serial(), 0.0, 0.0, 0.0, 0.25)) - base, 0.25, "staging set");
    close(makespan(&with_startup(serial(), 0.5, 2.0, 3.0, 0.25)) - base, 5.75, "all four");
    // In the first call instead of before the synthesis: the same time on a lone partition.
    let mut c = with_startup(serial(), 0.0, 2.0, 0.0, 0.0);
    c.startup.params_upload = ParamsUpload::FirstCall;
    close(makespan(&c) - base, 2.0, "parameters in the first call");
    // Streamed parameters are never uploaded whole.
    let mut s = serial();
    s.set("memory.params_vram_gib", "4").unwrap();
    s.set("memory.params_on_device", "stream").unwrap();
    let streamed = makespan(&s);
    close(makespan(&with_startup(s, 0.0, 2.0, 0.0, 0.0)) - streamed, 0.0, "streamed parameters");
}

#[test]
fn the_first_wave_waits_for_the_pce_and_the_spans_say_so() {
    let mut c = with_startup(phase9(), 0.1, 0.4, 0.5, 0.0);
    for (k, v) in [("proofs", "2"), ("partitions", "4"), ("pw", "4")] {
        c.set(k, v).unwrap();
    }
    let run = recorded(&c);
    let ns = |s: f64| (s * 1e9).round() as u64;
    let params: Vec<_> = run.spans.iter().filter(|s| s.kind == SpanKind::H2d && s.args.get("what").and_then(|v| v.as_str()) == Some("params")).collect();
    assert_eq!(params.len(), 1);
    assert_eq!((params[0].start_ns, params[0].end_ns), (0, Some(ns(0.4))));
    let build: Vec<_> = run.spans_of(&SpanKind::PceBuild).collect();
    let wait: Vec<_> = run.spans_of(&SpanKind::PceWait).collect();
    assert_eq!((build.len(), wait.len()), (1, 3), "the first of pw = 4 partitions reads, three wait");
    for s in build.iter().chain(&wait) {
        assert_eq!((s.start_ns, s.end_ns), (ns(0.5), Some(ns(1.0))));
        assert!(s.job.is_some());
    }
    let first = run.spans_of(&SpanKind::Synthesis).map(|s| s.start_ns).min().unwrap();
    assert_eq!(first, ns(1.0), "no synthesis before engine + parameters + PCE");
}

#[test]
fn a_staging_set_is_allocated_per_concurrent_upload_once() {
    for (gw, want) in [(1u32, 1usize), (2, 2)] {
        let mut c = with_startup(phase9(), 0.0, 0.0, 0.0, 0.08);
        for (k, v) in [("proofs", "3"), ("partitions", "2"), ("pw", "2"), ("gw", &gw.to_string())] {
            c.set(k, v).unwrap();
        }
        let run = recorded(&c);
        let allocs: Vec<_> = run.spans_of(&SpanKind::H2d).filter(|s| s.args.contains_key("staging_ns")).collect();
        assert_eq!(allocs.len(), want, "gw {gw}: the first calls allocate one set each, the later ones reuse them");
        for s in allocs {
            assert_eq!(s.args["staging_ns"].as_u64(), Some(80_000_000));
        }
    }
}

#[test]
fn calibrate_gives_the_startup_back() {
    let mut c = with_startup(phase9(), 0.12, 0.9, 0.6, 0.07);
    for (k, v) in [("proofs", "3"), ("pw", "4")] {
        c.set(k, v).unwrap();
    }
    let cal = calibrate(&[("sim".into(), recorded(&c))], &c).unwrap();
    let st = &cal.config.startup;
    let close = |got: f64, want: f64, what: &str| assert!((got - want).abs() < 1e-3, "{what}: {got} vs {want}");
    close(st.engine_s, 0.12, "engine");
    close(st.params_upload_s, 0.9, "parameters");
    close(st.pce_load_s, 0.6, "PCE");
    close(st.staging_alloc_s, 0.07, "staging");
    assert_eq!(st.params_upload, ParamsUpload::Start);
    // The staging allocations stay out of the per-partition upload.
    let mut cold = c.clone();
    cold.startup = Default::default();
    let warm = calibrate(&[("sim".into(), recorded(&cold))], &cold).unwrap();
    close(cal.config.costs.upload_gib, warm.config.costs.upload_gib, "upload_gib");
}

#[test]
fn a_second_call_waits_for_the_parameters_the_first_call_uploads() {
    // Two workers, two partitions synthesised together: with the parameters going up in the
    // first call (2 s), the other call's upload may not start before they are up.
    let mut c = with_startup(phase9(), 0.0, 2.0, 0.0, 0.0);
    c.startup.params_upload = ParamsUpload::FirstCall;
    for (k, v) in [("proofs", "1"), ("partitions", "2"), ("pw", "2"), ("gw", "2")] {
        c.set(k, v).unwrap();
    }
    let run = recorded(&c);
    let params: Vec<_> = run.spans.iter().filter(|s| s.kind == SpanKind::H2d && s.args.get("what").and_then(|v| v.as_str()) == Some("params")).collect();
    assert_eq!(params.len(), 1, "once per device");
    let up_end = params[0].end_ns.unwrap();
    let copies: Vec<_> = run.spans_of(&SpanKind::H2d).filter(|s| s.args.get("what").is_none()).collect();
    assert_eq!(copies.len(), 2);
    for s in copies {
        assert!(s.start_ns >= up_end, "an a/b/c copy at {} before the parameters were up at {up_end}", s.start_ns);
    }
}

#[test]
fn runs_whose_clock_is_not_the_engines_give_no_startup() {
    // A cuzk log counts from the daemon's start: its first synthesis's offset is no startup.
    let mut c = with_startup(phase9(), 0.3, 0.0, 0.0, 0.0);
    c.set("proofs", "2").unwrap();
    let mut run = recorded(&c);
    assert!(simulator::calibrate::startup_sample(&run).is_some());
    run.meta.source = String::new();
    assert!(simulator::calibrate::startup_sample(&run).is_none());
    let cal = calibrate(&[("daemon.log".into(), run)], &c).unwrap();
    assert_eq!(cal.config.startup, Default::default());
}

#[test]
fn a_negative_startup_figure_is_refused_by_name() {
    let text = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs/phase9.toml")).unwrap();
    let err = Config::from_toml_str(&format!("{text}\n[startup]\npce_load_s = -1\n"), "bad.toml").unwrap_err().to_string();
    assert!(err.contains("startup.pce_load_s"), "{err}");
    let err = Config::from_toml_str(&format!("{text}\n[startup]\nparams_upload = \"later\"\n"), "bad.toml").unwrap_err().to_string();
    assert!(err.contains("params_upload") || err.contains("later"), "{err}");
}
