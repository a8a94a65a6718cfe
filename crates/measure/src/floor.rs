//! A handshake against its crypto floor (`--measure floor`): the operations each side must
//! perform (`tlsmatrix_model::floor::operations`) timed through the library's own crypto API,
//! sampled in turns with the handshake itself, so that each sample's floor and handshake are
//! figures taken milliseconds apart in one process.

use std::time::Duration;

use crate::sample::{in_turns, value_of, Sample, Sampler};
use crate::workload::{Budget, HandshakeSampler};
use tlsmatrix_harness::certs::CertSet;
use tlsmatrix_harness::endpoint::EndpointFactory;
use tlsmatrix_harness::floor::{HandshakeCrypto, PreparedOp};
use tlsmatrix_harness::pair::Meter;
use tlsmatrix_model::floor::{operations, CryptoOp, FloorPart};
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::scenario::ConnParams;
use tlsmatrix_model::side::Side;

/// One operation of one side: how often a handshake performs it and how often a sample runs
/// it.
struct Timed {
    side: Side,
    op: CryptoOp,
    per_handshake: u32,
    prepared: Box<dyn PreparedOp>,
    reps: u32,
}

/// Each side's operations, prepared and sized.
pub struct FloorSampler {
    ops: Vec<Timed>,
}

/// One operation's mean time over a sample.
pub struct OpTime {
    pub side: Side,
    pub op: CryptoOp,
    pub per_handshake: u32,
    pub ns: f64,
}

impl FloorSampler {
    /// Prepares every operation of `list` (both sides', [`operations_of`]) with `crypto` (one
    /// library: client and server are the same impl), runs each for its share of `warmup`
    /// and sizes its share of a sample of about `target`.
    pub fn warm(
        crypto: &dyn HandshakeCrypto,
        certs: &CertSet,
        list: &[(Side, CryptoOp, u32)],
        warmup: Duration,
        target: Duration,
    ) -> Result<FloorSampler, String> {
        let mut ops = Vec::new();
        for &(side, op, per_handshake) in list {
            let prepared = crypto
                .prepare(op, certs)
                .map_err(|e| format!("{side} {op}: {e}"))?;
            ops.push(Timed {
                side,
                op,
                per_handshake,
                prepared,
                reps: 1,
            });
        }
        let count = ops.len().max(1) as u32;
        let share = |d: Duration| d / count;
        for t in &mut ops {
            let mut spent = Duration::ZERO;
            let mut n = 0u32;
            while n < 2 || spent < share(warmup) {
                spent += t
                    .prepared
                    .run()
                    .map_err(|e| format!("{} {}: {e}", t.side, t.op))?;
                n += 1;
            }
            let each = spent.as_nanos() as f64 / f64::from(n);
            t.reps = (share(target).as_nanos() as f64 / each.max(1.0)).clamp(1.0, 1e6) as u32;
            t.reps = t.reps.max(t.op.min_runs());
        }
        Ok(FloorSampler { ops })
    }

    /// Each operation's mean time over its batch.
    pub fn times(&mut self) -> anyhow::Result<Vec<OpTime>> {
        let mut out = Vec::with_capacity(self.ops.len());
        for t in &mut self.ops {
            let mut spent = Duration::ZERO;
            for _ in 0..t.reps {
                spent += t.prepared.run()?;
            }
            out.push(OpTime {
                side: t.side,
                op: t.op,
                per_handshake: t.per_handshake,
                ns: spent.as_nanos() as f64 / f64::from(t.reps),
            });
        }
        Ok(out)
    }
}

impl FloorSampler {
    /// Runs each operation's batch once inside `meter`'s call for its side: a sample of the
    /// floor for a profile, which charges perf's samples to the side whose call they fell in.
    pub fn run_metered(&mut self, meter: &mut impl Meter) -> anyhow::Result<()> {
        for t in &mut self.ops {
            let (reps, prepared) = (t.reps, &mut t.prepared);
            meter.on(t.side, || -> anyhow::Result<()> {
                for _ in 0..reps {
                    prepared.run()?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }
}

/// Both sides' operations for `params`, client first.
pub fn operations_of(params: &ConnParams) -> Vec<(Side, CryptoOp, u32)> {
    [Side::Client, Side::Server]
        .into_iter()
        .flat_map(|side| {
            operations(params, side)
                .into_iter()
                .map(move |(op, n)| (side, op, n))
        })
        .collect()
}

impl Sampler for FloorSampler {
    /// Per side, the floor and its three parts, in ns per handshake.
    fn sample(&mut self) -> anyhow::Result<Sample> {
        let times = self.times()?;
        let mut sample = Vec::new();
        for side in [Side::Client, Side::Server] {
            let (total, parts) = Metric::floor_of(side);
            let sum = |part: Option<FloorPart>| -> f64 {
                times
                    .iter()
                    .filter(|t| t.side == side && part.is_none_or(|p| t.op.part() == p))
                    .map(|t| t.ns * f64::from(t.per_handshake))
                    // An empty sum is -0.0; a part the handshake lacks is +0.
                    .fold(0.0, |a, b| a + b)
            };
            sample.push((total, sum(None)));
            // A part the side performs no operation of (a resumption's signatures) has no
            // figure rather than a zero one.
            for (m, part) in parts.into_iter().zip(FloorPart::ALL) {
                if self
                    .ops
                    .iter()
                    .any(|t| t.side == side && t.op.part() == part)
                {
                    sample.push((m, sum(Some(part))));
                }
            }
        }
        Ok(sample)
    }
}

/// Handshake samples and floor samples in turns (the order alternating), each with its
/// floor's share of the handshake per side.
pub fn handshakes_against_floor(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
    mut floor: FloorSampler,
    budget: &Budget,
    on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    let mut stack =
        HandshakeSampler::warm(client, server, params, budget.warmup, budget.sample_target)?;
    let shares = |handshake: &Sample, own: &Sample| -> Sample {
        [Side::Client, Side::Server]
            .into_iter()
            .map(|side| {
                let (floor_metric, _) = Metric::floor_of(side);
                let took = value_of(handshake, Metric::handshake_ns_of(side));
                (
                    Metric::floor_share_of(side),
                    value_of(own, floor_metric) / took.max(1e-9),
                )
            })
            .collect()
    };
    in_turns(&mut stack, &mut floor, budget.runs, shares, on_sample)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Spins for about the time its operation names, so the sums can be checked.
    struct Spin;

    struct SpinOp(Duration);

    impl PreparedOp for SpinOp {
        fn run(&mut self) -> anyhow::Result<Duration> {
            // Spins for its time but reports the nominal one: the test checks the counts and
            // the sums, which a preempted spin on a busy machine would blur (161 µs of
            // key exchange for 40 once under load).
            let t = Instant::now();
            while t.elapsed() < self.0 {}
            Ok(self.0)
        }
    }

    impl HandshakeCrypto for Spin {
        fn api(&self) -> String {
            "spin".into()
        }
        fn prepare(&self, op: CryptoOp, _: &CertSet) -> Result<Box<dyn PreparedOp>, String> {
            let us = match op.part() {
                FloorPart::KeyExchange => 20,
                FloorPart::Signatures => 50,
                FloorPart::KeySchedule => 1,
            };
            Ok(Box::new(SpinOp(Duration::from_micros(us))))
        }
    }

    #[test]
    fn a_floor_is_its_operations_times_their_counts() {
        let certs = CertSet::from_pems(String::new(), String::new(), String::new());
        let params = "handshake-tls13-ecdsa-p256-x25519-full"
            .parse::<tlsmatrix_model::scenario::Scenario>()
            .unwrap()
            .params();
        let ms = Duration::from_millis(5);
        let mut f = FloorSampler::warm(&Spin, &certs, &operations_of(&params), ms, ms).unwrap();
        let s = f.sample().unwrap();
        let get = |m: Metric| s.iter().find(|(x, _)| *x == m).unwrap().1;
        let (client, [kex, sig, kdf]) = Metric::floor_of(Side::Client);
        // Two key-exchange operations, two verifications, 22 HMACs.
        assert!((40e3..60e3).contains(&get(kex)), "{}", get(kex));
        assert!((100e3..130e3).contains(&get(sig)), "{}", get(sig));
        assert!((22e3..40e3).contains(&get(kdf)), "{}", get(kdf));
        assert!((get(client) - get(kex) - get(sig) - get(kdf)).abs() < 1.0);
    }

    #[test]
    fn an_operation_the_library_lacks_names_itself() {
        struct Lacks;
        impl HandshakeCrypto for Lacks {
            fn api(&self) -> String {
                "none".into()
            }
            fn prepare(&self, op: CryptoOp, _: &CertSet) -> Result<Box<dyn PreparedOp>, String> {
                match op {
                    CryptoOp::Sign(_) => Err("no signing here".into()),
                    _ => Spin.prepare(
                        op,
                        &CertSet::from_pems(String::new(), String::new(), String::new()),
                    ),
                }
            }
        }
        let certs = CertSet::from_pems(String::new(), String::new(), String::new());
        let params = "handshake-tls13-ecdsa-p256-x25519-full"
            .parse::<tlsmatrix_model::scenario::Scenario>()
            .unwrap()
            .params();
        let ms = Duration::from_millis(1);
        let err = FloorSampler::warm(&Lacks, &certs, &operations_of(&params), ms, ms)
            .err()
            .unwrap();
        assert_eq!(err, "server ecdsa-p256 sign: no signing here");
    }
}
