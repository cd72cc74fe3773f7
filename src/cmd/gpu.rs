//! `proofscope gpu`: the CUDA backend's own checks and timings on a GPU machine.
//!
//! - `gpu info`: what the binary carries (kernels, nvcc) and which devices it sees.
//! - `gpu check`: every kernel against the CPU path on fresh random inputs (exit 1 on any
//!   difference).
//! - `gpu bench --msm 16..26 --ntt 16..26 --msm-g2 16..22`: CUDA-event times (warm-up,
//!   median of `--runs`) against the card's floor and the sppark figures; the G2 MSM also
//!   against blst's CPU G2 MSM timed in the same run.
//! - `gpu upload --gib 4 --chunks 64,256,4096 --load 0,8`: uploads through the page-locked
//!   staging at each chunk size, alone and beside host-memory traffic.
//!
//! The CUDA settings are the defaults of `[cuda]` with the `PROOFSCOPE_*` environment
//! overrides applied (`CudaSettings::with_env_overrides`), as for `prove`; the ones applied
//! are printed. The diagnostics themselves live in `prover::gpu::diag`.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Kernels embedded in this binary and the CUDA devices seen.
    Info,
    /// Every kernel against the CPU path (blstrs, CPU NTT) on fresh random inputs.
    Check {
        /// Seed of the random inputs (default: from the clock, printed).
        #[arg(long)]
        seed: Option<u64>,
        /// Smaller sizes (every case is still covered).
        #[arg(long)]
        quick: bool,
        /// Only the TEST-ONLY setup's checks (fixed-base multiplications, whole setups).
        #[arg(long)]
        setup_only: bool,
        /// Only the lean NTT's checks (`ntt_memory = "lean"`: every transform and the quotient
        /// against the CPU path).
        #[arg(long, conflicts_with = "setup_only")]
        lean_only: bool,
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        device: usize,
        /// Also write the outcomes as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Device times of the G1 and G2 MSMs and the Fr NTT at several sizes.
    Bench {
        /// log2 sizes of the MSM: `16..26` (every size), `16..26:2` (step) or `20,22,24`.
        #[arg(long, default_value = "")]
        msm: String,
        /// log2 sizes of the NTT, same syntax.
        #[arg(long, default_value = "")]
        ntt: String,
        /// NTT rows: `all` (every product, radix, pass plan and bit reversal, then the lean NTT
        /// against the tables) or `lean` (only the configured NTT with its tables against the
        /// lean one, `ntt_memory = "lean"`: the quick way to its cost at 2^27).
        #[arg(long, default_value = "all", value_parser = ["all", "lean"])]
        ntt_rows: String,
        /// log2 sizes of the G2 MSM (every G2 kernel, then blst's CPU G2 MSM as the baseline).
        #[arg(long, default_value = "")]
        msm_g2: String,
        /// log2 sizes of the batch additions (the density split's scalar-one sums): every
        /// kernel at several points per thread, G1, then G2 up to 2^21.
        #[arg(long, default_value = "")]
        batch_add: String,
        /// Timed runs of the CPU G2 baseline per size (0: skip it).
        #[arg(long, default_value_t = 3)]
        cpu_runs: usize,
        /// Timed runs per size after one warm-up (the median is reported).
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Seed of the random inputs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        device: usize,
        /// Also write the rows as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Host-to-device uploads through the engine's page-locked staging at several chunk
    /// sizes, alone and beside threads that stream host memory (the fill's cost apart from
    /// the engine's other work).
    Upload {
        /// GiB uploaded per run (at most 12).
        #[arg(long, default_value_t = 4.0)]
        gib: f64,
        /// Staging chunk sizes, MiB, comma-separated (the engine stages 64).
        #[arg(long, default_value = "64,256,1024,4096", value_delimiter = ',')]
        chunks: Vec<u64>,
        /// Fill modes: `parallel` (all fill threads on each chunk; the engine's staged
        /// upload), `pipelined` (one chunk per fill thread, several at once) and/or
        /// `registered` (no fill: the source's pages locked in place for the copy, as
        /// `cuda.abc_upload = "registered"`; timed once, whatever the chunk sizes).
        #[arg(long, default_value = "parallel,pipelined,registered", value_delimiter = ',', value_parser = ["parallel", "pipelined", "registered"])]
        modes: Vec<String>,
        /// What holds page-locked host memory meanwhile, each in turn: `nothing` and/or `held`
        /// (as many bytes as `--gib`, locked during the rows).
        #[arg(long, default_value = "nothing", value_delimiter = ',', value_parser = ["nothing", "held"])]
        beside: Vec<String>,
        /// Counts of background threads copying host memory meanwhile, comma-separated.
        #[arg(long, default_value = "0,8", value_delimiter = ',')]
        load: Vec<usize>,
        /// Timed runs per row after one warm-up (the median is reported).
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        device: usize,
        /// Also write the rows as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

/// Parses `a..b` (inclusive), `a..b:step` or `a,b,c` into log sizes.
fn parse_sizes(s: &str, what: &str) -> anyhow::Result<Vec<u32>> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let bad = |e: String| anyhow::anyhow!("--{what} {s:?}: {e} (expected e.g. 16..26, 16..26:2 or 20,22,24)");
    let sizes: Vec<u32> = if let Some((a, rest)) = s.split_once("..") {
        let (b, step) = rest.split_once(':').unwrap_or((rest, "1"));
        let a: u32 = a.trim().parse().map_err(|e| bad(format!("{e}")))?;
        let b: u32 = b.trim().parse().map_err(|e| bad(format!("{e}")))?;
        let step: usize = step.trim().parse().map_err(|e| bad(format!("{e}")))?;
        if a > b || step == 0 {
            return Err(bad("empty range".into()));
        }
        (a..=b).step_by(step).collect()
    } else {
        s.split(',').map(|x| x.trim().parse::<u32>().map_err(|e| bad(format!("{x:?}: {e}")))).collect::<Result<_, _>>()?
    };
    if let Some(x) = sizes.iter().find(|&&x| !(1..=28).contains(&x)) {
        return Err(bad(format!("2^{x} is outside 2^1..2^28")));
    }
    Ok(sizes)
}

#[cfg(not(feature = "cuda"))]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _ = (args.action, parse_sizes as fn(&str, &str) -> anyhow::Result<Vec<u32>>, PathBuf::new());
    anyhow::bail!("this proofscope was built without the `cuda` feature (cargo build --features cuda)")
}

#[cfg(feature = "cuda")]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    use prover::cuda_settings::CudaSettings;
    use prover::gpu::diag::{bench, check, check::ProofVariant};
    use prover::gpu::{kernels_built, Gpu, MsmBatch, MsmDefaults, NttConfig, ParamsMode, ShiftChoice};
    let (settings, applied) = CudaSettings::default().with_env_overrides()?;
    let show_overrides = || {
        if !applied.is_empty() {
            println!("environment overrides: {}", applied.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "));
        }
    };
    match args.action {
        Action::Info => {
            match kernels_built() {
                Some(v) => println!("kernels: embedded (sm_90 cubin + compute_90 PTX), built by {v}"),
                None => println!("kernels: none (built without nvcc)"),
            }
            let n = Gpu::device_count()?;
            println!("CUDA devices: {n}");
            for d in 0..n {
                println!("  {}", Gpu::open(d, settings.sched)?.describe());
            }
            Ok(ExitCode::SUCCESS)
        }
        Action::Check { seed, quick, setup_only, lean_only, device, json } => {
            let seed = seed.unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(7));
            let gpu = Gpu::open(device, settings.sched)?;
            println!("gpu check on {}", gpu.describe());
            show_overrides();
            println!("seed {seed}{}", if quick { " (quick)" } else { "" });
            let opt = check::CheckOptions { seed, quick };
            if setup_only || lean_only {
                let outcomes = if lean_only { check::run_lean(&gpu, &settings, opt) } else { check::run_setup(&gpu, opt) };
                print!("{}", check::format_outcomes(&outcomes));
                if let Some(p) = json {
                    super::output::write_atomic(&p, serde_json::to_string_pretty(&outcomes)?.as_bytes())?;
                }
                return Ok(if outcomes.iter().all(|o| o.ok) { ExitCode::SUCCESS } else { ExitCode::from(1) });
            }
            let mut outcomes = check::run_all(&gpu, &settings, opt);
            for log_n in if quick { vec![10] } else { vec![10, 14] } {
                outcomes.push(check::check_full_proof(device, &settings, log_n, seed, &ProofVariant::default()));
            }
            // The MSMs one after the other instead of on lanes (msm_batch = off), the G1
            // queries over tables of precomputed shifted bases (msm_precomp), every query
            // streamed (params = stream), and streamed in chunks of 3000 terms (stream_chunk:
            // every MSM of 2^14 cut in several).
            let log_n = if quick { 10 } else { 14 };
            let d = ProofVariant::default();
            for v in [
                ProofVariant { batch: MsmBatch::Off, ..d },
                ProofVariant { shifts: ShiftChoice::C(13), ..d },
                ProofVariant { mode: ParamsMode::Stream, ..d },
                ProofVariant { mode: ParamsMode::Stream, stream_chunk: Some(if quick { 300 } else { 3000 }), ..d },
            ] {
                outcomes.push(check::check_full_proof(device, &settings, log_n, seed, &v));
            }
            print!("{}", check::format_outcomes(&outcomes));
            if let Some(p) = json {
                super::output::write_atomic(&p, serde_json::to_string_pretty(&outcomes)?.as_bytes())?;
            }
            Ok(if outcomes.iter().all(|o| o.ok) { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Action::Bench { msm, ntt, ntt_rows, msm_g2, batch_add, cpu_runs, runs, seed, device, json } => {
            let msm = parse_sizes(&msm, "msm")?;
            let ntt = parse_sizes(&ntt, "ntt")?;
            let msm_g2 = parse_sizes(&msm_g2, "msm-g2")?;
            let batch_add = parse_sizes(&batch_add, "batch-add")?;
            if msm.is_empty() && ntt.is_empty() && msm_g2.is_empty() && batch_add.is_empty() {
                anyhow::bail!("nothing to time: give --msm, --ntt, --msm-g2 and/or --batch-add sizes");
            }
            let gpu = Gpu::open(device, settings.sched)?;
            let msm_defaults = MsmDefaults::from_settings(&settings)?;
            println!("gpu bench on {}", gpu.describe());
            show_overrides();
            println!("CUDA-event times, data resident on the device, 1 warm-up + median of {runs}; floor at {:.3e} multiply-adds/s", bench::H200_MADS_PER_S);
            println!("{}", bench::header());
            // NVML every 50 ms during the bench: the card's clock and power next to the times.
            let sampler = prover::gpu::nvml::NvmlSampler::start(vec![device as u32], std::time::Duration::from_millis(50), std::time::Instant::now());
            let mut log = |s: &str| println!("{s}");
            let mut rows = bench::bench_ntt(&gpu, NttConfig::of(&settings), &ntt, ntt_rows == "lean", runs, seed, &mut log)?;
            rows.extend(bench::bench_msm(&gpu, &msm, runs, seed, &mut log)?);
            rows.extend(bench::bench_msm_g2(&gpu, &msm_defaults, &msm_g2, runs, cpu_runs, seed, &mut log)?);
            rows.extend(bench::bench_batch_add(&gpu, &batch_add, runs, seed, &mut log)?);
            let nvml_error = sampler.error.lock().ok().and_then(|g| g.clone());
            let samples = sampler.stop();
            match nvml_error {
                Some(e) => println!("\n{e}"),
                None => println!("\nNVML during the bench: {}", summarize_counters(&samples)),
            }
            println!("\nsummary");
            println!("{}", bench::header());
            for r in &rows {
                println!("{}", bench::format_row(r));
            }
            if let Some(p) = json {
                super::output::write_atomic(&p, serde_json::to_string_pretty(&rows)?.as_bytes())?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Action::Upload { gib, chunks, modes, beside, load, runs, device, json } => {
            use prover::gpu::FillMode;
            let modes: Vec<FillMode> = modes
                .iter()
                .map(|m| match m.as_str() {
                    "parallel" => FillMode::Parallel,
                    "pipelined" => FillMode::Pipelined,
                    _ => FillMode::Registered,
                })
                .collect();
            // The source and its read-back are held on the host: twice --gib, plus the staging.
            if !(gib.is_finite() && gib > 0.0 && gib <= 12.0) {
                anyhow::bail!("--gib {gib}: expected a size in (0, 12] GiB (a 2^27 partition's a/b/c are 12)");
            }
            if chunks.is_empty() || chunks.iter().any(|&c| c == 0 || c > 16384) {
                anyhow::bail!("--chunks {chunks:?}: expected sizes in MiB from 1 to 16384, e.g. 64,256");
            }
            if load.iter().any(|&n| n > 64) {
                anyhow::bail!("--load {load:?}: at most 64 threads (each holds 512 MiB)");
            }
            if runs == 0 {
                anyhow::bail!("--runs 0: at least one timed run");
            }
            let gpu = Gpu::open(device, settings.sched)?;
            println!("gpu upload on {}: {gib} GiB a run, 1 warm-up + median of {runs}", gpu.describe());
            show_overrides();
            use prover::gpu::diag::upload::Beside;
            let besides: Vec<Beside> = beside.iter().filter_map(|b| Beside::ALL.into_iter().find(|x| x.name() == b)).collect();
            let rows = prover::gpu::diag::upload::bench_upload_beside(&gpu, gib, &chunks, &modes, &load, runs, &besides, &mut |s| println!("{s}"))?;
            if let Some(p) = json {
                super::output::write_atomic(&p, serde_json::to_string_pretty(&rows)?.as_bytes())?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// "name: min/mean/max" of each counter, for one line of output.
#[cfg(feature = "cuda")]
fn summarize_counters(samples: &[timeline::Counter]) -> String {
    let mut names: Vec<&str> = samples.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return "no samples".into();
    }
    names
        .iter()
        .map(|n| {
            let v: Vec<f64> = samples.iter().filter(|c| c.name == *n).map(|c| c.value).collect();
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let min = v.iter().cloned().fold(f64::INFINITY, f64::min);
            let max = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            format!("{n} {min:.0}/{mean:.0}/{max:.0}")
        })
        .collect::<Vec<_>>()
        .join(", ")
        + " (min/mean/max)"
}

#[cfg(test)]
mod tests {
    use super::parse_sizes;

    #[test]
    fn sizes_parse_ranges_steps_and_lists() {
        assert_eq!(parse_sizes("16..20", "msm").unwrap(), vec![16, 17, 18, 19, 20]);
        assert_eq!(parse_sizes("16..26:4", "msm").unwrap(), vec![16, 20, 24]);
        assert_eq!(parse_sizes("20, 22,24", "ntt").unwrap(), vec![20, 22, 24]);
        assert!(parse_sizes("", "ntt").unwrap().is_empty());
        assert!(parse_sizes("20..16", "msm").is_err());
        assert!(parse_sizes("x", "msm").is_err());
        assert!(parse_sizes("30", "msm").is_err());
    }
}
