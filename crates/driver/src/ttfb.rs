//! The `ttfb` subcommand: time to first byte over real TCP through the delay proxy.

use super::*;

#[derive(clap::Args)]
pub(crate) struct TtfbArgs {
    /// A full-handshake scenario (the pair's trace runs in memory first).
    #[command(flatten)]
    cell: CellArgs,
    /// Round-trip time the proxy adds, in milliseconds (half each way).
    #[arg(long)]
    rtt_ms: f64,
    /// Bandwidth each way in Mbit/s; none for no limit.
    #[arg(long)]
    bandwidth_mbps: Option<f64>,
    /// Connections to time.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
}

/// Traces the pair in memory (the model's input), then times connections over loopback TCP
/// through a delay proxy to a server thread.
pub(crate) fn ttfb(a: &TtfbArgs) -> Result<()> {
    let cell = a.cell.open()?;
    let (scenario, cfg, server) = (cell.scenario, &cell.cfg, &cell.server);
    let params = scenario.params();
    if !matches!(scenario, Scenario::Handshake(_)) || params.resumption.is_resumed() {
        anyhow::bail!("{scenario}: the time-to-first-byte check runs full-handshake scenarios");
    }
    let Some((cf, sf)) = cell.factories()? else {
        return Ok(());
    };
    let budget = Budget {
        runs: 15,
        warmup: Duration::from_millis(50),
        ..Budget::default()
    };
    let trace = workload::wire(cf.as_ref(), sf.as_ref(), &params, &budget, |_| {})?;
    emit(&DriverMessage::Trace { cell: None, trace });
    drop(sf);

    let rtt = Duration::from_secs_f64(a.rtt_ms / 1e3);
    let link = delay_proxy::Link::for_rtt(rtt, a.bandwidth_mbps.map(|m| m * 1e6));
    let connections = a.runs as usize + 1; // the first warms both sides up
    let deadline = std::time::Instant::now()
        + Duration::from_secs(30)
        + (rtt + Duration::from_millis(50)) * 6 * connections as u32;
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let proxy = delay_proxy::DelayProxy::start(listener.local_addr()?, link)?;
    std::thread::scope(|s| -> Result<()> {
        let serving = s.spawn(|| -> Result<()> {
            let sf = server.factory(Side::Server, cfg)?;
            wire::serve_requests(sf.as_ref(), &params, &listener, connections, deadline)
        });
        let timed = (0..connections).try_for_each(|n| -> Result<()> {
            let t = wire::time_to_first_byte(cf.as_ref(), &params, proxy.addr(), deadline)
                .with_context(|| format!("connection {} of {connections}", n + 1))?;
            if n > 0 {
                emit(&DriverMessage::Sample {
                    cell: None,
                    round: None,
                    values: vec![(Metric::TtfbNs, t.as_nanos() as f64)],
                });
            }
            Ok(())
        });
        let served = serving
            .join()
            .unwrap_or_else(|_| Err(anyhow!("the server thread panicked")));
        // The server's error says more when both failed (the client saw only a close).
        served.context("server")?;
        timed
    })?;
    emit(&DriverMessage::Done);
    Ok(())
}
