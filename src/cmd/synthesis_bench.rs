//! `proofscope circuit --constraints N --synthesis-bench [--threads T] [--concurrent K]`: one
//! partition's synthesis on the circuit path against the pre-compiled path (PCE), on this
//! machine, without a GPU or a parameter file. K syntheses run at once (each circuit-path
//! synthesis on one thread, each PCE synthesis with its own pool of T threads for the
//! products), R rounds; medians reported. Also the PCE's size (bytes/constraint), its
//! extraction time (and with `--pce-cache FILE` its write and reload times), the witness in
//! pieces on the synthesis's pool (as the engine makes it) against the same witness on one
//! thread (K at once, rounds of their own), a STREAM-like
//! probe of the memory bandwidth with K × T threads, the products' floor (the bytes they
//! must move ÷ that bandwidth) and measured ÷ floor. Both paths' assignments are compared
//! once (a, b, c) before timing. The products are also timed alone into vectors reused from
//! round to round: the fresh vectors a partition gets cost page faults and the kernel's zeroing
//! on top of the products' own traffic.

use std::path::PathBuf;
use std::sync::Barrier;
use std::time::Instant;

use anyhow::{bail, Context};
use prover::circuit::BenchCircuit;
use prover::pce::{self, bandwidth, PceRun};
use prover::synthesis::{synthesize_with_capacity, SizeHint};
use serde::Serialize;

/// The knobs of the bench (flags of `proofscope circuit`).
#[derive(Clone, Debug)]
pub struct Options {
    pub threads: usize,
    pub concurrent: usize,
    pub reps: usize,
    pub chunk_rows: usize,
    pub probe_mib: usize,
    pub pce_cache: Option<PathBuf>,
    pub skip_circuit: bool,
}

#[derive(Serialize)]
struct Report {
    circuit: String,
    constraints: u64,
    threads_per_synthesis: usize,
    concurrent: usize,
    reps: usize,
    chunk_rows: usize,
    pce: PceReport,
    bandwidth: bandwidth::Bandwidth,
    circuit_path: Option<PathTimes>,
    pce_path: PathTimes,
    /// Median circuit-path synthesis ÷ median PCE synthesis (each at the same concurrency).
    speedup: Option<f64>,
    /// Syntheses per second, all K together (K ÷ the median round's wall time).
    circuit_per_s: Option<f64>,
    pce_per_s: f64,
    /// The products' floor: K × their bytes ÷ the probe's triad rate (all K run at once).
    products_floor_s: f64,
    /// Median products time ÷ the floor.
    products_vs_floor: f64,
    /// Median products time into vectors reused from the previous round (pages mapped).
    products_reused_s: f64,
    /// That ÷ the floor.
    products_reused_vs_floor: f64,
    /// The same with streaming stores (`Stores::Streamed`): a, b and c bypass the cache.
    products_streamed_s: f64,
    /// That ÷ the floor.
    products_streamed_vs_floor: f64,
    /// The same buffered path with plain stores (`Stores::Buffered`): the buffer's cost apart
    /// from the streaming stores.
    products_buffered_s: f64,
    /// Median whole PCE synthesis (witness + products) ÷ the products' floor.
    synthesis_vs_floor: f64,
    /// Median sequential witness ÷ median witness in pieces (same K, same machine, same run).
    witness_speedup: f64,
}

#[derive(Serialize)]
struct PceReport {
    extract_s: f64,
    /// Pieces the extraction ran in parallel on the global rayon pool (0: none).
    extract_pieces: usize,
    size: pce::PceSize,
    traffic_bytes: u64,
    shape_hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache: Option<CacheReport>,
}

#[derive(Serialize)]
struct CacheReport {
    path: String,
    file_bytes: u64,
    write_s: f64,
    load_s: f64,
}

#[derive(Serialize, Default)]
struct PathTimes {
    /// Median seconds of one synthesis.
    median_s: f64,
    /// Every synthesis's seconds, in order.
    all_s: Vec<f64>,
    /// Median wall seconds of a round of K concurrent syntheses.
    round_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    witness_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    products_s: Option<f64>,
    /// Median witness generated on one thread (`pce::witness::generate`), K at once, in
    /// rounds of their own beside the PCE path's (whose witness is in pieces on the pool).
    #[serde(skip_serializing_if = "Option::is_none")]
    witness_sequential_s: Option<f64>,
    /// Pieces the PCE path's witness ran in (0: the circuit has none, one thread).
    #[serde(skip_serializing_if = "Option::is_none")]
    witness_pieces: Option<usize>,
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => 0.5 * (s[n / 2 - 1] + s[n / 2]),
    }
}

/// Run K copies of `f` at once (started together), `reps` rounds; per-synthesis times and
/// round wall times.
fn rounds<T: Send>(k: usize, reps: usize, f: impl Fn(usize, usize) -> T + Sync) -> (Vec<T>, Vec<f64>) {
    let mut out = Vec::new();
    let mut walls = Vec::new();
    for r in 0..reps {
        let barrier = Barrier::new(k);
        let t0 = Instant::now();
        let got: Vec<T> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..k)
                .map(|i| {
                    let (f, barrier) = (&f, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        f(r, i)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().expect("a synthesis panicked")).collect()
        });
        walls.push(t0.elapsed().as_secs_f64());
        out.extend(got);
    }
    (out, walls)
}

pub fn run(circuit: &BenchCircuit, constraints: u64, o: &Options, json: bool) -> anyhow::Result<()> {
    if o.concurrent == 0 || o.reps == 0 {
        bail!("--concurrent and --reps must be at least 1");
    }
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let threads = if o.threads == 0 { (cores / o.concurrent).max(1) } else { o.threads };
    let id = circuit.id();
    let say = |m: String| {
        if !json {
            eprintln!("{m}");
        }
    };
    // The PCE: extracted (timed), and with --pce-cache written and read back (timed).
    say(format!("{id}: extracting the pre-compiled constraints …"));
    let t = Instant::now();
    let (p, extract_pieces) = pce::extract_pieces(circuit.clone(), circuit.constraints() as usize).context("extracting the constraints")?;
    let extract_s = t.elapsed().as_secs_f64();
    let cache = match &o.pce_cache {
        Some(path) => {
            let key = pce::PceKey::of(&p, &id);
            let t = Instant::now();
            let bytes = pce::cache::write(&p, &key, path)?;
            let write_s = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let back = match pce::cache::read(path, &key)? {
                pce::cache::Lookup::Hit(back) => back,
                other => bail!("{}: the cache just written did not read back ({other:?})", path.display()),
            };
            let load_s = t.elapsed().as_secs_f64();
            if back != p {
                bail!("{}: the cache read back differs from what was written", path.display());
            }
            Some(CacheReport { path: path.display().to_string(), file_bytes: bytes, write_s, load_s })
        }
        None => None,
    };
    let size = p.size();
    say(format!("  {:.2} s ({extract_pieces} pieces in parallel); {:.1} B/constraint ({} MiB of matrices)", extract_s, size.bytes_per_constraint, size.matrix_bytes >> 20));
    // The circuit path's vectors sized as the engine sizes them (from the shape).
    let hint = SizeHint { constraints: p.num_constraints(), inputs: p.num_inputs(), aux: p.num_aux() };
    let pools: Vec<rayon::ThreadPool> = (0..o.concurrent).map(|_| rayon::ThreadPoolBuilder::new().num_threads(threads).build()).collect::<Result<_, _>>()?;
    let seed_of = |r: usize, i: usize| 1 + (r * o.concurrent + i) as u64;
    let family = circuit_family(circuit);
    // Both paths agree.
    {
        let want = synthesize_with_capacity(family.circuit(constraints, 1), hint)?;
        let got = pce::synthesize_pce(family.circuit(constraints, 1), &p, PceRun { pool: Some(&pools[0]), chunk_rows: o.chunk_rows })?;
        if got.a != want.a || got.b != want.b || got.c != want.c || got.aux_assignment != want.aux_assignment {
            bail!("the pre-compiled path's assignment differs from the circuit path's");
        }
    }
    say(format!("  probing the memory bandwidth with {} threads …", threads * o.concurrent));
    let bw = bandwidth::probe(threads * o.concurrent, o.probe_mib << 20, 3)?;
    say(format!("  copy {:.1} GB/s, triad {:.1} GB/s", bw.copy_gbs, bw.triad_gbs));
    // The circuit path: K at once, one thread each.
    let circuit_path = if o.skip_circuit {
        None
    } else {
        say(format!("  circuit path: {} round(s) of {} concurrent …", o.reps, o.concurrent));
        let (times, walls) = rounds(o.concurrent, o.reps, |r, i| {
            let c = family.circuit(constraints, seed_of(r, i));
            let t = Instant::now();
            let a = synthesize_with_capacity(c, hint).expect("satisfied");
            let s = t.elapsed().as_secs_f64();
            drop(a);
            s
        });
        Some(PathTimes { median_s: median(&times), all_s: times, round_s: median(&walls), ..Default::default() })
    };
    // The PCE path: K at once, T threads each for the products.
    say(format!("  pce path: {} round(s) of {} concurrent × {threads} threads …", o.reps, o.concurrent));
    let (times, walls) = rounds(o.concurrent, o.reps, |r, i| {
        let c = family.circuit(constraints, seed_of(r, i));
        let t = Instant::now();
        // As the engine does: the witness in pieces on this synthesis's pool.
        let (w, pieces) = pce::pieces::generate_parallel(c, p.num_inputs(), p.num_aux(), Some(&pools[i])).expect("witness");
        let tw = t.elapsed().as_secs_f64();
        let a = pce::assemble(w, &p, PceRun { pool: Some(&pools[i]), chunk_rows: o.chunk_rows }).expect("satisfied");
        let total = t.elapsed().as_secs_f64();
        drop(a);
        (total, tw, total - tw, pieces)
    });
    // The baseline of the witness in pieces: the same witnesses on one thread each, K at once.
    say(format!("  witness on one thread: {} round(s) of {} concurrent …", o.reps, o.concurrent));
    let (seq, _) = rounds(o.concurrent, o.reps, |r, i| {
        let c = family.circuit(constraints, seed_of(r, i));
        let t = Instant::now();
        let w = pce::witness::generate(c, p.num_inputs(), p.num_aux()).expect("witness");
        let s = t.elapsed().as_secs_f64();
        drop(w);
        s
    });
    let witness_sequential = median(&seq);
    // The products alone, K at once, each into the vectors of its previous round (a warm-up
    // round first): what they cost once a, b and c's pages are mapped. The engine's vectors
    // are fresh each partition (freed after their upload), so the PCE path above pays the
    // kernel's page faults and zeroing besides. Timed three times: plain stores, streaming
    // stores (`Stores::Streamed`: a, b and c written past the cache, as the floor counts them),
    // and the streamed path's 32-row buffer with plain stores (`Stores::Buffered`).
    let columns: Vec<_> = (0..o.concurrent)
        .map(|i| pce::witness::generate(family.circuit(constraints, seed_of(0, i)), p.num_inputs(), p.num_aux()).expect("witness").into_columns())
        .collect();
    let outs: Vec<std::sync::Mutex<Option<pce::Products>>> = (0..o.concurrent).map(|_| std::sync::Mutex::new(Some(pce::Products::with_capacity(p.num_constraints())))).collect();
    let reused_with = |stores: pce::eval::Stores| {
        say(format!("  products into reused vectors ({stores:?} stores): {} round(s) of {} concurrent …", o.reps, o.concurrent));
        let (times, _) = rounds(o.concurrent, o.reps + 1, |_, i| {
            let out = outs[i].lock().expect("one thread per slot").take().expect("returned every round");
            let t = Instant::now();
            let got = pools[i].install(|| pce::eval::products_into_with(&p, &columns[i], o.chunk_rows, stores, out));
            let s = t.elapsed().as_secs_f64();
            assert!(got.first_unsatisfied.is_none(), "the products of a generated witness are satisfied");
            *outs[i].lock().expect("one thread per slot") = Some(got);
            s
        });
        median(&times[o.concurrent..])
    };
    let reused = reused_with(pce::eval::Stores::Cached);
    let streamed = reused_with(pce::eval::Stores::Streamed);
    let buffered = reused_with(pce::eval::Stores::Buffered);
    drop(outs);
    drop(columns);
    let all: Vec<f64> = times.iter().map(|t| t.0).collect();
    let pce_path = PathTimes {
        median_s: median(&all),
        all_s: all,
        round_s: median(&walls),
        witness_s: Some(median(&times.iter().map(|t| t.1).collect::<Vec<_>>())),
        products_s: Some(median(&times.iter().map(|t| t.2).collect::<Vec<_>>())),
        witness_sequential_s: Some(witness_sequential),
        witness_pieces: times.first().map(|t| t.3),
    };
    let floor = bw.floor_s(p.traffic_bytes() * o.concurrent as u64);
    let products = pce_path.products_s.unwrap_or(f64::NAN);
    let report = Report {
        circuit: id,
        constraints,
        threads_per_synthesis: threads,
        concurrent: o.concurrent,
        reps: o.reps,
        chunk_rows: o.chunk_rows,
        pce: PceReport { extract_s, extract_pieces, size, traffic_bytes: p.traffic_bytes(), shape_hash: p.shape_hash_hex(), cache },
        bandwidth: bw,
        speedup: circuit_path.as_ref().map(|c| c.median_s / pce_path.median_s),
        circuit_per_s: circuit_path.as_ref().map(|c| o.concurrent as f64 / c.round_s),
        pce_per_s: o.concurrent as f64 / pce_path.round_s,
        products_floor_s: floor,
        products_vs_floor: products / floor,
        products_reused_s: reused,
        products_reused_vs_floor: reused / floor,
        products_streamed_s: streamed,
        products_streamed_vs_floor: streamed / floor,
        products_buffered_s: buffered,
        synthesis_vs_floor: pce_path.median_s / floor,
        witness_speedup: witness_sequential / pce_path.witness_s.unwrap_or(f64::NAN),
        circuit_path,
        pce_path,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    let r = &report;
    println!("circuit        {} ({} constraints), {} concurrent × {} threads, median of {} round(s)", r.circuit, r.constraints, r.concurrent, r.threads_per_synthesis, r.reps);
    println!(
        "pce            {:.1} B/constraint ({:.1} MiB; nnz A/B/C {}/{}/{}, tables {}/{}/{}, index bytes {}/{}/{}), extracted in {:.2} s",
        r.pce.size.bytes_per_constraint,
        r.pce.size.matrix_bytes as f64 / (1 << 20) as f64,
        r.pce.size.nnz[0],
        r.pce.size.nnz[1],
        r.pce.size.nnz[2],
        r.pce.size.table[0],
        r.pce.size.table[1],
        r.pce.size.table[2],
        r.pce.size.index_bytes[0],
        r.pce.size.index_bytes[1],
        r.pce.size.index_bytes[2],
        r.pce.extract_s
    );
    if let Some(c) = &r.pce.cache {
        println!("pce cache      {} ({:.1} MiB): written in {:.2} s, read back in {:.2} s", c.path, c.file_bytes as f64 / (1 << 20) as f64, c.write_s, c.load_s);
    }
    println!("bandwidth      {} threads: copy {:.1} GB/s, triad {:.1} GB/s", r.bandwidth.threads, r.bandwidth.copy_gbs, r.bandwidth.triad_gbs);
    if let Some(c) = &r.circuit_path {
        println!("circuit path   {:.3} s per synthesis ({:.2} syntheses/s)", c.median_s, r.circuit_per_s.unwrap_or(f64::NAN));
    }
    println!(
        "pce path       {:.3} s per synthesis = witness {:.3} s + products {:.3} s ({:.2} syntheses/s)",
        r.pce_path.median_s,
        r.pce_path.witness_s.unwrap_or(f64::NAN),
        products,
        r.pce_per_s
    );
    println!(
        "witness        {:.3} s on one thread, {:.3} s in {} pieces on {} threads: {:.2}×",
        r.pce_path.witness_sequential_s.unwrap_or(f64::NAN),
        r.pce_path.witness_s.unwrap_or(f64::NAN),
        r.pce_path.witness_pieces.unwrap_or(0),
        r.threads_per_synthesis,
        r.witness_speedup
    );
    if let Some(s) = r.speedup {
        println!("speedup        {s:.2}× (circuit ÷ pce, per synthesis)");
    }
    println!(
        "floor          products {:.3} s ({:.0} MiB × {} ÷ triad): measured ÷ floor = {:.2} (products), {:.2} (whole synthesis)",
        r.products_floor_s,
        r.pce.traffic_bytes as f64 / (1 << 20) as f64,
        r.concurrent,
        r.products_vs_floor,
        r.synthesis_vs_floor
    );
    println!(
        "reused         products {:.3} s into the vectors of an earlier round (no page faults, no zeroing) = {:.2} × floor",
        r.products_reused_s, r.products_reused_vs_floor
    );
    println!("streamed       products {:.3} s into reused vectors with streaming stores (past the cache) = {:.2} × floor", r.products_streamed_s, r.products_streamed_vs_floor);
    println!("buffered       products {:.3} s the same 32-row buffer with plain stores = {:.2} × floor", r.products_buffered_s, r.products_buffered_s / r.products_floor_s);
    Ok(())
}

fn circuit_family(c: &BenchCircuit) -> prover::circuit::Family {
    match c {
        BenchCircuit::PorepLike(_) => prover::circuit::Family::PorepLike,
        BenchCircuit::Mix16(_) => prover::circuit::Family::Mix16,
    }
}
