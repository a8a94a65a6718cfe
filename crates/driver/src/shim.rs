//! The `bogo-shim` subcommand: BoGo's runner starts the driver as its shim for one impl.

use super::*;

#[derive(clap::Args)]
pub(crate) struct BogoShimArgs {
    /// The impl to test, e.g. rustls-aws-lc.
    #[arg(long = "impl")]
    imp: String,
    /// The runner's flags.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    runner_flags: Vec<String>,
}

/// Runs one BoGo test; the exit status is what the runner reads.
pub(crate) fn bogo_shim(a: &BogoShimArgs) -> ExitCode {
    use crate::bogo::{self, answer_unimplemented, Invocation, Unimplemented};
    let flags = match bogo::parse(&a.runner_flags) {
        Ok(Invocation::HandshakerQuery) => {
            println!("No");
            return ExitCode::SUCCESS;
        }
        Ok(Invocation::Test(flags)) => flags,
        Err(e) => return ExitCode::from(answer_unimplemented(&e.to_string())),
    };
    let result = find(&a.imp).and_then(|lib| bogo::run(lib.as_ref(), &flags));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is::<Unimplemented>() => ExitCode::from(answer_unimplemented(&e.to_string())),
        Err(e) => {
            // The runner matches the expected error against this text (with -loose-errors,
            // any failure matches).
            eprintln!("tlsmatrix-bogo-shim: {e:#}");
            ExitCode::FAILURE
        }
    }
}
