//! The `run` subcommand: one scenario for one pair, its samples as JSON messages.

use super::*;
use tlsmatrix_harness::aead::RecordAead;
use tlsmatrix_harness::quic::QuicFactories;
use tlsmatrix_measure::floor::{handshakes_against_floor, operations_of, FloorSampler};

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    cell: CellArgs,
    /// Samples to produce after warm-up.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Warm-up time in milliseconds.
    #[arg(long, default_value_t = 200)]
    warmup_ms: u64,
    /// Target duration of one handshake sample in milliseconds.
    #[arg(long, default_value_t = 100)]
    sample_ms: u64,
    /// Bytes sent per bulk sample.
    #[arg(long, default_value_t = 64 << 20)]
    bulk_bytes: usize,
    /// Instructions need valgrind --tool=callgrind --collect-atstart=no around the driver;
    /// a wire cell's median trace follows its samples.
    #[arg(long, default_value = "time", long_help = tlsmatrix_model::measure::help())]
    measure: Measure,
    /// `floor`: the operations to time, as the runner lists them for every driver
    /// (`tlsmatrix_model::floor::encode`); without it, this driver lists them itself.
    #[arg(long)]
    floor_ops: Option<String>,
    /// The --callgrind-out-file given to valgrind (`%p` allowed); read back after each dump.
    #[arg(long, default_value = "callgrind.out.%p")]
    callgrind_out: String,
    /// Handshakes per side in one instruction-count sample, raised to what the handshake needs:
    /// 64 where ML-DSA signs (its loop varies), whole periods of 32 where an RSA server signs
    /// (OpenSSL's blinding renewal).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    per_sample: u32,
}

pub(crate) fn run(args: &RunArgs) -> Result<()> {
    let mut cell = args.cell.open()?;
    let with_itself = cell.client.name() == cell.server.name();
    if let Some(reason) = args.measure.row().refusal(&cell.scenario, with_itself) {
        return refuse(reason.into());
    }
    if args.measure.is_quic() {
        // The TCP handshake or bulk it is paired with offers the same ALPN: like with like.
        cell.cfg.alpn = vec![tlsmatrix_harness::quic::ALPN.into()];
        if let Err(reason) = cell.client.quic_supports(&cell.cfg) {
            return refuse(reason);
        }
    }
    let own_aead = match own_aead(args, &cell) {
        Ok(found) => found,
        Err(reason) => return refuse(reason),
    };
    let Some((cf, sf)) = cell.factories()? else {
        return Ok(());
    };
    // The library's own crypto for each operation, prepared once the stack has taken the
    // cell: an operation it cannot do apart from its stack makes the cell unsupported, in its
    // words.
    let own_floor = match own_floor(args, &cell) {
        Ok(prepared) => prepared,
        Err(reason) => return refuse(reason),
    };
    let prepared = Prepared {
        aead: own_aead,
        floor: own_floor,
    };
    if let Some(reason) = measure(args, &cell, cf.as_ref(), sf.as_ref(), prepared)? {
        return refuse(reason);
    }
    emit(&DriverMessage::Done);
    Ok(())
}

/// The library's own AEAD for a ceiling, found before the hello: a library without one makes
/// the cell unsupported.
fn own_aead(args: &RunArgs, cell: &OpenCell) -> Result<Option<Box<dyn RecordAead>>, String> {
    let (Measure::Ceiling, Scenario::Bulk(b)) = (args.measure, cell.scenario) else {
        return Ok(None);
    };
    let found = cell.client.record_aead(b.aead)?;
    eprintln!("ceiling of {} through {}", cell.client.name(), found.api);
    Ok(Some(found.aead))
}

/// The library's own crypto for a floor's operations (the runner's list, or this driver's),
/// warmed up.
fn own_floor(args: &RunArgs, cell: &OpenCell) -> Result<Option<FloorSampler>, String> {
    let target = match (args.measure, cell.scenario) {
        (Measure::Floor, Scenario::Handshake(_)) => Duration::from_millis(args.sample_ms),
        // A profile splits the floor beside the handshakes, in half a sample's time, and is
        // taken without it where the library has no API for the floor's operations.
        (Measure::Profile, Scenario::Handshake(_)) => {
            return match floor_sampler(args, cell, Duration::from_millis(args.sample_ms / 2)) {
                Ok(f) => Ok(Some(f)),
                Err(reason) => {
                    eprintln!("no crypto floor split: {reason}");
                    Ok(None)
                }
            };
        }
        _ => return Ok(None),
    };
    floor_sampler(args, cell, target).map(Some)
}

/// The floor's operations through the library's own crypto, warmed up and sized to about
/// `target` a sample.
fn floor_sampler(
    args: &RunArgs,
    cell: &OpenCell,
    target: Duration,
) -> Result<FloorSampler, String> {
    let crypto = cell.client.handshake_crypto()?;
    eprintln!(
        "crypto floor of {} through {}",
        cell.client.name(),
        crypto.api()
    );
    let list = match &args.floor_ops {
        Some(text) => tlsmatrix_model::floor::decode(text)?,
        None => operations_of(&cell.scenario.params()),
    };
    FloorSampler::warm(
        crypto.as_ref(),
        &cell.cfg.certs,
        &list,
        Duration::from_millis(args.warmup_ms),
        target,
    )
}

/// What a measure needs prepared before its samples: the ceiling's AEAD, the floor's
/// operations (for a floor run, or a handshake profile's floor split).
struct Prepared {
    aead: Option<Box<dyn RecordAead>>,
    floor: Option<FloorSampler>,
}

/// Takes the samples of `args.measure` on the cell with its two factories, each sent as a
/// message; `Some(reason)` when the library refuses partway (a profile it cannot name, a
/// context it does not share).
fn measure(
    args: &RunArgs,
    cell: &OpenCell,
    c: &dyn EndpointFactory,
    s: &dyn EndpointFactory,
    prepared: Prepared,
) -> Result<Option<String>> {
    let (scenario, cfg) = (cell.scenario, &cell.cfg);
    let (client, server) = (cell.client.as_ref(), cell.server.as_ref());
    let budget = Budget {
        runs: args.runs as usize,
        warmup: Duration::from_millis(args.warmup_ms),
        sample_target: Duration::from_millis(args.sample_ms),
        bulk_bytes: args.bulk_bytes,
    };
    let params = scenario.params();
    let on_sample = |values| {
        emit(&DriverMessage::Sample {
            cell: None,
            round: None,
            values,
        })
    };
    match (args.measure, scenario) {
        (Measure::Time, Scenario::Handshake(_)) => {
            workload::handshakes(c, s, &params, &budget, on_sample)?
        }
        (Measure::Time, Scenario::Bulk(b)) => {
            workload::bulk(c, s, &params, b.size.bytes(), &budget, on_sample)?
        }
        (Measure::Instructions, Scenario::Handshake(_)) => {
            let mut counter = Counter::new(&args.callgrind_out)?;
            workload::handshake_instructions(
                c,
                s,
                &params,
                budget.runs,
                args.per_sample,
                &mut counter,
                on_sample,
            )?
        }
        (Measure::Instructions, Scenario::Bulk(b)) => {
            let mut counter = Counter::new(&args.callgrind_out)?;
            workload::bulk_instructions(
                c,
                s,
                &params,
                b.size.bytes(),
                &budget,
                &mut counter,
                on_sample,
            )?
        }
        (Measure::Time, Scenario::Memory(m)) => {
            workload::memory(c, s, &params, m.sessions.count(), budget.runs, on_sample)?
        }
        (Measure::Time, Scenario::Throughput(t)) => {
            let make = || -> Result<_> {
                Ok((
                    client.factory(Side::Client, cfg)?,
                    server.factory(Side::Server, cfg)?,
                ))
            };
            workload::throughput(&make, &params, t.cores.threads(), &budget, on_sample)?
        }
        (Measure::Wire, Scenario::Handshake(_)) => {
            let trace = workload::wire(c, s, &params, &budget, on_sample)?;
            emit(&DriverMessage::Trace { cell: None, trace });
        }
        (Measure::Counters, Scenario::Handshake(_)) => {
            workload::handshake_counters(c, s, &params, &budget, on_sample)?
        }
        (Measure::Counters, Scenario::Bulk(b)) => {
            workload::bulk_counters(c, s, &params, b.size.bytes(), &budget, on_sample)?
        }
        (Measure::Ceiling, Scenario::Bulk(b)) => {
            let aead = prepared.aead.expect("found above for every bulk ceiling");
            workload::bulk_against_ceiling(c, s, &params, &b, aead, &budget, on_sample)?
        }
        (Measure::Profile, Scenario::Bulk(b)) => {
            if let Some(reason) =
                workload::bulk_profile(c, s, &params, b.size.bytes(), &budget, on_sample)?
            {
                return Ok(Some(reason));
            }
        }
        (Measure::Profile, Scenario::Handshake(_)) => {
            let floor = prepared.floor.map(|mut f| {
                move |log: &mut tlsmatrix_measure::profile::CallLog| f.run_metered(log)
            });
            workload::handshake_profile(c, s, &params, &budget, floor, on_sample)?
        }
        (Measure::Setup, Scenario::Handshake(_)) => {
            let make = |side| match side {
                Side::Client => client.factory(Side::Client, cfg),
                Side::Server => server.factory(Side::Server, cfg),
            };
            tlsmatrix_measure::setup::costs(&make, &budget, on_sample)?
        }
        (Measure::Teardown, Scenario::Handshake(_)) => {
            workload::teardowns(c, s, &params, &budget, on_sample)?
        }
        (Measure::Floor, Scenario::Handshake(_)) => {
            let floor = prepared
                .floor
                .expect("prepared above for every handshake floor");
            handshakes_against_floor(c, s, &params, floor, &budget, on_sample)?
        }
        (Measure::Contention, Scenario::Handshake(_)) => {
            let Some(shared) = s.shared() else {
                return Ok(Some(format!(
                    "the {} adapter does not share a server context among threads yet",
                    server.name()
                )));
            };
            let make_client = || client.factory(Side::Client, cfg);
            tlsmatrix_measure::contention::scaling(
                &make_client,
                shared,
                &params,
                &budget,
                on_sample,
            )?
        }
        (m, _) if m.is_quic() => {
            return quic_measure(args, cell, (c, s), &budget, on_sample);
        }
        // Every other kind the measure's row refuses before any library is asked (`run`);
        // measure_places.rs holds each row to an arm above.
        _ => unreachable!("refused above by the measure table"),
    }
    Ok(None)
}

/// A QUIC measure's samples on the cell, its TCP twin made from `tcp`; `Some(reason)` when
/// the library's QUIC stack cannot run it.
fn quic_measure(
    args: &RunArgs,
    cell: &OpenCell,
    tcp: (&dyn EndpointFactory, &dyn EndpointFactory),
    budget: &Budget,
    on_sample: impl FnMut(tlsmatrix_measure::sample::Sample),
) -> Result<Option<String>> {
    let (qc, qs) = match quic_factories(cell) {
        Ok(made) => made,
        Err(reason) => return Ok(Some(reason)),
    };
    let quic = (qc.as_ref(), qs.as_ref());
    let params = cell.scenario.params();
    match (args.measure, cell.scenario) {
        (Measure::Quic, Scenario::Handshake(_)) => {
            tlsmatrix_measure::quic::quic_against_tcp(tcp, quic, &params, budget, on_sample)?
        }
        (Measure::QuicBulk, Scenario::Bulk(b)) => {
            tlsmatrix_measure::quic_bulk::quic_bulk_against_tcp(
                tcp,
                quic,
                &params,
                b.size.bytes(),
                budget.runs,
                budget.warmup,
                on_sample,
            )?
        }
        (Measure::QuicMemory, Scenario::Memory(m)) => {
            tlsmatrix_measure::quic_memory::quic_memory_against_tcp(
                tcp,
                quic,
                &params,
                m.sessions.count(),
                budget.runs,
                on_sample,
            )?
        }
        (Measure::QuicInstructions, Scenario::Handshake(_)) => {
            tlsmatrix_measure::quic_instructions::quic_instructions_against_tcp(
                tcp,
                quic,
                &params,
                budget.runs,
                args.per_sample,
                &mut Counter::new(&args.callgrind_out)?,
                on_sample,
            )?
        }
        _ => unreachable!("refused above by the measure table"),
    }
    Ok(None)
}

/// The library's QUIC factories for the cell, or why its QUIC stack cannot run it.
fn quic_factories(cell: &OpenCell) -> Result<QuicFactories, String> {
    let lib = cell.client.as_ref();
    let stack = lib.quic_stack()?;
    eprintln!("QUIC of {} through {stack}", lib.name());
    let made = |side| {
        lib.quic_factory(side, &cell.cfg)
            .map_err(|e| format!("{e:#}"))
    };
    Ok((made(Side::Client)?, made(Side::Server)?))
}
