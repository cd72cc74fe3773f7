//! Where commands put their files, in one place: `-o/--out DIR` is always a folder (created
//! when missing) into which a command writes files of fixed names (the table is in
//! docs/reference/cli.md); a file is written to a temporary file in its folder and renamed
//! into place when complete, so a crash or a full disk never leaves half a file, nor
//! replaces a good file with a broken one.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The output folder `-o DIR`, created when missing.
pub fn dir(path: &Path) -> anyhow::Result<PathBuf> {
    if path.exists() && !path.is_dir() {
        anyhow::bail!("-o {}: not a folder (-o always names the folder the command writes its files into)", path.display());
    }
    std::fs::create_dir_all(path).with_context(|| format!("cannot create the output folder {}", path.display()))?;
    Ok(path.to_path_buf())
}

/// Write `bytes` to `path` whole or not at all: a temporary file in the same folder,
/// synced, then renamed over `path`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()))
        .suffix(".tmp")
        .tempfile_in(folder)
        .with_context(|| format!("cannot create a temporary file in {}", folder.display()))?;
    tmp.write_all(bytes).and_then(|_| tmp.as_file().sync_all()).with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path).map_err(|e| e.error).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
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
}
