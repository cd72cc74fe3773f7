//! One module per subcommand: argument parsing and printing only; the work is in the crates.
pub mod gpu;
pub mod analyze;
pub mod compare;
pub mod demo;
pub mod circuit;
pub mod setup;
pub mod prove;
pub mod simulate;
pub mod sweep;
pub mod calibrate;
pub mod predict;
pub mod campaign;
pub mod validate_trace;
pub mod output;
pub mod input;
pub mod completions;
pub mod man;
