//! The timed scenarios sampled in turns: passes over their groups, each group's cells in one
//! process taking turns, groups that settle stopped early, and each scenario's cells written
//! after its last pass.

use super::plan::ScenarioGroups;
use super::*;

pub(super) struct PairedOptions<'a> {
    pub(super) passes: u32,
    pub(super) until_within: Option<f64>,
    pub(super) min_passes: u32,
    pub(super) weather: bool,
    /// Groups sampled at once, each in its own process on its own core.
    pub(super) lanes: usize,
    /// The CPUs lanes are pinned to, at least `lanes` of them.
    pub(super) cpus: &'a [usize],
    pub(super) rounds: u32,
    pub(super) certs: &'a Path,
    pub(super) warmup_ms: u64,
    pub(super) sample_ms: u64,
    pub(super) silence_limit: Duration,
    pub(super) env: &'a Env,
}

/// The grouped scenarios, in passes: each pass runs every group of every scenario once, in a
/// new process pinned to a core, `o.lanes` groups at a time (each on its own core, the cores
/// rotating from pass to pass); a scenario's cells are written after its last pass.
pub(super) fn run_paired(
    plan: &[ScenarioGroups],
    o: &PairedOptions,
    baseline: &ImplEntry,
    sink: &mut Sink,
) -> Result<()> {
    if plan.is_empty() {
        return Ok(());
    }
    let mut got = Gathering {
        reference: (baseline.name.clone(), baseline.name.clone()),
        gathered: (0..plan.len()).map(|_| BTreeMap::new()).collect(),
        ended: (0..plan.len()).map(|_| BTreeMap::new()).collect(),
        block: 0,
    };
    let mut weather = if o.weather {
        sink.bar.set_message("probing the memory weather");
        match crate::weather::PassWeather::start(o.cpus[0]) {
            Ok(w) => Some(w),
            Err(why) => {
                sink.log(&format!("memory weather not probed: {why}"));
                None
            }
        }
    } else {
        None
    };
    // The groups that have settled (`settle`), per scenario, by index: no more passes.
    let mut settled: Vec<Vec<bool>> = plan.iter().map(|p| vec![false; p.groups.len()]).collect();
    for pass in 0..o.passes as usize {
        let blocks = pass_blocks(plan, &got.ended, &settled, &got.reference, pass);
        if blocks.is_empty() {
            break;
        }
        if let Some(w) = &mut weather {
            w.pass_starts(got.block);
        }
        let batches = pass_batches(&blocks, pass);
        let bar = sink.bar.clone();
        crate::lanes::in_order(
            batches.len(),
            o.lanes,
            |bi, lane| sample_batch(&blocks, &batches[bi], pass, lane, o, baseline, &bar),
            |bi, runs| -> Result<()> {
                for (&i, run) in batches[bi].iter().zip(runs) {
                    got.take(plan, &blocks[i], run, pass, o, sink);
                }
                Ok(())
            },
        )?;
        if let Some(w) = &mut weather {
            w.pass_ends();
        }
        if let Some(within) = o.until_within {
            settle_groups(plan, &got, &mut settled, pass as u32 + 1, within, o, sink);
        }
    }
    let by_block = weather.as_ref().map(|w| w.of_blocks(got.block));
    for (si, sg) in plan.iter().enumerate() {
        for &(c, s) in &sg.apart {
            let cell = Cell {
                scenario: sg.scenario,
                client: c.name.clone(),
                server: s.name.clone(),
                outcome: CellOutcome::Unsupported(apart_reason(&c.name, &s.name)),
            };
            sink.finish(cell, Vec::new())?;
        }
        finish_scenario(
            sg,
            &got.gathered[si],
            &mut got.ended[si],
            &got.reference,
            o.env,
            by_block.as_ref(),
            sink,
        )?;
    }
    Ok(())
}

/// After a pass, marks the groups whose factors' intervals are all within `within` (and that
/// have had `o.min_passes` passes) as settled, takes their remaining samples off the
/// progress bar, and says how many settled.
pub(super) fn settle_groups(
    plan: &[ScenarioGroups],
    got: &Gathering,
    settled: &mut [Vec<bool>],
    passes_done: u32,
    within: f64,
    o: &PairedOptions,
    sink: &Sink,
) {
    if passes_done >= o.passes {
        return;
    }
    let mut newly = 0usize;
    // The open groups' widest half-widths (a group without pairs yet counts as unbounded).
    let mut open: Vec<f64> = Vec::new();
    for (si, sg) in plan.iter().enumerate() {
        for (gi, g) in sg.groups.iter().enumerate() {
            if settled[si][gi] {
                continue;
            }
            let reference = g.reference.as_ref().unwrap_or(&got.reference);
            // A cell that ended has no samples to judge and takes no more passes: only the
            // live cells count, and a group with none but the reference's is no longer sampled.
            let g = without_ended(g, &got.ended[si]);
            if g.cells.iter().all(|c| &c.label == reference) {
                continue;
            }
            let widest = crate::settle::widest_half_width(&g, &got.gathered[si], reference);
            if !crate::settle::settled(widest, passes_done, o.min_passes, within) {
                open.push(widest.unwrap_or(f64::INFINITY));
                continue;
            }
            settled[si][gi] = true;
            newly += 1;
            let left = (g.cells.len() + usize::from(g.companion)) as u64
                * u64::from(o.rounds * (o.passes - passes_done));
            if let Some(len) = sink.bar.length() {
                sink.bar.set_length(len.saturating_sub(left));
            }
        }
    }
    // From the first pass that may stop a group on, every pass says how far the open groups
    // are from the rule, so that a run whose groups never settle shows by how much.
    if passes_done >= o.min_passes {
        let line = format!(
            "after pass {passes_done}: {newly} group(s) settled within ±{:.1}%, {} still sampled{}",
            within * 100.0,
            open.len(),
            crate::settle::spread(&mut open)
        );
        if sink.interactive {
            sink.bar.println(line);
        } else {
            sink.log(&line);
        }
    }
}

/// One process's turn in a pass: the batch's groups sampled in turns, one core; a duet also
/// samples the baseline's own pair in the baseline's driver beside them.
pub(super) fn sample_batch(
    blocks: &[PassBlock],
    batch: &[usize],
    pass: usize,
    lane: usize,
    o: &PairedOptions,
    baseline: &ImplEntry,
    bar: &ProgressBar,
) -> Vec<BlockRun> {
    let first = &blocks[batch[0]];
    bar.set_message(format!(
        "pass {}/{} {} ({} scenario(s) in one process)",
        pass + 1,
        o.passes,
        first.group.subject,
        batch.len()
    ));
    let req = groups::GroupRequest {
        certs: o.certs,
        rounds: o.rounds,
        warmup_ms: o.warmup_ms,
        sample_ms: o.sample_ms,
        silence_limit: o.silence_limit,
        core: Some(o.cpus[(pass + lane) % o.cpus.len()]),
        heap_shift: tlsmatrix_model::allocator::pass_heap_shift(pass, o.passes as usize),
    };
    let parts: Vec<&groups::Group> = batch.iter().map(|&i| &blocks[i].group).collect();
    if !first.duet {
        return groups::run_batch(&parts, &req, || bar.inc(1))
            .into_iter()
            .map(|mine| BlockRun {
                mine,
                companion: None,
            })
            .collect();
    }
    // Groups without the reference in their driver sample in turns with the baseline's own
    // pair in the baseline's driver, which becomes their reference for these blocks.
    let companions: Vec<groups::Group> = parts
        .iter()
        .map(|g| groups::own_pair(g.scenario, baseline))
        .collect();
    let theirs: Vec<&groups::Group> = companions.iter().collect();
    let [mine, theirs] = groups::run_duet([&parts, &theirs], &req, || bar.inc(1));
    mine.into_iter()
        .zip(theirs)
        .zip(&companions)
        .map(|((mine, theirs), companion)| BlockRun {
            mine,
            companion: Some(theirs.into_iter().next().map_or_else(
                || Err(Box::new(CellOutcome::Failed("no result".into()))),
                |run| checked_run(&companion.cells[0], run, o.rounds),
            )),
        })
        .collect()
}

/// What the passes have gathered, per scenario of the plan: each cell's blocks of samples,
/// and the cells that ended (failed or refused) with their outcome.
pub(super) struct Gathering {
    pub(super) reference: Label,
    pub(super) gathered: Vec<BTreeMap<Label, groups::Gathered>>,
    pub(super) ended: Vec<BTreeMap<Label, CellOutcome>>,
    /// Blocks taken so far, over all passes: the next block's number.
    pub(super) block: u32,
}

impl Gathering {
    /// Takes one block's samples (and a duet's reference), or ends the cells it failed.
    pub(super) fn take(
        &mut self,
        plan: &[ScenarioGroups],
        b: &PassBlock,
        run: BlockRun,
        pass: usize,
        o: &PairedOptions,
        sink: &mut Sink,
    ) {
        let (si, g) = (b.scenario, &b.group);
        let id = plan[si].scenario.to_string();
        let block = self.block;
        match run.companion {
            Some(Ok((versions, samples))) => {
                self.gathered[si]
                    .entry(self.reference.clone())
                    .or_default()
                    .add(block, versions, samples);
            }
            Some(Err(other)) => sink.log(&format!(
                "{id} pass {}: the baseline beside {} gave no reference ({other:?}); that block is unpaired",
                pass + 1,
                b.group.subject
            )),
            None => {}
        }
        if !sink.interactive {
            sink.log(&format!(
                "{id} pass {}/{}: {} sampled in turns{}",
                pass + 1,
                o.passes,
                g.cells
                    .iter()
                    .map(|c| format!("{} -> {}", c.label.0, c.label.1))
                    .collect::<Vec<_>>()
                    .join(", "),
                if b.duet {
                    format!(
                        ", with {} -> {} in its own driver",
                        self.reference.0, self.reference.1
                    )
                } else {
                    String::new()
                }
            ));
        }
        for (cell, run) in g.cells.iter().zip(run.mine) {
            if self.ended[si].contains_key(&cell.label) {
                continue; // the reference, ended in an earlier group of this pass
            }
            if matches!(run, groups::CellRun::NotStarted) {
                continue; // its process ended in an earlier scenario: no block this pass
            }
            match checked_run(cell, run, o.rounds) {
                Ok((versions, samples)) => self.gathered[si]
                    .entry(cell.label.clone())
                    .or_default()
                    .add(block, versions, samples),
                Err(outcome) => {
                    self.ended[si].insert(cell.label.clone(), *outcome);
                }
            }
        }
        self.block += 1;
    }
}

/// A client and a server impl, by name.
pub(super) type Label = (String, String);

/// One group of one scenario, as a pass runs it.
pub(super) struct PassBlock<'a> {
    pub(super) scenario: usize,
    pub(super) group: groups::Group<'a>,
    /// Sampled in turns with the baseline's own pair in the baseline's driver.
    pub(super) duet: bool,
}

/// What one block gave: its own cells, and the companion reference of a duet (checked).
pub(super) struct BlockRun {
    pub(super) mine: Vec<groups::CellRun>,
    pub(super) companion: Option<Result<MeasuredRun, Box<CellOutcome>>>,
}

/// The versions a cell's drivers reported, and its samples.
pub(super) type MeasuredRun = ((String, String), Vec<groups::RoundSample>);

/// A pass's blocks in plan order, without the cells that ended in earlier passes, each
/// group's cells rotated by the pass. A driver sets its cells up in the order given, and the
/// last one set up received 2-3% faster than the others with the very same code (three
/// copies of the baseline in one process: 1.002 and 1.028 against the first, AES-GCM in 16
/// KiB records, over 12 processes; its buffers come last off the heap): the A/A copy, always
/// last, came out 1.015-1.023 in every run. Rotated, each cell is last in its share of the
/// passes, and the median and the interval over passes take that in.
pub(super) fn pass_blocks<'a>(
    plan: &[ScenarioGroups<'a>],
    ended: &[BTreeMap<Label, CellOutcome>],
    settled: &[Vec<bool>],
    reference: &Label,
    pass: usize,
) -> Vec<PassBlock<'a>> {
    let mut blocks = Vec::new();
    for (si, sg) in plan.iter().enumerate() {
        for (gi, group) in sg.groups.iter().enumerate() {
            if settled[si][gi] {
                continue;
            }
            let mut g = without_ended(group, &ended[si]);
            if !g.cells.is_empty() {
                let n = g.cells.len();
                g.cells.rotate_left(pass % n);
            }
            let own = g.reference.clone();
            let reference = own.as_ref().unwrap_or(reference);
            g.has_reference = g.cells.iter().any(|c| &c.label == reference);
            // A group whose other cells all ended has nothing left to pair with.
            if g.cells.iter().all(|c| &c.label == reference) {
                continue;
            }
            let duet = g.companion && !ended[si].contains_key(reference);
            blocks.push(PassBlock {
                scenario: si,
                group: g,
                duet,
            });
        }
    }
    blocks
}

/// A group without the cells that ended (unsupported or failed) in earlier passes.
pub(super) fn without_ended<'a>(
    group: &groups::Group<'a>,
    ended: &BTreeMap<Label, CellOutcome>,
) -> groups::Group<'a> {
    let mut g = group.clone();
    g.cells.retain(|c| !ended.contains_key(&c.label));
    g
}

/// A pass's blocks gathered into batches, one process each: the blocks of one subject in
/// one driver (and sampled alone or in duet alike), over every scenario. Starting a driver
/// costs tens of milliseconds (aws-lc seeds its random generator from CPU jitter, about 30
/// ms of CPU, in every process that draws from it), which one process per scenario paid
/// some 3,400 times a run. Each batch's scenarios rotate by the pass, so that no scenario is
/// always the one a fresh process starts with.
pub(super) fn pass_batches(blocks: &[PassBlock], pass: usize) -> Vec<Vec<usize>> {
    let mut batches: Vec<Vec<usize>> = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let same = |other: &PassBlock| {
            other.group.subject == b.group.subject
                && other.group.driver == b.group.driver
                && other.duet == b.duet
        };
        match batches.iter_mut().find(|batch| same(&blocks[batch[0]])) {
            Some(batch) => batch.push(i),
            None => batches.push(vec![i]),
        }
    }
    for batch in &mut batches {
        let n = batch.len();
        batch.rotate_left(pass % n);
    }
    batches
}

/// A group's cell's run, checked: its versions and samples when it ran what the registry
/// promised and gave a sample every round, else how the cell ended.
pub(super) fn checked_run(
    cell: &groups::GroupCell,
    run: groups::CellRun,
    rounds: u32,
) -> Result<MeasuredRun, Box<CellOutcome>> {
    let (versions, samples) = match run {
        groups::CellRun::Measured { versions, samples } => (versions, samples),
        groups::CellRun::Unsupported(r) => return Err(Box::new(CellOutcome::Unsupported(r))),
        groups::CellRun::Failed(r) => return Err(Box::new(CellOutcome::Failed(r))),
        groups::CellRun::NotStarted => {
            return Err(Box::new(CellOutcome::Failed(
                "its process ended before it began".into(),
            )))
        }
    };
    for (entry, reported) in [(cell.client, &versions.0), (cell.server, &versions.1)] {
        if *reported != entry.version {
            return Err(Box::new(CellOutcome::Failed(format!(
                "{} reported version '{reported}' while measuring, but its driver lists '{}'",
                entry.name, entry.version
            ))));
        }
    }
    if samples.len() != rounds as usize {
        return Err(Box::new(CellOutcome::Failed(format!(
            "driver produced {} samples where {rounds} rounds were asked for",
            samples.len()
        ))));
    }
    Ok((versions, samples))
}

/// Writes every cell of a scenario once its passes are done: records with blocks and ratios
/// to the reference and the weather of their blocks, or the reason it has none.
pub(super) fn finish_scenario(
    plan: &ScenarioGroups,
    gathered: &BTreeMap<(String, String), groups::Gathered>,
    ended: &mut BTreeMap<(String, String), CellOutcome>,
    reference: &(String, String),
    env: &Env,
    weather: Option<&BTreeMap<u32, tlsmatrix_model::weather::Weather>>,
    sink: &mut Sink,
) -> Result<()> {
    let mut seen: Vec<&(String, String)> = Vec::new();
    for (group, cell) in plan
        .groups
        .iter()
        .flat_map(|g| g.cells.iter().map(move |c| (g, c)))
    {
        if seen.contains(&&cell.label) {
            continue;
        }
        seen.push(&cell.label);
        let scenario = cell.scenario.unwrap_or(plan.scenario);
        let id = scenario.to_string();
        // A twin group's cells pair with its own reference cell, which runs another scenario.
        let (reference, reference_scenario) = match &group.reference {
            Some(own) => (
                own,
                group
                    .cells
                    .iter()
                    .find(|c| &c.label == own)
                    .and_then(|c| c.scenario)
                    .map(|s| s.to_string()),
            ),
            None => (reference, None),
        };
        let reference_data = gathered.get(reference).map(|g| (reference, g));
        let (outcome, records) = match (ended.remove(&cell.label), gathered.get(&cell.label)) {
            (Some(o), _) => (o, Vec::new()),
            (None, Some(g)) => {
                let mut records = groups::records(
                    &sink.run_id,
                    &id,
                    &cell.label,
                    g,
                    reference_data,
                    reference_scenario.as_deref().filter(|r| *r != id),
                    env,
                );
                if let Some(w) = weather {
                    crate::weather::attach(&mut records, w);
                }
                let (client_version, server_version) = g.versions.clone().unwrap_or_default();
                (
                    CellOutcome::Measured {
                        client_version,
                        server_version,
                        samples: Vec::new(),
                        trace: None,
                    },
                    records,
                )
            }
            (None, None) => (CellOutcome::Failed("no samples".into()), Vec::new()),
        };
        sink.finish(
            Cell {
                scenario,
                client: cell.label.0.clone(),
                server: cell.label.1.clone(),
                outcome,
            },
            records,
        )?;
    }
    Ok(())
}
