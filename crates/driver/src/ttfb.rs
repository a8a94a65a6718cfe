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
    /// QUIC over UDP through the UDP delay proxy (no bandwidth limit): the client asks
    /// hq-interop `/BYTES`; each connection gives the time to the answer's first byte and
    /// to its last.
    #[arg(long)]
    quic: bool,
    /// --quic: the answer's size.
    #[arg(long, default_value_t = 1000)]
    bytes: u64,
}

/// Traces the pair in memory (the model's input), then times connections over loopback TCP
/// through a delay proxy to a server thread.
pub(crate) fn ttfb(a: &TtfbArgs) -> Result<()> {
    if a.quic {
        return quic_ttfb(a);
    }
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

/// Traces the library's QUIC pair in memory (the model's input), then times connections
/// over UDP through the UDP delay proxy, each to a server thread of its own: the first byte
/// and the last of an hq-interop answer of `--bytes`.
fn quic_ttfb(a: &TtfbArgs) -> Result<()> {
    if a.bandwidth_mbps.is_some() {
        anyhow::bail!("--quic takes no --bandwidth-mbps: the UDP delay proxy adds latency only");
    }
    let mut cell = a.cell.open()?;
    let params = cell.scenario.params();
    if !matches!(cell.scenario, Scenario::Handshake(_)) || params.resumption.is_resumed() {
        anyhow::bail!(
            "{}: the time-to-first-byte check runs full-handshake scenarios",
            cell.scenario
        );
    }
    cell.cfg.alpn = vec![tlsmatrix_harness::quic::ALPN.into()];
    let lib = cell.client.as_ref();
    if let Err(reason) = lib.quic_supports(&cell.cfg) {
        return refuse(reason);
    }
    emit(&DriverMessage::Hello {
        cell: None,
        client_version: version_with_allocator(lib),
        server_version: version_with_allocator(lib),
    });
    let cfg = &cell.cfg;
    let made = |side| lib.quic_factory(side, cfg);
    let cf = made(Side::Client)?;
    let trace =
        tlsmatrix_measure::quic_flights::trace(cf.as_ref(), made(Side::Server)?.as_ref(), &params)?;
    emit(&DriverMessage::Trace { cell: None, trace });
    let one_way = Duration::from_secs_f64(a.rtt_ms / 2e3);
    let expect = quic_wire::Expect {
        params,
        alpn: Some(tlsmatrix_harness::quic::ALPN),
    };
    let connections = a.runs as usize + 1; // the first warms both sides up
    for n in 0..connections {
        // Generous: slow start's round trips for the answer, and the lingering after it.
        let deadline = std::time::Instant::now()
            + Duration::from_secs(20)
            + one_way * 2 * (24 + (a.bytes / 100_000) as u32);
        let socket = std::net::UdpSocket::bind("127.0.0.1:0")?;
        let proxy = udp_delay_proxy::UdpDelayProxy::start(socket.local_addr()?, one_way)?;
        let timed = std::thread::scope(|s| -> Result<quic_wire::ClientTimes> {
            // The server's factory is its thread's (a factory stays on one thread), made
            // before the client starts so that none of its set-up is timed.
            let (ready, made_it) = std::sync::mpsc::channel();
            let serving = s.spawn(move || {
                let sf = made(Side::Server);
                let _ = ready.send(());
                let wait = quic_wire::FirstDatagram::ByDeadline;
                quic_wire::server(sf?.as_ref(), &expect, &socket, deadline, wait)
            });
            let _ = made_it.recv();
            let timed = quic_wire::client(cf.as_ref(), &expect, proxy.addr(), a.bytes, deadline);
            let served = serving
                .join()
                .unwrap_or_else(|_| Err(anyhow!("the server thread panicked")));
            served.context("server")?;
            timed.map(|(_, times)| times)
        })
        .with_context(|| format!("connection {} of {connections}", n + 1))?;
        if n > 0 {
            emit(&DriverMessage::Sample {
                cell: None,
                round: None,
                values: vec![
                    (Metric::TtfbNs, timed.first_byte.as_nanos() as f64),
                    (Metric::QuicDownloadNs, timed.last_byte.as_nanos() as f64),
                ],
            });
        }
    }
    emit(&DriverMessage::Done);
    Ok(())
}
