//! Where commands put their files, in one place: `-o/--out DIR` is always a folder (created
//! when missing) into which a command writes files of fixed names (the table is in
//! docs/reference/cli.md); a file is written to a temporary file in its folder and renamed
//! into place when complete ([`timeline::atomic`]), so a crash or a full disk never leaves
//! half a file, nor replaces a good file with a broken one.
//!
//! An [`OutputDir`] also keeps a folder to one run: it is locked while a command writes
//! into it (`DIR/.proofscope.lock`, flock(2): a second command writing the same folder
//! waits its turn, and the lock goes with the process, killed or not), and when the
//! command is done, the outputs of its kind that this run did not write (the charts of an
//! earlier run, now `--no-charts`) are removed, so the folder never mixes two runs.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// Name of the lock file in an output folder.
pub const LOCK_FILE: &str = ".proofscope.lock";

/// Check `-o DIR` before any work: it must be a folder or not exist yet.
pub fn check_dir(path: &Path) -> anyhow::Result<()> {
    check_folder("-o", path)
}

/// Check the folder an option (`-o`, `--csv`) names before any work: it must be a folder
/// or not exist yet, under a folder that is one (or does not exist yet either).
pub fn check_folder(flag: &str, path: &Path) -> anyhow::Result<()> {
    if path.exists() && !path.is_dir() {
        anyhow::bail!("{flag} {}: not a folder ({flag} always names the folder the command writes its files into)", path.display());
    }
    if let Some(up) = path.ancestors().skip(1).find(|p| p.exists()) {
        if !up.is_dir() {
            anyhow::bail!("{flag} {}: {} is not a folder", path.display(), up.display());
        }
    }
    Ok(())
}

/// The output folder `-o DIR`, created when missing.
pub fn dir(path: &Path) -> anyhow::Result<PathBuf> {
    check_dir(path)?;
    std::fs::create_dir_all(path).with_context(|| format!("cannot create the output folder {}", path.display()))?;
    Ok(path.to_path_buf())
}

/// An output that could not be written (a full disk, a folder that went away): the
/// command exits 1, "the work failed", not 2 (docs/reference/cli.md#exit-codes).
#[derive(Debug)]
pub struct WriteFailed(pub String);

impl std::fmt::Display for WriteFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WriteFailed {}

/// A [`WriteFailed`] error from anything displayable (its message names the file).
pub fn write_failed(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(WriteFailed(e.to_string()))
}

/// Write `bytes` to `path` whole or not at all: a temporary file in the same folder,
/// synced, then renamed over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    timeline::atomic::write_atomic(path, bytes).map_err(write_failed)
}

/// An exclusive flock(2) on `file`, waiting for it (the holder may be another process).
fn lock(file: &File, what: &Path) -> anyhow::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a file descriptor we own; no memory is shared with the call.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(());
    }
    tracing::warn!("{} is being written by another proofscope: waiting for it to finish", what.display());
    loop {
        // SAFETY: as above.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e).with_context(|| format!("cannot lock {}", what.display()));
        }
    }
}

/// An output folder being written by one command (see the module doc).
pub struct OutputDir {
    path: PathBuf,
    /// The locked file; the lock is released when it is closed.
    _lock: File,
    /// Every output name this command kind writes.
    known: Vec<&'static str>,
    written: Vec<String>,
    /// Outputs that could not be written, with the reason.
    failed: Vec<String>,
    finished: bool,
}

impl OutputDir {
    /// Create and lock `path`; `known` lists the file names this command writes there.
    pub fn open(path: &Path, known: &[&'static str]) -> anyhow::Result<OutputDir> {
        let path = dir(path)?;
        let lock_path = path.join(LOCK_FILE);
        let f = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("cannot create {}", lock_path.display()))?;
        lock(&f, &path)?;
        timeline::atomic::remove_stale_temps(&path);
        Ok(OutputDir { path, _lock: f, known: known.to_vec(), written: Vec::new(), failed: Vec::new(), finished: false })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `DIR/name`.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Write `DIR/name` whole or not at all, and note it.
    pub fn write(&mut self, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
        write_atomic(&self.path.join(name), bytes)?;
        self.record(name);
        Ok(())
    }

    /// Note a file written by someone else's function (charts, Parquet).
    pub fn record(&mut self, name: &str) {
        if !self.written.iter().any(|w| w == name) {
            self.written.push(name.to_string());
        }
    }

    /// Note an output that could not be written (the command then exits 1).
    pub fn fail(&mut self, name: &str, why: impl std::fmt::Display) {
        tracing::error!("{} not written: {why}", self.path.join(name).display());
        self.failed.push(format!("{name}: {why}"));
    }

    /// What was written, in order.
    pub fn written(&self) -> &[String] {
        &self.written
    }

    /// Outputs that could not be written.
    pub fn failed(&self) -> &[String] {
        &self.failed
    }

    /// Done: remove the known outputs this run did not write (an earlier run's), release
    /// the lock. Returns the names written. (A command that stops on an error after it
    /// wrote something gets the same clean-up when its `OutputDir` is dropped: the folder
    /// never mixes its files with an earlier run's; one that wrote nothing leaves the
    /// earlier run's report as it was.)
    pub fn finish(mut self) -> Vec<String> {
        self.clean();
        self.finished = true;
        std::mem::take(&mut self.written)
    }

    /// Whether any output failed (the command then exits 1).
    pub fn has_failures(&self) -> bool {
        !self.failed.is_empty()
    }

    /// Write `DIR/name`; a failure is noted (and reported), not returned.
    pub fn try_write(&mut self, name: &str, bytes: &[u8]) {
        if let Err(e) = self.write(name, bytes) {
            self.fail(name, format!("{e:#}"));
        }
    }

    fn clean(&self) {
        for name in &self.known {
            if !self.written.iter().any(|w| w == name) {
                let p = self.path.join(name);
                if p.is_file() {
                    match std::fs::remove_file(&p) {
                        Ok(()) => tracing::info!("removed {} (an earlier run's; not written by this one)", p.display()),
                        Err(e) => tracing::warn!("cannot remove {}, an earlier run's output: {e}", p.display()),
                    }
                }
            }
        }
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        if !self.finished && !self.written.is_empty() {
            self.clean();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_o_must_be_a_folder() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.txt");
        write_atomic(&f, b"one").unwrap();
        write_atomic(&f, b"two").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        // No temporary file left behind.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
        assert!(dir(&f).unwrap_err().to_string().contains("not a folder"));
        assert!(dir(&d.path().join("new/sub")).unwrap().is_dir());
        // A folder that cannot be written: an error naming the file, the old file intact.
        assert!(write_atomic(&d.path().join("missing/x.txt"), b"x").unwrap_err().to_string().contains("missing"));
    }

    #[test]
    fn a_folder_holds_one_run_and_writers_take_turns() {
        const KNOWN: &[&str] = &["a.json", "b.svg"];
        let d = tempfile::tempdir().unwrap();
        let mut o = OutputDir::open(d.path(), KNOWN).unwrap();
        o.write("a.json", b"1").unwrap();
        o.write("b.svg", b"1").unwrap();
        o.finish();
        std::fs::write(d.path().join("mine.txt"), b"user's").unwrap();
        // The second run writes no chart: the first run's chart goes, the user's file stays.
        let mut o = OutputDir::open(d.path(), KNOWN).unwrap();
        o.write("a.json", b"2").unwrap();
        assert_eq!(o.finish(), ["a.json"]);
        assert!(!d.path().join("b.svg").exists() && d.path().join("mine.txt").exists());
        // While one holds the folder, a second waits.
        let first = OutputDir::open(d.path(), KNOWN).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let p = d.path().to_path_buf();
        let h = std::thread::spawn(move || {
            let o = OutputDir::open(&p, KNOWN).unwrap();
            tx.send(()).unwrap();
            drop(o);
        });
        assert!(rx.recv_timeout(std::time::Duration::from_millis(300)).is_err(), "the second writer must wait");
        drop(first);
        rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        h.join().unwrap();
    }
}
