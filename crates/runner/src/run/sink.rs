//! Where a run's finished cells go: records checked against the versions the registry
//! promised, the results file and the database (a cell at a time), the progress bar, and a
//! line for the user.

use super::plan::Plan;
use super::*;

pub(super) fn run_id(now: SystemTime) -> String {
    format!(
        "{}-{:04x}",
        tlsmatrix_registry::env::compact(now),
        std::process::id() & 0xffff
    )
}

/// "3m05s" or "42s".
pub(super) fn eta(secs: f64) -> String {
    let s = secs.round() as u64;
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Records for a measured cell, one per metric, after checking the driver ran the versions
/// the registry promised.
pub(super) fn records_for(
    cell: &Cell,
    expected: [&ImplEntry; 2],
    runs: u32,
    run_id: &str,
    env: &Env,
) -> Result<Vec<Record>, String> {
    let CellOutcome::Measured {
        client_version,
        server_version,
        samples,
        trace,
    } = &cell.outcome
    else {
        return Ok(Vec::new());
    };
    for (entry, reported) in expected.iter().zip([client_version, server_version]) {
        if *reported != entry.version {
            return Err(format!(
                "{} reported version '{reported}' while measuring, but its driver lists '{}'",
                entry.name, entry.version
            ));
        }
    }
    if samples.len() != runs as usize {
        return Err(format!(
            "driver produced {} samples where {runs} were asked for",
            samples.len()
        ));
    }
    let mut by_metric: BTreeMap<Metric, Vec<f64>> = BTreeMap::new();
    for sample in samples {
        for &(m, v) in sample {
            if !v.is_finite() || v < 0.0 || (v == 0.0 && !m.may_be_zero()) {
                return Err(format!("driver produced an impossible {m} of {v}"));
            }
            by_metric.entry(m).or_default().push(v);
        }
    }
    Ok(by_metric
        .into_iter()
        .filter_map(|(metric, samples)| {
            let mut r = Record::from_samples(
                run_id,
                &cell.scenario.to_string(),
                (&cell.client, client_version),
                (&cell.server, server_version),
                metric,
                samples,
                env.clone(),
            )?;
            if metric == Metric::PathCpuNs {
                r.trace = trace.clone();
            }
            Some(r)
        })
        .collect())
}

/// The line that says why a cell has no figures, if it has none.
pub(super) fn not_measured(cell: &Cell, run_id: &str) -> Option<CellRecord> {
    let (outcome, reason) = match &cell.outcome {
        CellOutcome::Measured { .. } => return None,
        CellOutcome::Unsupported(r) => (CellStatus::Unsupported, r),
        CellOutcome::Failed(r) => (CellStatus::Failed, r),
    };
    Some(CellRecord {
        schema: CELL_SCHEMA.into(),
        run_id: run_id.into(),
        scenario: cell.scenario.to_string(),
        client: cell.client.clone(),
        server: cell.server.clone(),
        outcome,
        reason: reason.clone(),
    })
}

/// Where finished cells go: the results file and the database (each cell in one write and one
/// transaction), the summary's inputs, and a line for the user.
pub(super) struct Sink {
    pub(super) run_id: String,
    pub(super) results: ResultsFile,
    pub(super) store: Store,
    pub(super) bar: ProgressBar,
    pub(super) interactive: bool,
    pub(super) started: Instant,
    pub(super) planned: usize,
    pub(super) cells: Vec<Cell>,
    pub(super) records: Vec<Record>,
    pub(super) cell_lines: Vec<CellRecord>,
}

impl Sink {
    pub(super) fn finish(&mut self, cell: Cell, records: Vec<Record>) -> Result<()> {
        let line = not_measured(&cell, &self.run_id);
        self.results.append(&records, line.as_ref())?;
        self.store.add_cell(&records, line.as_ref())?;
        self.records.extend(records);
        self.cell_lines.extend(line);
        let status = match &cell.outcome {
            CellOutcome::Measured { .. } => "ok".to_string(),
            CellOutcome::Unsupported(r) => format!("unsupported: {r}"),
            CellOutcome::Failed(r) => format!("FAILED: {r}"),
        };
        let line = format!(
            "{} {} -> {}: {status}",
            cell.scenario, cell.client, cell.server
        );
        let failed = matches!(cell.outcome, CellOutcome::Failed(_));
        // Counted before the line is printed, so that the line counts its own cell.
        self.cells.push(cell);
        if self.interactive {
            if failed {
                self.bar.println(line);
            }
        } else {
            self.log(&line);
        }
        Ok(())
    }

    /// Without a terminal there is no bar, so each line carries the progress and estimate
    /// instead, from the samples taken so far (the unit the bar counts).
    pub(super) fn log(&self, text: &str) {
        let (done, all) = (self.bar.position(), self.bar.length().unwrap_or(0).max(1));
        let left = if done == 0 {
            "?".to_string()
        } else {
            let spent = self.started.elapsed().as_secs_f64();
            eta(spent / done as f64 * all.saturating_sub(done) as f64)
        };
        // Paired cells are written only after their last pass, so the share of samples taken
        // is the progress; the cell count says what is already on disk.
        eprintln!(
            "[{:.0}% of samples, {}/{} cells written, ~{left} left] {text}",
            100.0 * done as f64 / all as f64,
            self.cells.len(),
            self.planned,
        );
    }
}

/// The run begins: its id in the store, its progress bar, and one line saying what it does.
pub(super) fn start(
    opts: &RunOptions,
    plan: &Plan,
    env: &Env,
    results: ResultsFile,
    mut store: Store,
) -> Result<Sink> {
    let run_id = opts
        .run_id
        .clone()
        .unwrap_or_else(|| run_id(SystemTime::now()));
    store.begin_run(&run_id, opts.measure.as_str(), env)?;
    let interactive = std::io::stderr().is_terminal();
    let bar = crate::progress::bar(plan.samples(opts.runs), "samples");
    if !interactive {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    eprintln!(
        "run {run_id}: {} scenarios x {} pairs{}, {} samples each{} -> {}",
        plan.scenarios,
        plan.pairs,
        if opts.twins {
            ", each with itself on the classical twin too".to_string()
        } else {
            format!(" (+ an A/A copy of {})", plan.baseline.name)
        },
        opts.runs,
        if plan.paired.is_empty() {
            String::new()
        } else {
            format!(
                ", timed ones paired in {} passes of {} rounds, {} group(s) at once",
                plan.passes, plan.rounds, opts.lanes
            )
        },
        results.path().display()
    );
    Ok(Sink {
        run_id,
        results,
        store,
        bar,
        interactive,
        started: Instant::now(),
        planned: plan.cells(),
        cells: Vec::new(),
        records: Vec::new(),
        cell_lines: Vec::new(),
    })
}
