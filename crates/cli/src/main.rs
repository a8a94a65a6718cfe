//! `tlsmatrix`: measure TLS implementations side by side.

mod history;
mod list;

use std::path::PathBuf;

use std::process::ExitCode;
use std::time::Duration;
use tlsmatrix_interop as interop;
use tlsmatrix_registry::{beside, registry as drivers};
use tlsmatrix_runner::{compare, repeatability};
use tlsmatrix_runner::{conformance, run, wire};

use clap::{Parser, Subcommand};

/// `--cell-timeout`, else the measure's own (`MeasureRow::cell_timeout_s`).
fn cell_timeout(given: Option<u64>, measure: tlsmatrix_model::protocol::Measure) -> Duration {
    Duration::from_secs(given.unwrap_or(measure.row().cell_timeout_s))
}

/// `--measure`'s long help: the paragraph above it and the measure table's lines.
fn measure_help() -> String {
    format!(
        "What to measure; each is one row of the measure table (crates/model/src/measure.rs), \
         which says the scenario kinds it takes, whether each impl runs it with itself, how many \
         cells run at once and its default scenarios.\n{}",
        tlsmatrix_model::measure::help()
    )
}

#[derive(Parser)]
#[command(
    name = "tlsmatrix",
    version,
    about = "Measure TLS implementations side by side: handshake cost per side and bulk throughput, in memory, with every negotiated parameter checked",
    after_help = "Examples:\n  tlsmatrix list\n  tlsmatrix run --impl rustls-aws-lc,openssl-3.0 --scenario 'handshake-tls13-*' --runs 30\n  tlsmatrix run --measure instructions --scenario 'handshake-tls13-*' --runs 3\n  tlsmatrix run --plan rustls-report --lanes 2\n  tlsmatrix compare RUN_A RUN_B --threshold 2%\n  tlsmatrix report --out report\n\nExit codes: 0 success; 1 some cells failed, or compare found a regression; 2 bad input."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The history database every command but `list` uses.
#[derive(clap::Args)]
struct DbArg {
    /// SQLite database holding every run (created on first use).
    #[arg(long, default_value = "results/tlsmatrix.db", value_name = "FILE")]
    db: PathBuf,
}

#[derive(Subcommand)]
enum Command {
    /// List every impl with the exact library version it runs, and every scenario axis.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// List the figures a result record can carry instead: each metric's name, unit,
        /// better direction, whose figure it is, what measures it, and what it means.
        #[arg(long)]
        metrics: bool,
    },
    /// Run scenarios for every client x server pair of the chosen impls, append the records
    /// to a JSON-lines file, and print a summary table.
    Run(RunArgs),
    /// List the runs in the history database.
    History {
        #[command(flatten)]
        db: DbArg,
    },
    /// Print one run: its environment and its summary tables.
    Show {
        /// A run id from `tlsmatrix history`, `latest`, or a .jsonl results file.
        run: String,
        /// Also every pair's table with intervals, and why each unmeasured cell was not.
        #[arg(long, short)]
        verbose: bool,
        #[command(flatten)]
        db: DbArg,
    },
    /// Compare two runs figure by figure; exit 1 when any figure regressed.
    ///
    /// Figures are matched by (scenario, client, server, metric). A figure regresses when the
    /// candidate is worse than the base by more than the threshold and the two 95% intervals
    /// do not overlap. Direction aware: higher is better for rates and throughput, lower for
    /// time, memory and instructions.
    Compare {
        /// The base: a run id, `latest`, or a .jsonl results file.
        base: String,
        /// The candidate: a run id, `latest`, or a .jsonl results file.
        candidate: String,
        /// How much worse a figure may get before it counts as a regression, e.g. 5% (use
        /// about 0.5% for instruction counts, which repeat within 0.1%; an RSA server's
        /// within about 0.15%).
        #[arg(long, default_value = "5%", value_parser = compare::parse_threshold)]
        threshold: f64,
        #[command(flatten)]
        db: DbArg,
    },
    /// How far factors move between reruns of one plan (`make repeatability` makes the runs):
    /// max/min of each factor across the runs, whether each run's interval holds their
    /// median, and the A/A factors; exits 1 when a target is missed.
    Repeatability {
        /// Results files of two or more runs of the same plan.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// What handshakes cost on a network: a wire run's bytes, flights and round trips
    /// (`tlsmatrix run --measure wire` measures them) and the modelled time from connect to
    /// the first response byte at each RTT; with --check, real connections timed over
    /// loopback through tlsmatrix's delay proxy against the model.
    ///
    /// The model: a flight leaves when the peer flight it waits for has arrived and its
    /// sender has done its measured CPU work, takes half a round trip plus its bytes at the
    /// bandwidth, and a round trip more each time it overflows TCP's congestion window
    /// (slow start from --initcwnd segments of 1,460 bytes); TCP's own handshake comes first.
    #[command(after_help = "Examples:
  tlsmatrix run --measure wire --scenario 'handshake-tls13-*-full*' --runs 20
  tlsmatrix wire --rtt 0.2,30,150 --bandwidth 5 --initcwnd 4
  tlsmatrix wire --check --rtt 0.2,30")]
    Wire {
        /// Time real connections through the delay proxy instead of showing a run.
        #[arg(long)]
        check: bool,
        /// The wire run to show: a run id, `latest` (the newest wire run) or a .jsonl file.
        #[arg(long, default_value = "latest")]
        run: String,
        /// Round-trip times in milliseconds, comma-separated (default: 0.2,30,150; with
        /// --check --quic: 20,100).
        #[arg(long, value_delimiter = ',', value_name = "MS,...", value_parser = wire::parse_rtt)]
        rtt: Vec<f64>,
        /// Bandwidth each way in Mbit/s (default: no limit).
        #[arg(long, value_name = "MBIT/S", value_parser = wire::parse_bandwidth)]
        bandwidth: Option<f64>,
        /// Initial congestion window in segments (Linux and RFC 6928: 10).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
        initcwnd: u32,
        /// Leave out TCP's handshake (as on a connection already open, or with TCP Fast Open).
        #[arg(long)]
        no_tcp: bool,
        /// --check: QUIC over loopback UDP through tlsmatrix's UDP delay proxy: each QUIC
        /// stack's time to first byte against the model `--measure quic` gives, and a 1 MiB
        /// hq-interop download at 50 ms against what slow start allows (writes
        /// results/quic-proxy-check.json unless --out says otherwise).
        #[arg(long)]
        quic: bool,
        /// --check: the impl whose client and server are timed (default: the first listed);
        /// with --quic, impls comma-separated (default: every impl with a QUIC stack).
        #[arg(long = "impl", value_name = "NAME")]
        imp: Option<String>,
        /// --check: full-handshake scenario ids, comma-separated (default: five that differ
        /// on the wire: X25519, X25519MLKEM768, TLS 1.2, a retry, a 4-certificate RSA chain).
        #[arg(long = "scenario", value_delimiter = ',', value_name = "ID,...")]
        scenarios: Vec<String>,
        /// --check: connections timed per scenario and RTT (after one that warms up).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
        runs: u32,
        /// --check: the file the results replace (the report reads it; default
        /// results/proxy-check.json, or results/quic-proxy-check.json with --quic).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// --check: a driver that prints nothing for this many seconds is killed.
        #[arg(long, default_value_t = 120, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
        timeout: u64,
        #[command(flatten)]
        db: DbArg,
    },
    /// Store the runs of .jsonl results files (e.g. `make bench-go`'s) in the database.
    Import {
        /// Results files to import; runs already stored are skipped.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        db: DbArg,
    },
    /// Run every client against every server over TCP for each interop case, in parallel.
    ///
    /// Peers are the built impls, Go's crypto/tls (tlsmatrix-go-peer, built by `make build`),
    /// and the `openssl` (s_server/s_client) and GnuTLS (gnutls-serv/gnutls-cli) tools. The
    /// libp2p cases run the libp2p peers instead: the Go transport with each backend
    /// (go-libp2p-std, go-libp2p-openssl) and rust-libp2p's libp2p-tls (rust-libp2p-tls). A cell is
    /// `pass`, `expected-failure` (failed exactly as the case requires, e.g. with the right
    /// alert), `fail` (with both sides' last words) or `unsupported` (with the reason).
    /// Exit 1 when any cell fails.
    Interop(InteropArgs),
    /// Run BoringSSL's BoGo TLS test runner against each impl's shim and score every test.
    ///
    /// The runner is built once from the boring-sys crate's sources (the BoringSSL the
    /// boringssl impl links) and cached under target/bogo. Each test is `passed`, `failed`
    /// (with the runner's message), `unimplemented` (with the shim's reason: a flag no shim
    /// honours yet or a setting the library lacks; or the test lies outside what tlsmatrix
    /// configures: DTLS, QUIC, TLS 1.0/1.1) or `deviation`
    /// (a known difference of the library, listed with its reason in
    /// crates/conformance/config/). DTLS and QUIC tests (2,641 of 8,105), which no shim speaks,
    /// are not started: the runner lists them once and each impl records them as
    /// unimplemented. Error strings are not compared (the runner's -loose-errors):
    /// a test that must fail passes when the handshake fails for any reason. Results are
    /// appended to --out and stored in the database; `tlsmatrix compare` of two conformance
    /// runs lists tests that newly fail. Exit 2 when a run could not finish; with --strict,
    /// exit 1 when any test failed.
    Conformance(ConformanceArgs),
    /// A third-party scanner, testssl.sh, against every stack's defaults peer, and against
    /// the library's own command-line server where this machine has one of the same release
    /// (`openssl s_server`, `gnutls-serv`), each with the same certificate.
    ///
    /// Writes every finding (versions, cipher categories, suites, groups, server preferences,
    /// resumption, extensions, known vulnerabilities) to --out, replaced whole, and the scanner's own
    /// JSON beside it (an outside-scan folder); prints a table per stack. Exit 1 when a
    /// server could not be scanned or a finding differs from the library's server and no
    /// listed explanation says why. About 30 s a server, three at a time on two cores.
    Scan(ScanArgs),
    /// One side of an interop case over TCP, for trying a peer by hand.
    ///
    /// A server prints `listening ADDR` and echoes; a client sends a payload, checks the echo
    /// and closes with close_notify. Both end with `ok: ...` and exit 0, or `error: ...` and
    /// exit 1. With --connections N a server serves N clients one after another (tlsfuzzer,
    /// `openssl s_time`, h2load), a line per connection; with --respond http it answers one
    /// HTTP/1.1 GET (curl -k). A case pins one version, suite, group and scheme; for a tool
    /// that offers what it likes, --defaults CERT runs the library's own defaults (TLS 1.2
    /// and 1.3, every suite, group and scheme it enables by default) with a certificate of
    /// that kind.
    #[command(after_help = "Examples (a server for outside tools, until killed):
  tlsmatrix peer server --impl openssl-3.0 --defaults rsa-2048 --listen 127.0.0.1:4433 --connections 0 --respond http
  openssl s_time -connect 127.0.0.1:4433 -new -time 5
  testssl.sh --quiet 127.0.0.1:4433
  PYTHONPATH=. python3 scripts/test-tls13-conversation.py -h 127.0.0.1 -p 4433   (in a tlsfuzzer checkout)")]
    Peer {
        /// `server` or `client`.
        #[arg(value_parser = ["server", "client"])]
        role: String,
        /// The impl, e.g. rustls-aws-lc.
        #[arg(long = "impl")]
        imp: String,
        /// The driver's options: --case CASE, --quic (QUIC over UDP, ALPN hq-interop: the
        /// quic-handshake case unless --case names another; a server answers one client's
        /// `GET /N` with N bytes, a client asks for the case's), --listen ADDR, --connect ADDR, --timeout S,
        /// --certs DIR (default results/certs, made if missing, as `tlsmatrix interop` uses),
        /// and for a server --connections N (serve N clients, 0: until killed),
        /// --respond echo|http and --defaults CERT (rsa-2048, rsa-3072, ecdsa-p256, ecdsa-p384,
        /// ed25519) (see `tlsmatrix-driver peer --help`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
    /// Estimate how long the rest of `make report` takes on this machine, from a new
    /// machine's whole run: its builds after the first look and its counted stages scaled by
    /// this run's Rust workspace build against the reference's (both are CPU work), its timed
    /// stages as they were (their samples are fixed in milliseconds). Once this run's timings
    /// hold builds after its first look, only the counted and timed stages are left, and the
    /// counted ones are scaled by those builds against the reference's instead. `make report`
    /// prints it after a new machine's first look and again once its stacks are built.
    Estimate {
        /// The reference run's timings file (a new machine's whole `make report`, as
        /// scripts/stage and scripts/step wrote its results/timings.tsv).
        #[arg(
            long,
            default_value = "scripts/reference-timings.tsv",
            value_name = "FILE"
        )]
        reference: PathBuf,
        /// This run's timings so far [default: $TLSMATRIX_TIMINGS, else results/timings.tsv].
        #[arg(long, value_name = "FILE")]
        timings: Option<PathBuf>,
    },
    /// Write the report: index.html (self-contained), report.md and results.csv.
    Report {
        /// The run to report: a run id, `latest` (the newest matrix run), or a .jsonl file.
        #[arg(long, default_value = "latest")]
        run: String,
        /// Output folder; written beside it first and renamed into place when complete.
        #[arg(long, default_value = "report", value_name = "DIR")]
        out: PathBuf,
        /// Interop results whose newest run becomes the report's matrix (skipped if absent).
        #[arg(long, default_value = "results/interop.jsonl", value_name = "FILE")]
        interop: PathBuf,
        #[command(flatten)]
        db: DbArg,
    },
}

#[derive(clap::Args)]
struct InteropArgs {
    /// Peers to include, comma-separated (default: all found).
    #[arg(long = "peer", value_name = "A,B,...")]
    peers: Vec<String>,
    /// Case ids or patterns (`*`, `?`), comma-separated (default: all, or the quick subset).
    #[arg(long = "case", value_name = "PATTERN")]
    cases: Vec<String>,
    /// Only the core cases (`--list-cases` marks them): seconds for every pair.
    #[arg(long)]
    quick: bool,
    /// Cells run at once (default: twice the number of cores; a cell spends about half its
    /// time waiting on its peers' processes).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=64))]
    jobs: Option<u64>,
    /// Hard limit per cell in seconds; a peer still running then is killed and the cell fails.
    #[arg(long, default_value_t = 10, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=600))]
    timeout: u64,
    /// Output format of the matrices: `text` or `md`.
    #[arg(long, default_value = "text", value_parser = ["text", "md"])]
    format: String,
    /// JSON-lines file the cells are appended to (schema tlsmatrix.interop/1); test
    /// certificates are kept in a `certs` folder beside it.
    #[arg(long, default_value = "results/interop.jsonl", value_name = "FILE")]
    out: PathBuf,
    /// List the cases and exit.
    #[arg(long)]
    list_cases: bool,
    /// Print each case's matrix and every unsupported cell with its reason, not only the
    /// summary matrix and the cells that did not pass.
    #[arg(long, short)]
    verbose: bool,
    /// Run only shard K of N of the planned cells (every Nth cell from the Kth). Give every
    /// shard the same --run-id and --out (or concatenate their files): the report reads
    /// them as one run. Interop cells judge outcomes, not speed, so shards may run on
    /// different machines.
    #[arg(long, default_value = "1/1", value_name = "K/N")]
    shard: run::Shard,
    /// The run id to record under (default: a new one from the time and process id).
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
    /// Also read what each TLS client offers on its library's defaults (versions, groups,
    /// key shares, signature schemes: its ClientHello, answered with a refusal), into
    /// offers.json beside --out. A run of every case (no --case, no --quick, the first
    /// shard) does this anyway; the report's post-quantum section shows it.
    #[arg(long)]
    offers: bool,
}

#[derive(clap::Args)]
struct ConformanceArgs {
    /// Impls to test, comma-separated names or patterns (default: every plain build with a
    /// shim).
    #[arg(long = "impl", value_name = "A,B,...")]
    impls: Vec<String>,
    /// Test-name patterns (`*`, `?`), as the runner names tests (default: all).
    #[arg(long = "test", value_name = "PATTERN")]
    tests: Vec<String>,
    /// The quick subset (about 50 tests across the families the shim honours).
    #[arg(long)]
    quick: bool,
    /// Run only shard K of N of the tests (every Nth from the Kth, as the runner shards).
    /// Give every shard the same --run-id: they record into one run.
    #[arg(long, default_value = "1/1", value_name = "K/N")]
    shard: run::Shard,
    /// Tests run at once (default: twice the number of cores: a test spends much of its
    /// time waiting on the runner or the network, so two per core finished the full run
    /// in 2/3 of the time of one per core here, with the same outcomes).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=64))]
    jobs: Option<u64>,
    /// Hard limit on each impl's run in seconds; the runner and its shims are killed then.
    #[arg(long, default_value_t = 1200, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(10..=86400))]
    limit: u64,
    /// The runner's limit on each wait inside a test, in seconds. A few tests wait it out
    /// for some libraries (they neither answer nor close), so it sets much of the run's
    /// length; the slowest wait of a test that finishes was 0.4 s here.
    #[arg(long, default_value_t = 5, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=600))]
    idle_timeout: u64,
    /// Exit 1 when any test failed (not a listed deviation).
    #[arg(long)]
    strict: bool,
    /// Build the runner (or find it built) and exit, testing nothing. `make build` does this,
    /// so the runner exists before `make report` takes the fingerprint its counted stages are
    /// reused by; built inside the conformance stage instead, it changed the fingerprint
    /// after the first run's stages were keyed, and a second run reused none of them.
    #[arg(long, conflicts_with_all = ["impls", "tests", "quick", "strict", "run_id"])]
    build_runner: bool,
    /// The run id to record under (default: a new one from the time and process id).
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
    /// JSON-lines file the results are appended to (schema tlsmatrix.conformance/1).
    #[arg(long, default_value = "results/conformance.jsonl", value_name = "FILE")]
    out: PathBuf,
    #[command(flatten)]
    db: DbArg,
}

#[derive(clap::Args)]
struct ScanArgs {
    /// Stacks to scan, comma-separated (default: every stack with a defaults peer).
    #[arg(long = "impl", value_name = "A,B,...")]
    impls: Vec<String>,
    /// The certificate every server gets.
    #[arg(long, default_value = "ecdsa-p256", value_name = "CERT", value_parser = <tlsmatrix_model::scenario::SigAlg as tlsmatrix_model::scenario::Axis>::named)]
    cert: tlsmatrix_model::scenario::SigAlg,
    /// Leave out the known-vulnerability checks (testssl.sh -U): about 21 s a server
    /// instead of 30.
    #[arg(long)]
    short: bool,
    /// Servers scanned at once (default: one more than the number of cores: testssl.sh
    /// waits on its OpenSSL clients and the network much of the time, and three at once
    /// on two cores scanned every stack in 202 s against about 260 at two, with the same
    /// findings).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=16))]
    jobs: Option<u64>,
    /// The most one server's scan may take, in seconds; the scanner is killed then and
    /// the server's cell fails.
    #[arg(long, default_value_t = 300, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(10..=3600))]
    limit: u64,
    /// The findings file (schema tlsmatrix.outside-scan/1), which `tlsmatrix report` reads
    /// beside the interop results.
    #[arg(long, default_value = "results/outside-scan.json", value_name = "FILE")]
    out: PathBuf,
}

#[derive(clap::Args)]
struct RunArgs {
    /// Impls to compare, comma-separated; the first is the baseline of the factor column.
    /// A name with `*` takes every impl it matches, allocator variants included
    /// (`openssl-3.6+*`: its jemalloc and mimalloc variants). Default: every built impl on
    /// glibc's malloc (`tlsmatrix list` shows the variants, named `impl+allocator`).
    #[arg(long = "impl", value_name = "A,B,...")]
    impls: Vec<String>,
    /// A named plan in place of --impl and --scenario: the impls and scenarios that repeat a
    /// published measurement's configuration here, so that the report sets its figures beside
    /// ours (`tlsmatrix list` shows the plans). `rustls-report`: rustls's report of
    /// 2026-03-07, rustls-aws-lc against BoringSSL and OpenSSL 3.6.
    #[arg(long, value_name = "NAME", value_parser = tlsmatrix_model::plan::named, conflicts_with_all = ["impls", "scenario"])]
    plan: Option<&'static tlsmatrix_model::plan::Plan>,
    /// Scenario ids or patterns (`*` and `?` wildcards), comma-separated or repeated.
    /// Default: the core suite (`tlsmatrix list` shows it); with `--measure wire`, the wire
    /// suite (handshakes whose cost differs on a network).
    #[arg(long, value_name = "PATTERN")]
    scenario: Vec<String>,
    /// Samples per (scenario, pair, metric), after warm-up. Timed handshake and bulk
    /// scenarios take them in rounds, spread over --passes.
    #[arg(long, default_value_t = 60, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    runs: u32,
    /// Timed handshake and bulk scenarios are sampled paired: each impl's cells and the
    /// baseline's own pair run in one process and take turns, one short sample each per
    /// round, and each factor is the median of the per-round ratios. The run makes this many
    /// passes over all scenarios, each in new processes on the next core with the heap
    /// shifted by another share of a page (so that the libraries' buffers fall elsewhere in
    /// their pages), so that intervals cover the drift and the placements between them (a
    /// two-level bootstrap over passes and samples).
    #[arg(long, default_value_t = 12, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    passes: u32,
    /// Stop sampling a timed group (an impl's cells of one scenario with the baseline's pair)
    /// once the 95% interval of each factor it gives is within ±PCT percent of the factor,
    /// checked after each pass from --min-passes on; --passes is then the most any group
    /// gets, and a noisy group gets all of them. The rule reads the intervals' widths, never
    /// the factors' values. Without it, every group gets every pass.
    #[arg(long, value_name = "PCT", value_parser = percent_in_range)]
    until_within: Option<f64>,
    /// The passes every group gets before --until-within may stop it (at least 2: the
    /// interval covers the differences between passes only once there are some).
    #[arg(long, default_value_t = 4, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=1000), requires = "until_within")]
    min_passes: u32,
    /// Leave out the memory weather, the two pointer chases (half and four times the
    /// last-level cache) read between passes that every paired record otherwise carries.
    /// Building them takes a second or two and a buffer of 4.5 times the cache, over a GiB
    /// where a VM reports the host's 260 MiB L3: for quick checks whose figures nobody reads
    /// against the weather.
    #[arg(long)]
    no_weather: bool,
    /// Timed groups sampled at once, each in its own process pinned to its own core (at
    /// most the number of cores). Pairs stay inside one process, so a factor's two sides
    /// always share a core and its weather; 2 on a 2-core machine halves the timed suite's
    /// time, and the absolute figures are then taken with the other core busy too. One-thread
    /// cells measured alone (ceilings, counters, one-thread throughput windows, perf profiles)
    /// run this many at once the same way.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    lanes: u32,
    /// JSON-lines file the records are appended to; test certificates are cached in a
    /// `certs` folder beside it.
    #[arg(long, default_value = "results/latest.jsonl", value_name = "FILE")]
    out: PathBuf,
    /// Warm-up per cell before sampling, in milliseconds. Default: 20 for paired (handshake,
    /// bulk) cells, each warmed in every pass (10 saved a sixth of the time but widened the
    /// factors' intervals by about a quarter); 200 for the others.
    #[arg(long, value_name = "MS")]
    warmup_ms: Option<u64>,
    /// Target duration of one sample in milliseconds (a handshake batch or a bulk transfer is
    /// sized to it). Default: 5 for paired cells (short, so that the cells of a round see
    /// the same machine), 100 for throughput windows and memory; for `--measure profile`,
    /// 200 on bulk and 900 on handshakes (enough perf samples for a handshake's server).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    sample_ms: Option<u64>,
    /// A driver that prints nothing for this many seconds is killed and its cell fails
    /// [default: 120; 600 with --measure instructions, where a driver runs under callgrind
    /// about 50 times slower: a sample of 32 Mbed TLS ECDSA handshakes a side took a minute
    /// alone, and more than 120 s beside another stage on two cores].
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    cell_timeout: Option<u64>,
    /// What to measure (one row each of the measure table, crates/model/src/measure.rs:
    /// the scenario kinds it takes, whether each impl runs it with itself, its lanes and
    /// default samples). Without --scenario, each measure runs its own default scenarios.
    #[arg(long, default_value = "time", value_name = "WHAT", long_help = measure_help())]
    measure: tlsmatrix_model::protocol::Measure,
    /// `all` client x server pairs of the chosen impls, or `baseline`: each impl with itself
    /// and against the baseline (the first impl) on the other side, which is every pair the
    /// report's comparisons use (2n-1 pairs instead of n^2); or `self`: each impl with itself
    /// only, compared with the baseline with itself (how allocator variants compare, since
    /// impls on different allocators cannot share a process); or `twins`: each impl with
    /// itself on each post-quantum handshake named, paired round by round with itself on
    /// the handshake's classical twin (ML-DSA over ECDSA P-256, a hybrid group over its own
    /// curve, pure ML-KEM over X25519): what post-quantum costs each stack. Without
    /// --scenario, every post-quantum choice: ML-DSA-44/65/87 and all six ML-KEM groups.
    #[arg(long, default_value = "baseline", value_name = "WHICH", value_parser = ["all", "baseline", "self", "twins"])]
    pairs: String,
    /// Run only shard K of N: every Nth scenario from the Kth, whole (a scenario's paired
    /// cells never split). Give every shard the same --run-id and `tlsmatrix import` their
    /// results files into one database to merge them into one run. Timings compare only
    /// within one machine: shard timed runs by scenario on one machine, or over machines
    /// only for instruction counts.
    #[arg(long, default_value = "1/1", value_name = "K/N")]
    shard: run::Shard,
    /// The run id to record under (default: a new one from the time and process id).
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
    /// SQLite history database the run is also stored in, one transaction per cell.
    /// Default: tlsmatrix.db beside --out (so results/tlsmatrix.db).
    #[arg(long, value_name = "FILE")]
    db: Option<PathBuf>,
    /// After the run, print every pair's table with intervals and each unmeasured cell's
    /// reason, not only the compact table per area.
    #[arg(long, short)]
    verbose: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::List { .. }
            | Command::History { .. }
            | Command::Show { .. }
            | Command::Compare { .. }
            | Command::Repeatability { .. }
    ) {
        // `tlsmatrix list | head` ends quietly, as other command-line tools do, instead of
        // panicking on the closed pipe (Rust ignores SIGPIPE). Only commands that just read
        // and print: a run must not die half-way because its reader went away.
        // SAFETY: restoring a signal's default disposition before any thread starts.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let result = match cli.command {
        Command::List { json, metrics } => if metrics {
            list::metrics(json)
        } else {
            list::list(json)
        }
        .map(|()| true),
        Command::Run(a) => run::run(run_options(a)),
        Command::History { db } => history::history(&db.db).map(|()| true),
        Command::Show { run, verbose, db } => history::show(&run, &db.db, verbose).map(|()| true),
        Command::Compare {
            base,
            candidate,
            threshold,
            db,
        } => compare::compare(&base, &candidate, threshold, &db.db).map(print_outcome),
        Command::Repeatability { files } => repeatability::repeatability(&files).map(print_outcome),
        Command::Import { files, db } => history::import(&files, &db.db).map(|()| true),
        Command::Wire {
            check: true,
            rtt,
            bandwidth,
            quic,
            imp,
            scenarios,
            runs,
            out,
            timeout,
            ..
        } => (if quic {
            tlsmatrix_runner::quic_check::check
        } else {
            wire::check
        })(&wire::CheckOptions {
            imp,
            quic,
            scenarios,
            rtts_ms: match (rtt.is_empty(), quic) {
                (false, _) => rtt,
                (true, false) => tlsmatrix_model::netmodel::DEFAULT_RTTS_MS.to_vec(),
                (true, true) => tlsmatrix_model::netmodel::QUIC_CHECK_RTTS_MS.to_vec(),
            },
            bandwidth_mbps: bandwidth,
            runs,
            out: out.unwrap_or_else(|| {
                PathBuf::from(if quic {
                    "results/quic-proxy-check.json"
                } else {
                    "results/proxy-check.json"
                })
            }),
            timeout: Duration::from_secs(timeout),
        }),
        Command::Wire {
            check: false,
            run,
            rtt,
            bandwidth,
            initcwnd,
            no_tcp,
            db,
            ..
        } => wire::model(&wire::ModelOptions {
            run,
            db: db.db,
            rtts_ms: if rtt.is_empty() {
                tlsmatrix_model::netmodel::DEFAULT_RTTS_MS.to_vec()
            } else {
                rtt
            },
            bandwidth_mbps: bandwidth,
            initcwnd,
            tcp_handshake: !no_tcp,
        })
        .map(|()| true),
        Command::Estimate { reference, timings } => {
            history::estimate(&reference, timings.as_deref()).map(|()| true)
        }
        Command::Report {
            run,
            out,
            db,
            interop,
        } => tlsmatrix_report::write(&run, &out, &db.db, &interop).map(|()| true),
        Command::Interop(a) if a.list_cases => {
            interop::list_cases();
            Ok(true)
        }
        Command::Interop(a) => interop::run(interop_options(a)),
        Command::Peer { role, imp, rest } => interop::peer(&role, &imp, &rest),
        Command::Scan(a) => interop::outside_scan::run(&scan_options(a)),
        Command::Conformance(a) => conformance::run(conformance_options(a)),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        // Some cells failed (each was reported as it happened), or a comparison regressed.
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// `tlsmatrix run`'s options, a named plan's impls and scenarios in place of the lists.
/// Prints what a command found; whether it passed decides the exit code.
fn print_outcome(o: compare::Outcome) -> bool {
    print!("{}", o.text);
    o.passed
}

fn run_options(a: RunArgs) -> run::RunOptions {
    run::RunOptions {
        db: a
            .db
            .clone()
            .unwrap_or_else(|| beside(&a.out, "tlsmatrix.db")),
        impls: match a.plan {
            Some(p) => p.impls.iter().map(|s| s.to_string()).collect(),
            None => a.impls,
        },
        scenarios: match a.plan {
            Some(p) => p.scenarios().into_iter().map(String::from).collect(),
            None => a.scenario,
        },
        runs: a.runs,
        out: a.out,
        warmup_ms: a.warmup_ms,
        sample_ms: a.sample_ms,
        passes: a.passes,
        until_within: a.until_within.map(|pct| pct / 100.0),
        min_passes: a.min_passes,
        weather: !a.no_weather,
        lanes: a.lanes as usize,
        cell_timeout: cell_timeout(a.cell_timeout, a.measure),
        command_line: command_line(),
        measure: a.measure,
        baseline_pairs_only: a.pairs == "baseline",
        self_pairs_only: a.pairs == "self" || a.pairs == "twins",
        twins: a.pairs == "twins",
        shard: a.shard,
        run_id: a.run_id,
        verbose: a.verbose,
    }
}

/// A percentage for --until-within: above 0, at most 100.
fn percent_in_range(s: &str) -> Result<f64, String> {
    let pct: f64 = s
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage (e.g. 1.5)"))?;
    if pct.is_finite() && pct > 0.0 && pct <= 100.0 {
        Ok(pct)
    } else {
        Err(format!(
            "{s}: give a percentage above 0 and at most 100, e.g. 1.5"
        ))
    }
}

/// This process's command line, as runs record it.
fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// Jobs at once: as given, or `per_core` per usable core plus `extra`.
fn jobs_or(jobs: Option<u64>, per_core: usize, extra: usize) -> usize {
    jobs.map_or_else(
        || per_core * std::thread::available_parallelism().map_or(1, |n| n.get()) + extra,
        |j| j as usize,
    )
}

fn interop_options(a: InteropArgs) -> interop::Options {
    interop::Options {
        peers: a.peers,
        cases: a.cases,
        quick: a.quick,
        jobs: jobs_or(a.jobs, 2, 0),
        timeout: Duration::from_secs(a.timeout),
        markdown: a.format == "md",
        verbose: a.verbose,
        shard: a.shard,
        run_id: a.run_id,
        out: a.out,
        command_line: command_line(),
        offers: a.offers,
    }
}

fn scan_options(a: ScanArgs) -> interop::outside_scan::Options {
    interop::outside_scan::Options {
        impls: a.impls,
        cert: a.cert,
        checks: if a.short {
            interop::outside_scan::Checks::Short
        } else {
            interop::outside_scan::Checks::Full
        },
        jobs: jobs_or(a.jobs, 1, 1),
        limit: Duration::from_secs(a.limit),
        out: a.out,
    }
}

fn conformance_options(a: ConformanceArgs) -> conformance::Options {
    conformance::Options {
        impls: a.impls,
        tests: a.tests,
        quick: a.quick,
        shard: a.shard,
        jobs: jobs_or(a.jobs, 2, 0),
        limit: Duration::from_secs(a.limit),
        idle_timeout: Duration::from_secs(a.idle_timeout),
        strict: a.strict,
        run_id: a.run_id,
        out: a.out,
        db: a.db.db,
        command_line: command_line(),
        build_runner_only: a.build_runner,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::protocol::Measure;

    #[test]
    fn a_cell_under_callgrind_gets_longer_to_speak_unless_told() {
        assert_eq!(cell_timeout(None, Measure::Time), Duration::from_secs(120));
        assert_eq!(
            cell_timeout(None, Measure::Instructions),
            Duration::from_secs(600)
        );
        assert_eq!(
            cell_timeout(Some(5), Measure::Instructions),
            Duration::from_secs(5)
        );
    }
}
