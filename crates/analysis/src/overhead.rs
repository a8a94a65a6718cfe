//! The time above a handshake's crypto floor, split: a profile of the same scenario gives
//! each side's perf samples by class (`tlsmatrix_model::class`); each share times the floor
//! run's handshake is ns per handshake. Where the profile also split the floor's own
//! operations by the same classes, each class's time above the floor is the handshake's
//! less the floor's (so the floor's own provider dispatch, allocation and locks are not
//! taken for cryptography); otherwise the whole floor counts as cryptography. The profile's
//! cryptography minus the floor's is the crypto the floor does not see. This joins the floor
//! run and the profile run and judges whether the parts sum to the time above the floor;
//! the report draws it.

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
    /// Each class's time above the floor's, by its place in the time split
    /// (`Class::time_index`); the crypto's slot is zero, its time being `crypto_beyond` and
    /// the floor. Below zero where the floor spends more in a class than the handshake.
    pub parts: [f64; TIME_CLASSES],
    /// The floor's own time by class, where the profile split it (ns per handshake).
    pub floor_parts: Option<[f64; TIME_CLASSES]>,
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
        let handshake_parts = time_by_class(
            profile,
            scenario,
            imp,
            Metric::time_split_of(side),
            handshake,
        )?;
        let crypto = Class::Crypto.time_index();
        let floor_parts =
            time_by_class(profile, scenario, imp, Metric::floor_split_of(side), floor);
        // Without the floor's own split, the whole floor is cryptography.
        let floor_of = |c: usize| match &floor_parts {
            Some(f) => f[c],
            None if c == crypto => floor,
            None => 0.0,
        };
        let mut parts = [0.0; TIME_CLASSES];
        for (c, slot) in parts.iter_mut().enumerate() {
            *slot = handshake_parts[c] - floor_of(c);
        }
        parts[crypto] = 0.0;
        Some(OverheadSplit {
            handshake,
            overhead: handshake - floor,
            crypto_beyond: handshake_parts[crypto] - floor_of(crypto),
            parts,
            floor_parts,
        })
    }

    /// The parts' sum (each where positive: a class the floor spends more in than the
    /// handshake adds nothing) over the overhead.
    pub fn sum_over_overhead(&self) -> f64 {
        let sum = self.crypto_beyond.max(0.0) + self.parts.iter().map(|p| p.max(0.0)).sum::<f64>();
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

/// A time split by class (ns per handshake): the profile's shares of `imp` in `scenario`
/// under `metrics` (the time split's order), scaled to sum to one, times `total`; `None`
/// where the profile has no cryptography share there. A class it has no figure for (a run
/// taken before the class was added to the list) holds none of the samples.
fn time_by_class(
    profile: &RunData,
    scenario: &str,
    imp: &str,
    metrics: [Metric; TIME_CLASSES],
    total: f64,
) -> Option<[f64; TIME_CLASSES]> {
    record(profile, scenario, imp, metrics[Class::Crypto.time_index()])?;
    let shares = metrics.map(|m| record(profile, scenario, imp, m).map_or(0.0, |r| r.median));
    // Medians of shares need not sum to one: scale them so they do.
    let sum: f64 = shares.iter().sum();
    (sum > 0.0).then(|| shares.map(|s| s / sum * total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{profile_run, with_floor_split};

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

    /// The same 100 µs handshake over a 60 µs floor, whose own profile finds a quarter of it
    /// in the provider layer: the crypto beyond is the handshake's 50 µs less the floor's 45,
    /// the layer above the floor 20 less 15, and the parts sum; taken as all crypto, the
    /// same floor leaves the profile 10 µs short of it and the parts overshoot by a quarter.
    #[test]
    fn a_floor_split_by_class_is_taken_class_by_class() {
        let shares = [
            (Class::Crypto, 0.5),
            (Class::Provider, 0.2),
            (Class::Parsing, 0.1),
            (Class::Other, 0.2),
        ];
        let whole =
            OverheadSplit::of(&profile_run(&shares), "s", "a", Side::Client, 100e3, 60e3).unwrap();
        assert!(whole.floor_parts.is_none());
        assert!((whole.sum_over_overhead() - 1.25).abs() < 1e-9, "{whole:?}");
        let run = with_floor_split(
            profile_run(&shares),
            &[(Class::Crypto, 0.75), (Class::Provider, 0.25)],
        );
        let s = OverheadSplit::of(&run, "s", "a", Side::Client, 100e3, 60e3).unwrap();
        assert!((s.crypto_beyond - 5e3).abs() < 1.0, "{s:?}");
        assert!((s.part(Class::Provider) - 5e3).abs() < 1.0, "{s:?}");
        assert!((s.part(Class::Other) - 20e3).abs() < 1.0, "{s:?}");
        let floor = s.floor_parts.unwrap();
        assert!((floor[Class::Provider.time_index()] - 15e3).abs() < 1.0);
        assert!(
            (s.sum_over_overhead() - 1.0).abs() < 1e-9 && s.sums(),
            "{s:?}"
        );
        // A class the floor spends more in than the handshake adds nothing to the sum.
        let run = with_floor_split(
            profile_run(&shares),
            &[(Class::Crypto, 0.5), (Class::Allocation, 0.5)],
        );
        let s = OverheadSplit::of(&run, "s", "a", Side::Client, 100e3, 60e3).unwrap();
        assert!((s.part(Class::Allocation) + 30e3).abs() < 1.0, "{s:?}");
        assert!((s.sum_over_overhead() - 70e3 / 40e3).abs() < 1e-9, "{s:?}");
    }
}
