//! Files written whole or not at all. Every output of proofscope (summary.json, trace.json,
//! Parquet tables, charts, model and sweep files, proofs, parameter files) goes through
//! here: the bytes are written to a temporary file in the destination's folder, synced,
//! and renamed over the destination. A full disk, a crash or a kill in the middle leaves
//! the previous file (or none) in place, never a truncated one; a temporary file that could
//! not be completed is removed (one left by a killed process is a hidden `.tmp-…` file,
//! never a file of the output's name).
//!
//! The temporary file's name keeps the destination's name at its end
//! (`.tmp-<pid>-<n>-waterfall.png`), so that writers that pick a format from the extension
//! (the PNG encoder) see the right one.

use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

/// Prefix of every temporary file (hidden).
pub const TMP_PREFIX: &str = ".tmp-";

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn folder_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
}

/// A file being written under a temporary name; [`AtomicFile::commit`] renames it into
/// place, dropping it without a commit removes it.
pub struct AtomicFile {
    file: Option<File>,
    tmp: PathBuf,
    dest: PathBuf,
}

impl AtomicFile {
    /// Create the temporary file for `dest` (in `dest`'s folder).
    pub fn create(dest: &Path) -> io::Result<AtomicFile> {
        let tmp = temp_path(dest);
        let file = OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(|e| named(dest, e))?;
        Ok(AtomicFile { file: Some(file), tmp, dest: dest.to_path_buf() })
    }

    /// The file to write to.
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("an AtomicFile holds its file until commit")
    }

    /// The destination.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Sync the data and rename the file over its destination — or, on a thread that runs
    /// [`Committer::deferring`], hand it to that committer (`Ok` then: a failure is the
    /// committer's to report).
    pub fn commit(self) -> io::Result<()> {
        match DEFERRED.with(|d| d.borrow().clone()) {
            Some(tx) => match tx.send((self, false)) {
                Ok(()) => Ok(()),
                // The committer's thread is gone (it panicked): here, then.
                Err(mpsc::SendError((f, _))) => f.commit_now(),
            },
            None => self.commit_now(),
        }
    }

    /// [`AtomicFile::commit`], on this thread.
    fn commit_now(mut self) -> io::Result<()> {
        let file = self.file.take().expect("an AtomicFile holds its file until commit");
        let r = file.sync_all().and_then(|_| {
            drop(file);
            std::fs::rename(&self.tmp, &self.dest)
        });
        if let Err(e) = r {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(named(&self.dest, e));
        }
        sync_folder(folder_of(&self.dest));
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

thread_local! {
    /// The committer this thread's commits go to ([`Committer::deferring`]).
    static DEFERRED: RefCell<Option<mpsc::Sender<(AtomicFile, bool)>>> = const { RefCell::new(None) };
}

/// Files put in place on a thread of their own, in the order they are handed over: the
/// sync that makes a file durable waits for the disk (a 137 MB summary.json took 0.12-0.17
/// s on the 2-core dev machine, a time in which nothing else could be written), and the
/// writers go on meanwhile. A file handed over `required` (summary.json) that cannot be put
/// in place stops the ones after it: they are removed, never put in place without it.
pub struct Committer {
    tx: mpsc::Sender<(AtomicFile, bool)>,
    thread: std::thread::JoinHandle<Vec<(PathBuf, io::Error)>>,
}

impl Committer {
    pub fn start() -> Committer {
        let (tx, rx) = mpsc::channel::<(AtomicFile, bool)>();
        let thread = std::thread::spawn(move || {
            let mut failed: Vec<(PathBuf, io::Error)> = Vec::new();
            let mut stopped_by: Option<PathBuf> = None;
            for (f, required) in rx {
                let dest = f.dest.clone();
                if let Some(first) = &stopped_by {
                    // Dropped: its temporary file is removed.
                    drop(f);
                    failed.push((dest, io::Error::other(format!("not put in place: {} could not be", first.display()))));
                    continue;
                }
                if let Err(e) = f.commit_now() {
                    if required {
                        stopped_by = Some(dest.clone());
                    }
                    failed.push((dest, e));
                }
            }
            failed
        });
        Committer { tx, thread }
    }

    /// Put `f` in place after every file handed over before it; `required`: if it cannot
    /// be, none handed over after it is.
    pub fn commit(&self, f: AtomicFile, required: bool) {
        if let Err(mpsc::SendError((f, _))) = self.tx.send((f, required)) {
            // Only after the committer's thread panicked: dropped (removed), never put in
            // place out of order.
            drop(f);
        }
    }

    /// Run `work` with every [`AtomicFile::commit`] of this thread handed to this
    /// committer (each thread that writes outputs calls it for itself).
    pub fn deferring<T>(&self, work: impl FnOnce() -> T) -> T {
        struct Restore(Option<mpsc::Sender<(AtomicFile, bool)>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let prev = self.0.take();
                DEFERRED.with(|d| *d.borrow_mut() = prev);
            }
        }
        let _restore = Restore(DEFERRED.with(|d| d.replace(Some(self.tx.clone()))));
        work()
    }

    /// Wait until every file handed over is in place (or not); those that are not, with why.
    pub fn finish(self) -> Vec<(PathBuf, io::Error)> {
        drop(self.tx);
        self.thread.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
    }
}

/// A fresh temporary name beside `dest` that ends with `dest`'s own name.
pub fn temp_path(dest: &Path) -> PathBuf {
    let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    folder_of(dest).join(format!("{TMP_PREFIX}{}-{n}-{name}", std::process::id()))
}

/// Make the rename durable (best effort: not every file system lets a folder be synced).
fn sync_folder(folder: &Path) {
    if let Ok(d) = File::open(folder) {
        let _ = d.sync_all();
    }
}

/// Write `bytes` to `path` whole or not at all.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes).map_err(|e| named(path, e))?;
    f.commit()
}

/// Write `path` through `write`, which gets a buffered writer; whole or not at all.
pub fn write_with(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    {
        let mut w = io::BufWriter::with_capacity(1 << 16, f.file());
        write(&mut w).map_err(|e| named(path, e))?;
        w.flush().map_err(|e| named(path, e))?;
    }
    f.commit()
}

/// [`write_with`], but left under its temporary name, written (not synced): the caller
/// puts it in place with [`AtomicFile::commit`] or hands it to a [`Committer`].
pub fn write_uncommitted(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<AtomicFile> {
    let mut f = AtomicFile::create(path)?;
    {
        let mut w = io::BufWriter::with_capacity(1 << 16, f.file());
        write(&mut w).map_err(|e| named(path, e))?;
        w.flush().map_err(|e| named(path, e))?;
    }
    Ok(f)
}

/// [`write_with`], but left under its temporary name, written and synced: the caller puts
/// it in place with [`AtomicFile::commit`] (cheap then: nothing left to sync) when it
/// decides to, or drops it (removed).
pub fn write_synced(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<AtomicFile> {
    let mut f = AtomicFile::create(path)?;
    {
        let mut w = io::BufWriter::with_capacity(1 << 16, f.file());
        write(&mut w).map_err(|e| named(path, e))?;
        w.flush().map_err(|e| named(path, e))?;
    }
    f.file().sync_all().map_err(|e| named(path, e))?;
    Ok(f)
}

/// For writers that open the file themselves (plotters' backends): `make` writes to the
/// temporary path it is given; on success the file is committed ([`AtomicFile::commit`]:
/// renamed to `path`, or handed to the thread's [`Committer`]), on failure it is removed and
/// `make`'s error returned.
pub fn with_temp_path<T, E>(path: &Path, make: impl FnOnce(&Path) -> Result<T, E>) -> Result<Result<T, E>, io::Error> {
    let tmp = temp_path(path);
    let out = make(&tmp);
    if out.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return Ok(out);
    }
    let file = match File::options().write(true).open(&tmp) {
        Ok(f) => f,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(named(path, e));
        }
    };
    AtomicFile { file: Some(file), tmp, dest: path.to_path_buf() }.commit()?;
    Ok(out)
}

/// Remove the temporary files a killed process of ours left in `folder` (names starting
/// with [`TMP_PREFIX`] whose process is gone). Best effort.
pub fn remove_stale_temps(folder: &Path) {
    let Ok(rd) = std::fs::read_dir(folder) else { return };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(TMP_PREFIX) else { continue };
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        let alive = pid.is_some_and(|p| p == std::process::id() || Path::new(&format!("/proc/{p}")).exists());
        if !alive {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn whole_or_nothing() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        // A writer that fails leaves the old file and no temporary file.
        let e = write_with(&p, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(e.to_string().contains("a.json") && e.to_string().contains("disk full"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        // An uncommitted file is removed.
        {
            let mut f = AtomicFile::create(&p).unwrap();
            f.write_all(b"never").unwrap();
        }
        assert_eq!(names(d.path()), ["a.json"]);
        // The temporary name keeps the extension.
        let png = d.path().join("w.png");
        let r: Result<(), io::Error> = with_temp_path(&png, |t| {
            assert!(t.to_string_lossy().ends_with("-w.png"), "{t:?}");
            std::fs::write(t, b"png")
        })
        .unwrap();
        r.unwrap();
        let r: Result<(), &str> = with_temp_path(&d.path().join("x.svg"), |t| {
            std::fs::write(t, b"half").unwrap();
            Err("no")
        })
        .unwrap();
        assert!(r.is_err());
        assert_eq!(names(d.path()), ["a.json", "w.png"]);
        // A folder that does not exist: an error naming the file.
        assert!(write_atomic(&d.path().join("missing/x"), b"x").unwrap_err().to_string().contains("missing/x"));
    }

    /// Files handed to a committer, from its thread and through `deferring` from another,
    /// are put in place in order; a required one that cannot be stops the ones after it
    /// (removed, reported), and the failures name their files.
    #[test]
    fn a_committer_keeps_the_order_and_stops_after_a_required_failure() {
        let d = tempfile::tempdir().unwrap();
        let c = Committer::start();
        let mut a = AtomicFile::create(&d.path().join("a.json")).unwrap();
        a.write_all(b"a").unwrap();
        c.commit(a, true);
        std::thread::scope(|s| s.spawn(|| c.deferring(|| write_atomic(&d.path().join("b.svg"), b"b"))).join().unwrap()).unwrap();
        // Outside `deferring`, a commit is done at once again.
        write_atomic(&d.path().join("now.txt"), b"n").unwrap();
        assert!(d.path().join("now.txt").exists());
        assert!(c.finish().is_empty());
        assert_eq!(names(d.path()), ["a.json", "b.svg", "now.txt"]);
        assert_eq!(std::fs::read(d.path().join("b.svg")).unwrap(), b"b");

        let c = Committer::start();
        let lost = AtomicFile::create(&d.path().join("s.json")).unwrap();
        std::fs::remove_file(&lost.tmp).unwrap();
        c.commit(lost, true);
        // Handed over: Ok here, the committer reports.
        c.deferring(|| write_atomic(&d.path().join("c.svg"), b"c")).unwrap();
        let failed = c.finish();
        assert_eq!(failed.len(), 2, "{failed:?}");
        assert!(failed[0].0.ends_with("s.json") && failed[0].1.to_string().contains("s.json"), "{failed:?}");
        assert!(failed[1].0.ends_with("c.svg") && failed[1].1.to_string().contains("not put in place"), "{failed:?}");
        assert_eq!(names(d.path()), ["a.json", "b.svg", "now.txt"]);
    }

    #[test]
    fn stale_temps_of_dead_processes_are_removed() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(".tmp-4000000000-0-a.json"), b"x").unwrap();
        let mine = d.path().join(format!(".tmp-{}-0-b.json", std::process::id()));
        std::fs::write(&mine, b"x").unwrap();
        remove_stale_temps(d.path());
        assert_eq!(names(d.path()), [format!(".tmp-{}-0-b.json", std::process::id())]);
    }
}
