//! The `group` subcommand: several pairs of one scenario sampled in turns, one short sample each per round.

use super::*;

#[derive(clap::Args)]
pub(crate) struct GroupArgs {
    /// One scenario (handshake or bulk) and its cells, "SCENARIO CLIENT,SERVER ...", once per
    /// scenario, e.g. "handshake-tls13-ecdsa-p256-x25519-full rustls-aws-lc,rustls-aws-lc".
    /// A part's first cell is the reference the others are paired with, and a pair may appear
    /// twice (an A/A comparison). The parts run one after another in this process, each set
    /// up, warmed and sampled in its rounds as a group of its own and dropped before the
    /// next, so that a pass over many scenarios starts one process, not one each. Cells are
    /// numbered across the parts in order, and so are the steps of a stepped group. A cell
    /// written CLIENT,SERVER@SCENARIO runs that scenario instead of the part's (of the same
    /// kind): a post-quantum handshake sampled in turns with its classical twin.
    #[arg(long = "part", required = true, value_parser = parse_part)]
    parts: Vec<Part>,
    /// Folder of cached test certificates (generated there if missing).
    #[arg(long)]
    certs: PathBuf,
    /// Rounds: each takes one sample of every cell.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Warm-up per cell in milliseconds, before the first round.
    #[arg(long, default_value_t = 20)]
    warmup_ms: u64,
    /// Target duration of one sample in milliseconds.
    #[arg(long, default_value_t = 5)]
    sample_ms: u64,
    /// Wait for a line on stdin before each part's set-up, before each round and before
    /// ending, and say `stepped` after each set-up and each round: `tlsmatrix run` steps two
    /// drivers in turns on one core (duet sampling).
    #[arg(long)]
    stepped: bool,
}

/// One scenario of a group process and the pairs it samples.
#[derive(Debug, Clone)]
struct Part {
    scenario: Scenario,
    cells: Vec<PartCell>,
}

/// A pair of a part, and the scenario it runs when not the part's.
#[derive(Debug, Clone)]
struct PartCell {
    client: String,
    server: String,
    scenario: Option<Scenario>,
}

fn parse_part(s: &str) -> Result<Part, String> {
    let mut words = s.split_whitespace();
    let scenario = words
        .next()
        .ok_or("an empty part; write \"SCENARIO CLIENT,SERVER ...\"")?;
    let scenario: Scenario = scenario.parse().map_err(|e| format!("{e:#}"))?;
    let cells = words
        .map(|w| parse_part_cell(w, scenario))
        .collect::<Result<Vec<_>, _>>()?;
    if cells.is_empty() {
        return Err(format!(
            "part '{s}' names no cell; write \"SCENARIO CLIENT,SERVER ...\""
        ));
    }
    Ok(Part { scenario, cells })
}

/// In a stepped group: waits for the orchestrator's go-ahead; its stdin closing means it is
/// gone, and so is the point of going on.
fn await_step(stepped: bool) {
    if stepped {
        let mut line = String::new();
        if std::io::stdin()
            .read_line(&mut line)
            .map_or(true, |n| n == 0)
        {
            std::process::exit(1);
        }
    }
}

/// CLIENT,SERVER or CLIENT,SERVER@SCENARIO, the latter of the part's kind.
fn parse_part_cell(s: &str, part: Scenario) -> Result<PartCell, String> {
    let (pair, own) = match s.split_once('@') {
        Some((pair, id)) => {
            let own: Scenario = id.parse().map_err(|e| format!("{e:#}"))?;
            if own.kind() != part.kind() {
                return Err(format!(
                    "cell '{s}' runs a {} scenario in a {} part; a cell's own scenario must be of its part's kind",
                    own.kind(),
                    part.kind()
                ));
            }
            (pair, Some(own))
        }
        None => (s, None),
    };
    let (client, server) = parse_cell(pair)?;
    Ok(PartCell {
        client,
        server,
        scenario: own,
    })
}

fn parse_cell(s: &str) -> Result<(String, String), String> {
    match s.split_once(',') {
        Some((c, v)) if !c.is_empty() && !v.is_empty() && !v.contains(',') => {
            Ok((c.to_string(), v.to_string()))
        }
        _ => Err(format!("'{s}' is not a pair; write CLIENT,SERVER")),
    }
}

/// Runs each part's cells in rounds (see `tlsmatrix_measure::paired`), one part after
/// another: every line names its cell (numbered across the parts); a cell that is
/// unsupported or fails says so and the others go on.
pub(crate) fn group(args: &GroupArgs) -> Result<()> {
    for p in &args.parts {
        if !matches!(p.scenario, Scenario::Handshake(_) | Scenario::Bulk(_)) {
            bail!(
                "{} is not a handshake or bulk scenario; `run` measures it alone",
                p.scenario
            );
        }
    }
    let shift = heap::shift_heap_from_env()?;
    let mut first_cell = 0;
    let mut first_step = 0;
    for p in &args.parts {
        group_part(args, p, shift, first_cell, first_step)?;
        first_cell += p.cells.len();
        first_step += args.rounds + 1;
    }
    // The last go-ahead lets the process end: exiting (unmapping, freeing) on the core while
    // the other driver of a duet takes its last sample would slow that sample.
    await_step(args.stepped);
    emit(&DriverMessage::Done);
    Ok(())
}

/// One part of a group: its cells set up and warmed (step `first_step`), then its rounds
/// (the steps after it); its cells are numbered from `first_cell` in what it prints. The
/// part's libraries' contexts are dropped when it ends.
fn group_part(
    args: &GroupArgs,
    part: &Part,
    shift: usize,
    first_cell: usize,
    first_step: u32,
) -> Result<()> {
    let scenario = part.scenario;
    let write_size = |s: Scenario| match s {
        Scenario::Bulk(b) => Some(b.size.bytes()),
        _ => None,
    };
    await_step(args.stepped);
    // Each cell's configuration: the part's scenario, or the cell's own.
    let mut configs: Vec<(EndpointConfig, ConnParams)> = Vec::with_capacity(part.cells.len());
    for c in &part.cells {
        let s = c.scenario.unwrap_or(scenario);
        let certs = certs::load_or_generate(&args.certs, s.params().sig)?;
        configs.push((EndpointConfig::for_scenario(&s, certs.into()), s.params()));
    }
    let mut factories: Vec<Option<Factories>> = Vec::with_capacity(part.cells.len());
    for (i, pc) in part.cells.iter().enumerate() {
        let cell = first_cell + i;
        let (cfg, params) = &configs[i];
        heap::leak(heap::cell_heap_shift(shift, i));
        let set_up = || {
            set_up_cell(
                cfg,
                params,
                find(&pc.client)?.as_ref(),
                find(&pc.server)?.as_ref(),
                Some(cell),
            )
        };
        factories.push(match set_up() {
            Ok(Ok(f)) => Some(f),
            Ok(Err(reason)) => {
                emit(&DriverMessage::Unsupported {
                    cell: Some(cell),
                    reason,
                });
                None
            }
            Err(e) => {
                emit(&DriverMessage::Error {
                    cell: Some(cell),
                    message: format!("{e:#}"),
                });
                None
            }
        });
    }
    let warmup = Duration::from_millis(args.warmup_ms);
    let target = Duration::from_millis(args.sample_ms);
    let mut samplers: Vec<Option<Box<dyn Sampler + '_>>> = Vec::new();
    for (i, f) in factories.iter().enumerate() {
        let Some((c, s)) = f else {
            samplers.push(None);
            continue;
        };
        heap::leak(heap::cell_heap_shift(shift, i));
        let (c, s) = (c.as_ref(), s.as_ref());
        let params = &configs[i].1;
        let own = part.cells[i].scenario.unwrap_or(scenario);
        let sampler: Result<Box<dyn Sampler>> = match write_size(own) {
            None => HandshakeSampler::warm(c, s, params, warmup, target)
                .map(|x| Box::new(x) as Box<dyn Sampler>)
                .map_err(Into::into),
            Some(w) => BulkSampler::warm(c, s, params, w, warmup, BulkSize::Time(target))
                .map(|x| Box::new(x) as Box<dyn Sampler>)
                .map_err(Into::into),
        };
        samplers.push(match sampler {
            Ok(x) => Some(x),
            Err(e) => {
                emit(&DriverMessage::Error {
                    cell: Some(first_cell + i),
                    message: format!("{e:#}"),
                });
                None
            }
        });
    }
    let say_step = |step: u32| {
        if args.stepped {
            emit(&DriverMessage::Stepped {
                step: first_step + step,
            });
        }
    };
    say_step(0);
    for round in 0..args.rounds {
        await_step(args.stepped);
        paired::run_round(
            &mut samplers,
            round as usize,
            |i, round, values| {
                emit(&DriverMessage::Sample {
                    cell: Some(first_cell + i),
                    round: Some(round as u32),
                    values,
                })
            },
            |i, e| {
                emit(&DriverMessage::Error {
                    cell: Some(first_cell + i),
                    message: format!("{e:#}"),
                })
            },
        );
        say_step(round + 1);
    }
    Ok(())
}
