//! `tlsmatrix-driver`: runs one scenario for one client/server pair in memory and prints one
//! JSON message per line (see `tlsmatrix_model::protocol`). The `tlsmatrix` CLI spawns it;
//! each driver build links at most one libssl-ABI library, so libraries that would clash in
//! one binary run in separate processes.

mod bogo;
mod delay_proxy;
mod wire;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use tlsmatrix_harness::certs;
use tlsmatrix_harness::endpoint::{
    EndpointConfig, EndpointFactory, OpenExtras, OpenPolicy, TlsLibrary,
};
use tlsmatrix_measure::callgrind::Counter;
use tlsmatrix_measure::heap;
use tlsmatrix_measure::paired;
use tlsmatrix_measure::sample::Sampler;
use tlsmatrix_measure::workload::{self, Budget, BulkSampler, BulkSize, HandshakeSampler};
use tlsmatrix_model::allocator::Allocator;
use tlsmatrix_model::interop;
use tlsmatrix_model::protocol::{AllocatorInfo, DriverInfo, DriverMessage, ImplInfo, Measure};
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::scenario::{Axis, ConnParams, Resumption, Scenario, SigAlg, Version};
use tlsmatrix_model::side::Side;
use tlsmatrix_model::variant::{self, Variant};

#[derive(Parser)]
#[command(
    name = "tlsmatrix-driver",
    about = "Runs one tlsmatrix scenario for one pair in memory; spawned by `tlsmatrix run`"
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the impls this build contains and the exact library versions they run, as JSON.
    Info,
    /// Run one scenario for one pair and print JSON messages: hello, samples, done.
    Run(RunArgs),
    /// Run several pairs of one scenario in turns, one short sample each per round (paired
    /// sampling; `tlsmatrix run` uses it for timed handshake and bulk scenarios).
    Group(GroupArgs),
    /// One side of an interop case over TCP (`tlsmatrix peer` and `tlsmatrix interop` run it).
    Peer(PeerArgs),
    /// Time to first byte over real TCP through the delay proxy (`tlsmatrix wire --check`):
    /// the pair's in-memory trace first, then one sample per connection.
    Ttfb(TtfbArgs),
    /// Which allocator a block from each library's own C allocation call (and from Rust's
    /// allocator) lands in, by each allocator's own bookkeeping: one JSON line per call.
    /// Tests use it to show that an allocator variant moves every allocation.
    #[command(hide = true)]
    Allocations,
    /// BoringSSL's BoGo test runner's shim for one impl (`tlsmatrix conformance` starts the
    /// runner with this as its shim): the runner's flags follow `--`. Exits 89 for a flag
    /// the shim does not honour, so such a test counts as unimplemented.
    BogoShim(BogoShimArgs),
}

#[derive(clap::Args)]
struct BogoShimArgs {
    /// The impl to test, e.g. rustls-aws-lc.
    #[arg(long = "impl")]
    imp: String,
    /// The runner's flags.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    runner_flags: Vec<String>,
}

/// Runs one BoGo test; the exit status is what the runner reads.
fn bogo_shim(a: &BogoShimArgs) -> ExitCode {
    use crate::bogo::{self, answer_unimplemented, Invocation, Unimplemented};
    let flags = match bogo::parse(&a.runner_flags) {
        Ok(Invocation::HandshakerQuery) => {
            println!("No");
            return ExitCode::SUCCESS;
        }
        Ok(Invocation::Test(flags)) => flags,
        Err(e) => return ExitCode::from(answer_unimplemented(&e.to_string())),
    };
    let result = find(&a.imp).and_then(|lib| bogo::run(lib.as_ref(), &flags));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is::<Unimplemented>() => ExitCode::from(answer_unimplemented(&e.to_string())),
        Err(e) => {
            // The runner matches the expected error against this text (with -loose-errors,
            // any failure matches).
            eprintln!("tlsmatrix-bogo-shim: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[derive(clap::Args)]
struct TtfbArgs {
    /// A full-handshake scenario (the pair's trace runs in memory first).
    #[command(flatten)]
    cell: CellArgs,
    /// Round-trip time the proxy adds, in milliseconds (half each way).
    #[arg(long)]
    rtt_ms: f64,
    /// Bandwidth each way in Mbit/s; none for no limit.
    #[arg(long)]
    bandwidth_mbps: Option<f64>,
    /// Connections to time.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
}

#[derive(clap::Args)]
struct GroupArgs {
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

#[derive(clap::Args)]
struct PeerArgs {
    /// `server` or `client`.
    #[arg(value_parser = ["server", "client"])]
    role: String,
    /// The impl to run, e.g. rustls-aws-lc.
    #[arg(long = "impl")]
    imp: String,
    /// The interop case, e.g. tls13 (`tlsmatrix interop --list-cases` shows them).
    #[arg(long, default_value = "tls13")]
    case: String,
    /// Server: the address to listen on (port 0: the OS picks; the line `listening ADDR` says which).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: String,
    /// Client: the server's address.
    #[arg(long)]
    connect: Option<String>,
    /// Folder of cached test certificates (generated there if missing).
    #[arg(long)]
    certs: PathBuf,
    /// Client: what the server echoes, `same` or `reversed-lines` (openssl s_server -rev).
    #[arg(long, default_value = "same", value_parser = interop::Echo::parse)]
    echo: interop::Echo,
    /// Seconds the whole case may take before the peer gives up with "timed out"; with
    /// --connections or --respond http, each connection's limit from its accept.
    #[arg(long, default_value_t = 10)]
    timeout: u64,
    /// Server: serve this many connections, one after another, each with the case's
    /// configuration (0: until killed), for tools such as tlsfuzzer or `openssl s_time`. A
    /// connection that fails is reported on its own line and the next is served; waiting
    /// for a client has no limit.
    #[arg(long, value_name = "N")]
    connections: Option<usize>,
    /// Server: `echo` (the interop protocol) or `http` (answer one HTTP/1.1 request with a
    /// short text naming what was negotiated, then close).
    #[arg(long, default_value = "echo", value_parser = wire::Respond::parse)]
    respond: wire::Respond,
    /// Server: the library's own defaults instead of the case's pinned version, suite, group
    /// and scheme: TLS 1.2 and 1.3, every suite, group and signature scheme it enables by
    /// default, tickets and a session cache, with a certificate of this kind (rsa-2048,
    /// rsa-3072, ecdsa-p256, ecdsa-p384, ed25519). For outside test tools, which offer what
    /// they like: tlsfuzzer, testssl.sh, `openssl s_time`.
    #[arg(long, value_name = "CERT", value_parser = parse_sig)]
    defaults: Option<SigAlg>,
}

/// A certificate kind, as scenario ids spell it.
fn parse_sig(s: &str) -> Result<SigAlg, String> {
    SigAlg::named(s)
}

/// One scenario for one pair.
#[derive(clap::Args)]
struct CellArgs {
    /// Scenario id, e.g. handshake-tls13-ecdsa-p256-x25519-full.
    #[arg(long)]
    scenario: String,
    /// Client impl name.
    #[arg(long)]
    client: String,
    /// Server impl name.
    #[arg(long)]
    server: String,
    /// Folder of cached test certificates (generated there if missing).
    #[arg(long)]
    certs: PathBuf,
}

#[derive(clap::Args)]
struct RunArgs {
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
    /// `time`, `instructions` (needs valgrind --tool=callgrind --collect-atstart=no),
    /// `wire` (each sample one traced connection; the median trace follows the samples),
    /// `counters` (page faults and context switches per side) or `ceiling` (the library's
    /// own AEAD on a bulk scenario's records; client and server the same impl).
    #[arg(long, default_value = "time")]
    measure: Measure,
    /// The --callgrind-out-file given to valgrind (`%p` allowed); read back after each dump.
    #[arg(long, default_value = "callgrind.out.%p")]
    callgrind_out: String,
    /// Handshakes per side in one instruction-count sample.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    per_sample: u32,
}

fn emit(msg: &DriverMessage) {
    let mut out = std::io::stdout().lock();
    // A closed pipe means the orchestrator is gone; nothing useful is left to do.
    if out.write_all(msg.to_line().as_bytes()).is_err() || out.flush().is_err() {
        std::process::exit(1);
    }
}

/// The library a name stands for. A variant name (`rustls-aws-lc+jemalloc`) must match the
/// allocator this process routes to: it was chosen before `main` and cannot change.
fn find(name: &str) -> Result<Box<dyn TlsLibrary>> {
    let v = Variant::parse(name).map_err(|e| anyhow!(e))?;
    let base = v.base;
    let live = heap::allocator().map_err(|e| anyhow!(e))?;
    if v.allocator != live {
        bail!(
            "'{name}' runs on {} but this driver process allocates with {} (set {} to choose)",
            v.allocator.name(),
            live.name(),
            tlsmatrix_model::allocator::ALLOCATOR_ENV
        );
    }
    if v.compiler != tlsmatrix_impls::compiler_variant() {
        bail!(
            "'{name}' is built by {} but this driver's C code was compiled by {}",
            v.compiler.unwrap_or(variant::COMPILERS[0]),
            tlsmatrix_impls::C_COMPILER
        );
    }
    tlsmatrix_impls::library(base).ok_or_else(|| {
        let known: Vec<_> = tlsmatrix_impls::libraries()
            .iter()
            .map(|l| l.name())
            .collect();
        anyhow!(
            "this driver has no impl '{base}' (it has {})",
            known.join(", ")
        )
    })
}

type Factories = (Box<dyn EndpointFactory>, Box<dyn EndpointFactory>);

/// A cell's scenario, libraries and configuration, as `run` and `ttfb` start from them.
struct OpenCell {
    scenario: Scenario,
    client: Box<dyn TlsLibrary>,
    server: Box<dyn TlsLibrary>,
    cfg: EndpointConfig,
}

impl CellArgs {
    fn open(&self) -> Result<OpenCell> {
        let scenario: Scenario = self.scenario.parse()?;
        let client = find(&self.client)?;
        let server = find(&self.server)?;
        let certs = certs::load_or_generate(&self.certs, scenario.params().sig)?;
        let cfg = EndpointConfig::for_scenario(&scenario, certs.into());
        Ok(OpenCell {
            scenario,
            client,
            server,
            cfg,
        })
    }
}

/// Says the cell is unsupported, and why: the one message a refused single cell prints.
fn refuse(reason: String) -> Result<()> {
    emit(&DriverMessage::Unsupported { cell: None, reason });
    Ok(())
}

impl OpenCell {
    /// [`set_up_cell`] for a single cell; `None` once it has said why it is unsupported.
    fn factories(&self) -> Result<Option<Factories>> {
        let params = self.scenario.params();
        match set_up_cell(
            &self.cfg,
            &params,
            self.client.as_ref(),
            self.server.as_ref(),
            None,
        )? {
            Ok(f) => Ok(Some(f)),
            Err(reason) => refuse(reason).map(|()| None),
        }
    }
}

/// A library's version, and the compiler when it is not the default: the build.
fn build_version(lib: &dyn TlsLibrary) -> String {
    match tlsmatrix_impls::compiler_variant() {
        None => lib.version(),
        Some(_) => format!("{} (C by {})", lib.version(), tlsmatrix_impls::C_COMPILER),
    }
}

/// The build's version, and the allocator when it is not glibc's: what ran.
fn version_with_allocator(lib: &dyn TlsLibrary) -> String {
    match heap::allocator() {
        Ok(Allocator::Glibc) | Err(_) => build_version(lib),
        Ok(a) => format!("{} + {}", build_version(lib), heap::allocator_version(a)),
    }
}

/// A library's name in this build: with the compiler suffix when not the default.
fn build_name(lib: &dyn TlsLibrary) -> String {
    Variant {
        base: lib.name(),
        compiler: tlsmatrix_impls::compiler_variant(),
        allocator: Allocator::Glibc,
    }
    .name()
}

/// Checks that both libraries take the cell's configuration, says hello with the versions
/// they report, and builds their endpoint factories; `Ok(Err(reason))` when unsupported.
fn set_up_cell(
    cfg: &EndpointConfig,
    params: &ConnParams,
    client: &dyn TlsLibrary,
    server: &dyn TlsLibrary,
    cell: Option<usize>,
) -> Result<Result<Factories, String>> {
    if let Some(reason) = tlsmatrix_model::impls::pair_refusal(client.name(), server.name(), params)
    {
        return Ok(Err(reason));
    }
    for (lib, side) in [(client, Side::Client), (server, Side::Server)] {
        if let Err(reason) = cfg
            .protocol_limits()
            .and_then(|()| lib.supports_side(side, cfg))
        {
            return Ok(Err(reason));
        }
    }
    emit(&DriverMessage::Hello {
        cell,
        client_version: version_with_allocator(client),
        server_version: version_with_allocator(server),
    });
    let cf = client
        .factory(Side::Client, cfg)
        .with_context(|| format!("{} cannot be configured as a client", client.name()))?;
    let sf = server
        .factory(Side::Server, cfg)
        .with_context(|| format!("{} cannot be configured as a server", server.name()))?;
    Ok(Ok((cf, sf)))
}

fn run(args: &RunArgs) -> Result<()> {
    let cell = args.cell.open()?;
    let (scenario, cfg) = (cell.scenario, &cell.cfg);
    let (client, server) = (cell.client.as_ref(), cell.server.as_ref());
    let unmeasurable = match (args.measure, scenario) {
        (Measure::Instructions, Scenario::Memory(_)) => {
            Some("a memory scenario measures heap bytes, not instructions")
        }
        (Measure::Instructions, Scenario::Throughput(_)) => {
            Some("a throughput scenario measures wall time across threads, not instructions")
        }
        (Measure::Wire, Scenario::Handshake(_)) => None,
        (Measure::Wire, _) => Some("wire figures are measured on handshake scenarios"),
        (Measure::Counters, Scenario::Handshake(_) | Scenario::Bulk(_)) => None,
        (Measure::Counters, _) => Some("OS counters are taken on handshake and bulk scenarios"),
        (Measure::Ceiling, Scenario::Bulk(_)) if cell.client.name() == cell.server.name() => None,
        (Measure::Ceiling, Scenario::Bulk(_)) => {
            Some("a ceiling is one library's own AEAD: run each impl with itself")
        }
        (Measure::Ceiling, _) => Some("a ceiling is taken on a bulk scenario's records"),
        (Measure::Profile, Scenario::Bulk(_)) if cell.client.name() == cell.server.name() => None,
        (Measure::Profile, Scenario::Bulk(_)) => {
            Some("a profile splits one stack's time by side: run each impl with itself")
        }
        (Measure::Profile, _) => Some("a profile is taken on bulk scenarios"),
        _ => None,
    };
    if let Some(reason) = unmeasurable {
        return refuse(reason.into());
    }
    // The library's own AEAD, found before the hello: a library without one is unsupported.
    let mut own_aead = None;
    if let (Measure::Ceiling, Scenario::Bulk(b)) = (args.measure, scenario) {
        match client.record_aead(b.aead) {
            Ok(found) => {
                eprintln!("ceiling of {} through {}", client.name(), found.api);
                own_aead = Some(found.aead);
            }
            Err(reason) => return refuse(reason),
        }
    }
    let Some((cf, sf)) = cell.factories()? else {
        return Ok(());
    };
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
    let (c, s) = (cf.as_ref(), sf.as_ref());
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
            let aead = own_aead.expect("found above for every bulk ceiling");
            workload::bulk_against_ceiling(c, s, &params, &b, aead, &budget, on_sample)?
        }
        (Measure::Profile, Scenario::Bulk(b)) => {
            if let Some(reason) =
                workload::bulk_profile(c, s, &params, b.size.bytes(), &budget, on_sample)?
            {
                return refuse(reason);
            }
        }
        (Measure::Instructions, Scenario::Memory(_) | Scenario::Throughput(_))
        | (Measure::Wire | Measure::Counters | Measure::Ceiling | Measure::Profile, _) => {
            unreachable!("refused above")
        }
    }
    emit(&DriverMessage::Done);
    Ok(())
}

/// Runs each part's cells in rounds (see `tlsmatrix_measure::paired`), one part after
/// another: every line names its cell (numbered across the parts); a cell that is
/// unsupported or fails says so and the others go on.
fn group(args: &GroupArgs) -> Result<()> {
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

/// Traces the pair in memory (the model's input), then times connections over loopback TCP
/// through a delay proxy to a server thread.
fn ttfb(a: &TtfbArgs) -> Result<()> {
    let cell = a.cell.open()?;
    let (scenario, cfg, server) = (cell.scenario, &cell.cfg, &cell.server);
    let params = scenario.params();
    if !matches!(scenario, Scenario::Handshake(_)) || params.resumption.is_resumed() {
        anyhow::bail!("{scenario}: the time-to-first-byte check runs full-handshake scenarios");
    }
    let Some((cf, sf)) = cell.factories()? else {
        return Ok(());
    };
    let budget = Budget {
        runs: 15,
        warmup: Duration::from_millis(50),
        ..Budget::default()
    };
    let trace = workload::wire(cf.as_ref(), sf.as_ref(), &params, &budget, |_| {})?;
    emit(&DriverMessage::Trace { cell: None, trace });
    drop(sf);

    let rtt = Duration::from_secs_f64(a.rtt_ms / 1e3);
    let link = delay_proxy::Link::for_rtt(rtt, a.bandwidth_mbps.map(|m| m * 1e6));
    let connections = a.runs as usize + 1; // the first warms both sides up
    let deadline = std::time::Instant::now()
        + Duration::from_secs(30)
        + (rtt + Duration::from_millis(50)) * 6 * connections as u32;
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let proxy = delay_proxy::DelayProxy::start(listener.local_addr()?, link)?;
    std::thread::scope(|s| -> Result<()> {
        let serving = s.spawn(|| -> Result<()> {
            let sf = server.factory(Side::Server, cfg)?;
            wire::serve_requests(sf.as_ref(), &params, &listener, connections, deadline)
        });
        let timed = (0..connections).try_for_each(|n| -> Result<()> {
            let t = wire::time_to_first_byte(cf.as_ref(), &params, proxy.addr(), deadline)
                .with_context(|| format!("connection {} of {connections}", n + 1))?;
            if n > 0 {
                emit(&DriverMessage::Sample {
                    cell: None,
                    round: None,
                    values: vec![(Metric::TtfbNs, t.as_nanos() as f64)],
                });
            }
            Ok(())
        });
        let served = serving
            .join()
            .unwrap_or_else(|_| Err(anyhow!("the server thread panicked")));
        // The server's error says more when both failed (the client saw only a close).
        served.context("server")?;
        timed
    })?;
    emit(&DriverMessage::Done);
    Ok(())
}

/// This impl cannot play its side of the case, and why.
#[derive(Debug, thiserror::Error)]
#[error("unsupported: {0}")]
struct Unsupported(String);

/// Runs one side of an interop case; prints `ok: ...` or `error: ...` last.
fn peer(a: &PeerArgs) -> Result<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(a.timeout);
    let case = interop::case(&a.case).map_err(|e| anyhow!(e))?;
    let (side, offer) = match a.role.as_str() {
        "server" => (Side::Server, case.server),
        _ => (Side::Client, case.client),
    };
    let lib = find(&a.imp)?;
    if let Some(sig) = a.defaults {
        if side != Side::Server {
            bail!("--defaults configures a server; a client runs a case");
        }
        return serve_defaults(lib.as_ref(), case, sig, a);
    }
    let certs = certs::load_or_generate(&a.certs, offer.sig)?;
    let mut cfg = EndpointConfig::for_params(&offer.params(), certs.into());
    // Both sides learn the client's first group: a server that must answer it with a
    // retry has to be configured not to accept it (s2n-tls picks a policy by that).
    cfg.client_first_group = case.client.first;
    cfg.alpn = offer.alpn.iter().map(|p| p.to_string()).collect();
    cfg.require_client_cert = case.require_client_cert;
    cfg.client_cert = case.client_cert;
    cfg.protocol_limits()
        .and_then(|()| lib.supports(&cfg))
        .and_then(|()| match side {
            Side::Client if case.key_update => lib.sends_key_update(),
            _ => Ok(()),
        })
        .map_err(|r| anyhow!(Unsupported(r)))?;
    let factory = lib
        .factory(side, &cfg)
        .with_context(|| format!("{} cannot be configured as a {side}", lib.name()))?;
    match side {
        Side::Server => {
            let listener = std::net::TcpListener::bind(&a.listen)
                .with_context(|| format!("cannot listen on {}", a.listen))?;
            println!("listening {}", listener.local_addr()?);
            let _ = std::io::stdout().flush();
            if a.connections.is_none() && a.respond == wire::Respond::Echo {
                return wire::server(factory.as_ref(), case, listener, deadline);
            }
            serve_many(factory.as_ref(), case, &listener, a)
        }
        Side::Client => {
            let addr = a
                .connect
                .as_deref()
                .context("a client needs --connect ADDR")?;
            let addr: std::net::SocketAddr = addr.parse().with_context(|| {
                format!("--connect {addr} is not an address like 127.0.0.1:4433")
            })?;
            wire::client(factory.as_ref(), case, a.echo, addr, deadline)
        }
    }
}

/// `peer server --defaults CERT`: the library's open configuration (as the BoGo shim runs it,
/// see `OpenPolicy`) with a certificate of that kind, serving as `--connections` says.
fn serve_defaults(
    lib: &dyn TlsLibrary,
    case: &interop::Case,
    sig: SigAlg,
    a: &PeerArgs,
) -> Result<String> {
    let certs = certs::load_or_generate(&a.certs, sig)?;
    let params = ConnParams {
        sig,
        ..case.server.params()
    };
    let mut cfg = EndpointConfig::for_params(&params, certs.into());
    cfg.groups = Vec::new();
    cfg.resumption = Resumption::Ticket;
    cfg.open = Some(OpenPolicy {
        min_version: Version::Tls12,
        max_version: Version::Tls13,
        request_client_cert: false,
        sni: None,
        every_tls12_suite: false,
        middlebox_compat: false,
        extras: OpenExtras::default(),
    });
    lib.supports(&cfg).map_err(|r| anyhow!(Unsupported(r)))?;
    let factory = lib
        .factory(Side::Server, &cfg)
        .with_context(|| format!("{} cannot run its defaults as a server", lib.name()))?;
    let listener = std::net::TcpListener::bind(&a.listen)
        .with_context(|| format!("cannot listen on {}", a.listen))?;
    println!("listening {}", listener.local_addr()?);
    let _ = std::io::stdout().flush();
    serve_many(factory.as_ref(), case, &listener, a)
}

/// `peer server --connections N` / `--respond http`: a line per connection, then how many
/// failed.
fn serve_many(
    factory: &dyn EndpointFactory,
    case: &interop::Case,
    listener: &std::net::TcpListener,
    a: &PeerArgs,
) -> Result<String> {
    // No --connections (only --respond http): one; 0: until killed.
    let limit = match a.connections {
        None => Some(1),
        Some(0) => None,
        n => n,
    };
    let (mut served, mut failed, mut first_failure) = (0usize, 0usize, None);
    wire::serve_many(
        factory,
        case,
        a.defaults.is_none(),
        listener,
        limit,
        a.respond,
        Duration::from_secs(a.timeout),
        |n, r| {
            served += 1;
            match r {
                Ok(s) => println!("connection {}: ok: {s}", n + 1),
                Err(e) => {
                    failed += 1;
                    println!("connection {}: error: {e:#}", n + 1);
                    first_failure.get_or_insert_with(|| format!("connection {}: {e:#}", n + 1));
                }
            }
            let _ = std::io::stdout().flush();
        },
    )?;
    match first_failure {
        None => Ok(format!("served {served} connection(s)")),
        Some(first) => Err(anyhow!(
            "{failed} of {} connection(s) failed; the first: {first}",
            limit.unwrap_or(served)
        )),
    }
}

/// A 4 MiB block from each allocation call this build has, and who owns it.
fn allocations() -> Result<()> {
    const SIZE: usize = 4 << 20;
    let layout = std::alloc::Layout::from_size_align(SIZE, 1)?;
    let mut calls: Vec<(String, String, tlsmatrix_harness::endpoint::CAllocation)> = Vec::new();
    for lib in tlsmatrix_impls::libraries() {
        if let Some(c) = lib.c_allocation() {
            calls.push((lib.name().to_string(), c.call.to_string(), c));
        }
    }
    let live = heap::allocator().map_err(|e| anyhow!(e))?;
    // SAFETY: the layout is valid and non-zero; the block is freed with the same layout.
    let rust = heap::owners_of_allocation(
        SIZE,
        |_| unsafe { std::alloc::alloc(layout).cast() },
        |p| unsafe { std::alloc::dealloc(p.cast(), layout) },
    );
    let line = |imp: &str, call: &str, owners: Vec<Allocator>| {
        let owners: Vec<&str> = owners.iter().map(|a| a.name()).collect();
        println!(
            "{}",
            serde_json::json!({"impl": imp, "call": call, "allocator": live.name(), "owners": owners})
        );
    };
    line("rust", "std::alloc::alloc", rust);
    for (imp, call, c) in calls {
        // SAFETY: each pair is a library's matching allocation and free.
        let owners = heap::owners_of_allocation(
            SIZE,
            |n| unsafe { (c.alloc)(n) },
            |p| unsafe { (c.free)(p) },
        );
        line(&imp, &call, owners);
    }
    Ok(())
}

/// The exit of a command that speaks in messages: a failure is its last message.
fn messages_end(r: Result<()>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            emit(&DriverMessage::Error {
                cell: None,
                message: format!("{e:#}"),
            });
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(e) = heap::check_allocator() {
        eprintln!("tlsmatrix-driver: {e}");
        return ExitCode::from(2);
    }
    match args.command {
        Command::Info => {
            let info = DriverInfo {
                allocators: if heap::AVAILABLE {
                    Allocator::ALL
                        .iter()
                        .map(|a| AllocatorInfo {
                            name: a.name().to_string(),
                            version: heap::allocator_version(*a),
                        })
                        .collect()
                } else {
                    Vec::new()
                },
                impls: tlsmatrix_impls::libraries()
                    .iter()
                    .map(|l| ImplInfo {
                        name: build_name(l.as_ref()),
                        version: build_version(l.as_ref()),
                        refuses: Vec::new(),
                    })
                    .collect(),
            };
            println!(
                "{}",
                serde_json::to_string(&info).expect("info always serializes")
            );
            ExitCode::SUCCESS
        }
        Command::Peer(p) => match peer(&p) {
            Ok(summary) => {
                println!("ok: {summary}");
                ExitCode::SUCCESS
            }
            Err(e) => match e.downcast_ref::<Unsupported>() {
                // Its own line and exit code: the harness reports the cell as unsupported.
                Some(Unsupported(why)) => {
                    println!("unsupported: {why}");
                    ExitCode::from(3)
                }
                None => {
                    println!("error: {e:#}");
                    ExitCode::FAILURE
                }
            },
        },
        Command::Group(g) => messages_end(group(&g)),
        Command::Ttfb(t) => messages_end(ttfb(&t)),
        Command::Allocations => match allocations() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("tlsmatrix-driver: {e:#}");
                ExitCode::FAILURE
            }
        },
        Command::Run(r) => messages_end(run(&r)),
        Command::BogoShim(a) => bogo_shim(&a),
    }
}
