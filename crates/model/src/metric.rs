//! The metric table: every figure a result record can carry, one row each, with its name in
//! records, its unit, which direction is better, whose figure it is, what measures it, how
//! people are shown it and the words a sentence about it uses. Records, the report, the
//! store and the Go driver (through `cargo xtask metrics`, which writes
//! `go/internal/metrics/names.go` from this table) all read it; nothing else names a metric.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    ClientCpuNs,
    ServerCpuNs,
    HandshakesPerS,
    SendMbPerS,
    RecvMbPerS,
    NsPerOp,
    BytesPerOp,
    AllocsPerOp,
    CBytesPerOp,
    CAllocsPerOp,
    TotalBytesPerOp,
    TotalAllocsPerOp,
    ClientInstructions,
    ServerInstructions,
    ClientCryptoInstructions,
    ClientProviderInstructions,
    ClientParsingInstructions,
    ClientAllocInstructions,
    ClientLockInstructions,
    ClientCopyInstructions,
    ClientUnnamedInstructions,
    ClientOtherInstructions,
    ServerCryptoInstructions,
    ServerProviderInstructions,
    ServerParsingInstructions,
    ServerAllocInstructions,
    ServerLockInstructions,
    ServerCopyInstructions,
    ServerUnnamedInstructions,
    ServerOtherInstructions,
    ClientLockCalls,
    ServerLockCalls,
    ClientAtomics,
    ServerAtomics,
    ClientProviderLockCalls,
    ServerProviderLockCalls,
    ClientProviderAtomics,
    ServerProviderAtomics,
    SendInstrPerMib,
    RecvInstrPerMib,
    ClientHeapBytes,
    ServerHeapBytes,
    ClientHeapBytesAfterIo,
    ServerHeapBytesAfterIo,
    ThroughputPerS,
    ServerCapacityPerS,
    ClientWireBytes,
    ServerWireBytes,
    ClientFlights,
    ServerFlights,
    ClientHelloBytes,
    LargestFlightBytes,
    ClientReadyRtts,
    ServerReadyRtts,
    PathCpuNs,
    TtfbNs,
    ClientPageFaults,
    ServerPageFaults,
    ClientContextSwitches,
    ServerContextSwitches,
    SendPageFaultsPerMib,
    RecvPageFaultsPerMib,
    SendContextSwitchesPerMib,
    RecvContextSwitchesPerMib,
    SendColdBlocksPerMib,
    RecvColdBlocksPerMib,
    SealMbPerS,
    OpenMbPerS,
    CopyMbPerS,
    AliasedCopyMbPerS,
    SendShareOfSeal,
    RecvShareOfOpen,
    SendCipherShare,
    SendCopyShare,
    SendAllocShare,
    SendKernelShare,
    SendOtherShare,
    RecvCipherShare,
    RecvCopyShare,
    RecvAllocShare,
    RecvKernelShare,
    RecvOtherShare,
    ClientCryptoTimeShare,
    ClientProviderTimeShare,
    ClientParsingTimeShare,
    ClientAllocTimeShare,
    ClientLockTimeShare,
    ClientCopyTimeShare,
    ClientUnnamedTimeShare,
    ClientOtherTimeShare,
    ClientKernelTimeShare,
    ServerCryptoTimeShare,
    ServerProviderTimeShare,
    ServerParsingTimeShare,
    ServerAllocTimeShare,
    ServerLockTimeShare,
    ServerCopyTimeShare,
    ServerUnnamedTimeShare,
    ServerOtherTimeShare,
    ServerKernelTimeShare,
    ClientCryptoFloorShare,
    ClientProviderFloorShare,
    ClientParsingFloorShare,
    ClientAllocFloorShare,
    ClientLockFloorShare,
    ClientCopyFloorShare,
    ClientUnnamedFloorShare,
    ClientOtherFloorShare,
    ClientKernelFloorShare,
    ServerCryptoFloorShare,
    ServerProviderFloorShare,
    ServerParsingFloorShare,
    ServerAllocFloorShare,
    ServerLockFloorShare,
    ServerCopyFloorShare,
    ServerUnnamedFloorShare,
    ServerOtherFloorShare,
    ServerKernelFloorShare,
    ClientContextNs,
    ServerContextNs,
    ClientConnectionNs,
    ServerConnectionNs,
    ClientTeardownNs,
    ServerTeardownNs,
    ClientFloorNs,
    ClientFloorKexNs,
    ClientFloorSigNs,
    ClientFloorKdfNs,
    ServerFloorNs,
    ServerFloorKexNs,
    ServerFloorSigNs,
    ServerFloorKdfNs,
    ClientFloorShare,
    ServerFloorShare,
    Contention1PerS,
    Contention2PerS,
    Contention8PerS,
    Contention2Scaling,
    Contention8Scaling,
    Contention2Waits,
    Contention8Waits,
    ClientQuicNs,
    ServerQuicNs,
    ClientQuicOverTcp,
    ServerQuicOverTcp,
    ClientQuicDatagrams,
    ServerQuicDatagrams,
    ClientQuicBytes,
    ServerQuicBytes,
    ClientQuicFirstDatagram,
    ClientQuicReadyRtts,
    ServerQuicHeldBytes,
    ServerQuicFirstFlightRatio,
    QuicModelTtfb20Ms,
    TcpModelTtfb20Ms,
    QuicModelTtfb100Ms,
    TcpModelTtfb100Ms,
    ClientQuicSend1mMbPerS,
    ServerQuicRecv1mMbPerS,
    ServerQuicSend1mMbPerS,
    ClientQuicRecv1mMbPerS,
    ClientQuicSend16mMbPerS,
    ServerQuicRecv16mMbPerS,
    ServerQuicSend16mMbPerS,
    ClientQuicRecv16mMbPerS,
    ClientTcpSend16mMbPerS,
    ServerTcpRecv16mMbPerS,
    ClientQuicSendCostOverTcp,
    ServerQuicRecvCostOverTcp,
    ClientQuicSend16mDatagramBytes,
    QuicDownloadNs,
    CpuNsPerOp,
    FirstByteRoundTrips,
    DelayedTtfb20Ms,
    DelayedTtfb100Ms,
    ClientQuicHeapBytes,
    ServerQuicHeapBytes,
    ClientQuicHeapBytesAfterIo,
    ServerQuicHeapBytesAfterIo,
    ClientTcpHeapBytes,
    ServerTcpHeapBytes,
    ClientQuicInstructions,
    ServerQuicInstructions,
    ClientTcpInstructions,
    ServerTcpInstructions,
    ClientQuicCryptoInstructions,
    ClientQuicProviderInstructions,
    ClientQuicParsingInstructions,
    ClientQuicAllocInstructions,
    ClientQuicLockInstructions,
    ClientQuicCopyInstructions,
    ClientQuicUnnamedInstructions,
    ClientQuicOtherInstructions,
    ServerQuicCryptoInstructions,
    ServerQuicProviderInstructions,
    ServerQuicParsingInstructions,
    ServerQuicAllocInstructions,
    ServerQuicLockInstructions,
    ServerQuicCopyInstructions,
    ServerQuicUnnamedInstructions,
    ServerQuicOtherInstructions,
    ClientTcpCryptoInstructions,
    ClientTcpProviderInstructions,
    ClientTcpParsingInstructions,
    ClientTcpAllocInstructions,
    ClientTcpLockInstructions,
    ClientTcpCopyInstructions,
    ClientTcpUnnamedInstructions,
    ClientTcpOtherInstructions,
    ServerTcpCryptoInstructions,
    ServerTcpProviderInstructions,
    ServerTcpParsingInstructions,
    ServerTcpAllocInstructions,
    ServerTcpLockInstructions,
    ServerTcpCopyInstructions,
    ServerTcpUnnamedInstructions,
    ServerTcpOtherInstructions,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// Whose figure it is, and so which side is held at the baseline to compare: a sending rate
/// is the client's (it sends in bulk scenarios), a receiving rate the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureSide {
    Client,
    Server,
    Pair,
}

impl FigureSide {
    /// " as a client", " as a server", or nothing for a pair's figure.
    pub fn as_phrase(self) -> &'static str {
        match self {
            FigureSide::Client => " as a client",
            FigureSide::Server => " as a server",
            FigureSide::Pair => "",
        }
    }
}

/// What produces the figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A timed run (`tlsmatrix run`): CPU time, rates and heap.
    Time,
    /// The Go transport's paired benchmarks (`make bench-go`).
    GoBench,
    /// Callgrind (`--measure instructions`).
    Instructions,
    /// The bytes on the wire of a traced handshake (`--measure wire`).
    Wire,
    /// The CPU on a traced handshake's path to the first response byte (`--measure wire`).
    WirePath,
    /// Real TCP through the delay proxy (`tlsmatrix wire --check`).
    Proxy,
    /// OS counters and the allocator's cold blocks (`--measure counters`).
    Counters,
    /// The library's own AEAD and memcpy without TLS (`--measure ceiling`).
    Ceiling,
    /// Shares of a side's perf samples (`--measure profile`).
    Profile,
    /// Contexts and connection objects made without a handshake (`--measure setup`).
    Setup,
    /// The library's own crypto for a handshake's operations (`--measure floor`).
    Floor,
    /// Threads sharing one server context (`--measure contention`).
    Contention,
    /// Connections closed and freed after a handshake (`--measure teardown`).
    Teardown,
    /// QUIC handshakes in turns with the same library's TCP handshakes (`--measure quic`).
    Quic,
    /// QUIC stream data in turns with the same library's TLS bulk over TCP (`--measure
    /// quic-bulk`).
    QuicBulk,
    /// Heap per live QUIC connection beside the same library's TCP connections (`--measure
    /// quic-memory`).
    QuicMemory,
    /// Callgrind's counts of QUIC handshakes beside the same library's TCP handshakes
    /// (`--measure quic-instructions`).
    QuicInstructions,
}

/// How a recorded sample becomes the figure people see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Same,
    /// Nanoseconds per handshake shown as handshakes per second; the better direction flips.
    PerSecond,
    Kib,
    Micros,
    Millis,
    Percent,
}

impl Scale {
    pub fn apply(self, v: f64) -> f64 {
        match self {
            Scale::Same => v,
            Scale::PerSecond => 1e9 / v,
            Scale::Kib => v / 1024.0,
            Scale::Micros => v / 1e3,
            Scale::Millis => v / 1e6,
            Scale::Percent => v * 100.0,
        }
    }
}

/// The words of a sentence comparing two impls on a figure: "X {does} 1.4x {better} than Y",
/// or "{same}". `{kind}` in `does` stands for the scenarios' kind of handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wording {
    pub does: &'static str,
    pub better: &'static str,
    pub worse: &'static str,
    pub same: &'static str,
}

const FASTER: Wording = Wording {
    does: "runs",
    better: "faster",
    worse: "slower",
    same: "as fast",
};

#[derive(Debug, Clone, Copy)]
pub struct MetricRow {
    pub metric: Metric,
    /// As records, the store and the Go driver spell it.
    pub name: &'static str,
    /// The unit of a recorded sample.
    pub unit: &'static str,
    pub better: Better,
    pub side: FigureSide,
    pub source: Source,
    /// Depends on the code and the work alone, not on how fast the machine is, so it
    /// compares across CPU models: instruction counts, wire bytes, heap bytes.
    pub machine_independent: bool,
    /// The title, unit and scale people see in tables and charts.
    pub title: &'static str,
    pub shown_unit: &'static str,
    pub scale: Scale,
    pub wording: Wording,
    /// What the figure is, in one sentence (`tlsmatrix list --metrics`).
    pub about: &'static str,
    /// The whole this figure is a part of (Go's heap and libssl's allocations are the two
    /// parts of a Go benchmark's total): a part is shown beside its whole but has no factor
    /// of its own, since a factor on a part can leave out most of what it names.
    pub part_of: Option<Metric>,
}

const fn row(
    metric: Metric,
    name: &'static str,
    unit: &'static str,
    better: Better,
    side: FigureSide,
    source: Source,
    about: &'static str,
) -> MetricRow {
    MetricRow {
        metric,
        name,
        unit,
        better,
        side,
        source,
        machine_independent: matches!(
            source,
            Source::Instructions | Source::QuicInstructions | Source::Wire
        ),
        title: name,
        shown_unit: unit,
        scale: Scale::Same,
        wording: FASTER,
        about,
        part_of: None,
    }
}

impl MetricRow {
    const fn shown(mut self, title: &'static str, unit: &'static str, scale: Scale) -> Self {
        self.title = title;
        self.shown_unit = unit;
        self.scale = scale;
        self
    }

    const fn says(
        mut self,
        does: &'static str,
        better: &'static str,
        worse: &'static str,
        same: &'static str,
    ) -> Self {
        self.wording = Wording {
            does,
            better,
            worse,
            same,
        };
        self
    }

    const fn part_of(mut self, whole: Metric) -> Self {
        self.part_of = Some(whole);
        self
    }

    const fn machine_independent(mut self) -> Self {
        self.machine_independent = true;
        self
    }
}

use Better::{Higher, Lower};
use FigureSide::{Client, Pair, Server};
use Scale::{Kib, Micros, Millis, PerSecond, Percent};

const HEAP: Wording = Wording {
    does: "keeps a connection after its handshake in",
    better: "less heap",
    worse: "more heap",
    same: "as much heap",
};
const HEAP_AFTER_IO: Wording = Wording {
    does: "keeps a connection that has moved data in",
    ..HEAP
};
const HANDSHAKE_INSTRUCTIONS: Wording = Wording {
    does: "executes {kind} handshakes with",
    better: "fewer instructions",
    worse: "more instructions",
    same: "as many instructions",
};
const BULK_INSTRUCTIONS: Wording = Wording {
    does: "moves bulk data with",
    better: "fewer instructions per MiB",
    worse: "more instructions per MiB",
    same: "as many instructions per MiB",
};

impl MetricRow {
    const fn words(mut self, w: Wording) -> Self {
        self.wording = w;
        self
    }
}

/// The metric table's rows with the class split's rows in their places: the rows before
/// the instruction split, then a row per class and side of instructions, the rows between,
/// a row per class and side of time shares, and the rest (see `crate::class`).
macro_rules! metric_rows {
    (classes: [$(($class:ident, $name:literal, $short:literal, $key:literal,
        [$($ci:ident, $si:ident, $qci:ident, $qsi:ident, $tci:ident, $tsi:ident,
            $instr:literal)?],
        [$ct:ident, $st:ident, $better:ident, $shown:literal, $time:literal],
        [$cf:ident, $sf:ident])),* $(,)?]
     [$($before:expr),* $(,)?] [$($between:expr),* $(,)?] [$($after:expr),* $(,)?]) => {
        [
            $($before,)*
            $($(instructions_row!(Client, "client", $ci, ClientInstructions, $key, $instr),)?)*
            $($(instructions_row!(Server, "server", $si, ServerInstructions, $key, $instr),)?)*
            $($between,)*
            $(time_share_row!(Client, "client", $ct, $better, $key, $shown, $time),)*
            $(time_share_row!(Server, "server", $st, $better, $key, $shown, $time),)*
            $(floor_share_row!(Client, "client", $cf, $key, $shown, $time),)*
            $(floor_share_row!(Server, "server", $sf, $key, $shown, $time),)*
            $($after,)*
            $($(carried_row!(Client, "client", $qci, ClientQuicInstructions, "quic", "QUIC", $key, $instr),)?)*
            $($(carried_row!(Server, "server", $qsi, ServerQuicInstructions, "quic", "QUIC", $key, $instr),)?)*
            $($(carried_row!(Client, "client", $tci, ClientTcpInstructions, "tcp", "TCP", $key, $instr),)?)*
            $($(carried_row!(Server, "server", $tsi, ServerTcpInstructions, "tcp", "TCP", $key, $instr),)?)*
        ]
    };
}

/// A side's instructions in one class per QUIC handshake, or per TCP handshake of the same
/// library counted beside it (`--measure quic-instructions`).
macro_rules! carried_row {
    ($side:ident, $who:literal, $metric:ident, $whole:ident, $carrier:literal, $named:literal,
        $key:literal, $about:literal) => {
        row(
            Metric::$metric,
            concat!($who, "_", $carrier, "_", $key, "_instructions"),
            "instructions",
            Lower,
            $side,
            Source::QuicInstructions,
            concat!(
                "instructions the ",
                $who,
                " executes per ",
                $named,
                " handshake ",
                $about
            ),
        )
        .shown(
            concat!($who, " ", $named, " ", $key, " instr/hs"),
            "instructions",
            Scale::Same,
        )
        .part_of(Metric::$whole)
    };
}

/// A side's instructions per handshake in one class.
macro_rules! instructions_row {
    ($side:ident, $who:literal, $metric:ident, $whole:ident, $key:literal, $about:literal) => {
        row(
            Metric::$metric,
            concat!($who, "_", $key, "_instructions"),
            "instructions",
            Lower,
            $side,
            Source::Instructions,
            concat!(
                "instructions the ",
                $who,
                " executes per handshake ",
                $about
            ),
        )
        .shown(
            concat!($who, " ", $key, " instr/hs"),
            "instructions",
            Scale::Same,
        )
        .part_of(Metric::$whole)
    };
}

/// A side's share of its handshake's perf samples in one class.
macro_rules! time_share_row {
    ($side:ident, $who:literal, $metric:ident, $better:ident, $key:literal, $shown:literal,
        $about:literal) => {
        row(
            Metric::$metric,
            concat!($who, "_", $key, "_time_share"),
            "fraction",
            $better,
            $side,
            Source::Profile,
            concat!(
                "share of the ",
                $who,
                "'s perf samples during its handshake calls ",
                $about,
                ", classed by function name as the instruction split classes them"
            ),
        )
        .shown(concat!($who, " % ", $shown), "%", Percent)
    };
}

/// A side's share of its crypto floor's perf samples in one class.
macro_rules! floor_share_row {
    ($side:ident, $who:literal, $metric:ident, $key:literal, $shown:literal, $about:literal) => {
        row(
            Metric::$metric,
            concat!($who, "_", $key, "_floor_share"),
            "fraction",
            Lower,
            $side,
            Source::Profile,
            concat!(
                "share of the perf samples of the ",
                $who,
                "'s crypto floor (the operations the floor run times, through the library's own API, profiled with the handshakes) ",
                $about,
                ", classed by function name as the instruction split classes them"
            ),
        )
        .shown(concat!($who, " floor % ", $shown), "%", Percent)
    };
}

/// Every metric, in the order reports list them.
#[rustfmt::skip]
pub const METRICS: &[MetricRow] = &crate::class_list::with_classes!(metric_rows {
    [
    row(Metric::ClientCpuNs, "client_cpu_ns", "ns", Lower, Client, Source::Time,
        "CPU time of the client's calls per handshake")
        .shown("client hs/s", "handshakes/s", PerSecond)
        .says("completes {kind} handshakes", "faster", "slower", "as fast"),
    row(Metric::ServerCpuNs, "server_cpu_ns", "ns", Lower, Server, Source::Time,
        "CPU time of the server's calls per handshake")
        .shown("server hs/s", "handshakes/s", PerSecond)
        .says("completes {kind} handshakes", "faster", "slower", "as fast"),
    row(Metric::HandshakesPerS, "handshakes_per_s", "1/s", Higher, Pair, Source::Time,
        "handshakes per second of both sides' CPU time together")
        .shown("pair hs/s", "handshakes/s", Scale::Same),
    row(Metric::SendMbPerS, "send_mb_per_s", "MB/s", Higher, Client, Source::Time,
        "application data sent per second of the sender's CPU time")
        .shown("send MB/s", "MB/s", Scale::Same)
        .says("sends bulk data", "faster", "slower", "as fast"),
    row(Metric::RecvMbPerS, "recv_mb_per_s", "MB/s", Higher, Server, Source::Time,
        "application data received per second of the receiver's CPU time")
        .shown("recv MB/s", "MB/s", Scale::Same)
        .says("receives bulk data", "faster", "slower", "as fast"),
    row(Metric::NsPerOp, "ns_per_op", "ns", Lower, Pair, Source::GoBench,
        "Go benchmark: wall time per operation")
        .shown("ns/op", "ns", Scale::Same),
    row(Metric::BytesPerOp, "bytes_per_op", "B", Lower, Pair, Source::GoBench,
        "Go benchmark: Go-heap bytes allocated per operation, a part of total_bytes_per_op (C allocations behind cgo are not in it)")
        .shown("B/op (Go heap)", "bytes", Scale::Same)
        .part_of(Metric::TotalBytesPerOp)
        .machine_independent(),
    row(Metric::AllocsPerOp, "allocs_per_op", "allocs", Lower, Pair, Source::GoBench,
        "Go benchmark: Go-heap allocations per operation, a part of total_allocs_per_op (C allocations behind cgo are not in it)")
        .shown("allocs/op (Go heap)", "allocs", Scale::Same)
        .part_of(Metric::TotalAllocsPerOp)
        .machine_independent(),
    row(Metric::CBytesPerOp, "c_bytes_per_op", "B", Lower, Pair, Source::GoBench,
        "Go benchmark: bytes libssl allocates per operation, counted through its allocator hooks, a part of total_bytes_per_op (0 where no libssl is used)")
        .shown("B/op (libssl)", "bytes", Scale::Same)
        .part_of(Metric::TotalBytesPerOp)
        .machine_independent(),
    row(Metric::CAllocsPerOp, "c_allocs_per_op", "allocs", Lower, Pair, Source::GoBench,
        "Go benchmark: allocations libssl makes per operation, counted through its allocator hooks, a part of total_allocs_per_op (0 where no libssl is used)")
        .shown("allocs/op (libssl)", "allocs", Scale::Same)
        .part_of(Metric::TotalAllocsPerOp)
        .machine_independent(),
    row(Metric::TotalBytesPerOp, "total_bytes_per_op", "B", Lower, Pair, Source::GoBench,
        "Go benchmark: bytes allocated per operation, Go's heap and libssl's together (the whole of what a handshake allocates)")
        .shown("B/op (Go heap + libssl)", "bytes", Scale::Same)
        .says("allocates", "less", "more", "as much")
        .machine_independent(),
    row(Metric::TotalAllocsPerOp, "total_allocs_per_op", "allocs", Lower, Pair, Source::GoBench,
        "Go benchmark: allocations per operation, Go's heap and libssl's together")
        .shown("allocs/op (Go heap + libssl)", "allocs", Scale::Same)
        .says("allocates", "less", "more", "as much")
        .machine_independent(),
    row(Metric::ClientInstructions, "client_instructions", "instructions", Lower, Client, Source::Instructions,
        "instructions the client executes per handshake")
        .shown("client instr/hs", "instructions", Scale::Same)
        .words(HANDSHAKE_INSTRUCTIONS),
    row(Metric::ServerInstructions, "server_instructions", "instructions", Lower, Server, Source::Instructions,
        "instructions the server executes per handshake")
        .shown("server instr/hs", "instructions", Scale::Same)
        .words(HANDSHAKE_INSTRUCTIONS),
    ]
    [
    row(Metric::ClientLockCalls, "client_lock_calls", "calls", Lower, Client, Source::Instructions,
        "lock acquisitions (pthread mutex and rwlock, Go's sync.Mutex) the client makes per handshake, counted by callgrind")
        .shown("client locks/hs", "calls", Scale::Same)
        .machine_independent(),
    row(Metric::ServerLockCalls, "server_lock_calls", "calls", Lower, Server, Source::Instructions,
        "lock acquisitions (pthread mutex and rwlock, Go's sync.Mutex) the server makes per handshake, counted by callgrind")
        .shown("server locks/hs", "calls", Scale::Same)
        .machine_independent(),
    row(Metric::ClientAtomics, "client_atomics", "instructions", Lower, Client, Source::Instructions,
        "atomic read-modify-writes (LOCK-prefixed instructions: callgrind's global bus events) the client executes per handshake, in locks, reference counts and once-guards alike")
        .shown("client atomics/hs", "instructions", Scale::Same)
        .machine_independent(),
    row(Metric::ServerAtomics, "server_atomics", "instructions", Lower, Server, Source::Instructions,
        "atomic read-modify-writes (LOCK-prefixed instructions: callgrind's global bus events) the server executes per handshake, in locks, reference counts and once-guards alike")
        .shown("server atomics/hs", "instructions", Scale::Same)
        .machine_independent(),
    row(Metric::ClientProviderLockCalls, "client_provider_lock_calls", "calls", Lower, Client, Source::Instructions,
        "lock acquisitions the client makes per handshake on behalf of OpenSSL 3's provider layer: by its own functions and, in proportion to the calls, by the code they reach, from callgrind's call graph")
        .shown("client provider locks/hs", "calls", Scale::Same)
        .machine_independent(),
    row(Metric::ServerProviderLockCalls, "server_provider_lock_calls", "calls", Lower, Server, Source::Instructions,
        "lock acquisitions the server makes per handshake on behalf of OpenSSL 3's provider layer: by its own functions and, in proportion to the calls, by the code they reach, from callgrind's call graph")
        .shown("server provider locks/hs", "calls", Scale::Same)
        .machine_independent(),
    row(Metric::ClientProviderAtomics, "client_provider_atomics", "instructions", Lower, Client, Source::Instructions,
        "atomic read-modify-writes among the client's instructions charged to OpenSSL 3's provider layer, per handshake")
        .shown("client provider atomics/hs", "instructions", Scale::Same)
        .machine_independent(),
    row(Metric::ServerProviderAtomics, "server_provider_atomics", "instructions", Lower, Server, Source::Instructions,
        "atomic read-modify-writes among the server's instructions charged to OpenSSL 3's provider layer, per handshake")
        .shown("server provider atomics/hs", "instructions", Scale::Same)
        .machine_independent(),
    row(Metric::SendInstrPerMib, "send_instructions_per_mib", "instructions/MiB", Lower, Client, Source::Instructions,
        "instructions the sender executes per MiB of application data")
        .shown("send instr/MiB", "instructions/MiB", Scale::Same)
        .words(BULK_INSTRUCTIONS),
    row(Metric::RecvInstrPerMib, "recv_instructions_per_mib", "instructions/MiB", Lower, Server, Source::Instructions,
        "instructions the receiver executes per MiB of application data")
        .shown("recv instr/MiB", "instructions/MiB", Scale::Same)
        .words(BULK_INSTRUCTIONS),
    row(Metric::ClientHeapBytes, "client_heap_bytes", "B", Lower, Client, Source::Time,
        "heap the client keeps per connection after the handshake")
        .shown("client KiB/conn", "KiB", Kib)
        .words(HEAP)
        .machine_independent(),
    row(Metric::ServerHeapBytes, "server_heap_bytes", "B", Lower, Server, Source::Time,
        "heap the server keeps per connection after the handshake")
        .shown("server KiB/conn", "KiB", Kib)
        .words(HEAP)
        .machine_independent(),
    row(Metric::ClientHeapBytesAfterIo, "client_heap_bytes_after_io", "B", Lower, Client, Source::Time,
        "heap the client keeps per connection after 1 KiB each way")
        .shown("client KiB after I/O", "KiB", Kib)
        .words(HEAP_AFTER_IO)
        .machine_independent(),
    row(Metric::ServerHeapBytesAfterIo, "server_heap_bytes_after_io", "B", Lower, Server, Source::Time,
        "heap the server keeps per connection after 1 KiB each way")
        .shown("server KiB after I/O", "KiB", Kib)
        .words(HEAP_AFTER_IO)
        .machine_independent(),
    row(Metric::ThroughputPerS, "throughput_handshakes_per_s", "1/s", Higher, Pair, Source::Time,
        "full handshakes per second of wall time, all threads together, both sides in-process")
        .shown("hs/s all threads", "handshakes/s", Scale::Same)
        .says("completes full handshakes across its threads", "faster", "slower", "as fast"),
    row(Metric::ServerCapacityPerS, "server_capacity_handshakes_per_s", "1/s", Higher, Server, Source::Time,
        "what the server side alone would sustain: per thread, handshakes over its server calls' time, summed")
        .shown("server-only hs/s", "handshakes/s", Scale::Same)
        .says("serves full handshakes across its threads", "faster", "slower", "as fast"),
    row(Metric::ClientWireBytes, "client_wire_bytes", "B", Lower, Pair, Source::Wire,
        "handshake bytes the client sent (records until both sides had finished; the request a TLS 1.3 client sends with its Finished is not counted)")
        .shown("client bytes", "bytes", Scale::Same),
    row(Metric::ServerWireBytes, "server_wire_bytes", "B", Lower, Pair, Source::Wire,
        "handshake bytes the server sent (records until both sides had finished, tickets sent while finishing included)")
        .shown("server bytes", "bytes", Scale::Same),
    row(Metric::ClientFlights, "client_flights", "flights", Lower, Pair, Source::Wire,
        "flights the client sent during the handshake")
        .shown("client flights", "flights", Scale::Same),
    row(Metric::ServerFlights, "server_flights", "flights", Lower, Pair, Source::Wire,
        "flights the server sent during the handshake")
        .shown("server flights", "flights", Scale::Same),
    row(Metric::ClientHelloBytes, "client_hello_bytes", "B", Lower, Pair, Source::Wire,
        "bytes of the client's first flight")
        .shown("ClientHello bytes", "bytes", Scale::Same),
    row(Metric::LargestFlightBytes, "largest_flight_bytes", "B", Lower, Pair, Source::Wire,
        "bytes of the handshake's largest flight")
        .shown("largest flight", "bytes", Scale::Same),
    row(Metric::ClientReadyRtts, "client_ready_rtts", "RTT", Lower, Pair, Source::Wire,
        "round trips until the client may send application data")
        .shown("client ready (RTT)", "RTT", Scale::Same),
    row(Metric::ServerReadyRtts, "server_ready_rtts", "RTT", Lower, Pair, Source::Wire,
        "round trips until the server may send application data")
        .shown("server ready (RTT)", "RTT", Scale::Same),
    row(Metric::PathCpuNs, "path_cpu_ns", "ns", Lower, Pair, Source::WirePath,
        "CPU both sides spend on the path to the first response byte (the record carries the flights)")
        .shown("path CPU µs", "µs", Micros),
    row(Metric::TtfbNs, "ttfb_ns", "ns", Lower, Pair, Source::Proxy,
        "time from connect to the response's first bytes over TCP through the delay proxy")
        .shown("first byte ms", "ms", Millis),
    row(Metric::ClientPageFaults, "client_page_faults", "faults", Lower, Client, Source::Counters,
        "page faults during the client's calls per handshake")
        .shown("client faults/hs", "faults", Scale::Same),
    row(Metric::ServerPageFaults, "server_page_faults", "faults", Lower, Server, Source::Counters,
        "page faults during the server's calls per handshake")
        .shown("server faults/hs", "faults", Scale::Same),
    row(Metric::ClientContextSwitches, "client_context_switches", "switches", Lower, Client, Source::Counters,
        "context switches during the client's calls per handshake")
        .shown("client switches/hs", "switches", Scale::Same),
    row(Metric::ServerContextSwitches, "server_context_switches", "switches", Lower, Server, Source::Counters,
        "context switches during the server's calls per handshake")
        .shown("server switches/hs", "switches", Scale::Same),
    row(Metric::SendPageFaultsPerMib, "send_page_faults_per_mib", "faults/MiB", Lower, Client, Source::Counters,
        "page faults during the sender's calls per MiB")
        .shown("send faults/MiB", "faults/MiB", Scale::Same),
    row(Metric::RecvPageFaultsPerMib, "recv_page_faults_per_mib", "faults/MiB", Lower, Server, Source::Counters,
        "page faults during the receiver's calls per MiB")
        .shown("recv faults/MiB", "faults/MiB", Scale::Same),
    row(Metric::SendContextSwitchesPerMib, "send_context_switches_per_mib", "switches/MiB", Lower, Client, Source::Counters,
        "context switches during the sender's calls per MiB")
        .shown("send switches/MiB", "switches/MiB", Scale::Same),
    row(Metric::RecvContextSwitchesPerMib, "recv_context_switches_per_mib", "switches/MiB", Lower, Server, Source::Counters,
        "context switches during the receiver's calls per MiB")
        .shown("recv switches/MiB", "switches/MiB", Scale::Same),
    row(Metric::SendColdBlocksPerMib, "send_cold_blocks_per_mib", "blocks/MiB", Lower, Client, Source::Counters,
        "large blocks (4 KiB and up) per MiB the allocator gave the sender other than one it had just freed")
        .shown("send cold blocks/MiB", "blocks/MiB", Scale::Same),
    row(Metric::RecvColdBlocksPerMib, "recv_cold_blocks_per_mib", "blocks/MiB", Lower, Server, Source::Counters,
        "large blocks (4 KiB and up) per MiB the allocator gave the receiver other than one it had just freed")
        .shown("recv cold blocks/MiB", "blocks/MiB", Scale::Same),
    row(Metric::SealMbPerS, "seal_mb_per_s", "MB/s", Higher, Pair, Source::Ceiling,
        "the library's own AEAD sealing the scenario's records without TLS: the most its send rate could reach")
        .shown("AEAD seal MB/s", "MB/s", Scale::Same),
    row(Metric::OpenMbPerS, "open_mb_per_s", "MB/s", Higher, Pair, Source::Ceiling,
        "the library's own AEAD opening the scenario's records without TLS")
        .shown("AEAD open MB/s", "MB/s", Scale::Same),
    row(Metric::CopyMbPerS, "copy_mb_per_s", "MB/s", Higher, Pair, Source::Ceiling,
        "memcpy of one such record to a destination half a page from the source")
        .shown("memcpy MB/s", "MB/s", Scale::Same),
    row(Metric::AliasedCopyMbPerS, "aliased_copy_mb_per_s", "MB/s", Higher, Pair, Source::Ceiling,
        "memcpy of one such record to 5 bytes past the source modulo 4 KiB (4 KiB aliasing)")
        .shown("memcpy 4K-aliased MB/s", "MB/s", Scale::Same),
    row(Metric::SendShareOfSeal, "send_share_of_seal", "fraction", Higher, Client, Source::Ceiling,
        "the send rate over the library's own seal rate, taken in turns")
        .shown("send % of own seal", "%", Percent),
    row(Metric::RecvShareOfOpen, "recv_share_of_open", "fraction", Higher, Server, Source::Ceiling,
        "the receive rate over the library's own open rate, taken in turns")
        .shown("recv % of own open", "%", Percent),
    row(Metric::SendCipherShare, "send_cipher_share", "fraction", Higher, Client, Source::Profile,
        "share of the sender's perf samples in the cipher")
        .shown("send % in cipher", "%", Percent),
    row(Metric::SendCopyShare, "send_copy_share", "fraction", Lower, Client, Source::Profile,
        "share of the sender's perf samples in copies")
        .shown("send % in copies", "%", Percent),
    row(Metric::SendAllocShare, "send_alloc_share", "fraction", Lower, Client, Source::Profile,
        "share of the sender's perf samples in the allocator")
        .shown("send % in malloc", "%", Percent),
    row(Metric::SendKernelShare, "send_kernel_share", "fraction", Lower, Client, Source::Profile,
        "share of the sender's perf samples in the kernel")
        .shown("send % in kernel", "%", Percent),
    row(Metric::SendOtherShare, "send_other_share", "fraction", Lower, Client, Source::Profile,
        "share of the sender's perf samples elsewhere")
        .shown("send % elsewhere", "%", Percent),
    row(Metric::RecvCipherShare, "recv_cipher_share", "fraction", Higher, Server, Source::Profile,
        "share of the receiver's perf samples in the cipher")
        .shown("recv % in cipher", "%", Percent),
    row(Metric::RecvCopyShare, "recv_copy_share", "fraction", Lower, Server, Source::Profile,
        "share of the receiver's perf samples in copies")
        .shown("recv % in copies", "%", Percent),
    row(Metric::RecvAllocShare, "recv_alloc_share", "fraction", Lower, Server, Source::Profile,
        "share of the receiver's perf samples in the allocator")
        .shown("recv % in malloc", "%", Percent),
    row(Metric::RecvKernelShare, "recv_kernel_share", "fraction", Lower, Server, Source::Profile,
        "share of the receiver's perf samples in the kernel")
        .shown("recv % in kernel", "%", Percent),
    row(Metric::RecvOtherShare, "recv_other_share", "fraction", Lower, Server, Source::Profile,
        "share of the receiver's perf samples elsewhere")
        .shown("recv % elsewhere", "%", Percent),
    ]
    [
    row(Metric::ClientContextNs, "client_context_ns", "ns", Lower, Client, Source::Setup,
        "making the client's context (its configuration: versions, suite, group, trusted CA) from the certificates in memory, and freeing it")
        .shown("client context µs", "µs", Scale::Micros),
    row(Metric::ServerContextNs, "server_context_ns", "ns", Lower, Server, Source::Setup,
        "making the server's context with its certificate chain and private key loaded from memory, and freeing it")
        .shown("server context µs", "µs", Scale::Micros),
    row(Metric::ClientConnectionNs, "client_connection_ns", "ns", Lower, Client, Source::Setup,
        "making a client connection object from its context and freeing it, without a handshake")
        .shown("client connection µs", "µs", Scale::Micros),
    row(Metric::ServerConnectionNs, "server_connection_ns", "ns", Lower, Server, Source::Setup,
        "making a server connection object from its context and freeing it, without a handshake")
        .shown("server connection µs", "µs", Scale::Micros),
    row(Metric::ClientTeardownNs, "client_teardown_ns", "ns", Lower, Client, Source::Teardown,
        "ending a client connection after a full handshake: its close_notify sent, the server's read, and the connection freed")
        .shown("client teardown µs", "µs", Scale::Micros),
    row(Metric::ServerTeardownNs, "server_teardown_ns", "ns", Lower, Server, Source::Teardown,
        "ending a server connection after a full handshake: the client's close_notify read, its own sent, and the connection freed")
        .shown("server teardown µs", "µs", Scale::Micros),
    row(Metric::ClientFloorNs, "client_floor_ns", "ns", Lower, Client, Source::Floor,
        "the client's crypto floor: the library's own primitives timed for exactly the operations a client must perform in the handshake")
        .shown("client floor µs", "µs", Scale::Micros),
    row(Metric::ClientFloorKexNs, "client_floor_kex_ns", "ns", Lower, Client, Source::Floor,
        "the client floor's key exchange: its key shares and its secret")
        .shown("client floor key exchange µs", "µs", Scale::Micros),
    row(Metric::ClientFloorSigNs, "client_floor_sig_ns", "ns", Lower, Client, Source::Floor,
        "the client floor's signatures: verifying the server's signature and each certificate of its chain, and signing with mutual TLS")
        .shown("client floor signatures µs", "µs", Scale::Micros),
    row(Metric::ClientFloorKdfNs, "client_floor_kdf_ns", "ns", Lower, Client, Source::Floor,
        "the client floor's key schedule: its HMACs (HKDF, Finished, binders, TLS 1.2's PRF)")
        .shown("client floor key schedule µs", "µs", Scale::Micros),
    row(Metric::ServerFloorNs, "server_floor_ns", "ns", Lower, Server, Source::Floor,
        "the server's crypto floor: the library's own primitives timed for exactly the operations a server must perform in the handshake")
        .shown("server floor µs", "µs", Scale::Micros),
    row(Metric::ServerFloorKexNs, "server_floor_kex_ns", "ns", Lower, Server, Source::Floor,
        "the server floor's key exchange: its key share and the secret (or encapsulation)")
        .shown("server floor key exchange µs", "µs", Scale::Micros),
    row(Metric::ServerFloorSigNs, "server_floor_sig_ns", "ns", Lower, Server, Source::Floor,
        "the server floor's signatures: its handshake signature, and verifying the client's with mutual TLS")
        .shown("server floor signatures µs", "µs", Scale::Micros),
    row(Metric::ServerFloorKdfNs, "server_floor_kdf_ns", "ns", Lower, Server, Source::Floor,
        "the server floor's key schedule: its HMACs (HKDF, Finished, binders, TLS 1.2's PRF)")
        .shown("server floor key schedule µs", "µs", Scale::Micros),
    row(Metric::ClientFloorShare, "client_floor_share", "fraction", Higher, Client, Source::Floor,
        "the client's crypto floor over its handshake time, taken in turns")
        .shown("client % floor", "%", Percent),
    row(Metric::ServerFloorShare, "server_floor_share", "fraction", Higher, Server, Source::Floor,
        "the server's crypto floor over its handshake time, taken in turns")
        .shown("server % floor", "%", Percent),
    row(Metric::Contention1PerS, "contention_1t_handshakes_per_s", "1/s", Higher, Pair, Source::Contention,
        "full handshakes per second of wall time on one thread against a server context that threads may share, each thread with a client context of its own")
        .shown("1 thread hs/s", "handshakes/s", Scale::Same),
    row(Metric::Contention2PerS, "contention_2t_handshakes_per_s", "1/s", Higher, Pair, Source::Contention,
        "full handshakes per second of wall time, two threads together, against one shared server context")
        .shown("2 threads hs/s", "handshakes/s", Scale::Same),
    row(Metric::Contention8PerS, "contention_8t_handshakes_per_s", "1/s", Higher, Pair, Source::Contention,
        "full handshakes per second of wall time, eight threads together, against one shared server context")
        .shown("8 threads hs/s", "handshakes/s", Scale::Same),
    row(Metric::Contention2Scaling, "contention_2t_scaling", "fraction", Higher, Pair, Source::Contention,
        "two threads' rate over one thread's times the cores two threads can use")
        .shown("2 threads scaling", "%", Percent),
    row(Metric::Contention8Scaling, "contention_8t_scaling", "fraction", Higher, Pair, Source::Contention,
        "eight threads' rate over one thread's times the cores eight threads can use")
        .shown("8 threads scaling", "%", Percent),
    row(Metric::Contention2Waits, "contention_2t_waits_per_handshake", "1", Lower, Pair, Source::Contention,
        "voluntary context switches (a thread blocked on a lock another holds) per handshake, two threads sharing one server context")
        .shown("2 threads waits/hs", "waits", Scale::Same),
    row(Metric::Contention8Waits, "contention_8t_waits_per_handshake", "1", Lower, Pair, Source::Contention,
        "voluntary context switches (a thread blocked on a lock another holds) per handshake, eight threads sharing one server context")
        .shown("8 threads waits/hs", "waits", Scale::Same),
    row(Metric::ClientQuicNs, "client_quic_ns", "ns", Lower, Client, Source::Quic,
        "the client's CPU time per QUIC handshake: its calls into the QUIC stack from creating the connection until both sides are done and no datagram is in flight")
        .shown("client QUIC µs", "µs", Scale::Micros),
    row(Metric::ServerQuicNs, "server_quic_ns", "ns", Lower, Server, Source::Quic,
        "the server's CPU time per QUIC handshake: its calls into the QUIC stack from the client's first datagram until both sides are done and no datagram is in flight")
        .shown("server QUIC µs", "µs", Scale::Micros),
    row(Metric::ClientQuicOverTcp, "client_quic_over_tcp", "ratio", Lower, Client, Source::Quic,
        "the client's QUIC handshake time over the same library's TLS-over-TCP handshake on the same scenario, taken in turns")
        .shown("client QUIC/TCP", "×", Scale::Same),
    row(Metric::ServerQuicOverTcp, "server_quic_over_tcp", "ratio", Lower, Server, Source::Quic,
        "the server's QUIC handshake time over the same library's TLS-over-TCP handshake on the same scenario, taken in turns")
        .shown("server QUIC/TCP", "×", Scale::Same),
    row(Metric::ClientQuicDatagrams, "client_quic_datagrams", "datagrams", Lower, Client, Source::Quic,
        "datagrams the client sends in a QUIC handshake, acknowledgements included")
        .shown("client datagrams", "datagrams", Scale::Same)
        .machine_independent(),
    row(Metric::ServerQuicDatagrams, "server_quic_datagrams", "datagrams", Lower, Server, Source::Quic,
        "datagrams the server sends in a QUIC handshake, acknowledgements included")
        .shown("server datagrams", "datagrams", Scale::Same)
        .machine_independent(),
    row(Metric::ClientQuicBytes, "client_quic_bytes", "bytes", Lower, Client, Source::Quic,
        "UDP payload bytes the client sends in a QUIC handshake, its Initial's padding included")
        .shown("client bytes", "bytes", Scale::Same)
        .machine_independent(),
    row(Metric::ServerQuicBytes, "server_quic_bytes", "bytes", Lower, Server, Source::Quic,
        "UDP payload bytes the server sends in a QUIC handshake")
        .shown("server bytes", "bytes", Scale::Same)
        .machine_independent(),
    row(Metric::ClientQuicFirstDatagram, "client_quic_first_datagram_bytes", "bytes", Lower, Client, Source::Quic,
        "the client's first datagram, its Initial padded to at least 1,200 bytes (RFC 9000 §14.1)")
        .shown("client Initial datagram", "bytes", Scale::Same)
        .machine_independent(),
    row(Metric::ClientQuicReadyRtts, "client_quic_ready_rtts", "round trips", Lower, Client, Source::Quic,
        "round trips before the client can send application data: 1, plus one for each flight the server's amplification limit or congestion window held back")
        .shown("client ready RTTs", "RTT", Scale::Same)
        .machine_independent(),
    row(Metric::ServerQuicHeldBytes, "server_quic_held_bytes", "bytes", Lower, Server, Source::Quic,
        "handshake bytes the server sent after its first flight, before the client could send: what its first flight held back")
        .shown("server bytes held back", "bytes", Scale::Same)
        .machine_independent(),
    row(Metric::ServerQuicFirstFlightRatio, "server_quic_first_flight_ratio", "ratio", Lower, Server, Source::Quic,
        "the server's first flight over the client's first datagram: at most 3 before the client's address is validated (RFC 9000 §8.1)")
        .shown("server first flight ×", "×", Scale::Same)
        .machine_independent(),
    row(Metric::QuicModelTtfb20Ms, "quic_model_ttfb_rtt20_ms", "ms", Lower, Pair, Source::Quic,
        "the network model's time from the client's first packet to a 1,000-byte response's first byte at 20 ms RTT over QUIC, from one traced connection's datagram flights and CPU")
        .shown("QUIC first byte @20 ms", "ms", Scale::Same),
    row(Metric::TcpModelTtfb20Ms, "tcp_model_ttfb_rtt20_ms", "ms", Lower, Pair, Source::Quic,
        "the same over TCP and TLS 1.3 for the same library and scenario, TCP's handshake included")
        .shown("TCP first byte @20 ms", "ms", Scale::Same),
    row(Metric::QuicModelTtfb100Ms, "quic_model_ttfb_rtt100_ms", "ms", Lower, Pair, Source::Quic,
        "the network model's time to a response's first byte at 100 ms RTT over QUIC")
        .shown("QUIC first byte @100 ms", "ms", Scale::Same),
    row(Metric::TcpModelTtfb100Ms, "tcp_model_ttfb_rtt100_ms", "ms", Lower, Pair, Source::Quic,
        "the network model's time to a response's first byte at 100 ms RTT over TCP and TLS 1.3")
        .shown("TCP first byte @100 ms", "ms", Scale::Same),
    row(Metric::ClientQuicSend1mMbPerS, "client_quic_send_1m_mb_per_s", "MB/s", Higher, Client, Source::QuicBulk,
        "1 MiB the client sends on a new QUIC connection's stream, over its CPU time (MB = 10^6 bytes): slow start and flow-control updates included")
        .shown("client sends 1 MiB", "MB/s", Scale::Same),
    row(Metric::ServerQuicRecv1mMbPerS, "server_quic_recv_1m_mb_per_s", "MB/s", Higher, Server, Source::QuicBulk,
        "the same 1 MiB over the server's CPU time receiving it")
        .shown("server receives 1 MiB", "MB/s", Scale::Same),
    row(Metric::ServerQuicSend1mMbPerS, "server_quic_send_1m_mb_per_s", "MB/s", Higher, Server, Source::QuicBulk,
        "1 MiB the server sends back on the same stream, over its CPU time")
        .shown("server sends 1 MiB", "MB/s", Scale::Same),
    row(Metric::ClientQuicRecv1mMbPerS, "client_quic_recv_1m_mb_per_s", "MB/s", Higher, Client, Source::QuicBulk,
        "the server's 1 MiB over the client's CPU time receiving it")
        .shown("client receives 1 MiB", "MB/s", Scale::Same),
    row(Metric::ClientQuicSend16mMbPerS, "client_quic_send_16m_mb_per_s", "MB/s", Higher, Client, Source::QuicBulk,
        "16 MiB the client sends on a new QUIC connection's stream, over its CPU time")
        .shown("client sends 16 MiB", "MB/s", Scale::Same),
    row(Metric::ServerQuicRecv16mMbPerS, "server_quic_recv_16m_mb_per_s", "MB/s", Higher, Server, Source::QuicBulk,
        "the same 16 MiB over the server's CPU time receiving it")
        .shown("server receives 16 MiB", "MB/s", Scale::Same),
    row(Metric::ServerQuicSend16mMbPerS, "server_quic_send_16m_mb_per_s", "MB/s", Higher, Server, Source::QuicBulk,
        "16 MiB the server sends back on the same stream, over its CPU time")
        .shown("server sends 16 MiB", "MB/s", Scale::Same),
    row(Metric::ClientQuicRecv16mMbPerS, "client_quic_recv_16m_mb_per_s", "MB/s", Higher, Client, Source::QuicBulk,
        "the server's 16 MiB over the client's CPU time receiving it")
        .shown("client receives 16 MiB", "MB/s", Scale::Same),
    row(Metric::ClientTcpSend16mMbPerS, "client_tcp_send_16m_mb_per_s", "MB/s", Higher, Client, Source::QuicBulk,
        "16 MiB the same library sends over TLS over TCP in the scenario's writes, taken in turns with the QUIC samples, over the client's CPU time")
        .shown("TCP: client sends 16 MiB", "MB/s", Scale::Same),
    row(Metric::ServerTcpRecv16mMbPerS, "server_tcp_recv_16m_mb_per_s", "MB/s", Higher, Server, Source::QuicBulk,
        "the same 16 MiB over TLS over TCP, over the server's CPU time receiving it")
        .shown("TCP: server receives 16 MiB", "MB/s", Scale::Same),
    row(Metric::ClientQuicSendCostOverTcp, "client_quic_send_cost_over_tcp", "ratio", Lower, Client, Source::QuicBulk,
        "the client's CPU per byte sending 16 MiB over QUIC over the same over TLS over TCP, paired sample by sample")
        .shown("client send cost QUIC/TCP", "×", Scale::Same),
    row(Metric::ServerQuicRecvCostOverTcp, "server_quic_recv_cost_over_tcp", "ratio", Lower, Server, Source::QuicBulk,
        "the server's CPU per byte receiving 16 MiB over QUIC over the same over TLS over TCP, paired sample by sample")
        .shown("server recv cost QUIC/TCP", "×", Scale::Same),
    row(Metric::ClientQuicSend16mDatagramBytes, "client_quic_send_16m_bytes_per_datagram", "bytes", Higher, Client, Source::QuicBulk,
        "16 MiB over the datagrams the client sent to carry them (its acknowledgements of the server's few packets among them): the stream bytes a datagram carries")
        .shown("client stream bytes per datagram", "bytes", Scale::Same)
        .machine_independent(),
    row(Metric::QuicDownloadNs, "quic_download_ns", "ns", Lower, Pair, Source::Proxy,
        "time from the client's first packet to the last byte of an hq-interop answer over QUIC through the UDP delay proxy")
        .shown("download ms", "ms", Millis),
    row(Metric::CpuNsPerOp, "cpu_ns_per_op", "ns", Lower, Pair, Source::GoBench,
        "Go benchmark: the process's CPU time (user and system, every thread) per operation: both peers' work, since they share the process")
        .shown("CPU ns/op", "ns", Scale::Same),
    row(Metric::FirstByteRoundTrips, "first_byte_round_trips", "round trips", Lower, Pair, Source::GoBench,
        "Go benchmark: round trips from a new client peer's dial until it reads the server's first stream byte: the difference of its time through the 100 ms and the 20 ms delay links over 80 ms, rounded (a TCP connect counts as one)")
        .shown("round trips to first byte", "RTT", Scale::Same)
        .machine_independent(),
    row(Metric::DelayedTtfb20Ms, "delayed_ttfb_rtt20_ms", "ms", Lower, Pair, Source::GoBench,
        "Go benchmark: wall time from a new client peer's dial to the server's first stream byte through a delay link of 20 ms round trip (a TCP connect waits one round trip)")
        .shown("first byte @20 ms, measured", "ms", Scale::Same),
    row(Metric::DelayedTtfb100Ms, "delayed_ttfb_rtt100_ms", "ms", Lower, Pair, Source::GoBench,
        "Go benchmark: the same through a delay link of 100 ms round trip")
        .shown("first byte @100 ms, measured", "ms", Scale::Same),
    row(Metric::ClientQuicHeapBytes, "client_quic_heap_bytes", "B", Lower, Client, Source::QuicMemory,
        "heap the client keeps per QUIC connection after the handshake, the scenario's many connections alive")
        .shown("client QUIC KiB/conn", "KiB", Kib)
        .machine_independent(),
    row(Metric::ServerQuicHeapBytes, "server_quic_heap_bytes", "B", Lower, Server, Source::QuicMemory,
        "heap the server keeps per QUIC connection after the handshake, the scenario's many connections alive")
        .shown("server QUIC KiB/conn", "KiB", Kib)
        .machine_independent(),
    row(Metric::ClientQuicHeapBytesAfterIo, "client_quic_heap_bytes_after_io", "B", Lower, Client, Source::QuicMemory,
        "heap the client keeps per QUIC connection after 1 KiB each way on its stream")
        .shown("client QUIC KiB after I/O", "KiB", Kib)
        .machine_independent(),
    row(Metric::ServerQuicHeapBytesAfterIo, "server_quic_heap_bytes_after_io", "B", Lower, Server, Source::QuicMemory,
        "heap the server keeps per QUIC connection after 1 KiB each way on its stream")
        .shown("server QUIC KiB after I/O", "KiB", Kib)
        .machine_independent(),
    row(Metric::ClientTcpHeapBytes, "client_tcp_heap_bytes", "B", Lower, Client, Source::QuicMemory,
        "the same library's client over TCP: heap per connection after the handshake, as many alive")
        .shown("client TCP KiB/conn", "KiB", Kib)
        .machine_independent(),
    row(Metric::ServerTcpHeapBytes, "server_tcp_heap_bytes", "B", Lower, Server, Source::QuicMemory,
        "the same library's server over TCP: heap per connection after the handshake, as many alive")
        .shown("server TCP KiB/conn", "KiB", Kib)
        .machine_independent(),
    row(Metric::ClientQuicInstructions, "client_quic_instructions", "instructions", Lower, Client, Source::QuicInstructions,
        "instructions the client executes per QUIC handshake (RFC 9001, in memory), counted by callgrind")
        .shown("client QUIC instr/hs", "instructions", Scale::Same),
    row(Metric::ServerQuicInstructions, "server_quic_instructions", "instructions", Lower, Server, Source::QuicInstructions,
        "instructions the server executes per QUIC handshake (RFC 9001, in memory), counted by callgrind")
        .shown("server QUIC instr/hs", "instructions", Scale::Same),
    row(Metric::ClientTcpInstructions, "client_tcp_instructions", "instructions", Lower, Client, Source::QuicInstructions,
        "instructions the same library's client executes per TLS-over-TCP handshake on the same scenario, counted in the same process")
        .shown("client TCP instr/hs", "instructions", Scale::Same),
    row(Metric::ServerTcpInstructions, "server_tcp_instructions", "instructions", Lower, Server, Source::QuicInstructions,
        "instructions the same library's server executes per TLS-over-TCP handshake on the same scenario, counted in the same process")
        .shown("server TCP instr/hs", "instructions", Scale::Same),
    ]
});

const fn all() -> [Metric; METRICS.len()] {
    let mut out = [Metric::ClientCpuNs; METRICS.len()];
    let mut i = 0;
    while i < METRICS.len() {
        out[i] = METRICS[i].metric;
        i += 1;
    }
    out
}

const ALL_METRICS: [Metric; METRICS.len()] = all();

impl Metric {
    /// Every metric, in the table's order.
    pub const ALL: &'static [Metric] = &ALL_METRICS;

    /// This metric's row of the table.
    pub fn row(self) -> &'static MetricRow {
        // The table lists every metric once, in declaration order (a test holds it).
        &METRICS[self as usize]
    }

    pub fn as_str(self) -> &'static str {
        self.row().name
    }

    pub fn unit(self) -> &'static str {
        self.row().unit
    }

    pub fn higher_is_better(self) -> bool {
        self.row().better == Better::Higher
    }

    /// Counted rather than timed: repeated runs agree closely, so small changes matter.
    pub fn is_count(self) -> bool {
        matches!(
            self.row().source,
            Source::Instructions | Source::QuicInstructions
        )
    }

    /// An OS counter per handshake or MiB (blocking waits among them), or a share of a
    /// side's profile, which is often zero; every other figure is positive.
    pub fn may_be_zero(self) -> bool {
        matches!(self.row().source, Source::Counters | Source::Profile)
            || self.is_split()
            || matches!(
                self,
                Metric::Contention2Waits | Metric::Contention8Waits | Metric::ServerQuicHeldBytes
            )
    }

    /// A part of a side's handshake instructions by what the code does, or the side's lock
    /// calls (`--measure instructions`, from callgrind's profile of the side's calls).
    pub fn is_split(self) -> bool {
        self.row().part_of.is_some_and(Metric::is_count)
            || matches!(
                self,
                Metric::ClientLockCalls
                    | Metric::ServerLockCalls
                    | Metric::ClientAtomics
                    | Metric::ServerAtomics
                    | Metric::ClientProviderLockCalls
                    | Metric::ServerProviderLockCalls
                    | Metric::ClientProviderAtomics
                    | Metric::ServerProviderAtomics
            )
    }

    /// Read from the bytes on the wire: the same every handshake (up to a signature's length).
    pub fn is_wire(self) -> bool {
        self.row().source == Source::Wire
    }

    /// See [`MetricRow::machine_independent`].
    pub fn machine_independent(self) -> bool {
        self.row().machine_independent
    }

    /// A share of a side's perf samples (`--measure profile`).
    pub fn is_profile_share(self) -> bool {
        self.row().source == Source::Profile
    }

    pub fn side(self) -> FigureSide {
        self.row().side
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Metric {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        METRICS
            .iter()
            .find(|r| r.name == s)
            .map(|r| r.metric)
            .ok_or_else(|| format!("unknown metric '{s}'"))
    }
}

impl Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Metric {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

mod by_side;
#[cfg(test)]
mod tests;
