//! Gzipped timelines (as kept in reports/) are read as they are, and a damaged gzip stream
//! is an error naming the file, never a panic.

use std::io::Write;

use flate2::{write::GzEncoder, Compression};
use timeline::read::{read_path, read_str};

const SAMPLE: &str = include_str!("../assets/cuzk-sample.log");

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[test]
fn a_gzipped_log_reads_like_the_plain_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sample.log.gz");
    std::fs::write(&path, gzip(SAMPLE.as_bytes())).unwrap();
    let from_gz = read_path(&path, None).unwrap();
    let plain = read_str(SAMPLE, None);
    assert!(!plain.spans.is_empty());
    assert_eq!(from_gz.spans, plain.spans);
    assert_eq!(from_gz.diagnostics, plain.diagnostics);
}

#[test]
fn a_truncated_gzip_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.jsonl.gz");
    let gz = gzip(SAMPLE.as_bytes());
    std::fs::write(&path, &gz[..gz.len() / 2]).unwrap();
    let err = read_path(&path, None).unwrap_err().to_string();
    assert!(err.contains("cut.jsonl.gz"), "{err}");
}
