//! What a run does before any driver starts: its scenarios (named, or the measure's own
//! defaults), its impls and the tools its measure needs, its certificates, the CPUs its lanes
//! are pinned to, and the plan: which pairs, which cells run apart, which are sampled in turns.

use super::*;

/// The scenarios to run: the named ones, or the measure's default suite, this shard's part.
pub(super) fn scenarios_of(opts: &RunOptions) -> Result<Vec<Scenario>> {
    let defaults = opts.measure.row().defaults;
    let scenarios = if opts.scenarios.is_empty() && defaults != DefaultScenarios::Suite {
        opts.shard.select(&measure_defaults(defaults))
    } else if opts.scenarios.is_empty() && opts.twins {
        let suite: Vec<Scenario> = tlsmatrix_model::scenario::TWIN_SUITE
            .iter()
            .map(|id| id.parse().expect("a listed scenario id parses"))
            .collect();
        opts.shard.select(&suite)
    } else {
        opts.shard.select(&select_scenarios(&opts.scenarios)?)
    };
    if scenarios.is_empty() {
        bail!(
            "shard {}/{} has no scenario: there are fewer scenarios than shards",
            opts.shard.index,
            opts.shard.count
        );
    }
    Ok(scenarios)
}

/// A measure's own default scenarios (`MeasureRow::defaults`).
pub(super) fn measure_defaults(defaults: DefaultScenarios) -> Vec<Scenario> {
    match defaults {
        DefaultScenarios::Suite => Scenario::default_suite(),
        DefaultScenarios::WireSuite => Scenario::wire_suite(),
        // A floor is a handshake's: the default suite's handshakes, full and resumed.
        DefaultScenarios::SuiteHandshakes => Scenario::default_suite()
            .into_iter()
            .filter(|s| matches!(s, Scenario::Handshake(_)))
            .collect(),
        DefaultScenarios::Named(ids) => ids
            .iter()
            .map(|id| id.parse().expect("a listed scenario id parses"))
            .collect(),
    }
}

/// The CPUs lanes are pinned to: the mask's, as many as a CPU quota (cgroups) leaves; at
/// least one per lane.
pub(super) fn lane_cpus(lanes: usize) -> Result<Vec<usize>> {
    let cpus: Vec<usize> = drivers::usable_cpus()
        .into_iter()
        .take(std::thread::available_parallelism().map_or(1, |n| n.get()))
        .collect();
    let cores = cpus.len();
    if lanes == 0 || lanes > cores {
        bail!(
            "--lanes {lanes}: this run may use {cores} core(s), and each lane samples on a core of its own"
        );
    }
    Ok(cpus)
}

/// The chosen impls, each with a row in the impl table, and the tools the measure needs.
pub(super) fn checked_impls<'r>(
    reg: &'r Registry,
    opts: &RunOptions,
) -> Result<Vec<&'r ImplEntry>> {
    let impls = select_impls(reg, &opts.impls)?;
    if let Some(e) = impls.iter().find(|e| impls::row(&e.name).is_none()) {
        bail!(
            "impl '{}' has no row in the impl table (crates/model/src/impls.rs); add one saying \
             which library version it must run before measuring it",
            e.name
        );
    }
    match opts.measure.row().tool {
        Tool::Valgrind => drivers::check_valgrind()?,
        Tool::Perf => drivers::check_perf()?,
        Tool::None => {}
    }
    Ok(impls)
}

/// The run's certificates, beside its results file: written here once, before any driver
/// starts, since the Go driver reads them and cannot write them.
pub(super) fn write_certs(
    opts: &RunOptions,
    scenarios: &[Scenario],
    twins: &[(Scenario, Scenario)],
) -> Result<PathBuf> {
    let certs_dir = opts
        .out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join("certs");
    let mut sigs: Vec<_> = scenarios
        .iter()
        .chain(twins.iter().map(|(_, t)| t))
        .map(|s| s.params().sig)
        .collect();
    sigs.sort();
    sigs.dedup();
    for sig in sigs {
        tlsmatrix_harness::certs::load_or_generate(&certs_dir, sig)?;
    }
    Ok(certs_dir)
}

/// What a run does: its pairs, the cells run apart, the scenarios sampled in turns, and how.
pub(super) struct Plan<'r> {
    pub(super) baseline: &'r ImplEntry,
    pub(super) scenarios: usize,
    pub(super) pairs: usize,
    pub(super) single: Vec<(Scenario, &'r ImplEntry, &'r ImplEntry)>,
    pub(super) paired: Vec<ScenarioGroups<'r>>,
    pub(super) passes: u32,
    pub(super) rounds: u32,
}

impl Plan<'_> {
    /// Samples the whole run takes, for its progress bar.
    pub(super) fn samples(&self, runs: u32) -> u64 {
        let paired: u64 = self
            .paired
            .iter()
            .flat_map(|p| &p.groups)
            .map(|g| (g.cells.len() + usize::from(g.companion)) as u64)
            .sum::<u64>()
            * u64::from(self.rounds * self.passes);
        self.single.len() as u64 * u64::from(runs) + paired
    }

    /// Cells the run writes, a line each.
    /// The cells the run writes: a group's reference is the baseline's pair, written once per
    /// scenario, or a twin group's own classical cell, written with the group.
    pub(super) fn cells(&self) -> usize {
        let shared = |g: &groups::Group| g.has_reference && g.reference.is_none();
        self.single.len()
            + self
                .paired
                .iter()
                .map(|p| {
                    p.apart.len()
                        + p.groups
                            .iter()
                            .map(|g| g.cells.len() - usize::from(shared(g)))
                            .sum::<usize>()
                        + usize::from(p.groups.iter().any(shared))
                })
                .sum::<usize>()
    }
}

pub(super) fn plan<'r>(
    opts: &RunOptions,
    scenarios: &[Scenario],
    twins: &[(Scenario, Scenario)],
    impls: &[&'r ImplEntry],
) -> Plan<'r> {
    let baseline = impls[0];
    let wanted = |c: &ImplEntry, v: &ImplEntry| {
        // A measure of one library alone (its own AEAD, crypto, contexts, profile) runs
        // each impl with itself.
        if opts.measure.row().self_only.is_some() || opts.self_pairs_only {
            return c.name == v.name;
        }
        !opts.baseline_pairs_only
            || c.name == v.name
            || c.name == baseline.name
            || v.name == baseline.name
    };
    // Two impls of different drivers cannot share an in-memory pair: such a pair is not
    // planned (the report compares each with the baseline through their own pairs), and
    // the plan says once which it leaves out.
    let (pairs, apart): (Vec<(&ImplEntry, &ImplEntry)>, Vec<_>) = impls
        .iter()
        .flat_map(|&c| impls.iter().map(move |&v| (c, v)))
        .filter(|(c, v)| wanted(c, v))
        .partition(|(c, v)| drivers::shared_driver(c, v).is_some());
    if !apart.is_empty() {
        let names: Vec<String> = apart
            .iter()
            .map(|(c, v)| format!("{} -> {}", c.name, v.name))
            .collect();
        eprintln!(
            "not planned: {} pair(s) whose impls live in different drivers and so cannot share an in-memory pair ({}); each impl is compared through its own pair",
            apart.len(),
            names.join(", ")
        );
    }
    let grouped = |s: &Scenario| opts.measure == Measure::Time && groups::is_grouped(s);
    let single: Vec<(Scenario, &ImplEntry, &ImplEntry)> = scenarios
        .iter()
        .filter(|s| !grouped(s))
        .flat_map(|s| pairs.iter().map(move |&(c, v)| (*s, c, v)))
        .collect();
    let paired: Vec<ScenarioGroups> = scenarios
        .iter()
        .filter(|s| grouped(s))
        .map(|s| {
            let (groups, apart) = match twins.iter().find(|(pq, _)| pq == s) {
                Some(&(pq, twin)) => (groups::twin_plan(pq, twin, impls), Vec::new()),
                None => groups::plan(*s, &pairs, baseline),
            };
            ScenarioGroups {
                scenario: *s,
                groups,
                apart,
            }
        })
        .collect();
    // No pass without a round: fewer samples than passes means fewer passes.
    let passes = opts.passes.clamp(1, opts.runs.max(1));
    Plan {
        baseline,
        scenarios: scenarios.len(),
        pairs: pairs.len(),
        single,
        paired,
        passes,
        rounds: opts.runs.div_ceil(passes),
    }
}

/// `--pairs twins`: each named scenario with its classical twin, or why it cannot be one.
pub(super) fn twin_pairs(
    scenarios: &[Scenario],
    measure: Measure,
) -> Result<Vec<(Scenario, Scenario)>> {
    if measure != Measure::Time {
        bail!(
            "--pairs twins pairs timed handshakes; it takes no --measure {}",
            measure.as_str()
        );
    }
    scenarios
        .iter()
        .map(|s| match s.classical_twin() {
            Some(twin) => Ok((*s, twin)),
            None => bail!("--pairs twins sets post-quantum handshakes beside their classical twins, and {s} is no post-quantum handshake; name ML-DSA or ML-KEM handshakes, e.g. 'handshake-tls13-mldsa44-*-full'"),
        })
        .collect()
}

/// A grouped scenario's plan: its groups, and the pairs that run apart (see `groups::plan`).
pub(super) struct ScenarioGroups<'a> {
    pub(super) scenario: Scenario,
    pub(super) groups: Vec<groups::Group<'a>>,
    pub(super) apart: Vec<(&'a ImplEntry, &'a ImplEntry)>,
}
