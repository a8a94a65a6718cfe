//! The libp2p transport's headline: what its std backend costs against upstream go-libp2p
//! when every handshake meets a new peer (what a node meets on a DHT walk or in a gossip
//! mesh), beside the same two peers reconnecting (which a verified-certificate cache
//! flatters), and against the like-for-like reference: upstream with the certificate
//! self-signature check the libp2p TLS spec requires and upstream skips.
//!
//! Every arm of a workload was sampled in the same rounds against upstream's, so the std
//! backend over the like-for-like arm is the quotient of their ratios round by round, a
//! paired factor of its own.

use tlsmatrix_model::record::Record;

pub use tlsmatrix_analysis::libp2p::STD_TARGET;
use tlsmatrix_analysis::libp2p::{against_upstream, dial_stacks, DialStack, DIAL_PREFIX, QUIC};

use crate::doc::{Block, Cell, Class, Table};
use crate::figures::{factor_text, figure};

/// The handshake workloads, the one users feel first, with the words that say which is which
/// and whether the like-for-like reference applies: reconnecting, the std backend's cache
/// spares it the checks that reference makes on every handshake.
const WORKLOADS: &[(&str, &str, bool)] = &[
    (
        "libp2p-handshake-new-peers-",
        "New peers (both sides made anew for every handshake: the cost a node pays meeting peers)",
        true,
    ),
    (
        "libp2p-handshake-tls13-",
        "Reconnecting (the same two peers again and again: a warm path a verified-certificate cache flatters)",
        false,
    ),
];

/// One paragraph per handshake scenario of the run, new peers first.
pub fn headlines(records: &[Record]) -> Vec<String> {
    let mut out = Vec::new();
    for &(prefix, what, like_for_like) in WORKLOADS {
        let mut scenarios: Vec<&str> = records
            .iter()
            .map(|r| r.scenario.as_str())
            .filter(|s| s.starts_with(prefix))
            .collect();
        scenarios.sort();
        scenarios.dedup();
        for scenario in scenarios {
            if let Some(line) = headline(records, scenario, what, like_for_like) {
                out.push(line);
            }
        }
    }
    out
}

fn headline(records: &[Record], scenario: &str, what: &str, like_for_like: bool) -> Option<String> {
    let f = against_upstream(records, scenario, like_for_like)?;
    let group = scenario.rsplit('-').next().unwrap_or_default();
    let mut line = format!(
        "{what}, {group}: the std backend takes {} upstream's time",
        factor_text(&f.std)
    );
    if let Some(like) = f.like_for_like {
        let verdict = if like.met { "met" } else { "missed" };
        line.push_str(&format!(
            "; upstream with the self-signature check the spec requires (and upstream skips) takes {}, so the std backend against that like-for-like reference takes {} (target <= {STD_TARGET:.2}x: {verdict})",
            factor_text(&like.spec),
            factor_text(&like.std_over_spec)
        ));
    }
    line.push('.');
    Some(line)
}

/// libp2p over QUIC against TCP: for each dial scenario of the Go run, a sentence on what a
/// node meeting a new peer gets from QUIC, and each stack's row.
pub fn dial_blocks(records: &[Record], run_id: &str) -> Vec<Block> {
    let mut scenarios: Vec<&str> = records
        .iter()
        .map(|r| r.scenario.as_str())
        .filter(|s| s.starts_with(DIAL_PREFIX))
        .collect();
    scenarios.sort();
    scenarios.dedup();
    let mut blocks = Vec::new();
    for scenario in scenarios {
        let stacks = dial_stacks(records, scenario);
        if stacks.is_empty() {
            continue;
        }
        let group = scenario.rsplit('-').next().unwrap_or_default();
        blocks.extend(dial_sentence(&stacks, group).map(Block::Para));
        blocks.push(Block::Table(dial_table(&stacks, group, run_id)));
    }
    blocks
}

/// How a stack is built: QUIC, or TCP with the named security transport and yamux.
fn stack_name(imp: &str) -> String {
    if imp == QUIC {
        format!("QUIC ({imp})")
    } else {
        format!("TCP + {imp} + yamux")
    }
}

fn dial_sentence(stacks: &[DialStack], group: &str) -> Option<String> {
    let (tcp, quic) = (stacks.first()?, stacks.iter().find(|s| s.imp == QUIC)?);
    let (t, q) = (tcp.first_byte.last()?, quic.first_byte.last()?);
    Some(format!(
        "libp2p over QUIC, a new peer, {group}: go-libp2p's QUIC transport reads the peer's first stream byte after {} round trips, {} over TCP ({}): {:.1} ms against {:.1} ms at {} ms RTT as modelled ({:.1} ms and {:.1} ms measured through the delay link), for {} the CPU per connection.",
        quic.round_trips,
        tcp.round_trips,
        stack_name(&tcp.imp),
        q.model_ms,
        t.model_ms,
        q.rtt_ms,
        q.measured_ms,
        t.measured_ms,
        quic.cpu_factor.as_ref().map_or("-".into(), factor_text),
    ))
}

fn dial_table(stacks: &[DialStack], group: &str, run_id: &str) -> Table {
    let reference = stacks
        .first()
        .map(|s| stack_name(&s.imp))
        .unwrap_or_default();
    let mut header = vec![
        "stack".to_string(),
        "CPU µs per connection".into(),
        format!("CPU × {reference}"),
        "round trips to first byte".into(),
    ];
    if let Some(s) = stacks.first() {
        for fb in &s.first_byte {
            header.push(format!("first byte @{} ms, model", fb.rtt_ms));
            header.push(format!("@{} ms, measured", fb.rtt_ms));
        }
    }
    let rows = stacks
        .iter()
        .map(|s| {
            let [median, lo, hi] = s.cpu_ns;
            let mut row = vec![
                Cell::with(stack_name(&s.imp), Class::Plain, Some(s.version.clone())),
                Cell::with(
                    figure(median / 1e3),
                    Class::Plain,
                    Some(format!(
                        "95% interval {}-{} µs",
                        figure(lo / 1e3),
                        figure(hi / 1e3)
                    )),
                ),
                s.cpu_factor.as_ref().map_or(Cell::plain("reference"), |f| {
                    let class = match (f.significant, f.ratio > 1.0) {
                        (false, _) => Class::Same,
                        (true, true) => Class::Bad,
                        (true, false) => Class::Good,
                    };
                    Cell::with(factor_text(f), class, None)
                }),
                Cell::plain(format!("{}", s.round_trips)),
            ];
            for fb in &s.first_byte {
                row.push(Cell::plain(format!("{:.1}", fb.model_ms)));
                row.push(Cell::plain(format!("{:.1}", fb.measured_ms)));
            }
            row
        })
        .collect();
    Table {
        caption: format!(
            "libp2p over QUIC against TCP, {group} (make bench-go, run {run_id}): a whole connection to a peer never met and its first stream byte each way, both nodes made anew untimed; CPU is the process's (both peers'); model = round trips × RTT + CPU; measured = through delay lines on every socket (a TCP connect waits one round trip)"
        ),
        header,
        rows,
        label_cols: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_analysis::fixture::{libp2p_arm as arm, libp2p_dial};
    use tlsmatrix_analysis::libp2p::{SPEC, STD};

    #[test]
    fn new_peers_lead_and_the_like_for_like_factor_is_the_round_by_round_quotient() {
        let new = "libp2p-handshake-new-peers-tls13-ecdsa-p256-x25519";
        let again = "libp2p-handshake-tls13-ecdsa-p256-x25519";
        let records = vec![
            arm(again, STD, &[0.8; 9]),
            arm(again, SPEC, &[1.2; 9]),
            arm(
                new,
                STD,
                &[1.10, 1.21, 1.32, 1.10, 1.21, 1.32, 1.10, 1.21, 1.32],
            ),
            arm(new, SPEC, &[1.0, 1.1, 1.2, 1.0, 1.1, 1.2, 1.0, 1.1, 1.2]),
        ];
        let lines = headlines(&records);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("New peers"), "{}", lines[0]);
        // 1.10/1.0, 1.21/1.1 and 1.32/1.2 are all 1.10: the quotient is exact each round.
        assert!(lines[0].contains("takes 1.10x [1.10-1.10]"), "{}", lines[0]);
        assert!(lines[0].contains("target <= 1.03x: missed"), "{}", lines[0]);
        assert!(lines[1].starts_with("Reconnecting"), "{}", lines[1]);
        assert!(!lines[1].contains("like-for-like"), "{}", lines[1]);
    }

    #[test]
    fn libp2p_over_quic_is_a_sentence_and_a_row_per_stack() {
        let s = "libp2p-dial-new-peers-tls13-ecdsa-p256-x25519";
        let blocks = dial_blocks(&libp2p_dial(s), "go-bench-1");
        let [Block::Para(sentence), Block::Table(t)] = &blocks[..] else {
            panic!("{} blocks", blocks.len())
        };
        assert!(
            sentence.contains("after 2 round trips, 4 over TCP (TCP + go-libp2p-upstream + yamux)")
                && sentence.contains("201.8 ms against 401.2 ms at 100 ms RTT")
                && sentence.contains("1.50x"),
            "{sentence}"
        );
        let texts: Vec<Vec<&str>> = t
            .rows
            .iter()
            .map(|r| r.iter().map(|c| c.text.as_str()).collect())
            .collect();
        assert_eq!(
            texts[1],
            [
                "QUIC (go-libp2p-quic)",
                "1,800",
                texts[1][2],
                "2",
                "41.8",
                "45.0",
                "201.8",
                "205.0"
            ]
        );
        assert_eq!(texts[0][2], "reference");
        assert_eq!(t.rows[1][2].class, Class::Bad);
        assert!(t.header[4].contains("@20 ms"), "{:?}", t.header);
        assert!(dial_blocks(&[], "r").is_empty());
    }
}
