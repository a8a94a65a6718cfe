//! "Where the time goes": each stack's handshake instructions, per side, split by what the
//! code does (its cryptography, OpenSSL 3's provider layer, X.509 and encoding, allocation,
//! locks, copies, the rest), and
//! the locks it takes, from callgrind's profile of the instruction-count run. Everything here
//! is that run's own counts.

use tlsmatrix_history::RunData;
use tlsmatrix_model::class::Class as CodeClass;
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::side::Side;

use tlsmatrix_model::measure::Measure;

use crate::companions::Companions;
use crate::doc::{Block, Cell, Section, Table};
use crate::instruction_split::{count, figure, percent, side_split, split_scenarios, SideSplit};

/// Above this share of unnamed instructions a stack's split is called incomplete.
const UNNAMED_LIMIT: f64 = 0.10;

const METHOD: &str = "Each side's handshake instructions (callgrind, the side's own calls only) split by what each function does, by its name: the library's cryptography (hashes, key exchange, signatures, key schedule), OpenSSL 3's provider layer (method fetches and their cache, name maps, property queries, decoder and encoder lookups, parameters across the provider boundary, the library context: its functions' own instructions, and the share of the hash-table walks, string comparisons, allocations, copies and locks they call that was done for them, each callee's own cost shared among its callers by the inclusive cost of their calls as gprof shares time; the cryptography and parsing a fetch reaches stay theirs), X.509 and encoding, allocation and freeing, locks and once-guards, memory copies, the rest, which is mostly the TLS state machine and record layer, and \"unnamed\": functions the dump has no name for, a stripped library's internal code (the system packages ship exported symbols only), which no name can class; a side with more than a tenth unnamed is said to be split incompletely. A function counts its own instructions (inlined code where it was inlined), and the layer takes its share of its callees', so the parts add up to the side's total. Locks per handshake counts calls that acquire a pthread mutex or rwlock, or Go's sync.Mutex; a library with its own spin locks or inline atomics shows fewer than it takes, which atomics per handshake does not miss: every atomic read-modify-write the side executes (a LOCK-prefixed instruction, callgrind's global bus events), in locks, reference counts and once-guards alike. Counts, not times: valgrind's CPU runs no AVX-512, and a stall costs no instructions.";

/// The sentence for a stack: how much of its server's work is cryptography, and its largest
/// named part above that; or that its library names too little of its code to say.
fn sentence(imp: &str, side: Side, s: &SideSplit) -> String {
    let share = |v: f64| 100.0 * v / s.total;
    let atomics = s.atomics.map_or(String::new(), |a| {
        format!(" and {} atomic read-modify-writes", count(a))
    });
    let locks = if s.locks > 0.0 {
        format!(
            "; {} lock acquisitions{atomics} per handshake",
            count(s.locks)
        )
    } else if s.atomics.is_some() {
        format!("; no lock acquired through pthread or sync.Mutex,{atomics} per handshake")
    } else {
        "; no lock acquired through pthread or sync.Mutex".into()
    };
    if s.part(CodeClass::Unnamed) > UNNAMED_LIMIT * s.total {
        return format!(
            "{imp} ({side}): {:.0}% of its {} instructions are in functions its library's build does not name (a stripped package), so its split is incomplete: {:.0}% named cryptography, {:.0}% the state machine and rest{locks}.",
            share(s.part(CodeClass::Unnamed)),
            count(s.total),
            share(s.part(CodeClass::Crypto)),
            share(s.part(CodeClass::Other))
        );
    }
    let (class, largest) = largest_above_crypto(s);
    format!(
        "{imp} ({side}): {:.0}% of its {} instructions are cryptography; its largest part above that is {} ({:.0}%){locks}.",
        share(s.part(CodeClass::Crypto)),
        count(s.total),
        class.name(),
        share(largest)
    )
}

/// The largest named part besides the cryptography: its class and instructions.
fn largest_above_crypto(s: &SideSplit) -> (CodeClass, f64) {
    CodeClass::split()
        .filter(|c| !matches!(c, CodeClass::Crypto | CodeClass::Unnamed))
        .map(|c| (c, s.part(c)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((CodeClass::Other, 0.0))
}

/// "Where the time goes", from the companion runs the report has: each handshake against
/// its crypto floor (split by the profile), contention, the instruction split, and what a
/// connection costs beside its handshake; any may be missing.
pub fn section(extra: &Companions) -> Option<Section> {
    let instructions = extra.of(Measure::Instructions);
    let (floor, profile) = (extra.of(Measure::Floor), extra.of(Measure::Profile));
    let contention = extra.of(Measure::Contention);
    let largest_above = |scenario: &str, imp: &str, side: Side| {
        let s = side_split(instructions?, scenario, imp, side)?;
        let (class, v) = largest_above_crypto(&s);
        Some((class.name(), v / s.total.max(1.0)))
    };
    let mut blocks = floor
        .map(|f| {
            crate::crypto_floor::blocks(
                f,
                &largest_above,
                profile,
                extra.with_symbols(Measure::Profile),
            )
        })
        .unwrap_or_default();
    // The server's lock calls and atomics in the handshake the contention run shares a
    // context for.
    let server_locks = |imp: &str| {
        let scenario = contention?.records.first()?.scenario.as_str();
        side_split(instructions?, scenario, imp, Side::Server).map(|s| (s.locks, s.atomics))
    };
    blocks.extend(
        contention
            .map(|c| crate::contention::blocks(c, &server_locks))
            .unwrap_or_default(),
    );
    blocks.extend(instructions.map(split_blocks).unwrap_or_default());
    blocks.extend(
        extra
            .with_symbols(Measure::Instructions)
            .map(crate::symbols::blocks)
            .unwrap_or_default(),
    );
    blocks.extend(crate::setup_costs::blocks(extra));
    if blocks.is_empty() {
        return None;
    }
    Some(Section {
        id: "time-goes".into(),
        title: "Where the time goes".into(),
        blocks,
    })
}

/// An impl counted without a split: its name, and its atomics where it counted them.
fn unsplit_entry(run: &RunData, scenario: &str, imp: &str) -> String {
    let atomics = |side| figure(run, scenario, imp, Metric::atomics_of(side)).map(|r| r.median);
    match (atomics(Side::Client), atomics(Side::Server)) {
        (Some(c), Some(s)) => format!(
            "{imp}, with {} atomic read-modify-writes per client handshake and {} per server handshake",
            count(c),
            count(s)
        ),
        _ => imp.to_string(),
    }
}

fn split_blocks(run: &RunData) -> Vec<Block> {
    let scenarios = split_scenarios(run);
    if scenarios.is_empty() {
        return Vec::new();
    }
    let impls = run.impls();
    let mut blocks = vec![Block::Para(METHOD.into())];
    let mut header = vec!["impl".to_string(), "side".into(), "instr/hs".into()];
    header.extend(CodeClass::split().map(|c| c.name().to_string()));
    header.push("locks/hs".into());
    header.push("atomics/hs".into());
    for scenario in &scenarios {
        let mut rows = Vec::new();
        let mut said = Vec::new();
        let mut unsplit = Vec::new();
        for imp in impls.iter().filter(|i| !i.contains(' ')) {
            for side in [Side::Client, Side::Server] {
                match side_split(run, scenario, imp, side) {
                    Some(s) => {
                        let mut row = vec![
                            Cell::plain(imp.clone()),
                            Cell::plain(side.to_string()),
                            Cell::plain(count(s.total)),
                        ];
                        row.extend(s.parts.iter().map(|&p| percent(p, s.total)));
                        row.push(Cell::plain(count(s.locks)));
                        row.push(Cell::plain(s.atomics.map_or("-".into(), count)));
                        rows.push(row);
                        if side == Side::Server {
                            said.push(sentence(imp, side, &s));
                        }
                    }
                    None => {
                        if side == Side::Client
                            && figure(run, scenario, imp, Metric::ClientInstructions).is_some()
                        {
                            unsplit.push(unsplit_entry(run, scenario, imp));
                        }
                    }
                }
            }
        }
        if rows.is_empty() {
            continue;
        }
        blocks.push(Block::Table(Table {
            caption: format!(
                "{scenario}: each side's instructions per handshake by part (run {}); hover a share for its count",
                run.run_id
            ),
            header: header.clone(),
            rows,
            label_cols: 2,
        }));
        blocks.push(Block::Bullets(said));
        if !unsplit.is_empty() {
            blocks.push(Block::Para(format!(
                "Counted but not split: {} (its driver reads callgrind's totals only).",
                unsplit.join(", ")
            )));
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::class::SPLIT_CLASSES;
    use tlsmatrix_model::fixture::RecordFixture;
    use tlsmatrix_model::record::Env;
    use tlsmatrix_model::record::Record;

    const S: &str = "handshake-tls13-ecdsa-p256-x25519-full";

    fn run(records: Vec<Record>) -> RunData {
        RunData {
            run_id: "i1".into(),
            env: Env::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        }
    }

    fn rec(imp: &str, m: Metric, v: f64) -> Record {
        RecordFixture::new(m, v)
            .run("i1")
            .scenario(S)
            .pair(imp, imp)
            .samples(vec![v; 3])
            .build()
    }

    #[test]
    fn each_side_is_split_into_shares_that_sum_to_its_total_and_the_largest_is_named() {
        let mut records = Vec::new();
        for side in [Side::Client, Side::Server] {
            let (side_all, parts, locks) = Metric::split_of(side);
            records.push(rec("fast", side_all, 1000.0));
            for (m, v) in parts
                .into_iter()
                .zip(by_class([700.0, 50.0, 110.0, 0.0, 50.0, 0.0, 90.0]))
            {
                records.push(rec("fast", m, v));
            }
            records.push(rec("fast", locks, 0.0));
            records.push(rec("slow", side_all, 4000.0));
            for (m, v) in parts
                .into_iter()
                .zip(by_class([1000.0, 800.0, 600.0, 400.0, 200.0, 0.0, 1000.0]))
            {
                records.push(rec("slow", m, v));
            }
            records.push(rec("slow", locks, 60.0));
        }
        // Go's driver counts totals only.
        records.push(rec("go", Metric::ClientInstructions, 3000.0));
        records.push(rec("slow", Metric::ServerAtomics, 130.0));
        records.push(rec("go", Metric::ClientAtomics, 40.0));
        records.push(rec("go", Metric::ServerAtomics, 41.0));
        let s = section(&instructions_only(run(records))).unwrap();
        let Block::Table(t) = &s.blocks[1] else {
            panic!("no table")
        };
        assert_eq!(t.rows.len(), 4);
        let slow_server = &t.rows[3];
        let col = |h: &str| t.header.iter().position(|x| x == h).unwrap();
        assert_eq!(slow_server[col("crypto")].text, "25%");
        assert_eq!(slow_server[col("locks/hs")].text, "60");
        assert_eq!(slow_server[col("atomics/hs")].text, "130");
        assert_eq!(t.rows[0][col("atomics/hs")].text, "-");
        let Block::Bullets(said) = &s.blocks[2] else {
            panic!("no sentences")
        };
        assert!(said[0].contains("70% of its 1,000"), "{said:?}");
        assert!(said[0].contains("largest part above that is allocation (11%)"));
        assert!(said[1].contains("largest part above that is state machine & rest (25%)"));
        assert!(said[1].contains("60 lock acquisitions and 130 atomic read-modify-writes"));
        assert!(said[0].contains("no lock acquired"));
        let Block::Para(p) = &s.blocks[3] else {
            panic!("no unsplit line")
        };
        assert!(
            p.contains(
                "go, with 40 atomic read-modify-writes per client handshake and 41 per server"
            ),
            "{p}"
        );
    }

    #[test]
    fn a_stack_whose_library_names_too_little_is_called_incomplete() {
        let split = SideSplit {
            total: 1000.0,
            parts: by_class([100.0, 0.0, 100.0, 50.0, 50.0, 600.0, 100.0]),
            locks: 40.0,
            atomics: None,
        };
        let said = sentence("openssl-3.0", Side::Server, &split);
        assert!(
            said.contains("60% of its 1,000 instructions are in functions"),
            "{said}"
        );
        assert!(said.contains("incomplete") && said.contains("40 lock acquisitions"));
    }

    /// Instructions given in the order crypto, X.509, allocation, locks, copies, unnamed,
    /// the rest, in the instruction split's order (the classes not named hold none).
    fn by_class(v: [f64; 7]) -> [f64; SPLIT_CLASSES] {
        use CodeClass::*;
        let given = [Crypto, Parsing, Allocation, Locks, Copies, Unnamed, Other];
        let mut out = [0.0; SPLIT_CLASSES];
        for (c, x) in given.into_iter().zip(v) {
            out[c.split_index().unwrap()] = x;
        }
        out
    }

    /// The companions of a report with an instruction-count run and nothing else.
    fn instructions_only(run: RunData) -> Companions {
        Companions {
            measured: [(Measure::Instructions, run)].into_iter().collect(),
            ..Companions::default()
        }
    }

    #[test]
    fn a_run_without_a_split_has_no_section() {
        let run = run(vec![rec("a", Metric::ClientInstructions, 1.0)]);
        assert!(section(&instructions_only(run)).is_none());
    }
}
