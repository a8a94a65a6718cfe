//! The QUIC section, from a QUIC run (`tlsmatrix run --measure quic`): each stack's QUIC
//! handshake per side beside the same library's TCP handshake with the paired factor, what
//! the datagrams showed (the amplification limit among it), the QUIC interop matrix of the
//! newest interop run, the stacks not measured and why, and the published figures this run
//! has no counterpart of, labelled.

use tlsmatrix_analysis::quic::{self, FirstByte, QuicCell, Wire, FIRST_BYTE_RTTS_MS};
use tlsmatrix_history::interop_file::CellLine;
use tlsmatrix_history::proxy_check::{DownloadRow, ProxyCheck};
use tlsmatrix_history::RunData;
use tlsmatrix_model::interop::Family;
use tlsmatrix_model::side::Side;

use crate::doc::{Block, Cell, Chart, ChartKind, Class, Point, Section, Series, Table};
use crate::figures::figure;
use crate::quic_bulk::factor_cell;
use crate::self_pairs::micros;

const METHOD: &str = "Each QUIC stack's handshake, driven through its own API over in-memory datagrams, sampled in turns with the same library's TLS-over-TCP handshake on the same scenario (the same suite, group, certificate and ALPN), each side's calls on its own clock. A QUIC handshake is timed until both sides are done and no datagram is in flight, the server's HANDSHAKE_DONE and the acknowledgements included; QUIC/TCP is the median of the per-sample ratios, with its 95% interval. Every handshake was checked: QUIC version 1 on every long-header packet, the ALPN, and the suite, group, scheme and chain the scenario names.";

/// What others published, labelled as such: this run measured none of it.
const PUBLISHED: &str = "What others published, not measured here: nginx's QUIC handshakes spent 12% of their CPU in one OpenSSL hash-table walk against 2% over TCP (quictls#10); MsQuic's own runs count handshakes per second for its TLS providers only, and record its regression on OpenSSL 3.0 (msquic#3410); a QUIC transfer fell from 110 to 20 KB/s at 50 ms between OpenSSL 3.5.2 and 3.5.3 (openssl#31134); Cloudflare reports that certificates are almost half the bytes of more than half of its QUIC connections.";

/// The handshake the section leads with.
const LEAD: &str = "handshake-tls13-ecdsa-p256-x25519-full";

fn handshake_row(c: &QuicCell) -> Vec<Cell> {
    let mut row = vec![Cell::plain(c.scenario.clone()), Cell::plain(c.imp.clone())];
    for side in [Side::Client, Side::Server] {
        match c.side(side) {
            Some(f) => {
                row.push(micros(f.quic));
                row.push(micros(f.tcp));
                row.push(factor_cell(f.factor));
            }
            None => row.extend((0..3).map(|_| Cell::plain("-"))),
        }
    }
    row
}

fn wire_row(c: &QuicCell, w: &Wire) -> Vec<Cell> {
    let n = |v: f64| Cell::plain(format!("{v:.0}"));
    vec![
        Cell::plain(c.scenario.clone()),
        Cell::plain(c.imp.clone()),
        n(w.datagrams[0]),
        n(w.bytes[0]),
        n(w.client_first_datagram),
        n(w.datagrams[1]),
        n(w.bytes[1]),
        Cell::plain(format!("{:.2}×", w.first_flight_ratio)),
        n(w.server_held_bytes),
        n(w.client_ready_rtts),
    ]
}

/// The lead handshake's sides, QUIC beside TCP, as bars with their intervals.
fn lead_chart(cells: &[QuicCell]) -> Option<Chart> {
    let lead: Vec<&QuicCell> = cells.iter().filter(|c| c.scenario == LEAD).collect();
    if lead.is_empty() {
        return None;
    }
    let point = |r: &tlsmatrix_model::record::Record| {
        Some(Point {
            median: r.median / 1e3,
            low: r.ci_low / 1e3,
            high: r.ci_high / 1e3,
        })
    };
    let mut categories = Vec::new();
    let mut tcp = Series {
        name: "TLS over TCP".into(),
        points: Vec::new(),
    };
    let mut over_quic = Series {
        name: "QUIC".into(),
        points: Vec::new(),
    };
    for c in lead {
        for side in [Side::Client, Side::Server] {
            let Some(f) = c.side(side) else { continue };
            categories.push(format!("{} {side}", c.imp));
            tcp.points.push(point(f.tcp));
            over_quic.points.push(point(f.quic));
        }
    }
    Some(Chart {
        kind: ChartKind::Bars,
        title: format!("{LEAD}: each side's handshake, TCP and QUIC"),
        unit: "µs per handshake (lower is better)".into(),
        categories,
        series: vec![tcp, over_quic],
    })
}

/// One sentence per impl on the lead handshake: QUIC's factor per side.
fn lead_sentence(cells: &[QuicCell]) -> Option<String> {
    let said: Vec<String> = cells
        .iter()
        .filter(|c| c.scenario == LEAD)
        .filter_map(|c| {
            let (cl, sv) = (c.side(Side::Client)?, c.side(Side::Server)?);
            let f = |r: &tlsmatrix_model::record::Record| {
                format!("{:.2}× [{:.2}-{:.2}]", r.median, r.ci_low, r.ci_high)
            };
            Some(format!(
                "{} {} as a client and {} as a server",
                c.imp,
                f(cl.factor),
                f(sv.factor)
            ))
        })
        .collect();
    (!said.is_empty()).then(|| {
        format!(
            "On {LEAD}, a QUIC handshake takes this much of the same library's TCP handshake's time: {}.",
            said.join("; ")
        )
    })
}

/// Where the server's first flight could not carry its handshake.
fn held_sentence(cells: &[QuicCell]) -> String {
    let held = quic::held_back(cells);
    if held.is_empty() {
        return "No server flight was held back: every server sent its whole handshake in its first flight, within three times the client's first datagram.".into();
    }
    let each: Vec<String> = held
        .iter()
        .map(|(scenario, w)| {
            format!(
                "{scenario} ({} bytes waited; the client could send after {:.0} round trips)",
                figure(w.server_held_bytes),
                w.client_ready_rtts
            )
        })
        .collect();
    format!(
        "The server's first flight could not carry its whole handshake within three times the client's first datagram (RFC 9000 §8.1), so the rest waited for the client's acknowledgement: {}.",
        each.join("; ")
    )
}

/// The cells not measured, one sentence per reason with the impls that gave it (an impl's
/// name in its reason read as "its"), so eleven stacks without QUIC read as one line.
fn not_measured(run: &RunData) -> Option<Block> {
    let mut by_reason: Vec<(String, Vec<String>)> = Vec::new();
    for c in run.cells.iter().filter(|c| c.client == c.server) {
        let reason = c
            .reason
            .strip_prefix(&format!("{}: ", c.client))
            .unwrap_or(&c.reason);
        let general = reason.replace(&c.client, "{impl}");
        match by_reason.iter_mut().find(|(r, _)| *r == general) {
            Some((_, impls)) if impls.contains(&c.client) => {}
            Some((_, impls)) => impls.push(c.client.clone()),
            None => by_reason.push((general, vec![c.client.clone()])),
        }
    }
    (!by_reason.is_empty()).then(|| {
        Block::Bullets(
            by_reason
                .into_iter()
                .map(|(reason, impls)| {
                    let who = if impls.len() == 1 { "it" } else { "each" };
                    format!(
                        "Not measured, {}: {}",
                        impls.join(", "),
                        reason.replace("{impl}", who)
                    )
                })
                .collect(),
        )
    })
}

/// The network model's time to first byte over QUIC beside TCP + TLS 1.3: a row per scenario,
/// each figure the range over the stacks that ran it (the hover names each stack's), when the
/// run modelled it.
fn first_byte_table(cells: &[QuicCell]) -> Option<Table> {
    let mut scenarios: Vec<&str> = Vec::new();
    for c in cells.iter().filter(|c| c.first_byte.is_some()) {
        if !scenarios.contains(&c.scenario.as_str()) {
            scenarios.push(&c.scenario);
        }
    }
    if scenarios.is_empty() {
        return None;
    }
    let rows = scenarios
        .iter()
        .map(|&scenario| {
            let of: Vec<(&str, FirstByte)> = cells
                .iter()
                .filter(|c| c.scenario == scenario)
                .filter_map(|c| Some((c.imp.as_str(), c.first_byte?)))
                .collect();
            let range = |f: &dyn Fn(&FirstByte) -> f64, sign: bool| {
                let values: Vec<f64> = of.iter().map(|(_, fb)| f(fb)).collect();
                let (lo, hi) = values
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
                let show = |v: f64| {
                    if sign {
                        format!("{v:+.1}")
                    } else {
                        format!("{v:.1}")
                    }
                };
                let text = if hi - lo < 0.05 {
                    show(lo)
                } else {
                    format!("{} to {}", show(lo), show(hi))
                };
                let each: Vec<String> = of
                    .iter()
                    .map(|(imp, fb)| format!("{imp} {}", show(f(fb))))
                    .collect();
                Cell {
                    text,
                    class: Class::Plain,
                    title: Some(each.join(", ")),
                }
            };
            let mut row = vec![Cell::plain(scenario), Cell::plain(of.len().to_string())];
            for i in 0..FIRST_BYTE_RTTS_MS.len() {
                row.push(range(&|fb: &FirstByte| fb.quic_ms[i], false));
                row.push(range(&|fb: &FirstByte| fb.tcp_ms[i], false));
                row.push(range(&|fb: &FirstByte| fb.quic_ms[i] - fb.tcp_ms[i], true));
            }
            row
        })
        .collect();
    let mut header = vec!["scenario".to_string(), "stacks".into()];
    for rtt in FIRST_BYTE_RTTS_MS {
        header.push(format!("QUIC ms @{rtt:.0} ms"));
        header.push(format!("TCP ms @{rtt:.0} ms"));
        header.push(format!("QUIC−TCP @{rtt:.0} ms"));
    }
    Some(Table {
        caption: "Modelled time from the client's first packet to a 1,000-byte response's first byte (the network model: each flight leaves when the one it waits for has arrived and its sender's measured CPU is spent; TCP's slow start from 10 segments; QUIC's flights as the amplification limit shaped them), over QUIC and over TCP + TLS 1.3 for the same library and scenario, each from one traced connection per sample (medians); each figure the range over the stacks (hover: each stack's)".into(),
        header,
        rows,
        label_cols: 2,
    })
}

/// The QUIC cases of the newest interop run, between the peers with a QUIC stack (those
/// with at least one case that applied), when it ran any.
fn interop_matrix(cells: &[CellLine]) -> Option<Block> {
    let is_quic = |c: &&CellLine| {
        tlsmatrix_model::interop::case(&c.case).is_ok_and(|k| k.family == Family::Quic)
    };
    let quic: Vec<CellLine> = cells.iter().filter(is_quic).cloned().collect();
    let stacks: Vec<&str> = crate::interop::peers_of(&quic)
        .into_iter()
        .filter(|p| {
            quic.iter()
                .any(|c| (c.client == *p || c.server == *p) && c.outcome != "unsupported")
        })
        .collect();
    let between: Vec<CellLine> = quic
        .iter()
        .filter(|c| stacks.contains(&c.client.as_str()) && stacks.contains(&c.server.as_str()))
        .cloned()
        .collect();
    if between.is_empty() {
        return None;
    }
    let cases = {
        let mut ids: Vec<&str> = between.iter().map(|c| c.case.as_str()).collect();
        ids.sort();
        ids.dedup();
        ids.join(", ")
    };
    Some(Block::Table(crate::interop::summary_matrix_titled(
        &between,
        format!(
            "QUIC interop over UDP on loopback ({cases}): passed of applicable cases per client (rows) and server (columns), from the newest interop run; hover a cell for the cases that did not pass"
        ),
    )))
}

/// What the section shows beside the QUIC run: the newest QUIC bulk run, QUIC check through
/// the UDP delay proxy, and interop run's cells.
#[derive(Default, Clone, Copy)]
pub struct Companions<'a> {
    pub bulk: Option<&'a RunData>,
    pub memory: Option<&'a RunData>,
    pub instructions: Option<&'a RunData>,
    pub proxy_check: Option<&'a ProxyCheck>,
    pub interop: Option<&'a [CellLine]>,
    /// The Go benchmarks' run, whose dial workload is libp2p over QUIC against TCP.
    pub libp2p: Option<&'a RunData>,
}

/// The QUIC check through the UDP delay proxy: the first byte against the model, and the
/// downloads against what slow start allows.
fn proxy_blocks(check: &ProxyCheck) -> Vec<Block> {
    let mut blocks = Vec::new();
    if !check.rows.is_empty() {
        blocks.push(Block::Table(crate::network::check_table_captioned(
            check,
            format!("The model checked: real QUIC connections over loopback UDP through tlsmatrix's UDP delay proxy ({}), each stack with itself, time to a 1,000-byte answer's first byte against the network model's figure for the same library and scenario", check.timestamp),
        )));
        let off = check
            .rows
            .iter()
            .filter(|r| r.deviation().abs() > 0.10)
            .count();
        blocks.push(Block::Para(format!(
            "{} of {} rows are within 10% of the model.",
            check.rows.len() - off,
            check.rows.len()
        )));
    }
    if !check.downloads.is_empty() {
        blocks.push(Block::Table(Table {
            caption: "Downloads over a new QUIC connection through the UDP delay proxy (hq-interop), from the client's first packet to the answer's last byte, against the least time slow start from RFC 9002's initial window allows with nothing lost: one round trip for the handshake, then a window doubling each round trip".into(),
            header: ["scenario", "impl", "RTT", "bytes", "measured ms [95% CI]", "slow start allows ms", "× that"]
                .map(String::from)
                .to_vec(),
            rows: check.downloads.iter().map(download_row).collect(),
            label_cols: 2,
        }));
    }
    blocks
}

fn download_row(d: &DownloadRow) -> Vec<Cell> {
    vec![
        Cell::plain(d.scenario.clone()),
        Cell::plain(d.client.clone()),
        Cell::plain(format!("{} ms", figure(d.rtt_ms))),
        Cell::plain(figure(d.bytes as f64)),
        Cell::plain(format!(
            "{} [{}-{}]",
            figure(d.measured_ms),
            figure(d.measured_low_ms),
            figure(d.measured_high_ms)
        )),
        Cell::plain(figure(d.ideal_ms)),
        Cell::plain(format!("{:.2}×", d.measured_ms / d.ideal_ms)),
    ]
}

/// The section, when the database has a QUIC run.
pub fn section(run: &RunData, with: Companions) -> Option<Section> {
    let cells = quic::cells(run);
    if cells.is_empty() && run.cells.is_empty() {
        return None;
    }
    let mut blocks = vec![Block::Para(METHOD.into())];
    blocks.extend(lead_chart(&cells).map(Block::Chart));
    blocks.extend(lead_sentence(&cells).map(Block::Para));
    let side_cols = |side: &str| {
        [
            format!("{side} QUIC µs"),
            format!("{side} TCP µs"),
            format!("{side} QUIC/TCP"),
        ]
    };
    let mut header = vec!["scenario".to_string(), "impl".into()];
    header.extend(side_cols("client"));
    header.extend(side_cols("server"));
    blocks.push(Block::Table(Table {
        caption: format!(
            "Each side's QUIC handshake against the same library's TCP handshake (run {}; hover: the interval)",
            run.run_id
        ),
        header,
        rows: cells.iter().map(handshake_row).collect(),
        label_cols: 2,
    }));
    // Where QUIC's extra time goes, in instructions by class, beside the time it costs.
    blocks.extend(
        with.instructions
            .map(crate::quic_instructions::blocks)
            .unwrap_or_default(),
    );
    blocks.push(Block::Table(Table {
        caption: "The datagrams of one QUIC handshake (UDP payload bytes; the same every handshake but for a signature's length)".into(),
        header: [
            "scenario",
            "impl",
            "client datagrams",
            "client bytes",
            "client Initial datagram",
            "server datagrams",
            "server bytes",
            "server first flight ×",
            "server bytes held back",
            "client ready RTTs",
        ]
        .map(String::from)
        .to_vec(),
        rows: cells
            .iter()
            .filter_map(|c| Some(wire_row(c, c.wire.as_ref()?)))
            .collect(),
        label_cols: 2,
    }));
    blocks.push(Block::Para(held_sentence(&cells)));
    blocks.extend(first_byte_table(&cells).map(Block::Table));
    blocks.extend(with.proxy_check.map(proxy_blocks).unwrap_or_default());
    blocks.extend(with.bulk.map(crate::quic_bulk::blocks).unwrap_or_default());
    blocks.extend(
        with.memory
            .map(crate::quic_memory::blocks)
            .unwrap_or_default(),
    );
    blocks.extend(with.interop.and_then(interop_matrix));
    blocks.extend(
        with.libp2p
            .map(|go| crate::libp2p::dial_blocks(&go.records, &go.run_id))
            .unwrap_or_default(),
    );
    blocks.extend(not_measured(run));
    blocks.push(Block::Para(PUBLISHED.into()));
    Some(Section {
        id: "quic".into(),
        title: "QUIC".into(),
        blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(case: &str, client: &str, server: &str, outcome: &str) -> CellLine {
        CellLine {
            run_id: "r".into(),
            case: case.into(),
            client: client.into(),
            server: server.into(),
            client_version: String::new(),
            server_version: String::new(),
            outcome: outcome.into(),
            reason: String::new(),
        }
    }

    #[test]
    fn the_first_byte_table_gives_each_scenario_its_range_over_the_stacks() {
        let cell = |scenario: &str, imp: &str, quic: f64, tcp: f64| QuicCell {
            scenario: scenario.into(),
            imp: imp.into(),
            sides: [None, None],
            wire: None,
            first_byte: Some(FirstByte {
                quic_ms: [quic, quic + 160.0],
                tcp_ms: [tcp, tcp + 240.0],
            }),
        };
        let cells = [
            cell("lead", "a", 40.4, 60.3),
            cell("lead", "b", 40.9, 60.9),
            cell("mldsa", "a", 60.7, 60.5),
        ];
        let t = first_byte_table(&cells).unwrap();
        let texts: Vec<Vec<&str>> = t
            .rows
            .iter()
            .map(|r| r.iter().map(|c| c.text.as_str()).collect())
            .collect();
        assert_eq!(
            texts[0][..5],
            [
                "lead",
                "2",
                "40.4 to 40.9",
                "60.3 to 60.9",
                "-20.0 to -19.9"
            ]
        );
        assert_eq!(texts[1][..5], ["mldsa", "1", "60.7", "60.5", "+0.2"]);
        assert_eq!(t.rows[0][2].title.as_deref(), Some("a 40.4, b 40.9"));
        assert!(first_byte_table(&[QuicCell {
            first_byte: None,
            ..cells[0].clone()
        }])
        .is_none());
    }

    #[test]
    fn the_quic_matrix_keeps_the_quic_cases_between_stacks_that_ran_one() {
        let mut cells = vec![cell("tls13", "a", "b", "fail")];
        for (c, s) in [("a", "a"), ("a", "b"), ("b", "a"), ("b", "b")] {
            cells.push(cell("quic-handshake", c, s, "pass"));
            cells.push(cell("quic-mldsa44", c, s, "unsupported"));
        }
        cells.push(cell("quic-chacha20", "b", "a", "fail"));
        for p in ["a", "b"] {
            cells.push(cell("quic-handshake", p, "none", "unsupported"));
            cells.push(cell("quic-handshake", "none", p, "unsupported"));
        }
        let Some(Block::Table(t)) = interop_matrix(&cells) else {
            panic!("no matrix");
        };
        // Only the two stacks: the peer without a QUIC stack has no row or column.
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.header.len(), 3);
        let texts: Vec<Vec<&str>> = t
            .rows
            .iter()
            .map(|r| r[1..].iter().map(|c| c.text.as_str()).collect())
            .collect();
        assert_eq!(texts, [["1/1", "1/1"], ["1/2", "1/1"]]);
        assert_eq!(t.rows[1][1].class, Class::Failed);
        assert!(t
            .caption
            .contains("quic-chacha20, quic-handshake, quic-mldsa44"));
        // No QUIC case ran: no matrix.
        assert!(interop_matrix(&cells[..1]).is_none());
    }
}
