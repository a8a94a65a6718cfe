//! `tlsmatrix-driver`: runs one scenario for one client/server pair in memory and prints one
//! JSON message per line (see `tlsmatrix_model::protocol`). The `tlsmatrix` CLI spawns it;
//! each driver build links at most one libssl-ABI library, so libraries that would clash in
//! one binary run in separate processes.

mod allocations;
mod bogo;
mod companion;
mod contention;
mod delay_proxy;
mod floor;
mod group;
mod peer;
mod quic_wire;
mod run;
mod shim;
mod ttfb;
mod udp_delay_proxy;
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
use tlsmatrix_model::protocol::{
    AllocatorInfo, DriverInfo, DriverMessage, ImplInfo, Measure, Refusal,
};
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::scenario::{Axis, ConnParams, Resumption, Scenario, SigAlg, Version};
use tlsmatrix_model::side::Side;
use tlsmatrix_model::variant::{self, Variant};

use allocations::allocations;
use contention::{contention, ContentionArgs};
use floor::{floor, FloorArgs};
use group::{group, GroupArgs};
use peer::{peer, PeerArgs};
use run::{run, RunArgs};
use shim::{bogo_shim, BogoShimArgs};
use ttfb::{ttfb, TtfbArgs};

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
    /// One impl's crypto floor for one handshake scenario, operation by operation: each
    /// operation the scenario requires of each side (`tlsmatrix run --measure floor` takes
    /// their sums), timed through the library's own crypto API, in µs.
    Floor(FloorArgs),
    /// One impl's client and server contexts shared by 1, 2 and more threads handshaking at
    /// once: the rate, its scaling over one thread, and blocking waits per handshake.
    Contention(ContentionArgs),
    /// BoringSSL's BoGo test runner's shim for one impl (`tlsmatrix conformance` starts the
    /// runner with this as its shim): the runner's flags follow `--`. Exits 89 for a flag
    /// the shim does not honour, so such a test counts as unimplemented.
    BogoShim(BogoShimArgs),
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
    let lib = tlsmatrix_impls::library(base).ok_or_else(|| {
        let known: Vec<_> = tlsmatrix_impls::libraries()
            .iter()
            .map(|l| l.name())
            .collect();
        anyhow!(
            "this driver has no impl '{base}' (it has {})",
            known.join(", ")
        )
    })?;
    companion::check(name, &v, lib.as_ref())?;
    Ok(lib)
}

/// Ends a command that prints for a reader: an error goes to stderr.
fn plain_end(done: Result<()>) -> ExitCode {
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tlsmatrix-driver: {e:#}");
            ExitCode::FAILURE
        }
    }
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
    let version = match tlsmatrix_impls::compiler_variant() {
        None => lib.version(),
        Some(_) => format!("{} (C by {})", lib.version(), tlsmatrix_impls::C_COMPILER),
    };
    match companion::folder() {
        None => version,
        Some(_) => format!("{version} (companion: rebuilt with symbols)"),
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
        symbols: companion::folder().is_some(),
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

/// This impl cannot play its side of the case, and why.
#[derive(Debug, thiserror::Error)]
#[error("unsupported: {0}")]
struct Unsupported(String);

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
                allocators: if heap::AVAILABLE && companion::folder().is_none() {
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
                // A companion process lists only what it loaded from its folder.
                impls: tlsmatrix_impls::libraries()
                    .iter()
                    .filter(|l| {
                        companion::folder()
                            .is_none_or(|dir| companion::loaded_from(l.as_ref(), &dir))
                    })
                    .map(|l| {
                        let quic = l.quic_stack();
                        ImplInfo {
                            name: build_name(l.as_ref()),
                            version: build_version(l.as_ref()),
                            refuses: quic
                                .clone()
                                .err()
                                .map(|reason| Refusal {
                                    measure: Measure::Quic.as_str().into(),
                                    reason,
                                })
                                .into_iter()
                                .collect(),
                            quic: quic.ok(),
                        }
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
        Command::Allocations => plain_end(allocations()),
        Command::Floor(f) => plain_end(floor(&f)),
        Command::Contention(c) => plain_end(contention(&c)),
        Command::Run(r) => messages_end(run(&r)),
        Command::BogoShim(a) => bogo_shim(&a),
    }
}
