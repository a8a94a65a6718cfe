//! The libp2p transport's headline: what its std backend costs against upstream go-libp2p
//! when every handshake meets a new peer (what a node meets on a DHT walk or in a gossip
//! mesh), beside the same two peers reconnecting (which a verified-certificate cache
//! flatters), and against the like-for-like reference: upstream with the certificate
//! self-signature check the libp2p TLS spec requires and upstream skips.
//!
//! Every arm of a workload was sampled in the same rounds against upstream's, so the std
//! backend over the like-for-like arm is the quotient of their ratios round by round, a
//! paired factor of its own.

use tlsmatrix_model::record::{Metric, Record};
use tlsmatrix_model::stats::{paired_factor, Factor};

use crate::figures::factor_text;

/// The transports' impl names, as `go/internal/bench` writes them.
const UPSTREAM: &str = "go-libp2p-upstream";
const SPEC: &str = "go-libp2p-upstream-selfsig";
const STD: &str = "go-libp2p-std";
/// The std backend's limit against the like-for-like reference, in time.
pub const STD_TARGET: f64 = 1.03;

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
    let time_of = |imp: &str| {
        records.iter().find(|r| {
            r.scenario == scenario
                && r.metric == Metric::NsPerOp
                && r.client == imp
                && r.server == imp
        })
    };
    let std = time_of(STD)?;
    let spec = time_of(SPEC).filter(|_| like_for_like);
    let against_upstream = std.paired.as_ref()?.factor()?;
    let group = scenario.rsplit('-').next().unwrap_or_default();
    let mut line = format!(
        "{what}, {group}: the std backend takes {} upstream's time",
        factor_text(&against_upstream)
    );
    if let Some(spec) = spec {
        if let (Some(check), Some(like)) = (
            spec.paired.as_ref().and_then(|p| p.factor()),
            quotient(std, spec),
        ) {
            let verdict = if like.ratio <= STD_TARGET {
                "met"
            } else {
                "missed"
            };
            line.push_str(&format!(
                "; upstream with the self-signature check the spec requires (and upstream skips) takes {}, so the std backend against that like-for-like reference takes {} (target <= {STD_TARGET:.2}x: {verdict})",
                factor_text(&check),
                factor_text(&like)
            ));
        }
    }
    line.push('.');
    Some(line)
}

/// A's time over B's, round by round, for two arms paired with the same reference in the
/// same rounds; `None` unless their rounds line up.
fn quotient(a: &Record, b: &Record) -> Option<Factor> {
    let (pa, pb) = (a.paired.as_ref()?, b.paired.as_ref()?);
    if pa.reference_client != pb.reference_client
        || pa.reference_client != UPSTREAM
        || pa.ratios.len() != pb.ratios.len()
        || pa.blocks != pb.blocks
    {
        return None;
    }
    let ratios: Vec<f64> = pa
        .ratios
        .iter()
        .zip(&pb.ratios)
        .map(|(x, y)| x / y)
        .collect();
    paired_factor(&ratios, &pa.blocks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::RecordFixture;

    fn arm(scenario: &str, imp: &str, ratios: &[f64]) -> Record {
        RecordFixture::new(Metric::NsPerOp, 1000.0)
            .scenario(scenario)
            .pair(imp, imp)
            .paired_with(UPSTREAM, ratios)
            .build()
    }

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
    fn arms_from_different_rounds_give_no_quotient() {
        let s = "libp2p-handshake-new-peers-tls13-ecdsa-p256-x25519";
        assert!(quotient(&arm(s, STD, &[1.0; 5]), &arm(s, SPEC, &[1.0; 6])).is_none());
    }
}
