//! `proofscope analyze LOG… [-o DIR] [--json] [--strict] [--min-gap-ms X] [--format F]
//! [--labels A,B,…] [--csv DIR]`: read a cuzk daemon log or our JSON lines (`-` = stdin), run every
//! analysis, print a concise summary (or `summary.json` with `--json`) and write the report
//! directory: `summary.json`, `report.md`, the charts, `trace.json` and the Parquet tables
//! (with `--csv DIR`, the same tables as CSV there).
//! Several logs, a directory or a glob make a fleet ([`run_fleet`]): each host's report in
//! its own subfolder, and across hosts `fleet.md`, `fleet.json` and one `trace.json` with a
//! process per host; hosts are read one at a time (memory: one host's events plus the
//! table).
//! Reader warnings go to stderr with their line numbers; `--strict` exits 1 on any. The
//! report folder holds this run's outputs only (an earlier run's that this one does not
//! write are removed) and is locked while written ([`super::output::OutputDir`]); an
//! output that cannot be written is an error naming it (exit 1), the others are still
//! written.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use timeline::analysis::verdict::num;
use timeline::analysis::{summarize, AnalyzeOptions, Summary};
use timeline::lanes::LaidOut;
use timeline::read::Format;
use timeline::report::ChartRef;
use timeline::Run;

#[derive(clap::Args)]
pub struct Args {
    /// The log: a cuzk daemon log (TIMELINE lines among others, bare or as journalctl /
    /// Docker wrote them, plain, gzip or zstd), proofscope JSON lines, or a Chrome / Perfetto
    /// trace JSON with GPU kernels (PyTorch profiler / Kineto); `-` reads stdin.
    /// Several logs, a directory (its files) or a quoted glob (`'logs/*.log.gz'`) make a
    /// fleet: one report per host and a fleet table.
    #[arg(required = true, num_args = 1..)]
    pub log: Vec<PathBuf>,
    /// Output folder (default: out/<log name>, out/fleet for a fleet; with --json, none
    /// unless given).
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Print summary.json (a fleet: fleet.json) on stdout instead of the human summary;
    /// files are written only with -o.
    #[arg(long)]
    pub json: bool,
    /// A fleet's host labels, comma-separated, in the order of the logs (default: each
    /// log's file name without `.log`, `.gz`, `.zst`, …). Each host's report goes to
    /// OUT/<label>/.
    #[arg(long, value_delimiter = ',')]
    pub labels: Vec<String>,
    /// Exit with status 1 when the reader rejected lines (malformed, duplicated, out of
    /// range), found spans that never ended, or the input as a whole is not a run (empty,
    /// no event of its format, binary, a newer schema).
    #[arg(long)]
    pub strict: bool,
    /// Read a log whose schema_version is newer than this proofscope's (an error otherwise).
    #[arg(long)]
    pub force: bool,
    /// Idle gaps shorter than this are counted but not listed (ms, ≥ 0).
    #[arg(long, default_value_t = 1.0, value_parser = super::input::nonneg_ms)]
    pub min_gap_ms: f64,
    /// Input format: `jsonl`, a cuzk log — `cuzk` (each line's wrapper detected),
    /// `plain`, `journal` (journalctl's prefix), `journal-json` (`journalctl -o json`),
    /// `docker` (json-file) — or `chrome-trace` (another tool's Chrome / Perfetto trace JSON
    /// with GPU kernels, as PyTorch's profiler writes), or `nsys-sqlite` (an Nsight Systems
    /// export, `nsys export --type sqlite`: its kernels and copies) (default: detected from
    /// the content).
    #[arg(long)]
    pub format: Option<Format>,
    /// Skip the charts and the trace (the tables, summary and report are still written).
    #[arg(long)]
    pub no_charts: bool,
    /// Which charts to draw, comma-separated: waterfall, waterfall-png, utilization, gaps,
    /// phases, memory (default: all; report.md shows the drawn ones).
    #[arg(long, value_delimiter = ',', value_parser = parse_chart, conflicts_with = "no_charts")]
    pub charts: Vec<&'static str>,
    /// Skip the Parquet tables (spans, counters, partitions, jobs, gaps).
    #[arg(long)]
    pub no_tables: bool,
    /// Also write the tables as CSV into this folder (spans.csv, counters.csv,
    /// partitions.csv, jobs.csv, gaps.csv: the Parquet tables' columns; a fleet: one
    /// subfolder per host). Independent of -o and --no-tables.
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,
    /// Analyse only `A..B` seconds of the run (since its start; spans clipped to the window,
    /// times shifted to start at 0): a zoom into a few partitions, e.g. `--window 9.0..9.4`.
    #[arg(long, value_name = "A..B")]
    pub window: Option<String>,
}

/// The charts `analyze` can draw (`--charts`): the report's standard charts and the PNG of
/// the waterfall.
pub const CHARTS: [&str; 6] = ["waterfall", "waterfall-png", "utilization", "gaps", "phases", "memory"];

fn parse_chart(s: &str) -> Result<&'static str, String> {
    CHARTS.iter().find(|c| **c == s.trim()).copied().ok_or_else(|| format!("unknown chart `{s}` (one of {})", CHARTS.join(", ")))
}

/// What `analyze` writes besides summary.json and report.md.
#[derive(Clone, Debug)]
pub struct Outputs {
    /// Charts to draw (names of [`CHARTS`]); the trace goes with any chart.
    pub charts: Vec<&'static str>,
    /// (Read only where the tables are built: the `analysis` feature.)
    #[cfg_attr(not(feature = "analysis"), allow(dead_code))]
    pub tables: bool,
    /// The run's `label` in its tables (a fleet host's label); None: from the log's name.
    pub label: Option<String>,
}

impl Outputs {
    /// Everything: every chart, the trace, the tables.
    pub fn all() -> Outputs {
        Outputs { charts: CHARTS.to_vec(), tables: true, label: None }
    }
    fn of(a: &Args) -> Outputs {
        let charts = if a.no_charts {
            Vec::new()
        } else if a.charts.is_empty() {
            CHARTS.to_vec()
        } else {
            a.charts.clone()
        };
        Outputs { charts, tables: !a.no_tables, label: None }
    }
    #[cfg_attr(not(feature = "analysis"), allow(dead_code))]
    fn chart(&self, name: &str) -> bool {
        self.charts.contains(&name)
    }
    /// The run's label in its tables: given, else the analysed log's name ([`label_of`]).
    pub fn label(&self, s: &Summary) -> String {
        self.label.clone().unwrap_or_else(|| s.input.as_deref().map_or_else(|| "run".to_string(), |i| label_of(Path::new(i))))
    }
}

/// Parses `A..B` (seconds, A < B, both ≥ 0) into nanoseconds.
pub fn parse_window(w: &str) -> anyhow::Result<(u64, u64)> {
    let bad = |why: &str| anyhow::anyhow!("--window {w:?}: {why} (expected A..B in seconds since the run's start, e.g. 9.0..9.4)");
    let (a, b) = w.split_once("..").ok_or_else(|| bad("no \"..\""))?;
    let sec = |v: &str| v.trim().parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0).ok_or_else(|| bad(&format!("{:?} is not a number of seconds ≥ 0", v.trim())));
    let (a, b) = (sec(a)?, sec(b)?);
    if a >= b {
        return Err(bad("the start is not before the end"));
    }
    Ok(((a * 1e9).round() as u64, (b * 1e9).round() as u64))
}

/// Every file `analyze` may write into its folder (an earlier run's that this one does not
/// write are removed).
pub const OUTPUTS: &[&str] = &[
    "summary.json",
    "report.md",
    "report.html",
    "trace.json",
    "spans.parquet",
    "counters.parquet",
    "partitions.parquet",
    "jobs.parquet",
    "gaps.parquet",
    // An earlier `--csv` into the same folder.
    "spans.csv",
    "counters.csv",
    "partitions.csv",
    "jobs.csv",
    "gaps.csv",
    "waterfall.svg",
    "waterfall.png",
    "utilization.svg",
    "gaps.svg",
    "phases.svg",
    "memory.svg",
];

/// What `--csv DIR` writes (one CSV per table of `timeline::export::tables::RUN_TABLES`).
#[cfg_attr(not(feature = "analysis"), allow(dead_code))]
pub const CSV_OUTPUTS: &[&str] = &["spans.csv", "counters.csv", "partitions.csv", "jobs.csv", "gaps.csv"];

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    one_malloc_arena();
    // Every argument is checked before any work.
    let window = a.window.as_deref().map(parse_window).transpose()?;
    if let Some(c) = &a.csv {
        super::output::check_folder("--csv", c)?;
    }
    let (logs, fleet) = expand_inputs(&a.log)?;
    if fleet {
        return run_fleet(&a, &logs, window);
    }
    if !a.labels.is_empty() {
        anyhow::bail!("--labels names the hosts of a fleet: give several logs, a directory or a glob");
    }
    let log = &logs[0];
    let out = match (&a.out, a.json) {
        (Some(d), _) => Some(d.clone()),
        (None, false) => Some(default_out_dir(log)),
        (None, true) => None,
    };
    if let Some(d) = &out {
        super::output::check_dir(d)?;
    }
    let opts = AnalyzeOptions { min_gap_ms: a.min_gap_ms, ..Default::default() };
    let run = read_windowed(&a, log, window)?;
    let mut failed = false;
    let outputs = Outputs::of(&a);
    let mut dir = out.as_deref().map(|d| super::output::OutputDir::open(d, OUTPUTS)).transpose()?;
    // With --json and -o, stdout gets summary.json's bytes read back from the file (opened
    // while the folder is this run's) instead of the summary serialised a second time.
    let mut json_file: Option<std::fs::File> = None;
    let laid = LaidOut::new(&run);
    let summary = std::thread::scope(|sc| -> anyhow::Result<Summary> {
        // trace.json needs the run and its lanes, not the analyses: it is written on a
        // thread of its own while the run is analysed (the target machine has two cores).
        let trace = match &dir {
            Some(d) if !outputs.charts.is_empty() => Some(spawn_trace(sc, &laid, d.join("trace.json"))),
            _ => None,
        };
        let summary = summarize_log(&run, log, &opts);
        if let Some(d) = dir.as_mut() {
            write_outputs_with(&laid, &summary, d, &outputs, trace)?;
            failed = !d.failed().is_empty();
            if a.json && d.written().iter().any(|w| w == "summary.json") {
                json_file = std::fs::File::open(d.join("summary.json")).ok();
            }
        }
        Ok(summary)
    })?;
    let written = dir.map(|d| d.finish()).unwrap_or_default();
    if let Some(c) = &a.csv {
        failed |= write_csv_tables(&run, &summary, &outputs.label(&summary), c)?;
    }
    print_warnings(&summary);
    if a.json {
        timed("summary.json on stdout", || -> anyhow::Result<()> {
            // Buffered: stdout's own buffer flushes at every newline, a write(2) per line of
            // the pretty JSON (5M for a 1.2M-event log).
            let mut o = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
            match json_file.as_mut() {
                Some(f) => {
                    std::io::copy(f, &mut o)?;
                }
                None => timeline::export::summary_json::write(&mut o, &summary)?,
            }
            writeln!(o)?;
            o.flush()?;
            Ok(())
        })?;
    } else {
        print_human(&summary, out.as_deref().unwrap_or(Path::new(".")), &written);
    }
    let code = if failed || (a.strict && summary.diagnostics.has_warnings()) { ExitCode::from(1) } else { ExitCode::SUCCESS };
    // The run and its summary go with the process: freeing a 1.2M-event log's spans one
    // allocation at a time took 0.1-0.2 s of a command that is about to exit.
    // (The lanes first: they borrow the run.)
    std::mem::forget(laid);
    std::mem::forget(run);
    std::mem::forget(summary);
    Ok(code)
}

/// One malloc arena for the process (glibc; set before any thread of the command starts).
/// The reader's assembler, the per-type analyses, rayon's sorts and the output writers each
/// got an arena of their own, and memory one thread freed was not reused by the others: on
/// the 1M-event cuzk log `--json --no-charts` peaked at 360-367 MiB, with one arena at
/// 333-341 MiB (4.2-4.3× → 3.9-4.0× the log), wall and user time within the noise
/// (2026-12-04, reports/benches/2026-12-04-analyze-speed-3.txt). Not for the prover, whose
/// threads allocate at once.
fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a malloc parameter; it is called before this command
    // starts any thread.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Read one log (cut to `--window`) and analyse it.
fn read_and_summarize(a: &Args, log: &Path, window: Option<(u64, u64)>, opts: &AnalyzeOptions) -> anyhow::Result<(Run, Summary)> {
    let run = read_windowed(a, log, window)?;
    let summary = summarize_log(&run, log, opts);
    Ok((run, summary))
}

/// Analyse a log's run; the summary names the log it came from.
fn summarize_log(run: &Run, log: &Path, opts: &AnalyzeOptions) -> Summary {
    let mut summary = summarize(run, opts);
    summary.input = Some(log.display().to_string());
    summary
}

/// Read one log, cut to `--window`.
fn read_windowed(a: &Args, log: &Path, window: Option<(u64, u64)>) -> anyhow::Result<Run> {
    let mut run = read_log(log, a.format, a.force)?;
    if let (Some(w), Some((from, to))) = (&a.window, window) {
        let end = run.end_ns();
        run = run.window(from, to);
        if run.spans.is_empty() {
            anyhow::bail!("--window {w}: no span of {} in it (the run ends at {:.3} s)", log.display(), end as f64 / 1e9);
        }
    }
    Ok(run)
}

/// The logs the arguments name, and whether they make a fleet (several logs, or any
/// directory or glob). A directory gives its regular files (hidden ones skipped), a glob
/// (`*`, `?`, `[` in a path that does not exist as such) its matching files, both sorted.
pub fn expand_inputs(args: &[PathBuf]) -> anyhow::Result<(Vec<PathBuf>, bool)> {
    let mut out = Vec::new();
    let mut fleet = false;
    for p in args {
        let text = p.to_string_lossy();
        if text == "-" {
            out.push(p.clone());
        } else if p.is_dir() {
            fleet = true;
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| anyhow::anyhow!("cannot list {}: {e}", p.display()))?
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()) && !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect();
            files.sort();
            if files.is_empty() {
                anyhow::bail!("{}: a directory without any log file in it", p.display());
            }
            out.extend(files);
        } else if !p.exists() && text.contains(['*', '?', '[']) {
            fleet = true;
            let paths = glob::glob(&text).map_err(|e| anyhow::anyhow!("{text}: not a valid glob pattern: {e}"))?;
            let mut files: Vec<PathBuf> = paths.filter_map(Result::ok).filter(|p| p.is_file()).collect();
            files.sort();
            if files.is_empty() {
                anyhow::bail!("{text}: no file matches this pattern");
            }
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    if out.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        anyhow::bail!("`-` (stdin) can be given once only");
    }
    fleet |= out.len() > 1;
    Ok((out, fleet))
}

/// A host's label from its log's file name: the name without the compression and log
/// extensions (`host-3.log.gz` → `host-3`), characters other than letters, digits, `-`,
/// `_` and `.` replaced by `_`.
pub fn label_of(log: &Path) -> String {
    if log.as_os_str() == "-" {
        return "stdin".into();
    }
    let mut name = log.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "host".into());
    for ext in [".gz", ".zst", ".zstd", ".log", ".jsonl", ".json", ".txt"] {
        if name.len() > ext.len() {
            if let Some(stem) = name.strip_suffix(ext) {
                name = stem.to_string();
            }
        }
    }
    sanitize_label(&name)
}

fn sanitize_label(s: &str) -> String {
    let t: String = s.chars().map(|c| if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect();
    if t.is_empty() || t.chars().all(|c| c == '.') {
        "host".into()
    } else {
        t
    }
}

/// The fleet's labels: `--labels` (one per log, distinct, usable as folder names), else
/// from the file names, made distinct with `-2`, `-3`, ….
pub fn fleet_labels(given: &[String], logs: &[PathBuf]) -> anyhow::Result<Vec<String>> {
    if !given.is_empty() {
        if given.len() != logs.len() {
            anyhow::bail!("--labels gives {} labels for {} logs: one label per log, in order", given.len(), logs.len());
        }
        for (i, l) in given.iter().enumerate() {
            if l.trim().is_empty() || sanitize_label(l) != *l {
                anyhow::bail!("--labels: `{l}` is not usable as a folder name (letters, digits, `-`, `_`, `.`)");
            }
            if given[..i].contains(l) {
                anyhow::bail!("--labels: `{l}` is given twice");
            }
        }
        return Ok(given.to_vec());
    }
    let mut out: Vec<String> = Vec::with_capacity(logs.len());
    for log in logs {
        let base = label_of(log);
        let mut l = base.clone();
        let mut k = 2;
        while out.contains(&l) {
            l = format!("{base}-{k}");
            k += 1;
        }
        out.push(l);
    }
    Ok(out)
}

/// What a fleet writes in its folder (each host's report is in its own subfolder).
pub const FLEET_OUTPUTS: &[&str] = &["fleet.json", "fleet.md", "trace.json"];

/// A fleet (see the module doc): each host read, analysed and reported on in turn, its
/// row kept for the table, its events added to the combined trace, then dropped.
fn run_fleet(a: &Args, logs: &[PathBuf], window: Option<(u64, u64)>) -> anyhow::Result<ExitCode> {
    use timeline::analysis::fleet::{self, FleetHost};
    let labels = fleet_labels(&a.labels, logs)?;
    if let Some(c) = &a.csv {
        super::output::check_folder("--csv", c)?;
    }
    for log in logs {
        if log.as_os_str() != "-" && !log.is_file() {
            anyhow::bail!("{}: no such file", log.display());
        }
    }
    let out = match (&a.out, a.json) {
        (Some(d), _) => Some(d.clone()),
        (None, false) => Some(PathBuf::from("out/fleet")),
        (None, true) => None,
    };
    if let Some(d) = &out {
        super::output::check_dir(d)?;
    }
    let opts = AnalyzeOptions { min_gap_ms: a.min_gap_ms, ..Default::default() };
    let outputs = Outputs::of(a);
    let mut dir = out.as_deref().map(|d| super::output::OutputDir::open(d, FLEET_OUTPUTS)).transpose()?;
    let mut rows: Vec<FleetHost> = Vec::with_capacity(logs.len());
    let mut failed = false;
    let mut warned = false;
    // One host: read, analyse, write its report, keep its row; `add` puts its events in
    // the fleet's trace.
    let mut host = |i: usize, add: &mut dyn FnMut(&str, &LaidOut<'_>) -> std::io::Result<()>| -> anyhow::Result<()> {
        let (label, log) = (&labels[i], &logs[i]);
        let (run, summary) = read_and_summarize(a, log, window, &opts)?;
        // The host's report and its part of the fleet's trace draw one lane assignment.
        let laid = LaidOut::new(&run);
        let outputs = Outputs { label: Some(label.clone()), ..outputs.clone() };
        if let Some(d) = &out {
            let mut hd = super::output::OutputDir::open(&d.join(label), OUTPUTS)?;
            write_outputs(&laid, &summary, &mut hd, &outputs)?;
            failed |= hd.has_failures();
            hd.finish();
        }
        if let Some(c) = &a.csv {
            failed |= write_csv_tables(&run, &summary, label, &c.join(label))?;
        }
        if summary.diagnostics.has_warnings() {
            warned = true;
            tracing::warn!("host {label} ({}):", log.display());
            print_warnings(&summary);
        }
        add(label, &laid)?;
        rows.push(FleetHost::of(label, label, &summary));
        Ok(())
    };
    let trace = dir.as_ref().is_some_and(|_| !outputs.charts.is_empty());
    if let (true, Some(d)) = (trace, dir.as_mut()) {
        let mut stopped: Option<anyhow::Error> = None;
        let r = timeline::export::trace::write_fleet_trace(&d.join("trace.json"), |t| {
            for i in 0..logs.len() {
                if let Err(e) = host(i, &mut |l, r| t.add(l, r)) {
                    stopped = Some(e);
                    return Err(std::io::Error::other("stopped"));
                }
            }
            Ok(())
        });
        if let Some(e) = stopped {
            return Err(e);
        }
        match r {
            Ok(()) => d.record("trace.json"),
            Err(e) => d.fail("trace.json", e),
        }
    } else {
        for i in 0..logs.len() {
            host(i, &mut |_, _| Ok(()))?;
        }
    }
    let table = fleet::build(rows, &opts);
    let written = match dir {
        Some(mut d) => {
            d.write("fleet.json", &serde_json::to_vec_pretty(&table)?)?;
            d.try_write("fleet.md", fleet::render_markdown(&table).as_bytes());
            failed |= d.has_failures();
            d.finish()
        }
        None => Vec::new(),
    };
    if a.json {
        let mut o = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
        serde_json::to_writer_pretty(&mut o, &table)?;
        writeln!(o)?;
        o.flush()?;
    } else {
        print_fleet(&table, out.as_deref().unwrap_or(Path::new(".")), &written);
    }
    Ok(if failed || (a.strict && warned) { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The fleet's human summary on stdout: a line per host, the worst host.
fn print_fleet(f: &timeline::analysis::fleet::Fleet, dir: &Path, written: &[String]) {
    println!("fleet       {} hosts", f.hosts.len());
    for t in &f.types {
        println!(
            "type        {}: {} proofs on {} hosts, median {} s/proof",
            t.proof_type,
            t.proofs_completed,
            t.hosts,
            t.median_s_per_proof.map_or("n/a".into(), num)
        );
    }
    for h in &f.hosts {
        let types: Vec<String> = h.types.iter().map(|t| format!("{} {} s/proof", t.proof_type, t.s_per_proof.map_or("n/a".into(), num))).collect();
        println!(
            "host        {}: {}; GPU busy {}; binding {}{}",
            h.label,
            if types.is_empty() { "no proof".to_string() } else { types.join(", ") },
            h.gpu_utilization.map_or("n/a".into(), |u| format!("{:.1} %", u * 100.0)),
            h.binding_resource,
            if h.problems.is_empty() { String::new() } else { format!(" — {}", h.problems[0]) }
        );
    }
    if let Some(w) = &f.worst_host {
        println!("worst       {}: {}", w.label, w.why);
    }
    println!("wrote       {}/ {} and one folder per host", dir.display(), written.join(" "));
}

/// `out/<file stem>` (`out/stdin` for `-`).
pub fn default_out_dir(log: &Path) -> PathBuf {
    let stem = if log.as_os_str() == "-" {
        "stdin".to_string()
    } else {
        log.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into())
    };
    PathBuf::from("out").join(stem)
}

/// Read a log (see [`super::input::read_run`]).
pub fn read_log(path: &Path, format: Option<Format>, force: bool) -> anyhow::Result<Run> {
    super::input::read_run(path, format, force)
}

/// `trace.json` being written on a thread of its own, to its temporary file (synced, not yet
/// in place: it is renamed in only once summary.json is, so that a folder never mixes two
/// runs); the error's text if it could not be written.
pub type PendingTrace<'s> = std::thread::ScopedJoinHandle<'s, Result<timeline::atomic::AtomicFile, String>>;

/// Start writing `trace.json` at `path` (the lanes assigned first, on that thread) in `sc`.
pub fn spawn_trace<'s, 'e: 's>(sc: &'s std::thread::Scope<'s, 'e>, laid: &'e LaidOut<'e>, path: PathBuf) -> PendingTrace<'s> {
    sc.spawn(move || {
        timed("lanes", || laid.lanes().len());
        timed("trace.json", || timeline::export::trace::write_trace_synced(laid, &path)).map_err(|e| e.to_string())
    })
}

/// Write everything into `dir`. An output that cannot be written is noted in `dir`
/// (the command exits 1) and the others are still written; `Err` only when not even
/// summary.json could be written. The outputs that draw rows (trace, waterfall SVG and PNG,
/// report.html) share `laid`'s lane assignment, computed once and only if one is drawn.
pub fn write_outputs(laid: &LaidOut<'_>, summary: &Summary, dir: &mut super::output::OutputDir, outputs: &Outputs) -> anyhow::Result<()> {
    std::thread::scope(|sc| {
        let trace = (!outputs.charts.is_empty()).then(|| spawn_trace(sc, laid, dir.join("trace.json")));
        write_outputs_with(laid, summary, dir, outputs, trace)
    })
}

/// [`write_outputs`] with `trace.json` already being written (`trace`, when charts are
/// asked for). summary.json first (nothing else of this run is put in place before it);
/// then the outputs go on the two cores of the target machine: the tables on this thread,
/// the charts and report.html on another, `trace.json` on its own; they are recorded in the
/// folder's order once all are done.
pub fn write_outputs_with(laid: &LaidOut<'_>, summary: &Summary, dir: &mut super::output::OutputDir, outputs: &Outputs, trace: Option<PendingTrace<'_>>) -> anyhow::Result<()> {
    // The tables and charts that read the run need the analysis feature.
    #[cfg_attr(not(feature = "analysis"), allow(unused_variables))]
    let run = laid.run();
    #[cfg_attr(not(feature = "analysis"), allow(unused_variables))]
    let charts = !outputs.charts.is_empty();
    // The charts' thread starts at once: the waterfall's scene is built while summary.json
    // is written; it writes its first file only once summary.json is handed over (`gate`:
    // true), and nothing when summary.json could not be written (false).
    #[cfg_attr(not(feature = "analysis"), allow(unused_variables))]
    let (gate, gated) = std::sync::mpsc::channel::<bool>();
    #[cfg_attr(not(feature = "analysis"), allow(unused_variables))]
    let dir_ro: &super::output::OutputDir = dir;
    // Files are put in place (synced, renamed) on a thread of their own, in the order they
    // are handed over, summary.json first: the writers do not wait for the disk.
    let committer = timeline::atomic::Committer::start();
    // Each output written (Ok) or not (Err: why), in the order the folder records them.
    let written = std::thread::scope(|sc| -> anyhow::Result<_> {
        // Owned here: should anything below panic, the sender goes with this closure and the
        // charts' thread, waiting at the gate, ends instead of waiting for ever.
        let gate = gate;
        #[cfg(feature = "analysis")]
        let drawn = charts.then(|| sc.spawn(|| committer.deferring(|| draw_charts(laid, summary, dir_ro, outputs, gated))));
        #[cfg(not(feature = "analysis"))]
        let _ = (sc, gated);
        // Streamed to the file (a 1.2M-event log's summary.json is 140 MB: never in memory).
        let json = timed("summary.json", || {
            timeline::atomic::write_uncommitted(&dir_ro.join("summary.json"), |w| {
                // Buffered here: serde_json writes token by token, and through `dyn Write`
                // each token was a call.
                let mut b = std::io::BufWriter::with_capacity(1 << 20, w);
                timeline::export::summary_json::write(&mut b, summary)?;
                b.flush()
            })
        });
        let json = match json {
            Ok(f) => f,
            Err(e) => {
                let _ = gate.send(false);
                // The charts' thread stops; the trace's temporary file goes with it (dropped
                // uncommitted).
                #[cfg(feature = "analysis")]
                if let Some(h) = drawn {
                    let _ = h.join();
                }
                if let Some(h) = trace {
                    let _ = h.join();
                }
                return Err(super::output::write_failed(e));
            }
        };
        committer.commit(json, true);
        let _ = gate.send(true);
        committer.deferring(|| {
            #[cfg_attr(not(feature = "analysis"), allow(unused_mut))]
            let mut done: Vec<(String, Result<(), String>)> = vec![("summary.json".to_string(), Ok(()))];
            #[cfg(feature = "analysis")]
            if outputs.tables {
                // One table at a time (only one in memory beside the run; the spans' a row
                // group at a time); each is written whole or not at all, and one that fails
                // does not stop the others.
                let keys = timeline::export::keys::RunKeys::new(run, summary, &outputs.label(summary));
                for name in timeline::export::tables::RUN_TABLES {
                    let file = format!("{name}.parquet");
                    let path = dir_ro.join(&file);
                    let r = timed(&file, || timeline::export::tables::write_run_table(name, run, summary, &keys, &path));
                    done.push((file, r.map_err(|e| e.to_string())));
                }
            }
            #[cfg_attr(not(feature = "analysis"), allow(unused_mut))]
            let mut chart_refs: Vec<ChartRef> = Vec::new();
            #[cfg(feature = "analysis")]
            if let Some(h) = drawn {
                let (refs, results) = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                chart_refs = refs;
                done.extend(results);
            }
            if let Some(h) = trace {
                let r = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                done.insert(1, ("trace.json".into(), r.and_then(|f| f.commit().map_err(|e| e.to_string()))));
            }
            Ok((done, chart_refs))
        })
    });
    // Every file in place, or the reason it is not.
    let not_in_place = committer.finish();
    let (mut done, mut chart_refs) = written?;
    for (dest, e) in not_in_place {
        let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name == "summary.json" {
            // Nothing after it was put in place either.
            return Err(super::output::write_failed(e));
        }
        // report.md links only the charts that are in place.
        chart_refs.retain(|c| c.file != name);
        match done.iter_mut().find(|(n, _)| *n == name) {
            Some((_, r)) => *r = Err(e.to_string()),
            None => done.push((name, Err(e.to_string()))),
        }
    }
    for (name, r) in done {
        match r {
            Ok(()) => dir.record(&name),
            Err(e) => dir.fail(&name, e),
        }
    }
    // report.md shows every chart asked for, or is not written: a report that leaves out
    // a chart that could not be put in place (a full disk) would be no run's whole report.
    let missing: Vec<&str> = timeline::report::STANDARD_CHARTS
        .iter()
        .filter(|(section, _, _)| outputs.chart(section))
        .filter(|(_, file, _)| !chart_refs.iter().any(|c| c.file == *file))
        .map(|(_, file, _)| *file)
        .collect();
    if !missing.is_empty() {
        dir.fail("report.md", format!("not written: its charts {} are not in place", missing.join(", ")));
    } else {
        let md = timeline::report::render(summary, &chart_refs);
        if let Err(e) = dir.write("report.md", md.as_bytes()) {
            dir.fail("report.md", format!("{e:#}"));
        }
    }
    Ok(())
}

/// The charts asked for and report.html (which embeds the SVG charts): the charts drawn,
/// and each output written or not, in the folder's order.
#[cfg(feature = "analysis")]
fn draw_charts(
    laid: &LaidOut<'_>,
    summary: &Summary,
    dir: &super::output::OutputDir,
    outputs: &Outputs,
    gate: std::sync::mpsc::Receiver<bool>,
) -> (Vec<ChartRef>, Vec<(String, Result<(), String>)>) {
    use timeline::chart;
    let run = laid.run();
    let mut chart_refs: Vec<ChartRef> = Vec::new();
    let mut done: Vec<(String, Result<(), String>)> = Vec::new();
    let marks = timeline::analysis::gaps::marks(&summary.idle_gaps);
    // The waterfall's layout and scene, once for the SVG and the PNG.
    let wf = (outputs.chart("waterfall") || outputs.chart("waterfall-png")).then(|| timed("waterfall scene", || chart::Waterfall::new(laid, &marks)));
    // Nothing is put in place before summary.json; nothing at all if it was not.
    if gate.recv() != Ok(true) {
        return (chart_refs, done);
    }
    // The SVG charts report.html embeds, as written (the files are put in place later, by
    // the committer).
    let mut svgs: Vec<(String, String)> = Vec::new();
    for (section, file, caption) in timeline::report::STANDARD_CHARTS {
        if !outputs.chart(section) {
            continue;
        }
        let path = dir.join(file);
        let r = timed(file, || match section {
            "waterfall" => wf.as_ref().expect("made when the waterfall is asked for").svg(&path),
            "utilization" => chart::utilization_svg(run, &path),
            "gaps" => chart::gaps_svg(&marks, &path),
            "memory" => chart::memory_svg(run, &path),
            _ => chart::phases_svg(run, &path),
        });
        let r = r.map(|svg| {
            let chart = ChartRef::new(section, file, caption);
            // Not the waterfall's: the page draws its own, interactive.
            if section != "waterfall" {
                svgs.push((chart.caption.clone(), svg));
            }
            chart_refs.push(chart);
        });
        done.push((file.to_string(), r.map_err(|e| e.to_string())));
    }
    // report.html: the page embeds the SVG charts just written — all of those asked for, or
    // it is not written (a page without a chart that could not be drawn would be no run's
    // whole page).
    let failed: Vec<&str> = done.iter().filter(|(_, r)| r.is_err()).map(|(f, _)| f.as_str()).collect();
    if !failed.is_empty() {
        let why = format!("not written: its charts {} could not be", failed.join(", "));
        done.push(("report.html".into(), Err(why)));
    } else {
        let embedded: Vec<timeline::report::html::HtmlChart<'_>> = svgs.iter().map(|(t, s)| timeline::report::html::HtmlChart { title: t, svg: s }).collect();
        let r = timed("report.html", || {
            let page = timeline::report::html::render(laid, summary, &embedded);
            super::output::write_atomic(&dir.join("report.html"), page.as_bytes())
        });
        done.push(("report.html".into(), r.map_err(|e| format!("{e:#}"))));
    }
    if outputs.chart("waterfall-png") {
        let r = timed("waterfall.png", || wf.as_ref().expect("made when the waterfall is asked for").png(&dir.join("waterfall.png")));
        done.push(("waterfall.png".into(), r.map_err(|e| e.to_string())));
    }
    (chart_refs, done)
}

/// `f()`, its wall time logged at debug level (`RUST_LOG=debug`: where an analyze's time
/// goes, output by output).
pub fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t0 = std::time::Instant::now();
    let r = f();
    tracing::debug!("{what}: {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    r
}

/// `--csv DIR`: the run's tables as CSV in `csv` (its own locked folder, holding this
/// run's CSVs only). Returns whether one could not be written (named on stderr).
pub fn write_csv_tables(run: &Run, summary: &Summary, label: &str, csv: &Path) -> anyhow::Result<bool> {
    #[cfg(feature = "analysis")]
    {
        use timeline::export::{csv::write_csv, keys::RunKeys, parquet::ParquetError, tables};
        let mut d = super::output::OutputDir::open(csv, CSV_OUTPUTS)?;
        let keys = RunKeys::new(run, summary, label);
        for name in tables::RUN_TABLES {
            let file = format!("{name}.csv");
            let path = d.join(&file);
            let r = tables::run_table(name, run, summary, &keys)
                .map_err(|source| ParquetError::Polars { path: path.display().to_string(), source })
                .and_then(|mut df| write_csv(&mut df, &path));
            match r {
                Ok(()) => d.record(&file),
                Err(e) => d.fail(&file, e),
            }
        }
        let failed = d.has_failures();
        let written = d.finish();
        tracing::info!("wrote {}/ {}", csv.display(), written.join(" "));
        Ok(failed)
    }
    #[cfg(not(feature = "analysis"))]
    {
        let _ = (run, summary, label);
        anyhow::bail!("--csv {}: this proofscope was built without the `analysis` feature (no tables)", csv.display())
    }
}

/// Reader warnings on stderr, with line numbers.
pub fn print_warnings(s: &Summary) {
    let d = &s.diagnostics;
    if !d.has_warnings() {
        return;
    }
    // (The input's problems were said by the reader: cmd::input::read_run.)
    for w in d.warnings.iter().take(10) {
        tracing::warn!("line {}: {}", w.line, w.message);
    }
    // More rejected lines than listed (open spans are counted on the next line, not listed:
    // "… 10 more" with nothing before it was run 56's output).
    let shown = d.warnings.len().min(10) as u64;
    if d.lines_rejected > shown && shown > 0 {
        tracing::warn!("… {} more rejected lines (see report.md)", d.lines_rejected - shown);
    }
    // (A Chrome trace counts its events, an nsys export its rows, not lines.)
    let unit = match d.format.as_str() {
        "chrome-trace" => "events",
        "nsys-sqlite" => "rows",
        _ => "lines",
    };
    tracing::warn!(
        "{} {unit} rejected ({} duplicates), {} spans never ended (of {} {unit} read)",
        d.lines_rejected,
        d.duplicates,
        d.open_spans,
        d.lines_total
    );
}

fn f2(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{v:.2}"))
}

/// The concise human summary on stdout.
pub fn print_human(s: &Summary, dir: &Path, written: &[String]) {
    let d = &s.diagnostics;
    println!(
        "{} — {} log, {} {}, {} spans, {} jobs, {} device(s)",
        s.input.as_deref().unwrap_or("run"),
        s.run.format,
        d.lines_total,
        // (A Chrome trace counts its events, an nsys export its rows.)
        match d.format.as_str() {
            "chrome-trace" => "events",
            "nsys-sqlite" => "rows",
            _ => "lines",
        },
        s.run.spans,
        s.run.jobs,
        s.run.devices.len()
    );
    println!("verdict     {}", s.verdict.headline);
    if s.proof_types.len() > 1 {
        for t in &s.proof_types {
            println!(
                "type        {}: {} proofs; {} s/proof total, {} s/proof steady state; latency p50 {} s; binding {}",
                t.proof_type,
                t.proofs_completed,
                f2(t.total_s_per_proof),
                f2(t.steady_state_s_per_proof),
                f2(t.latency_p50_s),
                t.binding_resource
            );
        }
    }
    if !s.daemon_runs.is_empty() {
        let runs: Vec<String> = s.daemon_runs.iter().map(|r| format!("#{} from line {}", r.index, r.first_line)).collect();
        println!(
            "restarts    {} daemon runs ({}), placed {}; each analysed in report.md",
            s.daemon_runs.len(),
            runs.join(", "),
            if s.daemon_runs.iter().any(|r| r.placed_by == "wall_clock") { "by the wall clock" } else { "end to end" }
        );
    }
    let t = &s.throughput;
    let tag = match (&s.primary_proof_type, s.proof_types.len() > 1) {
        (Some(p), true) => format!(" ({p})"),
        _ => String::new(),
    };
    println!(
        "throughput{tag}  {} proofs; {} s/proof total, {} s/proof steady state; latency p50 {} s",
        t.proofs_completed,
        f2(t.total_s_per_proof),
        f2(t.steady_state_s_per_proof),
        f2(t.latency_p50_s)
    );
    // "GPU 0" on GPU runs and cuzk logs, "CPU device 0" on a run of the CPU backend.
    let dev = timeline::report::device_word(s);
    for u in &s.utilization.devices {
        // Device work without any `gpu` call (another tool's trace): the kernel level alone,
        // over the window of that work.
        if let (0, Some(k)) = (u.gpu_spans + u.open_gpu_spans, u.kernel_utilization) {
            println!("{:<11} kernels {:.1} % busy over {} s", format!("{dev} {}", u.device), k * 100.0, num(u.window_ms / 1e3));
            continue;
        }
        println!(
            "{:<11} {:.1} % busy (union of {} workers over {:.1} s){}",
            format!("{dev} {}", u.device),
            u.gpu_utilization * 100.0,
            u.workers,
            u.window_ms / 1e3,
            u.kernel_utilization.map_or(String::new(), |k| format!(", kernels {:.1} %", k * 100.0))
        );
    }
    // Several devices: the host verdict with its evidence, a line per device (summary.json's
    // `multi_device`, report.md's *Devices and the host*); nothing for one device.
    if let Some(md) = &s.multi_device {
        let h = &md.host;
        let which = match (&h.host_cause, h.device) {
            (Some(c), _) => format!(" ({c})"),
            (None, Some(d)) => format!(" (device {d})"),
            (None, None) => String::new(),
        };
        println!("devices     {}{which}: {}", h.binding, h.headline);
        for e in &h.evidence {
            println!("            {e}");
        }
    }
    let g = &s.idle_gap_totals;
    let causes: Vec<String> =
        g.by_cause.iter().filter(|c| c.count > 0).map(|c| format!("{} {} s ({}×)", c.cause, num(c.total_ms / 1e3), c.count)).collect();
    if !causes.is_empty() {
        println!("idle        {}", causes.join(", "));
    }
    if !s.cross_job_transitions.is_empty() {
        let v: Vec<String> = s.cross_job_transitions.iter().take(10).map(|x| format!("{:.0}", x.gap_ms)).collect();
        // The cuzk campaign's transition figure: negative when the next job started first.
        println!(
            "transitions {} ms{} (per device, a job's first GPU start after its predecessor's second-to-last GPU end; negative: it started before)",
            v.join(", "),
            if s.cross_job_transitions.len() > 10 { ", …" } else { "" }
        );
    }
    println!("wrote       {}/ {}", dir.display(), written.join(" "));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const SAMPLE: &str = include_str!("../../timeline/assets/cuzk-sample.log");

    fn args(log: PathBuf, out: PathBuf) -> Args {
        Args { log: vec![log], out: Some(out), json: false, labels: vec![], strict: true, force: false, min_gap_ms: 1.0, format: None, no_charts: true, charts: vec![], no_tables: false, csv: None, window: None }
    }

    #[test]
    fn windows_parse_in_seconds_and_bad_ones_name_the_flag() {
        assert_eq!(parse_window("9..9.5").unwrap(), (9_000_000_000, 9_500_000_000));
        assert_eq!(parse_window(" 0 .. 0.001 ").unwrap(), (0, 1_000_000));
        for bad in ["9", "9..", "..9", "2..1", "1..1", "-1..2", "a..b", "1..inf", "nan..2"] {
            let e = parse_window(bad).unwrap_err().to_string();
            assert!(e.contains("--window") && e.contains(bad.trim()), "{bad}: {e}");
        }
    }

    #[test]
    fn a_window_zooms_and_an_empty_one_is_an_error_naming_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("sample.log");
        fs::write(&log, SAMPLE).unwrap();
        let whole = read_log(&log, None, false).unwrap();
        let end_s = whole.end_ns() as f64 / 1e9;
        let mut a = args(log.clone(), dir.path().join("w"));
        a.window = Some(format!("{:.3}..{:.3}", end_s / 4.0, end_s / 2.0));
        assert_eq!(run(a).unwrap(), ExitCode::SUCCESS);
        let s: serde_json::Value = serde_json::from_slice(&fs::read(dir.path().join("w/summary.json")).unwrap()).unwrap();
        assert!(s["meta"]["extra"]["window_ns"].is_array(), "{}", s["meta"]);
        let mut a = args(log, dir.path().join("x"));
        a.window = Some(format!("{}..{}", end_s + 10.0, end_s + 20.0));
        let e = run(a).unwrap_err().to_string();
        assert!(e.contains("no span") && e.contains("ends at"), "{e}");
    }

    #[test]
    fn a_gzipped_log_is_analysed_like_the_plain_one_with_or_without_its_name_in_the_header() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let plain = read_log(&{
            let p = dir.path().join("sample.log");
            fs::write(&p, SAMPLE).unwrap();
            p
        }, None, false)
        .unwrap();
        assert!(!plain.spans.is_empty());
        for with_name in [false, true] {
            // `gzip` stores the original file name (FNAME) unless given -n.
            let mut b = flate2::GzBuilder::new();
            if with_name {
                b = b.filename("sample.log");
            }
            let mut enc = b.write(Vec::new(), flate2::Compression::default());
            enc.write_all(SAMPLE.as_bytes()).unwrap();
            let p = dir.path().join(format!("sample-{with_name}.log.gz"));
            fs::write(&p, enc.finish().unwrap()).unwrap();
            let run = read_log(&p, None, false).unwrap();
            assert_eq!(run.spans, plain.spans, "gzip with name {with_name}");
        }
    }

    #[test]
    fn analyze_writes_the_report_directory() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("sample.log");
        fs::write(&log, SAMPLE).unwrap();
        let out = dir.path().join("report");
        let code = run(args(log, out.clone())).unwrap();
        assert_eq!(format!("{code:?}"), format!("{:?}", ExitCode::SUCCESS));
        for f in ["summary.json", "report.md"] {
            assert!(out.join(f).exists(), "{f} missing");
        }
        #[cfg(feature = "analysis")]
        for f in ["partitions.parquet", "jobs.parquet", "spans.parquet", "counters.parquet", "gaps.parquet"] {
            assert!(out.join(f).exists(), "{f} missing");
        }
        let s: Summary = serde_json::from_slice(&fs::read(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(s.proofs_completed, 3);
        assert_eq!(s.input.as_deref(), Some(dir.path().join("sample.log").to_str().unwrap()));
        // report.html embeds the charts as they were written (the files are put in place
        // by the committer, after the page is made).
        #[cfg(feature = "analysis")]
        {
            let out = dir.path().join("charts");
            let mut a = args(dir.path().join("sample.log"), out.clone());
            a.no_charts = false;
            a.charts = vec!["utilization", "gaps", "phases"];
            assert_eq!(format!("{:?}", run(a).unwrap()), format!("{:?}", ExitCode::SUCCESS));
            let page = fs::read_to_string(out.join("report.html")).unwrap();
            for f in ["utilization.svg", "gaps.svg", "phases.svg"] {
                let svg = fs::read_to_string(out.join(f)).unwrap();
                let body = &svg[svg.find("<svg").unwrap()..];
                assert!(page.contains(body), "report.html does not hold {f} as written");
            }
        }
    }

    #[test]
    fn strict_fails_on_rejected_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("bad.log");
        fs::write(&log, format!("{SAMPLE}TIMELINE,5,NOT_AN_EVENT,x,partition=0\n")).unwrap();
        let code = run(args(log.clone(), dir.path().join("o"))).unwrap();
        assert_eq!(format!("{code:?}"), format!("{:?}", ExitCode::from(1)));
        let mut a = args(log, dir.path().join("o2"));
        a.strict = false;
        assert_eq!(format!("{:?}", run(a).unwrap()), format!("{:?}", ExitCode::SUCCESS));
    }

    /// Issue 18: `--no-charts` into an earlier report folder used to leave the earlier run's
    /// charts and trace beside the new summary.
    #[test]
    fn a_report_folder_holds_one_run_only() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("sample.log");
        fs::write(&log, SAMPLE).unwrap();
        let out = dir.path().join("report");
        let mut a = args(log.clone(), out.clone());
        a.no_charts = false;
        assert_eq!(run(a).unwrap(), ExitCode::SUCCESS);
        assert!(out.join("trace.json").exists());
        fs::write(out.join("notes.txt"), "mine").unwrap();
        assert_eq!(run(args(log, out.clone())).unwrap(), ExitCode::SUCCESS);
        let mut names: Vec<String> = fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        #[cfg(feature = "analysis")]
        let want = [".proofscope.lock", "counters.parquet", "gaps.parquet", "jobs.parquet", "notes.txt", "partitions.parquet", "report.md", "spans.parquet", "summary.json"];
        #[cfg(not(feature = "analysis"))]
        let want = [".proofscope.lock", "notes.txt", "report.md", "summary.json"];
        assert_eq!(names, want);
    }

    #[test]
    fn strict_fails_on_input_that_is_not_a_run() {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in [("empty.log", Vec::new()), ("random.bin", (0..20000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect())] {
            let log = dir.path().join(name);
            fs::write(&log, bytes).unwrap();
            assert_eq!(run(args(log.clone(), dir.path().join(format!("o-{name}")))).unwrap(), ExitCode::from(1), "{name}");
            let mut a = args(log, dir.path().join(format!("p-{name}")));
            a.strict = false;
            assert_eq!(run(a).unwrap(), ExitCode::SUCCESS, "{name}");
        }
        // JSON lines read as a cuzk log: no TIMELINE line.
        let log = dir.path().join("run.jsonl");
        fs::write(&log, "{\"type\":\"span\",\"kind\":\"gpu\",\"start_ns\":0,\"end_ns\":5,\"job\":\"a\"}\n").unwrap();
        let mut a = args(log, dir.path().join("q"));
        a.format = Some(Format::Cuzk);
        assert_eq!(run(a).unwrap(), ExitCode::from(1));
    }

    #[test]
    fn missing_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = run(args(dir.path().join("nope.log"), dir.path().join("o"))).unwrap_err();
        assert!(format!("{err:#}").contains("nope.log"));
    }

    #[test]
    fn fleet_labels_come_from_file_names_or_the_flag() {
        let logs: Vec<PathBuf> = ["/l/gpu-1.log.gz", "/m/gpu-1.log", "/l/gpu 2.jsonl.zst", "-"].iter().map(PathBuf::from).collect();
        assert_eq!(fleet_labels(&[], &logs).unwrap(), ["gpu-1", "gpu-1-2", "gpu_2", "stdin"]);
        let given: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        assert_eq!(fleet_labels(&given, &logs).unwrap(), given);
        for (bad, why) in [(vec!["a"], "1 labels for 4 logs"), (vec!["a", "b", "c", "a"], "given twice"), (vec!["a", "b/c", "d", "e"], "folder name")] {
            let bad: Vec<String> = bad.iter().map(|s| s.to_string()).collect();
            let e = fleet_labels(&bad, &logs).unwrap_err().to_string();
            assert!(e.contains("--labels") && e.contains(why), "{e}");
        }
    }

    #[test]
    fn inputs_expand_directories_and_globs() {
        let d = tempfile::tempdir().unwrap();
        for f in ["b.log", "a.log.gz", ".hidden", "c.txt"] {
            fs::write(d.path().join(f), "x").unwrap();
        }
        let (logs, fleet) = expand_inputs(&[d.path().to_path_buf()]).unwrap();
        let names: Vec<String> = logs.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!((names, fleet), (vec!["a.log.gz".to_string(), "b.log".into(), "c.txt".into()], true));
        let (logs, fleet) = expand_inputs(&[d.path().join("*.log")]).unwrap();
        assert_eq!((logs.len(), fleet), (1, true));
        let (logs, fleet) = expand_inputs(&[d.path().join("b.log")]).unwrap();
        assert_eq!((logs.len(), fleet), (1, false));
        assert!(expand_inputs(&[d.path().join("*.none")]).unwrap_err().to_string().contains("no file matches"));
        assert!(expand_inputs(&["-".into(), "-".into()]).is_err());
        let empty = d.path().join("empty");
        fs::create_dir(&empty).unwrap();
        assert!(expand_inputs(&[empty]).unwrap_err().to_string().contains("without any log file"));
    }

    #[test]
    fn default_dir_follows_the_log_name() {
        assert_eq!(default_out_dir(Path::new("/var/log/cuzk.log")), PathBuf::from("out/cuzk"));
        assert_eq!(default_out_dir(Path::new("-")), PathBuf::from("out/stdin"));
    }
}
