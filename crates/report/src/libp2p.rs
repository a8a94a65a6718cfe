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

use tlsmatrix_analysis::libp2p::against_upstream;
pub use tlsmatrix_analysis::libp2p::STD_TARGET;

use crate::figures::factor_text;

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

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_analysis::fixture::libp2p_arm as arm;
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
}
