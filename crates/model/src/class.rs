//! The class list: what a handshake's code does, by its functions' names. Every split of a
//! handshake reads it: the instruction split (callgrind, `tlsmatrix_measure::split`), the time
//! split (perf, `tlsmatrix_measure::profile`), their metric rows (built from the list by
//! `crate::class_list::with_classes!` in `metric.rs`) and the report's tables and charts of both. A class added
//! here gets its metrics, its column and its place in every sum.

use crate::metric::Metric;
use crate::side::Side;

use crate::class_list::with_classes;

/// Builds [`Class`] and [`CLASSES`] from the list.
macro_rules! class_table {
    (classes: [$(($class:ident, $name:literal, $short:literal, $key:literal,
        [$($ci:ident, $si:ident, $qci:ident, $qsi:ident, $tci:ident, $tsi:ident,
            $instr:literal)?],
        [$ct:ident, $st:ident, $better:ident, $shown:literal, $time:literal],
        [$cf:ident, $sf:ident])),* $(,)?]) => {
        /// What a function does, by its name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Class {
            $($class),*
        }

        /// Every class, in the list's order.
        pub const CLASSES: &[ClassRow] = &[
            $(ClassRow {
                class: Class::$class,
                name: $name,
                short: $short,
                instructions: optional!($([Metric::$ci, Metric::$si])?),
                quic_instructions: optional!($([
                    [Metric::$qci, Metric::$qsi],
                    [Metric::$tci, Metric::$tsi],
                ])?),
                time_share: [Metric::$ct, Metric::$st],
                floor_share: [Metric::$cf, Metric::$sf],
            }),*
        ];
    };
}

// `optional!()` is `None`, `optional!(x)` is `Some(x)`: a class's instruction metrics, which the
// kernel has none of.
macro_rules! optional {
    () => {
        None
    };
    ($x:expr) => {
        Some($x)
    };
}

/// One class: its names and its metrics per side.
#[derive(Debug)]
pub struct ClassRow {
    pub class: Class,
    /// How sentences and charts name it.
    pub name: &'static str,
    /// A table column's heading.
    pub short: &'static str,
    /// Its instructions per handshake, client and server, where callgrind sees it.
    pub instructions: Option<[Metric; 2]>,
    /// Its instructions per QUIC handshake, client and server, then per TCP handshake of the
    /// same library counted beside it (`--measure quic-instructions`).
    pub quic_instructions: Option<[[Metric; 2]; 2]>,
    /// Its share of a side's perf samples, client and server.
    pub time_share: [Metric; 2],
    /// Its share of the perf samples of a side's crypto floor (the same operations the
    /// floor run times, profiled with the handshakes), client and server.
    pub floor_share: [Metric; 2],
}

with_classes!(class_table {});

/// How many classes a side's instructions split into (every class callgrind sees).
pub const SPLIT_CLASSES: usize = split_count();

/// How many classes a side's time splits into (every class).
pub const TIME_CLASSES: usize = CLASSES.len();

const fn split_count() -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < CLASSES.len() {
        if CLASSES[i].instructions.is_some() {
            n += 1;
        }
        i += 1;
    }
    n
}

impl Class {
    /// Its row in [`CLASSES`].
    pub fn row(self) -> &'static ClassRow {
        CLASSES
            .iter()
            .find(|r| r.class == self)
            .expect("every class has a row")
    }

    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// Every class, in the list's order: the time split's.
    pub fn all() -> impl Iterator<Item = Class> {
        CLASSES.iter().map(|r| r.class)
    }

    /// The classes callgrind sees, in the list's order: the instruction split's.
    pub fn split() -> impl Iterator<Item = Class> {
        CLASSES
            .iter()
            .filter(|r| r.instructions.is_some())
            .map(|r| r.class)
    }

    /// Its place in the time split ([`Class::all`]).
    pub fn time_index(self) -> usize {
        CLASSES
            .iter()
            .position(|r| r.class == self)
            .expect("every class has a row")
    }

    /// Its place in the instruction split ([`Class::split`]); `None` for the kernel.
    pub fn split_index(self) -> Option<usize> {
        Class::split().position(|c| c == self)
    }
}

/// A side's instruction metrics, in the instruction split's order.
pub fn instruction_metrics(side: Side) -> [Metric; SPLIT_CLASSES] {
    split_metrics(|r| r.instructions.map(|m| m[side.index()]))
}

/// The metric `of` gives each class callgrind sees, in the instruction split's order.
fn split_metrics(of: impl Fn(&ClassRow) -> Option<Metric>) -> [Metric; SPLIT_CLASSES] {
    let mut out = [Metric::ClientInstructions; SPLIT_CLASSES];
    for (slot, m) in out.iter_mut().zip(CLASSES.iter().filter_map(of)) {
        *slot = m;
    }
    out
}

/// Which of `--measure quic-instructions`' two handshakes a figure counts: the QUIC one, or
/// the same library's TCP one counted beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    Quic,
    Tcp,
}

impl Carrier {
    pub const BOTH: [Carrier; 2] = [Carrier::Quic, Carrier::Tcp];

    fn index(self) -> usize {
        match self {
            Carrier::Quic => 0,
            Carrier::Tcp => 1,
        }
    }
}

/// A side's instruction metrics of one carrier's handshake, in the instruction split's order.
pub fn carried_instruction_metrics(side: Side, carrier: Carrier) -> [Metric; SPLIT_CLASSES] {
    split_metrics(|r| {
        r.quic_instructions
            .map(|m| m[carrier.index()][side.index()])
    })
}

/// A side's time-share metrics, in the time split's order.
pub fn time_share_metrics(side: Side) -> [Metric; TIME_CLASSES] {
    let mut out = [Metric::ClientCpuNs; TIME_CLASSES];
    for (slot, r) in out.iter_mut().zip(CLASSES) {
        *slot = r.time_share[side.index()];
    }
    out
}

impl Metric {
    /// A side's handshake instructions, their parts (the instruction split's classes,
    /// `crate::class`) and the side's lock calls.
    pub fn split_of(side: crate::side::Side) -> (Metric, [Metric; SPLIT_CLASSES], Metric) {
        let parts = instruction_metrics(side);
        match side {
            crate::side::Side::Client => {
                (Metric::ClientInstructions, parts, Metric::ClientLockCalls)
            }
            crate::side::Side::Server => {
                (Metric::ServerInstructions, parts, Metric::ServerLockCalls)
            }
        }
    }

    /// A side's instructions per handshake over one carrier (`--measure quic-instructions`)
    /// and their parts, in the instruction split's order.
    pub fn carried_split_of(side: Side, carrier: Carrier) -> (Metric, [Metric; SPLIT_CLASSES]) {
        let whole = match (carrier, side) {
            (Carrier::Quic, Side::Client) => Metric::ClientQuicInstructions,
            (Carrier::Quic, Side::Server) => Metric::ServerQuicInstructions,
            (Carrier::Tcp, Side::Client) => Metric::ClientTcpInstructions,
            (Carrier::Tcp, Side::Server) => Metric::ServerTcpInstructions,
        };
        (whole, carried_instruction_metrics(side, carrier))
    }

    /// A side's handshake time by class (`--measure profile` on a handshake scenario), in
    /// the time split's order (`crate::class`).
    pub fn time_split_of(side: crate::side::Side) -> [Metric; TIME_CLASSES] {
        time_share_metrics(side)
    }

    /// A side's crypto floor by class (`--measure profile` on a handshake scenario), in the
    /// time split's order.
    pub fn floor_split_of(side: crate::side::Side) -> [Metric; TIME_CLASSES] {
        let mut out = [Metric::ClientCpuNs; TIME_CLASSES];
        for (slot, row) in out.iter_mut().zip(CLASSES) {
            *slot = row.floor_share[side.index()];
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Source;

    #[test]
    fn every_class_metric_is_a_row_of_the_metric_table_of_its_source_and_side() {
        for side in [Side::Client, Side::Server] {
            for (m, class) in instruction_metrics(side).into_iter().zip(Class::split()) {
                let row = m.row();
                assert_eq!(row.source, Source::Instructions, "{m:?}");
                assert!(row.name.starts_with(&side.to_string()), "{m:?}");
                assert_eq!(row.part_of, Some(Metric::split_of(side).0), "{class:?}");
            }
            for m in time_share_metrics(side) {
                assert_eq!(m.row().source, Source::Profile, "{m:?}");
                assert!(m.row().name.starts_with(&side.to_string()), "{m:?}");
            }
        }
        assert_eq!(SPLIT_CLASSES, TIME_CLASSES - 1);
        assert_eq!(Class::Kernel.split_index(), None);
        assert_eq!(Class::Unnamed.split_index(), Some(6));
        assert_eq!(Class::Kernel.time_index(), TIME_CLASSES - 1);
    }
}
