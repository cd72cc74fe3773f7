//! `proofscope campaign base|score`: the Rust half of `scripts/campaign-analyze.sh`, which
//! only orchestrates (analyze, calibrate, simulate, compare) and calls these two:
//!
//! - `campaign base MACHINE_TXT CAL_RUN -o DIR`: DIR/base.toml, the base config of the
//!   measured machine (phase8.toml with its cores, RAM, VRAM and RSS-based footprints);
//! - `campaign score DIR [-o OUT]`: reads every configuration's `parity/parity.json` (+
//!   `parity@K/` repeats), `parity/prediction.json` and `summary.json` in a campaign report
//!   folder and writes `campaign.json`, `campaign.md`, `parity-campaign.svg` and
//!   `host-runs.json` (into DIR unless `-o`).
//!
//! The work is in [`simulator::campaign`].

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use serde::de::DeserializeOwned;
use serde::Serialize;
use simulator::campaign::{self, ConfigInput};
use simulator::parity::Parity;
use simulator::SimResult;
use timeline::analysis::Summary;

use super::output;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(clap::Subcommand)]
pub enum Sub {
    /// Write the base config of a campaign: phase8.toml with the machine's cores, RAM and VRAM and the calibration run's RSS footprints.
    Base(BaseArgs),
    /// Score a campaign report folder: campaign.json, campaign.md, parity-campaign.svg and host-runs.json.
    Score(ScoreArgs),
}

#[derive(clap::Args)]
pub struct BaseArgs {
    /// The campaign's machine.txt (`nproc: N`, `ram_gib: G`, `gpu: NAME, MIB MiB, ...` lines).
    pub machine: PathBuf,
    /// The calibration run's timeline (JSON lines, gzipped or not): its rss_bytes counter and its pw/gw/gpus.
    pub cal_run: PathBuf,
    /// Output folder: the base config goes to DIR/base.toml.
    #[arg(short, long, value_name = "DIR")]
    pub out: PathBuf,
    /// Reference config to start from (default: simulator/configs/phase8.toml, embedded in the binary).
    #[arg(long)]
    pub reference: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct ScoreArgs {
    /// Campaign report folder (from scripts/campaign-analyze.sh): one <config>/ folder per configuration with summary.json, parity/parity.json, parity/prediction.json (and parity@K/parity.json for repeats).
    pub dir: PathBuf,
    /// Output folder for campaign.json, campaign.md, parity-campaign.svg and host-runs.json (default: DIR itself).
    #[arg(short, long, value_name = "OUT")]
    pub out: Option<PathBuf>,
    /// The configuration the model was calibrated on (left out of the MAPEs); default: CAL in DIR/campaign.env.
    #[arg(long, value_name = "CONFIG")]
    pub calibration: Option<String>,
    /// How many runs of the calibration configuration the model was fitted on (campaign.md says so); default: its parity reports (parity/ and parity@K/).
    #[arg(long, value_name = "N")]
    pub cal_runs: Option<usize>,
    /// Configurations to score, in table order, comma-separated; default: DIR/grid.txt's names that have a parity/parity.json (else every such folder, sorted).
    #[arg(long, value_delimiter = ',', value_name = "A,B,...")]
    pub configs: Vec<String>,
    /// Folder of the campaign's runs (<run>.jsonl.gz and <run>.status) for the run-by-run host table; default: DIR/runs.
    #[arg(long, value_name = "DIR")]
    pub runs_dir: Option<PathBuf>,
    /// campaign.log, for the order of the runs in the host table; default: DIR/campaign.log (the table is left out when it does not exist).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    match a.command {
        Sub::Base(b) => base(b),
        Sub::Score(s) => score(s),
    }
}

fn base(a: BaseArgs) -> anyhow::Result<ExitCode> {
    let (reference, ref_name) = match &a.reference {
        Some(p) => (fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?, p.display().to_string()),
        None => (simulator::calibrate::DEFAULT_BASE.to_string(), "simulator/configs/phase8.toml (embedded)".to_string()),
    };
    let machine = fs::read_to_string(&a.machine).with_context(|| format!("cannot read {}", a.machine.display()))?;
    let cal = super::input::read_run(&a.cal_run, None, false)?;
    if cal.diagnostics.lines_rejected > 0 {
        tracing::warn!("{}: {} lines rejected by the reader", a.cal_run.display(), cal.diagnostics.lines_rejected);
    }
    let text = campaign::base_config(&reference, &machine, &cal).with_context(|| format!("base config from {ref_name} and {}", a.machine.display()))?;
    let mut out = output::OutputDir::open(&a.out, &["base.toml"])?;
    out.write("base.toml", text.as_bytes())?;
    let path = out.join("base.toml");
    out.finish();
    tracing::info!("base config: {}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// Read and parse a JSON file; errors name the file (and serde names the field).
fn read_json<T: DeserializeOwned>(path: &Path, what: &str) -> anyhow::Result<T> {
    let text = super::input::read_json_text(path)?;
    campaign::from_json_exact(&text).map_err(|e| anyhow::anyhow!("{}: not {what}: {e}", path.display()))
}

/// `KEY=value` (quotes optional) of a shell-style env file.
fn env_value(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix('=').map(|v| v.trim().trim_matches('"').to_string())).filter(|v| !v.is_empty())
}

/// The configurations of a campaign folder, in table order.
fn config_names(dir: &Path) -> anyhow::Result<Vec<String>> {
    let has_parity = |name: &str| dir.join(name).join("parity").join("parity.json").is_file();
    let grid = dir.join("grid.txt");
    if grid.is_file() {
        let text = fs::read_to_string(&grid).with_context(|| format!("cannot read {}", grid.display()))?;
        return Ok(text.lines().filter_map(|l| l.split_whitespace().next()).filter(|n| has_parity(n)).map(String::from).collect());
    }
    let mut names = Vec::new();
    for e in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let name = e?.file_name().to_string_lossy().into_owned();
        if has_parity(&name) {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// A configuration's parity reports: parity/ first, then parity@K/ in name order.
fn parities(cdir: &Path) -> anyhow::Result<Vec<Parity>> {
    let mut reps: Vec<String> = Vec::new();
    for e in fs::read_dir(cdir).with_context(|| format!("cannot list {}", cdir.display()))? {
        let name = e?.file_name().to_string_lossy().into_owned();
        if name.starts_with("parity@") && cdir.join(&name).join("parity.json").is_file() {
            reps.push(name);
        }
    }
    reps.sort();
    std::iter::once("parity".to_string()).chain(reps).map(|d| read_json(&cdir.join(d).join("parity.json"), "a parity report")).collect()
}

/// Did the run complete: its status file has a line starting with `ok` and its timeline exists?
fn run_file(runs: &Path, name: &str) -> Option<PathBuf> {
    let status = fs::read_to_string(runs.join(format!("{name}.status"))).ok()?;
    if !status.lines().any(|l| l.starts_with("ok")) {
        return None;
    }
    [format!("{name}.jsonl.gz"), format!("{name}.jsonl")].into_iter().map(|f| runs.join(f)).find(|p| p.is_file())
}

fn score(a: ScoreArgs) -> anyhow::Result<ExitCode> {
    let dir = &a.dir;
    if !dir.is_dir() {
        bail!("{} is not a folder", dir.display());
    }
    let cal = match &a.calibration {
        Some(c) => c.clone(),
        None => {
            let env = dir.join("campaign.env");
            let text = fs::read_to_string(&env).with_context(|| format!("no --calibration and cannot read {}", env.display()))?;
            env_value(&text, "CAL").with_context(|| format!("no --calibration and {} has no CAL=", env.display()))?
        }
    };
    let names = if a.configs.is_empty() { config_names(dir)? } else { a.configs.clone() };
    if names.is_empty() {
        bail!("{}: no configuration with a parity/parity.json", dir.display());
    }
    if !names.contains(&cal) {
        bail!("the calibration configuration {cal} is not among the scored ones ({})", names.join(", "));
    }
    let mut inputs = Vec::new();
    for name in &names {
        let cdir = dir.join(name);
        inputs.push(ConfigInput {
            name: name.clone(),
            calibration: *name == cal,
            parities: parities(&cdir)?,
            prediction: read_json::<SimResult>(&cdir.join("parity").join("prediction.json"), "a simulation result (simulate --json)")?,
            measured: read_json::<Summary>(&cdir.join("summary.json"), "an analyzer summary")?,
        });
    }
    let cal_runs = a.cal_runs.unwrap_or_else(|| inputs.iter().find(|c| c.calibration).map_or(1, |c| c.parities.len()));
    let res = campaign::score(&cal, &inputs);
    let mut md = res.markdown(cal_runs);

    // The run-by-run host table: every run of a scored configuration that completed, in the
    // order campaign.log started them.
    let log = a.log.clone().unwrap_or_else(|| dir.join("campaign.log"));
    let host = if a.log.is_some() || log.is_file() {
        let text = fs::read_to_string(&log).with_context(|| format!("cannot read {}", log.display()))?;
        let runs = a.runs_dir.clone().unwrap_or_else(|| dir.join("runs"));
        let config_of = |run: &str| run.split_once('@').map_or(run, |(c, _)| c).to_string();
        let order = campaign::run_order(&text, |run| names.contains(&config_of(run)) && run_file(&runs, run).is_some());
        let mut rows = Vec::new();
        for (start, name) in order {
            let path = run_file(&runs, &name).with_context(|| format!("{}: {name} vanished", runs.display()))?;
            let run = timeline::read::read_path(&path, None)?;
            rows.push(campaign::host_run(&name, start, &run));
        }
        md.push_str(&campaign::host_runs_markdown(&rows));
        Some(rows)
    } else {
        tracing::info!("{}: no campaign.log, no run-by-run host table", dir.display());
        None
    };

    // One scoring's files only: an earlier scoring's plot or host table that this one does
    // not write is removed (output::OutputDir).
    let mut out = output::OutputDir::open(a.out.as_deref().unwrap_or(dir.as_path()), &["campaign.json", "campaign.md", "parity-campaign.svg", "host-runs.json"])?;
    out.write("campaign.json", &json(&res)?)?;
    out.write("campaign.md", md.as_bytes())?;
    if let Some(svg) = res.parity_svg() {
        out.write("parity-campaign.svg", svg.as_bytes())?;
    }
    if let Some(rows) = &host {
        out.write("host-runs.json", &json(rows)?)?;
    }
    let out_path = out.path().to_path_buf();
    out.finish();
    let out = out_path;
    let f = |x: Option<f64>| x.map_or_else(|| "—".to_string(), |v| format!("{v:.2}"));
    println!(
        "campaign: MAPE {} %, coverage {} % of {} runs, best measured {}, predicted {}, target {} ({})",
        f(res.mape_pct),
        f(res.coverage_pct),
        res.coverage_runs,
        res.best_measured.as_deref().unwrap_or("—"),
        res.best_predicted.as_deref().unwrap_or("—"),
        if res.target_met { "met" } else { "NOT met" },
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Pretty JSON indented by one space (as the Python wrote it), newline-terminated.
fn json<T: Serialize>(v: &T) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, serde_json::ser::PrettyFormatter::with_indent(b" "));
    v.serialize(&mut ser)?;
    out.push(b'\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parity report as the campaigns of 2026-11 wrote them (labels, no keys).
    fn old_parity(measured: f64, predicted: f64) -> String {
        format!(
            r#"{{"metrics":[{{"metric":"steady s/proof (partition rate)","unit":"s","measured":{measured},"predicted":{predicted},"error_pct":{}}}],"within_5pct":0,"max_abs_error_pct":0.0}}"#,
            100.0 * (predicted - measured) / measured
        )
    }

    fn campaign_dir() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        fs::write(p.join("grid.txt"), "a 1 1 whole false\nb 2 1 whole false\nc 4 1 whole false\n").unwrap();
        fs::write(p.join("campaign.env"), "SIZE=2^20\nCAL=\"b\"\n").unwrap();
        // c never ran: no folder. b was repeated.
        for (name, runs, predicted) in [("a", vec![4.0], 4.4), ("b", vec![2.0, 2.2], 2.0)] {
            for (k, m) in runs.iter().enumerate() {
                let sub = if k == 0 { "parity".to_string() } else { format!("parity@{}", k + 1) };
                fs::create_dir_all(p.join(name).join(&sub)).unwrap();
                fs::write(p.join(name).join(&sub).join("parity.json"), old_parity(*m, predicted)).unwrap();
            }
            let pred = serde_json::to_string(&SimResult::default()).unwrap().replace("steady_state_s_per_proof", "steady_s_per_proof");
            fs::write(p.join(name).join("parity").join("prediction.json"), pred).unwrap();
            fs::write(p.join(name).join("summary.json"), serde_json::to_string(&Summary::default()).unwrap()).unwrap();
        }
        fs::create_dir_all(p.join("runs")).unwrap();
        let span = |s: u64, e: u64| format!(r#"{{"type":"span","kind":"synthesis","start_ns":{s},"end_ns":{e},"job":"j","partition":0}}"#);
        for (run, status) in [("a", "ok wall_s=1"), ("b", "ok"), ("b@2", "ok"), ("probe", "ok")] {
            fs::write(p.join("runs").join(format!("{run}.status")), status).unwrap();
            fs::write(p.join("runs").join(format!("{run}.jsonl")), span(0, 2_000_000_000) + "\n").unwrap();
        }
        fs::write(
            p.join("campaign.log"),
            "campaign [1s]: probe: 1 proof, pw=1\ncampaign [3s]: b: pw=2 gw=1\ncampaign [9s]: a: pw=1 gw=1\ncampaign [12s]: b@2: pw=2 gw=1\ncampaign [20s]: c: pw=4 gw=1\n",
        )
        .unwrap();
        d
    }

    fn score_args(dir: &Path) -> ScoreArgs {
        ScoreArgs { dir: dir.to_path_buf(), out: None, calibration: None, cal_runs: None, configs: vec![], runs_dir: None, log: None }
    }

    #[test]
    fn scores_a_folder_of_old_reports() {
        let d = campaign_dir();
        let code = score(score_args(d.path())).unwrap();
        assert_eq!(format!("{code:?}"), format!("{:?}", ExitCode::SUCCESS));
        let res: campaign::CampaignScore = read_json(&d.path().join("campaign.json"), "").unwrap();
        assert_eq!(res.calibrated_on, "b");
        assert_eq!(res.configs.iter().map(|c| (c.config.as_str(), c.runs)).collect::<Vec<_>>(), [("a", 1), ("b", 2)]);
        // Only a counts: +10 %.
        assert!((res.mape_pct.unwrap() - 10.0).abs() < 1e-9, "{:?}", res.mape_pct);
        assert_eq!(res.ranking_measured, ["b", "a"]);
        let md = fs::read_to_string(d.path().join("campaign.md")).unwrap();
        assert!(md.contains("calibrated on **b** only (its 2 runs together;"), "{md}");
        assert!(md.contains("both go through the analyzer's `summarize`"), "{md}");
        // The host table: the scored configurations' runs in log order (no probe, no c).
        assert!(md.contains("| b | 3 | 2.00 |") && md.contains("| b@2 | 12 |"), "{md}");
        let host: Vec<campaign::HostRun> = read_json(&d.path().join("host-runs.json"), "").unwrap();
        assert_eq!(host.iter().map(|r| r.run.as_str()).collect::<Vec<_>>(), ["b", "a", "b@2"]);
        assert!(fs::read_to_string(d.path().join("parity-campaign.svg")).unwrap().starts_with("<svg"));
        assert!(fs::read_dir(d.path()).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp")));
        let json = fs::read_to_string(d.path().join("campaign.json")).unwrap();
        assert!(json.starts_with("{\n \"calibrated_on\": \"b\",\n \"configs\": [\n  {\n   \"config\": \"a\","), "{json}");
    }

    #[test]
    fn writes_elsewhere_with_o() {
        let d = campaign_dir();
        let out = d.path().join("scored");
        score(ScoreArgs { out: Some(out.clone()), ..score_args(d.path()) }).unwrap();
        for f in ["campaign.json", "campaign.md", "parity-campaign.svg", "host-runs.json"] {
            assert!(out.join(f).is_file() && !d.path().join(f).exists(), "{f}");
        }
    }

    #[test]
    fn bad_input_names_the_file_and_the_field() {
        let d = campaign_dir();
        fs::write(d.path().join("a").join("parity").join("prediction.json"), r#"{"name": "x"}"#).unwrap();
        let e = format!("{:#}", score(score_args(d.path())).unwrap_err());
        assert!(e.contains("a/parity/prediction.json") && e.contains("missing field"), "{e}");
        fs::remove_file(d.path().join("a").join("parity").join("prediction.json")).unwrap();
        let e = format!("{:#}", score(score_args(d.path())).unwrap_err());
        assert!(e.contains("cannot read") && e.contains("prediction.json"), "{e}");
        let e = format!("{:#}", score(ScoreArgs { calibration: Some("zz".into()), ..score_args(d.path()) }).unwrap_err());
        assert!(e.contains("zz"), "{e}");
    }

    #[test]
    fn writes_the_base_config() {
        let d = tempfile::tempdir().unwrap();
        let machine = d.path().join("machine.txt");
        fs::write(&machine, "nproc: 8\nram_gib: 64\n").unwrap();
        let run = d.path().join("cal.jsonl");
        fs::write(&run, "{\"type\":\"counter\",\"name\":\"rss_bytes\",\"t_ns\":0,\"value\":1073741824}\n").unwrap();
        let out = d.path().join("out");
        base(BaseArgs { machine: machine.clone(), cal_run: run.clone(), out: out.clone(), reference: None }).unwrap();
        let text = fs::read_to_string(out.join("base.toml")).unwrap();
        assert!(text.contains("cpu_cores = 8  # machine.txt (nproc)") && text.contains("baseline_gib = 1.000  #"), "{text}");
        simulator::Config::load(&out.join("base.toml")).unwrap();
        fs::write(&machine, "nproc: eight\n").unwrap();
        let e = format!("{:#}", base(BaseArgs { machine, cal_run: run, out, reference: None }).unwrap_err());
        assert!(e.contains("machine.txt") && e.contains("nproc"), "{e}");
    }
}
