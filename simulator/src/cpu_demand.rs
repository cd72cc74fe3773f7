//! How many cores each CPU phase really draws, measured rather than guessed, and what a
//! phase would have cost had it run alone.
//!
//! The CPU pool of the model ([`crate::resources::CpuPool`]) slows every running phase by
//! `cores / Σ demand` once the running phases ask for more cores than the machine has. Two
//! numbers per phase feed it: its core demand and its isolated duration. A measured span
//! shows neither directly: blst's G2 MSM runs on its own thread pool, prep on rayon's, a
//! synthesis on one thread, and each was slowed by whatever else ran beside it.
//!
//! - [`fit`]: the prover samples the process's busy cores (`cpu_busy_cores`: user + system
//!   CPU time ÷ wall time over each sample period). Over the periods when the CPU was not
//!   saturated, busy ≈ baseline + Σ_phase demand × (how many spans of that phase ran, time
//!   averaged over the period): a non-negative least-squares fit gives a first estimate;
//!   then a censored fit over every period (busy = min(cap, Σ …)) raises a demand as far as
//!   the saturated periods require — a phase that mostly runs when the CPU is full (a G2
//!   MSM on every core) would otherwise be judged by its rare, unrepresentative quiet moments.
//! - [`prep_measured`]: where the prover recorded it, the preparation's own CPU time
//!   (`prep_msm`'s `cpu_ns`, summed over the threads of its pool, `threads`) replaces the
//!   fit for that phase: it draws the pool's threads, and alone it would take `cpu_ns ÷
//!   threads`. The fit could not see it (runs 73–74 at 2^27: 2.11 cores fitted against
//!   ~12–28 thread-seconds a partition on a 16-thread pool), and the what-if of a smaller
//!   pool (`prep_threads`) needs exactly that work.
//! - [`derate`]: with those demands, the model's own slowdown `min(1, cores / Σ demand)`
//!   over a span's lifetime, integrated, turns its measured duration into isolated work
//!   (what the simulator consumes), so simulating the calibration run reproduces it.

use timeline::{Run, SpanKind};

use timeline::event::counters::CPU_BUSY_CORES;

/// The CPU phases of the model and the spans that measure them.
pub const PHASES: [(&str, &[SpanKind]); 3] = [
    ("synth", &[SpanKind::Synthesis]),
    ("prep", &[SpanKind::PrepMsm]),
    ("finalize", &[SpanKind::CpuMsmBG2, SpanKind::Finalize]),
];

/// Top-level device-work spans: the host thread that launched them waits (and, with the
/// CUDA driver's default spin-then-yield synchronisation, may burn a core) meanwhile.
const DEVICE_WAIT: &[SpanKind] =
    &[SpanKind::Ntt, SpanKind::MsmH, SpanKind::NttMsmH, SpanKind::MsmRest, SpanKind::MsmL, SpanKind::MsmA, SpanKind::MsmBG1, SpanKind::MsmBG2];

/// Fitted core demands (cores while one span of the phase runs), `None` where the run does
/// not identify it (the phase never ran in an unsaturated period, or too little).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DemandFit {
    pub synth: Option<f64>,
    pub prep: Option<f64>,
    pub finalize: Option<f64>,
    /// Cores a thread waiting for its kernels keeps busy.
    pub device_wait: Option<f64>,
    /// Cores busy with none of the above (writer, samplers, the engine's own threads).
    pub baseline: f64,
    /// Unsaturated sample periods (the first, linear pass) and all of them (the censored fit).
    pub used: usize,
    pub samples: usize,
    /// Coefficient of determination of the censored fit over every period.
    pub r2: f64,
}

/// Time-averaged number of `iv` intervals running during [a, b).
fn overlap(iv: &[(u64, u64)], a: u64, b: u64) -> f64 {
    if b <= a {
        return 0.0;
    }
    let mut t = 0u128;
    for &(s, e) in iv {
        if s < b && e > a {
            t += (e.min(b) - s.max(a)) as u128;
        }
    }
    t as f64 / (b - a) as f64
}

fn intervals(run: &Run, kinds: &[SpanKind]) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = run.spans.iter().filter(|s| kinds.contains(&s.kind)).filter_map(|s| s.end_ns.filter(|&e| e > s.start_ns).map(|e| (s.start_ns, e))).collect();
    v.sort_unstable();
    v
}

/// Solve the normal equations of `rows · x ≈ y` restricted to the columns in `active`
/// (Gaussian elimination with partial pivoting); `None` when singular.
fn least_squares(rows: &[Vec<f64>], y: &[f64], active: &[usize]) -> Option<Vec<f64>> {
    let k = active.len();
    let mut m = vec![vec![0.0; k + 1]; k];
    for (r, &yv) in rows.iter().zip(y) {
        for (i, &ci) in active.iter().enumerate() {
            for (j, &cj) in active.iter().enumerate() {
                m[i][j] += r[ci] * r[cj];
            }
            m[i][k] += r[ci] * yv;
        }
    }
    for c in 0..k {
        let p = (c..k).max_by(|&a, &b| m[a][c].abs().total_cmp(&m[b][c].abs()))?;
        if m[p][c].abs() < 1e-9 {
            return None;
        }
        m.swap(c, p);
        for r in 0..k {
            if r != c {
                let f = m[r][c] / m[c][c];
                for j in c..=k {
                    m[r][j] -= f * m[c][j];
                }
            }
        }
    }
    Some((0..k).map(|i| m[i][k] / m[i][i]).collect())
}

/// Fit the core demands from the run's `cpu_busy_cores` counter; `None` without it.
pub fn fit(run: &Run, cores: f64) -> Option<DemandFit> {
    let mut samples: Vec<(u64, f64)> = run.counters.iter().filter(|c| c.name == CPU_BUSY_CORES && c.value.is_finite()).map(|c| (c.t_ns, c.value)).collect();
    samples.sort_by_key(|s| s.0);
    if samples.len() < 8 {
        return None;
    }
    let ivs: Vec<Vec<(u64, u64)>> = PHASES.iter().map(|(_, k)| intervals(run, k)).chain(std::iter::once(intervals(run, DEVICE_WAIT))).collect();
    // Columns: synth, prep, finalize, device wait, intercept.
    let (mut all_rows, mut all_y) = (Vec::new(), Vec::new());
    for w in samples.windows(2) {
        let ((a, _), (b, busy)) = (w[0], w[1]);
        if b <= a {
            continue;
        }
        let mut r: Vec<f64> = ivs.iter().map(|iv| overlap(iv, a, b)).collect();
        r.push(1.0);
        all_rows.push(r);
        all_y.push(busy);
    }
    // First pass on the unsaturated periods only (a saturated one only bounds the demands
    // from below), then a censored fit on all of them.
    let (rows, y): (Vec<Vec<f64>>, Vec<f64>) = all_rows.iter().cloned().zip(all_y.iter().copied()).filter(|(_, b)| *b < 0.85 * cores).unzip();
    let mut fit = DemandFit { samples: all_rows.len(), used: rows.len(), ..Default::default() };
    if rows.len() < 8 {
        return Some(fit);
    }
    // A column must vary enough to be identified: its phase ran for at least ~2 sample
    // periods' worth of the unsaturated time.
    let mut active: Vec<usize> = (0..5).filter(|&c| c == 4 || rows.iter().map(|r| r[c]).sum::<f64>() >= 2.0).collect();
    // Non-negative least squares by elimination: drop the most negative and refit.
    let x = loop {
        let Some(x) = least_squares(&rows, &y, &active) else { return Some(fit) };
        match x.iter().enumerate().filter(|(_, v)| **v < 0.0).min_by(|a, b| a.1.total_cmp(b.1)) {
            Some((i, _)) if active.len() > 1 => {
                active.remove(i);
            }
            _ => break x,
        }
    };
    let mut coef = [None; 5];
    for (i, &c) in active.iter().enumerate() {
        coef[c] = Some(x[i].max(0.0));
    }
    // Censored refinement over every period: busy = min(cap, Σ demand × running), with cap
    // the busiest the process ever got (sampling jitter can exceed the core count a bit).
    // Coordinate descent from the unsaturated estimate: a demand only grows as far as the
    // saturated periods need it to (their lower bound), and a phase seen only in saturated
    // periods gets identified that way.
    let cap = {
        let mut v = all_y.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        v[((v.len() - 1) as f64 * 0.99).round() as usize].max(0.85 * cores)
    };
    for c in 0..4 {
        if coef[c].is_none() && all_rows.iter().map(|r| r[c]).sum::<f64>() >= 2.0 {
            coef[c] = Some(0.0);
        }
    }
    let sse = |coef: &[Option<f64>; 5]| -> f64 {
        all_rows.iter().zip(&all_y).map(|(r, v)| (v - (0..5).map(|c| coef[c].unwrap_or(0.0) * r[c]).sum::<f64>().min(cap)).powi(2)).sum()
    };
    let mut best = sse(&coef);
    for _sweep in 0..6 {
        for c in 0..5 {
            let Some(cur) = coef[c] else { continue };
            let mut step = cores / 8.0;
            let mut x = cur;
            while step > 0.005 {
                let mut moved = false;
                for cand in [x + step, x - step] {
                    if !(0.0..=cores).contains(&cand) {
                        continue;
                    }
                    let mut t = coef;
                    t[c] = Some(cand);
                    let e = sse(&t);
                    if e < best - 1e-12 {
                        best = e;
                        x = cand;
                        coef = t;
                        moved = true;
                        break;
                    }
                }
                if !moved {
                    step /= 2.0;
                }
            }
        }
    }
    let my = all_y.iter().sum::<f64>() / all_y.len() as f64;
    let ss_tot: f64 = all_y.iter().map(|v| (v - my).powi(2)).sum();
    fit.r2 = if ss_tot > 0.0 { 1.0 - best / ss_tot } else { 0.0 };
    let clamp = |v: Option<f64>| v.map(|d| d.clamp(0.05, cores));
    fit.synth = clamp(coef[0]);
    fit.prep = clamp(coef[1]);
    fit.finalize = clamp(coef[2]);
    fit.device_wait = coef[3];
    fit.baseline = coef[4].unwrap_or(0.0);
    Some(fit)
}

/// What the CPU pool shares: per phase (in [`PHASES`] order) the cores and GB/s one span
/// draws, and the machine's cores and GB/s.
#[derive(Clone, Copy, Debug)]
pub struct Sharing {
    pub cores: [f64; 3],
    pub bw: [f64; 3],
    pub machine_cores: f64,
    pub machine_bw: f64,
}

/// For every span of `kinds` in `run`: its index in `run.spans` and its isolated duration
/// in ms, ∫ rate dt over its lifetime with the pool's rate
/// `1 / max(1, Σ cores / machine cores, Σ GB/s / machine GB/s)` of the CPU phase spans
/// running at t (as [`crate::resources::CpuPool`] computes it).
pub fn derate(run: &Run, kinds: &[SpanKind], sh: Sharing) -> Vec<(usize, f64)> {
    // Piecewise-constant total demand from the start/end events of every CPU phase span.
    let mut ev: Vec<(u64, f64, f64)> = Vec::new();
    for (i, (_, ks)) in PHASES.iter().enumerate() {
        for (s, e) in intervals(run, ks) {
            ev.push((s, sh.cores[i], sh.bw[i]));
            ev.push((e, -sh.cores[i], -sh.bw[i]));
        }
    }
    ev.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    // Breakpoints t_j and the rate integral R(t_j) = ∫_0^{t_j} rate.
    let (mut ts, mut integral, mut rates) = (vec![0u64], vec![0.0f64], Vec::new());
    let (mut d, mut bw) = (0.0f64, 0.0f64);
    for (t, delta, dbw) in ev {
        let last = *ts.last().unwrap_or(&0);
        if t > last {
            let over = (d / sh.machine_cores).max(bw / sh.machine_bw).max(1.0);
            rates.push(1.0 / over);
            let prev = *integral.last().unwrap_or(&0.0);
            integral.push(prev + (t - last) as f64 / over);
            ts.push(t);
        }
        d = (d + delta).max(0.0);
        bw = (bw + dbw).max(0.0);
    }
    rates.push(1.0);
    let r_at = |t: u64| -> f64 {
        // Last breakpoint <= t.
        let j = ts.partition_point(|&x| x <= t).saturating_sub(1);
        integral[j] + rates[j] * (t - ts[j]) as f64
    };
    run.spans
        .iter()
        .enumerate()
        .filter(|(_, s)| kinds.contains(&s.kind))
        .filter_map(|(i, s)| {
            let e = s.end_ns?;
            Some((i, (r_at(e) - r_at(s.start_ns)).max(0.0) / 1e6))
        })
        .collect()
}

/// The preparation as the prover measured it ([`prep_measured`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PrepMeasured {
    /// Cores a preparation draws: the threads of its pool (median over the spans).
    pub cores: f64,
    /// Per `prep_msm` span (index into the run's spans): its isolated duration, ms
    /// (`cpu_ns ÷ threads`).
    pub isolated_ms: Vec<(usize, f64)>,
    /// Mean CPU time of a preparation, thread-seconds.
    pub mean_cpu_s: f64,
}

/// The preparation's demand and isolated durations from the `cpu_ns` and `threads` of its
/// spans; `None` when no finished `prep_msm` span carries both (older runs, other producers).
pub fn prep_measured(run: &Run) -> Option<PrepMeasured> {
    use timeline::event::arg;
    let mut threads = Vec::new();
    let mut isolated_ms = Vec::new();
    let mut cpu_s = 0.0;
    for (i, s) in run.spans.iter().enumerate() {
        if s.kind != SpanKind::PrepMsm || s.end_ns.is_none() {
            continue;
        }
        let num = |k: &str| s.args.get(k).and_then(|v| v.as_f64()).filter(|x| x.is_finite() && *x > 0.0);
        let (Some(cpu), Some(t)) = (num(arg::CPU_NS), num(arg::THREADS)) else { continue };
        threads.push(t);
        isolated_ms.push((i, cpu / t / 1e6));
        cpu_s += cpu / 1e9;
    }
    if threads.is_empty() {
        return None;
    }
    let n = threads.len() as f64;
    threads.sort_by(f64::total_cmp);
    Some(PrepMeasured { cores: threads[threads.len() / 2], isolated_ms, mean_cpu_s: cpu_s / n })
}

#[cfg(test)]
mod tests {
    use super::*;
    use timeline::{Counter, RunMeta, Span};

    fn span(kind: SpanKind, a_ms: u64, b_ms: u64, p: u32) -> Span {
        Span::new(kind, a_ms * 1_000_000, b_ms * 1_000_000).job("j").partition(p)
    }

    /// A run whose busy-cores counter is exactly 0.5 + 1·synth + 12·finalize + 4·prep.
    fn synthetic() -> Run {
        let mut run = Run::new(RunMeta::new("test"));
        // Syntheses of 800 ms, staggered; G2 MSMs of 700 ms; preps of 100 ms.
        for p in 0..12u32 {
            let s = p as u64 * 450;
            run.spans.push(span(SpanKind::Synthesis, s, s + 800, p));
            run.spans.push(span(SpanKind::PrepMsm, s + 800, s + 900, p));
            if p % 2 == 0 {
                run.spans.push(span(SpanKind::CpuMsmBG2, s + 900, s + 1600, p));
            }
        }
        let busy = |run: &Run, a: u64, b: u64| -> f64 {
            let o = |k: &[SpanKind]| overlap(&intervals(run, k), a, b);
            0.5 + o(&[SpanKind::Synthesis]) + 4.0 * o(&[SpanKind::PrepMsm]) + 12.0 * o(&[SpanKind::CpuMsmBG2, SpanKind::Finalize])
        };
        let mut t = 0u64;
        while t < 7_000_000_000 {
            let v = busy(&run, t, t + 50_000_000);
            run.counters.push(Counter { name: CPU_BUSY_CORES.into(), t_ns: t + 50_000_000, value: v, device: None });
            t += 50_000_000;
        }
        run
    }

    #[test]
    fn fit_recovers_the_demands_of_an_exact_counter() {
        let run = synthetic();
        let f = fit(&run, 64.0).expect("counter present");
        assert!(f.used > 100, "{f:?}");
        assert!((f.synth.unwrap() - 1.0).abs() < 0.05, "{f:?}");
        assert!((f.prep.unwrap() - 4.0).abs() < 0.1, "{f:?}");
        assert!((f.finalize.unwrap() - 12.0).abs() < 0.1, "{f:?}");
        assert!((f.baseline - 0.5).abs() < 0.05, "{f:?}");
        assert!(f.r2 > 0.99, "{f:?}");
    }

    #[test]
    fn saturated_periods_bound_the_demand_and_no_counter_means_no_fit() {
        // On 8 cores the counter saturates whenever a G2 MSM runs: its demand is only known
        // from below (8 minus what ran beside it), and the censored fit must reach that
        // bound instead of judging the phase by unsaturated periods alone.
        let mut run = synthetic();
        for c in run.counters.iter_mut() {
            c.value = c.value.min(8.0);
        }
        let f = fit(&run, 8.0).unwrap();
        assert!(f.used < f.samples, "{f:?}");
        let d = f.finalize.expect("identified through the censored fit");
        assert!((5.5..=8.0).contains(&d), "{f:?}");
        assert!((f.synth.unwrap() - 1.0).abs() < 0.15, "{f:?}");
        let mut bare = run.clone();
        bare.counters.clear();
        assert!(fit(&bare, 8.0).is_none());
    }

    #[test]
    fn the_preparation_measured_by_the_prover_gives_its_pool_and_its_work() {
        let mut run = Run::new(RunMeta::new("test"));
        // Two preparations on a pool of 16 threads: 24 and 8 thread-seconds of CPU time, in
        // whatever wall time; a third without the arguments (an older prover) is left out.
        run.spans.push(span(SpanKind::PrepMsm, 0, 5_000, 0).arg("cpu_ns", 24_000_000_000u64).arg("threads", 16u64));
        run.spans.push(span(SpanKind::PrepMsm, 6_000, 7_000, 1).arg("cpu_ns", 8_000_000_000u64).arg("threads", 16u64));
        run.spans.push(span(SpanKind::PrepMsm, 8_000, 9_000, 2));
        let m = prep_measured(&run).unwrap();
        assert_eq!(m.cores, 16.0);
        // Alone on its 16 threads: 24 / 16 = 1.5 s and 8 / 16 = 0.5 s.
        assert_eq!(m.isolated_ms, vec![(0, 1500.0), (1, 500.0)]);
        assert_eq!(m.mean_cpu_s, 16.0);
        run.spans.retain(|s| s.partition == Some(2));
        assert_eq!(prep_measured(&run), None);
    }

    #[test]
    fn derate_divides_out_the_oversubscription() {
        // Two 1-core syntheses and one 12-core G2 MSM on 8 cores: demand 14 while all three
        // run (rate 8/14), 12 once the syntheses end at 400 ms (rate 8/12).
        let mut run = Run::new(RunMeta::new("test"));
        run.spans.push(span(SpanKind::Synthesis, 0, 400, 0));
        run.spans.push(span(SpanKind::Synthesis, 0, 400, 1));
        run.spans.push(span(SpanKind::CpuMsmBG2, 0, 1000, 2));
        let sh = |cores: f64| Sharing { cores: [1.0, 4.0, 12.0], bw: [0.0; 3], machine_cores: cores, machine_bw: 100.0 };
        let w = derate(&run, &[SpanKind::CpuMsmBG2, SpanKind::Synthesis], sh(8.0));
        let g2 = w.iter().find(|x| x.0 == 2).unwrap().1;
        let expect = 400.0 * 8.0 / 14.0 + 600.0 * 8.0 / 12.0;
        assert!((g2 - expect).abs() < 1e-6, "{g2} vs {expect}");
        let s = w.iter().find(|x| x.0 == 0).unwrap().1;
        assert!((s - 400.0 * 8.0 / 14.0).abs() < 1e-6, "{s}");
        // Nothing oversubscribed: durations unchanged.
        let w = derate(&run, &[SpanKind::CpuMsmBG2], sh(64.0));
        assert!((w[0].1 - 1000.0).abs() < 1e-6);
        // Bandwidth binds when it is the scarcer resource.
        let bw = Sharing { cores: [1.0; 3], bw: [0.0, 0.0, 50.0], machine_cores: 64.0, machine_bw: 25.0 };
        let w = derate(&run, &[SpanKind::CpuMsmBG2], bw);
        assert!((w[0].1 - 500.0).abs() < 1e-6, "{}", w[0].1);
    }
}
