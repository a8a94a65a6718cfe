//! A handshake side against its crypto floor, from a floor run: the two figures, the floor's
//! three parts, and where the handshake stands against its floor, judged on the per-sample
//! share's interval (each share is a ratio of a floor batch and a handshake batch taken in
//! turns), so a side whose handshake is all cryptography reads as its floor within noise,
//! never as a floor above 100% of its handshake.

use tlsmatrix_history::RunData;
use tlsmatrix_model::record::{Metric, Record};
use tlsmatrix_model::side::Side;

/// Where a side's handshake stands against its floor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Standing {
    /// The floor's share's whole interval lies above 1: the floor counts an operation the
    /// stack does not perform, or the two were measured apart.
    Above,
    /// The share's median is 1 or more and its interval holds 1 (or, without a share record,
    /// the floor's median is at least the handshake's): the handshake is its floor within the
    /// run's noise, and a share above 100% would read as more floor than handshake. The
    /// interval, as fractions.
    WithinNoise { low: f64, high: f64 },
    /// The share's median is under 1: shown as measured, whatever its interval.
    Below,
}

/// One side's figures.
#[derive(Debug, Clone)]
pub struct SideFloor {
    pub handshake: Record,
    pub floor: Record,
    /// `None` where the side performs no operation of the part (a resumption signs nothing).
    pub parts: [Option<f64>; 3],
    /// The per-sample share of the floor in the handshake, where the run has it.
    pub share: Option<Record>,
    pub standing: Standing,
}

impl SideFloor {
    /// What lies above the floor, ns: none where the handshake is its floor within noise.
    pub fn above_floor_ns(&self) -> f64 {
        match self.standing {
            Standing::Below | Standing::Above => self.handshake.median - self.floor.median,
            Standing::WithinNoise { .. } => 0.0,
        }
    }
}

fn record<'a>(run: &'a RunData, scenario: &str, imp: &str, m: Metric) -> Option<&'a Record> {
    run.records
        .iter()
        .find(|r| r.scenario == scenario && r.client == imp && r.server == imp && r.metric == m)
}

/// Where a share (the floor over its handshake, per sample) puts the handshake; without a
/// share record, the two medians decide, with no interval.
pub fn standing(share: Option<&Record>, handshake: f64, floor: f64) -> Standing {
    match share {
        Some(s) if s.ci_low > 1.0 => Standing::Above,
        Some(s) if s.median >= 1.0 => Standing::WithinNoise {
            low: s.ci_low,
            high: s.ci_high,
        },
        Some(_) => Standing::Below,
        None if floor >= handshake => {
            let at = floor / handshake.max(1.0);
            Standing::WithinNoise { low: at, high: at }
        }
        None => Standing::Below,
    }
}

pub fn side_floor(run: &RunData, scenario: &str, imp: &str, side: Side) -> Option<SideFloor> {
    let (total, parts) = Metric::floor_of(side);
    let mut p = [None; 3];
    for (slot, m) in p.iter_mut().zip(parts) {
        *slot = record(run, scenario, imp, m).map(|r| r.median);
    }
    let handshake = record(run, scenario, imp, Metric::handshake_ns_of(side))?.clone();
    let floor = record(run, scenario, imp, total)?.clone();
    let share = record(run, scenario, imp, Metric::floor_share_of(side)).cloned();
    Some(SideFloor {
        standing: standing(share.as_ref(), handshake.median, floor.median),
        handshake,
        floor,
        parts: p,
        share,
    })
}

/// The scenarios of the run with a floor, in the run's order.
pub fn scenarios(run: &RunData) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in run
        .records
        .iter()
        .filter(|r| r.metric == Metric::ClientFloorNs)
    {
        if !out.contains(&r.scenario.as_str()) {
            out.push(&r.scenario);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::RecordFixture;

    fn share(samples: &[f64]) -> Record {
        RecordFixture::new(Metric::ServerFloorShare, samples[0])
            .samples(samples.to_vec())
            .build()
    }

    #[test]
    fn a_share_whose_interval_holds_one_is_within_noise_never_above() {
        let near = share(&[1.01, 0.97, 1.06, 0.99, 1.03, 1.08, 0.98, 1.02]);
        let Standing::WithinNoise { low, high } = standing(Some(&near), 1.0, 1.0) else {
            panic!("{near:?}")
        };
        assert!(low <= 1.0 && high >= 1.0, "{low} {high}");
        let over = share(&[1.2, 1.21, 1.19, 1.2, 1.22, 1.18]);
        assert_eq!(standing(Some(&over), 1.0, 1.2), Standing::Above);
        let under = share(&[0.5, 0.51, 0.49, 0.5, 0.52, 0.48]);
        assert_eq!(standing(Some(&under), 2.0, 1.0), Standing::Below);
        // A median under 1 reads as measured even where its interval reaches 1.
        let wide = share(&[0.83, 0.7, 1.3, 0.8, 0.9, 1.2, 0.75]);
        assert!(wide.ci_high >= 1.0, "{wide:?}");
        assert_eq!(standing(Some(&wide), 1.0, 0.83), Standing::Below);
        // An older run without the share: the medians decide.
        assert_eq!(
            standing(None, 100.0, 104.0),
            Standing::WithinNoise {
                low: 1.04,
                high: 1.04
            }
        );
        assert_eq!(standing(None, 100.0, 90.0), Standing::Below);
    }
}
