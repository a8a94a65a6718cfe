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

/// The dial workload's scenarios begin so: a whole libp2p connection to a new peer and its
/// first stream byte each way, an arm per transport stack.
pub const DIAL_PREFIX: &str = "libp2p-dial-new-peers-";
/// go-libp2p's QUIC transport (quic-go), the dial workload's arm that is not TCP.
pub const QUIC: &str = "go-libp2p-quic";
/// The delay links the dial workload's wire pass measured the first byte through, with
/// their round trips in seconds.
pub const DIAL_LINKS: [(Metric, f64); 2] = [
    (Metric::DelayedTtfb20Ms, 0.020),
    (Metric::DelayedTtfb100Ms, 0.100),
];

/// One transport stack's connection to a new peer: its CPU, how it compares with the
/// reference's (TCP + upstream's TLS + yamux) in the same rounds, and its first byte.
#[derive(Debug, Clone, PartialEq)]
pub struct DialStack {
    pub imp: String,
    pub version: String,
    /// The process's CPU per connection (both peers'), ns: median and interval.
    pub cpu_ns: [f64; 3],
    /// That CPU over the reference's, paired; none for the reference itself.
    pub cpu_factor: Option<Factor>,
    pub round_trips: f64,
    pub first_byte: Vec<DialFirstByte>,
}

/// The first byte through one delay link: as the model puts it (round trips times the round
/// trip, plus the connection's CPU) and as measured through the link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DialFirstByte {
    pub rtt_ms: f64,
    pub model_ms: f64,
    pub measured_ms: f64,
}

/// The stacks of one dial scenario, in the order the run wrote them (the reference first),
/// the A/A copy left out; a stack without its CPU or round trips is left out too.
pub fn dial_stacks(records: &[Record], scenario: &str) -> Vec<DialStack> {
    let of = |imp: &str, metric: Metric| {
        records
            .iter()
            .find(|r| r.scenario == scenario && r.client == imp && r.metric == metric)
    };
    let mut imps: Vec<&str> = Vec::new();
    for r in records.iter().filter(|r| r.scenario == scenario) {
        if r.client == r.server && !r.client.ends_with(")") && !imps.contains(&r.client.as_str()) {
            imps.push(&r.client);
        }
    }
    imps.into_iter()
        .filter_map(|imp| {
            let cpu = of(imp, Metric::CpuNsPerOp)?;
            let round_trips = of(imp, Metric::FirstByteRoundTrips)?.median;
            let first_byte = DIAL_LINKS
                .iter()
                .filter_map(|&(metric, rtt_s)| {
                    Some(DialFirstByte {
                        rtt_ms: rtt_s * 1e3,
                        model_ms: round_trips * rtt_s * 1e3 + cpu.median / 1e6,
                        measured_ms: of(imp, metric)?.median,
                    })
                })
                .collect();
            Some(DialStack {
                imp: imp.to_string(),
                version: cpu.client_version.clone(),
                cpu_ns: [cpu.median, cpu.ci_low, cpu.ci_high],
                cpu_factor: cpu.paired.as_ref().and_then(|p| p.factor()),
                round_trips,
                first_byte,
            })
        })
        .collect()
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
    use crate::fixture::{libp2p_arm as arm, libp2p_dial};

    #[test]
    fn a_dial_stack_is_modelled_from_its_round_trips_and_cpu() {
        let s = "libp2p-dial-new-peers-tls13-ecdsa-p256-x25519";
        let stacks = dial_stacks(&libp2p_dial(s), s);
        let imps: Vec<&str> = stacks.iter().map(|d| d.imp.as_str()).collect();
        assert_eq!(imps, [UPSTREAM, QUIC], "the A/A copy is left out");
        let (tcp, quic) = (&stacks[0], &stacks[1]);
        assert!(tcp.cpu_factor.is_none());
        assert!((quic.cpu_factor.unwrap().ratio - 1.5).abs() < 1e-9);
        assert_eq!((tcp.round_trips, quic.round_trips), (4.0, 2.0));
        // 2 round trips of 100 ms and 1.8 ms of CPU; measured 205 ms.
        let at100 = quic.first_byte[1];
        assert!((at100.model_ms - 201.8).abs() < 0.01, "{at100:?}");
        assert_eq!((at100.rtt_ms, at100.measured_ms), (100.0, 205.0));
        assert!(dial_stacks(&libp2p_dial(s), "libp2p-dial-new-peers-other").is_empty());
    }

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
