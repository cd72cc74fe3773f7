//! Every example config in `simulator/configs/` parses, validates and runs (a model config) or
//! applies over a model (a cuzk daemon file), and follows the convention of issue 21
//! (docs/reference/simulator.md#example-configs): a header saying which phase it models, and a
//! source on every numeric line (`# ref:`, `# fitted:`, `# GUESS:` or `# set:`).

use std::path::{Path, PathBuf};

use simulator::cuzk_config::apply;
use simulator::{simulate, Config, Options};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs")
}

fn files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
    v.sort();
    v
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// A model config sets `name`; a cuzk daemon file (for `--cuzk-config`) does not.
fn is_model(text: &str) -> bool {
    text.lines().any(|l| l.starts_with("name ") || l.starts_with("name="))
}

#[test]
fn every_example_config_parses_validates_and_runs() {
    let files = files();
    assert!(files.len() >= 7, "{files:?}");
    let mut models = 0;
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        if is_model(&text) {
            let c = Config::load(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            c.validate().unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let r = simulate(&c, Options::default()).result;
            // phase10 fails by design (vram_oom on 16 GiB, the reference's Phase 10); every other
            // example completes its proofs.
            if file_name(p) == "phase10.toml" {
                assert_eq!(r.failure.as_ref().map(|f| f.kind.as_str()), Some("vram_oom"), "{}", p.display());
            } else {
                assert!(r.feasible, "{}: {:?}", p.display(), r.failure);
                assert_eq!(r.proofs_completed, c.pipeline.proofs, "{}", p.display());
            }
            models += 1;
        } else {
            let mut c = Config::load(&dir().join("phase12.toml")).unwrap();
            apply(&mut c, &text, &file_name(p)).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            c.validate().unwrap_or_else(|e| panic!("{} over phase12.toml: {e}", p.display()));
        }
    }
    assert!(models >= 6, "{models} model configs");
}

#[test]
fn every_numeric_line_names_its_source_and_the_header_the_phase() {
    let tags = ["# ref", "# fitted", "# GUESS", "# set"];
    for p in files() {
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.lines().take_while(|l| l.starts_with('#') || l.is_empty()).any(|l| l.starts_with("# Models:")), "{}: no '# Models:' line in the header", p.display());
        for (i, line) in text.lines().enumerate() {
            let Some((key, rest)) = line.split_once('=') else { continue };
            if key.trim_start().starts_with('#') || key.trim().contains(' ') {
                continue;
            }
            let value = rest.trim_start();
            if !value.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
                continue;
            }
            assert!(tags.iter().any(|t| line.contains(t)), "{}:{}: a numeric line without a source tag ({tags:?}): {line}", p.display(), i + 1);
        }
    }
}

#[test]
fn the_docs_table_lists_every_example_config() {
    let doc = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/reference/simulator.md")).unwrap();
    let section = doc.split("## Example configs").nth(1).expect("docs/reference/simulator.md has an 'Example configs' section");
    let section = section.split("\n## ").next().unwrap();
    for p in files() {
        let name = file_name(&p);
        assert!(section.contains(&format!("`{name}`")), "docs/reference/simulator.md#example-configs does not list {name}");
    }
}

#[test]
fn the_cpu_capacity_is_set_validated_and_scaled_by_the_cores_what_if() {
    let mut c = Config::load(&dir().join("phase12.toml")).unwrap();
    let cores = c.machine.cpu_cores;
    assert_eq!(c.machine.capacity(), cores, "absent: the cores");
    c.set("capacity", "7").unwrap();
    assert_eq!((c.machine.cpu_capacity, c.machine.capacity()), (Some(7.0), 7.0));
    c.validate().unwrap();
    // Fewer cores delivered: the same configuration is no faster.
    let slow = simulate(&c, Options::default()).result.total_s_per_proof;
    c.set("machine.cpu_capacity", "none").unwrap();
    let fast = simulate(&c, Options::default()).result.total_s_per_proof;
    assert!(slow >= fast, "{slow} vs {fast}");
    // More than the cores: refused, naming the field.
    c.set("capacity", &(cores + 1.0).to_string()).unwrap();
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("machine.cpu_capacity") && e.contains("exceeds machine.cpu_cores"), "{e}");
    // Setting the cores (`--vary cores=…`) scales the capacity with them, as the what-if of
    // more cores does.
    c.set("capacity", "7").unwrap();
    c.set("cores", &(cores / 2.0).to_string()).unwrap();
    assert_eq!(c.machine.cpu_capacity, Some(3.5));
    c.validate().unwrap();
    c.set("cores", &cores.to_string()).unwrap();
    assert_eq!(c.machine.cpu_capacity, Some(7.0));
    let w = simulator::whatif::changes(&c, &[50.0]);
    let (_, _, more) = w.iter().find(|(k, _, _)| k == "cpu_cores").unwrap();
    assert_eq!((more.machine.cpu_cores, more.machine.cpu_capacity), (cores * 1.5, Some(10.5)));
}

#[test]
fn the_model_rss_is_its_map_of_the_reserved_memory() {
    // RSS = 0.5 GiB + 0.5 x reserved: the simulated rss_bytes counter peaks there, while the
    // reservations (admission, peak_ram_gib) are unchanged.
    let mut c = Config::load(&dir().join("phase12.toml")).unwrap();
    let plain = simulate(&c, Options { record: true });
    c.set("memory.rss_per_reserved", "0.5").unwrap();
    c.set("memory.rss_offset_gib", "0.5").unwrap();
    c.validate().unwrap();
    let mapped = simulate(&c, Options { record: true });
    let peak = |o: &simulator::Outcome| o.run.as_ref().unwrap().counters.iter().filter(|k| k.name == "rss_bytes").map(|k| k.value).fold(0.0f64, f64::max) / (1u64 << 30) as f64;
    assert_eq!(plain.result.peak_ram_gib, mapped.result.peak_ram_gib);
    assert!((peak(&plain) - plain.result.peak_ram_gib).abs() < 1e-6);
    assert!((peak(&mapped) - (0.5 + 0.5 * plain.result.peak_ram_gib)).abs() < 1e-6, "{} vs {}", peak(&mapped), plain.result.peak_ram_gib);
    c.set("memory.rss_per_reserved", "3").unwrap();
    assert!(c.validate().unwrap_err().to_string().contains("memory.rss_per_reserved"));
}

#[test]
fn the_pool_exponent_and_the_calibration_bias_are_set_validated_and_written_back() {
    let mut c = Config::load(&dir().join("phase12.toml")).unwrap();
    assert_eq!(c.cpu.synth_pool_exponent, 1.0, "absent: a straight line");
    let text = toml::to_string(&c).unwrap();
    assert!(!text.contains("synth_pool_exponent") && !text.contains("calibration_bias"), "defaults are not written");
    c.set("pool_exponent", "0.6").unwrap();
    c.set("pool_gain", "0.3").unwrap();
    c.uncertainty.calibration_bias = vec![simulator::config::BiasPoint { pw: 1, ratio: 0.98 }, simulator::config::BiasPoint { pw: 8, ratio: 1.05 }];
    c.validate().unwrap();
    let back: Config = toml::from_str(&toml::to_string(&c).unwrap()).unwrap();
    assert_eq!((back.cpu.synth_pool_exponent, back.uncertainty.calibration_bias.clone()), (0.6, c.uncertainty.calibration_bias.clone()));
    // Refused, naming the field: an exponent outside (0, 1]; a bias with pw 0, a ratio not
    // above 0, or a pw given twice.
    for b in ["0", "1.5", "NaN"] {
        let mut x = c.clone();
        // (`set` refuses what is not a number; the rest is `validate`'s.)
        let e = match x.set("cpu.synth_pool_exponent", b) {
            Err(e) => e.to_string(),
            Ok(()) => x.validate().unwrap_err().to_string(),
        };
        assert!(e.contains("cpu.synth_pool_exponent"), "{b}: {e}");
    }
    for (pw, ratio, why) in [(0, 1.0, "pw must be at least 1"), (4, 0.0, "positive"), (8, 1.1, "given twice")] {
        let mut x = c.clone();
        x.uncertainty.calibration_bias.push(simulator::config::BiasPoint { pw, ratio });
        let e = x.validate().unwrap_err().to_string();
        assert!(e.contains("uncertainty.calibration_bias") && e.contains(why), "{pw} {ratio}: {e}");
    }
}
