//! `gpu bench`: device times (CUDA events, data resident on the device, one warm-up then
//! the median of `runs`) of the G1 MSM and the Fr NTT at several sizes, each set against
//! the card's arithmetic floor and the sppark figures measured on the same H200. The MSM is
//! timed for every variant of `PROOFSCOPE_MSM_VARIANTS` (kernel, window size, reduction
//! segment; see `msm.rs`), size by size, with the fastest named per size; the row of the
//! built-in config is `msm_g1`, the others `msm_SPEC` (`msm_b4`: the kernel before issue 5).
//! The NTT is timed with both Fr products and both passes: `ntt_fr` (CIOS, radix 2),
//! `ntt_fr_eo` (even/odd, radix 2), `ntt_fr_r4`, `ntt_fr_eo_r4` (even/odd, radix 4: the default
//! since run 8) with the plan and bit reversal of the settings, then every compared plan and
//! bit reversal with the settings' product and radix.
//! The G2 MSM (`--msm-g2`) is timed for every G2 kernel (`msm_g2_SPEC`, the default's row
//! `msm_g2`) next to blst's multi-threaded CPU G2 MSM on the same terms (`cpu_blst_g2`, wall
//! time, all cores): the placement the engine's `g2_msm` chooses between. Its floor is the G1
//! floor times 3 (a Karatsuba Fp2 product is three Fp products; additions not counted).

use std::time::Instant;

use super::reference::{random_points, random_points_in, random_scalars};
use crate::gpu::msm::{pre_window_bits, DevicePoints, GpuCurve, MsmConfig, MsmDefaults, WindowLayout, G1, G2};
use crate::gpu::ntt::{Ntt, NttBitrev, NttConfig, NttMul, NttPlan, NttRadix};
use crate::gpu::{Gpu, GpuError};

/// 32-bit multiply-adds per second of an H200 (the floor's rate, from the issue).
pub const H200_MADS_PER_S: f64 = 1.66e13;

/// Floor of a G1 MSM of 2^log_n random terms on the H200, in ms: ~16 windows of n mixed
/// additions at 10 Fp products of 576 multiply-adds each (95 ms at 2^24, 356 at 2^26).
pub fn msm_floor_ms(log_n: u32) -> f64 {
    let windows = if log_n >= 26 { 15.0 } else { 16.0 };
    windows * batch_add_floor_ms(log_n)
}

/// Floor of building a table of shifted bases for 2^log_n G1 points at window size c, in
/// ms: every point doubled up to the top window's offset (9 Fp products a doubling), and per
/// window block 8 products of the batch conversion plus a 571-product inversion shared by
/// 32 points (msm.rs SHIFT_INV_CHUNK), 576 multiply-adds a product.
pub fn shift_table_floor_ms(log_n: u32, c: u32) -> f64 {
    let l = WindowLayout::new(c);
    let doublings: u32 = (0..l.nwin - 1).map(|w| l.width(w)).sum();
    let products = doublings as f64 * 9.0 + (l.nwin - 1) as f64 * (8.0 + 571.0 / 32.0);
    products * (1u64 << log_n) as f64 * 576.0 / H200_MADS_PER_S * 1e3
}

/// Floor of a batch addition of 2^log_n points in G1: one mixed addition (10 Fp products of
/// 576 multiply-adds) per point.
pub fn batch_add_floor_ms(log_n: u32) -> f64 {
    (1u64 << log_n) as f64 * 10.0 * 576.0 / H200_MADS_PER_S * 1e3
}

/// Points per thread the batch-addition bench compares.
pub const BATCH_ADD_CHUNKS: [u32; 5] = [8, 16, 32, 64, 128];

/// Batch additions (the density split's scalar-one terms, `Gpu::sum_indexed`) of 2^l points
/// for each l in `logs`: every other point of 2^(l+1) random points (sorted indices, as the
/// split makes them), every batch-addition kernel of G1 at each of [`BATCH_ADD_CHUNKS`]
/// points per thread (rows `batch_add_KERNEL_kCHUNK`, the default marked in the log), then the
/// same in G2 (`batch_add_g2_…`, floor 3x: an Fp2 product is 3 Fp products) for 2^l ≤ 2^21.
pub fn bench_batch_add(gpu: &Gpu, logs: &[u32], runs: usize, seed: u64, log: &mut dyn FnMut(&str)) -> Result<Vec<BenchRow>, GpuError> {
    let mut rows = Vec::new();
    let Some(&max) = logs.iter().max() else { return Ok(rows) };
    rows.extend(batch_add_rows::<G1>(gpu, logs, runs, seed, "batch_add", 1.0, log)?);
    let g2: Vec<u32> = logs.iter().copied().filter(|&l| l <= 21).collect();
    if max > 21 {
        log("batch_add_g2: sizes above 2^21 skipped (point generation)");
    }
    rows.extend(batch_add_rows::<G2>(gpu, &g2, runs, seed ^ 0x2, "batch_add_g2", 3.0, log)?);
    Ok(rows)
}

#[allow(clippy::too_many_arguments)]
fn batch_add_rows<C: GpuCurve>(gpu: &Gpu, logs: &[u32], runs: usize, seed: u64, prefix: &str, floor_x: f64, log: &mut dyn FnMut(&str)) -> Result<Vec<BenchRow>, GpuError> {
    let mut rows = Vec::new();
    let Some(&max) = logs.iter().max() else { return Ok(rows) };
    let t = Instant::now();
    let points = random_points_in::<C::Proj>(2usize << max, seed);
    log(&format!("generated {} random {} points in {:.1} s", 2usize << max, C::NAME, t.elapsed().as_secs_f64()));
    let dev = gpu.upload_points_of::<C>(&points)?;
    drop(points);
    for &l in logs {
        let m = 1usize << l;
        let idx: Vec<u32> = (0..m as u32).map(|i| 2 * i).collect();
        let didx = gpu.upload_indices(&idx)?;
        for (kernel, _) in C::SUM_AFFINE_KERNELS {
            for chunk in BATCH_ADD_CHUNKS {
                gpu.sum_indexed_with(&dev, Some(&didx.as_view()), m, kernel, chunk)?; // warm-up
                let mut times = Vec::new();
                for _ in 0..runs.max(1) {
                    times.push(gpu.sum_indexed_with(&dev, Some(&didx.as_view()), m, kernel, chunk)?.1);
                }
                let row = BenchRow::timed(format!("{prefix}_{kernel}_k{chunk}"), l, times, floor_x * batch_add_floor_ms(l), None, vec![]);
                let default = (*kernel, chunk) == C::DEFAULT_SUM;
                log(&format!("{}{}", format_row(&row), if default { "  (default)" } else { "" }));
                rows.push(row);
            }
        }
    }
    Ok(rows)
}

/// Floor of an Fr NTT of 2^log_n: n/2 * log_n butterflies of one 256-multiply-add product.
pub fn ntt_floor_ms(log_n: u32) -> f64 {
    (1u64 << (log_n - 1)) as f64 * log_n as f64 * 256.0 / H200_MADS_PER_S * 1e3
}

/// sppark on this H200 (2026-11-30, data on the device), ms.
pub fn sppark_msm_ms(log_n: u32) -> Option<f64> {
    match log_n {
        20 => Some(20.1),
        22 => Some(53.1),
        24 => Some(155.0),
        26 => Some(559.0),
        _ => None,
    }
}

pub fn sppark_ntt_ms(log_n: u32) -> Option<f64> {
    match log_n {
        20 => Some(0.26),
        22 => Some(1.05),
        24 => Some(4.44),
        26 => Some(21.0),
        _ => None,
    }
}

/// One measured row.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchRow {
    pub what: String,
    pub log_n: u32,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub runs: usize,
    pub floor_ms: f64,
    pub sppark_ms: Option<f64>,
    /// Phase split of the median run (MSM: sort, bucket accumulation, reduction).
    pub phases: Vec<(String, f64)>,
}

impl BenchRow {
    /// A row from the times of its runs (at least one): median, min, max and count.
    fn timed(what: String, log_n: u32, times: Vec<f64>, floor_ms: f64, sppark_ms: Option<f64>, phases: Vec<(String, f64)>) -> BenchRow {
        let runs = times.len();
        let (median_ms, min_ms, max_ms) = stats(times);
        BenchRow { what, log_n, median_ms, min_ms, max_ms, runs, floor_ms, sppark_ms, phases }
    }
}

fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// MSM timings for each size in `logs`; the points and scalars of the largest size are
/// generated once (on the CPU, in parallel) and uploaded once; smaller sizes use prefixes.
pub fn bench_msm(gpu: &Gpu, logs: &[u32], runs: usize, seed: u64, log: &mut dyn FnMut(&str)) -> Result<Vec<BenchRow>, GpuError> {
    let Some(&max) = logs.iter().max() else { return Ok(Vec::new()) };
    let n = 1usize << max;
    let t = Instant::now();
    let points = random_points(n, seed);
    let scalars = random_scalars(n, seed ^ 1);
    log(&format!("generated {n} random points and scalars in {:.1} s", t.elapsed().as_secs_f64()));
    let mut dp = gpu.upload_points(&points)?;
    let ds = gpu.upload_scalar_words(&scalars)?;
    drop(points);
    let mut rows = Vec::new();
    let variants = super::msm_variants_from_env()?.unwrap_or_else(default_variants);
    for &l in logs {
        let m = 1usize << l;
        let mut best: Option<(String, f64)> = None;
        for cfg in &variants {
            if cfg.pre {
                // A table for all n points (the smaller sizes use its prefix), built when
                // this variant's c differs from the table's: its build time is a row too.
                let c = cfg.c.unwrap_or_else(|| pre_window_bits(n));
                if dp.shift_c() != Some(c) {
                    let ms = gpu.precompute_shifts(&mut dp, c)?;
                    let gb = Gpu::shift_table_bytes::<G1>(n, c) as f64 / 1e9;
                    log(&format!("shift table c={c} of 2^{max} points built in {ms:.1} ms ({gb:.1} GB)"));
                    rows.push(BenchRow::timed(format!("shift_table_c{c}"), max, vec![ms], shift_table_floor_ms(max, c), None, vec![("gb".into(), gb)]));
                }
            }
            let spec = cfg.spec();
            let what = if *cfg == MsmConfig::default() { "msm_g1".into() } else { format!("msm_{spec}") };
            let row = time_msm_row(gpu, &dp, &ds, m, l, runs, cfg, what, msm_floor_ms(l), sppark_msm_ms(l))?;
            let med = row.median_ms;
            log(&format_row(&row));
            if best.as_ref().is_none_or(|b| med < b.1) {
                best = Some((spec, med));
            }
            rows.push(row);
        }
        if let (Some((spec, ms)), true) = (best, variants.len() > 1) {
            log(&format!("fastest MSM variant at 2^{l}: {spec} ({ms:.3} ms)"));
        }
    }
    Ok(rows)
}

/// One MSM row: a warm-up, then the median of `runs` CUDA-event times of `cfg` over the first
/// `m` resident points of group `C`, with the phase split of the run nearest the median.
#[allow(clippy::too_many_arguments)]
fn time_msm_row<C: GpuCurve>(
    gpu: &Gpu,
    dp: &DevicePoints<C>,
    ds: &cudarc::driver::CudaSlice<u32>,
    m: usize,
    l: u32,
    runs: usize,
    cfg: &MsmConfig,
    what: String,
    floor_ms: f64,
    sppark_ms: Option<f64>,
) -> Result<BenchRow, GpuError> {
    gpu.msm_device_cfg(dp, ds, m, None, true, cfg)?; // warm-up
    let mut all = Vec::new();
    for _ in 0..runs.max(1) {
        all.push(gpu.msm_device_cfg(dp, ds, m, None, true, cfg)?.1);
    }
    let (med, _, _) = stats(all.iter().map(|t| t.total_ms).collect());
    let mid = all.iter().min_by(|a, b| (a.total_ms - med).abs().total_cmp(&(b.total_ms - med).abs())).copied().unwrap_or_default();
    let c = if cfg.pre { dp.shift_c().unwrap_or(0) } else { cfg.window_bits_for::<C>(m) };
    let phases = vec![
        ("c".into(), c as f64),
        ("sort".into(), mid.sort_ms),
        ("digits".into(), mid.digits_ms),
        ("scan".into(), mid.scan_ms),
        ("scatter".into(), mid.scatter_ms),
        ("bucket_acc".into(), mid.bucket_acc_ms),
        ("fixup".into(), mid.fixup_ms),
        ("reduce".into(), mid.reduce_ms),
    ];
    Ok(BenchRow::timed(what, l, all.iter().map(|t| t.total_ms).collect(), floor_ms, sppark_ms, phases))
}

/// G2 MSM timings for each size in `logs`: every G2 kernel (or `PROOFSCOPE_MSM_G2_VARIANTS`,
/// comma-separated specs) on device-resident data, then blst's CPU G2 MSM on the same
/// points and scalars (`cpu_runs` timed runs after a warm-up; 0: skipped) as the baseline.
/// The row of the engine's G2 config (`msm.g2`) is `msm_g2`.
#[allow(clippy::too_many_arguments)]
pub fn bench_msm_g2(gpu: &Gpu, msm: &MsmDefaults, logs: &[u32], runs: usize, cpu_runs: usize, seed: u64, log: &mut dyn FnMut(&str)) -> Result<Vec<BenchRow>, GpuError> {
    let Some(&max) = logs.iter().max() else { return Ok(Vec::new()) };
    let n = 1usize << max;
    let t = Instant::now();
    let points = random_points_in::<blstrs::G2Projective>(n, seed ^ 0x2);
    let scalars = random_scalars(n, seed ^ 3);
    log(&format!("generated {n} random G2 points and scalars in {:.1} s", t.elapsed().as_secs_f64()));
    let dp = gpu.upload_points_of::<G2>(&points)?;
    let ds = gpu.upload_scalar_words(&scalars)?;
    let variants = super::msm_g2_variants_from_env()?;
    let default = msm.g2;
    let mut rows = Vec::new();
    for &l in logs {
        let m = 1usize << l;
        for cfg in &variants {
            let what = if *cfg == default { "msm_g2".into() } else { format!("msm_g2_{}", cfg.spec()) };
            let row = time_msm_row(gpu, &dp, &ds, m, l, runs, cfg, what, 3.0 * msm_floor_ms(l), None)?;
            log(&format_row(&row));
            rows.push(row);
        }
        if cpu_runs > 0 {
            let limbs: Vec<crate::msm::Limbs> = scalars[..m].iter().map(crate::msm::to_limbs).collect();
            let _ = crate::msm::blst_g2(&points[..m], None, &limbs);
            let mut times = Vec::new();
            for _ in 0..cpu_runs {
                let t = Instant::now();
                let r = crate::msm::blst_g2(&points[..m], None, &limbs);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                std::hint::black_box(r);
            }
            let row = BenchRow::timed("cpu_blst_g2".into(), l, times, 3.0 * msm_floor_ms(l), None, vec![("threads".into(), rayon::current_num_threads() as f64)]);
            log(&format_row(&row));
            rows.push(row);
        }
    }
    Ok(rows)
}

/// The MSM variants timed without `PROOFSCOPE_MSM_VARIANTS`: the built-in config
/// (`msm_g1`) and the baseline kernel b4 (`msm_b4`, the default before issue 5).
fn default_variants() -> Vec<MsmConfig> {
    vec![MsmConfig::default(), MsmConfig::kernel("b4")]
}

/// Forward NTT timings for each size in `logs`, once per Fr product and DIF pass shape
/// (rows `ntt_fr`: CIOS, `ntt_fr_eo`: even/odd, `_r4` suffix: radix-4 pass) with `base`'s plan
/// and bit reversal, the fastest named per size. Then, with `base`'s product and radix, each
/// compared pass plan ([`NttPlan::COMPARED`]) with each bit-reversal kernel (rows
/// `ntt_fr_<plan>_<bitrev>`, e.g. `ntt_fr_g6_plain`: the kernels before run 16). Last, `base`
/// with its twiddle tables (rows `ntt_fr_base`) against the lean NTT (rows `ntt_fr_lean`);
/// with `lean_only`, only those two rows per size.
pub fn bench_ntt(gpu: &Gpu, base: NttConfig, logs: &[u32], lean_only: bool, runs: usize, seed: u64, log: &mut dyn FnMut(&str)) -> Result<Vec<BenchRow>, GpuError> {
    let ntt = Ntt::new(base);
    let mut rows = Vec::new();
    if !lean_only {
        rows.extend(bench_ntt_both(gpu, &ntt, logs, runs, seed, log)?);
        rows.extend(bench_ntt_plans(gpu, &ntt, logs, runs, seed, log)?);
    }
    // The lean NTT (`ntt_memory = "lean"`: two-level twiddles, in-place permutation) beside the
    // base config, rows `ntt_fr_lean`, with the ratio to the base in the log.
    for &l in logs {
        let plain = ntt_row(gpu, &ntt, "ntt_fr_base".into(), l, runs, seed)?;
        log(&format_row(&plain));
        let lean = ntt_row(gpu, &ntt.with_config(NttConfig { lean: true, ..base }), "ntt_fr_lean".into(), l, runs, seed)?;
        log(&format_row(&lean));
        log(&format!("lean NTT at 2^{l}: {:.3} ms against {:.3} ms with the tables ({}): {:.2}x", lean.median_ms, plain.median_ms, base.describe(), lean.median_ms / plain.median_ms));
        rows.push(plain);
        rows.push(lean);
    }
    Ok(rows)
}

fn bench_ntt_plans(gpu: &Gpu, ntt: &Ntt, logs: &[u32], runs: usize, seed: u64, log: &mut dyn FnMut(&str)) -> Result<Vec<BenchRow>, GpuError> {
    let base = ntt.config();
    let mut rows = Vec::new();
    for &l in logs {
        let mut best: Option<(String, f64)> = None;
        for plan in NttPlan::COMPARED {
            for bitrev in NttBitrev::ALL {
                let what = format!("ntt_fr_{}_{}", plan.name(), bitrev.name());
                let row = ntt_row(gpu, &ntt.with_config(NttConfig { plan, bitrev, ..base }), what.clone(), l, runs, seed)?;
                log(&format_row(&row));
                if best.as_ref().is_none_or(|b| row.median_ms < b.1) {
                    best = Some((what, row.median_ms));
                }
                rows.push(row);
            }
        }
        if let Some((what, ms)) = best {
            log(&format!("fastest NTT plan and bit reversal at 2^{l}: {what} ({ms:.3} ms)"));
        }
    }
    Ok(rows)
}

/// One bench row: forward NTTs of 2^l random values timed with `ntt`'s choices, and the
/// phases of one.
fn ntt_row(gpu: &Gpu, ntt: &Ntt, what: String, l: u32, runs: usize, seed: u64) -> Result<BenchRow, GpuError> {
    let n = 1usize << l;
    let times = ntt.time_forward(gpu, &random_scalars(n, seed ^ l as u64), l, runs.max(1))?;
    let phases = ntt.forward_phases(gpu, &random_scalars(n, seed), l)?;
    Ok(BenchRow::timed(what, l, times, ntt_floor_ms(l), sppark_ntt_ms(l), phases))
}

fn bench_ntt_both(gpu: &Gpu, ntt: &Ntt, logs: &[u32], runs: usize, seed: u64, log: &mut dyn FnMut(&str)) -> Result<Vec<BenchRow>, GpuError> {
    let base = ntt.config();
    let mut rows = Vec::new();
    for &l in logs {
        let mut best: Option<(NttMul, NttRadix, f64)> = None;
        for (radix, mul) in NttRadix::ALL.into_iter().flat_map(|r| NttMul::ALL.map(|m| (r, m))) {
            let what = match (mul, radix) {
                (NttMul::Cios, NttRadix::R2) => "ntt_fr".into(),
                (m, NttRadix::R2) => format!("ntt_fr_{}", m.name()),
                (NttMul::Cios, r) => format!("ntt_fr_{}", r.name()),
                (m, r) => format!("ntt_fr_{}_{}", m.name(), r.name()),
            };
            let row = ntt_row(gpu, &ntt.with_config(NttConfig { radix, mul, ..base }), what, l, runs, seed)?;
            let med = row.median_ms;
            log(&format_row(&row));
            if best.is_none_or(|b| med < b.2) {
                best = Some((mul, radix, med));
            }
            rows.push(row);
        }
        if let Some((mul, radix, ms)) = best {
            log(&format!("fastest NTT product at 2^{l}: {} {} ({ms:.3} ms)", mul.name(), radix.name()));
        }
    }
    Ok(rows)
}

pub fn header() -> String {
    format!("{:<16} {:>5} {:>11} {:>11} {:>11} {:>10} {:>10} {:>10} {:>8}  phases", "what", "log n", "median ms", "min ms", "max ms", "floor ms", "x floor", "sppark ms", "x sppark")
}

pub fn format_row(r: &BenchRow) -> String {
    let sp = r.sppark_ms.map(|s| format!("{s:>10.2} {:>8.2}", r.median_ms / s)).unwrap_or_else(|| format!("{:>10} {:>8}", "-", "-"));
    let phases: Vec<String> = r.phases.iter().map(|(k, v)| if k == "c" { format!("c {v}") } else { format!("{k} {v:.2}") }).collect();
    format!(
        "{:<16} {:>5} {:>11.3} {:>11.3} {:>11.3} {:>10.3} {:>10.2} {}  {}",
        r.what,
        r.log_n,
        r.median_ms,
        r.min_ms,
        r.max_ms,
        r.floor_ms,
        r.median_ms / r.floor_ms,
        sp,
        phases.join(", ")
    )
}
