//! The PCE on disk, next to the parameter file it serves (`params.bin` → `params.bin.pce`),
//! because extracting a large circuit costs about one circuit-path synthesis and the result
//! is the same every time the parameters are used.
//!
//! # File layout (version 1, integers little-endian)
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `PSCOPEPC` |
//! | 8 | 4 | format version (1) |
//! | 12 | 4 | reserved, zero |
//! | 16 | 8 | inputs (incl. ONE) |
//! | 24 | 8 | aux variables |
//! | 32 | 8 | constraints (incl. the input constraints) |
//! | 40 | 64 | circuit id, UTF-8, NUL padded |
//! | 104 | 32 | BLAKE3 of the parameter file's content (its header's hash), zero if none |
//! | 136 | 32 | shape hash ([`super::Pce::shape_hash`]) |
//! | 168 | 3 × 24 | per matrix A, B, C: non-zeros, table entries, index width (1, 2, 4) |
//! | 240 | 8 | payload bytes |
//! | 248 | 32 | BLAKE3 of the header (this field zeroed) followed by the payload |
//! | 280 | 32 | BLAKE3 of bytes 0..248 (the header's fields, checked before the key is compared) |
//! | 312 | 200 | reserved, zero |
//! | 512 | … | payload: per matrix A, B, C: row offsets ((constraints + 1) × u32), columns (nnz × u32), coefficient indices (nnz × width), table (entries × 32 bytes, canonical little-endian) |
//!
//! The key of a cache is (format version, circuit id, inputs, aux, constraints, parameter
//! file hash): a file whose key differs is for another shape (or parameters) and is
//! rebuilt. A file that does not parse, is truncated or fails its hash is corrupt: an
//! error naming the file, or rebuilt with a warning when asked ([`OnCorrupt::Rebuild`]).
//! Writes go to a temporary file in the same folder, synced, then renamed over the cache,
//! so readers see the old file or the new one, never half of one.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use bellpepper_core::Circuit;
use blstrs::Scalar;
use ff::PrimeField;

use super::matrix::{le_bytes_u32, CoeffIndex, CsrMatrix};
use super::{Pce, PceError};

pub const MAGIC: &[u8; 8] = b"PSCOPEPC";
pub const VERSION: u32 = 1;
pub const HEADER_LEN: usize = 512;
const HASH_AT: usize = 248;
const HEADER_HASH_AT: usize = 280;

/// What a cache must match to be used (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PceKey {
    pub circuit_id: String,
    pub inputs: u64,
    pub aux: u64,
    pub constraints: u64,
    /// The parameter file's content hash (zero when the parameters come from no file).
    pub params_hash: [u8; 32],
}

impl PceKey {
    /// The key of the parameters `info`, read from `params_path` when given (its content hash
    /// is in its header, so only the header is read).
    pub fn for_params(info: &crate::params::ParamsInfo, params_path: Option<&Path>) -> Result<PceKey, PceError> {
        let params_hash = match params_path {
            Some(p) => params_file_hash(p)?,
            None => [0; 32],
        };
        Ok(PceKey { circuit_id: info.circuit_id.clone(), inputs: info.num_inputs, aux: info.num_aux, constraints: info.num_constraints, params_hash })
    }

    /// The key of an extracted PCE for circuit `id` (no parameter file).
    pub fn of(pce: &Pce, id: &str) -> PceKey {
        PceKey { circuit_id: id.to_string(), inputs: pce.num_inputs() as u64, aux: pce.num_aux() as u64, constraints: pce.num_constraints() as u64, params_hash: [0; 32] }
    }

    fn describe(&self) -> String {
        format!("`{}` ({} inputs / {} aux / {} constraints)", self.circuit_id, self.inputs, self.aux, self.constraints)
    }
}

/// The BLAKE3 a parameter file's header records of its content (bytes 288..320).
fn params_file_hash(path: &Path) -> Result<[u8; 32], PceError> {
    let io = |error| PceError::Io { path: path.display().to_string(), error };
    let mut h = [0u8; 320];
    File::open(path).and_then(|mut f| f.read_exact(&mut h)).map_err(io)?;
    let mut out = [0u8; 32];
    out.copy_from_slice(&h[288..320]);
    Ok(out)
}

/// Where the cache of the parameter file `params` lives: beside it, `.pce` appended.
pub fn cache_path(params: &Path) -> PathBuf {
    let mut name = params.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| "params".into());
    name.push(".pce");
    params.with_file_name(name)
}

/// What to do with a corrupt cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnCorrupt {
    /// Fail, naming the file.
    #[default]
    Error,
    /// Warn and rebuild it.
    Rebuild,
}

/// Where a PCE came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PceSource {
    /// Read from the cache.
    Loaded,
    /// Extracted: there was no cache.
    Built,
    /// Extracted: the cache was for another shape, of another version, or corrupt (why).
    Rebuilt(String),
}

impl PceSource {
    pub fn as_str(&self) -> &'static str {
        match self {
            PceSource::Loaded => "cache",
            PceSource::Built => "extracted",
            PceSource::Rebuilt(_) => "rebuilt",
        }
    }
}

/// What was found at a cache path.
#[derive(Debug)]
pub enum Lookup {
    Hit(Pce),
    Missing,
    /// For another key or format version (why).
    Stale(String),
}

struct Header {
    key: PceKey,
    shape_hash: [u8; 32],
    /// (nnz, table entries, index width) of A, B, C.
    mats: [(u64, u64, u64); 3],
    payload: u64,
    hash: [u8; 32],
}

fn put_u64(h: &mut [u8], at: usize, v: u64) {
    h[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
fn get_u64(h: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&h[at..at + 8]);
    u64::from_le_bytes(b)
}

fn payload_len(constraints: u64, mats: &[(u64, u64, u64); 3]) -> Option<u64> {
    let mut total = 0u64;
    for &(nnz, table, width) in mats {
        let m = constraints.checked_add(1)?.checked_mul(4)?.checked_add(nnz.checked_mul(4 + width)?)?.checked_add(table.checked_mul(32)?)?;
        total = total.checked_add(m)?;
    }
    Some(total)
}

fn encode_header(pce: &Pce, key: &PceKey) -> Vec<u8> {
    let mut h = vec![0u8; HEADER_LEN];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    put_u64(&mut h, 16, pce.num_inputs() as u64);
    put_u64(&mut h, 24, pce.num_aux() as u64);
    put_u64(&mut h, 32, pce.num_constraints() as u64);
    let id = key.circuit_id.as_bytes();
    let n = id.len().min(64);
    h[40..40 + n].copy_from_slice(&id[..n]);
    h[104..136].copy_from_slice(&key.params_hash);
    h[136..168].copy_from_slice(&pce.shape_hash());
    let (a, b, c) = pce.matrices();
    let mut mats = [(0, 0, 0); 3];
    for (k, m) in [a, b, c].into_iter().enumerate() {
        mats[k] = (m.nnz() as u64, m.table.len() as u64, m.coeffs.width() as u64);
        put_u64(&mut h, 168 + 24 * k, mats[k].0);
        put_u64(&mut h, 176 + 24 * k, mats[k].1);
        put_u64(&mut h, 184 + 24 * k, mats[k].2);
    }
    put_u64(&mut h, 240, payload_len(pce.num_constraints() as u64, &mats).unwrap_or(0));
    let fields = blake3::hash(&h[..HASH_AT]);
    h[HEADER_HASH_AT..HEADER_HASH_AT + 32].copy_from_slice(fields.as_bytes());
    h
}

/// Parse a header; `Err(reason)` when it is not one of ours, `Ok(Err(why))` when it is of
/// another version.
fn decode_header(h: &[u8]) -> Result<Result<Header, String>, String> {
    if h.len() < 8 || &h[..8] != MAGIC {
        return Err(format!("not a PCE cache (magic {:?}, expected {:?})", String::from_utf8_lossy(&h[..h.len().min(8)]), String::from_utf8_lossy(MAGIC)));
    }
    if h.len() < HEADER_LEN {
        return Err(format!("truncated: the header needs {HEADER_LEN} bytes, the file has {}", h.len()));
    }
    let version = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
    if version != VERSION {
        return Ok(Err(format!("format version {version}, this build writes version {VERSION}")));
    }
    if blake3::hash(&h[..HASH_AT]).as_bytes()[..] != h[HEADER_HASH_AT..HEADER_HASH_AT + 32] {
        return Err("header hash mismatch (the header is corrupt or was modified after it was written)".into());
    }
    let id_raw = &h[40..104];
    let end = id_raw.iter().position(|&b| b == 0).unwrap_or(64);
    let circuit_id = std::str::from_utf8(&id_raw[..end]).map_err(|_| "the circuit id is not UTF-8".to_string())?.to_string();
    let mut params_hash = [0u8; 32];
    params_hash.copy_from_slice(&h[104..136]);
    let mut shape_hash = [0u8; 32];
    shape_hash.copy_from_slice(&h[136..168]);
    let mut mats = [(0, 0, 0); 3];
    for (k, m) in mats.iter_mut().enumerate() {
        *m = (get_u64(h, 168 + 24 * k), get_u64(h, 176 + 24 * k), get_u64(h, 184 + 24 * k));
        if ![1, 2, 4].contains(&m.2) {
            return Err(format!("matrix {}: index width {} (expected 1, 2 or 4)", ["A", "B", "C"][k], m.2));
        }
    }
    let mut hash = [0u8; 32];
    hash.copy_from_slice(&h[HASH_AT..HASH_AT + 32]);
    let key = PceKey { circuit_id, inputs: get_u64(h, 16), aux: get_u64(h, 24), constraints: get_u64(h, 32), params_hash };
    Ok(Ok(Header { key, shape_hash, mats, payload: get_u64(h, 240), hash }))
}

/// Write `pce` as the cache file `path` (atomically: temporary file, sync, rename).
/// Returns the bytes written.
pub fn write(pce: &Pce, key: &PceKey, path: &Path) -> Result<u64, PceError> {
    let name = path.display().to_string();
    let io = |error| PceError::Io { path: name.clone(), error };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new().prefix(".pce-").suffix(".tmp").tempfile_in(dir).map_err(io)?;
    let mut header = encode_header(pce, key);
    let mut hasher = blake3::Hasher::new();
    hasher.update(&header);
    let mut written = HEADER_LEN as u64;
    {
        let mut w = BufWriter::with_capacity(1 << 22, tmp.as_file_mut());
        w.write_all(&header).map_err(io)?;
        let mut put = |bytes: &[u8]| -> std::io::Result<()> {
            hasher.update(bytes);
            written += bytes.len() as u64;
            w.write_all(bytes)
        };
        let (a, b, c) = pce.matrices();
        for m in [a, b, c] {
            put(&le_bytes_u32(&m.row_ptr)).map_err(io)?;
            put(&le_bytes_u32(&m.cols)).map_err(io)?;
            put(&m.coeffs.le_bytes()).map_err(io)?;
            let mut table = Vec::with_capacity(m.table.len() * 32);
            for s in &m.table {
                table.extend_from_slice(&s.to_repr());
            }
            put(&table).map_err(io)?;
        }
        w.flush().map_err(io)?;
    }
    header[HASH_AT..HASH_AT + 32].copy_from_slice(hasher.finalize().as_bytes());
    {
        use std::io::{Seek, SeekFrom};
        let f = tmp.as_file_mut();
        f.seek(SeekFrom::Start(0)).map_err(io)?;
        f.write_all(&header).map_err(io)?;
        f.sync_all().map_err(io)?;
    }
    // A temporary file is private (0600); the cache is as readable as the parameters.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).map_err(io)?;
    }
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(written)
}

/// Read the cache at `path` if it is there and for `key`.
pub fn read(path: &Path, key: &PceKey) -> Result<Lookup, PceError> {
    let name = path.display().to_string();
    let corrupt = |reason: String| PceError::Corrupt { path: name.clone(), reason };
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lookup::Missing),
        Err(error) => return Err(PceError::Io { path: name.clone(), error }),
    };
    let actual = file.metadata().map_err(|error| PceError::Io { path: name.clone(), error })?.len();
    let mut r = BufReader::with_capacity(1 << 22, file);
    let mut header = vec![0u8; HEADER_LEN.min(actual as usize)];
    r.read_exact(&mut header).map_err(|error| PceError::Io { path: name.clone(), error })?;
    let h = match decode_header(&header).map_err(corrupt)? {
        Ok(h) => h,
        Err(why) => return Ok(Lookup::Stale(why)),
    };
    if h.key != *key {
        let why = if h.key.params_hash != key.params_hash && (h.key.circuit_id == key.circuit_id) {
            format!("made with another parameter file for {}", key.describe())
        } else {
            format!("for {}, the circuit is {}", h.key.describe(), key.describe())
        };
        return Ok(Lookup::Stale(why));
    }
    let expect = payload_len(h.key.constraints, &h.mats).ok_or_else(|| corrupt("sizes overflow".into()))?;
    if h.payload != expect || actual != HEADER_LEN as u64 + expect {
        return Err(corrupt(format!("truncated or padded: the header's sizes need {} bytes, the file has {actual}", HEADER_LEN as u64 + expect)));
    }
    let mut hasher = blake3::Hasher::new();
    let mut zeroed = header.clone();
    zeroed[HASH_AT..HASH_AT + 32].fill(0);
    hasher.update(&zeroed);
    let rows = h.key.constraints as usize;
    let mut mats = Vec::with_capacity(3);
    let ioerr = |error: std::io::Error| PceError::Io { path: name.clone(), error };
    for &(nnz, table_len, width) in &h.mats {
        let row_ptr = read_u32s(&mut r, rows + 1, &mut hasher).map_err(ioerr)?;
        let cols = read_u32s(&mut r, nnz as usize, &mut hasher).map_err(ioerr)?;
        let coeffs = match width {
            1 => CoeffIndex::U8(read_bytes(&mut r, nnz as usize, &mut hasher).map_err(ioerr)?),
            2 => {
                let b = read_bytes(&mut r, 2 * nnz as usize, &mut hasher).map_err(ioerr)?;
                CoeffIndex::U16(b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect())
            }
            _ => CoeffIndex::U32(read_u32s(&mut r, nnz as usize, &mut hasher).map_err(ioerr)?),
        };
        let raw = read_bytes(&mut r, 32 * table_len as usize, &mut hasher).map_err(ioerr)?;
        mats.push((row_ptr, cols, coeffs, raw));
    }
    if hasher.finalize().as_bytes() != &h.hash {
        return Err(corrupt("content hash mismatch (the file is corrupt or was modified after it was written)".into()));
    }
    let mut built = Vec::with_capacity(3);
    for (k, (row_ptr, cols, coeffs, raw)) in mats.into_iter().enumerate() {
        let mut table = Vec::with_capacity(raw.len() / 32);
        for (i, c) in raw.chunks_exact(32).enumerate() {
            let mut repr = [0u8; 32];
            repr.copy_from_slice(c);
            let s = Option::<Scalar>::from(Scalar::from_repr(repr)).ok_or_else(|| corrupt(format!("matrix {}: coefficient #{i} is not a field element", ["A", "B", "C"][k])))?;
            table.push(s);
        }
        built.push(CsrMatrix { row_ptr, cols, coeffs, table });
    }
    let c = built.pop().expect("three matrices");
    let b = built.pop().expect("three matrices");
    let a = built.pop().expect("three matrices");
    let pce = Pce::from_matrices(h.key.inputs as usize, h.key.aux as usize, a, b, c, Some(h.shape_hash)).map_err(|e| corrupt(e.to_string()))?;
    Ok(Lookup::Hit(pce))
}

fn read_bytes(r: &mut impl Read, n: usize, hasher: &mut blake3::Hasher) -> std::io::Result<Vec<u8>> {
    let mut v = vec![0u8; n];
    r.read_exact(&mut v)?;
    hasher.update(&v);
    Ok(v)
}

fn read_u32s(r: &mut impl Read, n: usize, hasher: &mut blake3::Hasher) -> std::io::Result<Vec<u32>> {
    let mut v = vec![0u32; n];
    #[cfg(target_endian = "little")]
    {
        // SAFETY: u32 has no padding and every bit pattern is valid; the byte view covers
        // exactly the vector's initialised elements.
        let bytes = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, n * 4) };
        r.read_exact(bytes)?;
        hasher.update(bytes);
    }
    #[cfg(not(target_endian = "little"))]
    {
        let b = read_bytes(r, 4 * n, hasher)?;
        for (x, c) in v.iter_mut().zip(b.chunks_exact(4)) {
            *x = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
    }
    Ok(v)
}

/// Read the cache at `path` for `key`, or make the PCE with `build` and write it there.
/// A stale cache (another key or version) is rebuilt; a corrupt one is an error naming the
/// file, or rebuilt with a warning under [`OnCorrupt::Rebuild`]. A cache that cannot be
/// written is a warning (the PCE is still returned).
pub fn load_or_build_with(path: &Path, key: &PceKey, on_corrupt: OnCorrupt, build: impl FnOnce() -> Result<Pce, PceError>) -> Result<(Pce, PceSource), PceError> {
    let source = match read(path, key) {
        Ok(Lookup::Hit(pce)) => return Ok((pce, PceSource::Loaded)),
        Ok(Lookup::Missing) => PceSource::Built,
        Ok(Lookup::Stale(why)) => {
            tracing::info!("{}: the PCE cache is {why}; rebuilding it", path.display());
            PceSource::Rebuilt(why)
        }
        Err(e @ PceError::Corrupt { .. }) if on_corrupt == OnCorrupt::Rebuild => {
            tracing::warn!("{e}; rebuilding it");
            PceSource::Rebuilt(e.to_string())
        }
        Err(e) => return Err(e),
    };
    let pce = build()?;
    store(&pce, key, path);
    Ok((pce, source))
}

/// Write the cache, turning a failure into a warning (the cache only saves time).
pub fn store(pce: &Pce, key: &PceKey, path: &Path) {
    if let Err(e) = write(pce, key, path) {
        tracing::warn!("could not write the PCE cache: {e}");
    }
}

/// [`load_or_build_with`] extracting `circuit` (the cache of the parameter file
/// `params_path`, keyed by `key`: e.g. [`PceKey::for_params`]).
pub fn load_or_build<C: Circuit<Scalar>>(params_path: &Path, key: &PceKey, circuit: C, on_corrupt: OnCorrupt) -> Result<(Pce, PceSource), PceError> {
    load_or_build_with(&cache_path(params_path), key, on_corrupt, || super::extract(circuit))
}
