//! `cargo xtask`: checks of the source tree that no compiler makes.
//!
//! `cargo xtask modules [CRATE_DIR...]` fails when the modules of a crate import each other in
//! a circle. Cargo already forbids cycles between crates; inside one, `a` using `b` and `b`
//! using `a` compiles, and a crate that grew that way cannot be split or read one file at a time.
//!
//! `cargo xtask metrics` writes the Go side's metric and measure names from their tables.
//!
//! `cargo xtask lengths` fails on a function over 150 lines or a source file over 1,200, in
//! the Rust crates and the Go module.
//!
//! `cargo xtask locks` fails when a driver workspace locks a package at a version the main
//! `Cargo.lock` does not have.
//!
//! `cargo xtask weather` is an experiment, not a check: whether an impl's speed against the
//! baseline follows the machine's memory weather (`make weather`).

mod go_metrics;
mod lengths;
mod locks;
mod modules;
mod weather;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str =
    "usage: cargo xtask modules [CRATE_DIR...] | metrics | lengths | locks | weather --impl NAME ...
  modules   fail when the modules of a crate import each other in a circle (default: every
            crate under crates/); each cycle is printed with the line of every edge in it
  metrics   write go/internal/metrics/names.go from the metric table
            (crates/model/src/metric.rs) and go/internal/measures/names.go from the measure
            table (crates/model/src/measure.rs); a test fails while a file and its table differ
  lengths   fail on a function over 150 lines (signature to closing brace) or a source file
            over 1,200 lines, in crates/, libssl-drivers/, build-support/ and go/; each is
            printed with its file and line
  locks     fail when a driver workspace (libssl-drivers/) locks a package at a version the
            main Cargo.lock does not have
  weather   follow an impl against the baseline over minutes with the memory probe between
            (an experiment; `cargo xtask weather --help` for its options)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("modules") => {
            let dirs: Vec<PathBuf> = if args.len() > 1 {
                args[1..].iter().map(PathBuf::from).collect()
            } else {
                match modules::workspace_crates() {
                    Ok(d) => d,
                    Err(e) => {
                        eprintln!("xtask: {e:#}");
                        return ExitCode::from(2);
                    }
                }
            };
            match modules::check(&dirs) {
                Ok(0) => ExitCode::SUCCESS,
                Ok(_) => ExitCode::FAILURE,
                Err(e) => {
                    eprintln!("xtask: {e:#}");
                    ExitCode::from(2)
                }
            }
        }
        Some("metrics") => match go_metrics::write() {
            Ok(changed) => {
                for &(name, _) in go_metrics::GO_FILES {
                    let what = if changed.contains(&name) {
                        "wrote"
                    } else {
                        "unchanged:"
                    };
                    println!("{what} {name}");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("xtask: {e:#}");
                ExitCode::from(2)
            }
        },
        Some("lengths") => match lengths::check(Path::new(".")) {
            Ok(found) if found.is_empty() => ExitCode::SUCCESS,
            Ok(found) => {
                for f in &found {
                    eprintln!("{f}");
                }
                eprintln!(
                    "{} place(s) over the limits: split them into functions or modules with one job each",
                    found.len()
                );
                ExitCode::FAILURE
            }
            Err(e) => {
                eprintln!("xtask: {e:#}");
                ExitCode::from(2)
            }
        },
        Some("locks") => match locks::strays() {
            Ok(s) if s.is_empty() => ExitCode::SUCCESS,
            Ok(s) => {
                eprintln!(
                    "versions only a driver workspace locks:\n  {}",
                    s.join("\n  ")
                );
                ExitCode::FAILURE
            }
            Err(e) => {
                eprintln!("xtask: {e:#}");
                ExitCode::from(2)
            }
        },
        Some("weather") => {
            use clap::Parser as _;
            let opts = match weather::SeriesOptions::try_parse_from(&args) {
                Ok(o) => o,
                Err(e) => {
                    let _ = e.print();
                    return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
                }
            };
            match weather::series(&opts) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(e) => {
                    eprintln!("cargo xtask weather: {e:#}");
                    ExitCode::from(2)
                }
            }
        }
        Some("-h" | "--help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
