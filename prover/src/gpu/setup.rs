//! Fixed-base multiplication on the device for the TEST-ONLY setup (`prover/cuda/setup.cu`):
//! k·G for many scalars k over a comb table, in G1 and G2, affine, bit-identical to the CPU
//! comb of [`crate::setup`].
//!
//! It exists because the seeded setup at full scale (2^27 constraints: ~6·10^8 G1 and
//! ~1.3·10^8 G2 fixed-base multiplications) takes ~16 minutes on the H200 host's 16 cores
//! and a few seconds on the H200. The table is built on the host by the same code as the CPU
//! path (so the layout cannot drift) and uploaded once ([`Gpu::upload_comb`]); the scalars
//! go up and the affine points come down in batches ([`Gpu::comb_muls`]), straight into the
//! caller's output slice.

use std::marker::PhantomData;

use blstrs::{G1Affine, G2Affine, Scalar};
use cudarc::driver::{CudaEvent, CudaSlice, PinnedHostSlice};

use super::convert::scalar_words;
use super::device::{cfg_1d, launch, par_copy, Gpu};
use super::error::{Ctx, GpuError};
use super::kernels::{setup as ks, KernelName};
use super::msm::{GpuCurve, G1, G2};

/// The setup kernels of a group.
pub trait SetupCurve: GpuCurve {
    /// The comb kernel (scalars → XYZZ) and the batch conversion to affine.
    const COMB: KernelName;
    const TO_AFFINE: KernelName;
    /// Words of the affine points as a mutable slice (the download's destination).
    fn words_mut(points: &mut [Self::Affine]) -> &mut [u32];
}

impl SetupCurve for G1 {
    const COMB: KernelName = ks::SETUP_COMB_G1;
    const TO_AFFINE: KernelName = ks::SETUP_TO_AFFINE_G1;
    fn words_mut(points: &mut [G1Affine]) -> &mut [u32] {
        // SAFETY: G1Affine is repr(transparent) over blst_p1_affine (24 u64-aligned words,
        // no padding, every bit pattern a value of the struct); see convert::affine_words.
        unsafe { std::slice::from_raw_parts_mut(points.as_mut_ptr() as *mut u32, points.len() * 24) }
    }
}

impl SetupCurve for G2 {
    const COMB: KernelName = ks::SETUP_COMB_G2;
    const TO_AFFINE: KernelName = ks::SETUP_TO_AFFINE_G2;
    fn words_mut(points: &mut [G2Affine]) -> &mut [u32] {
        // SAFETY: as for G1, blst_p2_affine is 48 words without padding.
        unsafe { std::slice::from_raw_parts_mut(points.as_mut_ptr() as *mut u32, points.len() * 48) }
    }
}

/// A comb table resident on the device: `table[i·2^w + d] = d·2^(w·i)·G`, `windows` rows.
pub struct DeviceComb<C: SetupCurve> {
    buf: CudaSlice<u32>,
    pub w: u32,
    pub windows: u32,
    _curve: PhantomData<C>,
}

/// Points converted to affine per inversion (one Fermat inversion, ~570 products, shared).
pub const SETUP_INV_CHUNK: u32 = 64;
/// Scalars per batch: bounds the device scratch (G2: 2^22 × (32 + 384 + 192) B = 2.5 GB).
pub const SETUP_BATCH: usize = 1 << 22;

/// Waits for the device's stream when dropped.
struct DrainOnDrop<'a>(&'a Gpu);

impl Drop for DrainOnDrop<'_> {
    fn drop(&mut self) {
        let _ = self.0.synchronize();
    }
}

/// Where the time of [`Gpu::comb_muls`] went, ms.
#[derive(Clone, Copy, Debug, Default)]
pub struct CombTimes {
    /// Kernels (comb and conversion), CUDA events.
    pub kernel_ms: f64,
    /// Host wall of the scalar uploads, and of the point downloads (waiting for a batch's
    /// copy into pinned staging and copying it out into the caller's slice).
    pub h2d_ms: f64,
    pub d2h_ms: f64,
}

impl CombTimes {
    pub fn add(&mut self, o: &CombTimes) {
        self.kernel_ms += o.kernel_ms;
        self.h2d_ms += o.h2d_ms;
        self.d2h_ms += o.d2h_ms;
    }
}

impl Gpu {
    /// Uploads a comb table of `windows` rows of 2^w affine points (the CPU comb's layout).
    pub fn upload_comb<C: SetupCurve>(&self, w: usize, windows: usize, table: &[C::Affine]) -> Result<DeviceComb<C>, GpuError> {
        if !(1..=16).contains(&w) || windows == 0 || windows * w < 255 {
            return Err(GpuError::input("comb table", format!("{windows} windows of {w} bits do not cover a 255-bit scalar (1 <= w <= 16)")));
        }
        if table.len() != windows << w {
            return Err(GpuError::input("comb table", format!("{} points for {windows} windows of 2^{w}", table.len())));
        }
        let buf = self.stream.clone_htod(C::words(table)).ctx("upload comb table")?;
        Ok(DeviceComb { buf, w: w as u32, windows: windows as u32, _curve: PhantomData })
    }

    /// `out[i] = scalars[i]·G` (affine, blst layout) over the comb table of G, in batches of
    /// `batch` scalars ([`SETUP_BATCH`] when 0).
    pub fn comb_muls<C: SetupCurve>(&self, comb: &DeviceComb<C>, scalars: &[Scalar], out: &mut [C::Affine], batch: usize) -> Result<CombTimes, GpuError> {
        if scalars.len() != out.len() {
            return Err(GpuError::input("comb muls", format!("{} scalars for {} outputs", scalars.len(), out.len())));
        }
        let batch = if batch == 0 { SETUP_BATCH } else { batch }.min(scalars.len().max(1));
        if batch > u32::MAX as usize / 2 {
            return Err(GpuError::input("comb muls", format!("a batch of {batch} scalars")));
        }
        let mut t = CombTimes::default();
        if scalars.is_empty() {
            return Ok(t);
        }
        let aw = C::AFFINE_WORDS;
        // SAFETY: every buffer is written (upload, comb kernel, conversion) before it is read,
        // over the first `len` elements of each batch, the only ones read.
        let mut s_dev = unsafe { self.stream.alloc::<u32>(batch * 8) }.ctx("alloc setup scalars")?;
        let mut xyzz = unsafe { self.stream.alloc::<u32>(batch * C::XYZZ_WORDS) }.ctx("alloc setup XYZZ scratch")?;
        let mut aff = unsafe { self.stream.alloc::<u32>(batch * aw) }.ctx("alloc setup affine scratch")?;
        let words_out = C::words_mut(out);
        // The downloads go through pinned staging (cached, not write-combined: the host reads
        // it), two buffers so that copying one batch into `out` (over all cores, which also
        // faults in `out`'s fresh pages in parallel) overlaps the next batch's kernels. A
        // pageable copy straight into `out` ran at ~1 GB/s at 2^27 (45 s of a 242-s setup,
        // run 52): the driver faulted `out`'s pages one at a time. Without pinned memory, the
        // pageable copy it is.
        let mut staging: Vec<PinnedHostSlice<u32>> = (0..2)
            // SAFETY: every staging word a batch reads was written by that batch's download.
            .map_while(|_| unsafe { self.ctx.alloc_pinned_with_flags::<u32>(batch * aw, 0) }.ok())
            .collect();
        if staging.len() < 2 {
            staging.clear();
        }
        // Whatever way this returns (an error included), no download into `staging` is left in
        // flight when it is freed: declared after it, dropped before it.
        let _drain = DrainOnDrop(self);
        // The batch whose download is in flight: its staging buffer, (first point, points), and
        // the event recorded after that download (event tracking is off in our contexts, so
        // the pinned slice's own event is never recorded: waiting on it would not wait; run 55
        // proved from points copied out mid-download).
        let mut pending: Option<(usize, usize, usize, CudaEvent)> = None;
        let copy_out = |staging: &[PinnedHostSlice<u32>], (slot, lo, len, done): (usize, usize, usize, CudaEvent), out: &mut [u32], t: &mut CombTimes| -> Result<(), GpuError> {
            let h = std::time::Instant::now();
            done.synchronize().ctx("waiting for a setup download")?;
            let src = staging[slot].as_slice().ctx("download setup points")?;
            par_copy(&mut out[lo * aw..(lo + len) * aw], &src[..len * aw]);
            t.d2h_ms += h.elapsed().as_secs_f64() * 1e3;
            Ok(())
        };
        for (i, (lo, chunk)) in scalars.chunks(batch).enumerate().map(|(i, c)| (i, (i * batch, c))) {
            let len = chunk.len();
            let n = len as u32;
            let h = std::time::Instant::now();
            self.stream.memcpy_htod(scalar_words(chunk), &mut s_dev.slice_mut(0..len * 8)).ctx("upload setup scalars")?;
            t.h2d_ms += h.elapsed().as_secs_f64() * 1e3;
            let t0 = self.timer()?;
            launch!(self, C::COMB, cfg_1d(len as u64, 128), &comb.buf, &comb.w, &comb.windows, &s_dev, &n, &mut xyzz);
            let chunk_pts = SETUP_INV_CHUNK;
            launch!(self, C::TO_AFFINE, cfg_1d(n.div_ceil(chunk_pts) as u64, 64), &xyzz, &n, &chunk_pts, &mut aff);
            let t1 = self.timer()?;
            if staging.is_empty() {
                t.kernel_ms += t0.ms_to(&t1)?;
                let h = std::time::Instant::now();
                self.stream.memcpy_dtoh(&aff.slice(0..len * aw), &mut words_out[lo * aw..(lo + len) * aw]).ctx("download setup points")?;
                self.synchronize()?;
                t.d2h_ms += h.elapsed().as_secs_f64() * 1e3;
                continue;
            }
            let slot = i % 2;
            self.stream.memcpy_dtoh(&aff.slice(0..len * aw), &mut staging[slot]).ctx("download setup points")?;
            let done = self.stream.record_event(None).ctx("cuEventRecord (setup download)")?;
            // While this batch's kernels run: the previous batch into `out`.
            if let Some(prev) = pending.take() {
                copy_out(&staging, prev, words_out, &mut t)?;
            }
            t.kernel_ms += t0.ms_to(&t1)?;
            pending = Some((slot, lo, len, done));
        }
        if let Some(last) = pending {
            copy_out(&staging, last, words_out, &mut t)?;
        }
        Ok(t)
    }
}
