//! Groth16 parameters (proving and verifying key) and their binary file.
//!
//! # File layout (version 2, all integers little-endian)
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `PSCOPEGP` |
//! | 8 | 4 | format version (2) |
//! | 12 | 4 | curve id (1 = BLS12-381) |
//! | 16 | 8 | flags (bit 0: made by the seeded TEST-ONLY setup; bit 1: compressed points) |
//! | 24 | 8 | inputs (including ONE) |
//! | 32 | 8 | aux variables |
//! | 40 | 8 | constraints (including the input constraints) |
//! | 48 | 8 | domain size n |
//! | 56 | 64 | circuit id, UTF-8, NUL padded |
//! | 120 | 7 × 24 | section table: (offset, count, bytes per point) for vk, ic, h, l, a, b_g1, b_g2 |
//! | 288 | 32 | BLAKE3 of the whole file with these 32 bytes zeroed (header and sections) |
//! | 320 | 192 | reserved, zero |
//! | 512 | … | sections, in table order |
//!
//! Points are uncompressed (G1 96 bytes, G2 192 bytes, the zcash/bellman encoding), or with
//! flag bit 1 compressed (G1 48, G2 96 bytes: x and a sign bit; `setup --compressed`), half
//! the disk at 2^27 (~22 GiB instead of ~44) for a square root per point at load. The vk
//! section is α₁, β₁, δ₁ (G1) then β₂, γ₂, δ₂ (G2), always uncompressed; its "bytes per
//! point" is 0. Loading maps the file (no copy of it in the process's memory), checks the
//! magic, version, curve, lengths and the hash (BLAKE3 over all cores), then decodes the
//! points in parallel with an on-curve check (a compressed point is decompressed, which puts
//! it on the curve or fails; the vk and ic sections are always uncompressed); the subgroup check is skipped: the hash already binds the
//! content, and it would cost a scalar multiplication per point. The mapping is dropped after
//! decoding: the file's pages stay in the page cache, not in the process.
//!
//! The hash covers the header too (version 2): a flipped TEST-ONLY flag, a changed size
//! or circuit id, a byte in the reserved area is a hash mismatch, not a silently different
//! parameter set. Version 1 files (whose hash covered the sections only) are refused with
//! the advice to remake them (`proofscope setup`). The file is written to a temporary
//! file beside it and renamed into place when complete ([`timeline::atomic`]): a full disk
//! never destroys the previous file.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use blstrs::{G1Affine, G2Affine};
use rayon::prelude::*;

pub const MAGIC: &[u8; 8] = b"PSCOPEGP";
pub const VERSION: u32 = 2;
pub const CURVE_BLS12_381: u32 = 1;
pub const FLAG_TEST_ONLY: u64 = 1;
pub const FLAG_COMPRESSED: u64 = 2;
pub const HEADER_LEN: usize = 512;
const G1_BYTES: usize = 96;
const G2_BYTES: usize = 192;

/// How the query points are written: uncompressed (the default: no square root at load) or
/// compressed (half the disk).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PointEncoding {
    #[default]
    Uncompressed,
    Compressed,
}

impl PointEncoding {
    pub fn name(self) -> &'static str {
        match self {
            PointEncoding::Uncompressed => "uncompressed",
            PointEncoding::Compressed => "compressed",
        }
    }
}
const VK_BYTES: usize = 3 * G1_BYTES + 3 * G2_BYTES;
const SECTIONS: [&str; 7] = ["vk", "ic", "h", "l", "a", "b_g1", "b_g2"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    pub alpha_g1: G1Affine,
    pub beta_g1: G1Affine,
    pub beta_g2: G2Affine,
    pub gamma_g2: G2Affine,
    pub delta_g1: G1Affine,
    pub delta_g2: G2Affine,
    /// (β·u_i(τ) + α·v_i(τ) + w_i(τ)) / γ for each input, ONE first.
    pub ic: Vec<G1Affine>,
}

/// What the parameters were made for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamsInfo {
    pub circuit_id: String,
    pub num_inputs: u64,
    pub num_aux: u64,
    pub num_constraints: u64,
    pub domain_size: u64,
    /// Made by the seeded test-only setup: anyone knowing the seed can forge proofs.
    pub test_only: bool,
}

/// The proving key (queries) with its verifying key, as in the bellman family: the A and
/// B queries hold only the variables with a non-zero column (points at infinity are
/// dropped), H has n − 1 points, L one per aux variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parameters {
    pub vk: VerifyingKey,
    pub h: Query<G1Affine>,
    pub l: Query<G1Affine>,
    pub a: Query<G1Affine>,
    pub b_g1: Query<G1Affine>,
    pub b_g2: Query<G2Affine>,
    pub info: ParamsInfo,
}

/// One query's points on the host, or released from the host once every device that proves
/// with them holds its own copy (the engine's `memory.params_host`: at 2^27 the host copy is
/// 43.6 GiB of a 128-GiB machine). A released query keeps its length ([`Query::len`], an
/// inherent method, so `params.h.len()` is the count either way) and its identity
/// ([`Query::origin`]); its points read as an empty slice, so code that needs them checks
/// [`Query::host`] first and fails with an error rather than proving with nothing.
#[derive(Clone, Debug)]
pub struct Query<T> {
    points: Vec<T>,
    len: usize,
    origin: usize,
    released: bool,
}

impl<T> Query<T> {
    pub fn new(points: Vec<T>) -> Self {
        Query { len: points.len(), origin: points.as_ptr() as usize, points, released: false }
    }

    /// Points in the query (also after a release).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The host points, None once released.
    pub fn host(&self) -> Option<&[T]> {
        (!self.released).then_some(&self.points[..])
    }

    pub fn is_released(&self) -> bool {
        self.released
    }

    /// Where the points were first allocated: the identity of this query's content for
    /// device caches (stable across a release).
    pub fn origin(&self) -> usize {
        self.origin
    }

    /// [`Query::release`] when `cond`, else nothing (0 bytes).
    pub fn release_if(&mut self, cond: bool) -> u64 {
        if cond {
            self.release()
        } else {
            0
        }
    }

    /// Free the host points (bytes freed returned); the length and origin stay.
    pub fn release(&mut self) -> u64 {
        if self.released {
            return 0;
        }
        self.released = true;
        let bytes = (self.points.len() * std::mem::size_of::<T>()) as u64;
        self.points = Vec::new();
        bytes
    }
}

/// Same points (and same release state); where they live is not compared.
impl<T: PartialEq> PartialEq for Query<T> {
    fn eq(&self, o: &Self) -> bool {
        self.len == o.len && self.released == o.released && self.points == o.points
    }
}
impl<T: Eq> Eq for Query<T> {}

impl<T> From<Vec<T>> for Query<T> {
    fn from(points: Vec<T>) -> Self {
        Query::new(points)
    }
}

/// The host points (empty once released: see [`Query`]).
impl<T> std::ops::Deref for Query<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.points
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ParamsError {
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: not a proofscope parameter file (bad magic {found:?}, expected {MAGIC:?})")]
    BadMagic { path: String, found: Vec<u8> },
    #[error("{path}: format version {found} is not supported (this build reads version {VERSION}){}", if *found == 1 { "; version 1 did not cover its header (the TEST-ONLY flag, the sizes) with the hash: remake the file with `proofscope setup`" } else { "" })]
    Version { path: String, found: u32 },
    #[error("{path}: header {what} is not zero (a file of another version, or damaged)")]
    Reserved { path: String, what: &'static str },
    #[error("{path}: curve id {found} is not BLS12-381 ({CURVE_BLS12_381})")]
    Curve { path: String, found: u32 },
    #[error("{path}: truncated: {what} needs {needed} bytes, the file has {actual}")]
    Truncated { path: String, what: String, needed: u64, actual: u64 },
    #[error("{path}: content hash mismatch (the file is corrupt or was modified after it was written)")]
    Hash { path: String },
    #[error("{path}: section {section}: {reason}")]
    Section { path: String, section: &'static str, reason: String },
    #[error("{path}: section {section}, point #{index} is not on the curve")]
    Point { path: String, section: &'static str, index: usize },
    #[error("{path}: circuit id is not UTF-8")]
    CircuitId { path: String },
}

/// What a parameter set is for and how many points each query has: enough to size memory
/// ([`Parameters::read_shape`] reads it from a file's header alone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamsShape {
    pub info: ParamsInfo,
    pub ic: u64,
    pub h: u64,
    pub l: u64,
    pub a: u64,
    pub b_g1: u64,
    pub b_g2: u64,
}

/// How a load went (reported by `prove` and the engine).
#[derive(Clone, Debug)]
pub struct LoadReport {
    pub bytes: u64,
    pub elapsed: Duration,
    /// Of `elapsed`: the hash check, and the points' decoding (decompression included).
    pub hash: Duration,
    pub decode: Duration,
    pub encoding: PointEncoding,
}

fn put_u32(h: &mut [u8], at: usize, v: u32) {
    h[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn put_u64(h: &mut [u8], at: usize, v: u64) {
    h[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
fn get_u32(h: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&h[at..at + 4]);
    u32::from_le_bytes(b)
}
fn get_u64(h: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&h[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Writes through to the file and hashes what it writes.
struct HashingWriter<W: Write> {
    inner: W,
    hasher: blake3::Hasher,
    written: u64,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// One curve's point encodings (the zcash/bellman ones), so that the file's points are
/// encoded and decoded by one function for G1 and G2.
trait Encoded: Sized + Send + Sync {
    const UNCOMPRESSED: usize;
    const COMPRESSED: usize;
    fn size(enc: PointEncoding) -> usize {
        match enc {
            PointEncoding::Uncompressed => Self::UNCOMPRESSED,
            PointEncoding::Compressed => Self::COMPRESSED,
        }
    }
    /// Writes `Self::size(enc)` bytes into `out`.
    fn encode_into(&self, enc: PointEncoding, out: &mut [u8]);
    /// The point, on the curve (a compressed one decompressed), or None; the subgroup check is
    /// skipped (see the module docs).
    fn decode(bytes: &[u8], enc: PointEncoding) -> Option<Self>;
}

macro_rules! encoded {
    ($t:ty, $uncompressed:expr, $compressed:expr) => {
        impl Encoded for $t {
            const UNCOMPRESSED: usize = $uncompressed;
            const COMPRESSED: usize = $compressed;
            fn encode_into(&self, enc: PointEncoding, out: &mut [u8]) {
                match enc {
                    PointEncoding::Uncompressed => out.copy_from_slice(&self.to_uncompressed()),
                    PointEncoding::Compressed => out.copy_from_slice(&self.to_compressed()),
                }
            }
            fn decode(bytes: &[u8], enc: PointEncoding) -> Option<Self> {
                let p: Option<Self> = match enc {
                    PointEncoding::Uncompressed => <&[u8; $uncompressed]>::try_from(bytes).ok().and_then(|b| Option::from(<$t>::from_uncompressed_unchecked(b))),
                    PointEncoding::Compressed => <&[u8; $compressed]>::try_from(bytes).ok().and_then(|b| Option::from(<$t>::from_compressed_unchecked(b))),
                };
                p.filter(|p| bool::from(p.is_on_curve()))
            }
        }
    };
}
encoded!(G1Affine, G1_BYTES, 48);
encoded!(G2Affine, G2_BYTES, 96);

fn encode<P: Encoded>(points: &[P], enc: PointEncoding) -> Vec<u8> {
    let size = P::size(enc);
    let mut out = vec![0u8; points.len() * size];
    out.par_chunks_mut(size).zip(points.par_iter()).for_each(|(o, p)| p.encode_into(enc, o));
    out
}

/// The points of one section, decoded in parallel; an error names the first bad one.
fn decode<P: Encoded>(bytes: &[u8], enc: PointEncoding, path: &str, section: &'static str) -> Result<Vec<P>, ParamsError> {
    bytes
        .par_chunks(P::size(enc))
        .enumerate()
        .map(|(index, c)| P::decode(c, enc).ok_or(ParamsError::Point { path: path.to_string(), section, index }))
        .collect()
}

impl Parameters {
    /// The queries released from the host ([`Query::release`]), by name.
    pub fn released_queries(&self) -> Vec<&'static str> {
        [("h", self.h.is_released()), ("l", self.l.is_released()), ("a", self.a.is_released()), ("b_g1", self.b_g1.is_released()), ("b_g2", self.b_g2.is_released())].into_iter().filter_map(|(q, r)| r.then_some(q)).collect()
    }

    /// The first query released from the host, if any.
    pub fn released_query(&self) -> Option<&'static str> {
        self.released_queries().first().copied()
    }

    /// Write the parameter file, points uncompressed (see the module docs for the layout).
    pub fn write_file(&self, path: &Path) -> Result<u64, ParamsError> {
        self.write_file_as(path, PointEncoding::Uncompressed)
    }

    /// Write the parameter file with the query points in `enc` (the vk stays uncompressed).
    /// Streamed: the points are encoded and hashed a slice at a time into a temporary file
    /// beside `path`, renamed over it when whole. Returns the file's size.
    pub fn write_file_as(&self, path: &Path, enc: PointEncoding) -> Result<u64, ParamsError> {
        let name = path.display().to_string();
        let io = |error| ParamsError::Io { path: name.clone(), error };
        if let Some(q) = self.released_query() {
            return Err(io(std::io::Error::other(format!("query {q} was released from the host after its upload: these parameters cannot be written"))));
        }
        let vk = &self.vk;
        let mut vk_bytes = Vec::with_capacity(VK_BYTES);
        for p in [&vk.alpha_g1, &vk.beta_g1, &vk.delta_g1] {
            vk_bytes.extend_from_slice(&p.to_uncompressed());
        }
        for p in [&vk.beta_g2, &vk.gamma_g2, &vk.delta_g2] {
            vk_bytes.extend_from_slice(&p.to_uncompressed());
        }
        let counts = [6, vk.ic.len(), self.h.len(), self.l.len(), self.a.len(), self.b_g1.len(), self.b_g2.len()];
        let (g1, g2) = (G1Affine::size(enc), G2Affine::size(enc));
        let sizes = [0, G1_BYTES, g1, g1, g1, g1, g2];
        let mut header = vec![0u8; HEADER_LEN];
        header[..8].copy_from_slice(MAGIC);
        put_u32(&mut header, 8, VERSION);
        put_u32(&mut header, 12, CURVE_BLS12_381);
        let compressed = if enc == PointEncoding::Compressed { FLAG_COMPRESSED } else { 0 };
        put_u64(&mut header, 16, if self.info.test_only { FLAG_TEST_ONLY } else { 0 } | compressed);
        put_u64(&mut header, 24, self.info.num_inputs);
        put_u64(&mut header, 32, self.info.num_aux);
        put_u64(&mut header, 40, self.info.num_constraints);
        put_u64(&mut header, 48, self.info.domain_size);
        let id = self.info.circuit_id.as_bytes();
        let id_len = id.len().min(64);
        header[56..56 + id_len].copy_from_slice(&id[..id_len]);
        let mut offset = HEADER_LEN as u64;
        for (k, (&count, &size)) in counts.iter().zip(&sizes).enumerate() {
            let at = 120 + 24 * k;
            put_u64(&mut header, at, offset);
            put_u64(&mut header, at + 8, count as u64);
            put_u64(&mut header, at + 16, size as u64);
            offset += if k == 0 { VK_BYTES as u64 } else { (count * size) as u64 };
        }
        // Whole or not at all: a temporary file beside `path`, renamed over it when
        // complete and synced (a full disk leaves the previous file as it was).
        let mut file = timeline::atomic::AtomicFile::create(path).map_err(io)?;
        {
            // The hash covers the header (with its hash field zero) and every section.
            let mut hasher = blake3::Hasher::new();
            hasher.update(&header);
            let mut w = HashingWriter { inner: BufWriter::with_capacity(1 << 22, file.file()), hasher, written: 0 };
            w.inner.write_all(&header).map_err(io)?;
            w.write_all(&vk_bytes).map_err(io)?;
            w.write_all(&encode::<G1Affine>(&vk.ic, PointEncoding::Uncompressed)).map_err(io)?;
            for q in [&self.h, &self.l, &self.a, &self.b_g1] {
                // Encode in slices to bound the transient buffer.
                for chunk in q.chunks(1 << 16) {
                    w.write_all(&encode::<G1Affine>(chunk, enc)).map_err(io)?;
                }
            }
            for chunk in self.b_g2.chunks(1 << 15) {
                w.write_all(&encode::<G2Affine>(chunk, enc)).map_err(io)?;
            }
            let hash = w.hasher.finalize();
            header[288..320].copy_from_slice(hash.as_bytes());
            let inner = w.inner.into_inner().map_err(|e| io(e.into_error()))?;
            inner.seek(SeekFrom::Start(0)).map_err(io)?;
            inner.write_all(&header).map_err(io)?;
        }
        file.commit().map_err(io)?;
        Ok(offset)
    }

    /// Read a parameter file, checking everything the layout promises. The file is mapped,
    /// not read into a buffer: the process holds the decoded points only.
    pub fn read_file(path: &Path) -> Result<(Parameters, LoadReport), ParamsError> {
        let t0 = Instant::now();
        let name = path.display().to_string();
        let io = |error| ParamsError::Io { path: name.clone(), error };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let (params, mut report) = if len == 0 {
            // Nothing to map: from_bytes says what is wrong with an empty file.
            Self::from_bytes_timed(&[], &name)?
        } else {
            // SAFETY: the mapping is read-only and dropped before this returns. It assumes the
            // file is neither modified nor truncated while it loads (the hash pass and the
            // decoding pass read it separately; a truncation would be a SIGBUS): parameter
            // files are written whole to a temporary file and renamed into place (`setup`,
            // `write_file_as`), never rewritten where they lie.
            let map = unsafe { memmap2::MmapOptions::new().map(&file) }.map_err(io)?;
            Self::from_bytes_timed(&map, &name)?
        };
        report.elapsed = t0.elapsed();
        Ok((params, report))
    }

    /// The shape of a parameter file from its header alone (magic and version checked, no
    /// point read, the hash not checked): what the engine's RAM budget is checked against
    /// before the file is loaded (`prove`).
    pub fn read_shape(path: &Path) -> Result<ParamsShape, ParamsError> {
        let name = path.display().to_string();
        let io = |error| ParamsError::Io { path: name.clone(), error };
        let mut h = vec![0u8; HEADER_LEN];
        let mut f = File::open(path).map_err(io)?;
        let actual = f.metadata().map_err(io)?.len();
        if actual < HEADER_LEN as u64 {
            return Err(ParamsError::Truncated { path: name, what: "the header".into(), needed: HEADER_LEN as u64, actual });
        }
        f.read_exact(&mut h).map_err(io)?;
        if &h[..8] != MAGIC {
            return Err(ParamsError::BadMagic { path: name, found: h[..8].to_vec() });
        }
        let version = get_u32(&h, 8);
        if version != VERSION {
            return Err(ParamsError::Version { path: name, found: version });
        }
        let id_raw = &h[56..120];
        let id_end = id_raw.iter().position(|&b| b == 0).unwrap_or(64);
        let circuit_id = std::str::from_utf8(&id_raw[..id_end]).map_err(|_| ParamsError::CircuitId { path: name.clone() })?.to_string();
        let count = |k: usize| get_u64(&h, 120 + 24 * k + 8);
        Ok(ParamsShape {
            info: ParamsInfo {
                circuit_id,
                num_inputs: get_u64(&h, 24),
                num_aux: get_u64(&h, 32),
                num_constraints: get_u64(&h, 40),
                domain_size: get_u64(&h, 48),
                test_only: get_u64(&h, 16) & FLAG_TEST_ONLY != 0,
            },
            ic: count(1),
            h: count(2),
            l: count(3),
            a: count(4),
            b_g1: count(5),
            b_g2: count(6),
        })
    }

    /// The shape of these parameters (the sizes of their queries).
    pub fn shape(&self) -> ParamsShape {
        ParamsShape {
            info: self.info.clone(),
            ic: self.vk.ic.len() as u64,
            h: self.h.len() as u64,
            l: self.l.len() as u64,
            a: self.a.len() as u64,
            b_g1: self.b_g1.len() as u64,
            b_g2: self.b_g2.len() as u64,
        }
    }

    /// Parse a whole parameter file held in memory; `name` is used in errors.
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Parameters, ParamsError> {
        Self::from_bytes_timed(bytes, name).map(|(p, _)| p)
    }

    /// [`Parameters::from_bytes`] with the times of its hash check and decoding.
    fn from_bytes_timed(bytes: &[u8], name: &str) -> Result<(Parameters, LoadReport), ParamsError> {
        let path = name.to_string();
        let actual = bytes.len() as u64;
        if bytes.len() < 8 || &bytes[..8] != MAGIC {
            return Err(ParamsError::BadMagic { path, found: bytes[..bytes.len().min(8)].to_vec() });
        }
        if bytes.len() < HEADER_LEN {
            return Err(ParamsError::Truncated { path, what: "the header".into(), needed: HEADER_LEN as u64, actual });
        }
        let h = &bytes[..HEADER_LEN];
        let version = get_u32(h, 8);
        if version != VERSION {
            return Err(ParamsError::Version { path, found: version });
        }
        let curve = get_u32(h, 12);
        if curve != CURVE_BLS12_381 {
            return Err(ParamsError::Curve { path, found: curve });
        }
        if h[320..HEADER_LEN].iter().any(|&b| b != 0) {
            return Err(ParamsError::Reserved { path, what: "reserved area (bytes 320..512)" });
        }
        if get_u64(h, 16) & !(FLAG_TEST_ONLY | FLAG_COMPRESSED) != 0 {
            return Err(ParamsError::Reserved { path, what: "flags other than TEST-ONLY and compressed" });
        }
        let enc = if get_u64(h, 16) & FLAG_COMPRESSED != 0 { PointEncoding::Compressed } else { PointEncoding::Uncompressed };
        let id_raw = &h[56..120];
        let id_end = id_raw.iter().position(|&b| b == 0).unwrap_or(64);
        let circuit_id = std::str::from_utf8(&id_raw[..id_end]).map_err(|_| ParamsError::CircuitId { path: path.clone() })?.to_string();
        let info = ParamsInfo {
            circuit_id,
            num_inputs: get_u64(h, 24),
            num_aux: get_u64(h, 32),
            num_constraints: get_u64(h, 40),
            domain_size: get_u64(h, 48),
            test_only: get_u64(h, 16) & FLAG_TEST_ONLY != 0,
        };
        // Section table: every section must lie inside the file, in order, sized as said.
        let mut ranges = Vec::with_capacity(7);
        let mut expect = HEADER_LEN as u64;
        for (k, &section) in SECTIONS.iter().enumerate() {
            let at = 120 + 24 * k;
            let (off, count, size) = (get_u64(h, at), get_u64(h, at + 8), get_u64(h, at + 16));
            let want_size = match k {
                0 => 0,
                1 => G1_BYTES as u64,
                6 => G2Affine::size(enc) as u64,
                _ => G1Affine::size(enc) as u64,
            };
            if size != want_size || (k == 0 && count != 6) {
                return Err(ParamsError::Section { path, section, reason: format!("{count} points of {size} bytes, expected {want_size}-byte points") });
            }
            if off != expect {
                return Err(ParamsError::Section { path, section, reason: format!("starts at {off}, expected {expect}") });
            }
            let len = if k == 0 { VK_BYTES as u64 } else { count.checked_mul(size).ok_or_else(|| ParamsError::Section { path: path.clone(), section, reason: "size overflows".into() })? };
            let end = off.checked_add(len).ok_or_else(|| ParamsError::Section { path: path.clone(), section, reason: "size overflows".into() })?;
            if end > actual {
                return Err(ParamsError::Truncated { path, what: format!("section {section}"), needed: end, actual });
            }
            ranges.push((off as usize, end as usize, count as usize));
            expect = end;
        }
        if expect != actual {
            return Err(ParamsError::Section { path, section: "b_g2", reason: format!("{} trailing bytes after the last section", actual - expect) });
        }
        let t_hash = Instant::now();
        let mut hasher = blake3::Hasher::new();
        hasher.update(&h[..288]);
        hasher.update(&[0u8; 32]);
        hasher.update(&h[320..]);
        // BLAKE3's tree over all cores: the same hash as a serial update.
        hasher.update_rayon(&bytes[HEADER_LEN..]);
        if hasher.finalize().as_bytes()[..] != h[288..320] {
            return Err(ParamsError::Hash { path });
        }
        let hash = t_hash.elapsed();
        // Sizes must agree with the header's circuit description.
        let checks: [(&'static str, usize, u64); 3] = [
            ("ic", ranges[1].2, info.num_inputs),
            ("h", ranges[2].2, info.domain_size.saturating_sub(1)),
            ("l", ranges[3].2, info.num_aux),
        ];
        for (section, got, want) in checks {
            if got as u64 != want {
                return Err(ParamsError::Section { path, section, reason: format!("{got} points, the header implies {want}") });
            }
        }
        let t_decode = Instant::now();
        let g1 = |k: usize| decode::<G1Affine>(&bytes[ranges[k].0..ranges[k].1], if k == 1 { PointEncoding::Uncompressed } else { enc }, &path, SECTIONS[k]);
        let (o, _, _) = ranges[0];
        let vk_g1 = decode::<G1Affine>(&bytes[o..o + 3 * G1_BYTES], PointEncoding::Uncompressed, &path, "vk")?;
        let vk_g2 = decode::<G2Affine>(&bytes[o + 3 * G1_BYTES..o + VK_BYTES], PointEncoding::Uncompressed, &path, "vk")?;
        let vk = VerifyingKey {
            alpha_g1: vk_g1[0],
            beta_g1: vk_g1[1],
            delta_g1: vk_g1[2],
            beta_g2: vk_g2[0],
            gamma_g2: vk_g2[1],
            delta_g2: vk_g2[2],
            ic: g1(1)?,
        };
        let params = Parameters {
            vk,
            h: g1(2)?.into(),
            l: g1(3)?.into(),
            a: g1(4)?.into(),
            b_g1: g1(5)?.into(),
            b_g2: decode::<G2Affine>(&bytes[ranges[6].0..ranges[6].1], enc, &path, "b_g2")?.into(),
            info,
        };
        let report = LoadReport { bytes: actual, elapsed: Duration::ZERO, hash, decode: t_decode.elapsed(), encoding: enc };
        Ok((params, report))
    }

    /// Refuse parameters made for a different circuit shape.
    pub fn check_fits(&self, inputs: usize, aux: usize, constraints: usize) -> Result<(), String> {
        let i = &self.info;
        if i.num_inputs as usize != inputs || i.num_aux as usize != aux || i.num_constraints as usize != constraints {
            return Err(format!(
                "parameters `{}` are for {} inputs / {} aux / {} constraints, the circuit has {} / {} / {}",
                i.circuit_id, i.num_inputs, i.num_aux, i.num_constraints, inputs, aux, constraints
            ));
        }
        Ok(())
    }
}
