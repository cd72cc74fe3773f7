//! Fault injection against the built binary (issue 18, "nothing lost"): a full disk at a
//! chosen number of free bytes, `/dev/full`, SIGKILL and SIGINT at random moments of
//! `prove`, `analyze` and `sweep`, and a second writer in the same output folder. After
//! each fault, the invariants hold:
//!
//! 1. the exit code is 0, 1 or 2 (130 after SIGINT in `prove`), never a panic or an abort;
//! 2. no visible file is truncated: every output equals, byte for byte, the complete file
//!    of one of the runs that wrote the folder;
//! 3. a report folder never mixes two runs after a full disk or a second writer (after a
//!    SIGKILL in the middle of writing, each file is still whole);
//! 4. a file that could not be replaced is the old file, intact (parameter file, timeline,
//!    report);
//! 5. an output that could not be written is named on stderr, and the exit code says so;
//! 6. every proof on disk is complete and verifies against its public inputs, and every
//!    proof whose file exists has its partitions' `gpu` spans in the timeline;
//! 7. every line of a killed run's timeline is a whole record (nothing rejected);
//! 8. no temporary file is left by a run that ended on its own.
//!
//! The full disk is a small tmpfs mounted for the test (`mount -t tmpfs -o size=…`), which
//! needs root: CI runs as root (and sets `PROOFSCOPE_REQUIRE_TMPFS`, so that a tmpfs that
//! cannot be mounted fails the suite instead of skipping it). Elsewhere those tests print why
//! they are skipped (no LD_PRELOAD, no FUSE; a loop device needs root as well). `/dev/full`, the kills and the
//! second writer need nothing. `PROOFSCOPE_FAULT_SEED` replays the random moments.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use common::{run, spawn, strings, Ran, PHASE8, SAMPLE};

const LIMIT: Duration = Duration::from_secs(120);

// ---- fixtures -------------------------------------------------------------------------

struct Fixtures {
    dir: tempfile::TempDir,
    /// How long each reference run took (the kills aim inside that).
    took: BTreeMap<String, Duration>,
}

impl Fixtures {
    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }
}

/// Logs, configs, a small parameter file, and the complete reports of two runs (A and B)
/// of `analyze` and `sweep`, made once.
fn fixtures() -> &'static Fixtures {
    static F: OnceLock<Fixtures> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("A.log"), SAMPLE).unwrap();
        // B: the same run as JSON lines (different outputs, same kind of report).
        let run = timeline::read::read_str(SAMPLE, None);
        let mut b = Vec::new();
        timeline::write::jsonl::write_run(&mut b, &run).unwrap();
        std::fs::write(p.join("B.jsonl"), &b).unwrap();
        std::fs::write(p.join("big.jsonl"), big_log()).unwrap();
        std::fs::write(p.join("phase8.toml"), PHASE8).unwrap();
        let mut f = Fixtures { dir, took: BTreeMap::new() };
        let ok = |r: &Ran| assert_eq!(r.code, Some(0), "{:?}\n{}", r.args, r.stderr);
        ok(&run_in(f.dir.path(), &["setup", "--constraints", "2^8", "--params", "params.bin"]));
        for (name, args) in reference_runs(&f) {
            let d = f.dir.path().join(&name);
            std::fs::create_dir_all(&d).unwrap();
            let r = spawn(&args, &d, None).wait(LIMIT);
            ok(&r);
            f.took.insert(name, r.elapsed);
        }
        f
    })
}

/// The runs whose complete outputs the invariants compare against.
fn reference_runs(f: &Fixtures) -> Vec<(String, Vec<String>)> {
    vec![
        ("ref-analyze-A".into(), strings(&["analyze", &f.path("A.log"), "-o", "out"])),
        ("ref-analyze-B".into(), strings(&["analyze", &f.path("B.jsonl"), "-o", "out"])),
        ("ref-analyze-big".into(), strings(&["analyze", &f.path("big.jsonl"), "-o", "out"])),
        ("ref-sweep-A".into(), strings(&["sweep", &f.path("phase8.toml"), "--vary", "pw=1..3", "-o", "out"])),
        ("ref-sweep-B".into(), strings(&["sweep", &f.path("phase8.toml"), "--vary", "pw=2..6:2", "--vary", "gw=1,2", "-o", "out"])),
    ]
}

/// A synthetic JSON-lines run big enough that analysing it takes a while (a target for kills).
fn big_log() -> String {
    let mut s = String::from("{\"type\":\"meta\",\"schema_version\":1,\"source\":\"t\",\"tool_version\":\"0\"}\n");
    let ms = 1_000_000u64;
    for job in 0..60u64 {
        for part in 0..40u64 {
            let t0 = (job * 40 + part) * 50 * ms;
            s.push_str(&format!("{{\"type\":\"span\",\"kind\":\"synthesis\",\"start_ns\":{},\"end_ns\":{},\"job\":\"j{job}\",\"partition\":{part},\"worker\":{}}}\n", t0, t0 + 400 * ms, part % 8));
            s.push_str(&format!("{{\"type\":\"span\",\"kind\":\"gpu\",\"start_ns\":{},\"end_ns\":{},\"job\":\"j{job}\",\"partition\":{part},\"worker\":{},\"device\":0}}\n", t0 + 400 * ms, t0 + 440 * ms, part % 2));
            for (k, kind) in ["ntt", "msm_h", "msm_l", "msm_a"].iter().enumerate() {
                let a = t0 + 400 * ms + k as u64 * 9 * ms;
                s.push_str(&format!("{{\"type\":\"span\",\"kind\":\"{kind}\",\"start_ns\":{a},\"end_ns\":{},\"job\":\"j{job}\",\"partition\":{part},\"worker\":{},\"device\":0}}\n", a + 8 * ms, part % 2));
            }
        }
    }
    s
}

fn run_in(dir: &Path, args: &[&str]) -> Ran {
    run(args, dir, LIMIT)
}

/// The complete files of a reference run, by name.
fn reference(name: &str) -> BTreeMap<String, Vec<u8>> {
    files(&fixtures().dir.path().join(name).join("out"))
}

/// Visible files of a folder (not `.proofscope.lock`, not `.tmp-…`), by name.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with('.') && e.path().is_file() {
                out.insert(name, std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

fn temps(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with(".tmp-")).collect())
        .unwrap_or_default()
}

/// Invariants 2 and 3: every file of `dir` is a complete file of one of `runs`; with
/// `one_run`, all of the same run. Returns the runs each file could belong to.
fn check_files(dir: &Path, runs: &[(&str, BTreeMap<String, Vec<u8>>)], one_run: bool, context: &str) -> Vec<String> {
    let got = files(dir);
    let mut possible: Vec<&str> = runs.iter().map(|r| r.0).collect();
    for (name, bytes) in &got {
        let from: Vec<&str> = runs.iter().filter(|(_, files)| files.get(name) == Some(bytes)).map(|r| r.0).collect();
        assert!(!from.is_empty(), "{context}: {name} ({} bytes) is no complete file of any run: truncated or mixed", bytes.len());
        possible.retain(|r| from.contains(r));
    }
    if one_run {
        assert!(!possible.is_empty(), "{context}: the folder mixes runs: {:?}", got.keys().collect::<Vec<_>>());
    }
    possible.iter().map(|s| s.to_string()).collect()
}

/// A seeded generator for the random moments (SplitMix64).
struct Rng(u64);

impl Rng {
    fn new(what: &str) -> Rng {
        let seed = std::env::var("PROOFSCOPE_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
        });
        eprintln!("{what}: PROOFSCOPE_FAULT_SEED={seed}");
        Rng(seed)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn millis(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(lo + self.next() % (hi - lo))
    }
}

// ---- a small file system ----------------------------------------------------------------

/// A tmpfs of a given size, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(bytes: u64) -> Result<Tmpfs, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root: mounting a tmpfs needs root (CI runs as root)".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!("mount -t tmpfs failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        Ok(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn free(&self) -> u64 {
        let c = std::ffi::CString::new(self.path().as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: statvfs writes into the zeroed struct we own.
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut s) }, 0);
        s.f_bavail as u64 * s.f_frsize as u64
    }

    /// Fill the file system until about `leave` bytes are free.
    fn fill(&self, leave: u64) {
        let _ = std::fs::remove_file(self.path().join("filler"));
        let free = self.free();
        if free > leave {
            let f = std::fs::File::create(self.path().join("filler")).unwrap();
            let mut w = std::io::BufWriter::new(f);
            let chunk = vec![0u8; 4096];
            let mut left = free - leave;
            while left > 0 {
                let n = left.min(4096) as usize;
                if std::io::Write::write_all(&mut w, &chunk[..n]).is_err() {
                    break;
                }
                left -= n as u64;
            }
            let _ = std::io::Write::flush(&mut w);
        }
    }

    /// Empty it (the filler and everything else).
    fn clear(&self) {
        for e in std::fs::read_dir(self.path()).unwrap().flatten() {
            if e.path().is_dir() {
                std::fs::remove_dir_all(e.path()).unwrap();
            } else {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(self.dir.path()).status();
    }
}

fn tmpfs_or_skip(bytes: u64, test: &str) -> Option<Tmpfs> {
    match Tmpfs::mount(bytes) {
        Ok(t) => Some(t),
        Err(why) => {
            // CI (root) sets PROOFSCOPE_REQUIRE_TMPFS: there a skip would hide the suite.
            if std::env::var_os("PROOFSCOPE_REQUIRE_TMPFS").is_some() {
                panic!("{test}: PROOFSCOPE_REQUIRE_TMPFS is set but {why}");
            }
            eprintln!("SKIPPED {test}: {why}");
            None
        }
    }
}

fn copy_into(files: &BTreeMap<String, Vec<u8>>, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for (n, b) in files {
        std::fs::write(dir.join(n), b).unwrap();
    }
}

/// Invariant 1 (plus 8 for a run that ended on its own).
fn sane(r: &Ran, allowed: &[i32]) {
    assert!(r.misbehaved().is_none() || r.code == Some(130), "{}", r.misbehaved().unwrap_or_default());
    assert!(r.code.is_some_and(|c| allowed.contains(&c)), "{:?}: exit {:?}, expected one of {allowed:?}\n{}", r.args, r.code, r.stderr);
}

// ---- proofs ----------------------------------------------------------------------------

/// Invariant 6: every `.proof` in `dir` is complete and verifies; returns the job ids.
fn check_proofs(dir: &Path, partitions: usize) -> Vec<String> {
    let (params, _) = prover::Parameters::read_file(&fixtures().dir.path().join("params.bin")).unwrap();
    let mut jobs = Vec::new();
    for (name, bytes) in files(dir) {
        let Some(job) = name.strip_suffix(".proof") else { continue };
        assert_eq!(bytes.len(), partitions * prover::proof::PROOF_BYTES, "{name}: truncated");
        let inputs: Vec<Vec<String>> = serde_json::from_slice(&std::fs::read(dir.join(format!("{job}.inputs.json"))).unwrap_or_else(|e| panic!("{job}.inputs.json: {e}"))).unwrap();
        assert_eq!(inputs.len(), partitions);
        for (k, chunk) in bytes.chunks(prover::proof::PROOF_BYTES).enumerate() {
            let proof = prover::Proof::from_bytes(chunk).unwrap();
            let scalars: Vec<prover::Scalar> = inputs[k]
                .iter()
                .map(|s| {
                    let hex = s.trim_start_matches("Scalar(0x").trim_end_matches(')');
                    let mut be = [0u8; 32];
                    for (i, b) in be.iter_mut().enumerate() {
                        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
                    }
                    Option::from(prover::Scalar::from_bytes_be(&be)).unwrap()
                })
                .collect();
            assert!(prover::verifier::verify(&params.vk, &proof, &scalars).unwrap(), "{name} partition {k} does not verify");
        }
        jobs.push(job.to_string());
    }
    jobs
}

/// Invariant 7: no line set aside by the reader, but a torn last one (no newline).
fn whole_lines_but_a_torn_tail(path: &Path, d: &timeline::Diagnostics) {
    let bytes = std::fs::read(path).unwrap();
    let torn_tail = !bytes.is_empty() && !bytes.ends_with(b"\n");
    let lines = bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count() as u64;
    if torn_tail && d.lines_rejected == 1 {
        assert_eq!(d.warnings[0].line, lines, "{}: the one line set aside is not the torn last one: {:?}", path.display(), d.warnings);
    } else {
        assert_eq!(d.lines_rejected, 0, "{}: {:?}", path.display(), d.warnings);
    }
}

/// Invariants 6 and 7 on a timeline: every line whole — but the last, which a SIGKILL may
/// cut (Linux stops a write to a file at a page boundary when a fatal signal is pending, so a
/// record written whole into the buffer can still end torn in the file); such a tail has no
/// newline and is the only line the reader sets aside — and every job with a proof file has
/// its partitions' closed `gpu` spans in it.
fn check_timeline(path: &Path, jobs: &[String], partitions: usize) {
    let run = timeline::read::read_path(path, None).unwrap();
    whole_lines_but_a_torn_tail(path, &run.diagnostics);
    for j in jobs {
        let mut parts: Vec<u32> = run.spans_of(&timeline::SpanKind::Gpu).filter(|s| s.job.as_deref() == Some(j) && !s.is_open()).filter_map(|s| s.partition).collect();
        parts.sort_unstable();
        parts.dedup();
        assert_eq!(parts.len(), partitions, "{j} has a proof file but {} of its {partitions} gpu spans in {}", parts.len(), path.display());
    }
}

fn prove_args(timeline: &str, out: &str, proofs: u32, extra: &[&str]) -> Vec<String> {
    let f = fixtures();
    let mut a = strings(&["prove", "--params", &f.path("params.bin"), "--proofs", &proofs.to_string(), "--partitions", "2", "--pw", "2", "--gw", "1", "--backend", "cpu", "--quiet", "--timeline", timeline, "-o", out]);
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

// ---- the faults --------------------------------------------------------------------------

/// A full disk under `analyze` and `sweep`: at each amount of free space, the folder holds
/// either the old report, untouched, or the new run's files, whole; what failed is named.
#[test]
fn a_full_disk_leaves_one_runs_report() {
    let Some(fs) = tmpfs_or_skip(2 << 20, "a_full_disk_leaves_one_runs_report") else { return };
    let f = fixtures();
    let cases: [(&str, &str, Vec<String>); 2] = [
        ("ref-analyze-A", "ref-analyze-B", strings(&["analyze", &f.path("B.jsonl"), "-o", "out"])),
        ("ref-sweep-A", "ref-sweep-B", strings(&["sweep", &f.path("phase8.toml"), "--vary", "pw=2..6:2", "--vary", "gw=1,2", "-o", "out"])),
    ];
    let mut checked = 0;
    let mut codes: BTreeMap<(String, Option<i32>), u32> = BTreeMap::new();
    for (old, new, args) in &cases {
        let (a, b) = (reference(old), reference(new));
        let total_b: u64 = b.values().map(|v| v.len() as u64).sum();
        for leave in [0, 2048, 8192, 32 << 10, 100 << 10, total_b / 2, total_b + (64 << 10)] {
            fs.clear();
            copy_into(&a, &fs.path().join("out"));
            fs.fill(leave);
            let r = spawn(args, fs.path(), None).wait(LIMIT);
            sane(&r, &[0, 1]);
            *codes.entry((args[0].clone(), r.code)).or_default() += 1;
            let ctx = format!("{} with {leave} bytes free", args[0]);
            let from = check_files(&fs.path().join("out"), &[("old", a.clone()), ("new", b.clone())], true, &ctx);
            assert!(temps(&fs.path().join("out")).is_empty(), "{ctx}: temporary files left");
            if r.code == Some(0) {
                assert_eq!(files(&fs.path().join("out")), b, "{ctx}: exit 0 but not the whole new report");
            } else {
                assert!(r.stderr.contains("No space left") || r.stderr.contains("not written"), "{ctx}: the failure is not named\n{}", r.stderr);
                if !from.contains(&"new".to_string()) {
                    assert_eq!(files(&fs.path().join("out")), a, "{ctx}: the old report was damaged");
                }
            }
            checked += 1;
        }
    }
    eprintln!("a_full_disk_leaves_one_runs_report: {checked} fault points checked, by (command, exit code): {codes:?}");
}

/// `setup` and `simulate --timeline` onto a full disk: the old file stays, whole.
#[test]
fn a_full_disk_never_destroys_the_old_file() {
    let Some(fs) = tmpfs_or_skip(1 << 20, "a_full_disk_never_destroys_the_old_file") else { return };
    let f = fixtures();
    let old_params = std::fs::read(f.dir.path().join("params.bin")).unwrap();
    for leave in [0, 4096, 64 << 10] {
        fs.clear();
        std::fs::write(fs.path().join("params.bin"), &old_params).unwrap();
        std::fs::write(fs.path().join("sim.jsonl"), b"{\"old\":true}\n").unwrap();
        fs.fill(leave);
        // A 2^12 setup writes more than 64 KiB.
        let r = run_in(fs.path(), &["setup", "--constraints", "2^12", "--params", "params.bin"]);
        sane(&r, &[1]);
        assert!(r.stderr.contains("params.bin"), "{}", r.stderr);
        assert_eq!(std::fs::read(fs.path().join("params.bin")).unwrap(), old_params, "setup destroyed the old parameter file");
        let r = run_in(fs.path(), &["simulate", &f.path("phase8.toml"), "--set", "c=50", "--timeline", "sim.jsonl"]);
        sane(&r, &[0, 1]);
        if r.code == Some(1) {
            assert!(r.stderr.contains("sim.jsonl"), "{}", r.stderr);
            assert_eq!(std::fs::read(fs.path().join("sim.jsonl")).unwrap(), b"{\"old\":true}\n");
        }
        assert!(temps(fs.path()).is_empty());
    }
}

/// The timeline or the proofs on a full disk, the timeline on /dev/full: the proving goes
/// on, what could not be written is named (exit 1), and every proof that is on disk verifies.
#[test]
fn a_timeline_that_cannot_be_written_loses_no_proof() {
    let work = tempfile::tempdir().unwrap();
    // /dev/full: every write fails (needs no root).
    let r = spawn(&prove_args("/dev/full", "proofs", 4, &["--cuzk-log", "/dev/full"]), work.path(), None).wait(LIMIT);
    sane(&r, &[1]);
    assert!(r.stderr.contains("/dev/full"), "{}", r.stderr);
    assert_eq!(check_proofs(&work.path().join("proofs"), 2).len(), 4, "the proofs were lost");
    let Some(fs) = tmpfs_or_skip(256 << 10, "a_timeline_that_cannot_be_written_loses_no_proof (tmpfs part)") else { return };
    for leave in [0, 4096, 16 << 10] {
        // The timeline on the full disk, the proofs elsewhere.
        fs.clear();
        fs.fill(leave);
        let tl = fs.path().join("run.jsonl").display().to_string();
        let out = work.path().join(format!("p{leave}"));
        let r = spawn(&prove_args(&tl, &out.display().to_string(), 6, &[]), work.path(), None).wait(LIMIT);
        sane(&r, &[0, 1]);
        if r.code == Some(1) {
            assert!(r.stderr.contains("run.jsonl"), "{}", r.stderr);
        }
        assert_eq!(check_proofs(&out, 2).len(), 6);
        // The proofs on the full disk, the timeline elsewhere: no partial proof file.
        fs.clear();
        fs.fill(leave);
        let tl = work.path().join(format!("t{leave}.jsonl")).display().to_string();
        let out = fs.path().join("proofs");
        let r = spawn(&prove_args(&tl, &out.display().to_string(), 6, &[]), work.path(), None).wait(LIMIT);
        sane(&r, &[0, 1]);
        let jobs = check_proofs(&out, 2);
        if r.code == Some(1) {
            assert!(r.stderr.contains(".proof") || r.stderr.contains(".inputs.json"), "{}", r.stderr);
        } else {
            assert_eq!(jobs.len(), 6);
        }
        check_timeline(Path::new(&tl), &jobs, 2);
        assert!(temps(&out).is_empty());
    }
}

/// SIGKILL (and SIGINT) at random moments of `prove`: the proofs that finished are on
/// disk and verify, the timeline holds their events, every line whole.
#[test]
fn a_killed_prove_keeps_its_finished_proofs() {
    let mut rng = Rng::new("a_killed_prove_keeps_its_finished_proofs");
    let work = tempfile::tempdir().unwrap();
    let mut kept = 0;
    for k in 0..6 {
        let sig = if k % 3 == 2 { libc::SIGINT } else { libc::SIGKILL };
        let (tl, out) = (format!("t{k}.jsonl"), format!("p{k}"));
        let p = spawn(&prove_args(&tl, &out, 200, &["--cuzk-log", &format!("t{k}.log")]), work.path(), None);
        std::thread::sleep(rng.millis(150, 2500));
        p.signal(sig);
        let r = p.wait(LIMIT);
        if sig == libc::SIGINT {
            sane(&r, &[130, 0]);
        } else {
            assert_eq!(r.signal, Some(libc::SIGKILL), "{:?}", r);
        }
        let jobs = check_proofs(&work.path().join(&out), 2);
        check_timeline(&work.path().join(&tl), &jobs, 2);
        let cuzk_path = work.path().join(format!("t{k}.log"));
        let cuzk = timeline::read::read_path(&cuzk_path, None).unwrap();
        whole_lines_but_a_torn_tail(&cuzk_path, &cuzk.diagnostics);
        kept += jobs.len();
    }
    eprintln!("a_killed_prove_keeps_its_finished_proofs: {kept} proofs on disk after 6 kills, all verified");
}

/// SIGKILL and SIGINT at random moments of `analyze` and `sweep` writing over an earlier
/// report: every file is whole (the earlier run's or the new one's), and the next run cleans
/// up.
#[test]
fn a_killed_analyze_or_sweep_leaves_no_broken_file() {
    let mut rng = Rng::new("a_killed_analyze_or_sweep_leaves_no_broken_file");
    let f = fixtures();
    let cases: [(&str, &str, Vec<String>); 2] = [
        ("ref-analyze-A", "ref-analyze-big", strings(&["analyze", &f.path("big.jsonl"), "-o", "out"])),
        ("ref-sweep-A", "ref-sweep-B", strings(&["sweep", &f.path("phase8.toml"), "--vary", "pw=2..6:2", "--vary", "gw=1,2", "-o", "out"])),
    ];
    let mut landed = 0;
    for (old, new, args) in &cases {
        let (a, b) = (reference(old), reference(new));
        // Aim inside the run: between its start and the time the same run took alone.
        let span_ms = f.took[*new].as_millis().max(4) as u64;
        for k in 0..8 {
            let work = tempfile::tempdir().unwrap();
            copy_into(&a, &work.path().join("out"));
            let p = spawn(args, work.path(), None);
            std::thread::sleep(rng.millis(1, span_ms));
            p.signal(if k % 2 == 1 { libc::SIGINT } else { libc::SIGKILL });
            let r = p.wait(LIMIT);
            assert!(r.stderr.is_empty() || !r.stderr.contains("panicked"), "{}", r.stderr);
            if r.signal.is_some() {
                landed += 1;
            }
            check_files(&work.path().join("out"), &[("old", a.clone()), ("new", b.clone())], false, &format!("{} killed", args[0]));
            // The next run completes the report and removes what the killed one left.
            let r = spawn(args, work.path(), None).wait(LIMIT);
            sane(&r, &[0]);
            assert_eq!(files(&work.path().join("out")), b);
            assert!(temps(&work.path().join("out")).is_empty(), "{:?}", temps(&work.path().join("out")));
        }
    }
    eprintln!("a_killed_analyze_or_sweep_leaves_no_broken_file: {landed} of 16 signals landed while the command ran");
}

/// Two `analyze` runs into one folder at once: they take turns (the lock), both succeed,
/// and the folder holds one run's report, whole.
#[test]
fn two_writers_in_one_folder_take_turns() {
    let f = fixtures();
    let (a, big) = (reference("ref-analyze-A"), reference("ref-analyze-big"));
    for _ in 0..3 {
        let work = tempfile::tempdir().unwrap();
        let first = spawn(&strings(&["analyze", &f.path("big.jsonl"), "-o", "out"]), work.path(), None);
        std::thread::sleep(Duration::from_millis(30));
        let second = spawn(&strings(&["analyze", &f.path("A.log"), "-o", "out", "--no-charts"]), work.path(), None);
        let (r1, r2) = (first.wait(LIMIT), second.wait(LIMIT));
        sane(&r1, &[0]);
        sane(&r2, &[0]);
        // --no-charts: the second run's report has no charts; whichever ran last, the
        // folder is that run's alone.
        let a_no_charts: BTreeMap<String, Vec<u8>> = files(&{
            let d = work.path().join("ref-no-charts");
            std::fs::create_dir_all(&d).unwrap();
            let r = run_in(&d, &["analyze", &f.path("A.log"), "-o", "out", "--no-charts"]);
            assert_eq!(r.code, Some(0));
            d.join("out")
        });
        let _ = a;
        check_files(&work.path().join("out"), &[("big", big.clone()), ("A", a_no_charts)], true, "two writers");
        assert!(temps(&work.path().join("out")).is_empty());
    }
}
