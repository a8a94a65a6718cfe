//! The `contention` subcommand: one impl's server context shared by 1, 2 and more threads
//! handshaking at once (each with a client context of its own), as a table for a reader: the rate in all and per thread,
//! the rate against one thread's on as many cores as the threads can use, and the blocking
//! waits (voluntary context switches) per handshake (`tlsmatrix_measure::contention`).

use super::floor::ImplScenario;
use super::*;
use tlsmatrix_measure::contention::shared_contexts;

#[derive(clap::Args)]
pub(crate) struct ContentionArgs {
    /// The impl and a full-handshake scenario.
    #[command(flatten)]
    on: ImplScenario,
    /// Thread counts, comma-separated, each sharing the one pair of contexts.
    #[arg(long, value_delimiter = ',', default_value = "1,2,8")]
    threads: Vec<usize>,
    /// Milliseconds each thread count is measured for, after as long a warm-up a third.
    #[arg(long, default_value_t = 600)]
    ms: u64,
}

pub(crate) fn contention(args: &ContentionArgs) -> Result<()> {
    let a = &args.on;
    let cell = CellArgs {
        scenario: a.scenario.clone(),
        client: a.imp.clone(),
        server: a.imp.clone(),
        certs: a.certs.clone(),
    }
    .open()?;
    let params = cell.scenario.params();
    if !matches!(cell.scenario, Scenario::Handshake(_)) || params.resumption.is_resumed() {
        bail!(
            "contention is measured on full handshakes, not {}",
            cell.scenario
        );
    }
    let lib = cell.server.as_ref();
    for side in [Side::Client, Side::Server] {
        if let Err(reason) = cell
            .cfg
            .protocol_limits()
            .and_then(|()| lib.supports_side(side, &cell.cfg))
        {
            bail!("{}: {reason}", a.imp);
        }
    }
    let sf = lib.factory(Side::Server, &cell.cfg)?;
    let Some(server) = sf.shared() else {
        bail!(
            "{}: its adapter does not share a server context among threads",
            a.imp
        );
    };
    let client = || cell.client.factory(Side::Client, &cell.cfg);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let window = Duration::from_millis(args.ms);
    println!(
        "{} {}: one server context shared by every thread, a client context each ({cores} cores)",
        a.imp, cell.scenario
    );
    println!(
        "{:>7} {:>12} {:>12} {:>18} {:>13} {:>14}",
        "threads", "hs/s", "hs/s/thread", "x 1 thread/core", "waits/hs", "preempted/hs"
    );
    let mut one = None;
    for &n in &args.threads {
        let r = shared_contexts(&client, server, &params, n.max(1), window / 3, window)?;
        let base = *one.get_or_insert(r.per_second());
        println!(
            "{:>7} {:>12.0} {:>12.0} {:>18.2} {:>13.3} {:>14.3}",
            n,
            r.per_second(),
            r.per_second() / n as f64,
            r.per_second() / (base * n.min(cores) as f64),
            r.waits_per_handshake(),
            r.preempted as f64 / r.handshakes.max(1) as f64
        );
    }
    Ok(())
}
