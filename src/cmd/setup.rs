//! `proofscope setup --constraints N [--circuit porep-like|mix16] -o params.bin`: TEST-ONLY
//! parameters for the benchmark circuit of that family and size, from a seeded (hence
//! insecure) trusted setup.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use prover::circuit::Family;

#[derive(clap::Args)]
pub struct Args {
    /// Constraints of the circuit, 2^8 ..= 2^27.
    #[arg(long, value_parser = timeline::bytes::parse_count)]
    pub constraints: u64,
    /// Circuit family: porep-like (half SHA-256 bits, half full-width arithmetic) or mix16
    /// (1/16 full-width witness values, the rest bits).
    #[arg(long, default_value = "porep-like", value_parser = Family::parse)]
    pub circuit: Family,
    /// Seed of the toxic waste (TEST-ONLY: whoever knows it can forge proofs).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The parameter file to write (what `prove --params` reads).
    #[arg(long, default_value = "params.bin")]
    pub params: PathBuf,
    /// Where the fixed-base multiplications run: cpu (all cores) or gpu (GPU 0, cuda
    /// builds; ~100x faster at 2^24 and up). The file is the same byte for byte.
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "gpu"])]
    pub on: String,
    /// Write the query points compressed (48-byte G1, 96-byte G2): half the disk (~22 GiB
    /// at 2^27 instead of ~44) for a square root per point when the file is loaded.
    #[arg(long)]
    pub compressed: bool,
    /// Do not write the pre-compiled constraints the setup extracted beside the file
    /// (PARAMS.pce, what `prove --params` reads instead of extracting them again: ~110 s at
    /// 2^27 on 16 cores).
    #[arg(long)]
    pub no_pce_cache: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // The destination is checked before the setup (minutes at 2^24).
    if args.params.is_dir() {
        anyhow::bail!("--params {}: a folder, not a file", args.params.display());
    }
    if let Some(parent) = args.params.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            anyhow::bail!("--params {}: the folder {} does not exist", args.params.display(), parent.display());
        }
    }
    let circuit = args.circuit.circuit(args.constraints, 0);
    circuit.check().map_err(anyhow::Error::msg)?;
    tracing::warn!("TEST-ONLY trusted setup (toxic waste from seed {}); never use these parameters for anything real.", args.seed);
    let t0 = Instant::now();
    let waste = prover::setup::ToxicWaste::from_seed(args.seed);
    let (params, pce) = match args.on.as_str() {
        "gpu" => gpu_setup(&circuit, waste)?,
        _ => {
            // The circuit's pieces extracted in parallel (the same constraints as one thread's).
            let (pce, _) = prover::pce::extract_pieces(circuit.clone(), circuit.constraints() as usize).context("extracting the constraints")?;
            let (params, _) = prover::setup::generate_from_pce(&pce, &circuit.id(), waste, prover::setup::MulsOn::Cpu).context("generating parameters")?;
            (params, pce)
        }
    };
    let gen = t0.elapsed();
    let t1 = Instant::now();
    // Whole or not at all (a full disk keeps the old file); a failure exits 1.
    let enc = if args.compressed { prover::params::PointEncoding::Compressed } else { prover::params::PointEncoding::Uncompressed };
    let bytes = params.write_file_as(&args.params, enc).map_err(super::output::write_failed)?;
    println!(
        "{}: {} ({} constraints, {} aux, domain {}), {:.1} MiB, points {}; setup {:.2} s, write {:.2} s",
        args.params.display(),
        circuit.id(),
        params.info.num_constraints,
        params.info.num_aux,
        params.info.domain_size,
        bytes as f64 / (1 << 20) as f64,
        enc.name(),
        gen.as_secs_f64(),
        t1.elapsed().as_secs_f64()
    );
    // The constraints the setup extracted, cached beside the file under the file's hash (a
    // cache of another file is never used: `pce::cache`). The parameter file is whole
    // whatever happens here: a cache that cannot be written is a warning, and `prove` then
    // extracts the constraints itself.
    if !args.no_pce_cache {
        let t2 = Instant::now();
        let path = prover::pce::cache::cache_path(&args.params);
        let written = prover::pce::cache::PceKey::for_params(&params.info, Some(&args.params)).and_then(|key| prover::pce::cache::write(&pce, &key, &path));
        match written {
            Ok(b) => println!("{}: pre-compiled constraints, {:.1} MiB; write {:.2} s", path.display(), b as f64 / (1 << 20) as f64, t2.elapsed().as_secs_f64()),
            Err(e) => tracing::warn!("{}: the pre-compiled constraints were not cached ({e}); `prove --params` will extract them again", path.display()),
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(feature = "cuda")]
fn gpu_setup(circuit: &prover::circuit::BenchCircuit, waste: prover::setup::ToxicWaste) -> anyhow::Result<(prover::Parameters, prover::pce::Pce)> {
    let gpu = prover::gpu::Gpu::open(0, prover::gpu::CudaSched::Auto).context("--on gpu: opening GPU 0")?;
    let (params, pce, t) = prover::setup::generate_overlapped(circuit.clone(), &circuit.id(), circuit.constraints() as usize, waste, prover::setup::MulsOn::Gpu(&gpu)).context("generating parameters")?;
    tracing::info!(
        "setup on {}: extraction {:.2} s (beside it: basis and tables {:.2} s), scalars {:.2} s, tables {:.2} s, muls {:.2} s (kernels {:.2} s, uploads {:.2} s, downloads {:.2} s)",
        gpu.name,
        t.extract_ms / 1e3,
        t.prepare_ms / 1e3,
        t.scalars_ms / 1e3,
        t.tables_ms / 1e3,
        t.muls_ms / 1e3,
        t.kernel_ms / 1e3,
        t.h2d_ms / 1e3,
        t.d2h_ms / 1e3
    );
    Ok((params, pce))
}

#[cfg(not(feature = "cuda"))]
fn gpu_setup(_: &prover::circuit::BenchCircuit, _: prover::setup::ToxicWaste) -> anyhow::Result<(prover::Parameters, prover::pce::Pce)> {
    anyhow::bail!("--on gpu needs a build with the cuda feature (scripts/build-gpu-binary.sh)")
}
