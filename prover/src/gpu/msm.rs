//! G1 MSM on the GPU (Pippenger, signed windows, counting-sort of points into buckets) and
//! the batch additions of the density split. The host only picks the window size and
//! combines the ~16 window sums (Horner, c doublings per window).

use blstrs::{G1Affine, G1Projective, Scalar};
use cudarc::driver::{CudaSlice, CudaView};
use group::Group;

use super::convert::{affine_words, scalar_words, xyzz_to_projective};
use super::device::{cfg_1d, launch, Ctx, Gpu, GpuError};

const XYZZ_WORDS: usize = 48;

/// Window size c (bits) for an MSM of n points: enough buckets to fill the GPU, at most 16.
pub fn msm_window_bits(n: usize) -> u32 {
    match n {
        0..=4095 => 9,
        4096..=0x3_ffff => 13,
        _ => 16,
    }
}

/// Device times (CUDA events) of the phases of one MSM, in ms.
#[derive(Clone, Copy, Debug, Default)]
pub struct MsmTimes {
    /// Scalar conversion, digits, counting sort.
    pub sort_ms: f64,
    pub bucket_acc_ms: f64,
    pub reduce_ms: f64,
    pub total_ms: f64,
}

/// Points resident on the device (affine, blst layout).
pub struct DevicePoints {
    pub(crate) buf: CudaSlice<u32>,
    pub len: usize,
}

impl Gpu {
    pub fn upload_points(&self, points: &[G1Affine]) -> Result<DevicePoints, GpuError> {
        Ok(DevicePoints { buf: self.stream.clone_htod(affine_words(points)).ctx("upload points")?, len: points.len() })
    }

    pub fn upload_scalar_words(&self, scalars: &[Scalar]) -> Result<CudaSlice<u32>, GpuError> {
        self.stream.clone_htod(scalar_words(scalars)).ctx("upload scalars")
    }

    fn download_points(&self, buf: &CudaSlice<u32>, count: usize) -> Result<Vec<G1Projective>, GpuError> {
        let words = self.stream.clone_dtoh(&buf.slice(0..count * XYZZ_WORDS)).ctx("download points")?;
        words
            .chunks_exact(XYZZ_WORDS)
            .map(|w| xyzz_to_projective(w).ok_or_else(|| GpuError::Other("kernel returned a point off the curve".into())))
            .collect()
    }

    /// sum_i scalars[i] * points[i] for the first `n` points of `points` (device-resident)
    /// and `scalars` (Montgomery words on the device).
    pub fn msm_device(&self, points: &DevicePoints, scalars: &CudaSlice<u32>, n: usize) -> Result<(G1Projective, MsmTimes), GpuError> {
        self.msm_device_ex(points, scalars, n, None, true)
    }

    /// General form: `idx` (device) maps term i to point idx[i] (else i); `montgomery` says
    /// whether the scalar words are Montgomery (blstrs memory) or canonical integers.
    pub fn msm_device_ex(
        &self,
        points: &DevicePoints,
        scalars: &CudaSlice<u32>,
        n: usize,
        idx: Option<&CudaSlice<u32>>,
        montgomery: bool,
    ) -> Result<(G1Projective, MsmTimes), GpuError> {
        if n == 0 {
            return Ok((G1Projective::identity(), MsmTimes::default()));
        }
        if idx.is_some_and(|i| i.len() < n) || (idx.is_none() && n > points.len) || scalars.len() < n * 8 || n >= (1 << 31) {
            return Err(GpuError::Other(format!("MSM of {n} terms over {} points / {} scalars", points.len, scalars.len() / 8)));
        }
        let c = msm_window_bits(n);
        let nwin = 255 / c + 1;
        let nb = 1u32 << (c - 1);
        let nbk = nwin * nb;
        let nn = n as u64;
        let n32 = n as u32;
        let t0 = self.timer()?;
        let converted;
        let canon = if montgomery {
            let mut out = self.stream.alloc_zeros::<u32>(n * 8).ctx("alloc scalars")?;
            let mont = scalars.slice(0..n * 8);
            launch!(self, "fr_from_mont", cfg_1d(nn, 256), &mont, &mut out, &nn);
            converted = out;
            &converted
        } else {
            scalars
        };
        let null = 0u64;
        let mut counts = self.stream.alloc_zeros::<u32>(nbk as usize).ctx("alloc counts")?;
        launch!(self, "msm_digits_count", cfg_1d(nn, 256), canon, &n32, &c, &nwin, &mut counts);
        let mut offsets = self.stream.alloc_zeros::<u32>(nbk as usize + 1).ctx("alloc offsets")?;
        launch!(self, "exclusive_scan", cfg_1d(1024, 1024), &counts, &mut offsets, &nbk);
        self.stream.memset_zeros(&mut counts).ctx("clear cursors")?;
        let mut entries = self.stream.alloc_zeros::<u32>(n * nwin as usize).ctx("alloc entries")?;
        match idx {
            Some(ix) => launch!(self, "msm_digits_scatter", cfg_1d(nn, 256), canon, &n32, &c, &nwin, &offsets, &mut counts, &mut entries, ix),
            None => launch!(self, "msm_digits_scatter", cfg_1d(nn, 256), canon, &n32, &c, &nwin, &offsets, &mut counts, &mut entries, &null),
        }
        let t1 = self.timer()?;
        let mut buckets = self.stream.alloc_zeros::<u32>(nbk as usize * XYZZ_WORDS).ctx("alloc buckets")?;
        let acc_kernel: &str = *self.msm_acc.lock().map_err(|_| GpuError::Other("poisoned".into()))?;
        launch!(self, acc_kernel, cfg_1d(nbk as u64, 128), &points.buf, &entries, &offsets, &nbk, &mut buckets);
        let t2 = self.timer()?;
        let seg = 16u32.min(nb);
        let nseg = nb / seg;
        let mut partials = self.stream.alloc_zeros::<u32>((nwin * nseg) as usize * XYZZ_WORDS).ctx("alloc partials")?;
        launch!(self, "msm_bucket_reduce", cfg_1d((nwin * nseg) as u64, 128), &buckets, &nwin, &nb, &seg, &mut partials);
        let windows = self.sum_per_group(partials, nwin, nseg)?;
        let t3 = self.timer()?;
        let sums = self.download_points(&windows, nwin as usize)?;
        let times = MsmTimes { sort_ms: t0.ms_to(&t1)?, bucket_acc_ms: t1.ms_to(&t2)?, reduce_ms: t2.ms_to(&t3)?, total_ms: t0.ms_to(&t3)? };
        // Horner over windows: acc = sum_w 2^(c w) W_w.
        let mut acc = G1Projective::identity();
        for w in sums.iter().rev() {
            for _ in 0..c {
                acc = acc.double();
            }
            acc += w;
        }
        Ok((acc, times))
    }

    /// Sums `per` consecutive XYZZ points for each of `groups` groups (tree of chunked sums).
    fn sum_per_group(&self, mut buf: CudaSlice<u32>, groups: u32, mut per: u32) -> Result<CudaSlice<u32>, GpuError> {
        while per > 1 {
            let chunk = per.min(16);
            let count = groups * per;
            let outs = count.div_ceil(chunk);
            let mut out = self.stream.alloc_zeros::<u32>(outs as usize * XYZZ_WORDS).ctx("alloc sums")?;
            launch!(self, "g1_sum_chunks", cfg_1d(outs as u64, 64), &buf, &count, &chunk, &mut out);
            buf = out;
            per = per.div_ceil(chunk);
        }
        Ok(buf)
    }

    /// MSM with host inputs: uploads, runs [`Gpu::msm_device`], returns the point.
    pub fn msm(&self, points: &[G1Affine], scalars: &[Scalar]) -> Result<G1Projective, GpuError> {
        if points.len() != scalars.len() {
            return Err(GpuError::Other(format!("{} points but {} scalars", points.len(), scalars.len())));
        }
        let p = self.upload_points(points)?;
        let s = self.upload_scalar_words(scalars)?;
        Ok(self.msm_device(&p, &s, points.len())?.0)
    }

    /// Batch addition of the density split: sum of `points[idx[i]]` (device-resident points,
    /// indices on the device), e.g. the bases whose scalar is one. Returns the sum and the
    /// device time in ms.
    pub fn sum_indexed(&self, points: &DevicePoints, idx: Option<&CudaView<'_, u32>>, count: usize) -> Result<(G1Projective, f64), GpuError> {
        if count == 0 {
            return Ok((G1Projective::identity(), 0.0));
        }
        let t0 = self.timer()?;
        let chunk = 64u32;
        let count32 = count as u32;
        let outs = count32.div_ceil(chunk);
        let mut out = self.stream.alloc_zeros::<u32>(outs as usize * XYZZ_WORDS).ctx("alloc sums")?;
        match idx {
            Some(ix) => launch!(self, "g1_sum_affine_chunks", cfg_1d(outs as u64, 64), &points.buf, ix, &count32, &chunk, &mut out),
            None => {
                let null = 0u64;
                launch!(self, "g1_sum_affine_chunks", cfg_1d(outs as u64, 64), &points.buf, &null, &count32, &chunk, &mut out)
            }
        }
        let total = self.sum_per_group(out, 1, outs)?;
        let t1 = self.timer()?;
        let p = self.download_points(&total, 1)?;
        Ok((p[0], t0.ms_to(&t1)?))
    }

    /// Batch addition with host indices (uploads them first).
    pub fn sum_selected(&self, points: &DevicePoints, idx: &[u32]) -> Result<G1Projective, GpuError> {
        if let Some(bad) = idx.iter().find(|&&i| i as usize >= points.len) {
            return Err(GpuError::Other(format!("index {bad} out of {} points", points.len)));
        }
        if idx.is_empty() {
            return Ok(G1Projective::identity());
        }
        let d = self.stream.clone_htod(idx).ctx("upload indices")?;
        Ok(self.sum_indexed(points, Some(&d.as_view()), idx.len())?.0)
    }
}
