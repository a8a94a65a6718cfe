//! The front of the Rust drivers' BoGo shims. BoGo's runner starts a shim once per test, and
//! most of the tests it starts ask for a flag no shim honours. A driver links every library it
//! can run (tens of MB, a score of shared libraries) and takes about 5 ms of CPU to start;
//! this front takes a fraction of one. It reads the flags with the drivers' own table
//! (`tlsmatrix_model::bogo_flags`) and answers a flag the table lacks itself, with the exit
//! status the driver would give (89, unimplemented); every other invocation is handed to the
//! driver unchanged (exec), which decides everything else as before.
//!
//! `tlsmatrix conformance` starts it through a link named after the impl, `<dir>/<impl>`,
//! beside a file `<dir>/<impl>.driver` that holds the driver's path.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use tlsmatrix_model::bogo_flags::{answer_unimplemented, parse, Invocation};

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    let me = PathBuf::from(args.next().unwrap_or_default());
    let rest: Vec<OsString> = args.collect();
    // A flag that is not UTF-8 is no flag of the table; the driver says so in its own words.
    let text: Option<Vec<String>> = rest.iter().map(|a| a.to_str().map(String::from)).collect();
    if let Some(text) = &text {
        match parse(text) {
            Ok(Invocation::HandshakerQuery) => {
                println!("No");
                return ExitCode::SUCCESS;
            }
            Err(e) => return ExitCode::from(answer_unimplemented(&e.to_string())),
            Ok(Invocation::Test(_)) => {}
        }
    }
    let Some(imp) = me.file_name().map(|n| n.to_os_string()) else {
        eprintln!("tlsmatrix-bogo-shim: started without a name; start it through a link named after the impl");
        return ExitCode::from(2);
    };
    let mut driver_file = me.clone().into_os_string();
    driver_file.push(".driver");
    let driver = match std::fs::read_to_string(&driver_file) {
        Ok(d) => d.trim_end().to_string(),
        Err(e) => {
            eprintln!(
                "tlsmatrix-bogo-shim: cannot read {}: {e} (it names the driver of {})",
                PathBuf::from(&driver_file).display(),
                imp.to_string_lossy()
            );
            return ExitCode::from(2);
        }
    };
    let err = Command::new(&driver)
        .arg("bogo-shim")
        .arg("--impl")
        .arg(&imp)
        .arg("--")
        .args(&rest)
        .exec();
    eprintln!("tlsmatrix-bogo-shim: cannot start {driver}: {err}");
    ExitCode::from(2)
}
