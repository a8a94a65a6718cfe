//! The measure table: every `--measure` of `tlsmatrix run`, one row each. What a measure
//! accepts, whether an impl takes it only with itself, how many of its cells run at once, the
//! tool it needs, its default samples and scenarios, its results file and its `make report`
//! stage are read from here by the driver (its refusals), the runner (plan, lanes, sample
//! times), history (run kinds), the report (its companion runs), the CLI's help and the Go
//! driver (`cargo xtask metrics` writes `go/internal/measures/names.go` from this table).
//! Adding a measure is a row here; `crates/cli/tests/measure_places.rs` names any place a row
//! still lacks.

use crate::metric::{Metric, Source};
use crate::scenario::{Kind, Scenario};

/// What a run measures: time on the monotonic clock, instructions counted by callgrind, and
/// the rest of [`MEASURES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Measure {
    #[default]
    Time,
    Instructions,
    Wire,
    Counters,
    Ceiling,
    Profile,
    Setup,
    Floor,
    Contention,
    Teardown,
    Quic,
    QuicBulk,
    QuicMemory,
    QuicInstructions,
}

/// How many of a measure's cells run at once, when each runs in a driver of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lanes {
    /// Counts that do not depend on what else the machine runs (instructions, bytes on the
    /// wire, heap bytes): one cell per core, unpinned.
    PerCore,
    /// Figures taken in turns inside one process, or shares of one thread's own CPU time:
    /// `--lanes` cells at once, each pinned to its own core as paired groups are.
    Pinned,
    /// Alone on the machine (threads that share a context need every core).
    Alone,
    /// As the scenario's kind says ([`Lanes::of_timed`]): the timed measure.
    ByScenario,
}

impl Lanes {
    /// The timed measure's lanes for a scenario run apart: heap bytes are counts, one-thread
    /// throughput windows compare no two cells side by side, every-core throughput needs the
    /// machine.
    pub fn of_timed(scenario: &Scenario) -> Lanes {
        use crate::scenario::Cores;
        match scenario {
            Scenario::Memory(_) => Lanes::PerCore,
            Scenario::Throughput(t) if t.cores == Cores::One => Lanes::Pinned,
            _ => Lanes::Alone,
        }
    }
}

/// A program a measure runs its drivers under, checked before the first cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    None,
    /// `valgrind --tool=callgrind`.
    Valgrind,
    /// `perf record`.
    Perf,
}

/// What a measure runs when `--scenario` names none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultScenarios {
    /// The default suite (`Scenario::default_suite`).
    Suite,
    /// The default suite's handshakes.
    SuiteHandshakes,
    /// The wire suite (`Scenario::wire_suite`).
    WireSuite,
    /// These ids.
    Named(&'static [&'static str]),
}

/// One measure: everything any part of tlsmatrix needs to know about it.
#[derive(Debug)]
pub struct MeasureRow {
    pub measure: Measure,
    /// Its `--measure` value, and its `measure` column in the database.
    pub name: &'static str,
    /// One sentence for `--help`: what a cell of it measures.
    pub help: &'static str,
    /// The scenario kinds it takes (every kind where empty), and the refusal a cell of any
    /// other kind carries.
    pub kinds: &'static [Kind],
    pub other_kinds: &'static str,
    /// The refusal of a pair of two impls where it measures one library alone.
    pub self_only: Option<&'static str>,
    /// The refusal of a resumed handshake where it needs full ones.
    pub full_only: Option<&'static str>,
    pub lanes: Lanes,
    pub tool: Tool,
    /// A sample's milliseconds where `--sample-ms` names none: on a handshake, on the rest.
    pub sample_ms: (u64, u64),
    /// How long a silent driver may take before its cell fails, in seconds.
    pub cell_timeout_s: u64,
    pub defaults: DefaultScenarios,
    /// The figures only it gives: a results file's measure is read from them.
    pub sources: &'static [Source],
    /// How `tlsmatrix history` and the report's errors name its runs ("crypto-floor run").
    pub run_kind: &'static str,
    /// Whether the report joins its newest run to the timed run it renders.
    pub companion: bool,
    /// The `make report` stage that runs it and the results file it writes; `None` for a
    /// measure `make report` runs otherwise (the timed suite's stages).
    pub stage: Option<(&'static str, &'static str)>,
}

const HANDSHAKES: &[Kind] = &[Kind::Handshake];
const HANDSHAKES_AND_BULK: &[Kind] = &[Kind::Handshake, Kind::Bulk];
const FLOOR_KINDS: &str = "a crypto floor is taken on handshake scenarios";

/// Every measure, in `--help`'s order.
pub const MEASURES: &[MeasureRow] = &[
    MeasureRow {
        measure: Measure::Time,
        name: "time",
        help: "CPU time per side on the monotonic clock, rates and heap bytes, paired with the baseline in turns",
        kinds: &[],
        other_kinds: "",
        self_only: None,
        full_only: None,
        lanes: Lanes::ByScenario,
        tool: Tool::None,
        sample_ms: (100, 100),
        cell_timeout_s: 120,
        defaults: DefaultScenarios::Suite,
        sources: &[Source::Time, Source::GoBench, Source::Proxy],
        run_kind: "timed `tlsmatrix run` ",
        companion: false,
        stage: None,
    },
    MeasureRow {
        measure: Measure::Instructions,
        name: "instructions",
        help: "instructions and atomic bus events of each side's calls, counted by callgrind; samples agree within 0.1% (an RSA server's 0.15%), so 3 runs are plenty",
        kinds: HANDSHAKES_AND_BULK,
        other_kinds: "instructions are counted on handshake and bulk scenarios (a memory scenario measures heap bytes, a throughput one wall time across threads)",
        self_only: None,
        full_only: None,
        lanes: Lanes::PerCore,
        tool: Tool::Valgrind,
        sample_ms: (100, 100),
        cell_timeout_s: 600,
        defaults: DefaultScenarios::Suite,
        sources: &[Source::Instructions],
        run_kind: "instruction-count ",
        companion: true,
        stage: Some(("instructions", "results/instructions.jsonl")),
    },
    MeasureRow {
        measure: Measure::Wire,
        name: "wire",
        help: "bytes and flights each way and the CPU on the path to the first byte, each sample one traced connection",
        kinds: HANDSHAKES,
        other_kinds: "wire figures are measured on handshake scenarios",
        self_only: None,
        full_only: None,
        lanes: Lanes::PerCore,
        tool: Tool::None,
        sample_ms: (100, 100),
        cell_timeout_s: 120,
        defaults: DefaultScenarios::WireSuite,
        sources: &[Source::Wire, Source::WirePath],
        run_kind: "wire ",
        companion: true,
        stage: Some(("wire", "results/wire.jsonl")),
    },
    MeasureRow {
        measure: Measure::Counters,
        name: "counters",
        help: "page faults and context switches during each side's calls (getrusage around every call) and the allocator's cold blocks, per handshake or per MiB",
        kinds: HANDSHAKES_AND_BULK,
        other_kinds: "OS counters are taken on handshake and bulk scenarios",
        self_only: None,
        full_only: None,
        lanes: Lanes::Pinned,
        tool: Tool::None,
        sample_ms: (100, 100),
        cell_timeout_s: 120,
        defaults: DefaultScenarios::Suite,
        sources: &[Source::Counters],
        run_kind: "OS-counter ",
        companion: true,
        stage: Some(("counters", "results/counters.jsonl")),
    },
    MeasureRow {
        measure: Measure::Ceiling,
        name: "ceiling",
        help: "the library's own AEAD sealing and opening the scenario's records through its crypto API: the most its bulk figures could reach",
        kinds: &[Kind::Bulk],
        other_kinds: "a ceiling is taken on a bulk scenario's records",
        self_only: Some("a ceiling is one library's own AEAD: run each impl with itself"),
        full_only: None,
        lanes: Lanes::Pinned,
        tool: Tool::None,
        sample_ms: (100, 100),
        cell_timeout_s: 120,
        defaults: DefaultScenarios::Suite,
        sources: &[Source::Ceiling],
        run_kind: "AEAD-ceiling ",
        companion: true,
        stage: Some(("ceilings", "results/ceiling.jsonl")),
    },
    MeasureRow {
        measure: Measure::Profile,
        name: "profile",
        help: "where each side's time goes: perf record -e cpu-clock on the driver, each sample charged to the side whose call it fell in and classed by its function",
        kinds: HANDSHAKES_AND_BULK,
        other_kinds: "a profile is taken on handshake and bulk scenarios",
        self_only: Some("a profile splits one stack's time by side: run each impl with itself"),
        full_only: None,
        lanes: Lanes::Pinned,
        tool: Tool::Perf,
        // A few hundred perf samples per side at 4 kHz: a bulk transfer's sides share its
        // time about evenly, a handshake's server may take a quarter of it, and perf samples
        // CPU time, which a loaded machine gives the thread less of. One long sample gives
        // each side as many perf samples as three short ones, and most of a cell's time is
        // fixed (the driver starting, perf attaching and naming its samples).
        sample_ms: (900, 200),
        cell_timeout_s: 120,
        defaults: DefaultScenarios::Suite,
        sources: &[Source::Profile],
        run_kind: "profile ",
        companion: true,
        stage: Some(("profiles", "results/profile.jsonl")),
    },
    MeasureRow {
        measure: Measure::Setup,
        name: "setup",
        help: "a context with its chain and key loaded, and a connection object made and freed, per side, without a handshake",
        kinds: HANDSHAKES,
        other_kinds: "setup costs are taken on handshake scenarios",
        self_only: Some(
            "setup costs are one library's contexts and connections: run each impl with itself",
        ),
        full_only: None,
        lanes: Lanes::Pinned,
        tool: Tool::None,
        sample_ms: (100, 100),
        cell_timeout_s: 120,
        defaults: DefaultScenarios::Suite,
        sources: &[Source::Setup],
        run_kind: "setup-cost ",
        companion: true,
        stage: Some(("setup-costs", "results/setup.jsonl")),
    },
    MeasureRow {
        measure: Measure::Floor,
        name: "floor",
        help: "handshakes in turns with the library's own primitives for exactly the operations each side performs (key shares and secrets, signatures made and verified, the key schedule's HMACs)",
        kinds: HANDSHAKES,
        other_kinds: FLOOR_KINDS,
        self_only: Some(
            "a crypto floor is one library's own primitives: run each impl with itself",
        ),
        full_only: None,
        lanes: Lanes::Pinned,
        tool: Tool::None,
        sample_ms: (100, 100),
        cell_timeout_s: 120,
        defaults: DefaultScenarios::SuiteHandshakes,
        sources: &[Source::Floor],
        run_kind: "crypto-floor ",
        companion: true,
        stage: Some(("crypto-floor", "results/floor.jsonl")),
    },
    MeasureRow {
        measure: Measure::Contention,
        name: "contention",
        help: "one server context shared by 1, 2 and 8 threads, each with a client context of its own: the rate, its scaling over one thread and blocking waits per handshake",
        kinds: HANDSHAKES,
        other_kinds: "contention is measured on handshake scenarios",
        self_only: Some(
            "contention is one library's context shared by threads: run each impl with itself",
        ),
        full_only: Some(
            "contention is measured on full handshakes (a resumption shares its session store too)",
        ),
        lanes: Lanes::Alone,
        tool: Tool::None,
        sample_ms: (100, 100),
        cell_timeout_s: 120,
        // The handshake the report leads with; threads share its server context.
        defaults: DefaultScenarios::Named(&["handshake-tls13-ecdsa-p256-x25519-full"]),
        sources: &[Source::Contention],
        run_kind: "contention ",
        companion: true,
        stage: Some(("contention", "results/contention.jsonl")),
    },
    MeasureRow {
        measure: Measure::Teardown,
        name: "teardown",
        help: "ending a connection after a full handshake: close_notify sent and read each way and the connection freed, per side",
        kinds: HANDSHAKES,
        other_kinds: "teardown costs are taken on handshake scenarios",
        self_only: Some(
            "teardown costs are one library's connections: run each impl with itself",
        ),
        full_only: Some("teardown is measured after full handshakes"),
        lanes: Lanes::Pinned,
        tool: Tool::None,
        sample_ms: (100, 100),
        cell_timeout_s: 120,
        defaults: DefaultScenarios::Named(&["handshake-tls13-ecdsa-p256-x25519-full"]),
        sources: &[Source::Teardown],
        run_kind: "teardown-cost ",
        companion: true,
        stage: Some(("teardown-costs", "results/teardown.jsonl")),
    },
    MeasureRow {
        measure: Measure::Quic,
        name: "quic",
        help: "the library's QUIC handshake (RFC 9001) over in-memory datagrams in turns with its own TLS-over-TCP handshake on the same scenario: CPU per side, the paired factor QUIC/TCP, and the datagrams (bytes, the client's padding, round trips, what the amplification limit held back)",
        kinds: HANDSHAKES,
        other_kinds: "QUIC is measured on handshake scenarios",
        self_only: Some(
            "QUIC is measured against the same library's TCP handshake: run each impl with itself",
        ),
        full_only: None,
        lanes: Lanes::Pinned,
        tool: Tool::None,
        sample_ms: (100, 100),
        cell_timeout_s: 120,
        defaults: DefaultScenarios::Named(QUIC_SUITE),
        sources: &[Source::Quic],
        run_kind: "QUIC ",
        companion: true,
        stage: Some(("quic", "results/quic.jsonl")),
    },
    MeasureRow {
        measure: Measure::QuicBulk,
        name: "quic-bulk",
        help: "stream data over the library's QUIC stack in memory, in turns with its own TLS bulk over TCP: 1 MiB and 16 MiB each way on a new connection's stream, MB/s per side, and QUIC's CPU per byte over TCP's",
        kinds: &[Kind::Bulk],
        other_kinds: "QUIC bulk is measured on bulk scenarios",
        self_only: Some(
            "QUIC bulk is measured against the same library's TLS bulk: run each impl with itself",
        ),
        full_only: None,
        lanes: Lanes::Pinned,
        tool: Tool::None,
        sample_ms: (100, 100),
        cell_timeout_s: 180,
        defaults: DefaultScenarios::Named(&["bulk-tls13-aes-128-gcm-16k"]),
        sources: &[Source::QuicBulk],
        run_kind: "QUIC bulk ",
        companion: true,
        stage: Some(("quic-bulk", "results/quic-bulk.jsonl")),
    },
    MeasureRow {
        measure: Measure::QuicMemory,
        name: "quic-memory",
        help: "heap per connection with the scenario's many QUIC connections alive in memory, after the handshake and after 1 KiB each way on the stream, beside the same library's TCP connections as many: bytes per side",
        kinds: &[Kind::Memory],
        other_kinds: "QUIC memory is measured on memory scenarios",
        self_only: Some(
            "QUIC memory is measured beside the same library's TCP connections: run each impl with itself",
        ),
        full_only: None,
        lanes: Lanes::Pinned,
        tool: Tool::None,
        sample_ms: (100, 100),
        cell_timeout_s: 180,
        defaults: DefaultScenarios::Named(&["memory-tls13-ecdsa-p256-n100", "memory-tls13-ecdsa-p256-n1000"]),
        sources: &[Source::QuicMemory],
        run_kind: "QUIC memory ",
        companion: true,
        stage: Some(("quic-memory", "results/quic-memory.jsonl")),
    },
    MeasureRow {
        measure: Measure::QuicInstructions,
        name: "quic-instructions",
        help: "instructions of each side's QUIC handshake counted by callgrind beside the same library's TLS-over-TCP handshake on the same scenario, both split by what the code does: what QUIC adds, by class",
        kinds: HANDSHAKES,
        other_kinds: "QUIC instructions are counted on handshake scenarios",
        self_only: Some(
            "QUIC instructions are counted beside the same library's TCP handshake: run each impl with itself",
        ),
        full_only: None,
        lanes: Lanes::PerCore,
        tool: Tool::Valgrind,
        sample_ms: (100, 100),
        cell_timeout_s: 600,
        defaults: DefaultScenarios::Named(&[
            "handshake-tls13-ecdsa-p256-x25519-full",
            "handshake-tls13-ecdsa-p256-x25519mlkem768-full",
        ]),
        sources: &[Source::QuicInstructions],
        run_kind: "QUIC instruction-count ",
        companion: true,
        stage: Some(("quic-instructions", "results/quic-instructions.jsonl")),
    },
];

/// What `--measure quic-bulk` sends each way on a new connection's stream, in bytes: the
/// smaller size, then the larger, which the TCP sample beside it sends too.
pub const QUIC_BULK_SIZES: [u64; 2] = [1 << 20, 16 << 20];

/// The QUIC measure's scenarios: the lead handshake, each classical group and key type,
/// every post-quantum group QUIC stacks offer, each ML-DSA level, chains of two and three,
/// mutual authentication, and resumption by ticket.
pub const QUIC_SUITE: &[&str] = &[
    "handshake-tls13-ecdsa-p256-x25519-full",
    "handshake-tls13-ecdsa-p256-p256-full",
    "handshake-tls13-rsa-2048-x25519-full",
    "handshake-tls13-ecdsa-p256-x25519mlkem768-full",
    "handshake-tls13-ecdsa-p256-secp256r1mlkem768-full",
    "handshake-tls13-ecdsa-p256-mlkem768-full",
    "handshake-tls13-mldsa44-x25519-full",
    "handshake-tls13-mldsa65-x25519-full",
    "handshake-tls13-mldsa87-x25519-full",
    "handshake-tls13-ecdsa-p256-x25519-full-chain2",
    "handshake-tls13-ecdsa-p256-x25519-full-chain3",
    "handshake-tls13-ecdsa-p256-x25519-full-mtls",
    "handshake-tls13-ecdsa-p256-x25519-ticket",
];

impl Measure {
    /// Its row in [`MEASURES`].
    pub fn row(self) -> &'static MeasureRow {
        MEASURES
            .iter()
            .find(|r| r.measure == self)
            .expect("every measure has a row (checked by a test)")
    }

    pub fn as_str(self) -> &'static str {
        self.row().name
    }

    /// Whether it runs the library's QUIC stack, each beside the same library over TCP.
    pub fn is_quic(self) -> bool {
        matches!(
            self,
            Measure::Quic | Measure::QuicBulk | Measure::QuicMemory | Measure::QuicInstructions
        )
    }

    /// What a run measured, read from its figures (a results file does not say): a ceiling
    /// run also has bulk rates and a wire run also has time on the path, so any figure that
    /// only one measure gives decides.
    pub fn of_run(metrics: impl IntoIterator<Item = Metric>) -> Measure {
        metrics
            .into_iter()
            .map(|m| Measure::of_source(m.row().source))
            .find(|m| *m != Measure::Time)
            .unwrap_or(Measure::Time)
    }

    /// The measure whose runs give a source's figures (each source has one, checked by a
    /// test).
    pub fn of_source(source: Source) -> Measure {
        MEASURES
            .iter()
            .find(|r| r.sources.contains(&source))
            .map_or(Measure::Time, |r| r.measure)
    }
}

impl MeasureRow {
    /// Why this measure cannot be taken on `scenario` (`with_itself`: client and server are
    /// one impl), before any library is asked.
    pub fn refusal(&self, scenario: &Scenario, with_itself: bool) -> Option<&'static str> {
        if !self.takes(scenario.kind()) {
            return Some(self.other_kinds);
        }
        if let (Some(why), Scenario::Handshake(h)) = (self.full_only, scenario) {
            if h.resumption.is_resumed() {
                return Some(why);
            }
        }
        self.self_only.filter(|_| !with_itself)
    }

    /// A sample's time where `--sample-ms` names none.
    pub fn default_sample_ms(&self, scenario: &Scenario) -> u64 {
        match scenario {
            Scenario::Handshake(_) => self.sample_ms.0,
            _ => self.sample_ms.1,
        }
    }

    /// Whether it takes a scenario of this kind.
    pub fn takes(&self, kind: Kind) -> bool {
        self.kinds.is_empty() || self.kinds.contains(&kind)
    }

    /// The scenario kinds it takes, for help and errors.
    pub fn taken_kinds(&self) -> Vec<Kind> {
        Kind::ALL
            .iter()
            .copied()
            .filter(|k| self.takes(*k))
            .collect()
    }
}

impl Source {
    /// The command that produces it: `run --measure NAME` for a measure's own figures.
    pub fn command(self) -> String {
        match (self, Measure::of_source(self)) {
            (Source::GoBench, _) => "make bench-go".into(),
            (Source::Proxy, _) => "wire --check".into(),
            (_, Measure::Time) => "run".into(),
            (_, m) => format!("run --measure {}", m.as_str()),
        }
    }
}

impl std::str::FromStr for Measure {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        MEASURES
            .iter()
            .find(|r| r.name == s)
            .map(|r| r.measure)
            .ok_or_else(|| format!("unknown measure '{s}' ({})", names().join(", ")))
    }
}

/// Every measure's name, in the table's order.
pub fn names() -> Vec<&'static str> {
    MEASURES.iter().map(|r| r.name).collect()
}

/// `--measure`'s help: one line per measure, with the kinds it takes and whether each impl
/// runs it only with itself.
pub fn help() -> String {
    let mut s = String::from("What to measure:");
    for r in MEASURES {
        let kinds: Vec<&str> = r.taken_kinds().iter().map(|k| k.as_str()).collect();
        s.push_str(&format!(
            "\n  {:<19}{} [{}{}{}]",
            r.name,
            r.help,
            kinds.join(", "),
            if r.self_only.is_some() {
                "; each impl with itself"
            } else {
                ""
            },
            match r.tool {
                Tool::None => "",
                Tool::Valgrind => "; valgrind",
                Tool::Perf => "; perf",
            }
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Metric::*;
    use crate::metric::METRICS;

    #[test]
    fn every_measure_has_one_row_and_every_source_one_measure() {
        let all = [
            Measure::Time,
            Measure::Instructions,
            Measure::Wire,
            Measure::Counters,
            Measure::Ceiling,
            Measure::Profile,
            Measure::Setup,
            Measure::Floor,
            Measure::Contention,
            Measure::Teardown,
            Measure::Quic,
            Measure::QuicBulk,
            Measure::QuicMemory,
            Measure::QuicInstructions,
        ];
        for m in all {
            assert_eq!(
                MEASURES.iter().filter(|r| r.measure == m).count(),
                1,
                "{m:?}"
            );
            assert_eq!(m.as_str().parse::<Measure>(), Ok(m));
        }
        assert_eq!(MEASURES.len(), all.len());
        for row in METRICS {
            let owners = MEASURES
                .iter()
                .filter(|r| r.sources.contains(&row.source))
                .count();
            assert_eq!(owners, 1, "{:?}'s source {:?}", row.metric, row.source);
        }
        let err = "speed".parse::<Measure>().unwrap_err();
        assert!(
            err.contains("'speed'") && err.contains("contention"),
            "{err}"
        );
    }

    #[test]
    fn a_runs_measure_is_read_from_the_figures_only_it_gives() {
        assert_eq!(Measure::of_run([SendMbPerS, RecvMbPerS]), Measure::Time);
        assert_eq!(Measure::of_run([]), Measure::Time);
        assert_eq!(
            Measure::of_run([SendMbPerS, SealMbPerS, RecvShareOfOpen]),
            Measure::Ceiling
        );
        assert_eq!(Measure::of_run([PathCpuNs, ClientFlights]), Measure::Wire);
        assert_eq!(
            Measure::of_run([ClientCpuNs, ClientInstructions]),
            Measure::Instructions
        );
        assert_eq!(
            Measure::of_run([SendColdBlocksPerMib, SendPageFaultsPerMib]),
            Measure::Counters
        );
        assert_eq!(
            Measure::of_run([SendCipherShare, RecvKernelShare]),
            Measure::Profile
        );
    }

    #[test]
    fn refusals_name_the_kind_the_pair_and_the_resumption() {
        let p = |id: &str| id.parse::<Scenario>().unwrap();
        let full = p("handshake-tls13-ecdsa-p256-x25519-full");
        let ticket = p("handshake-tls13-ecdsa-p256-x25519-ticket");
        let bulk = p("bulk-tls13-aes-128-gcm-16k");
        let memory = p("memory-tls13-ecdsa-p256-n100");
        let floor = Measure::Floor.row();
        assert_eq!(floor.refusal(&full, true), None);
        assert_eq!(floor.refusal(&full, false), floor.self_only);
        assert_eq!(floor.refusal(&bulk, true), Some(FLOOR_KINDS));
        let contention = Measure::Contention.row();
        assert_eq!(contention.refusal(&ticket, true), contention.full_only);
        assert_eq!(contention.refusal(&full, true), None);
        let instructions = Measure::Instructions.row();
        assert_eq!(
            instructions.refusal(&memory, false),
            Some(instructions.other_kinds)
        );
        assert_eq!(instructions.refusal(&bulk, false), None);
        assert_eq!(Measure::Time.row().refusal(&memory, false), None);
        assert_eq!(Measure::Profile.row().default_sample_ms(&full), 900);
        assert_eq!(Measure::Profile.row().default_sample_ms(&bulk), 200);
        let help = help();
        for r in MEASURES {
            assert!(help.contains(r.name) && help.contains(r.help), "{help}");
        }
    }
}
