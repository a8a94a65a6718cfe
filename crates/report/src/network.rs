//! What a handshake costs on a network: the wire figures of a `--measure wire` run, the time to
//! first byte the model (`crate::netmodel`) gives them under a few conditions, a
//! chart of it against the round-trip time, and the delay-proxy check of the model.

use crate::netmodel::{self, Conditions};
use tlsmatrix_history::proxy_check::{CheckRow, ProxyCheck};
use tlsmatrix_history::RunData;
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::trace::Trace;

use crate::doc::{self, Block, Cell, Chart, ChartKind, Class, Point, Section, Series, Table};
use crate::figures::figure;

/// A measured cell of a wire run: its figures (medians) and its median trace.
pub struct WireRow<'a> {
    pub scenario: &'a str,
    pub client: &'a str,
    pub server: &'a str,
    pub trace: &'a Trace,
    figures: Vec<(Metric, f64)>,
}

impl WireRow<'_> {
    pub fn get(&self, m: Metric) -> f64 {
        self.figures
            .iter()
            .find(|(k, _)| *k == m)
            .map_or(f64::NAN, |&(_, v)| v)
    }

    fn pair(&self) -> String {
        format!("{} -> {}", self.client, self.server)
    }
}

/// The run's cells that carry a trace, in the run's scenario order.
pub fn wire_rows(run: &RunData) -> Vec<WireRow<'_>> {
    let order = doc::scenario_order(run.records.iter().map(|r| r.scenario.as_str()), &[]);
    let mut rows: Vec<WireRow> = run
        .records
        .iter()
        .filter_map(|r| {
            let trace = r.trace.as_ref()?;
            let figures = run
                .records
                .iter()
                .filter(|x| {
                    (&x.scenario, &x.client, &x.server) == (&r.scenario, &r.client, &r.server)
                })
                .map(|x| (x.metric, x.median))
                .collect();
            Some(WireRow {
                scenario: &r.scenario,
                client: &r.client,
                server: &r.server,
                trace,
                figures,
            })
        })
        .collect();
    rows.sort_by_key(|w| order.iter().position(|s| s == w.scenario));
    rows
}

/// The conditions the report models: same rack, same continent, across the world, and the
/// continent over a 5 Mbit/s link.
pub fn default_conditions() -> Vec<Conditions> {
    let mut c: Vec<Conditions> = netmodel::DEFAULT_RTTS_MS
        .iter()
        .map(|ms| Conditions::at_rtt(ms / 1e3))
        .collect();
    c.push(Conditions {
        bandwidth_bps: Some(5e6),
        ..Conditions::at_rtt(0.030)
    });
    c
}

/// 30 -> "30", 0.25 -> "0.25": as written on a command line.
fn plain_number(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// "30 ms", "30 ms, 5 Mbit/s", "30 ms, initcwnd 4", "30 ms, no TCP".
pub fn label(c: &Conditions) -> String {
    let mut s = format!("{} ms", plain_number(c.rtt_s * 1e3));
    if let Some(bps) = c.bandwidth_bps {
        s.push_str(&format!(", {} Mbit/s", plain_number(bps / 1e6)));
    }
    if c.initcwnd != netmodel::INITCWND {
        s.push_str(&format!(", initcwnd {}", c.initcwnd));
    }
    if !c.tcp_handshake {
        s.push_str(", no TCP");
    }
    s
}

fn ms(s: f64) -> String {
    if s < 0.01 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{} ms", figure(s * 1e3))
    }
}

/// Wire figures and modelled time to first byte, a row per cell.
pub fn model_table(rows: &[&WireRow], conds: &[Conditions]) -> Table {
    let mut header: Vec<String> = [
        "scenario",
        "client -> server",
        "C->S B",
        "S->C B",
        "flights C/S",
        "ClientHello B",
        "largest flight B",
        "ready C/S (RTT)",
        "path CPU µs",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(conds.iter().map(|c| format!("first byte @ {}", label(c))));
    let rows = rows
        .iter()
        .map(|w| {
            let n = |m| figure(w.get(m));
            let mut cells = vec![
                Cell::plain(w.scenario),
                Cell::plain(w.pair()),
                Cell::plain(n(Metric::ClientWireBytes)),
                Cell::plain(n(Metric::ServerWireBytes)),
                Cell::plain(format!(
                    "{}/{}",
                    w.get(Metric::ClientFlights),
                    w.get(Metric::ServerFlights)
                )),
                Cell::plain(n(Metric::ClientHelloBytes)),
                Cell::plain(n(Metric::LargestFlightBytes)),
                Cell::plain(format!(
                    "{}/{}",
                    w.get(Metric::ClientReadyRtts),
                    w.get(Metric::ServerReadyRtts)
                )),
                Cell::plain(figure(w.get(Metric::PathCpuNs) / 1e3)),
            ];
            for c in conds {
                let e = netmodel::time_to_first_byte(w.trace, c);
                cells.push(if e.window_stalls > 0 {
                    Cell::with(
                        format!("{} (+{} RTT)", ms(e.ttfb_s), e.window_stalls),
                        Class::Bad,
                        Some(format!(
                            "a flight overflows the initial window of {} x {} bytes: {} more round trip(s)",
                            c.initcwnd, c.mss, e.window_stalls
                        )),
                    )
                } else {
                    Cell::plain(ms(e.ttfb_s))
                });
            }
            cells
        })
        .collect();
    Table {
        caption: "Bytes each side sends until both have finished the handshake (a TLS 1.3 server's tickets included), flights each way, the client's first flight, the largest flight, round trips until each side may send data, CPU on the path, and the modelled time from connect to the response's first byte.".into(),
        header,
        rows,
        label_cols: 2,
    }
}

/// Modelled time to first byte against RTT for the baseline's own pair in each scenario.
pub fn ttfb_chart(rows: &[WireRow], baseline: &str) -> Option<Chart> {
    let rtts: Vec<f64> = (0..=8).map(|i| f64::from(i) * 25.0).collect();
    let series: Vec<Series> = rows
        .iter()
        .filter(|w| w.client == baseline && w.server == baseline)
        .map(|w| Series {
            name: w.scenario.to_string(),
            points: rtts
                .iter()
                .map(|ms| {
                    let t = netmodel::time_to_first_byte(w.trace, &Conditions::at_rtt(ms / 1e3))
                        .ttfb_s
                        * 1e3;
                    Some(Point {
                        median: t,
                        low: t,
                        high: t,
                    })
                })
                .collect(),
        })
        .collect();
    (!series.is_empty()).then(|| Chart {
        kind: ChartKind::Lines,
        title: format!("Modelled first-byte time against RTT, {baseline} with itself"),
        unit: "ms from connect to the first response byte (lower is better)".into(),
        categories: rtts.iter().map(|r| format!("{r} ms")).collect(),
        series,
    })
}

/// The delay-proxy check: measured against modelled, a row per scenario and RTT.
pub fn check_table(check: &ProxyCheck) -> Table {
    check_table_captioned(check, format!("Real connections over loopback TCP through tlsmatrix's delay proxy ({}), against the model without TCP's handshake (the proxy cannot delay it).", check.timestamp))
}

/// The check's rows under `caption`: TCP's check and QUIC's share the columns.
pub fn check_table_captioned(check: &ProxyCheck, caption: String) -> Table {
    Table {
        caption,
        header: [
            "scenario",
            "client -> server",
            "RTT",
            "measured ms [95% CI]",
            "model ms",
            "off by",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows: check
            .rows
            .iter()
            .map(|r| {
                let off = r.deviation();
                vec![
                    Cell::plain(&r.scenario),
                    Cell::plain(format!("{} -> {}", r.client, r.server)),
                    Cell::plain(format!("{} ms", plain_number(r.rtt_ms))),
                    Cell::plain(format!(
                        "{:.2} [{:.2}-{:.2}]",
                        r.measured_ms, r.measured_low_ms, r.measured_high_ms
                    )),
                    Cell::plain(format!("{:.2}", r.model_ms)),
                    Cell::with(
                        format!("{:+.1}%", off * 100.0),
                        if off.abs() <= 0.10 {
                            Class::Same
                        } else {
                            Class::Bad
                        },
                        None,
                    ),
                ]
            })
            .collect(),
        label_cols: 2,
    }
}

/// Sentences that state what the figures show for the baseline pair: what post-quantum key
/// exchange, a retry, TLS 1.2 and a long chain cost on the wire.
pub fn findings(rows: &[WireRow], baseline: &str) -> Vec<String> {
    let own = |id: &str| {
        rows.iter()
            .find(|w| w.scenario == id && w.client == baseline && w.server == baseline)
    };
    let base_id = "handshake-tls13-ecdsa-p256-x25519-full";
    let mut out = Vec::new();
    let Some(base) = own(base_id) else {
        return out;
    };
    let at = |w: &WireRow, c: &Conditions| netmodel::time_to_first_byte(w.trace, c).ttfb_s;
    let slow = Conditions {
        bandwidth_bps: Some(5e6),
        ..Conditions::at_rtt(0.030)
    };
    if let Some(pq) = own("handshake-tls13-ecdsa-p256-x25519mlkem768-full") {
        out.push(format!(
            "X25519MLKEM768 adds {} bytes to {baseline}'s ClientHello and {} to the server's flight; that costs no round trip (the largest flight, {} bytes, stays inside the initial window of {} bytes) and {} at 5 Mbit/s.",
            figure(pq.get(Metric::ClientHelloBytes) - base.get(Metric::ClientHelloBytes)),
            figure(pq.get(Metric::ServerWireBytes) - base.get(Metric::ServerWireBytes)),
            figure(pq.get(Metric::LargestFlightBytes)),
            figure(f64::from(netmodel::INITCWND * netmodel::MSS)),
            ms(at(pq, &slow) - at(base, &slow)),
        ));
    }
    // The libraries side by side, each with itself.
    let selves: Vec<&WireRow> = rows
        .iter()
        .filter(|w| {
            w.scenario == base_id
                && w.client == w.server
                && !tlsmatrix_model::record::is_aa(w.client)
        })
        .collect();
    let by = |m: Metric| move |a: &&&WireRow, b: &&&WireRow| a.get(m).total_cmp(&b.get(m));
    if let (Some(lo), Some(hi)) = (
        selves.iter().min_by(by(Metric::ClientHelloBytes)),
        selves.iter().max_by(by(Metric::ClientHelloBytes)),
    ) {
        if selves.len() > 1 {
            out.push(format!(
                "Each library with itself in {base_id}: ClientHellos from {} bytes ({}) to {} ({}), servers' handshake bytes from {} to {}; the table below sets them side by side.",
                figure(lo.get(Metric::ClientHelloBytes)),
                lo.client,
                figure(hi.get(Metric::ClientHelloBytes)),
                hi.client,
                figure(selves.iter().map(|w| w.get(Metric::ServerWireBytes)).fold(f64::INFINITY, f64::min)),
                figure(selves.iter().map(|w| w.get(Metric::ServerWireBytes)).fold(0.0, f64::max)),
            ));
        }
    }
    let rtt30 = Conditions::at_rtt(0.030);
    for (id, what) in [
        (
            "handshake-tls13-ecdsa-p256-x25519-full-hrr",
            "A HelloRetryRequest",
        ),
        (
            "handshake-tls12-ecdsa-p256-x25519-full",
            "TLS 1.2's full handshake",
        ),
        (
            "handshake-tls13-rsa-3072-x25519-full-chain4",
            "A four-certificate RSA-3072 chain",
        ),
    ] {
        if let Some(w) = own(id) {
            out.push(format!(
                "{what} costs {} at 30 ms RTT ({} against {}; the client may send after {} RTT, largest flight {} bytes).",
                ms(at(w, &rtt30) - at(base, &rtt30)),
                ms(at(w, &rtt30)),
                ms(at(base, &rtt30)),
                w.get(Metric::ClientReadyRtts),
                figure(w.get(Metric::LargestFlightBytes)),
            ));
        }
    }
    out
}

/// The handshakes the libraries are set side by side on, each with itself.
const COMPARED: &[(&str, &str)] = &[
    ("handshake-tls13-ecdsa-p256-x25519-full", "1.3"),
    ("handshake-tls13-ecdsa-p256-x25519mlkem768-full", "1.3 PQ"),
    ("handshake-tls12-ecdsa-p256-x25519-full", "1.2"),
];

/// Each library with itself: what its client and its server put on the wire. The libraries
/// differ in what they offer (extensions, signature algorithms, key shares), in their
/// middlebox-compatibility records and in their tickets.
pub fn library_table(rows: &[WireRow]) -> Option<Table> {
    let mut impls: Vec<&str> = Vec::new();
    for w in rows {
        if w.client == w.server
            && !tlsmatrix_model::record::is_aa(w.client)
            && !impls.contains(&w.client)
        {
            impls.push(w.client);
        }
    }
    let present: Vec<&(&str, &str)> = COMPARED
        .iter()
        .filter(|(id, _)| rows.iter().any(|w| w.scenario == *id))
        .collect();
    if impls.len() < 2 || present.is_empty() {
        return None;
    }
    let mut header = vec!["impl (with itself)".to_string()];
    for (_, name) in &present {
        header.push(format!("{name} CH"));
        header.push(format!("{name} C->S"));
        header.push(format!("{name} S->C"));
    }
    let table_rows = impls
        .iter()
        .map(|imp| {
            let mut cells = vec![Cell::plain(*imp)];
            for (id, _) in &present {
                let w = rows
                    .iter()
                    .find(|w| w.scenario == *id && w.client == *imp && w.server == *imp);
                for m in [
                    Metric::ClientHelloBytes,
                    Metric::ClientWireBytes,
                    Metric::ServerWireBytes,
                ] {
                    cells.push(Cell::plain(w.map_or("-".to_string(), |w| figure(w.get(m)))));
                }
            }
            cells
        })
        .collect();
    Some(Table {
        caption: "Each library with itself, in bytes, with an ECDSA P-256 certificate: 1.3 is TLS 1.3 with X25519, 1.3 PQ with X25519MLKEM768, 1.2 TLS 1.2 with X25519; CH the ClientHello, C->S and S->C what each side sent until both had finished (the client's Finished flight carries the 100-byte request when nothing arrived in between; the server's includes its tickets). -: not measured (the library lacks the group or the version, or the run left it out).".into(),
        header,
        rows: table_rows,
        label_cols: 1,
    })
}

const METHOD: &str = "Every figure here is read from the bytes the two libraries wrote to each other in memory, not from anything they report. A flight is what one side writes without reading anything new from its peer; the flight it waits for is the peer's flight holding the last byte it had read. Each connection is a handshake, a 100-byte request and a 1,000-byte response, and every one is checked against the round trips its protocol allows (a TLS 1.3 full handshake: the client may send after one, the server after one and a half). The model then sends each flight when the one it waits for has arrived and its sender has done its measured CPU work: half a round trip per crossing, the bytes at the link's bandwidth, and a round trip more whenever a flight overflows TCP's congestion window (10 segments of 1,460 bytes at first, growing by slow start); the connection starts with TCP's own round trip. `tlsmatrix wire --rtt ... --bandwidth ... --initcwnd ...` models other conditions.";

/// The section, when there is a wire run.
pub fn section(run: &RunData, check: Option<&ProxyCheck>, baseline: &str) -> Option<Section> {
    let rows = wire_rows(run);
    if rows.is_empty() {
        return None;
    }
    let mut blocks = vec![Block::Para(format!("{METHOD} Run {}.", run.run_id))];
    let found = findings(&rows, baseline);
    if !found.is_empty() {
        blocks.push(Block::Bullets(found));
    }
    // At a glance the baseline with itself per scenario; every pair folded below the chart.
    let conds = default_conditions();
    let (own, others): (Vec<&WireRow>, Vec<&WireRow>) = rows
        .iter()
        .partition(|w| w.client == baseline && w.server == baseline);
    if !own.is_empty() {
        let mut t = model_table(&own, &conds);
        t.caption = format!("{baseline} with itself. {}", t.caption);
        blocks.push(Block::Table(t));
    }
    if let Some(t) = library_table(&rows) {
        blocks.push(Block::Table(t));
    }
    if let Some(chart) = ttfb_chart(&rows, baseline) {
        blocks.push(Block::Chart(chart));
    }
    if !others.is_empty() {
        let all: Vec<&WireRow> = rows.iter().collect();
        blocks.push(Block::Folded(
            format!("Every pair ({} cells)", all.len()),
            vec![Block::Table(model_table(&all, &conds))],
        ));
    }
    if let Some(check) = check.filter(|c| !c.rows.is_empty()) {
        let worst = check
            .rows
            .iter()
            .map(|r| r.deviation().abs())
            .fold(0.0, f64::max);
        let by_rtt = |a: &&CheckRow, b: &&CheckRow| a.rtt_ms.total_cmp(&b.rtt_ms);
        let nearest = check.rows.iter().min_by(by_rtt).expect("not empty");
        let farthest = check.rows.iter().max_by(by_rtt).expect("not empty");
        blocks.push(Block::Para(format!(
            "The model checked over real sockets: the largest difference is {:.1}%. A real connection pays what memory does not (socket calls, the kernel's loopback path, the proxy's thread hand-offs, caches gone cold while a side waits): {:.2} ms over the model at {} ms RTT, where that is most of the time, and {:.2} ms ({:+.1}%) at {} ms.",
            worst * 100.0,
            nearest.measured_ms - nearest.model_ms,
            plain_number(nearest.rtt_ms),
            farthest.measured_ms - farthest.model_ms,
            farthest.deviation() * 100.0,
            plain_number(farthest.rtt_ms),
        )));
        blocks.push(Block::Table(check_table(check)));
    }
    Some(Section {
        id: "network".into(),
        title: "On the wire".into(),
        blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row<'a>(scenario: &'a str, imp: &'a str, hello: f64, trace: &'a Trace) -> WireRow<'a> {
        WireRow {
            scenario,
            client: imp,
            server: imp,
            trace,
            figures: vec![
                (Metric::ClientHelloBytes, hello),
                (Metric::ClientWireBytes, hello + 186.0),
                (Metric::ServerWireBytes, 700.0),
            ],
        }
    }

    /// Libraries are set side by side each with itself; the A/A copy and cross pairs stay
    /// out, and a scenario a library did not run shows "-".
    #[test]
    fn the_library_table_has_a_row_per_impl_with_itself() {
        use tlsmatrix_model::trace::Flight;
        use tlsmatrix_model::trace::Sender;
        let flight = |from, bytes, waits_for| Flight {
            from,
            bytes,
            waits_for,
            cpu_ns: 1000,
        };
        let t = Trace {
            flights: vec![
                flight(Sender::Client, 192, None),
                flight(Sender::Server, 700, Some(0)),
                flight(Sender::Client, 186, Some(1)),
                flight(Sender::Server, 1022, Some(2)),
            ],
            handshake_flights: 3,
            client_finished_after: Some(1),
            server_finished_after: Some(2),
            request: 2,
            response: 3,
            tail_ns: 0,
        };
        let (plain, pq) = (COMPARED[0].0, COMPARED[1].0);
        let aa = tlsmatrix_model::record::aa_label("a");
        let mut rows = vec![
            row(plain, "a", 192.0, &t),
            row(pq, "a", 1376.0, &t),
            row(plain, "go", 241.0, &t),
            row(plain, &aa, 192.0, &t),
        ];
        let mut cross = row(plain, "a", 1.0, &t);
        cross.server = "go";
        rows.push(cross);
        let table = library_table(&rows).expect("two libraries");
        let text: Vec<Vec<String>> = table
            .rows
            .iter()
            .map(|r| r.iter().map(|c| c.text.clone()).collect())
            .collect();
        assert_eq!(
            text,
            [
                ["a", "192", "378", "700", "1,376", "1,562", "700"],
                ["go", "241", "427", "700", "-", "-", "-"],
            ]
        );
        assert!(findings(&rows, "a")
            .iter()
            .any(|f| f.contains("from 192 bytes (a) to 241 (go)")));
    }
}
