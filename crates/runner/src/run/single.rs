//! The cells run apart, each in a driver of its own: how many at once (the measure's lanes),
//! each measured or refused with the reason, and written in plan order.

use super::*;

/// What every cell run apart shares.
pub(super) struct SingleSettings<'a> {
    pub(super) opts: &'a RunOptions,
    pub(super) cpus: &'a [usize],
    pub(super) certs: &'a Path,
    pub(super) scratch: &'a Path,
    pub(super) env: &'a Env,
}

/// How many single cells run at once, and whether each is pinned to its lane's core, as the
/// measure's row says ([`Lanes`]): counts one per core, figures taken in turns inside the
/// process `lanes` at once each pinned to its own core, the rest alone.
pub(super) fn single_lanes(
    measure: Measure,
    scenario: &Scenario,
    lanes: usize,
    cores: usize,
) -> (usize, bool) {
    let policy = match measure.row().lanes {
        Lanes::ByScenario => Lanes::of_timed(scenario),
        policy => policy,
    };
    match policy {
        Lanes::PerCore => (cores, false),
        Lanes::Pinned => (lanes, lanes > 1),
        Lanes::Alone | Lanes::ByScenario => (1, false),
    }
}

/// Runs the cells that are not sampled in turns, each in a driver of its own, as many at once
/// as [`single_lanes`] says. Cells are written in plan order.
pub(super) fn run_single(
    settings: &SingleSettings,
    single: &[(Scenario, &ImplEntry, &ImplEntry)],
    sink: &mut Sink,
) -> Result<()> {
    let opts = settings.opts;
    let side_by_side =
        |s: &Scenario| single_lanes(opts.measure, s, opts.lanes, settings.cpus.len());
    let bar = sink.bar.clone();
    for segment in single.chunk_by(|a, b| side_by_side(&a.0) == side_by_side(&b.0)) {
        let (jobs, pinned) = side_by_side(&segment[0].0);
        crate::lanes::in_order(
            segment.len(),
            jobs,
            |i, lane| {
                measure_single(
                    settings,
                    &bar,
                    &segment[i],
                    pinned.then(|| settings.cpus[lane]),
                )
            },
            |i, outcome| -> Result<()> {
                let (scenario, client_entry, server_entry) = segment[i];
                let mut cell = Cell {
                    scenario,
                    client: client_entry.name.clone(),
                    server: server_entry.name.clone(),
                    outcome,
                };
                let records = records_for(
                    &cell,
                    [client_entry, server_entry],
                    opts.runs,
                    &sink.run_id,
                    settings.env,
                )
                .unwrap_or_else(|why| {
                    cell.outcome = CellOutcome::Failed(why);
                    Vec::new()
                });
                sink.finish(cell, records)
            },
        )?;
    }
    Ok(())
}

/// One cell run apart, in its driver: measured, or refused with the reason.
pub(super) fn measure_single(
    settings: &SingleSettings,
    bar: &ProgressBar,
    &(scenario, client_entry, server_entry): &(Scenario, &ImplEntry, &ImplEntry),
    core: Option<usize>,
) -> CellOutcome {
    let opts = settings.opts;
    let (client, server) = (&client_entry.name, &server_entry.name);
    let id = scenario.to_string();
    bar.set_message(format!("{id} {client} -> {server}"));
    let shared = drivers::shared_driver(client_entry, server_entry);
    let req = CellRequest {
        driver: shared.unwrap_or(client_entry.driver()),
        core,
        scenario: &id,
        client,
        server,
        certs: settings.certs,
        runs: opts.runs,
        warmup_ms: opts.warmup_ms.unwrap_or(200),
        sample_ms: opts
            .sample_ms
            .unwrap_or(opts.measure.row().default_sample_ms(&scenario)),
        silence_limit: opts.cell_timeout,
        measure: opts.measure,
        scratch: settings.scratch,
    };
    let mut ticks = 0u64;
    // Cross-library pairs must live in one driver to run in memory.
    let refused = client_entry
        .refusal(opts.measure)
        .or_else(|| server_entry.refusal(opts.measure));
    let outcome = if let Some(why) = refused {
        CellOutcome::Unsupported(why)
    } else if shared.is_none() {
        CellOutcome::Unsupported(apart_reason(client, server))
    } else {
        drivers::run_cell(&req, || {
            ticks += 1;
            bar.inc(1);
        })
    };
    // A cell that ended early still moves the bar by all its samples.
    bar.inc(u64::from(opts.runs).saturating_sub(ticks));
    outcome
}
