//! `proofscope schema [NAME] [-o DIR]`: the JSON Schemas of proofscope's JSON outputs,
//! generated from the Rust types that write them (schemars), so that notebooks, SQL loaders
//! and other tools can rely on a published contract. The same schemas are committed under
//! `docs/reference/schemas/` (a test fails when they drift from the types) and every output
//! the test suite writes is validated against its schema (tests/schemas.rs).

use std::path::PathBuf;
use std::process::ExitCode;

/// Every schema: (name, the file it describes, generator).
pub const SCHEMAS: &[(&str, &str, fn() -> schemars::Schema)] = &[
    ("summary", "analyze's summary.json (and `analyze --json`)", || schemars::schema_for!(timeline::analysis::Summary)),
    ("fleet", "analyze's fleet.json (several hosts)", || schemars::schema_for!(timeline::analysis::fleet::Fleet)),
    ("sim-result", "`simulate --json`", || schemars::schema_for!(simulator::SimResult)),
    ("sweep", "sweep's sweep.json (one row per configuration)", || schemars::schema_for!(Vec<simulator::sweep::JsonRow>)),
    ("parity", "parity.json of simulate --compare-to, calibrate and predict", || schemars::schema_for!(simulator::parity::Parity)),
    ("compare", "compare's compare.json (and `compare --json`)", || schemars::schema_for!(timeline::analysis::compare::Comparison)),
    ("whatif", "whatif's whatif.json", || schemars::schema_for!(simulator::whatif::WhatIf)),
    ("campaign", "campaign score's campaign.json", || schemars::schema_for!(simulator::campaign::CampaignScore)),
    ("predictions", "campaign predict's predictions.json (a pre-registered campaign)", || schemars::schema_for!(simulator::prereg::Predictions)),
];

#[derive(clap::Args)]
pub struct Args {
    /// The schema to print (summary, fleet, sim-result, sweep, parity, compare, whatif, campaign, predictions); none: list them.
    pub name: Option<String>,
    /// Write every schema into this folder as <name>.schema.json instead of printing one.
    #[arg(short, long)]
    pub out: Option<PathBuf>,
}

/// The schema `name` as pretty JSON with a trailing newline.
pub fn text(name: &str) -> Option<String> {
    let (_, _, f) = SCHEMAS.iter().find(|(n, _, _)| *n == name)?;
    Some(serde_json::to_string_pretty(&f()).ok()? + "\n")
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    if let Some(out) = &a.out {
        if a.name.is_some() {
            anyhow::bail!("give a schema name or -o DIR, not both");
        }
        let dir = super::output::dir(out)?;
        for (name, _, _) in SCHEMAS {
            let t = text(name).ok_or_else(|| anyhow::anyhow!("schema {name} could not be serialised"))?;
            super::output::write_atomic(&dir.join(format!("{name}.schema.json")), t.as_bytes())?;
        }
        tracing::info!("{} schemas in {}", SCHEMAS.len(), dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    match a.name.as_deref() {
        None => {
            for (name, what, _) in SCHEMAS {
                println!("{name:<12} {what}");
            }
        }
        Some(n) => match text(n) {
            Some(t) => print!("{t}"),
            None => anyhow::bail!("unknown schema `{n}` (one of {})", SCHEMAS.iter().map(|s| s.0).collect::<Vec<_>>().join(", ")),
        },
    }
    Ok(ExitCode::SUCCESS)
}
