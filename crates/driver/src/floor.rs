//! The `floor` subcommand: one impl's crypto floor for one scenario, operation by operation,
//! as a table for a reader (`tlsmatrix run --measure floor` takes the sums, in turns with the
//! handshake). It is how a floor is checked against the library's own speed benchmark.

use super::*;
use tlsmatrix_measure::floor::{operations_of, FloorSampler};

/// One impl on one handshake scenario, for the commands that print a table for a reader.
#[derive(clap::Args)]
pub(crate) struct ImplScenario {
    /// The impl, on both sides where there are two, e.g. openssl-3.0.
    #[arg(long = "impl")]
    pub(crate) imp: String,
    /// A handshake scenario id, e.g. handshake-tls13-ecdsa-p256-x25519-full.
    #[arg(long)]
    pub(crate) scenario: String,
    /// Folder of cached test certificates (generated there if missing).
    #[arg(long)]
    pub(crate) certs: PathBuf,
}

#[derive(clap::Args)]
pub(crate) struct FloorArgs {
    #[command(flatten)]
    on: ImplScenario,
    /// Milliseconds of timing over all operations (each gets its share), after as long
    /// again of warm-up.
    #[arg(long, default_value_t = 400)]
    ms: u64,
}

pub(crate) fn floor(args: &FloorArgs) -> Result<()> {
    let a = &args.on;
    let scenario: Scenario = a.scenario.parse()?;
    let Scenario::Handshake(_) = scenario else {
        bail!("a crypto floor is taken on handshake scenarios, not {scenario}");
    };
    let params = scenario.params();
    let lib = find(&a.imp)?;
    let crypto = lib.handshake_crypto().map_err(|e| anyhow!(e))?;
    let certs = certs::load_or_generate(&a.certs, params.sig)?;
    let ms = Duration::from_millis(args.ms);
    let list = operations_of(&params);
    let mut sampler = FloorSampler::warm(crypto.as_ref(), &certs, &list, ms, ms)
        .map_err(|e| anyhow!("{}: {e}", a.imp))?;
    println!(
        "{} {}: crypto floor through {}",
        a.imp,
        scenario,
        crypto.api()
    );
    println!(
        "{:<7} {:<44} {:>6} {:>10} {:>14}",
        "side", "operation", "count", "µs each", "µs/handshake"
    );
    let times = sampler.times()?;
    for side in [Side::Client, Side::Server] {
        let mut sum = 0.0;
        for t in times.iter().filter(|t| t.side == side) {
            let per = t.ns * f64::from(t.per_handshake);
            sum += per;
            println!(
                "{:<7} {:<44} {:>6} {:>10.2} {:>14.2}",
                side.to_string(),
                t.op.to_string(),
                t.per_handshake,
                t.ns / 1e3,
                per / 1e3
            );
        }
        println!(
            "{:<7} {:<44} {:>6} {:>10} {:>14.2}",
            side.to_string(),
            "floor",
            "",
            "",
            sum / 1e3
        );
    }
    Ok(())
}
