//! The time above a handshake's crypto floor, split: a profile of the same scenario gives
//! each side's perf samples by class (`tlsmatrix_model::class`); each share times the floor
//! run's handshake is ns per handshake. The profile's cryptography minus the floor is the
//! crypto the floor does not see. This joins the floor run and the profile run and judges
//! whether the parts sum to the time above the floor; the report draws it.

use tlsmatrix_history::RunData;
use tlsmatrix_model::class::{Class, TIME_CLASSES};
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::side::Side;

use crate::self_pairs::record;

/// How far the parts may sum from the overhead before the cell says they do not.
pub const TOLERANCE: f64 = 0.10;

/// The floor's share of its handshake above which the floor is called most of it: what lies
/// above is then within the two runs' noise (a floor and a profile share each move by a few
/// percent of the handshake), so it is neither split nor judged.
pub const MOSTLY_CRYPTO: f64 = 0.80;

/// One side's time above its floor, in ns per handshake.
#[derive(Debug, Clone, PartialEq)]
pub struct OverheadSplit {
    /// The floor run's handshake.
    pub handshake: f64,
    /// The handshake less its floor.
    pub overhead: f64,
    /// The profile's cryptography less the floor; below zero when the profile names less
    /// cryptography than the floor.
    pub crypto_beyond: f64,
    /// Each class's time, by its place in the time split (`Class::time_index`); the
    /// crypto's slot is zero, its time being `crypto_beyond` and the floor.
    pub parts: [f64; TIME_CLASSES],
}

impl OverheadSplit {
    /// The split of `imp`'s `side` in `scenario` from a profile run, against the floor run's
    /// handshake and floor (ns): `None` where the profile has no such cell.
    pub fn of(
        profile: &RunData,
        scenario: &str,
        imp: &str,
        side: Side,
        handshake: f64,
        floor: f64,
    ) -> Option<OverheadSplit> {
        let shares_of = Metric::time_split_of(side);
        // A profile has its cryptography's share; a class it has no figure for (a run taken
        // before the class was added to the list) holds none of its samples.
        record(
            profile,
            scenario,
            imp,
            shares_of[Class::Crypto.time_index()],
        )?;
        let mut shares = [0.0; TIME_CLASSES];
        for (slot, m) in shares.iter_mut().zip(shares_of) {
            *slot = record(profile, scenario, imp, m).map_or(0.0, |r| r.median);
        }
        // Medians of shares need not sum to one: scale them so they do.
        let sum: f64 = shares.iter().sum();
        if sum <= 0.0 {
            return None;
        }
        let time = |share: f64| share / sum * handshake;
        let crypto = Class::Crypto.time_index();
        let mut parts = shares.map(time);
        parts[crypto] = 0.0;
        Some(OverheadSplit {
            handshake,
            overhead: handshake - floor,
            crypto_beyond: time(shares[crypto]) - floor,
            parts,
        })
    }

    /// The parts' sum (the crypto beyond the floor where positive) over the overhead.
    pub fn sum_over_overhead(&self) -> f64 {
        let sum = self.crypto_beyond.max(0.0) + self.parts.iter().sum::<f64>();
        sum / self.overhead.max(1.0)
    }

    /// Whether enough lies above the floor to split: the floor under `MOSTLY_CRYPTO` of the
    /// handshake.
    pub fn judged(&self) -> bool {
        self.overhead > (1.0 - MOSTLY_CRYPTO) * self.handshake
    }

    /// Whether the parts sum to the overhead within `TOLERANCE` (where it is judged).
    pub fn sums(&self) -> bool {
        self.judged() && (self.sum_over_overhead() - 1.0).abs() <= TOLERANCE
    }

    /// A class's time above the floor, ns per handshake (none for the crypto: see
    /// `crypto_beyond`).
    pub fn part(&self, class: Class) -> f64 {
        self.parts[class.time_index()]
    }

    /// The side's time perf could not name, ns per handshake.
    pub fn unnamed(&self) -> f64 {
        self.part(Class::Unnamed)
    }

    /// The largest named cost above the floor: its name and ns.
    pub fn largest(&self) -> (&'static str, f64) {
        let mut best = ("cryptography beyond the floor", self.crypto_beyond);
        for class in Class::all().filter(|c| !matches!(c, Class::Crypto | Class::Unnamed)) {
            if self.part(class) > best.1 {
                best = (class.name(), self.part(class));
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::profile_run;

    /// A 100 µs handshake over a 60 µs floor: the profile's 70% crypto leaves 10 µs beyond the
    /// floor, its 10% X.509 and 20% state machine 10 and 20 µs; they sum to the 40 µs above.
    /// With 40% crypto the profile names 20 µs less than the floor and the parts overshoot.
    #[test]
    fn the_join_of_floor_and_profile_is_judged_by_its_sum() {
        let shares = [
            (Class::Crypto, 0.7),
            (Class::Parsing, 0.1),
            (Class::Other, 0.2),
        ];
        let s =
            OverheadSplit::of(&profile_run(&shares), "s", "a", Side::Client, 100e3, 60e3).unwrap();
        assert!((s.crypto_beyond - 10e3).abs() < 1.0, "{s:?}");
        assert!((s.part(Class::Other) - 20e3).abs() < 1.0, "{s:?}");
        assert_eq!(s.part(Class::Crypto), 0.0);
        assert!(s.judged() && s.sums());
        assert_eq!(s.largest().0, "state machine & rest");
        let shares = [
            (Class::Crypto, 0.4),
            (Class::Parsing, 0.1),
            (Class::Other, 0.5),
        ];
        let over =
            OverheadSplit::of(&profile_run(&shares), "s", "a", Side::Client, 100e3, 60e3).unwrap();
        assert!(over.judged() && !over.sums(), "{over:?}");
        assert!(
            OverheadSplit::of(&profile_run(&shares), "s", "b", Side::Client, 100e3, 60e3).is_none()
        );
    }
}
