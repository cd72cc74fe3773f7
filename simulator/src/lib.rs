//! proofscope's discrete-event simulator of the proving pipeline.
//!
//! `Config (TOML) → Model { resources, policies, costs } → DES core → Run (same schema)`
//! and `Run (measured) → calibrate → costs + contention → Config`. The DES core
//! ([`des`]) knows nothing about provers; the cuzk pipeline is expressed on it in
//! [`pipeline`]; floors come from the model's demands ([`floors`]), not from running it.

pub mod calibrate;
pub mod campaign;
pub mod config;
pub mod costs;
pub mod cuzk_config;
pub mod discrepancy;
pub mod cpu_demand;
pub mod des;
pub mod floors;
pub mod interval;
pub mod memory;
pub mod mmc;
pub mod parity;
pub mod pipeline;
pub mod prereg;
pub mod report;
pub mod resources;
pub mod rng;
pub mod sweep;
pub mod track_record;
pub mod whatif;

pub use config::{Config, ConfigError, LockMode};
pub use pipeline::{simulate, Options, Outcome};
pub use report::SimResult;
