//! The libp2p transport against upstream go-libp2p, as figures: the std backend's factor
//! against upstream, and where the workload has the like-for-like reference (upstream with
//! the self-signature check the spec requires), that reference's own factor and the std
//! backend over it, the quotient of their ratios round by round, judged against the target.

use tlsmatrix_model::record::{Metric, Record};
use tlsmatrix_model::stats::{paired_factor, Factor};

/// The transports' impl names, as `go/internal/bench` writes them.
pub const UPSTREAM: &str = "go-libp2p-upstream";
pub const SPEC: &str = "go-libp2p-upstream-selfsig";
pub const STD: &str = "go-libp2p-std";
/// The std backend's limit against the like-for-like reference, in time.
pub const STD_TARGET: f64 = 1.03;

/// One handshake workload's factors.
#[derive(Debug, Clone, PartialEq)]
pub struct AgainstUpstream {
    /// The std backend's time over upstream's, paired.
    pub std: Factor,
    pub like_for_like: Option<LikeForLike>,
}

/// The like-for-like reference's factor against upstream, the std backend over it, and
/// whether that is within [`STD_TARGET`].
#[derive(Debug, Clone, PartialEq)]
pub struct LikeForLike {
    pub spec: Factor,
    pub std_over_spec: Factor,
    pub met: bool,
}

/// The factors of `scenario`'s arms; the like-for-like reference only where `like_for_like`
/// (a workload that a verified-certificate cache does not flatter) and its rounds line up.
pub fn against_upstream(
    records: &[Record],
    scenario: &str,
    like_for_like: bool,
) -> Option<AgainstUpstream> {
    let time_of = |imp: &str| {
        records.iter().find(|r| {
            r.scenario == scenario
                && r.metric == Metric::NsPerOp
                && r.client == imp
                && r.server == imp
        })
    };
    let std = time_of(STD)?;
    let std_factor = std.paired.as_ref()?.factor()?;
    let like = time_of(SPEC).filter(|_| like_for_like).and_then(|spec| {
        let spec_factor = spec.paired.as_ref()?.factor()?;
        let over = quotient(std, spec)?;
        Some(LikeForLike {
            spec: spec_factor,
            met: over.ratio <= STD_TARGET,
            std_over_spec: over,
        })
    });
    Some(AgainstUpstream {
        std: std_factor,
        like_for_like: like,
    })
}

/// A's time over B's, round by round, for two arms paired with upstream in the same rounds;
/// `None` unless their rounds line up.
pub fn quotient(a: &Record, b: &Record) -> Option<Factor> {
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
    use crate::fixture::libp2p_arm as arm;

    #[test]
    fn arms_from_different_rounds_give_no_quotient() {
        let s = "libp2p-handshake-new-peers-tls13-ecdsa-p256-x25519";
        assert!(quotient(&arm(s, STD, &[1.0; 5]), &arm(s, SPEC, &[1.0; 6])).is_none());
    }

    /// 1.10/1.0, 1.21/1.1 and 1.32/1.2 are all 1.10: the quotient is exact each round, and
    /// past the target.
    #[test]
    fn the_like_for_like_factor_is_the_round_by_round_quotient_and_judged() {
        let s = "libp2p-handshake-new-peers-tls13-ecdsa-p256-x25519";
        let records = vec![
            arm(
                s,
                STD,
                &[1.10, 1.21, 1.32, 1.10, 1.21, 1.32, 1.10, 1.21, 1.32],
            ),
            arm(s, SPEC, &[1.0, 1.1, 1.2, 1.0, 1.1, 1.2, 1.0, 1.1, 1.2]),
        ];
        let f = against_upstream(&records, s, true).unwrap();
        let like = f.like_for_like.unwrap();
        assert!((like.std_over_spec.ratio - 1.10).abs() < 1e-9, "{like:?}");
        assert!(!like.met);
        assert!(against_upstream(&records, s, false)
            .unwrap()
            .like_for_like
            .is_none());
    }
}
