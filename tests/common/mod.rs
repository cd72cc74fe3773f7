//! Running the built `proofscope` binary from the integration tests (the property test over
//! the command line, the fault-injection suite): a fresh working folder, a memory limit
//! (RLIMIT_AS through `setrlimit` in the child before `exec`), a wall-clock limit (the
//! child is killed past it), and what came out.

#![allow(dead_code)]

use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_proofscope");

/// The binary under test: this build's, or `PROOFSCOPE_TEST_BIN` (another build, e.g. a
/// release binary, or an older one to show what the tests catch).
pub fn bin() -> String {
    std::env::var("PROOFSCOPE_TEST_BIN").unwrap_or_else(|_| BIN.to_string())
}

/// The address space one run of the binary may use: 4 GiB, plus room for the stacks of the
/// thread pools on a machine with many cores. A run that would allocate more (the 16 GB of
/// `pw = 4e9`) fails its allocation and aborts, which the tests report.
pub fn memory_limit() -> u64 {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    (4 << 30) + cores * (16 << 20)
}

/// How a run ended.
#[derive(Debug)]
pub struct Ran {
    pub args: Vec<String>,
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    pub timed_out: bool,
}

impl Ran {
    /// Exit 0, 1 or 2 (never a panic's 101, an abort, a signal, a timeout); no panic
    /// message. Returns a description of what is wrong, if anything.
    pub fn misbehaved(&self) -> Option<String> {
        let what = if self.timed_out {
            format!("ran away in time (killed after {:.1} s)", self.elapsed.as_secs_f64())
        } else if let Some(s) = self.signal {
            format!("killed by signal {s} (an abort: memory beyond {} MiB, or a stack overflow)", memory_limit() >> 20)
        } else if !matches!(self.code, Some(0..=2)) {
            format!("exit code {:?}", self.code)
        } else if self.stderr.contains("panicked at") || self.stderr.contains("RUST_BACKTRACE") {
            "panicked".to_string()
        } else {
            return None;
        };
        Some(format!("proofscope {}: {what}\n--- stderr ---\n{}", self.args.join(" "), tail(&self.stderr, 3000)))
    }
}

fn tail(s: &str, n: usize) -> &str {
    let mut at = s.len().saturating_sub(n);
    while !s.is_char_boundary(at) {
        at += 1;
    }
    &s[at..]
}

/// A prepared command: `proofscope ARGS` in `cwd` under the memory limit.
pub fn command(args: &[String], cwd: &Path) -> Command {
    let mut c = Command::new(bin());
    c.args(args).current_dir(cwd).env("RUST_BACKTRACE", "0").env("NO_COLOR", "1").env("MALLOC_ARENA_MAX", "2");
    let limit = memory_limit();
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit { rlim_cur: limit, rlim_max: limit };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c
}

/// Start the binary (stdout and stderr captured through files, so a chatty child never
/// blocks on a full pipe).
pub struct Running {
    pub child: Child,
    pub args: Vec<String>,
    out: PathBuf,
    err: PathBuf,
    started: Instant,
}

pub fn spawn(args: &[String], cwd: &Path, stdin: Option<&[u8]>) -> Running {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let k = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stamp = format!("{}-{}-{k}", std::process::id(), Instant::now().elapsed().as_nanos());
    let dir = std::env::temp_dir().join("proofscope-test-io");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{stamp}-{}.out", rand_suffix()));
    let err = dir.join(format!("{stamp}-{}.err", rand_suffix()));
    let mut c = command(args, cwd);
    c.stdout(std::fs::File::create(&out).unwrap()).stderr(std::fs::File::create(&err).unwrap());
    c.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = c.spawn().expect("start proofscope");
    if let (Some(bytes), Some(mut w)) = (stdin, child.stdin.take()) {
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            let _ = w.write_all(&bytes);
        });
    }
    Running { child, args: args.to_vec(), out, err, started: Instant::now() }
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    h.finish()
}

impl Running {
    /// Wait at most `limit`, then kill.
    pub fn wait(mut self, limit: Duration) -> Ran {
        let mut timed_out = false;
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                break s;
            }
            if self.started.elapsed() > limit {
                timed_out = true;
                let _ = self.child.kill();
                break self.child.wait().expect("wait");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let read = |p: &Path| {
            let s = String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
            let _ = std::fs::remove_file(p);
            s
        };
        Ran {
            args: self.args,
            code: status.code(),
            signal: status.signal(),
            stdout: read(&self.out),
            stderr: read(&self.err),
            elapsed: self.started.elapsed(),
            timed_out,
        }
    }

    /// Send `sig` (SIGKILL, SIGINT) now.
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.child.id() as i32, sig);
        }
    }
}

/// Run to completion within `limit`.
pub fn run(args: &[&str], cwd: &Path, limit: Duration) -> Ran {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    spawn(&args, cwd, None).wait(limit)
}

pub fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// The shared cuzk sample log.
pub const SAMPLE: &str = include_str!("../../timeline/assets/cuzk-sample.log");
/// The reference simulator config.
pub const PHASE8: &str = include_str!("../../simulator/configs/phase8.toml");

/// The time a CLI test gives one command of the binary.
pub const CLI_LIMIT: Duration = Duration::from_secs(60);

/// [`run`] within [`CLI_LIMIT`], failing the test if the binary misbehaved (a panic, a
/// signal, a time-out, output that is not UTF-8; see [`Ran::misbehaved`]).
pub fn go(cwd: &Path, args: &[&str]) -> Ran {
    let r = run(args, cwd, CLI_LIMIT);
    assert!(r.misbehaved().is_none(), "{}", r.misbehaved().unwrap_or_default());
    r
}

/// JSON text parsed, or a panic quoting it.
pub fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("{e}: {s}"))
}

/// `analyze FILE -o out --json --strict` in `cwd`, which must exit 0: the summary it printed
/// and the one it wrote to `out/summary.json`, parsed.
pub fn analyze_strict(cwd: &Path, file: &Path) -> (serde_json::Value, serde_json::Value) {
    let r = go(cwd, &["analyze", file.to_str().expect("a UTF-8 path"), "-o", "out", "--json", "--strict"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let printed = json(&r.stdout);
    let written = json(&std::fs::read_to_string(cwd.join("out/summary.json")).expect("out/summary.json"));
    (printed, written)
}
