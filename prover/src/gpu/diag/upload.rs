//! `gpu upload`: host-to-device uploads through the engine's page-locked staging, timed at
//! several staging chunk sizes, with and without background memory traffic on the host.
//!
//! Why: at 2^27 (F16, pw 12) the a/b/c fill into the 64 MiB staging chunks took 0.95–1.26 s a
//! partition (runs 99, 102, 103: three ways of scheduling it), where run 75's fill into one
//! page-locked buffer per vector took 0.32 s. This separates what the chunk size costs from
//! what the host's other work does to it: the same 4 GiB (say) filled and copied at each size,
//! alone and beside `load` threads that stream memory (as the syntheses' witness generation
//! does), in each fill mode (`FillMode`: a parallel copy per chunk, or one chunk per fill
//! thread, pipelined) and with no fill at all (`registered`: the source's own pages locked in
//! place for the copy, what `cuda.abc_upload = "registered"` does). Each row: the fill (the
//! time the upload waited for it), the locking and unlocking (registered), the copies'
//! CUDA-event time, and the wall of the whole upload; the load's own GB/s beside it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::gpu::device::FillMode;
use crate::gpu::{Gpu, GpuError};

/// One measured row (the median run of `runs` after a warm-up).
#[derive(Clone, Debug, serde::Serialize)]
pub struct UploadRow {
    pub gib: f64,
    pub chunk_mib: f64,
    pub mode: FillMode,
    /// Every chunk went through page-locked staging (false: some were copied from pageable
    /// memory, the row is not the staging's figure).
    pub pinned: bool,
    pub load_threads: usize,
    pub fill_ms: f64,
    /// Registered uploads: page-locking the source in place (cuMemHostRegister), and
    /// unlocking it after the copy (0 for staged rows).
    pub lock_ms: f64,
    pub unlock_ms: f64,
    pub copy_gpu_ms: f64,
    pub wall_ms: f64,
    /// GB/s of the whole upload (bytes ÷ wall).
    pub wall_gbs: f64,
    /// GB/s the load threads copied meanwhile (read + write), 0 without load.
    pub load_gbs: f64,
    pub runs: usize,
    /// What held page-locked memory meanwhile ([`Beside`]).
    pub beside: Beside,
}

/// Threads that copy 256 MiB buffers back and forth until dropped, counting the bytes.
struct Load {
    stop: Arc<AtomicBool>,
    bytes: Arc<AtomicU64>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start(n: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let bytes = Arc::new(AtomicU64::new(0));
        let threads = (0..n)
            .map(|_| {
                let (stop, bytes) = (stop.clone(), bytes.clone());
                std::thread::spawn(move || {
                    const LEN: usize = 256 << 20;
                    let (mut a, mut b) = (vec![1u8; LEN], vec![2u8; LEN]);
                    while !stop.load(Ordering::Relaxed) {
                        for (d, s) in a.chunks_mut(1 << 20).zip(b.chunks(1 << 20)) {
                            d.copy_from_slice(s);
                            bytes.fetch_add(2 << 20, Ordering::Relaxed);
                        }
                        std::mem::swap(&mut a, &mut b);
                    }
                })
            })
            .collect();
        let load = Load { stop, bytes, threads };
        // Past the buffers' first touch (page faults): as many bytes as every thread copying
        // its buffer once.
        while load.bytes.load(Ordering::Relaxed) < (n as u64) * 2 * (256 << 20) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        load
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// What else holds page-locked host memory during the rows (`--beside`): at 2^27 the GPU
/// workers' staged uploads filled 3–6× slower while a, b and c were registered (runs
/// 140–141); memory merely held locked costs them 9–19 % (run 143).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Beside {
    /// Nothing locked.
    Nothing,
    /// As many bytes as the upload held page-locked (touched first, locked before the rows,
    /// unlocked after).
    Held,
}
// (A third, a thread locking and unlocking as many bytes over and over, ran once at f56c150:
// the staged upload beside it did not finish in 140 s (run 143); taken out until the reason,
// a starved driver or a wait of ours, is known.)

impl Beside {
    pub const ALL: [Beside; 2] = [Beside::Nothing, Beside::Held];

    pub fn name(self) -> &'static str {
        match self {
            Beside::Nothing => "nothing",
            Beside::Held => "held",
        }
    }
}

/// [`bench_upload`] once per entry of `besides`, the rows of each beside what it says
/// ([`Beside`]); each row's `beside` names it.
#[allow(clippy::too_many_arguments)]
pub fn bench_upload_beside(gpu: &Gpu, gib: f64, chunks_mib: &[u64], modes: &[FillMode], loads: &[usize], runs: usize, besides: &[Beside], log: &mut dyn FnMut(&str)) -> Result<Vec<UploadRow>, GpuError> {
    let words = ((gib * (1u64 << 30) as f64) / 4.0) as usize;
    let mut rows = Vec::new();
    for &beside in besides {
        log(&format!("beside: {}", beside.name()));
        if beside == Beside::Nothing {
            rows.extend(bench_upload(gpu, gib, chunks_mib, modes, loads, runs, log)?);
            continue;
        }
        let mut other: Vec<u32> = crate::pce::eval::with_capacity_huge(words);
        other.extend((0..words).map(|i| i as u32));
        let held = gpu.lock_host(&other)?.ok_or_else(|| GpuError::input("gpu upload", "the memory beside could not be page-locked"))?;
        let got = bench_upload(gpu, gib, chunks_mib, modes, loads, runs, log);
        drop(held);
        rows.extend(got?.into_iter().map(|r| UploadRow { beside, ..r }));
    }
    Ok(rows)
}

/// Times uploads of `gib` GiB at each staging chunk size (MiB) beside each count of load
/// threads: one warm-up (it allocates the staging), then the median of `runs`.
pub fn bench_upload(gpu: &Gpu, gib: f64, chunks_mib: &[u64], modes: &[FillMode], loads: &[usize], runs: usize, log: &mut dyn FnMut(&str)) -> Result<Vec<UploadRow>, GpuError> {
    let words = ((gib * (1u64 << 30) as f64) / 4.0) as usize;
    if words == 0 || chunks_mib.iter().any(|&c| c == 0) {
        return Err(GpuError::input("gpu upload", "the size and every chunk size must be positive"));
    }
    // The source, touched, allocated as a synthesis's a/b/c are (advised for huge pages).
    let mut src: Vec<u32> = crate::pce::eval::with_capacity_huge(words);
    src.extend((0..words).map(|i| (i as u32).wrapping_mul(2_654_435_761) ^ (i >> 32) as u32));
    if modes.contains(&FillMode::Pipelined) && !gpu.has_fill_threads() {
        return Err(GpuError::input("gpu upload", "the device's fill threads could not be started: the pipelined mode would run as the parallel one"));
    }
    let mut rows = Vec::new();
    for &load_threads in loads {
        let load = (load_threads > 0).then(|| Load::start(load_threads));
        // Every chunk size in every fill mode, beside this load.
        // (A registered upload has no chunks: one row, at the first size.)
        let rows_here = chunks_mib.iter().enumerate().flat_map(|(i, c)| modes.iter().filter(move |m| i == 0 || **m != FillMode::Registered).map(move |m| (c, m)));
        for (&chunk_mib, &mode) in rows_here {
            let chunk_words = ((chunk_mib << 20) / 4) as usize;
            let mut samples = Vec::with_capacity(runs);
            for run in 0..=runs.max(1) {
                let load_b0 = load.as_ref().map_or(0, |l| l.bytes.load(Ordering::Relaxed));
                let t0 = Instant::now();
                let (mut buf, times, pinned) = if mode == FillMode::Registered {
                    match gpu.upload_registered(&[&src], words)? {
                        Some((mut ups, lock)) => {
                            let (buf, mut times) = ups.pop().ok_or_else(|| GpuError::input("gpu upload", "no upload came back"))?.finish(gpu)?;
                            // The unlock, timed apart (the engine does it off the GPU worker's path).
                            let t = Instant::now();
                            drop(lock);
                            times.finish_ms = t.elapsed().as_secs_f64() * 1e3;
                            (buf, times, true)
                        }
                        None => return Err(GpuError::input("gpu upload", "the source could not be page-locked in place (cuMemHostRegister failed)")),
                    }
                } else {
                    let up = gpu.upload_words_chunked(words, words, 1, chunk_words, mode, |off, dst| super::super::device::par_copy(dst, &src[off..off + dst.len()]))?;
                    let pinned = up.pinned;
                    let (buf, times) = up.finish(gpu)?;
                    (buf, times, pinned)
                };
                let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
                let load_gbs = load.as_ref().map_or(0.0, |l| (l.bytes.load(Ordering::Relaxed) - load_b0) as f64 / (wall_ms * 1e6));
                // Every word back after the warm-up, the first and last after each timed run:
                // a broken copy is an error, not a fast row.
                let ok = if run == 0 {
                    gpu.download_words(&buf.slice(..), "upload check")? == src
                } else {
                    gpu.download_words(&buf.slice(0..1), "upload check")?.first() == src.first() && gpu.download_words(&buf.slice(words - 1..), "upload check")?.first() == src.last()
                };
                if !ok {
                    return Err(GpuError::input("gpu upload", format!("the words uploaded in {chunk_mib} MiB chunks ({mode:?}) differ from the source")));
                }
                // Zeroed before it is freed: the next run's buffer may be this memory again,
                // and must not pass the check with the words left from this one.
                gpu.stream.memset_zeros(&mut buf).map_err(|e| GpuError::input("gpu upload", format!("zeroing the device buffer: {e}")))?;
                drop(buf);
                if run > 0 {
                    samples.push((wall_ms, times.fill_ms, times.gpu_ms, load_gbs, pinned, times.lock_ms, times.finish_ms));
                }
            }
            samples.sort_by(|a, b| a.0.total_cmp(&b.0));
            let pinned = samples.iter().all(|s| s.4);
            let (wall_ms, fill_ms, copy_gpu_ms, load_gbs, _, lock_ms, finish_ms) = samples[samples.len() / 2];
            let registered = mode == FillMode::Registered;
            let unlock_ms = if registered { finish_ms } else { 0.0 };
            let chunk = if registered { 0.0 } else { chunk_mib as f64 };
            let row = UploadRow { gib, chunk_mib: chunk, mode, pinned, load_threads, fill_ms, lock_ms, unlock_ms, copy_gpu_ms, wall_ms, wall_gbs: words as f64 * 4.0 / wall_ms / 1e6, load_gbs, runs: samples.len(), beside: Beside::Nothing };
            log(&format!(
                "upload {:.2} GiB  chunk {:>6} MiB  {:<10}  load {:>2} threads  fill {:>8.1} ms  lock {:>7.1} ms  unlock {:>7.1} ms  copies {:>7.1} ms  wall {:>8.1} ms  {:>6.1} GB/s  (load {:>5.1} GB/s){}",
                row.gib,
                chunk,
                format!("{mode:?}").to_lowercase(),
                load_threads,
                fill_ms,
                lock_ms,
                unlock_ms,
                copy_gpu_ms,
                wall_ms,
                row.wall_gbs,
                load_gbs,
                if pinned { "" } else { "  NOT ALL PINNED: some chunks copied from pageable memory" }
            ));
            rows.push(row);
        }
        drop(load);
    }
    Ok(rows)
}
