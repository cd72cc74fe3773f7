//! `calibrate`: from measured timelines to a model config. Fits, per phase, the cost
//! distribution of a partition ([`crate::costs::fit`]) and the host's CPU capacity (or the
//! synthesis contention, knee and slope of `1 + slope · max(0, n − knee)`), and reads the pipeline's shape
//! (proofs, partitions, GPUs, proofs in flight) off the spans. The run's meta gives the
//! machine (cores, RAM, VRAM), the configured pw and gw (else: the most syntheses seen at
//! once, the GPU workers seen), and the engine's RAM and VRAM budgets; under a RAM budget the
//! memory figures that decide admission come from the reservations the timeline records
//! ([`reservations`]). What neither tells (bandwidths, footprints without a budget) comes
//! from a base config.
//!
//! Two kinds of input:
//! - our JSON lines (prover or simulator), which carry kernel, prep, G2 MSM, upload and
//!   finalisation spans: every cost is measured directly. Spans nest (the prover records
//!   `batch_add`/`tail_msm` inside `msm_l`/`msm_a`/`msm_b_g1`, and CUDA's `h2d` inside
//!   `tail_msm`): the device costs split the union of a partition's device-work spans, each
//!   instant counted once ([`DeviceSplit`]);
//! - a cuzk log, which only has GPU_START..GPU_END per call: the serial device time per
//!   partition is the median spacing of consecutive call ends while the device was
//!   saturated (calls overlapping), and the CPU part of a call is the shortest call minus
//!   it (a call that did not wait for the lock: a cold start, or one after an idle gap). The split of
//!   that CPU part into prep / G2 MSM / epilogue, and of the device time into kernels,
//!   follows the base config's proportions (the log cannot tell them apart).
//!
//! CPU demands and isolated costs ([`crate::cpu_demand`]): when a run carries the
//! prover's `cpu_busy_cores` counter, the cores each CPU phase draws (synthesis, prep, G2 MSM
//! + epilogue) are fitted from it; otherwise the base config's are kept. Every CPU span's
//! duration is then divided by the pool's slowdown while it ran (all CPU phases beside it,
//! cores and bandwidth, as the simulator shares them), so the costs are isolated ones.
//!
//! CPU capacity ([`fit_capacity`]): with syntheses that ran alone and a run where several
//! overlapped, the synthesis cost comes from the lone ones and the host's capacity
//! (`machine.cpu_capacity`, what its cores deliver) from simulating the overlapped runs until
//! their mean synthesis time matches. Otherwise, contention: for each synthesis, the
//! time-average number of syntheses running during it (n̄); what the pool's sharing does not
//! explain is fitted by least squares over candidate knees of `1 + slope · max(0, n − knee)`.
//! One run at one pw rarely shows enough spread in n̄: pass several runs.

use timeline::stats::union_ns;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use timeline::event::JobId;
use timeline::{Run, Span, SpanKind};
use timeline::analysis::utilization::max_concurrency;

use crate::config::{Config, Contention, LockMode, ParamsUpload, DEFAULT_SAFETY_MARGIN};
use crate::memory::GIB;
use crate::costs::{fit, Dist};
use crate::cpu_demand::{self, Sharing};

/// The default base: the reference box of the cuzk campaign, Phase 8 settings.
pub const DEFAULT_BASE: &str = include_str!("../configs/phase8.toml");

#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    #[error("{0}: no synthesis spans: nothing to calibrate the synthesis cost from")]
    NoSynthesis(String),
    #[error("{0}: no gpu spans and no kernel spans: nothing to calibrate the GPU side from")]
    NoGpu(String),
}

/// What was fitted, for the report and the comments of the written TOML.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FitReport {
    pub inputs: Vec<String>,
    pub synthesis_samples: usize,
    pub synth_concurrency_min: f64,
    pub synth_concurrency_max: f64,
    pub gpu_calls: usize,
    /// "kernel spans" or "cuzk call spacing".
    pub gpu_source: String,
    pub device_time_per_partition_ms: f64,
    pub cpu_part_of_call_ms: f64,
    /// The CPU sections' core demands come from the run's busy-cores counter.
    #[serde(default)]
    pub cpu_demands_fitted: bool,
    /// The memory section (budget, reservations) came from the run ([`reservations`]).
    #[serde(default)]
    pub memory_from_run: bool,
    /// Machine values the runs' meta did not give, taken from the base config instead
    /// (`key = value`): what a reader must check before trusting a prediction.
    #[serde(default)]
    pub assumed_machine: Vec<String>,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Calibration {
    pub config: Config,
    pub report: FitReport,
}

impl Calibration {
    /// The config as TOML, headed by comments saying what was fitted and from what.
    pub fn to_toml(&self) -> String {
        let mut s = String::new();
        s.push_str("# Calibrated by `proofscope calibrate` from:\n");
        for i in &self.report.inputs {
            s.push_str(&format!("#   {i}\n"));
        }
        s.push_str(&format!(
            "# {} synthesis spans (concurrency {:.1}..{:.1}), {} GPU calls ({}).\n",
            self.report.synthesis_samples,
            self.report.synth_concurrency_min,
            self.report.synth_concurrency_max,
            self.report.gpu_calls,
            self.report.gpu_source
        ));
        for n in &self.report.notes {
            s.push_str(&format!("# {n}\n"));
        }
        let memory = if self.report.memory_from_run { "the memory section from the run's budget and reservations (above)" } else { "the memory section from the base config" };
        let cpu = if self.report.cpu_demands_fitted { "CPU demands fitted (above)" } else { "CPU demands from the base config" };
        s.push_str(&format!("# Machine values as the notes above say; {memory}; {cpu}.\n\n"));
        s.push_str(&self.config.to_toml());
        s
    }
}

fn dur_ms(s: &Span) -> Option<f64> {
    s.end_ns.map(|e| e.saturating_sub(s.start_ns) as f64 / 1e6)
}

/// Time-average number of `others` intervals overlapping [a, b) (the span itself included).
fn mean_concurrency(a: u64, b: u64, sorted: &[(u64, u64)]) -> f64 {
    if b <= a {
        return 1.0;
    }
    let mut total = 0u128;
    for &(s, e) in sorted {
        if s >= b {
            break;
        }
        if e <= a {
            continue;
        }
        total += (e.min(b) - s.max(a)) as u128;
    }
    total as f64 / (b - a) as f64
}

/// The device work of one partition as the simulator's Kernels and Upload steps consume
/// it (ms). The prover nests `batch_add` and `tail_msm` inside `msm_l`/`msm_a`/`msm_b_g1`
/// (and `msm_b_g2` when the G2 MSM runs on the device) and, on CUDA, the tail's `h2d` inside `tail_msm`; the simulator runs `ntt_msm_h`,
/// `batch_add`, `tail_msm`, `msm_rest` and the upload one after the other. So each instant
/// of the union of the partition's device-work spans is attributed to exactly one cost,
/// the most specific kind covering it, in this order: NTT/H MSM, batch_add, tail_msm,
/// the L/A/B_G1/B_G2 MSMs (what of them no nested span covers), then h2d (transfers inside a
/// kernel span count in that kernel, as the base config's kernel times include their
/// transfers). The five add up to the union: nothing is counted twice.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeviceSplit {
    pub ntt_msm_h: f64,
    pub batch_add: f64,
    pub tail_msm: f64,
    pub msm_rest: f64,
    /// h2d time outside every kernel span of the partition.
    pub upload: f64,
    /// h2d time inside kernel spans (already in the kernel costs above).
    pub nested_h2d: f64,
    /// Of `upload`, the device's part: the copies' `gpu_ns` outside the kernel spans (as the
    /// analyzer counts an engine's copy: `Span::device_interval`); `None` when no `h2d` span
    /// of the partition reports its device time.
    pub upload_device: Option<f64>,
    /// Whether the upload overlapped another partition's `lock_hold` on the same device
    /// (another worker's locked kernels): such uploads stall on the H200 (run 16: 11.5 ms
    /// alone, up to the other worker's whole kernel section beside it).
    pub upload_overlapped: bool,
}

impl DeviceSplit {
    pub fn kernels(&self) -> f64 {
        self.ntt_msm_h + self.batch_add + self.tail_msm + self.msm_rest
    }
}

/// The attribution order of [`DeviceSplit`], most specific first.
const DEVICE_GROUPS: [&[SpanKind]; 5] = [
    &[SpanKind::Ntt, SpanKind::MsmH, SpanKind::NttMsmH],
    &[SpanKind::BatchAdd],
    &[SpanKind::TailMsm],
    &[SpanKind::MsmL, SpanKind::MsmA, SpanKind::MsmBG1, SpanKind::MsmBG2, SpanKind::MsmRest],
    &[SpanKind::H2d],
];

/// Per partition (job, partition) of `run` with any device-work span: its [`DeviceSplit`].
pub fn device_split(run: &Run) -> Vec<DeviceSplit> {
    let mut by_part: BTreeMap<(JobId, u32), Vec<(usize, (u64, u64))>> = BTreeMap::new();
    // Locked sections per device, with their partition, for `upload_overlapped`.
    let holds: Vec<(Option<u32>, (JobId, u32), (u64, u64))> = run
        .spans_of(&SpanKind::LockHold)
        .filter_map(|s| Some((s.device, (s.job.clone()?, s.partition?), (s.start_ns, s.end_ns?))))
        .collect();
    let mut h2d_dev: BTreeMap<(JobId, u32), Option<u32>> = BTreeMap::new();
    // The device intervals of the h2d spans that report their device time (`gpu_ns`).
    let mut h2d_gpu: BTreeMap<(JobId, u32), Vec<(u64, u64)>> = BTreeMap::new();
    for s in &run.spans {
        let Some(g) = DEVICE_GROUPS.iter().position(|g| g.contains(&s.kind)) else { continue };
        // The one-off upload of the parameters is not a partition's cost, even where the
        // engine made it inside the first partition's call (runs before 36ccbaa: run 52's
        // 43.6 GiB, 6.6 s, averaged into every partition's upload): see `params_upload`.
        if is_params_upload(s) {
            continue;
        }
        if let (Some(e), Some(j), Some(p)) = (s.end_ns, &s.job, s.partition) {
            // A staging set allocated for this upload is a one-time cost (`startup`).
            let start = (s.start_ns + staging_alloc_ns(s).unwrap_or(0)).min(e);
            if e > start {
                by_part.entry((j.clone(), p)).or_default().push((g, (start, e)));
                if s.kind == SpanKind::H2d {
                    h2d_dev.insert((j.clone(), p), s.device);
                    if s.args.get(timeline::event::arg::GPU_NS).is_some() {
                        if let Some(iv) = s.device_interval().filter(|(a, b)| b > a) {
                            h2d_gpu.entry((j.clone(), p)).or_default().push(iv);
                        }
                    }
                }
            }
        }
    }
    by_part
        .into_iter()
        .map(|(key, spans)| {
            let mut parts = [0.0f64; 5];
            let (mut acc, mut before) = (Vec::new(), 0u64);
            for (g, part) in parts.iter_mut().enumerate() {
                acc.extend(spans.iter().filter(|x| x.0 == g).map(|x| x.1));
                let now = union_ns(acc.clone());
                *part = now.saturating_sub(before) as f64 / 1e6;
                before = now;
            }
            let h2d: Vec<(u64, u64)> = spans.iter().filter(|x| x.0 == 4).map(|x| x.1).collect();
            // The upload = h2d not covered by the partition's own kernel spans.
            let kernels: Vec<(u64, u64)> = spans.iter().filter(|x| x.0 < 4).map(|x| x.1).collect();
            let dev = h2d_dev.get(&key).copied().flatten();
            let upload_overlapped = h2d
                .iter()
                .filter(|&&(a, b)| !kernels.iter().any(|&(ka, kb)| ka <= a && b <= kb))
                .any(|&(a, b)| holds.iter().any(|(d, k, (ha, hb))| *k != key && *d == dev && *ha < b && a < *hb));
            let h2d_ms = union_ns(h2d) as f64 / 1e6;
            let upload_device = h2d_gpu.get(&key).map(|g| {
                let mut all = kernels.clone();
                all.extend(g.iter().copied());
                union_ns(all).saturating_sub(union_ns(kernels.clone())) as f64 / 1e6
            });
            DeviceSplit {
                ntt_msm_h: parts[0],
                batch_add: parts[1],
                tail_msm: parts[2],
                msm_rest: parts[3],
                upload: parts[4],
                nested_h2d: (h2d_ms - parts[4]).max(0.0),
                upload_device,
                upload_overlapped,
            }
        })
        .collect()
}

/// Whether `s` is the one-off upload of the parameters to the device (an `h2d` span with
/// `what = params`), wherever the engine made it.
fn is_params_upload(s: &timeline::event::Span) -> bool {
    s.kind == SpanKind::H2d && s.args.get("what").and_then(|v| v.as_str()) == Some("params")
}

/// Below this, an upload's `staging_ns` is taking a free staging set, not allocating one.
const STAGING_ALLOC_MIN_NS: u64 = 20_000_000;

/// The staging set an `h2d` span allocated, ns (its `staging_ns` when at least
/// [`STAGING_ALLOC_MIN_NS`]: the first uploads of a fresh engine, 70–110 ms at 2^22 on the
/// H200 against microseconds for a set already there).
fn staging_alloc_ns(s: &timeline::event::Span) -> Option<u64> {
    let ns = s.args.get("staging_ns").and_then(|v| v.as_u64())?;
    (s.kind == SpanKind::H2d && ns >= STAGING_ALLOC_MIN_NS).then_some(ns)
}

/// What one run says of a fresh engine's startup ([`crate::config::Startup`]), s.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StartupSample {
    /// Run start → first synthesis (or its `pce_wait` / `pce_build`), less the length of a
    /// parameter upload made before it.
    pub engine_s: f64,
    /// The parameters' upload and whether it came before the first synthesis.
    pub params_upload: Option<(f64, bool)>,
    /// The PCE's read: from its `pce_build` span's start to the first `witness` /
    /// `constraints` span of that partition (the read comes first, the synthesis after it).
    pub pce_load_s: Option<f64>,
    /// Each staging-set allocation's `staging_ns`, s.
    pub staging_allocs: Vec<f64>,
}

/// The startup of `run` ([`StartupSample`]); `None` without a synthesis span, and for a run
/// whose clock does not start with its engine: only our prover's and the simulator's
/// timelines count from the engine's start (a cuzk log's offsets count from the daemon's
/// start, hours before a request perhaps).
pub fn startup_sample(run: &Run) -> Option<StartupSample> {
    if !matches!(run.meta.source.as_str(), "prover" | "simulator") {
        return None;
    }
    let syn = |k: &SpanKind| matches!(k, SpanKind::Synthesis | SpanKind::PceWait | SpanKind::PceBuild | SpanKind::Witness | SpanKind::Constraints);
    let first = run.spans.iter().filter(|s| syn(&s.kind)).map(|s| s.start_ns).min()?;
    let params = run.spans.iter().filter(|s| is_params_upload(s)).filter_map(|s| Some((s.start_ns, s.end_ns?))).min();
    let params_upload = params.map(|(a, b)| ((b - a) as f64 / 1e9, b <= first));
    // The upload's own length is its item; the time around it is the engine's.
    let before = params.filter(|&(_, b)| b <= first).map_or(0, |(a, b)| b - a);
    let pce_load_s = run.spans_of(&SpanKind::PceBuild).filter(|s| s.job.is_some()).find_map(|b| {
        let own = run.spans.iter().filter(|s| matches!(s.kind, SpanKind::Witness | SpanKind::Constraints) && s.job == b.job && s.partition == b.partition && s.start_ns >= b.start_ns);
        own.map(|s| s.start_ns).min().map(|w| (w - b.start_ns) as f64 / 1e9)
    });
    let pce_load_s = pce_load_s.or_else(|| run.spans_of(&SpanKind::PceWait).filter_map(|s| Some((s.end_ns? - s.start_ns) as f64 / 1e9)).reduce(f64::max));
    let staging_allocs = run.spans.iter().filter_map(staging_alloc_ns).map(|ns| ns as f64 / 1e9).collect();
    Some(StartupSample { engine_s: first.saturating_sub(before) as f64 / 1e9, params_upload, pce_load_s, staging_allocs })
}

/// Fit `cfg.startup` from the runs' [`startup_sample`]s: each figure the mean of the runs
/// that show it (a figure no run shows stays 0), the parameters going up at the start when
/// most runs upload them before their first synthesis.
fn fit_startup(runs: &[(String, Run)], cfg: &mut Config, rep: &mut FitReport) {
    let samples: Vec<StartupSample> = runs.iter().filter_map(|(_, r)| startup_sample(r)).collect();
    if samples.is_empty() {
        // Not the base's: what the runs cannot show is not modelled.
        cfg.startup = crate::config::Startup::default();
        rep.notes.push("startup: none modelled (no run whose clock starts with its engine: our prover's or the simulator's timelines)".into());
        return;
    }
    let r4 = |x: f64| (x * 1e4).round() / 1e4;
    let st = &mut cfg.startup;
    st.engine_s = r4(mean(&samples.iter().map(|s| s.engine_s).collect::<Vec<_>>()));
    let ups: Vec<(f64, bool)> = samples.iter().filter_map(|s| s.params_upload).collect();
    st.params_upload_s = r4(mean(&ups.iter().map(|u| u.0).collect::<Vec<_>>()));
    let at_start = ups.iter().filter(|u| u.1).count();
    st.params_upload = if 2 * at_start >= ups.len() { ParamsUpload::Start } else { ParamsUpload::FirstCall };
    let pce: Vec<f64> = samples.iter().filter_map(|s| s.pce_load_s).collect();
    st.pce_load_s = r4(mean(&pce));
    let allocs: Vec<f64> = samples.iter().flat_map(|s| s.staging_allocs.iter().copied()).collect();
    st.staging_alloc_s = r4(mean(&allocs));
    rep.notes.push(format!(
        "startup (one-time, in the makespan, not in the steady state): engine {:.3} s to the first synthesis, parameters' upload {:.3} s ({} of {} runs before the first synthesis: params_upload = {}), PCE read {:.3} s ({} runs), staging set {:.3} s each ({} allocations over {} runs)",
        st.engine_s,
        st.params_upload_s,
        at_start,
        ups.len(),
        if st.params_upload == ParamsUpload::Start { "start" } else { "first_call" },
        st.pce_load_s,
        pce.len(),
        st.staging_alloc_s,
        allocs.len(),
        samples.len()
    ));
}

/// The one-off parameter uploads of `run`: (bytes, seconds of wall) summed.
pub fn params_upload(run: &Run) -> Option<(u64, f64)> {
    let ups: Vec<&timeline::event::Span> = run.spans.iter().filter(|s| is_params_upload(s) && s.end_ns.is_some()).collect();
    (!ups.is_empty()).then(|| {
        let bytes = ups.iter().filter_map(|s| s.args.get("bytes").and_then(|v| v.as_u64())).sum();
        let secs = ups.iter().map(|s| s.end_ns.unwrap_or(s.start_ns).saturating_sub(s.start_ns) as f64 / 1e9).sum();
        (bytes, secs)
    })
}

/// Per-partition sums of the isolated durations `iso` (index in `run.spans`, ms; from
/// [`cpu_demand::derate`]) of the spans of `kinds` (a partition may have several spans).
fn per_partition_derated(run: &Run, iso: &[(usize, f64)], kinds: &[SpanKind]) -> Vec<f64> {
    let mut m: BTreeMap<(JobId, u32), f64> = BTreeMap::new();
    for &(i, ms) in iso {
        let s = &run.spans[i];
        if let (true, Some(j), Some(p)) = (kinds.contains(&s.kind), &s.job, s.partition) {
            *m.entry((j.clone(), p)).or_default() += ms;
        }
    }
    m.into_values().collect()
}

/// The mean, 0 for no values (the fits below treat "no samples" as no cost).
fn mean(v: &[f64]) -> f64 {
    timeline::stats::mean(v).unwrap_or(0.0)
}


/// A contention slope is kept only when the samples can carry it: those above the knee must
/// span at least this much concurrency (else a blip at the edge of the range seen, e.g. n̄
/// 3.5..4 in a pw = 4 run, is extrapolated to every higher concurrency)...
const MIN_SPAN_ABOVE_KNEE: f64 = 1.0;
/// ... and hold at least this share of the samples ...
const MIN_SHARE_ABOVE_KNEE: f64 = 0.1;
/// ... and the slope must stand this many standard errors clear of zero (synthesis times on a
/// shared host are noisy: on the H200 host single partitions run 1.5x slower at random).
const MIN_T: f64 = 3.0;
/// A lower knee is kept when its squared error is within this share of the best knee's.
const KNEE_SSE_TOLERANCE: f64 = 0.05;

/// A synthesis counts as alone when the mean number of syntheses running during it (itself
/// included) is at most this...
const LONE_CONCURRENCY: f64 = 1.2;
/// ... and the synthesis cost is taken from those when there are at least this many...
const MIN_LONE_SYNTHESES: usize = 8;
/// ... and a run whose syntheses overlapped this much on average (time-average over its
/// synthesis window) fits the CPU capacity ([`fit_capacity`]).
const CONTENDED_CONCURRENCY: f64 = 2.0;
/// Candidate capacities of [`fit_capacity`]: this many steps over 1..cpu_cores, then as many
/// over the best one's neighbours.
const CAPACITY_STEPS: u32 = 64;
/// The largest `contention.prep_slope` [`fit_prep_slope`] tries (campaign 29's runs, with the
/// steps' demand spread over their stretched time and its saturation, asked for 16 and more).
const PREP_SLOPE_MAX: f64 = 64.0;
/// `contention.prep_saturation` as `calibrate` sets it: the GPU workers' steps slow by one
/// step beside a second synthesis, not by more beside more (config.rs says what showed it).
const PREP_SATURATION: f64 = 1.0;
/// At most this many rounds of [`fit_capacity`] (synthesis limit, then prep slope).
const CAPACITY_ROUNDS: u32 = 6;

/// Least-squares fit of t = t0 · (1 + slope · max(0, n − knee)) over candidate knees. The
/// third value says why a fitted slope was dropped (slope 0 then), if it was.
pub fn fit_contention(samples: &[(f64, f64)]) -> (f64, Contention, Option<String>) {
    let t_mean = mean(&samples.iter().map(|x| x.1).collect::<Vec<_>>());
    let n_min = samples.iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
    let n_max = samples.iter().map(|x| x.0).fold(0.0, f64::max);
    let flat = Contention { synth_knee: n_max.ceil(), synth_slope: 0.0, prep: false, prep_slope: 0.0, prep_saturation: None };
    if samples.len() < 4 || n_max - n_min < 1.0 {
        return (t_mean, flat, None);
    }
    // (sse, t0, slope/t0, knee, standard error of the slope) of every candidate knee
    let mut fits: Vec<(f64, f64, f64, f64, f64)> = Vec::new();
    let mut k = n_min.floor().max(0.0);
    while k < n_max {
        let xs: Vec<f64> = samples.iter().map(|(n, _)| (n - k).max(0.0)).collect();
        let ys: Vec<f64> = samples.iter().map(|x| x.1).collect();
        let (mx, my) = (mean(&xs), mean(&ys));
        let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
        let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
        let b = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
        let a = my - b * mx;
        if a > 0.0 {
            let sse: f64 = xs.iter().zip(&ys).map(|(x, y)| (y - a - b * x).powi(2)).sum();
            let se = if sxx > 0.0 { (sse / (samples.len() as f64 - 2.0) / sxx).sqrt() } else { f64::INFINITY };
            fits.push((sse, a, b / a, k, se / a));
        }
        k += 0.5;
    }
    // The lowest knee that fits about as well as the best one (within KNEE_SSE_TOLERANCE):
    // where the samples barely tell knees apart (runs at pw 2 show n̄ 1..2 with run-to-run
    // noise), contention from the second synthesis on is the simpler reading, and a knee at the
    // top of the low run's range would predict one synthesis alone as slow as two (campaigns of
    // 2026-12-03: pw 1 predicted +56 %).
    let least = fits.iter().map(|f| f.0).fold(f64::INFINITY, f64::min);
    let best = fits.iter().copied().find(|f| f.0 <= least * (1.0 + KNEE_SSE_TOLERANCE) + 1e-12);
    let Some((_, t0, slope, knee, se)) = best else { return (t_mean, flat, None) };
    if slope == 0.0 {
        return (t0, Contention { synth_knee: knee, synth_slope: 0.0, prep: false, prep_slope: 0.0, prep_saturation: None }, None);
    }
    let above: Vec<f64> = samples.iter().map(|x| x.0).filter(|&n| n > knee).collect();
    let span = above.iter().copied().fold(f64::NEG_INFINITY, f64::max) - knee;
    let share = above.len() as f64 / samples.len() as f64;
    let t = if se > 0.0 { slope / se } else { f64::INFINITY };
    let why = if span < MIN_SPAN_ABOVE_KNEE {
        Some(format!("the {} samples above the knee {knee:.1} span only {span:.2} in concurrency (< {MIN_SPAN_ABOVE_KNEE})", above.len()))
    } else if share < MIN_SHARE_ABOVE_KNEE {
        Some(format!("only {:.0} % of the samples lie above the knee {knee:.1} (< {:.0} %)", 100.0 * share, 100.0 * MIN_SHARE_ABOVE_KNEE))
    } else if t < MIN_T {
        Some(format!("the slope is {t:.1} standard errors from zero (< {MIN_T})"))
    } else {
        None
    };
    if let Some(why) = why {
        let msg = format!("a contention slope of {:.4} above n = {knee:.1} fitted the noise, not the data: {why}; slope = 0", slope);
        return (t_mean, flat, Some(msg));
    }
    (t0, Contention { synth_knee: knee, synth_slope: (slope * 1e4).round() / 1e4, prep: false, prep_slope: 0.0, prep_saturation: None }, None)
}

/// The intervals of a run's `pce_build` and `pce_wait` spans.
fn pce_intervals(run: &Run) -> Vec<(u64, u64)> {
    run.spans
        .iter()
        .filter(|s| matches!(s.kind, SpanKind::PceBuild | SpanKind::PceWait))
        .map(|s| (s.start_ns, s.end_ns.unwrap_or(u64::MAX)))
        .collect()
}

fn overlaps(iv: &[(u64, u64)], a: u64, b: u64) -> bool {
    iv.iter().any(|&(s, e)| s < b.max(a + 1) && a < e)
}

/// A run's synthesis intervals (the finished ones), sorted.
fn synthesis_intervals(run: &Run) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = run.spans_of(&SpanKind::Synthesis).filter_map(|s| s.end_ns.map(|e| (s.start_ns, e))).collect();
    v.sort_unstable();
    v
}

/// A synthesis's CPU demand as the prover measured it: Σ `cpu_ns` ÷ Σ wall time of the
/// `synthesis` spans that carry it (its own pool's CPU time, issue 21) and ran alone — no
/// other synthesis beside them ([`mean_concurrency`] of 1 over `sorted`, the run's synthesis
/// intervals) and no pre-compiled constraints built or waited for ([`pce_intervals`]), left
/// out of the cost's syntheses too — in busy cores, as `cpu.synth_cores` means them; with
/// how many spans it rests on. `None` when no such span carries `cpu_ns` (older runs, a
/// shared pool, other producers).
fn measured_synth_demand(run: &Run, sorted: &[(u64, u64)]) -> Option<(f64, usize)> {
    let pce = pce_intervals(run);
    let (mut cpu, mut wall, mut n) = (0.0, 0.0, 0usize);
    for s in run.spans_of(&SpanKind::Synthesis) {
        let Some(c) = s.args.get(timeline::event::arg::CPU_NS).and_then(|v| v.as_f64()).filter(|x| x.is_finite() && *x > 0.0) else { continue };
        let (a, b) = (s.start_ns, s.end_ns.unwrap_or(s.start_ns));
        if b > a && mean_concurrency(a, b, sorted) <= 1.0 && !overlaps(&pce, a, b) {
            cpu += c;
            wall += (b - a) as f64;
            n += 1;
        }
    }
    (n > 0).then(|| (cpu / wall, n))
}

/// A run's measured mean synthesis time, s (the syntheses that built or waited for the
/// pre-compiled constraints left out), and its time-average synthesis concurrency over the
/// window from the first synthesis start to the last end; `None` under two syntheses.
fn synthesis_target(sorted: &[(u64, u64)], pce: &[(u64, u64)]) -> Option<(f64, f64)> {
    let (t0, t1) = (sorted.first()?.0, sorted.iter().map(|x| x.1).max()?);
    if sorted.len() < 2 || t1 <= t0 {
        return None;
    }
    let busy: u64 = sorted.iter().map(|(a, b)| b - a).sum();
    let kept: Vec<f64> = sorted.iter().filter(|&&(a, b)| !overlaps(pce, a, b)).map(|(a, b)| (b - a) as f64 / 1e9).collect();
    (!kept.is_empty()).then(|| (mean(&kept), busy as f64 / (t1 - t0) as f64))
}

/// The threads of a pool of the prover's own that a run's meta names (`synthesis_threads`,
/// `prep_threads`), when it had one: not when the synthesis workers shared one pool
/// (`synthesis_shared_pool`, or `synthesis_threads = 0` in timelines written before it).
fn pool_threads(run: &Run, key: &str) -> Option<u64> {
    if key == timeline::event::extra::SYNTHESIS_THREADS && run.meta.synthesis_pool_shared() {
        return None;
    }
    run.meta.extra.get(key).and_then(|v| v.as_u64()).filter(|&t| t > 0)
}

/// The model at the shape of one calibration run. A prover run is told to the model as a
/// campaign tells it a configuration ([`crate::prereg::apply`]: its pw, gw, lock, split
/// finalisation, finalisers, proofs all in flight, the engine's queue and permit, its thread
/// pools), so the capacity fitted here is the one the campaign's predictions use; another
/// producer's run sets what its meta says (pw, gw, lock, split, finalisers, proofs).
fn run_shape(cfg: &Config, run: &Run) -> Config {
    let mut c = cfg.clone();
    let m = &run.meta.config;
    let proofs = (run.jobs().len() as u32).max(1);
    let partitions = m.partitions.filter(|&p| p > 0).unwrap_or(cfg.pipeline.partitions);
    if run.meta.source == "prover" {
        let mut knobs = Vec::new();
        for (knob, key) in [("threads", "synthesis_threads"), ("prep_threads", "prep_threads")] {
            if let Some(t) = pool_threads(run, key) {
                knobs.push((knob.to_string(), t.to_string()));
            }
        }
        let g = crate::prereg::GridLine {
            name: "calibration run".into(),
            pw: m.pw.filter(|&v| v > 0).unwrap_or(cfg.pipeline.pw),
            gw: m.gw.filter(|&v| v > 0).unwrap_or(cfg.pipeline.gw),
            lock: m.lock.unwrap_or(cfg.pipeline.lock).as_str().to_string(),
            split: m.split_finalize.unwrap_or(cfg.pipeline.split_finalize),
            finalizers: m.finalizers.or(cfg.pipeline.finalizers).unwrap_or(1).max(1),
            knobs,
            line: String::new(),
        };
        let w = crate::prereg::Workload { size: String::new(), proofs, partitions, backend: m.backend.clone().unwrap_or_default() };
        if crate::prereg::apply(&mut c, &g, &w).is_ok() {
            return c;
        }
        c = cfg.clone();
    }
    let p = &mut c.pipeline;
    p.pw = m.pw.filter(|&v| v > 0).unwrap_or(p.pw);
    p.gw = m.gw.filter(|&v| v > 0).unwrap_or(p.gw);
    p.lock = m.lock.unwrap_or(p.lock);
    p.split_finalize = m.split_finalize.unwrap_or(p.split_finalize);
    p.finalizers = m.finalizers.or(p.finalizers);
    p.proofs = proofs;
    p.in_flight = p.in_flight.min(proofs).max(1);
    p.partitions = partitions;
    c
}

/// Which of equally good candidates [`grid_search`] keeps.
#[derive(Clone, Copy, PartialEq)]
enum Tie {
    Larger,
    Smaller,
}

/// The value in `min..=max` with the least `err`: a grid of [`CAPACITY_STEPS`] steps, then as
/// many over the best point's two neighbours. `None` when no candidate gives a finite error.
fn grid_search(min: f64, max: f64, tie: Tie, err: impl Fn(f64) -> f64) -> Option<f64> {
    let mut best = (f64::INFINITY, if tie == Tie::Larger { max } else { min });
    let (mut lo, mut hi) = (min, max);
    for _ in 0..2 {
        let step = (hi - lo) / f64::from(CAPACITY_STEPS);
        for k in 0..=CAPACITY_STEPS {
            let v = lo + step * f64::from(k);
            let e = err(v);
            let better = if tie == Tie::Larger { e <= best.0 } else { e < best.0 };
            if better && e.is_finite() {
                best = (e, v);
            }
        }
        (lo, hi) = ((best.1 - step).max(min), (best.1 + step).min(max));
    }
    best.0.is_finite().then_some(best.1)
}

/// The shape of the shared pool's gain (`cpu.synth_pool_exponent`) that `calibrate` sets
/// with the gain. The campaigns calibrate on one run of overlapped syntheses (pw 8), which
/// fixes the gain at its concurrency but not how it bends; over nine campaigns at 2^22
/// (5–7, 12–17), recalibrated with each exponent, a straight line (1) made the pw 4 runs +10 %
/// slow on average; with half the calibration bias carried over ([`crate::discrepancy`]) the
/// exponent 0.6 gave the lowest mean MAPE, 6.33 % (0.5: 6.35, 0.4: 6.50, 0.7: 6.41, 1: 7.06;
/// without the carry-over 0.6–0.8 lie within 0.1 point of each other): 0.6 (docs/fidelity.md).
pub const SHARED_POOL_EXPONENT: f64 = 0.6;

/// What held the overlapped syntheses back, as [`fit_capacity`] fits it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum SynthLimit {
    /// The host's cores (`machine.cpu_capacity`): runs whose syntheses had pools of their own.
    Capacity,
    /// The shared pool (`cpu.synth_pool_gain`): runs whose syntheses shared one pool
    /// ([`pool_threads`] is `None`: `synthesis_shared_pool`, or no or 0 `synthesis_threads` in
    /// their meta); the capacity stays the cores.
    PoolGain,
}

impl SynthLimit {
    /// Candidates from `lo` to `hi`, and the setting of one.
    fn range(self, cores: f64) -> (f64, f64) {
        match self {
            SynthLimit::Capacity => (1.0f64.min(cores), cores),
            SynthLimit::PoolGain => (0.0, 1.0),
        }
    }
    fn set(self, c: &mut Config, v: f64) {
        match self {
            SynthLimit::Capacity => c.machine.cpu_capacity = Some(v),
            SynthLimit::PoolGain => {
                c.machine.cpu_capacity = None;
                c.cpu.synth_pool_gain = Some(v);
                c.cpu.synth_pool_exponent = SHARED_POOL_EXPONENT;
            }
        }
    }
}

/// What limited the syntheses of the runs where several overlapped (`targets`: run, (mean
/// synthesis time s, concurrency)), fitted so that the model's syntheses take as long as the
/// measured ones: the shared pool's gain (`cpu.synth_pool_gain`) when every such run's
/// syntheses shared one pool ([`pool_threads`] `None`), else the host's capacity
/// (`machine.cpu_capacity`). Each candidate of a grid (gain 0..1, capacity 1..cpu_cores;
/// refined once around the best) is simulated at every such run's shape ([`run_shape`]), the
/// one with the least sum of squared log errors of the mean synthesis time kept. On the H200
/// host: one synthesis alone 0.2–0.3 s, eight on the shared pool beside each other 0.8–1.3 s
/// each (together ~1.7× one alone), eight on pools of 2 threads ~2.5× (runs 84–87).
fn fit_capacity(runs: &[(String, Run)], targets: &[(usize, (f64, f64))], cfg: &mut Config, rep: &mut FitReport) {
    // (A shape the model refuses is left out, and said.)
    let mut shapes: Vec<(&str, Config, f64, f64, &Run)> = Vec::new();
    let mut own_pools = false;
    for &(i, (t, n)) in targets {
        own_pools |= pool_threads(&runs[i].1, "synthesis_threads").is_some();
        let c = run_shape(cfg, &runs[i].1);
        match c.validate() {
            Ok(()) => shapes.push((runs[i].0.as_str(), c, t, n, &runs[i].1)),
            Err(e) => rep.notes.push(format!("cpu_capacity: {} left out, its shape does not validate: {e}", runs[i].0)),
        }
    }
    if shapes.is_empty() {
        return;
    }
    let what = if own_pools { SynthLimit::Capacity } else { SynthLimit::PoolGain };
    let cores = cfg.machine.cpu_cores;
    let sims = |v: f64| -> Vec<f64> {
        shapes
            .iter()
            .map(|(_, c, _, _, _)| {
                let mut c = c.clone();
                what.set(&mut c, v);
                crate::simulate(&c, crate::Options { record: false }).result.synth_mean_s
            })
            .collect()
    };
    let err = |v: &[f64]| -> f64 { v.iter().zip(&shapes).map(|(s, (_, _, t, _, _))| if *s > 0.0 { (s / t).ln().powi(2) } else { f64::INFINITY }).sum() };
    // (Ties go to the larger value: above what the runs' tasks ask for, every candidate
    // simulates alike, and the machine's cores, or a pool that holds nothing back, are the
    // plain answer.)
    let (min, max) = what.range(cores);
    let Some(best) = grid_search(min, max, Tie::Larger, |v| err(&sims(v))) else {
        rep.notes.push("cpu_capacity: no candidate simulated the overlapped runs (no synthesis completed): not fitted".into());
        return;
    };
    let digits = if what == SynthLimit::PoolGain { 1e4 } else { 1e2 };
    let v = (best * digits).round() / digits;
    let got = sims(v);
    let each: Vec<String> = shapes.iter().zip(&got).map(|((name, _, t, n, _), s)| format!("{name}: {t:.3} s measured at {n:.1} at once, {s:.3} s modelled")).collect();
    match what {
        SynthLimit::PoolGain => {
            what.set(cfg, v);
            rep.notes.push(format!(
                "cpu.synth_pool_gain = {v}: the syntheses shared the prover's thread pool; n at once progress together at 1 + {v} × (n − 1)^{SHARED_POOL_EXPONENT} times one alone (cpu.synth_pool_exponent, not fitted: calibrate::SHARED_POOL_EXPONENT), the gain at which the model's mean synthesis time matches the runs where syntheses overlapped ({}); the CPU capacity stays the {cores} cores",
                each.join("; ")
            ));
        }
        SynthLimit::Capacity if v >= cores => {
            cfg.machine.cpu_capacity = None;
            rep.notes.push(format!("cpu_capacity: the full {cores} cores fit the mean synthesis times best ({})", each.join("; ")));
        }
        SynthLimit::Capacity => {
            what.set(cfg, v);
            rep.notes.push(format!(
                "cpu_capacity = {v} of {cores} cores: the capacity at which the model's mean synthesis time matches the runs where syntheses overlapped ({})",
                each.join("; ")
            ));
        }
    }
    fit_prep_slope(&shapes.iter().map(|(n, c, _, _, r)| (*n, c, *r)).collect::<Vec<_>>(), what, v, cfg, rep);
}

/// The GPU workers' CPU steps beside n syntheses (`contention.prep_slope`): the slope at which
/// the model's mean GPU call (GPU_START..GPU_END) matches the measured one in the runs where
/// syntheses overlapped (`shapes`: name, the model at its shape, the run; with the synthesis
/// limit `what` = `v` just fitted); a grid over 0..PREP_SLOPE_MAX, refined once. Left at 0 when
/// the runs have no GPU calls.
fn fit_prep_slope(shapes: &[(&str, &Config, &Run)], what: SynthLimit, v: f64, cfg: &mut Config, rep: &mut FitReport) {
    let pairs: Vec<(&str, &Config, f64)> = shapes
        .iter()
        .filter_map(|&(name, c, run)| {
            let calls: Vec<f64> = run.spans_of(&SpanKind::Gpu).filter(|s| !s.is_open()).map(|s| s.duration_ns() as f64 / 1e9).collect();
            (!calls.is_empty()).then(|| (name, c, mean(&calls)))
        })
        .collect();
    if pairs.is_empty() {
        return;
    }
    let sims = |k: f64| -> Vec<f64> {
        pairs
            .iter()
            .map(|(_, c, _)| {
                let mut c = (*c).clone();
                what.set(&mut c, v);
                c.contention.prep_slope = k;
                crate::simulate(&c, crate::Options { record: false }).result.gpu_call_mean_s
            })
            .collect()
    };
    let err = |got: &[f64]| -> f64 { got.iter().zip(&pairs).map(|(s, (_, _, t))| if *s > 0.0 { (s / t).ln().powi(2) } else { f64::INFINITY }).sum() };
    // (Ties go to the smaller slope: no stretch the calls do not ask for.)
    let Some(best) = grid_search(0.0, PREP_SLOPE_MAX, Tie::Smaller, |k| err(&sims(k))) else {
        return;
    };
    let k = (best * 1e4).round() / 1e4;
    let got = sims(k);
    let each: Vec<String> = pairs.iter().zip(&got).map(|((name, _, t), s)| format!("{name}: {:.1} ms measured, {:.1} ms modelled", t * 1e3, s * 1e3)).collect();
    cfg.contention.prep_slope = k;
    rep.notes.push(format!(
        "contention.prep_slope = {k}: a GPU worker's CPU steps slow by 1 + {k} × min(n − 1, {PREP_SATURATION}) beside n syntheses (contention.prep_saturation), the slope at which the model's mean GPU call matches the runs where syntheses overlapped ({})",
        each.join("; ")
    ));
}

/// What the process holds of what it reserves (`memory.rss_per_reserved`,
/// `memory.rss_offset_gib`): each run's peak of the prover's `rss_bytes` against its peak of
/// `ram_reserved_bytes`; a least-squares line through the runs' peaks when they span at least
/// 10 % of reserved memory, else their ratio. Reservations alone decide admission; this only
/// maps the model's reserved memory to the RSS a run would show (campaigns 5–7 of 2026-12-03:
/// the reservations predicted, exact, were 15–63 % above the measured RSS).
fn fit_rss(runs: &[(String, Run)], cfg: &mut Config, rep: &mut FitReport) {
    use timeline::event::counters::{RAM_RESERVED_BYTES, RSS_BYTES};
    let peak = |run: &Run, name: &str| run.counters.iter().filter(|c| c.name == name).map(|c| c.value).fold(0.0f64, f64::max) / GIB;
    let pts: Vec<(&str, f64, f64)> = runs
        .iter()
        .map(|(n, r)| (n.as_str(), peak(r, RAM_RESERVED_BYTES), peak(r, RSS_BYTES)))
        .filter(|&(_, x, y)| x > 0.0 && y > 0.0)
        .collect();
    if pts.is_empty() {
        return;
    }
    let xs: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let ys: Vec<f64> = pts.iter().map(|p| p.2).collect();
    let (mx, my) = (mean(&xs), mean(&ys));
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let span = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max) - xs.iter().copied().fold(f64::INFINITY, f64::min);
    // (The ratio within 0.01..2, what `validate` takes, so that rounding cannot make it 0.)
    let (b, a) = if span >= 0.1 * mx && sxx > 0.0 && (sxy / sxx) > 0.0 {
        let b = (sxy / sxx).clamp(0.01, 2.0);
        (b, my - b * mx)
    } else {
        ((my / mx).clamp(0.01, 2.0), 0.0)
    };
    let r4 = |v: f64| (v * 1e4).round() / 1e4;
    cfg.memory.rss_per_reserved = Some(r4(b));
    cfg.memory.rss_offset_gib = r4(a);
    let each: Vec<String> = pts.iter().map(|(n, x, y)| format!("{n}: {y:.3} of {x:.3} GiB")).collect();
    rep.notes.push(format!(
        "RSS = {:.4} GiB + {:.4} x reserved (memory.rss_offset_gib, rss_per_reserved), from the runs' peaks of rss_bytes against ram_reserved_bytes ({}); admission still follows the reservations",
        r4(a),
        r4(b),
        each.join("; ")
    ));
}

/// The model's error where it was fitted (`uncertainty.model_error`): each run simulated at
/// its shape ([`run_shape`]), the RMS of the relative errors of its steady s/proof (from
/// partition completions, as [`steady_from_partitions`] measures it). The intervals carry it
/// beside the run spread: a model that misses its own calibration runs by 10 % is not surer
/// than that elsewhere (campaigns of 2026-12-03: 80 % intervals from the replications and the
/// run spread alone held 25–50 % of the measured runs).
fn model_error(runs: &[(String, Run)], cfg: &mut Config, rep: &mut FitReport) {
    let mut errs = Vec::new();
    let mut each = Vec::new();
    // ln(measured ÷ modelled) by pw, for the calibration bias.
    let mut by_pw: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (name, run) in runs {
        let Some(measured) = steady_from_partitions(run) else { continue };
        let shape = run_shape(cfg, run);
        if let Err(e) = shape.validate() {
            rep.notes.push(format!("model error: {name} left out, its shape does not validate: {e}"));
            continue;
        }
        let modelled = crate::simulate(&shape, crate::Options { record: false }).result.steady_partitions_s_per_proof;
        if measured > 0.0 && modelled > 0.0 {
            let e = modelled / measured - 1.0;
            errs.push(e * e);
            each.push(format!("{name} {:+.1} %", 100.0 * e));
            by_pw.entry(shape.pipeline.pw).or_default().push((measured / modelled).ln());
        }
    }
    if errs.is_empty() {
        return;
    }
    cfg.uncertainty.calibration_bias = by_pw
        .into_iter()
        .map(|(pw, l)| crate::config::BiasPoint { pw, ratio: (mean(&l).exp() * 1e4).round() / 1e4 })
        .collect();
    rep.notes.push(format!(
        "calibration bias (uncertainty.calibration_bias, measured ÷ modelled steady s/proof, geometric mean by pw): {}; `campaign predict` carries {} of it over to the configurations it predicts (crate::discrepancy)",
        cfg.uncertainty.calibration_bias.iter().map(|b| format!("pw {} × {:.4}", b.pw, b.ratio)).collect::<Vec<_>>().join(", "),
        crate::discrepancy::CARRY
    ));
    let rms = mean(&errs).sqrt().min(1.0);
    cfg.uncertainty.model_error = (rms * 1e4).round() / 1e4;
    rep.notes.push(format!(
        "model error {:.2} % (RMS of the model's steady s/proof against each calibration run, simulated at its shape: {}): widens the prediction intervals beside the run spread",
        100.0 * rms,
        each.join(", ")
    ));
}

/// The machine of the runs (`RunMeta::machine`, the first run that has it): cores, RAM,
/// device memory (the smallest device), memory bandwidth when probed. What the meta does not
/// say stays the base config's and is listed in `assumed_machine` and in a note; the GPU
/// count comes from the devices seen (below) and the PCIe bandwidth always from the base.
fn take_machine(runs: &[(String, Run)], cfg: &mut Config, rep: &mut FitReport) {
    let from = runs.iter().find(|(_, r)| !r.meta.machine.is_empty());
    let m = from.map(|(_, r)| r.meta.machine.clone()).unwrap_or_default();
    let base = if cfg.name.is_empty() { "the base config".to_string() } else { format!("the base config `{}`", cfg.name) };
    let mc = &mut cfg.machine;
    let mut taken = Vec::new();
    let mut assumed = Vec::new();
    match m.cpu_cores {
        Some(c) if c > 0 => {
            mc.cpu_cores = c as f64;
            taken.push(format!("cpu_cores = {c}"));
        }
        _ => assumed.push(format!("cpu_cores = {}", mc.cpu_cores)),
    }
    match m.ram_gib {
        Some(r) if r > 0.0 && r.is_finite() => {
            mc.ram_gib = (r * 10.0).round() / 10.0;
            taken.push(format!("ram_gib = {}", mc.ram_gib));
        }
        _ => assumed.push(format!("ram_gib = {}", mc.ram_gib)),
    }
    match m.gpu_mem_gib.iter().copied().filter(|v| *v > 0.0 && v.is_finite()).reduce(f64::min) {
        Some(v) => {
            mc.vram_gib = (v * 10.0).round() / 10.0;
            taken.push(format!("vram_gib = {}", mc.vram_gib));
        }
        None => assumed.push(format!("vram_gib = {}", mc.vram_gib)),
    }
    match m.mem_bandwidth_gbs {
        Some(b) if b > 0.0 && b.is_finite() => {
            mc.mem_bandwidth_gbs = b;
            taken.push(format!("mem_bandwidth_gbs = {b}"));
        }
        _ => assumed.push(format!("mem_bandwidth_gbs = {}", mc.mem_bandwidth_gbs)),
    }
    assumed.push(format!("pcie_gbs = {}", mc.pcie_gbs));
    if let Some((name, _)) = from {
        rep.notes.push(format!("machine from the meta of {name}: {}", taken.join(", ")));
    }
    rep.notes.push(format!("machine values not in the runs' meta, taken from {base}: {}", assumed.join(", ")));
    rep.assumed_machine = assumed;
}

/// What the engine reserved from its host-RAM budget, read off a run's timeline (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reservations {
    /// Reserved before the first partition: the engine's resident items (the parameters'
    /// host copy, the pre-compiled constraints, the GPU workers' call memory).
    pub resident: u64,
    /// One synthesis's reservation (its working set).
    pub partition: u64,
    /// The part of it released when the GPU call took the a/b/c (two-phase release), when
    /// the counter shows one.
    pub abc: Option<u64>,
}

/// The engine's reservations ([`Reservations`]) from the `ram_reserved_bytes` counter (sampled
/// at every reservation and release) and the `ram_wait` spans' `bytes` arg:
/// - a partition's reservation: the `bytes` of the `ram_wait` spans, else the most frequent
///   increase of the counter (one per synthesis);
/// - the first release of a partition: the first decrease of the counter once a GPU call
///   runs (from the first `gpu` span's start; from the first synthesis's in a run without
///   them) outside every `pce_build` span. A partition gives nothing back before its GPU call
///   takes its a/b/c, and the first partition to give anything back gives its a/b/c first;
///   the decreases it skips are the engine's resident items resized: the parameters' host
///   copy given back once on every device (before the syntheses) and the pre-compiled
///   constraints' reservation trimmed or dropped to their real size, which the first
///   synthesis does inside its `pce_build` — possibly while another partition's call runs;
/// - the resident items: the counter just before that release (no partition has released
///   anything yet), less one reservation per synthesis started before it (a synthesis starts
///   once its reservation is made). Not "the counter before its first increase by a
///   partition's size": the GPU workers' call memory, resident, may be of that size too;
/// - the a/b/c part: that release, when it is smaller than a partition and its complement
///   (partition − it) is also released somewhere (the rest, when the partition's proof is
///   finished).
///
/// `None` without the counter, or when the figures do not add up (resident < 0).
pub fn reservations(run: &Run) -> Option<Reservations> {
    let samples: Vec<(u64, u64)> = run
        .counters
        .iter()
        .filter(|c| c.name == timeline::event::counters::RAM_RESERVED_BYTES && c.value.is_finite() && c.value >= 0.0)
        .map(|c| (c.t_ns, c.value.round() as u64))
        .collect();
    if samples.is_empty() {
        return None;
    }
    // (time, value before, value after) of every change, the first from 0.
    let steps: Vec<(u64, u64, u64)> =
        std::iter::once(0).chain(samples.iter().map(|s| s.1)).zip(&samples).map(|(a, &(t, b))| (t, a, b)).filter(|(_, a, b)| a != b).collect();
    let mode = |xs: &mut dyn Iterator<Item = u64>| -> Option<u64> {
        let mut n: BTreeMap<u64, usize> = BTreeMap::new();
        for x in xs {
            *n.entry(x).or_default() += 1;
        }
        // Most frequent, ties to the larger.
        n.into_iter().max_by_key(|&(v, c)| (c, v)).map(|(v, _)| v)
    };
    let waited = mode(&mut run.spans_of(&SpanKind::RamWait).filter_map(|s| s.args.get("bytes").and_then(|v| v.as_u64())).filter(|&b| b > 0));
    let partition = waited.or_else(|| mode(&mut steps.iter().filter(|(_, a, b)| b > a).map(|(_, a, b)| b - a)))?;
    // The first release of a partition (see above), or the end of the counter when nothing
    // was released.
    let first_synthesis = run.spans_of(&SpanKind::Synthesis).map(|s| s.start_ns).min()?;
    let from = run.spans_of(&SpanKind::Gpu).map(|s| s.start_ns).min().unwrap_or(first_synthesis);
    let pce: Vec<(u64, u64)> = run.spans_of(&SpanKind::PceBuild).map(|s| (s.start_ns, s.end_ns.unwrap_or(u64::MAX))).collect();
    let in_pce = |t: u64| pce.iter().any(|&(a, b)| a <= t && t <= b);
    let (until, peak, abc) = match steps.iter().find(|&&(t, a, b)| a > b && t >= from && !in_pce(t)) {
        Some(&(t, a, b)) => (t, a, a - b),
        None => (u64::MAX, samples.last()?.1, 0),
    };
    let started = run.spans_of(&SpanKind::Synthesis).filter(|s| s.start_ns < until).count() as u64;
    let resident = peak.checked_sub(started.checked_mul(partition)?)?;
    let released = |d: u64| steps.iter().any(|&(_, a, b)| a > b && a - b == d);
    let abc = (abc > 0 && abc < partition && released(partition - abc)).then_some(abc);
    Some(Reservations { resident, partition, abc })
}

/// The host-RAM budget (`memory.total_budget`) and the VRAM budget (`memory.vram_budget_gib`)
/// from the first run's meta (`extra.ram_budget_bytes`, `extra.vram_budget_bytes`, which the
/// prover writes), and under a RAM budget the memory figures that decide admission from what
/// the engine reserved ([`reservations`]): `partition_gib`, `abc_gib` + `early_release`, and
/// the resident items as `baseline_gib` (less the GPU workers' call memory the model adds
/// itself, `gw × gpus × call_ram_gib`, when `[circuit]` gives query sizes — by the engine's
/// rule for the calibrated config, [`Config::calls_gather_no_bases`]; a run of a binary before
/// 9386dbe reserved the bases in every case, and those then stay in `baseline_gib`), `params_gib` and
/// `pce_gib` 0 (inside it). A run without a budget in its meta keeps the base config's memory.
/// Returns whether the memory figures came from the run.
fn take_memory(name: &str, run: &Run, cfg: &mut Config, rep: &mut FitReport) -> bool {
    let gib = |b: u64| ((b as f64 / GIB) * 1e6).round() / 1e6;
    if let Some(v) = run.meta.extra.get("vram_budget_bytes").and_then(|v| v.as_u64()).filter(|&v| v > 0) {
        cfg.memory.vram_budget_gib = Some(gib(v));
        rep.notes.push(format!(
            "VRAM budget from the meta of {name}: vram_budget_gib = {} (the engine's --vram-budget; the meta's device memory is then the budget too, not the card: machine.vram_gib = {} — give --set vram=<card GiB> before asking what a larger budget would do)",
            gib(v),
            cfg.machine.vram_gib
        ));
    }
    let Some(budget) = run.meta.extra.get(timeline::event::extra::RAM_BUDGET_BYTES).and_then(|v| v.as_u64()).filter(|&b| b > 0) else {
        rep.notes.push("memory: no RAM budget in the meta (extra.ram_budget_bytes): the base config's memory section and ram_policy are kept".into());
        return false;
    };
    // The engine's `auto` is MemTotal less 5 GiB (the meta's RAM is MemTotal): kept as `auto`,
    // so that a what-if on the machine's RAM moves the budget as it would move the engine's.
    let auto = run.meta.machine.ram_gib.map(|r| ((r * GIB).round() as i128 - i128::from(DEFAULT_SAFETY_MARGIN) - i128::from(budget)).abs() < (1 << 20)).unwrap_or(false);
    if auto {
        cfg.memory.total_budget = Some(crate::memory::Budget::Auto);
        cfg.memory.safety_margin = Some(crate::memory::ByteSize(DEFAULT_SAFETY_MARGIN));
    } else {
        cfg.memory.total_budget = Some(crate::memory::Budget::Bytes(crate::memory::ByteSize(budget)));
    }
    rep.notes.push(format!(
        "RAM budget from the meta of {name}: {budget} B = {:.2} GiB{}: a synthesis starts only when its reservation fits",
        budget as f64 / GIB,
        if auto { ", the machine's RAM less 5 GiB: total_budget = \"auto\" (safety_margin 5 GiB), which follows --set ram" } else { " (total_budget, in bytes)" }
    ));
    if gib(budget) > cfg.machine.ram_gib {
        rep.notes.push(format!("machine.ram_gib {} raised to the budget {} (a budget above the RAM cannot validate)", cfg.machine.ram_gib, gib(budget).ceil()));
        cfg.machine.ram_gib = gib(budget).ceil();
    }
    let Some(r) = reservations(run) else {
        rep.notes.push(format!(
            "memory: {name} recorded no reservations (ram_reserved_bytes): baseline {} GiB, partition {:.2} GiB are the base config's, so the model may admit a different number of syntheses at once than the run did",
            cfg.memory.baseline_gib,
            cfg.partition_gib()
        ));
        return false;
    };
    let m = &mut cfg.memory;
    m.partition_gib = Some(gib(r.partition));
    m.params_gib = 0.0;
    m.pce_gib = 0.0;
    match r.abc {
        Some(a) => {
            m.abc_gib = Some(gib(a));
            m.early_release = true;
        }
        None => {
            m.abc_gib = Some(0.0);
            m.early_release = false;
        }
    }
    let calls = f64::from(cfg.pipeline.gw) * f64::from(cfg.machine.gpus) * cfg.call_ram_gib();
    let baseline = gib(r.resident) - calls;
    cfg.memory.baseline_gib = (baseline.max(0.0) * 1e6).round() / 1e6;
    let at_once = ((budget as f64 - r.resident as f64) / r.partition as f64).floor().max(0.0);
    rep.notes.push(format!(
        "memory from the engine's reservations in {name} (ram_reserved_bytes, ram_wait): {:.2} GiB resident before the first partition (parameters' host copy, pre-compiled constraints, GPU workers' call memory){}, {:.2} GiB per synthesis{}: {at_once:.0} {} in the budget at once",
        gib(r.resident),
        if calls > 0.0 { format!(" = baseline_gib {} + the model's {calls:.2} GiB of call memory ([circuit])", cfg.memory.baseline_gib) } else { " = baseline_gib (params_gib, pce_gib 0: inside it)".to_string() },
        gib(r.partition),
        match r.abc {
            Some(a) => format!(", of which {:.2} GiB (a/b/c) released once its GPU call has prepared and uploaded them (early_release)", gib(a)),
            None => " held until its proof is finished (no two-phase release seen)".to_string(),
        },
        if at_once == 1.0 { "synthesis fits" } else { "syntheses fit" }
    ));
    if baseline < 0.0 {
        let sizes = match (cfg.circuit.as_ref().map(|c| c.constraints), run.meta.config.constraints) {
            (Some(a), Some(b)) if a != b => format!(" ([circuit] of the base describes {a} constraints, the run has {b})"),
            _ => String::new(),
        };
        rep.notes.push(format!("memory: the model's call memory ({calls:.2} GiB) exceeds the resident {:.2} GiB the run reserved{sizes}: baseline_gib clamped to 0, the model reserves more than the engine did", gib(r.resident)));
    }
    true
}

/// The model's pw: the configured one when the first run's meta gives it (what-ifs on pw and
/// on the budget need the workers the engine had, not the syntheses its budget let run), with a
/// note when fewer syntheses ran at once (`seen`) and why (RAM waits: the budget; fewer
/// partitions than workers: the work); else, as before, the most syntheses seen at once.
fn pick_pw(name: &str, meta: Option<u32>, seen: u32, ram_waits: usize, partitions: u32, rep: &mut FitReport) -> u32 {
    let Some(pw) = meta.filter(|&p| p > 0) else {
        rep.notes.push(format!("pw = {}: the most syntheses seen running at once (the meta does not give pw)", seen.max(1)));
        return seen.max(1);
    };
    if seen < pw {
        let mut why = Vec::new();
        if ram_waits > 0 {
            why.push(format!("admission by the RAM budget: {ram_waits} syntheses waited for RAM"));
        }
        if partitions < pw {
            why.push(format!("too few partitions: {partitions} in the run"));
        }
        if why.is_empty() {
            why.push("neither RAM waits nor too few partitions: the GPU queue's backpressure or the arrivals".into());
        }
        rep.notes.push(format!(
            "pw = {pw} from the meta of {name}; at most {seen} syntheses ran at once ({}): the model keeps pw = {pw} so that its own limits (budget, partitions) decide, as the engine's did",
            why.join("; ")
        ));
    } else {
        rep.notes.push(format!("pw = {pw} from the meta of {name} (at most {seen} syntheses ran at once)"));
    }
    pw
}

/// Calibrate from one or more measured runs of the same machine and pipeline code.
pub fn calibrate(runs: &[(String, Run)], base: &Config) -> Result<Calibration, CalibrateError> {
    let mut cfg = base.clone();
    // What calibrate fits is the runs', never a calibrated base's (recalibrating from a
    // model.toml would keep its capacity under a new slope, or its RSS map and model error
    // where these runs cannot give them).
    cfg.machine.cpu_capacity = None;
    cfg.cpu.synth_pool_gain = None;
    cfg.cpu.synth_pool_exponent = 1.0;
    cfg.contention.prep_slope = 0.0;
    cfg.contention.prep_saturation = None;
    cfg.memory.rss_per_reserved = None;
    cfg.memory.rss_offset_gib = 0.0;
    cfg.uncertainty.model_error = 0.0;
    cfg.uncertainty.calibration_bias.clear();
    let mut rep = FitReport { inputs: runs.iter().map(|(n, _)| n.clone()).collect(), ..Default::default() };
    let names = rep.inputs.join(", ");

    // ---- The machine: from the runs' meta where they say it, else the base config (named) ----
    take_machine(runs, &mut cfg, &mut rep);

    // ---- CPU demands: fitted from the busy-cores counter when a run has one ----
    if let Some((name, f)) = runs.iter().find_map(|(n, r)| cpu_demand::fit(r, cfg.machine.cpu_cores).map(|f| (n, f))) {
        let show = |v: Option<f64>| v.map_or("not identified (base value kept)".to_string(), |d| format!("{d:.2}"));
        rep.notes.push(format!(
            "CPU demands fitted from cpu_busy_cores of {name} ({} of {} sample periods unsaturated, R² {:.2}): synth {} cores, prep {}, finalize {}; a thread waiting for kernels {}; baseline {:.2}",
            f.used,
            f.samples,
            f.r2,
            show(f.synth),
            show(f.prep),
            show(f.finalize),
            f.device_wait.map_or("-".into(), |d| format!("{d:.2}")),
            f.baseline
        ));
        let round = |v: f64| (v * 100.0).round() / 100.0;
        if let Some(d) = f.synth {
            cfg.cpu.synth_cores = round(d);
        }
        if let Some(d) = f.prep {
            cfg.cpu.prep_cores = round(d);
        }
        if let Some(d) = f.finalize {
            cfg.cpu.finalize_cores = round(d);
        }
        rep.cpu_demands_fitted = true;
    } else {
        rep.notes.push("CPU demands: no cpu_busy_cores counter in the input: the base config's synth/prep/finalize cores are used".into());
    }
    // Each run's synthesis intervals, sorted: which ran alone (the measured demand, the
    // cost) and how many overlapped (the capacity).
    let synth_iv: Vec<Vec<(u64, u64)>> = runs.iter().map(|(_, run)| synthesis_intervals(run)).collect();
    // ---- A synthesis's demand: measured by the prover where its spans say so ----
    if let Some(((name, _), (d, n))) = runs.iter().zip(&synth_iv).find_map(|(r, iv)| measured_synth_demand(&r.1, iv).map(|m| (r, m))) {
        let d = (d * 100.0).round() / 100.0;
        rep.notes.push(format!(
            "synthesis: measured by the prover in {name} (synthesis cpu_ns over wall time, {n} that ran alone): {d} busy cores; synth_cores {d} (was {})",
            cfg.cpu.synth_cores
        ));
        cfg.cpu.synth_cores = d;
    }
    // ---- The preparation: measured by the prover where its spans say so ----
    let prep: Vec<Option<cpu_demand::PrepMeasured>> = runs.iter().map(|(_, r)| cpu_demand::prep_measured(r)).collect();
    if let Some(((name, _), m)) = runs.iter().zip(&prep).find_map(|(r, m)| m.as_ref().map(|m| (r, m))) {
        rep.notes.push(format!(
            "prep: measured by the prover in {name} (prep_msm cpu_ns, threads): {:.2} thread-s of CPU time a preparation on a pool of {} threads; prep_cores {} (was {}), its isolated time cpu_ns ÷ threads",
            m.mean_cpu_s, m.cores, m.cores, cfg.cpu.prep_cores
        ));
        cfg.cpu.prep_cores = m.cores;
    }
    let sharing = Sharing {
        cores: [cfg.cpu.synth_cores, cfg.cpu.prep_cores, cfg.cpu.finalize_cores],
        bw: [cfg.cpu.synth_bw_gbs, cfg.cpu.prep_bw_gbs, cfg.cpu.finalize_bw_gbs],
        machine_cores: cfg.machine.cpu_cores,
        machine_bw: cfg.machine.mem_bandwidth_gbs,
    };

    // Isolated durations of every CPU-phase span of every run, computed once.
    let cpu_kinds: Vec<SpanKind> = cpu_demand::PHASES.iter().flat_map(|(_, k)| k.iter().cloned()).collect();
    let derated: Vec<Vec<(usize, f64)>> = runs.iter().map(|(_, r)| cpu_demand::derate(r, &cpu_kinds, sharing)).collect();
    let mut isolated = derated.clone();
    // A preparation whose CPU time was measured: cpu_ns ÷ threads, not its derated wall time.
    for (iso, m) in isolated.iter_mut().zip(&prep) {
        if let Some(m) = m {
            let measured: BTreeMap<usize, f64> = m.isolated_ms.iter().copied().collect();
            for (i, ms) in iso.iter_mut() {
                if let Some(&v) = measured.get(i) {
                    *ms = v;
                }
            }
        }
    }

    // ---- synthesis and contention ----
    let mut contention_samples: Vec<(f64, f64)> = Vec::new();
    let mut pw_seen = 0u32;
    // Each run's synthesis intervals, sorted: the concurrency beside a synthesis (here) and
    // beside a preparation (below).
    // Runs whose syntheses overlapped: (run, measured mean synthesis time, concurrency).
    let mut targets: Vec<(usize, (f64, f64))> = Vec::new();
    for (run_i, (((_, run), iso), iv)) in runs.iter().zip(&isolated).zip(&synth_iv).enumerate() {
        pw_seen = pw_seen.max(max_concurrency(iv.iter().copied()));
        // Divide out what the CPU pool's sharing explains (every CPU phase running beside
        // it); the contention fit explains the rest.
        // (A synthesis that built or waited for the pre-compiled constraints is left out
        // where others are not: it times the one-off build, not a synthesis.)
        let pce = pce_intervals(run);
        let before = contention_samples.len();
        let mut with_pce = Vec::new();
        for &(i, ms) in iso.iter().filter(|(i, _)| run.spans[*i].kind == SpanKind::Synthesis) {
            let s = &run.spans[i];
            let (a, b) = (s.start_ns, s.end_ns.unwrap_or(s.start_ns));
            let n = mean_concurrency(a, b, iv);
            if overlaps(&pce, a, b) {
                with_pce.push((n, ms));
            } else {
                contention_samples.push((n, ms));
            }
        }
        if contention_samples.len() == before {
            contention_samples.extend(with_pce);
        }
        if let Some(t) = synthesis_target(iv, &pce) {
            targets.push((run_i, t));
        }
    }
    if contention_samples.is_empty() {
        return Err(CalibrateError::NoSynthesis(names));
    }
    rep.synthesis_samples = contention_samples.len();
    rep.synth_concurrency_min = contention_samples.iter().map(|x| x.0).fold(f64::INFINITY, f64::min);
    rep.synth_concurrency_max = contention_samples.iter().map(|x| x.0).fold(0.0, f64::max);
    // Syntheses that ran alone, and runs where several overlapped: the model's CPU capacity is
    // fitted to the latter by simulating them ([`fit_capacity`]), the synthesis cost from the
    // former; without both, a contention slope fitted to the samples stands in.
    let lone: Vec<f64> = contention_samples.iter().filter(|(n, _)| *n <= LONE_CONCURRENCY).map(|x| x.1).collect();
    targets.retain(|(_, (_, conc))| *conc >= CONTENDED_CONCURRENCY);
    let capacity_targets = if lone.len() >= MIN_LONE_SYNTHESES && !targets.is_empty() {
        cfg.costs.synth = fit(&lone, false).unwrap_or(Dist::Fixed(mean(&lone)));
        cfg.contention = Contention::default();
        rep.notes.push(format!(
            "synthesis: cost from the {} syntheses that ran alone (mean concurrency ≤ {LONE_CONCURRENCY}); what several at once do to each other is the CPU's capacity (below), not a contention slope",
            lone.len()
        ));
        targets
    } else {
        let (_t0, mut cont, dropped) = fit_contention(&contention_samples);
        let deflated: Vec<f64> = contention_samples.iter().map(|(n, t)| t / cont.factor(*n)).collect();
        cfg.costs.synth = fit(&deflated, false).unwrap_or(Dist::Fixed(mean(&deflated)));
        if let Some(why) = dropped {
            rep.notes.push(format!("contention: {why}"));
        } else if cont.synth_slope == 0.0 {
            rep.notes.push(format!(
                "synthesis concurrency stayed within {:.1}..{:.1}: no contention slope identifiable (slope = 0, knee = the highest concurrency seen); calibrate from several runs at different pw to fit it",
                rep.synth_concurrency_min, rep.synth_concurrency_max
            ));
        } else {
            rep.notes.push(format!("contention: synthesis slows by 1 + {:.4} x max(0, n - {:.1})", cont.synth_slope, cont.synth_knee));
        }
        // The same contention slows the GPU workers' preparation (campaign 2026-12-02: prep_msm
        // 8 ms beside one synthesis, ~20 ms beside four to twelve; its CPU time ÷ threads, 3 ms,
        // explains neither): with a slope, a preparation's isolated time is its derated wall
        // time ÷ the factor of the syntheses running beside it, and the model slows it likewise.
        if cont.synth_slope > 0.0 {
            // Every preparation's new isolated time, ms.
            let mut iso_prep: Vec<f64> = Vec::new();
            for ((((_, run), iso), der), iv) in runs.iter().zip(isolated.iter_mut()).zip(&derated).zip(&synth_iv) {
                // `isolated` is a copy of `derated` (same spans, same order) with some values
                // replaced: the derated wall time is its twin's.
                for ((i, ms), &(_, wall)) in iso.iter_mut().zip(der) {
                    let s = &run.spans[*i];
                    if s.kind != SpanKind::PrepMsm {
                        continue;
                    }
                    let n = mean_concurrency(s.start_ns, s.end_ns.unwrap_or(s.start_ns), iv);
                    *ms = wall / cont.factor(n);
                    iso_prep.push(*ms);
                }
            }
            if !iso_prep.is_empty() {
                cont.prep = true;
                rep.notes.push(format!(
                    "contention: the GPU workers' preparation slows by the same factor as the syntheses beside it ({} prep_msm spans: isolated = derated wall time ÷ the factor; contention.prep = true)",
                    iso_prep.len()
                ));
                // Its demand: the CPU time it measured over that isolated time (the cores it
                // keeps busy alone), not its pool's threads — a preparation does not use 16
                // threads for all of its time, and a smaller pool (`prep_threads`) slows it by
                // what it lacks of that demand only.
                if let Some(m) = prep.iter().flatten().next() {
                    let iso_ms = mean(&iso_prep);
                    if iso_ms > 0.0 {
                        let cores = (m.mean_cpu_s * 1e3 / iso_ms).clamp(1.0, m.cores.max(1.0));
                        rep.notes.push(format!(
                            "prep: {:.2} thread-s of CPU time over an isolated {iso_ms:.1} ms: prep_cores {:.2} (was {}, its pool's threads)",
                            m.mean_cpu_s,
                            cores,
                            cfg.cpu.prep_cores
                        ));
                        cfg.cpu.prep_cores = (cores * 100.0).round() / 100.0;
                    }
                }
            }
        }
        cfg.contention = cont;
        Vec::new()
    };

    // ---- shape ----
    let first = &runs[0].1;
    let jobs = first.jobs();
    cfg.pipeline.proofs = (jobs.len() as u32).max(1);
    let mut parts_per_job: HashMap<&str, BTreeSet<u32>> = HashMap::new();
    for s in &first.spans {
        if let (Some(j), Some(p)) = (&s.job, s.partition) {
            parts_per_job.entry(&**j).or_default().insert(p);
        }
    }
    cfg.pipeline.partitions = parts_per_job.values().map(|s| s.len() as u32).max().unwrap_or(1).max(1);
    let first_name = runs[0].0.as_str();
    let ram_waits = runs.iter().map(|(_, r)| r.spans_of(&SpanKind::RamWait).count()).sum::<usize>();
    cfg.pipeline.pw = pick_pw(first_name, first.meta.config.pw, pw_seen, ram_waits, cfg.pipeline.proofs * cfg.pipeline.partitions, &mut rep);
    let devices = first.devices();
    cfg.machine.gpus = (devices.len() as u32).max(1);
    let mut workers: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for s in first.spans_of(&SpanKind::Gpu) {
        if let Some(w) = s.worker {
            workers.entry(s.device_or_0()).or_default().insert(w);
        }
    }
    let gw_seen = workers.values().map(|w| w.len() as u32).max().unwrap_or(1).max(1);
    cfg.pipeline.gw = match first.meta.config.gw.filter(|&g| g > 0) {
        Some(g) => {
            if gw_seen < g {
                rep.notes.push(format!("gw = {g} from the meta of {first_name}; at most {gw_seen} GPU worker(s) of a device made calls"));
            }
            g
        }
        None => gw_seen,
    };
    // The proofscope engine places partitions by device memory, then calls in flight, then
    // device index (issue 22); other producers (cuzk) keep the shared channel's first idle.
    if first.meta.source == "prover" {
        cfg.pipeline.placement = crate::config::Placement::Memory;
    }
    // Proofs in flight: jobs whose first span has started and whose last has not ended.
    let mut job_iv: HashMap<&str, (u64, u64)> = HashMap::new();
    for s in &first.spans {
        if let (Some(j), Some(e)) = (&s.job, s.end_ns) {
            let x = job_iv.entry(&**j).or_insert((s.start_ns, e));
            x.0 = x.0.min(s.start_ns);
            x.1 = x.1.max(e);
        }
    }
    let jiv: Vec<(u64, u64)> = job_iv.into_values().collect();
    cfg.pipeline.in_flight = max_concurrency(jiv.iter().copied()).max(1);
    // The proofscope engine has no cap on proofs in flight: `prove` submits every proof at
    // once and their partitions queue for the synthesis workers. What a run shows (a pw = 1
    // run: two proofs overlap) is its pace, not a limit (campaigns of 2026-12-03: taking it
    // as one held pw 16 to eight syntheses where sixteen ran, +89 %).
    if first.meta.source == "prover" && cfg.pipeline.in_flight < cfg.pipeline.proofs {
        rep.notes.push(format!(
            "in_flight = {} (every proof): the engine admits each submitted proof (at most {} overlapped in {first_name})",
            cfg.pipeline.proofs, cfg.pipeline.in_flight
        ));
        cfg.pipeline.in_flight = cfg.pipeline.proofs;
    }
    if let Some(l) = first.meta.config.lock {
        cfg.pipeline.lock = l;
        if l != LockMode::TwoLock {
            cfg.pipeline.device_global_sync = None;
        }
    }
    if let Some(sf) = first.meta.config.split_finalize {
        cfg.pipeline.split_finalize = sf;
    }
    // The GPU workers' own pool (the engine's `prep_threads`; 0 or absent: none).
    cfg.pipeline.prep_threads = first.meta.extra.get("prep_threads").and_then(|v| v.as_u64()).filter(|&t| t > 0).map(|t| t.min(u64::from(u32::MAX)) as u32);
    // Finalisers: as recorded, else as many as G2 MSMs ever ran at once in a split run
    // (a lower bound that is exact when the finalisers were the limit).
    if cfg.pipeline.split_finalize {
        let g2: Vec<(u64, u64)> = first.spans_of(&SpanKind::CpuMsmBG2).filter_map(|s| s.end_ns.map(|e| (s.start_ns, e))).collect();
        match first.meta.config.finalizers {
            Some(f) => cfg.pipeline.finalizers = Some(f),
            None if !g2.is_empty() => {
                let f = max_concurrency(g2.iter().copied()).max(1);
                cfg.pipeline.finalizers = Some(f);
                rep.notes.push(format!("finalizers: not recorded in the run's meta; {f} = the most G2 MSMs that ran at once"));
            }
            None => {}
        }
    }

    // ---- memory: the budgets of the meta, what the engine reserved ----
    rep.memory_from_run = take_memory(first_name, first, &mut cfg, &mut rep);

    // ---- GPU side ----
    let split: Vec<DeviceSplit> = runs.iter().flat_map(|(_, r)| device_split(r)).collect();
    let calls: Vec<f64> = runs.iter().flat_map(|(_, r)| r.spans_of(&SpanKind::Gpu).filter_map(dur_ms).collect::<Vec<_>>()).collect();
    rep.gpu_calls = calls.len();
    if split.iter().any(|d| d.kernels() > 0.0) {
        rep.gpu_source = "kernel spans".into();
        let set = |d: &mut Dist, v: Vec<f64>| {
            if let Some(x) = fit(&v, false) {
                *d = x;
            }
        };
        let col = |f: fn(&DeviceSplit) -> f64| -> Vec<f64> { split.iter().map(f).collect() };
        set(&mut cfg.costs.ntt_msm_h, col(|d| d.ntt_msm_h));
        set(&mut cfg.costs.batch_add, col(|d| d.batch_add));
        set(&mut cfg.costs.tail_msm, col(|d| d.tail_msm));
        cfg.costs.msm_rest = fit(&col(|d| d.msm_rest), false).unwrap_or(Dist::Fixed(0.0));
        // A G2 MSM on the device is in the kernel costs above (its msm_b_g2 span nests
        // batch_add/tail_msm like the G1 ones): nothing of the base's msm_b_g2 stays.
        cfg.costs.msm_b_g2 = Dist::Fixed(0.0);
        // CPU phases: isolated durations (the pool's slowdown divided out).
        let cpu_of = |k: &[SpanKind]| -> Vec<f64> { runs.iter().zip(&isolated).flat_map(|((_, r), iso)| per_partition_derated(r, iso, k)).collect() };
        set(&mut cfg.costs.prep_msm, cpu_of(&[SpanKind::PrepMsm]));
        set(&mut cfg.costs.b_g2_msm, cpu_of(&[SpanKind::CpuMsmBG2]));
        // The G2 MSM on the device (`g2_msm = device`, spans `msm_b_g2`): part of the
        // kernels (msm_rest), nothing of it left for the finisher.
        if first.meta.config.g2_msm.as_deref() == Some("device") || (first.spans_of(&SpanKind::MsmBG2).next().is_some() && first.spans_of(&SpanKind::CpuMsmBG2).next().is_none()) {
            cfg.costs.b_g2_msm = Dist::Fixed(0.0);
            rep.notes.push("b_g2_msm: the G2 MSM ran on the device (msm_b_g2 spans, in msm_rest); the finisher only assembles".into());
        }
        let fin = cpu_of(&[SpanKind::Finalize]);
        cfg.costs.epilogue = fit(&fin, false).unwrap_or(Dist::Fixed(0.0));
        // Transfers outside the kernel spans, averaged over every partition (the one-off
        // upload of the parameters is left out: `device_split`).
        let mut upload_ms = mean(&col(|d| d.upload));
        for (_, r) in runs {
            if let Some((bytes, secs)) = params_upload(r) {
                rep.notes.push(format!("upload: the parameters' one-off upload ({:.1} GiB in {secs:.2} s) is left out of the per-partition upload", bytes as f64 / (1u64 << 30) as f64));
            }
        }
        // The CUDA backend uploads between prep and the compute gate (pinned staging on a
        // copy stream, into VRAM allocated for the call): the model runs the call in that
        // order (`upload_after_prep`), the upload outside the kernels lock. An upload beside
        // another worker's kernels takes longer (runs 91–94 at 2^22: 35 ms alone, 84 ms
        // overlapped), mostly in its host fill (the `fill_ns` of its `h2d` span: a copy into
        // pinned memory that the syntheses slow), not queued behind the kernels: the lock
        // was held 108–117 ms a partition against 105 ms of kernels. The upload is costed at
        // what it takes alone: the uploads that no other worker's kernels overlapped.
        if first.meta.source == "prover" && first.meta.config.backend.as_deref() == Some("cuda") {
            let alone: Vec<f64> = split.iter().filter(|d| !d.upload_overlapped && d.upload > 0.0).map(|d| d.upload).collect();
            let overlapped: Vec<f64> = split.iter().filter(|d| d.upload_overlapped).map(|d| d.upload).collect();
            if !overlapped.is_empty() && alone.len() >= 3 {
                // (The first call's one-off parameter upload is among the alone ones.)
                upload_ms = mean(&alone);
                rep.notes.push(format!(
                    "upload: {:.1} ms per partition alone ({} partitions) vs {:.1} ms beside another worker's locked kernels ({}): the model uploads after the preparation, outside the kernels lock (upload_after_prep), at the alone cost",
                    mean(&alone),
                    alone.len(),
                    mean(&overlapped),
                    overlapped.len()
                ));
            } else if !overlapped.is_empty() {
                rep.notes.push(format!("upload: every upload overlapped another worker's kernels ({} partitions): its mean {upload_ms:.1} ms includes the stall", overlapped.len()));
            }
            cfg.pipeline.prestage = false;
            cfg.pipeline.uploads_wait_for_kernels = false;
            cfg.pipeline.upload_after_prep = true;
            cfg.memory.prestage_vram_gib = 0.0;
        }
        // Milliseconds over the link as GiB, to the MiB.
        let gib_of_ms = |ms: f64| (ms / 1e3 * base.machine.pcie_gbs * 1e9 / (1u64 << 30) as f64 * 1e3).round() / 1e3;
        cfg.costs.upload_gib = gib_of_ms(upload_ms);
        // What of the upload the device spends copying, where the spans say it (`gpu_ns`):
        // the analyzer counts only that part of an engine's upload as device work (its GPU
        // floor), and the simulated uploads then say the same (`costs.upload_device_gib`).
        let device: Vec<f64> = split.iter().filter_map(|d| d.upload_device).collect();
        cfg.costs.upload_device_gib = None;
        if !device.is_empty() && cfg.costs.upload_gib > 0.0 {
            let dev_ms = mean(&device);
            let gib = gib_of_ms(dev_ms).min(cfg.costs.upload_gib);
            cfg.costs.upload_device_gib = Some(gib);
            rep.notes.push(format!(
                "upload_device_gib = {gib}: of the upload, {dev_ms:.1} ms per partition is the device's copy (the gpu_ns of the h2d spans outside the kernels, {} partitions), the rest the host's fill; the simulated uploads record it as gpu_ns, so that the analyzer counts the same device work in both",
                device.len()
            ));
        }
        let nested_h2d = mean(&col(|d| d.nested_h2d));
        if nested_h2d > 0.0 {
            rep.notes.push(format!(
                "h2d: {nested_h2d:.1} ms per partition inside kernel spans (counted in those kernels), {upload_ms:.1} ms outside them (the upload, upload_gib)"
            ));
        }
        let union_ms = mean(&split.iter().map(|d| d.kernels() + d.upload).collect::<Vec<_>>());
        rep.notes.push(format!(
            "device work per partition: union of its device-work spans {union_ms:.1} ms = ntt_msm_h {:.1} + batch_add {:.1} + tail_msm {:.1} + msm_rest {:.1} (L/A/B_G1(/B_G2) MSMs less the batch_add/tail_msm/h2d nested in them) + upload {upload_ms:.1}",
            mean(&col(|d| d.ntt_msm_h)),
            mean(&col(|d| d.batch_add)),
            mean(&col(|d| d.tail_msm)),
            mean(&col(|d| d.msm_rest)),
        ));
        // The lock that wraps only the kernels (kernels: "compute" in the prover, "gpu" in
        // the simulator; two_lock: "compute"): its hold should match the device work.
        if matches!(cfg.pipeline.lock, LockMode::Kernels | LockMode::TwoLock) {
            // Keyed by run too: several runs of one configuration share job and partition ids.
            let mut holds: BTreeMap<(usize, JobId, u32), f64> = BTreeMap::new();
            for (ri, (_, r)) in runs.iter().enumerate() {
                for s in r.spans_of(&SpanKind::LockHold) {
                    let lock = s.args.get("lock").and_then(|v| v.as_str()).unwrap_or("");
                    let kernel_lock = lock == "compute" || (lock == "gpu" && cfg.pipeline.lock == LockMode::Kernels);
                    if let (true, Some(d), Some(j), Some(p)) = (kernel_lock, dur_ms(s), &s.job, s.partition) {
                        *holds.entry((ri, j.clone(), p)).or_default() += d;
                    }
                }
            }
            if !holds.is_empty() {
                let hold = mean(&holds.into_values().collect::<Vec<_>>());
                let kernels = mean(&split.iter().map(|d| d.kernels()).collect::<Vec<_>>());
                rep.notes.push(format!(
                    "kernel lock held {hold:.1} ms per partition against {kernels:.1} ms of kernel spans ({:+.1} ms: host work inside the lock, not modelled)",
                    hold - kernels
                ));
            }
        }
        rep.device_time_per_partition_ms =
            cfg.costs.ntt_msm_h.mean_ms() + cfg.costs.batch_add.mean_ms() + cfg.costs.tail_msm.mean_ms() + cfg.costs.msm_rest.mean_ms();
        rep.cpu_part_of_call_ms = cfg.costs.prep_msm.mean_ms() + cfg.costs.b_g2_msm.mean_ms() + cfg.costs.epilogue.mean_ms();
    } else if !calls.is_empty() {
        rep.gpu_source = "cuzk call spacing".into();
        // Serial device time: spacing of consecutive call ends while calls overlapped.
        let mut gaps = Vec::new();
        for (_, run) in runs {
            let mut by_dev: BTreeMap<u32, Vec<(u64, u64)>> = BTreeMap::new();
            for s in run.spans_of(&SpanKind::Gpu) {
                if let Some(e) = s.end_ns {
                    by_dev.entry(s.device_or_0()).or_default().push((s.start_ns, e));
                }
            }
            for (_, mut iv) in by_dev {
                iv.sort_by_key(|x| x.1);
                for w in iv.windows(2) {
                    let (prev_end, (next_start, next_end)) = (w[0].1, w[1]);
                    // Saturated: the next call was already running when the previous ended.
                    if next_start < prev_end {
                        gaps.push((next_end - prev_end) as f64 / 1e6);
                    }
                }
            }
        }
        // The shortest call did not wait for the lock (a cold start, or after an idle gap).
        let call_low = calls.iter().copied().fold(f64::INFINITY, f64::min);
        let device_ms = if gaps.is_empty() {
            rep.notes.push("GPU calls never overlapped: the whole call is taken as device time (gw = 1 behaves as lock = whole)".into());
            mean(&calls)
        } else {
            timeline::stats::quantile(&gaps, 0.5).unwrap_or(0.0)
        };
        let cpu_ms = (call_low - device_ms).max(0.0);
        rep.device_time_per_partition_ms = device_ms;
        rep.cpu_part_of_call_ms = cpu_ms;
        let b = &base.costs;
        let kb = [b.ntt_msm_h.mean_ms(), b.batch_add.mean_ms(), b.tail_msm.mean_ms(), b.msm_rest.mean_ms()];
        let ktot: f64 = kb.iter().sum();
        let r = |x: f64| (x * 1000.0).round() / 1000.0;
        cfg.costs.ntt_msm_h = Dist::Fixed(r(device_ms * kb[0] / ktot));
        cfg.costs.batch_add = Dist::Fixed(r(device_ms * kb[1] / ktot));
        cfg.costs.tail_msm = Dist::Fixed(r(device_ms * kb[2] / ktot));
        cfg.costs.msm_rest = Dist::Fixed(r(device_ms * kb[3] / ktot));
        let cb = [b.prep_msm.mean_ms(), b.b_g2_msm.mean_ms(), b.epilogue.mean_ms()];
        let ctot: f64 = cb.iter().sum::<f64>().max(1e-9);
        cfg.costs.prep_msm = Dist::Fixed(r(cpu_ms * cb[0] / ctot));
        cfg.costs.b_g2_msm = Dist::Fixed(r(cpu_ms * cb[1] / ctot));
        cfg.costs.epilogue = Dist::Fixed(r(cpu_ms * cb[2] / ctot));
        cfg.costs.upload_gib = 0.0;
        cfg.costs.upload_device_gib = None;
        rep.notes.push(format!(
            "device time per partition {device_ms:.0} ms (median spacing of {} saturated call ends); CPU part of a call {cpu_ms:.0} ms (shortest call {call_low:.0} ms minus it), split prep/G2/epilogue and the kernels in the base config's proportions",
            gaps.len()
        ));
    } else {
        return Err(CalibrateError::NoGpu(names));
    }
    if let Some((spread, groups, runs_n)) = run_spread(runs) {
        cfg.uncertainty.run_spread = (spread * 1e4).round() / 1e4;
        rep.notes.push(format!(
            "run spread {:.2} % (relative sd of the steady s/proof over {runs_n} runs in {groups} repeated configuration(s)): widens the prediction intervals",
            100.0 * spread
        ));
    }
    fit_startup(runs, &mut cfg, &mut rep);
    if !capacity_targets.is_empty() {
        // The synthesis limit is fitted with the GPU workers' slope as it stands, and the slope
        // with that limit, round after round until neither moves (a slowed step draws fewer
        // cores, so the two trade off: resources.rs), at most CAPACITY_ROUNDS; the last
        // round's notes kept.
        cfg.contention.prep_saturation = Some(PREP_SATURATION);
        let key = |c: &Config| (c.machine.cpu_capacity, c.cpu.synth_pool_gain, c.contention.prep_slope);
        for round in 1..=CAPACITY_ROUNDS {
            let before = key(&cfg);
            let mut r = FitReport::default();
            fit_capacity(runs, &capacity_targets, &mut cfg, &mut r);
            if round > 1 && key(&cfg) == before || round == CAPACITY_ROUNDS {
                rep.notes.extend(r.notes);
                if round > 2 {
                    rep.notes.push(format!("cpu capacity and prep slope fitted together: {round} rounds"));
                }
                break;
            }
        }
    }
    fit_rss(runs, &mut cfg, &mut rep);
    model_error(runs, &mut cfg, &mut rep);
    cfg.name = format!("calibrated from {}", rep.inputs.join(", "));
    tracing::debug!("calibrated from {names}: {} notes; synth {:.1} ms, device {:.1} ms per partition", rep.notes.len(), cfg.costs.synth.mean_ms(), rep.device_time_per_partition_ms);
    Ok(Calibration { config: cfg, report: rep })
}

/// Steady s/proof of a run from its partition completions (the last span end of each
/// partition): (last − first) / (n − 1) × partitions per proof; `None` under 2 partitions.
pub fn steady_from_partitions(run: &Run) -> Option<f64> {
    let mut ends: std::collections::BTreeMap<(JobId, u32), u64> = Default::default();
    for sp in &run.spans {
        if let (Some(p), Some(e)) = (sp.partition, sp.end_ns) {
            let k = (sp.job.clone().unwrap_or_default(), p);
            let v = ends.entry(k).or_insert(0);
            *v = (*v).max(e);
        }
    }
    let per_proof = {
        let mut jobs: std::collections::BTreeMap<&str, u32> = Default::default();
        for (j, _) in ends.keys() {
            *jobs.entry(&**j).or_insert(0) += 1;
        }
        jobs.values().copied().max()? as f64
    };
    let (a, b) = (ends.values().min()?, ends.values().max()?);
    (ends.len() >= 2 && b > a).then(|| (b - a) as f64 / 1e9 / (ends.len() - 1) as f64 * per_proof)
}

/// The run-to-run spread of the inputs: runs made with the same configuration (equal
/// `meta.config`, not empty) are repeats; each group's relative sd of the steady s/proof, pooled as the
/// root mean square over the groups. Returns (spread, groups, runs in them); `None` without repeats.
pub fn run_spread(runs: &[(String, Run)]) -> Option<(f64, usize, usize)> {
    let mut groups: Vec<(&timeline::RunConfig, Vec<f64>)> = Vec::new();
    for (_, r) in runs {
        // A run that does not say its configuration (a cuzk log) cannot be called a repeat.
        if r.meta.config == timeline::RunConfig::default() {
            continue;
        }
        let Some(v) = steady_from_partitions(r) else { continue };
        match groups.iter_mut().find(|(c, _)| **c == r.meta.config) {
            Some(g) => g.1.push(v),
            None => groups.push((&r.meta.config, vec![v])),
        }
    }
    let rel: Vec<(f64, usize)> = groups
        .iter()
        .filter(|(_, v)| v.len() >= 2)
        .map(|(_, v)| {
            let n = v.len() as f64;
            let mean = v.iter().sum::<f64>() / n;
            let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
            (var.sqrt() / mean, v.len())
        })
        .collect();
    if rel.is_empty() {
        return None;
    }
    let rms = (rel.iter().map(|(r, _)| r * r).sum::<f64>() / rel.len() as f64).sqrt();
    Some((rms.min(1.0), rel.len(), rel.iter().map(|(_, n)| n).sum()))
}

/// The default base config (the reference box, Phase 8 settings).
pub fn default_base() -> Config {
    // The embedded file is tested to parse; fall back to a parse error message otherwise.
    Config::from_toml_str(DEFAULT_BASE, "configs/phase8.toml (embedded)").expect("the embedded base config parses (tested)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_base_parses() {
        assert_eq!(default_base().name, "phase8");
    }

    #[test]
    fn a_run_whose_syntheses_shared_one_pool_has_no_pool_of_its_own() {
        let run = |pairs: &[(&str, serde_json::Value)]| {
            let mut r = Run::new(timeline::RunMeta::new("prover"));
            for (k, v) in pairs {
                r.meta.extra.insert(k.to_string(), v.clone());
            }
            r
        };
        // Pools of their own (the engine's default since 2026-12-04 records the resolved threads).
        assert_eq!(pool_threads(&run(&[("synthesis_threads", serde_json::json!(16)), ("synthesis_shared_pool", serde_json::json!(false))]), "synthesis_threads"), Some(16));
        assert_eq!(pool_threads(&run(&[("synthesis_threads", serde_json::json!(4))]), "synthesis_threads"), Some(4));
        // One shared pool: now said by the key, before it by 0 threads.
        assert_eq!(pool_threads(&run(&[("synthesis_threads", serde_json::json!(16)), ("synthesis_shared_pool", serde_json::json!(true))]), "synthesis_threads"), None);
        assert_eq!(pool_threads(&run(&[("synthesis_threads", serde_json::json!(0))]), "synthesis_threads"), None);
        // The shared key says nothing of the preparation's pool.
        assert_eq!(pool_threads(&run(&[("prep_threads", serde_json::json!(6)), ("synthesis_shared_pool", serde_json::json!(true))]), "prep_threads"), Some(6));
    }

    #[test]
    fn contention_fit_recovers_knee_and_slope() {
        let c = Contention { synth_knee: 12.0, synth_slope: 0.2, prep: false, prep_slope: 0.0, prep_saturation: None };
        let samples: Vec<(f64, f64)> = (4..30).map(|n| (n as f64, 30_000.0 * c.factor(n as f64))).collect();
        let (t0, got, dropped) = fit_contention(&samples);
        assert!((t0 - 30_000.0).abs() < 1.0, "{t0}");
        assert!((got.synth_knee - 12.0).abs() < 0.01, "{got:?}");
        assert!((got.synth_slope - 0.2).abs() < 1e-3, "{got:?}");
        assert_eq!(dropped, None);
        // No spread: no slope.
        let flat: Vec<(f64, f64)> = (0..10).map(|i| (6.0 + 0.01 * i as f64, 30_000.0)).collect();
        assert_eq!(fit_contention(&flat).1.synth_slope, 0.0);
        // Real contention under noise is still found when the concurrency spans enough.
        let mut x = 0x1234_5678u64;
        let mut noise = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as f64 / (1u64 << 31) as f64 - 0.5
        };
        let noisy: Vec<(f64, f64)> = (0..200).map(|i| {
            let n = 4.0 + (i % 25) as f64;
            (n, 30_000.0 * c.factor(n) * (1.0 + 0.05 * noise()))
        }).collect();
        let (_, got, dropped) = fit_contention(&noisy);
        assert_eq!(dropped, None);
        assert!((got.synth_slope - 0.2).abs() < 0.03, "{got:?}");
    }

    const G: u64 = 1 << 30;

    /// A prover-shaped run of one proof of 8 partitions: syntheses two at a time (pairs k at
    /// [100k, 100k + 90] ms), then each partition's GPU call (one worker, an NTT span). With
    /// `budget`, the engine's reservations as the prover records them: 10 GiB resident (8 of
    /// parameters, 2 of them given back, then 4 of call memory: as much as a partition, so
    /// that neither the first release nor the first step of a partition's size marks the
    /// resident items), 4 GiB per synthesis with a two-phase release (3 GiB
    /// a/b/c at its call, 1 GiB at its end), `ram_wait` spans (arg `bytes`) for partitions 2..8,
    /// and the budget, 18.5 GiB, in the meta: two syntheses fit at once.
    fn paired_run(meta_pw: Option<u32>, budget: bool) -> Run {
        use timeline::event::Counter;
        const MS: u64 = 1_000_000;
        let mut run = Run::default();
        run.meta.source = "prover".into();
        run.meta.config.pw = meta_pw;
        run.meta.config.gw = Some(1);
        run.meta.config.lock = Some(LockMode::Kernels);
        run.meta.machine.cpu_cores = Some(16);
        run.meta.machine.ram_gib = Some(24.0);
        let job = "proof-0000";
        // (t, change of the reserved bytes), pushed in time order below.
        let mut changes: Vec<(u64, i64)> = Vec::new();
        if budget {
            run.meta.extra.insert(timeline::event::extra::RAM_BUDGET_BYTES.into(), (18 * G + G / 2).into());
            changes.extend([(1, 8 * G as i64), (2, -2 * G as i64), (3, 4 * G as i64)]);
        }
        for p in 0..8u32 {
            let k = u64::from(p / 2);
            let (a, b) = ((10 + 100 * k) * MS, (100 + 100 * k) * MS);
            run.spans.push(Span::new(SpanKind::Synthesis, a, b).job(job).partition(p).worker(p));
            let c = b + 5 * MS * u64::from(p % 2);
            run.spans.push(Span::new(SpanKind::Gpu, c, c + 4 * MS).job(job).partition(p).worker(0).device(0));
            run.spans.push(Span::new(SpanKind::Ntt, c + MS, c + 3 * MS).job(job).partition(p).worker(0).device(0));
            if budget {
                // Reserved at its synthesis's start, a/b/c released at its call's, the rest at its end.
                changes.extend([(a - 2 + u64::from(p % 2), 4 * G as i64), (c + 1, -3 * G as i64), (c + 4 * MS, -(G as i64))]);
                if p >= 2 {
                    run.spans.push(Span::new(SpanKind::RamWait, MS, a).job(job).partition(p).worker(p).arg("bytes", 4 * G));
                }
            }
        }
        changes.sort_by_key(|c| c.0);
        let mut reserved = 0i64;
        for (t, d) in changes {
            reserved += d;
            run.counters.push(Counter { name: timeline::event::counters::RAM_RESERVED_BYTES.into(), t_ns: t, value: reserved as f64, device: None });
        }
        run.normalize();
        run
    }

    fn note<'a>(cal: &'a Calibration, needle: &str) -> Option<&'a String> {
        cal.report.notes.iter().find(|n| n.contains(needle))
    }

    #[test]
    fn pw_comes_from_the_meta_when_fewer_syntheses_ran_at_once() {
        let cal = calibrate(&[("run".into(), paired_run(Some(8), true))], &default_base()).unwrap();
        assert_eq!(cal.report.synth_concurrency_max.ceil(), 2.0, "the run has two syntheses at once");
        assert_eq!(cal.config.pipeline.pw, 8, "{:?}", cal.report.notes);
        let n = note(&cal, "pw = 8 from the meta").unwrap_or_else(|| panic!("{:?}", cal.report.notes));
        assert!(n.contains("at most 2 syntheses ran at once"), "{n}");
        assert!(n.contains("RAM budget: 6 syntheses waited"), "{n}");
        assert_eq!(cal.config.pipeline.gw, 1);
    }

    #[test]
    fn the_budget_and_the_reservations_come_from_the_run() {
        let run = paired_run(Some(8), true);
        assert_eq!(reservations(&run), Some(Reservations { resident: 10 * G, partition: 4 * G, abc: Some(3 * G) }));
        let cal = calibrate(&[("run".into(), run)], &default_base()).unwrap();
        let c = &cal.config;
        assert_eq!(c.memory.total_budget, Some(crate::memory::Budget::Bytes(crate::memory::ByteSize(18 * G + G / 2))));
        assert_eq!(c.budget_gib(), Some(18.5));
        assert_eq!((c.memory.baseline_gib, c.memory.params_gib, c.memory.pce_gib), (10.0, 0.0, 0.0));
        assert_eq!((c.partition_gib(), c.abc_gib(), c.memory.early_release), (4.0, 3.0, true));
        assert!(cal.report.memory_from_run);
        assert!(note(&cal, "2 syntheses fit in the budget at once").is_some(), "{:?}", cal.report.notes);
        assert!(note(&cal, "RAM budget from the meta").is_some());
        c.validate().unwrap();
        // A budget of the machine's RAM less 5 GiB is the engine's `auto`, kept as such.
        let mut auto = paired_run(Some(8), true);
        auto.meta.extra.insert(timeline::event::extra::RAM_BUDGET_BYTES.into(), (19 * G).into());
        let a = calibrate(&[("run".into(), auto)], &default_base()).unwrap();
        assert_eq!(a.config.memory.total_budget, Some(crate::memory::Budget::Auto));
        assert_eq!(a.config.budget_gib(), Some(19.0));
        // The model admits what the run did: at pw 8, still two syntheses at once.
        let out = crate::simulate(c, crate::Options { record: true });
        assert!(out.result.feasible, "{:?}", out.result.failure);
        let run = out.run.unwrap();
        let iv = synthesis_intervals(&run);
        assert_eq!(iv.len(), 8);
        assert_eq!(max_concurrency(iv.iter().copied()), 2);
        // Without the budget (RAM to spare) the 8 workers run all 8 at once: the budget is what
        // holds the model to two, as it held the engine.
        let mut unbounded = c.clone();
        unbounded.memory.total_budget = None;
        unbounded.machine.ram_gib = 1024.0;
        let free = crate::simulate(&unbounded, crate::Options { record: true }).run.unwrap();
        let iv = synthesis_intervals(&free);
        assert_eq!(max_concurrency(iv.iter().copied()), 8);
    }

    #[test]
    fn a_preparation_measured_by_the_prover_sets_its_demand_and_work() {
        // Each partition's call prepares for 2 ms of wall time on a pool of 16 threads, with
        // 8 thread-ms of CPU time (the measured work): alone on its 16 threads, 0.5 ms.
        const MS: u64 = 1_000_000;
        let mut run = paired_run(Some(8), false);
        let calls: Vec<(u32, u64)> = run.spans_of(&SpanKind::Gpu).map(|s| (s.partition.unwrap(), s.start_ns)).collect();
        for (p, c) in calls {
            run.spans.push(Span::new(SpanKind::PrepMsm, c, c + MS).job("proof-0000").partition(p).worker(0).device(0).arg("cpu_ns", 8 * MS).arg("threads", 16u64));
        }
        run.normalize();
        let cal = calibrate(&[("run".into(), run.clone())], &default_base()).unwrap();
        assert_eq!(cal.config.cpu.prep_cores, 16.0);
        assert_eq!(cal.config.costs.prep_msm.mean_ms(), 0.5, "{:?}", cal.config.costs.prep_msm);
        assert!(note(&cal, "prep: measured by the prover in run").is_some_and(|n| n.contains("0.01 thread-s")), "{:?}", cal.report.notes);
        // Without the arguments (an older prover): the derated wall time, 1 ms (nothing
        // else draws cores here), and the base's demand.
        for s in run.spans.iter_mut() {
            s.args.clear();
        }
        let old = calibrate(&[("run".into(), run)], &default_base()).unwrap();
        assert_eq!(old.config.cpu.prep_cores, default_base().cpu.prep_cores);
        assert_eq!(old.config.costs.prep_msm.mean_ms(), 1.0, "{:?}", old.config.costs.prep_msm);
        assert!(note(&old, "prep: measured").is_none());
    }

    #[test]
    fn a_synthesis_demand_is_its_cpu_time_over_its_wall_time_when_it_ran_alone() {
        // 0-100 ms alone with 600 ms of CPU (6 cores), 200-300 alone with 400 (4 cores);
        // 400-500 and 450-550 overlap (their 1600 ms left out); 600-700 carries no cpu_ns.
        const MS: u64 = 1_000_000;
        let mut run = Run::default();
        for (a, b, cpu) in [(0, 100, Some(600)), (200, 300, Some(400)), (400, 500, Some(800)), (450, 550, Some(800)), (600, 700, None)] {
            let s = Span::new(SpanKind::Synthesis, a * MS, b * MS).job("j").partition(0);
            run.spans.push(match cpu {
                Some(c) => s.arg("cpu_ns", c * MS),
                None => s,
            });
        }
        assert_eq!(measured_synth_demand(&run, &synthesis_intervals(&run)), Some((1000.0 / 200.0, 2)));
        // The first one held the PCE's extraction: left out.
        run.spans.push(Span::new(SpanKind::PceBuild, 10 * MS, 90 * MS).job("j").partition(0));
        assert_eq!(measured_synth_demand(&run, &synthesis_intervals(&run)), Some((400.0 / 100.0, 1)));
        run.spans.retain(|s| !s.args.contains_key("cpu_ns"));
        assert_eq!(measured_synth_demand(&run, &synthesis_intervals(&run)), None);
    }

    #[test]
    fn a_synthesis_demand_measured_by_the_prover_sets_synth_cores() {
        // The paired run with its odd partitions' syntheses moved off the even ones' (each
        // pair now one after the other: 10-55 and 55-100 ms), so that every synthesis ran
        // alone; the even ones carry 4.5 × their wall time of CPU (the pool's cpu_ns).
        const MS: u64 = 1_000_000;
        let mut run = paired_run(Some(8), false);
        for s in run.spans.iter_mut().filter(|s| s.kind == SpanKind::Synthesis) {
            let p = u64::from(s.partition.unwrap());
            let (a, b) = ((10 + 100 * (p / 2)) * MS, (100 + 100 * (p / 2)) * MS);
            let mid = (a + b) / 2;
            (s.start_ns, s.end_ns) = if p % 2 == 0 { (a, Some(mid)) } else { (mid, Some(b)) };
            if p % 2 == 0 {
                s.args.insert("cpu_ns".into(), serde_json::json!(9 * (mid - a) / 2));
            }
        }
        run.normalize();
        let cal = calibrate(&[("run".into(), run.clone())], &default_base()).unwrap();
        assert_eq!(cal.config.cpu.synth_cores, 4.5);
        let n = note(&cal, "synthesis: measured by the prover in run").unwrap_or_else(|| panic!("{:?}", cal.report.notes));
        assert!(n.contains("4 that ran alone") && n.contains("4.5 busy cores"), "{n}");
        // Without the argument (an older prover, a shared pool): no such note, the base's or
        // the counter's demand.
        for s in run.spans.iter_mut() {
            s.args.remove("cpu_ns");
        }
        let old = calibrate(&[("run".into(), run)], &default_base()).unwrap();
        assert!(note(&old, "synthesis: measured").is_none());
        assert_eq!(old.config.cpu.synth_cores, default_base().cpu.synth_cores);
    }

    #[test]
    fn a_contention_slope_slows_the_preparation_too_and_sets_its_demand_from_its_cpu_time() {
        // Four waves of four partitions: one synthesis alone (100 ms, n = 1), then three at
        // once (200 ms each, n = 3); each partition's GPU call after its synthesis. The
        // preparations (one thread, as much CPU time as wall time, so the pool's sharing is
        // nothing: 3 × 4 + 1 cores of 16) take 5 ms beside the lone synthesis and 10 ms
        // beside the three: the same slowdown, 2x from n = 1 to n = 3.
        const MS: u64 = 1_000_000;
        let mut run = Run::default();
        run.meta.source = "prover".into();
        run.meta.config.pw = Some(3);
        run.meta.config.gw = Some(1);
        run.meta.config.lock = Some(LockMode::Kernels);
        run.meta.machine.cpu_cores = Some(16);
        run.meta.machine.ram_gib = Some(24.0);
        let job = "proof-0000";
        let mut p = 0u32;
        for w in 0..4u64 {
            let base = 1000 * w * MS;
            let mut part = |run: &mut Run, a: u64, b: u64, prep: (u64, u64)| {
                run.spans.push(Span::new(SpanKind::Synthesis, base + a * MS, base + b * MS).job(job).partition(p).worker(p % 3));
                let c = base + 600 * MS + u64::from(p % 4) * 50 * MS;
                run.spans.push(Span::new(SpanKind::Gpu, c, c + 40 * MS).job(job).partition(p).worker(0).device(0));
                run.spans.push(Span::new(SpanKind::Ntt, c + 20 * MS, c + 30 * MS).job(job).partition(p).worker(0).device(0));
                let (pa, pb) = (base + prep.0 * MS, base + prep.1 * MS);
                run.spans.push(Span::new(SpanKind::PrepMsm, pa, pb).job(job).partition(p).worker(0).device(0).arg("cpu_ns", pb - pa).arg("threads", 1u64));
                p += 1;
            };
            part(&mut run, 0, 100, (20, 25));
            for _ in 0..3 {
                part(&mut run, 200, 400, (250, 260));
            }
        }
        run.normalize();
        let cal = calibrate(&[("run".into(), run)], &default_base()).unwrap();
        let c = &cal.config.contention;
        assert!(c.prep && c.synth_slope > 0.0, "{c:?} {:?}", cal.report.notes);
        assert!((c.factor(3.0) / c.factor(1.0) - 2.0).abs() < 1e-3, "{c:?}");
        // Every preparation's isolated time is 5 ms ÷ the factor beside one synthesis.
        let want = 5.0 / c.factor(1.0);
        assert!((cal.config.costs.prep_msm.mean_ms() - want).abs() < 1e-3, "{:?} vs {want}", cal.config.costs.prep_msm);
        // Its demand: CPU time over isolated time, at most its pool's one thread.
        assert_eq!(cal.config.cpu.prep_cores, 1.0);
        assert!(note(&cal, "the GPU workers' preparation slows by the same factor").is_some(), "{:?}", cal.report.notes);
    }

    #[test]
    fn the_cpu_capacity_is_recovered_from_runs_simulated_with_it() {
        // "Measured" runs: the reference model on a host that delivers 6 of its 16 cores,
        // syntheses of 4 cores and a fixed 2 s, at pw 1 (each synthesis alone) and pw 8
        // (eight at once ask for 32 cores of 6: each ~5.3x slower). Calibrated on both, the
        // model takes the synthesis cost from the lone ones and the capacity from the pw 8
        // run, by simulating it: 6 again (within a step of the grid), no contention slope.
        let mut truth = default_base();
        truth.machine.cpu_capacity = Some(6.0);
        truth.cpu.synth_cores = 4.0;
        // (The other CPU phases on one core each: the lone syntheses' isolated times are
        // derated at the machine's cores, not at the capacity being fitted, so a phase the
        // capacity slows beside them would stay in their cost. At 2^22 on the H200 the
        // preparation beside a lone synthesis is 15 ms of its 280.)
        truth.cpu.prep_cores = 1.0;
        truth.cpu.finalize_cores = 1.0;
        truth.costs.synth = Dist::Fixed(2000.0);
        truth.contention = Contention::default();
        truth.pipeline.proofs = 6;
        truth.pipeline.in_flight = 6;
        truth.pipeline.partitions = 4;
        // (The syntheses ran on pools of their own, `synthesis_threads` in the meta: what
        // held them back is the host's capacity, not a shared pool's gain.)
        let own_pools = |mut r: Run| {
            r.meta.extra.insert("synthesis_threads".into(), serde_json::json!(4));
            r
        };
        let run_at = |pw: u32| {
            let mut c = truth.clone();
            c.pipeline.pw = pw;
            own_pools(crate::simulate(&c, crate::Options { record: true }).run.expect("a recorded run"))
        };
        let runs = vec![("pw1".to_string(), run_at(1)), ("pw8".to_string(), run_at(8))];
        let cal = calibrate(&runs, &default_base()).unwrap();
        let c = &cal.config;
        assert_eq!(c.cpu.synth_pool_gain, None, "{:?}", cal.report.notes);
        let cap = c.machine.cpu_capacity.unwrap_or_else(|| panic!("no capacity fitted: {:?}", cal.report.notes));
        assert!((cap - 6.0).abs() <= 0.5, "capacity {cap}: {:?}", cal.report.notes);
        assert_eq!(c.contention.synth_slope, 0.0);
        assert!((c.costs.synth.mean_ms() - 2000.0).abs() < 100.0, "{:?}", c.costs.synth);
        assert!(note(&cal, "ran alone").is_some() && note(&cal, "cpu_capacity =").is_some(), "{:?}", cal.report.notes);
        // Its own error on the two runs, simulated at their shapes, kept for the intervals:
        // small, not 0 (the timelines do not give back every cost of the truth exactly:
        // the device work is rebuilt from its spans; 6–7 % on these).
        assert!(c.uncertainty.model_error > 0.0 && c.uncertainty.model_error < 0.1, "{}: {:?}", c.uncertainty.model_error, note(&cal, "model error"));
        // A model whose syntheses are 30 % slow misses the runs by more (by less than 30 %:
        // the reference's 3.7 s of device work per partition binds them in part).
        let mut off = c.clone();
        off.costs.synth = off.costs.synth.scaled(1.3);
        let mut rep = FitReport::default();
        model_error(&runs, &mut off, &mut rep);
        assert!(off.uncertainty.model_error > c.uncertainty.model_error + 0.02, "{} vs {}: {:?}", off.uncertainty.model_error, c.uncertainty.model_error, rep.notes);
        // Runs made with all 96 cores delivering (eight syntheses ask for 32): every capacity
        // from 32 up simulates alike, and the machine's cores are the answer, not the least of
        // them.
        let mut full = truth.clone();
        full.machine.cpu_capacity = None;
        let full_runs: Vec<(String, Run)> = [1u32, 8].iter().map(|&pw| {
            let mut c = full.clone();
            c.pipeline.pw = pw;
            (format!("pw{pw}"), own_pools(crate::simulate(&c, crate::Options { record: true }).run.expect("a recorded run")))
        }).collect();
        let cal_full = calibrate(&full_runs, &default_base()).unwrap();
        assert_eq!(cal_full.config.machine.cpu_capacity, None, "{:?}", cal_full.report.notes);
        // A calibrated base's capacity is not carried into a calibration that does not fit one.
        let mut base = default_base();
        base.machine.cpu_capacity = Some(5.0);
        let cal_b = calibrate(&runs[1..], &base).unwrap();
        assert_eq!(cal_b.config.machine.cpu_capacity, None);
        // Without syntheses alone (the pw 8 run only), a contention slope stands in.
        let cal = calibrate(&runs[1..], &default_base()).unwrap();
        assert_eq!(cal.config.machine.cpu_capacity, default_base().machine.cpu_capacity);
        assert!(note(&cal, "cpu_capacity =").is_none());
    }

    #[test]
    fn the_shared_pools_gain_and_the_prep_slope_are_recovered_from_runs_simulated_with_them() {
        // "Measured" runs: the reference model on all 16 of its cores, but its syntheses on
        // one shared pool that gives n of them at once 1 + 0.2 (n − 1)^b times one alone (b the
        // exponent calibrate assumes, SHARED_POOL_EXPONENT; eight: ~1.64x, each at ~0.2 of its
        // own speed, where the cores would allow ~0.5), and the GPU
        // workers' CPU steps slowed by 1 + 0.5 min(n − 1, 1) beside n syntheses (the
        // saturating form calibrate fits, PREP_SATURATION). Calibrated on the
        // pw 1 and pw 8 runs (no `synthesis_threads` in their meta: the shared pool), the model
        // finds the gain from the pw 8 run's syntheses and the slope from its GPU calls, and
        // keeps the cores' capacity.
        let mut truth = default_base();
        truth.machine.cpu_cores = 16.0;
        truth.machine.cpu_capacity = None;
        truth.cpu.synth_cores = 4.0;
        truth.cpu.prep_cores = 1.0;
        truth.cpu.finalize_cores = 1.0;
        truth.cpu.synth_pool_gain = Some(0.2);
        truth.cpu.synth_pool_exponent = SHARED_POOL_EXPONENT;
        truth.costs.synth = Dist::Fixed(2000.0);
        truth.costs.prep_msm = Dist::Fixed(400.0);
        truth.contention = Contention { prep_slope: 0.5, prep_saturation: Some(PREP_SATURATION), ..Contention::default() };
        truth.pipeline.proofs = 6;
        truth.pipeline.in_flight = 6;
        truth.pipeline.partitions = 4;
        let run_at = |pw: u32| {
            let mut c = truth.clone();
            c.pipeline.pw = pw;
            crate::simulate(&c, crate::Options { record: true }).run.expect("a recorded run")
        };
        // (The pw 8 run first: a run that is not the prover's tells calibrate the proofs in flight
        // by how many overlapped in the first run, all six there.)
        let runs = vec![("pw8".to_string(), run_at(8)), ("pw1".to_string(), run_at(1))];
        let mut base = default_base();
        base.machine.cpu_cores = 16.0;
        // What these runs cannot tell (no busy-cores counter): the phases' core demands, from
        // the base as a campaign's base gives them. A stretched step draws its cores ÷ its
        // factor, so the slope that matches the calls depends on them.
        (base.cpu.synth_cores, base.cpu.prep_cores, base.cpu.finalize_cores) = (truth.cpu.synth_cores, truth.cpu.prep_cores, truth.cpu.finalize_cores);
        let cal = calibrate(&runs, &base).unwrap();
        let c = &cal.config;
        assert_eq!(c.machine.cpu_capacity, None, "{:?}", cal.report.notes);
        let g = c.cpu.synth_pool_gain.unwrap_or_else(|| panic!("no gain fitted: {:?}", cal.report.notes));
        assert!((g - 0.2).abs() <= 0.03, "gain {g}, synthesis {:?}: {:?} {:?}", c.costs.synth, note(&cal, "synth_pool_gain"), note(&cal, "ran alone"));
        let k = c.contention.prep_slope;
        assert!((k - 0.5).abs() <= 0.15, "prep slope {k}: {:?}; prep {:?}, prep_cores {}, notes {:?}", note(&cal, "prep_slope"), c.costs.prep_msm, c.cpu.prep_cores, cal.report.notes);
        assert_eq!(c.contention.prep_saturation, Some(PREP_SATURATION));
        assert!(note(&cal, "cpu.synth_pool_gain =").is_some() && note(&cal, "contention.prep_slope =").is_some(), "{:?}", cal.report.notes);
        assert_eq!(c.cpu.synth_pool_exponent, SHARED_POOL_EXPONENT);
        // The model's miss on each calibration pw, recorded: the runs are its own kind of
        // simulation, so within a few per cent of none.
        let bias: Vec<(u32, f64)> = c.uncertainty.calibration_bias.iter().map(|b| (b.pw, b.ratio)).collect();
        assert_eq!(bias.iter().map(|b| b.0).collect::<Vec<_>>(), [1, 8], "{bias:?}");
        assert!(bias.iter().all(|b| (b.1 - 1.0).abs() < 0.05), "{bias:?}: {:?}", note(&cal, "calibration bias"));
        // Neither is carried from a calibrated base into a calibration that cannot fit them
        // (the pw 8 run alone has no lone syntheses: a contention slope stands in).
        let mut calibrated = base.clone();
        calibrated.cpu.synth_pool_gain = Some(0.5);
        calibrated.cpu.synth_pool_exponent = 0.3;
        calibrated.contention.prep_slope = 2.0;
        calibrated.uncertainty.calibration_bias = vec![crate::config::BiasPoint { pw: 3, ratio: 2.0 }];
        let cal_b = calibrate(&runs[..1], &calibrated).unwrap();
        assert_eq!((cal_b.config.cpu.synth_pool_gain, cal_b.config.cpu.synth_pool_exponent, cal_b.config.contention.prep_slope), (None, 1.0, 0.0), "{:?}", cal_b.report.notes);
        assert_eq!(cal_b.config.uncertainty.calibration_bias.iter().map(|b| b.pw).collect::<Vec<_>>(), [8], "{:?}", cal_b.config.uncertainty.calibration_bias);
    }

    #[test]
    fn the_rss_map_is_fitted_from_the_runs_peaks() {
        use timeline::event::Counter;
        use timeline::event::counters::{RAM_RESERVED_BYTES, RSS_BYTES};
        let run = |reserved: f64, rss: f64| {
            let mut r = Run::default();
            for (name, v) in [(RAM_RESERVED_BYTES, reserved), (RSS_BYTES, rss)] {
                for (t, f) in [(1u64, 0.5), (2, 1.0), (3, 0.25)] {
                    r.counters.push(Counter { name: name.into(), t_ns: t, value: v * f * GIB, device: None });
                }
            }
            r
        };
        // Peaks (2, 1.5) and (8, 6.75) GiB: the line 0.875 x reserved − 0.25.
        let runs = vec![("a".to_string(), run(2.0, 1.5)), ("b".to_string(), run(8.0, 6.75))];
        let (mut c, mut rep) = (default_base(), FitReport::default());
        fit_rss(&runs, &mut c, &mut rep);
        assert_eq!((c.memory.rss_per_reserved, c.memory.rss_offset_gib), (Some(0.875), -0.25), "{:?}", rep.notes);
        assert!((c.memory.rss_of(8.0) - 6.75).abs() < 1e-12 && c.memory.rss_of(0.1) == 0.0);
        // One run (or peaks that do not span 10 %): the ratio.
        let (mut c, mut rep) = (default_base(), FitReport::default());
        fit_rss(&runs[..1], &mut c, &mut rep);
        assert_eq!((c.memory.rss_per_reserved, c.memory.rss_offset_gib), (Some(0.75), 0.0));
        // No counters: nothing changes.
        let (mut c, mut rep) = (default_base(), FitReport::default());
        fit_rss(&[("x".to_string(), Run::default())], &mut c, &mut rep);
        assert_eq!((c.memory.rss_per_reserved, rep.notes.len()), (None, 0));
    }

    #[test]
    fn a_prover_run_keeps_every_proof_in_flight() {
        // paired_run has one proof; two proofs, the second's syntheses after the first's:
        // at most one in flight in the run, yet the engine admits both (it takes every
        // submitted proof).
        let mut run = paired_run(Some(2), false);
        let extra: Vec<Span> = run.spans.iter().map(|s| {
            let mut t = s.clone();
            t.job = Some("proof-0001".into());
            t.start_ns += 2_000_000_000;
            t.end_ns = t.end_ns.map(|e| e + 2_000_000_000);
            t
        }).collect();
        run.spans.extend(extra);
        run.normalize();
        let cal = calibrate(&[("run".into(), run.clone())], &default_base()).unwrap();
        assert_eq!((cal.config.pipeline.proofs, cal.config.pipeline.in_flight), (2, 2), "{:?}", cal.report.notes);
        assert!(note(&cal, "in_flight = 2 (every proof)").is_some(), "{:?}", cal.report.notes);
        // Another producer's run keeps what it shows.
        run.meta.source = "cuzk".into();
        let cal = calibrate(&[("run".into(), run)], &default_base()).unwrap();
        assert_eq!(cal.config.pipeline.in_flight, 1);
    }

    #[test]
    fn a_pce_reservation_trimmed_before_the_first_abc_release_is_resident() {
        use timeline::event::Counter;
        const MS: u64 = 1_000_000;
        // paired_run's reservations, plus the pre-compiled constraints reserved at their
        // estimate (2 GiB) at start and trimmed to their real size (1.5 GiB) by the first
        // synthesis, inside its `pce_build`: at 50 ms, before any GPU call, or at 100 ms, as
        // the first call starts. The counter: 12 GiB resident at start, 20 with the first two
        // syntheses, 19.5 after the trim; the first a/b/c release (3 GiB, at 100 ms + 1 ns)
        // comes with those two syntheses started: resident 19.5 − 2 × 4 = 11.5 GiB (10 + the
        // PCE's 1.5). Taking the trim for that release gave 20 − 8 = 12 GiB and no a/b/c part
        // (0.5 GiB, whose complement of 3.5 GiB is never released).
        for (trim_at, build_end) in [(50 * MS, 60 * MS), (100 * MS, 100 * MS)] {
            let mut run = paired_run(Some(8), true);
            run.spans.push(Span::new(SpanKind::PceBuild, 10 * MS, build_end).job("proof-0000").partition(0).worker(0));
            let mut changes: Vec<(u64, i64)> = vec![(4, 2 * G as i64), (trim_at, -((G / 2) as i64))];
            let mut last = 0i64;
            for c in &run.counters {
                changes.push((c.t_ns, c.value as i64 - last));
                last = c.value as i64;
            }
            changes.sort_by_key(|c| c.0);
            run.counters.clear();
            let mut reserved = 0i64;
            for (t, d) in changes {
                reserved += d;
                run.counters.push(Counter { name: timeline::event::counters::RAM_RESERVED_BYTES.into(), t_ns: t, value: reserved as f64, device: None });
            }
            run.normalize();
            assert_eq!(reservations(&run), Some(Reservations { resident: 11 * G + G / 2, partition: 4 * G, abc: Some(3 * G) }), "trim at {trim_at} ns");
        }
    }

    #[test]
    fn a_vram_budget_in_the_meta_is_the_models() {
        let mut run = paired_run(Some(8), true);
        run.meta.extra.insert("vram_budget_bytes".into(), (16 * G).into());
        let cal = calibrate(&[("run".into(), run)], &default_base()).unwrap();
        assert_eq!(cal.config.memory.vram_budget_gib, Some(16.0));
        assert!(note(&cal, "vram_budget_gib = 16").is_some(), "{:?}", cal.report.notes);
    }

    #[test]
    fn without_pw_or_budget_in_the_meta_calibrate_is_as_before() {
        let cal = calibrate(&[("run".into(), paired_run(None, false))], &default_base()).unwrap();
        assert_eq!(cal.config.pipeline.pw, 2, "pw from the syntheses seen at once");
        assert!(note(&cal, "the meta does not give pw").is_some(), "{:?}", cal.report.notes);
        let base = default_base();
        assert_eq!(cal.config.memory, base.memory, "the base config's memory section");
        assert!(!cal.report.memory_from_run);
        assert!(note(&cal, "no RAM budget in the meta").is_some());
        // A budget without reservations: the budget is taken, the memory figures stay the base's.
        let mut run = paired_run(None, false);
        run.meta.extra.insert(timeline::event::extra::RAM_BUDGET_BYTES.into(), (20 * G).into());
        let cal = calibrate(&[("run".into(), run)], &default_base()).unwrap();
        assert_eq!(cal.config.budget_gib(), Some(20.0));
        assert_eq!(cal.config.memory.baseline_gib, base.memory.baseline_gib);
        assert!(note(&cal, "recorded no reservations").is_some(), "{:?}", cal.report.notes);
    }

    /// A pw = 4 run on a noisy host: n̄ mostly 3.5..4, a few lower at the end, and random
    /// partitions 1.5x slower (as on the H200 host, run 7's calibration run). Least squares
    /// finds a slope over n̄ 3.5..4 that, extrapolated to pw = 8, predicted synthesis 2.8x slower;
    /// the fit must drop it.
    #[test]
    fn contention_fit_drops_a_slope_the_samples_cannot_carry() {
        let mut samples: Vec<(f64, f64)> = Vec::new();
        for i in 0..50 {
            let n = if i >= 46 { 1.5 + 0.5 * (i - 46) as f64 } else { 3.6 + 0.01 * (i % 40) as f64 };
            // Slow partitions cluster where n̄ is highest (by chance, as in the real run).
            let slow = n >= 3.9 || i % 5 == 0;
            samples.push((n, if slow { 3300.0 } else { 2300.0 }));
        }
        let (t0, got, dropped) = fit_contention(&samples);
        assert_eq!(got.synth_slope, 0.0, "{got:?}");
        let why = dropped.expect("the slope is reported as dropped");
        assert!(why.contains("span only"), "{why}");
        let mean = samples.iter().map(|s| s.1).sum::<f64>() / samples.len() as f64;
        assert!((t0 - mean).abs() < 1e-9, "without a slope t0 is the mean: {t0} vs {mean}");
    }
}

/// With [`scale_to`]: the footprints that calibrate took from the run's reservations
/// ([`FitReport::memory_from_run`]) are the measured size's, not the target's; the base
/// config's, which describe the target (`--base`), are put back. The budgets stay the run's
/// (they belong to the machine). Returns the note.
pub fn base_footprints(cfg: &mut Config, base: &Config) -> String {
    let (m, b) = (&mut cfg.memory, &base.memory);
    let was = format!("baseline {} GiB, partition {:?} GiB", m.baseline_gib, m.partition_gib);
    m.baseline_gib = b.baseline_gib;
    m.params_gib = b.params_gib;
    m.pce_gib = b.pce_gib;
    m.partition_gib = b.partition_gib;
    m.abc_gib = b.abc_gib;
    m.early_release = b.early_release;
    format!("memory: the run's reservations ({was}) are of the measured size; the base config's footprints are used at the target size (the budgets stay the run's)")
}

/// How a per-partition cost grows with the constraint count n, for [`scale_to`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Law {
    /// ∝ n: synthesis (witness + sparse products, memory-bound), prep (density bitmaps),
    /// batch additions, uploads, memory footprints.
    Linear,
    /// ∝ n·log n: NTTs.
    NLogN,
    /// ∝ n / log n: Pippenger MSMs (window c ≈ log n: n/c bucket additions per window,
    /// 255/c windows).
    NOverLogN,
    /// Independent of n: proof assembly, allocation, pickup.
    Constant,
}

impl Law {
    /// The factor from `from` to `to` constraints.
    pub fn factor(self, from: u64, to: u64) -> f64 {
        let (a, b) = (from.max(2) as f64, to.max(2) as f64);
        match self {
            Law::Linear => b / a,
            Law::NLogN => b * b.log2() / (a * a.log2()),
            Law::NOverLogN => (b / b.log2()) / (a / a.log2()),
            Law::Constant => 1.0,
        }
    }
}

/// The law of each cost (the `ntt_msm_h` phase mixes the NTTs and the H MSM: see [`scale_to`]).
pub const COST_LAWS: &[(&str, Law)] = &[
    ("synth", Law::Linear),
    ("prep_msm", Law::Linear),
    ("batch_add", Law::Linear),
    ("tail_msm", Law::NOverLogN),
    ("msm_rest", Law::NOverLogN),
    ("b_g2_msm", Law::NOverLogN),
    ("msm_b_g2", Law::NOverLogN),
    ("epilogue", Law::Constant),
    ("alloc", Law::Constant),
    ("pickup", Law::Constant),
];

/// The NTT's share of the `ntt` + `msm_h` spans of the runs (when the prover recorded them
/// apart), for scaling `ntt_msm_h`.
pub fn ntt_share(runs: &[(String, Run)]) -> Option<f64> {
    let (mut ntt, mut h) = (0u64, 0u64);
    for (_, r) in runs {
        for s in &r.spans {
            let d = s.end_ns.map_or(0, |e| e.saturating_sub(s.start_ns));
            match s.kind {
                SpanKind::Ntt => ntt += d,
                SpanKind::MsmH => h += d,
                _ => {}
            }
        }
    }
    (ntt > 0 && h > 0).then(|| ntt as f64 / (ntt + h) as f64)
}

/// Scale a model's per-partition costs and sizes from `from` to `to` constraints per
/// partition: every cost by its [`Law`] ([`COST_LAWS`]); `ntt_msm_h` by
/// share·(n log n) + (1 − share)·(n / log n) with the NTT's measured `share` (n log n alone
/// when unknown: the upper of the two); `upload_gib` linearly; `[circuit] constraints` set to
/// `to`. The memory section is left as the base config gave it (it describes the target
/// machine and size, e.g. `configs/fullscale-h200.toml`; a reservation without an explicit
/// `partition_gib` follows `[circuit]`). Contention unchanged. Distributions keep their shape
/// (a lognormal's sigma). Returns one note per change, for the model's header.
pub fn scale_to(cfg: &mut Config, from: u64, to: u64, share: Option<f64>) -> Vec<String> {
    let mut notes = vec![format!("scaled from {from} to {to} constraints per partition ({:.2}×)", to as f64 / from.max(1) as f64)];
    let c = &mut cfg.costs;
    let mut scale = |name: &str, d: &mut Dist, f: f64, law: &str| {
        if !d.is_zero() {
            let before = d.mean_ms();
            *d = d.scaled(f);
            notes.push(format!("{name}: {before:.1} → {:.1} ms ({law}, ×{f:.3})", d.mean_ms()));
        }
    };
    for (name, law) in COST_LAWS {
        let f = law.factor(from, to);
        let d = match *name {
            "synth" => &mut c.synth,
            "prep_msm" => &mut c.prep_msm,
            "batch_add" => &mut c.batch_add,
            "tail_msm" => &mut c.tail_msm,
            "msm_rest" => &mut c.msm_rest,
            "b_g2_msm" => &mut c.b_g2_msm,
            "msm_b_g2" => &mut c.msm_b_g2,
            "epilogue" => &mut c.epilogue,
            "alloc" => &mut c.alloc,
            _ => &mut c.pickup,
        };
        scale(name, d, f, &format!("{law:?}"));
    }
    let (fn_, fm) = (Law::NLogN.factor(from, to), Law::NOverLogN.factor(from, to));
    let (f, why) = match share {
        Some(s) => (s * fn_ + (1.0 - s) * fm, format!("NTT share {:.2} of ntt + msm_h: n log n for it, n / log n for the H MSM", s)),
        None => (fn_, "n log n (the NTT's law; the H MSM's share unknown)".to_string()),
    };
    scale("ntt_msm_h", &mut c.ntt_msm_h, f, &why);
    let lin = Law::Linear.factor(from, to);
    c.scale_upload(lin);
    let r6 = |x: f64| (x * 1e6).round() / 1e6;
    c.upload_gib = r6(c.upload_gib);
    c.upload_device_gib = c.upload_device_gib.map(r6);
    // The memory section is the base config's: it describes the target size already (a
    // partition's reservation follows [circuit] when it is not given explicitly).
    match &mut cfg.circuit {
        Some(ci) => ci.constraints = to,
        None => cfg.circuit = Some(crate::memory::Circuit::of(to)),
    }
    notes.push(format!("upload ×{lin:.3} (linear); [circuit] constraints = {to}; memory sizes are the base config's (give one that describes {to} constraints)"));
    notes
}
