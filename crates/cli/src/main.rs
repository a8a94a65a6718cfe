//! `tlsmatrix`: measure TLS implementations side by side.

mod drivers;
mod env;
mod list;
mod results_file;
mod run;
mod summary;
mod table;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "tlsmatrix",
    version,
    about = "Measure TLS implementations side by side: handshake cost per side and bulk throughput, in memory, with every negotiated parameter checked",
    after_help = "Examples:\n  tlsmatrix list\n  tlsmatrix run --impl rustls-aws-lc,openssl-3.0 --scenario 'handshake-tls13-*' --runs 30"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List every impl with the exact library version it runs, and every scenario axis.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run scenarios for every client x server pair of the chosen impls, append the records
    /// to a JSON-lines file, and print a summary table.
    Run(RunArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// Impls to compare, comma-separated; the first is the baseline of the factor column.
    /// Default: every built impl.
    #[arg(long = "impl", value_name = "A,B,...")]
    impls: Vec<String>,
    /// Scenario ids or patterns (`*` and `?` wildcards), comma-separated or repeated.
    /// Default: the core suite (`tlsmatrix list` shows it).
    #[arg(long, value_name = "PATTERN")]
    scenario: Vec<String>,
    /// Samples per (scenario, pair, metric), after warm-up.
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    runs: u32,
    /// JSON-lines file the records are appended to; test certificates are cached in a
    /// `certs` folder beside it.
    #[arg(long, default_value = "results/latest.jsonl", value_name = "FILE")]
    out: PathBuf,
    /// Warm-up time per cell before sampling, in milliseconds.
    #[arg(long, default_value_t = 200, value_name = "MS")]
    warmup_ms: u64,
    /// Target duration of one handshake sample in milliseconds (the batch size follows).
    #[arg(long, default_value_t = 100, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    sample_ms: u64,
    /// A driver that prints nothing for this many seconds is killed and its cell fails.
    #[arg(long, default_value_t = 120, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    cell_timeout: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::List { json } => list::list(json).map(|()| true),
        Command::Run(a) => run::run(run::RunOptions {
            impls: a.impls,
            scenarios: a.scenario,
            runs: a.runs,
            out: a.out,
            warmup_ms: a.warmup_ms,
            sample_ms: a.sample_ms,
            cell_timeout: Duration::from_secs(a.cell_timeout),
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
        }),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        // Some cells failed; each was reported as it happened.
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
