//! `proofscope circuit --constraints N [--circuit porep-like|mix16]`: build a benchmark
//! circuit of that size and print its measured R1CS shape next to PoRep's reference shape;
//! with `--synthesis-bench`, time one partition's synthesis on the circuit path against the
//! pre-compiled path instead ([`super::synthesis_bench`]).

use std::process::ExitCode;

use anyhow::Context;
use prover::circuit::{measure, Family};

#[derive(clap::Args)]
pub struct Args {
    /// Constraints of the circuit, 2^8 ..= 2^27 (e.g. 16384 or 2^14).
    #[arg(long, value_parser = timeline::bytes::parse_count)]
    pub constraints: u64,
    /// Circuit family: porep-like or mix16.
    #[arg(long, default_value = "porep-like", value_parser = Family::parse)]
    pub circuit: Family,
    /// Print the shape (or the bench's report) as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Time one partition's synthesis: the circuit path against the pre-compiled
    /// constraints (PCE), with the PCE's size, a memory-bandwidth probe and the products'
    /// floor (no parameter file or GPU needed).
    #[arg(long)]
    pub synthesis_bench: bool,
    /// With --synthesis-bench: threads per PCE synthesis for the products (0 = the cores ÷
    /// --concurrent).
    #[arg(long, default_value_t = 0, requires = "synthesis_bench")]
    pub threads: usize,
    /// With --synthesis-bench: syntheses run at once (each path).
    #[arg(long, default_value_t = 1, requires = "synthesis_bench")]
    pub concurrent: usize,
    /// With --synthesis-bench: rounds of each path (medians are reported).
    #[arg(long, default_value_t = 3, requires = "synthesis_bench")]
    pub reps: usize,
    /// With --synthesis-bench: rows per task of the products.
    #[arg(long, default_value_t = prover::pce::DEFAULT_CHUNK_ROWS, requires = "synthesis_bench")]
    pub chunk_rows: usize,
    /// With --synthesis-bench: MiB per array of the bandwidth probe (three arrays).
    #[arg(long, default_value_t = 256, requires = "synthesis_bench")]
    pub probe_mib: usize,
    /// With --synthesis-bench: also write the PCE to this cache file and time reading it back.
    #[arg(long, requires = "synthesis_bench")]
    pub pce_cache: Option<std::path::PathBuf>,
    /// With --synthesis-bench: time only the PCE path (e.g. a second split of the cores
    /// whose circuit-path baseline is already known).
    #[arg(long, requires = "synthesis_bench")]
    pub skip_circuit: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let circuit = args.circuit.circuit(args.constraints, 0);
    let sections = circuit.sections().map_err(anyhow::Error::msg)?;
    if args.synthesis_bench {
        let o = super::synthesis_bench::Options {
            threads: args.threads,
            concurrent: args.concurrent,
            reps: args.reps,
            chunk_rows: args.chunk_rows,
            probe_mib: args.probe_mib,
            pce_cache: args.pce_cache.clone(),
            skip_circuit: args.skip_circuit,
        };
        super::synthesis_bench::run(&circuit, args.constraints, &o, args.json)?;
        return Ok(ExitCode::SUCCESS);
    }
    let shape = measure(circuit.clone()).context("measuring the circuit")?;
    if args.json {
        let mut v = serde_json::json!({
            "circuit": circuit.id(),
            "sections": sections,
            "shape": shape,
        });
        if let prover::circuit::BenchCircuit::PorepLike(c) = &circuit {
            let layout = c.layout().map_err(anyhow::Error::msg)?;
            v["sha_blocks"] = layout.sha_blocks.into();
            v["sha_constraints"] = layout.sha_constraints.into();
            v["arith_rows"] = layout.arith_rows.into();
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("circuit      {}", circuit.id());
    println!("sections     {sections}");
    println!("constraints  {} (domain 2^{})", shape.constraints, shape.domain_size.trailing_zeros());
    println!("inputs       {} (incl. ONE)", shape.inputs);
    println!("aux          {}", shape.aux);
    println!();
    println!("| matrix | non-zeros | per row | PoRep per row |");
    println!("|---|---:|---:|---:|");
    println!("| A | {} | {:.2} | 2.4 |", shape.nnz_a, shape.per_row(shape.nnz_a));
    println!("| B | {} | {:.2} | 1.0 |", shape.nnz_b, shape.per_row(shape.nnz_b));
    println!("| C | {} | {:.2} | 2.2 |", shape.nnz_c, shape.per_row(shape.nnz_c));
    println!();
    println!("| density | measured | PoRep |");
    println!("|---|---:|---:|");
    println!("| a-aux | {:.1}% | 99.7% |", 100.0 * shape.a_aux_density);
    println!("| b-input | {:.1}% | 0.3% (1/328) |", 100.0 * shape.b_input_density);
    println!("| b-aux | {:.1}% | 25.4% |", 100.0 * shape.b_aux_density);
    Ok(ExitCode::SUCCESS)
}
