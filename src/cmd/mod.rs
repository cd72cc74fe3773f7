//! One module per subcommand: argument parsing and printing only; the work is in the crates.
