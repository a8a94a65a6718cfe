//! A QUIC run (`tlsmatrix run --measure quic`) as data: per scenario and impl, each side's
//! QUIC handshake beside the same library's TCP handshake with the paired factor, what the
//! datagrams showed, and where the server's amplification limit held a flight back.

use tlsmatrix_history::RunData;
use tlsmatrix_model::record::{Metric, Record};
use tlsmatrix_model::side::Side;

use crate::self_pairs::record;

/// One side of one impl on one scenario.
#[derive(Debug, Clone, Copy)]
pub struct SideFigures<'a> {
    pub quic: &'a Record,
    pub tcp: &'a Record,
    /// QUIC's time over TCP's, per sample pair.
    pub factor: &'a Record,
}

/// What a handshake's datagrams showed (medians; the same every handshake but for a
/// signature's length).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    /// Client's, then server's.
    pub datagrams: [f64; 2],
    pub bytes: [f64; 2],
    pub client_first_datagram: f64,
    pub client_ready_rtts: f64,
    pub server_held_bytes: f64,
    pub first_flight_ratio: f64,
}

/// The network model's time to first byte, in milliseconds (medians), over QUIC and over
/// TCP + TLS 1.3, at 20 and 100 ms RTT.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FirstByte {
    pub quic_ms: [f64; 2],
    pub tcp_ms: [f64; 2],
}

/// The round trips [`FirstByte`] is modelled at, in milliseconds.
pub const FIRST_BYTE_RTTS_MS: [f64; 2] = [20.0, 100.0];

/// One impl's QUIC stack on one scenario.
#[derive(Debug, Clone)]
pub struct QuicCell<'a> {
    pub scenario: String,
    pub imp: String,
    /// Client, then server; `None` where a figure is missing.
    pub sides: [Option<SideFigures<'a>>; 2],
    pub wire: Option<Wire>,
    pub first_byte: Option<FirstByte>,
}

impl QuicCell<'_> {
    pub fn side(&self, side: Side) -> Option<SideFigures<'_>> {
        self.sides[side.index()]
    }

    /// Whether the server's first flight could not carry its whole handshake.
    pub fn held_back(&self) -> bool {
        self.wire.is_some_and(|w| w.server_held_bytes > 0.0)
    }
}

/// Every impl's QUIC figures per scenario, in the order the run met them.
pub fn cells(run: &RunData) -> Vec<QuicCell<'_>> {
    let mut out = Vec::new();
    for scenario in run.scenarios() {
        for imp in run.impls() {
            let get = |m| record(run, scenario, &imp, m);
            let side = |s: Side| {
                Some(SideFigures {
                    quic: get(Metric::quic_ns_of(s))?,
                    tcp: get(Metric::handshake_ns_of(s))?,
                    factor: get(Metric::quic_over_tcp_of(s))?,
                })
            };
            let sides = [side(Side::Client), side(Side::Server)];
            if sides.iter().all(Option::is_none) {
                continue;
            }
            let median = |m| get(m).map(|r| r.median);
            let wire = (|| {
                Some(Wire {
                    datagrams: [
                        median(Metric::ClientQuicDatagrams)?,
                        median(Metric::ServerQuicDatagrams)?,
                    ],
                    bytes: [
                        median(Metric::ClientQuicBytes)?,
                        median(Metric::ServerQuicBytes)?,
                    ],
                    client_first_datagram: median(Metric::ClientQuicFirstDatagram)?,
                    client_ready_rtts: median(Metric::ClientQuicReadyRtts)?,
                    server_held_bytes: median(Metric::ServerQuicHeldBytes)?,
                    first_flight_ratio: median(Metric::ServerQuicFirstFlightRatio)?,
                })
            })();
            let first_byte = (|| {
                Some(FirstByte {
                    quic_ms: [
                        median(Metric::QuicModelTtfb20Ms)?,
                        median(Metric::QuicModelTtfb100Ms)?,
                    ],
                    tcp_ms: [
                        median(Metric::TcpModelTtfb20Ms)?,
                        median(Metric::TcpModelTtfb100Ms)?,
                    ],
                })
            })();
            out.push(QuicCell {
                scenario: scenario.to_string(),
                imp,
                sides,
                wire,
                first_byte,
            });
        }
    }
    out
}

/// A factor's standing: its whole interval above 1 (QUIC costs more), below, or within
/// noise of TCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Costlier,
    Cheaper,
    Same,
}

pub fn standing(factor: &Record) -> Standing {
    if factor.ci_low > 1.0 {
        Standing::Costlier
    } else if factor.ci_high < 1.0 {
        Standing::Cheaper
    } else {
        Standing::Same
    }
}

/// The scenarios whose server flight the amplification limit (or the congestion window)
/// held back, each with the bytes held and the client's round trips, from the first impl
/// measured on it.
pub fn held_back<'a>(cells: &'a [QuicCell<'a>]) -> Vec<(&'a str, Wire)> {
    let mut out: Vec<(&str, Wire)> = Vec::new();
    for c in cells.iter().filter(|c| c.held_back()) {
        if !out.iter().any(|(s, _)| *s == c.scenario) {
            out.push((&c.scenario, c.wire.expect("held_back reads the wire")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::record::Env;

    fn quic_records(imp: &str, held: f64) -> Vec<Record> {
        let s = "handshake-tls13-ecdsa-p256-x25519-full";
        let r = |m: Metric, samples: Vec<f64>| {
            Record::from_samples("q", s, (imp, "1"), (imp, "1"), m, samples, Env::default())
                .expect("samples make a record")
        };
        let spread = |v: f64| vec![v, v * 1.01, v * 0.99];
        vec![
            r(Metric::ClientCpuNs, spread(200e3)),
            r(Metric::ServerCpuNs, spread(90e3)),
            r(Metric::ClientQuicNs, spread(260e3)),
            r(Metric::ServerQuicNs, spread(170e3)),
            r(Metric::ClientQuicOverTcp, spread(1.3)),
            r(Metric::ServerQuicOverTcp, spread(1.9)),
            r(Metric::ClientQuicDatagrams, vec![3.0; 3]),
            r(Metric::ServerQuicDatagrams, vec![2.0; 3]),
            r(Metric::ClientQuicBytes, vec![2459.0; 3]),
            r(Metric::ServerQuicBytes, vec![1234.0; 3]),
            r(Metric::ClientQuicFirstDatagram, vec![1200.0; 3]),
            r(
                Metric::ClientQuicReadyRtts,
                vec![1.0 + f64::from(held > 0.0); 3],
            ),
            r(Metric::ServerQuicHeldBytes, vec![held; 3]),
            r(Metric::ServerQuicFirstFlightRatio, vec![1.0; 3]),
            r(Metric::QuicModelTtfb20Ms, spread(40.6)),
            r(Metric::TcpModelTtfb20Ms, spread(60.5)),
            r(Metric::QuicModelTtfb100Ms, spread(200.6)),
            r(Metric::TcpModelTtfb100Ms, spread(300.5)),
        ]
    }

    #[test]
    fn each_impl_gets_its_sides_its_factor_and_its_wire() {
        let mut records = quic_records("rustls-aws-lc", 0.0);
        records.extend(quic_records("rustls-ring", 2400.0));
        let run = RunData {
            run_id: "q".into(),
            env: Env::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        };
        let cells = cells(&run);
        assert_eq!(cells.len(), 2);
        let c = &cells[0];
        assert_eq!(c.imp, "rustls-aws-lc");
        let client = c.side(Side::Client).unwrap();
        assert_eq!(client.quic.metric, Metric::ClientQuicNs);
        assert_eq!(client.tcp.metric, Metric::ClientCpuNs);
        assert_eq!(standing(client.factor), Standing::Costlier);
        assert_eq!(c.wire.unwrap().bytes, [2459.0, 1234.0]);
        assert!(!c.held_back() && cells[1].held_back());
        let held = held_back(&cells);
        assert_eq!(held.len(), 1);
        assert_eq!(held[0].1.server_held_bytes, 2400.0);
        assert_eq!(held[0].1.client_ready_rtts, 2.0);
        let fb = c.first_byte.unwrap();
        assert_eq!((fb.quic_ms, fb.tcp_ms), ([40.6, 200.6], [60.5, 300.5]));
    }
}
