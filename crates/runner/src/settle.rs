//! When a timed group has enough samples: `tlsmatrix run --until-within PCT` stops sampling a
//! group once every factor it yields has a 95% interval within ±PCT of the factor, after
//! `--min-passes` passes; `--passes` stays the most any group gets. A tight cell (a bulk
//! transfer in AES-GCM, most full handshakes) needs no more passes, a noisy one (a resumed
//! handshake on a busy hour) gets all of them. The rule looks at the intervals' widths only,
//! never at where the factors lie, so stopping cannot pick a factor's value.

use std::collections::BTreeMap;

use tlsmatrix_measure::paired;
use tlsmatrix_model::stats;

use crate::groups::{Gathered, Group};

/// A client and a server impl, by name.
type Label = (String, String);

/// How far each of a group's factors is from settling: the widest relative half-width of
/// the 95% interval over the group's cells and metrics (0.012 for ±1.2%), or `None` while a
/// cell has no pairs with the reference yet (it cannot have settled).
pub fn widest_half_width(
    group: &Group,
    gathered: &BTreeMap<Label, Gathered>,
    reference: &Label,
) -> Option<f64> {
    let reference_data = gathered.get(reference)?;
    let mut widest: f64 = 0.0;
    let mut any = false;
    for cell in group.cells.iter().filter(|c| &c.label != reference) {
        let data = gathered.get(&cell.label)?;
        for (metric, tagged) in &data.by_metric {
            let (ratios, blocks): (Vec<f64>, Vec<u32>) =
                paired::ratios(tagged, reference_data.by_metric.get(metric)?)
                    .into_iter()
                    .unzip();
            let factor = stats::paired_factor(&ratios, &blocks)?;
            widest = widest.max(factor.relative_half_width());
            any = true;
        }
    }
    any.then_some(widest)
}

/// Whether a group may stop: it has had `min_passes` blocks and its widest interval is
/// within `within` (0.015 for ±1.5%).
pub fn settled(widest: Option<f64>, passes_done: u32, min_passes: u32, within: f64) -> bool {
    passes_done >= min_passes && widest.is_some_and(|w| w <= within)
}

/// How wide the open groups' widest intervals are, for the line after each pass: ", whose
/// widest intervals are ±3.1% at the median and ±6.0% at the 90th percentile"; empty when
/// no group is open.
pub fn spread(open: &mut [f64]) -> String {
    if open.is_empty() {
        return String::new();
    }
    open.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let w = open[((open.len() - 1) as f64 * q).round() as usize];
        if w.is_finite() {
            format!("±{:.1}%", w * 100.0)
        } else {
            "unbounded (no pairs yet)".to_string()
        }
    };
    format!(
        ", whose widest intervals are {} at the median and {} at the 90th percentile",
        at(0.5),
        at(0.9)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groups::{reference_cell, GroupCell};
    use tlsmatrix_measure::paired::Tagged;
    use tlsmatrix_model::allocator::Allocator;
    use tlsmatrix_model::record::Metric;
    use tlsmatrix_registry::registry::{Driver, ImplEntry};

    fn entry(name: &str) -> ImplEntry {
        ImplEntry {
            refuses: Vec::new(),
            quic: None,
            name: name.into(),
            version: format!("{name} 1"),
            allocator: Allocator::Glibc,
            drivers: vec![Driver::new("main", Allocator::Glibc)],
        }
    }

    /// `rounds` samples in each of `blocks` blocks, the value of block b, round r given.
    fn gathered(blocks: u32, rounds: u32, value: impl Fn(u32, u32) -> f64) -> Gathered {
        let mut g = Gathered {
            versions: Some(("v".into(), "v".into())),
            ..Default::default()
        };
        g.by_metric.insert(
            Metric::ClientCpuNs,
            (0..blocks)
                .flat_map(|b| (0..rounds).map(move |r| (b, r)))
                .map(|(block, round)| Tagged {
                    value: value(block, round),
                    block,
                    round,
                })
                .collect(),
        );
        g
    }

    #[test]
    fn a_steady_factor_settles_a_noisy_one_does_not() {
        let base = entry("base");
        let x = entry("x");
        let group = Group {
            scenario: "handshake-tls13-ecdsa-p256-x25519-full".parse().unwrap(),
            driver: x.drivers[0].clone(),
            cells: vec![
                reference_cell(&base),
                GroupCell {
                    client: &x,
                    server: &base,
                    label: ("x".into(), "base".into()),
                    scenario: None,
                },
            ],
            has_reference: true,
            companion: false,
            subject: "x".into(),
            reference: None,
        };
        let reference: Label = ("base".into(), "base".into());
        let mut data = BTreeMap::new();
        data.insert(reference.clone(), gathered(4, 5, |_, _| 100.0));
        // 1.30 with a 0.2% wobble: settled; blocks 1.0 and 1.6 apart: not.
        data.insert(
            ("x".into(), "base".into()),
            gathered(4, 5, |b, r| 130.0 + f64::from((b + r) % 2) * 0.2),
        );
        let steady = widest_half_width(&group, &data, &reference).unwrap();
        assert!(steady < 0.005, "{steady}");
        assert!(settled(Some(steady), 4, 3, 0.015));
        assert!(!settled(Some(steady), 2, 3, 0.015), "too few passes");
        data.insert(
            ("x".into(), "base".into()),
            gathered(4, 5, |b, _| if b % 2 == 0 { 100.0 } else { 160.0 }),
        );
        let noisy = widest_half_width(&group, &data, &reference).unwrap();
        assert!(noisy > 0.05, "{noisy}");
        assert!(!settled(Some(noisy), 4, 3, 0.015));
        // A cell without samples yet: not settled, however many passes.
        data.remove(&("x".into(), "base".into()));
        assert_eq!(widest_half_width(&group, &data, &reference), None);
        assert!(!settled(None, 8, 3, 0.015));
    }

    #[test]
    fn the_spread_names_the_median_and_90th_percentile_widths() {
        let mut open: Vec<f64> = (1..=10).map(|i| f64::from(i) / 100.0).collect();
        open.reverse();
        let line = spread(&mut open);
        assert!(line.contains("±6.0% at the median"), "{line}");
        assert!(line.contains("±9.0% at the 90th"), "{line}");
        assert_eq!(spread(&mut []), "");
        assert!(spread(&mut [f64::INFINITY]).contains("unbounded"));
    }
}
