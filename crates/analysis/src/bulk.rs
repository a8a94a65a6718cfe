//! Bulk figures judged: which transfers stay under their own library's AEAD ceiling and what
//! the counters and the profile of the same transfer say the time goes to instead; where one
//! stack's order against the baseline flips with the write size, and whether the AEADs alone
//! flip the same way; and which allocator or compiler variant falls well below its plain
//! build. Data only: the report words it.

use tlsmatrix_history::RunData;
use tlsmatrix_model::record::{self, Metric, Record};
use tlsmatrix_model::scenario::Scenario;
use tlsmatrix_model::stats::Factor;
use tlsmatrix_model::variant;

use crate::factors::paired_advantage;

/// How close to its own ceiling a stack should get (the target the tables are read against).
pub const CEILING_TARGET: f64 = 0.85;

/// How far apart two stacks' rates must be, each way, before an order that changes with
/// the write size counts as a flip (beyond the few percent a rerun moves a factor).
pub const FLIP: f64 = 1.05;

/// A variant below this share of its plain build's rate is named.
pub const VARIANT_SHORTFALL: f64 = 0.9;

/// The runs the bulk judgements read; any may be missing.
pub struct Inputs<'a> {
    /// The report's timed run: its factors against the baseline are paired.
    pub main: Option<&'a RunData>,
    /// Bulk rates and ceilings sampled in turns (`--measure ceiling`).
    pub ceiling: Option<&'a RunData>,
    pub counters: Option<&'a RunData>,
    pub allocators: Option<&'a RunData>,
    /// Where each side's time goes (`--measure profile`).
    pub profile: Option<&'a RunData>,
}

/// The record of `imp` with itself.
pub fn record<'a>(run: &'a RunData, scenario: &str, imp: &str, m: Metric) -> Option<&'a Record> {
    run.records
        .iter()
        .find(|r| r.scenario == scenario && r.client == imp && r.server == imp && r.metric == m)
}

pub fn median(run: Option<&RunData>, scenario: &str, imp: &str, m: Metric) -> Option<f64> {
    record(run?, scenario, imp, m).map(|r| r.median)
}

/// Bulk scenarios of a run, in the order the run met them.
pub fn bulk_scenarios(run: &RunData) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in run.records.iter().map(|r| r.scenario.as_str()) {
        if id.starts_with("bulk-") && !out.iter().any(|o| o == id) {
            out.push(id.to_string());
        }
    }
    out
}

/// A transfer's direction, with the metrics each judgement reads for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Send,
    Recv,
}

impl Direction {
    pub const BOTH: [Direction; 2] = [Direction::Send, Direction::Recv];

    /// "sends", "receives".
    pub fn verb(self) -> &'static str {
        match self {
            Direction::Send => "sends",
            Direction::Recv => "receives",
        }
    }

    /// What the AEAD alone does in this direction: "seal", "open".
    pub fn aead_verb(self) -> &'static str {
        match self {
            Direction::Send => "seal",
            Direction::Recv => "open",
        }
    }

    fn pick(self, send: Metric, recv: Metric) -> Metric {
        match self {
            Direction::Send => send,
            Direction::Recv => recv,
        }
    }

    pub fn rate(self) -> Metric {
        self.pick(Metric::SendMbPerS, Metric::RecvMbPerS)
    }
    pub fn ceiling(self) -> Metric {
        self.pick(Metric::SealMbPerS, Metric::OpenMbPerS)
    }
    pub fn share(self) -> Metric {
        self.pick(Metric::SendShareOfSeal, Metric::RecvShareOfOpen)
    }
    pub fn faults(self) -> Metric {
        self.pick(Metric::SendPageFaultsPerMib, Metric::RecvPageFaultsPerMib)
    }
    pub fn cold_blocks(self) -> Metric {
        self.pick(Metric::SendColdBlocksPerMib, Metric::RecvColdBlocksPerMib)
    }
    pub fn profile(self) -> [Metric; 5] {
        match self {
            Direction::Send => Metric::SEND_PROFILE,
            Direction::Recv => Metric::RECV_PROFILE,
        }
    }

    /// The direction a bulk rate metric measures.
    pub fn of_rate(m: Metric) -> Option<Direction> {
        Direction::BOTH.into_iter().find(|d| d.rate() == m)
    }
}

/// The largest share of a side's profile outside the cipher.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProfileLead {
    /// The index into the profile's categories (`Metric::SEND_PROFILE`'s order; 0 is the cipher).
    pub category: usize,
    pub share: f64,
    pub cipher: f64,
}

pub fn profile_lead(
    profile: Option<&RunData>,
    scenario: &str,
    imp: &str,
    dir: Direction,
) -> Option<ProfileLead> {
    let shares: Vec<f64> = dir
        .profile()
        .iter()
        .map(|m| median(profile, scenario, imp, *m))
        .collect::<Option<_>>()?;
    let (category, share) = shares
        .iter()
        .enumerate()
        .skip(1)
        .max_by(|a, b| a.1.total_cmp(b.1))?;
    Some(ProfileLead {
        category,
        share: *share,
        cipher: shares[0],
    })
}

/// Why a transfer stays under its ceiling, as its counters and profile say.
#[derive(Debug, Clone, PartialEq)]
pub enum Cause {
    /// Page faults per MiB (1 or more): the kernel maps memory the stack keeps giving back.
    PageFaults(f64),
    /// Large blocks per MiB that were not just freed (1 or more), and no page faults.
    ColdBlocks(f64),
    /// Neither: `counted` says whether the counters were there to say so; the profile's
    /// lead category beside the cipher, where a profile exists.
    Elsewhere { counted: bool, lead: Option<usize> },
}

/// A transfer under [`CEILING_TARGET`] of its own AEAD.
#[derive(Debug, Clone, PartialEq)]
pub struct Shortfall {
    pub imp: String,
    pub scenario: String,
    pub dir: Direction,
    pub share: f64,
    pub rate: f64,
    pub ceiling: f64,
    pub cause: Cause,
    pub lead: Option<ProfileLead>,
}

/// The shortfalls of the ceiling run's impls in `impls`: first those whose counters name a
/// cause, each alone, then the rest grouped by cause (in the order met), each group sorted
/// by share, lowest first.
#[derive(Debug, Default)]
pub struct Shortfalls {
    pub counted: Vec<Shortfall>,
    pub groups: Vec<Vec<Shortfall>>,
    pub total: usize,
}

pub fn shortfalls(inp: &Inputs, impls: &[String]) -> Shortfalls {
    let mut out = Shortfalls::default();
    let Some(ceiling) = inp.ceiling else {
        return out;
    };
    for scenario in bulk_scenarios(ceiling) {
        for imp in impls {
            for dir in Direction::BOTH {
                let at = |m| median(Some(ceiling), &scenario, imp, m);
                let (Some(rate), Some(ceil), Some(share)) =
                    (at(dir.rate()), at(dir.ceiling()), at(dir.share()))
                else {
                    continue;
                };
                if share >= CEILING_TARGET {
                    continue;
                }
                out.total += 1;
                let faults = median(inp.counters, &scenario, imp, dir.faults());
                let cold = median(inp.counters, &scenario, imp, dir.cold_blocks());
                let lead = profile_lead(inp.profile, &scenario, imp, dir);
                let cause = match (faults, cold) {
                    (Some(f), _) if f >= 1.0 => Cause::PageFaults(f),
                    (_, Some(b)) if b >= 1.0 => Cause::ColdBlocks(b),
                    _ => Cause::Elsewhere {
                        counted: faults.is_some() && cold.is_some(),
                        lead: lead.map(|l| l.category),
                    },
                };
                let s = Shortfall {
                    imp: imp.clone(),
                    scenario: scenario.clone(),
                    dir,
                    share,
                    rate,
                    ceiling: ceil,
                    cause,
                    lead,
                };
                if !matches!(s.cause, Cause::Elsewhere { .. }) {
                    out.counted.push(s);
                } else if let Some(g) = out.groups.iter_mut().find(|g| g[0].cause == s.cause) {
                    g.push(s);
                } else {
                    out.groups.push(vec![s]);
                }
            }
        }
    }
    for g in &mut out.groups {
        g.sort_by(|a, b| a.share.total_cmp(&b.share));
    }
    out
}

/// One write size's figures against the baseline: the stacks' paired factor and their
/// AEADs' ratio.
#[derive(Debug, Clone, PartialEq)]
pub struct AtSize {
    /// The write size as the scenario names it ("1k").
    pub size: String,
    pub stack: Factor,
    pub aead: f64,
}

/// A stack ahead of the baseline at one write size and behind at another.
#[derive(Debug, Clone, PartialEq)]
pub struct Flip {
    pub imp: String,
    pub base: String,
    /// The protocol and cipher, "bulk-tls13-aes-128-gcm".
    pub family: String,
    pub dir: Direction,
    pub small: AtSize,
    pub large: AtSize,
    /// The AEADs alone flip the same way, each ratio beyond what a rerun moves one.
    pub in_crypto: bool,
}

/// One bulk scenario of a protocol and cipher: its write size as named ("1k"), in bytes, and
/// the scenario id.
type SizedScenario<'a> = (&'a str, usize, &'a str);

/// Per protocol and cipher ("bulk-tls13-aes-128-gcm"), its write sizes, smallest first.
fn families(scenarios: &[String]) -> Vec<(&str, Vec<SizedScenario<'_>>)> {
    let mut families: Vec<(&str, Vec<SizedScenario>)> = Vec::new();
    for s in scenarios {
        let (Ok(Scenario::Bulk(bulk)), Some((family, size))) =
            (s.parse::<Scenario>(), s.rsplit_once('-'))
        else {
            continue;
        };
        let at = (size, bulk.size.bytes(), s.as_str());
        match families.iter_mut().find(|(f, _)| *f == family) {
            Some((_, sizes)) => sizes.push(at),
            None => families.push((family, vec![at])),
        }
    }
    for (_, sizes) in &mut families {
        sizes.sort_by_key(|a| a.1);
    }
    families
}

/// Every impl whose order against the baseline (the main run's first impl) flips between
/// write sizes of the same protocol and cipher. Both ratios come from figures taken side by
/// side, since cells taken at different times on a shared machine can differ by half: the
/// stack's factor is the main run's, paired with the baseline's own pair, and the AEADs'
/// ratio follows from it and each stack's share of its own AEAD in the ceiling run (itself
/// a ratio of figures taken in turns): a/b = (a/b stacks) x (b's share / a's share).
pub fn size_flips(main: &RunData, ceiling: &RunData) -> Vec<Flip> {
    let impls = main.impls();
    let Some((base, others)) = impls.split_first() else {
        return Vec::new();
    };
    let scenarios = bulk_scenarios(main);
    let mut out = Vec::new();
    for (family, sizes) in families(&scenarios) {
        for imp in others.iter().filter(|i| !record::is_aa(i)) {
            for dir in Direction::BOTH {
                let at: Vec<AtSize> = sizes
                    .iter()
                    .filter_map(|&(size, _, scenario)| {
                        let stack = record(main, scenario, imp, dir.rate())?;
                        let paired = stack.paired.as_ref()?;
                        if paired.reference_client != *base || paired.reference_server != *base {
                            return None;
                        }
                        let f = paired_advantage(stack)?;
                        let share = |i: &str| median(Some(ceiling), scenario, i, dir.share());
                        Some(AtSize {
                            size: size.to_string(),
                            aead: f.ratio * share(base)? / share(imp)?,
                            stack: f,
                        })
                    })
                    .collect();
                let ahead = at
                    .iter()
                    .position(|a| a.stack.significant && a.stack.ratio >= FLIP);
                let behind = at
                    .iter()
                    .position(|a| a.stack.significant && a.stack.ratio <= 1.0 / FLIP);
                let (Some(i), Some(j)) = (ahead, behind) else {
                    continue;
                };
                let (small, large) = (at[i.min(j)].clone(), at[i.max(j)].clone());
                // The AEADs flip too when each of their ratios lies on the stacks' side of 1,
                // by more than a rerun moves a ratio.
                let beyond = |a: &AtSize| {
                    (a.aead - 1.0).signum() == (a.stack.ratio - 1.0).signum()
                        && (a.aead - 1.0).abs() >= 0.02
                };
                out.push(Flip {
                    imp: imp.clone(),
                    base: base.clone(),
                    family: family.to_string(),
                    dir,
                    in_crypto: beyond(&small) && beyond(&large),
                    small,
                    large,
                });
            }
        }
    }
    out
}

/// Cold large blocks per MiB of a variant and of its plain build, from the counter run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ColdBlocks {
    /// The variant gets at least 1 and more than twice the plain build's.
    More {
        variant: f64,
        plain: f64,
    },
    NoDifference,
    NotCounted,
}

/// A variant's bulk rate well below its plain build's.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantShortfall {
    pub variant: String,
    pub base: String,
    pub scenario: String,
    pub dir: Direction,
    pub rate: f64,
    pub plain: f64,
    pub ratio: f64,
    pub cold: ColdBlocks,
}

pub fn variant_shortfalls(run: &RunData, counters: Option<&RunData>) -> Vec<VariantShortfall> {
    let mut out = Vec::new();
    for r in run.records.iter().filter(|r| r.client.contains('+')) {
        let Some(dir) = Direction::of_rate(r.metric) else {
            continue;
        };
        let base = variant::base(&r.client);
        let Some(plain) = record(run, &r.scenario, base, r.metric) else {
            continue;
        };
        let ratio = r.median / plain.median;
        if ratio >= VARIANT_SHORTFALL {
            continue;
        }
        let cold = |imp: &str| median(counters, &r.scenario, imp, dir.cold_blocks());
        let cold = match (cold(&r.client), cold(base)) {
            (Some(v), Some(p)) if v >= 1.0 && v > 2.0 * p => ColdBlocks::More {
                variant: v,
                plain: p,
            },
            (Some(_), Some(_)) => ColdBlocks::NoDifference,
            _ => ColdBlocks::NotCounted,
        };
        out.push(VariantShortfall {
            variant: r.client.clone(),
            base: base.to_string(),
            scenario: r.scenario.clone(),
            dir,
            rate: r.median,
            plain: plain.median,
            ratio,
            cold,
        });
    }
    out
}

/// The copy probe of a ceiling run (its 16 KiB records): memcpy MB/s with the destination
/// apart from the source and 4 KiB-aliased to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CopyProbe {
    pub apart: f64,
    pub aliased: f64,
    /// How many times slower the aliased copy ran.
    pub slowdown: f64,
}

pub fn copy_probe(ceiling: &RunData) -> Option<CopyProbe> {
    let find = |m: Metric| {
        ceiling
            .records
            .iter()
            .find(|r| r.metric == m && r.scenario.ends_with("-16k"))
    };
    let (apart, aliased) = (find(Metric::CopyMbPerS)?, find(Metric::AliasedCopyMbPerS)?);
    Some(CopyProbe {
        apart: apart.median,
        aliased: aliased.median,
        slowdown: apart.median / aliased.median.max(1.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::RecordFixture;
    use tlsmatrix_model::record::{Env, Paired};

    fn rec(run: &str, scenario: &str, imp: &str, m: Metric, v: f64) -> Record {
        RecordFixture::new(m, v)
            .run(run)
            .scenario(scenario)
            .pair(imp, imp)
            .samples(vec![v; 6])
            .build()
    }

    fn run(id: &str, records: Vec<Record>) -> RunData {
        RunData {
            run_id: id.into(),
            env: Env::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        }
    }

    const S: &str = "bulk-tls13-aes-128-gcm-16k";

    fn ceiling_of(imp: &str, dir: Direction, share: f64) -> Vec<Record> {
        vec![
            rec("c", S, imp, dir.rate(), 10_000.0 * share),
            rec("c", S, imp, dir.ceiling(), 10_000.0),
            rec("c", S, imp, dir.share(), share),
        ]
    }

    #[test]
    fn a_shortfall_is_judged_by_its_counters_first_and_the_rest_grouped_by_profile() {
        let mut records = ceiling_of("fast", Direction::Send, 0.9);
        records.extend(ceiling_of("faults", Direction::Send, 0.2));
        records.extend(ceiling_of("cold", Direction::Recv, 0.5));
        records.extend(ceiling_of("bare", Direction::Send, 0.6));
        records.extend(ceiling_of("bare2", Direction::Send, 0.4));
        let ceiling = run("c", records);
        let counters = run(
            "k",
            vec![
                rec("k", S, "faults", Metric::SendPageFaultsPerMib, 16.0),
                rec("k", S, "faults", Metric::SendColdBlocksPerMib, 0.0),
                rec("k", S, "cold", Metric::RecvPageFaultsPerMib, 0.0),
                rec("k", S, "cold", Metric::RecvColdBlocksPerMib, 64.0),
            ],
        );
        let profile = run(
            "p",
            Metric::SEND_PROFILE
                .into_iter()
                .zip([0.5, 0.3, 0.02, 0.0, 0.18])
                .map(|(m, v)| rec("p", S, "bare", m, v))
                .collect(),
        );
        let inp = Inputs {
            main: None,
            ceiling: Some(&ceiling),
            counters: Some(&counters),
            allocators: None,
            profile: Some(&profile),
        };
        let impls: Vec<String> = ["fast", "faults", "cold", "bare", "bare2"]
            .map(String::from)
            .to_vec();
        let found = shortfalls(&inp, &impls);
        assert_eq!(found.total, 4, "fast is above the target");
        let causes: Vec<&Cause> = found.counted.iter().map(|s| &s.cause).collect();
        assert_eq!(causes, [&Cause::PageFaults(16.0), &Cause::ColdBlocks(64.0)]);
        assert_eq!(found.counted[1].dir, Direction::Recv);
        // bare has a profile (copies lead), bare2 none: two causes, a group each.
        assert_eq!(found.groups.len(), 2);
        let bare = &found.groups[0][0];
        assert_eq!(
            bare.cause,
            Cause::Elsewhere {
                counted: false,
                lead: Some(1)
            }
        );
        let lead = bare.lead.unwrap();
        assert_eq!((lead.share, lead.cipher), (0.3, 0.5));
        assert_eq!(found.groups[1][0].imp, "bare2");
    }

    #[test]
    fn an_order_that_flips_with_the_write_size_is_checked_against_the_aeads() {
        let (k1, k16) = ("bulk-tls13-aes-128-gcm-1k", S);
        // Paired with the baseline's own pair: the factor `f` against "base", in 12 rounds.
        let paired = |mut r: Record, f: f64| {
            r.paired = Some(Paired {
                reference_client: "base".into(),
                reference_server: "base".into(),
                reference_scenario: None,
                ratios: (0..12)
                    .map(|i| f * (1.0 + 0.002 * f64::from(i % 3)))
                    .collect(),
                blocks: (0..12).map(|i| i / 3).collect(),
            });
            r
        };
        let (mut timed, mut shares) = (Vec::new(), Vec::new());
        // (impl, scenario, recv factor, recv share of open, send factor, send share of seal):
        // "flips" receives ahead in 1 KiB writes and behind in 16 KiB, and its AEAD's ratio
        // (1.16x, 0.85x) flips too; it sends ahead then behind while its sealing does not
        // (0.99x, 0.97x). "steady" stays within FLIP of the baseline.
        for (imp, scenario, recv, recv_share, send, send_share) in [
            ("base", k1, 1.0, 0.50, 1.0, 0.60),
            ("base", k16, 1.0, 0.50, 1.0, 0.66),
            ("flips", k1, 1.19, 0.513, 1.07, 0.648),
            ("flips", k16, 0.88, 0.518, 0.84, 0.571),
            ("steady", k1, 1.01, 0.50, 1.0, 0.60),
            ("steady", k16, 0.99, 0.50, 1.0, 0.66),
        ] {
            let (recv_m, send_m) = (Metric::RecvMbPerS, Metric::SendMbPerS);
            timed.push(paired(rec("t", scenario, imp, recv_m, 5000.0), recv));
            timed.push(paired(rec("t", scenario, imp, send_m, 7000.0), send));
            shares.push(rec("c", scenario, imp, Metric::RecvShareOfOpen, recv_share));
            shares.push(rec("c", scenario, imp, Metric::SendShareOfSeal, send_share));
        }
        let flips = size_flips(&run("t", timed), &run("c", shares));
        assert_eq!(flips.len(), 2, "flips both ways, steady not: {flips:?}");
        let send = &flips[0];
        assert_eq!(
            (send.dir, send.small.size.as_str()),
            (Direction::Send, "1k")
        );
        assert!(!send.in_crypto, "its sealing does not flip");
        let recv = &flips[1];
        assert!(recv.in_crypto);
        assert!((recv.small.aead - 1.16).abs() < 0.01, "{}", recv.small.aead);
        assert!((recv.large.aead - 0.85).abs() < 0.01, "{}", recv.large.aead);
        assert_eq!(recv.family, "bulk-tls13-aes-128-gcm");
    }

    #[test]
    fn a_variant_well_below_its_plain_build_is_named_with_its_cold_blocks() {
        let alloc = run(
            "a",
            vec![
                rec("a", S, "lib", Metric::SendMbPerS, 4000.0),
                rec("a", S, "lib+jemalloc", Metric::SendMbPerS, 3900.0),
                rec("a", S, "lib+mimalloc", Metric::SendMbPerS, 2000.0),
                rec("a", S, "lib+clang", Metric::RecvMbPerS, 2000.0),
            ],
        );
        let counters = run(
            "k",
            vec![
                rec("k", S, "lib", Metric::SendColdBlocksPerMib, 0.0),
                rec("k", S, "lib+mimalloc", Metric::SendColdBlocksPerMib, 192.0),
            ],
        );
        let found = variant_shortfalls(&alloc, Some(&counters));
        assert_eq!(
            found.len(),
            1,
            "jemalloc is within 10%; clang has no plain recv: {found:?}"
        );
        assert_eq!(found[0].ratio, 0.5);
        assert_eq!(
            found[0].cold,
            ColdBlocks::More {
                variant: 192.0,
                plain: 0.0
            }
        );
    }
}
