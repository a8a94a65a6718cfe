//! Threads sharing one server context, from a contention run (`tlsmatrix run --measure
//! contention`): per impl, its rate on 1, 2 and 8 threads, the scaling over one thread and the
//! blocking waits per handshake, beside the locks its handshake takes where the instruction
//! run counted them.

use tlsmatrix_history::RunData;
use tlsmatrix_model::record::{Metric, Record};

use crate::doc::{Block, Cell, Class, Table};
use crate::figures::figure;
use crate::self_pairs::{self, refusals};

const METHOD: &str = "One server context shared by 1, 2 and 8 threads handshaking at once (full handshakes, each thread with a client context of its own), as a server's worker threads share one: the rate, the rate over one thread's times the cores the threads can use (scaling), and blocking waits per handshake: voluntary context switches, which an in-memory handshake makes only when a thread sleeps on a lock another holds. Locks per handshake are the server side's pthread lock acquisitions from the instruction run, and atomics its atomic read-modify-writes there (LOCK-prefixed instructions: every lock takes some, and so does each reference count and once-guard), which cost a cache line's round trip between cores once threads share what they touch. This machine's cores bound what the scaling can show; the waits are what carries over to a larger one.";

/// The contention run's record of `imp` with itself (one scenario per run).
fn record<'a>(run: &'a RunData, imp: &str, m: Metric) -> Option<&'a Record> {
    let scenario = run.records.first()?.scenario.as_str();
    self_pairs::record(run, scenario, imp, m)
}

fn cell(r: Option<&Record>, percent: bool) -> Cell {
    match r {
        None => Cell::plain("-"),
        Some(r) => {
            let (text, low, high) = if percent {
                let p = |v: f64| format!("{:.0}%", 100.0 * v);
                (p(r.median), p(r.ci_low), p(r.ci_high))
            } else if r.median < 1.0 {
                let p = |v: f64| format!("{v:.3}");
                (p(r.median), p(r.ci_low), p(r.ci_high))
            } else {
                (figure(r.median), figure(r.ci_low), figure(r.ci_high))
            };
            Cell::with(
                text,
                Class::Plain,
                Some(format!(
                    "{} samples, 95% interval {low}-{high}",
                    r.samples.len()
                )),
            )
        }
    }
}

/// An impl's server-side lock calls per handshake, and its atomics where counted.
pub type ServerSync<'a> = dyn Fn(&str) -> Option<(f64, Option<f64>)> + 'a;

/// The table and a sentence naming the stacks that waited, when the run measured any; `locks`
/// gives an impl's server-side lock calls per handshake from the instruction run, and its
/// atomic read-modify-writes where that run counted them.
pub fn blocks(run: &RunData, locks: &ServerSync) -> Vec<Block> {
    let impls: Vec<String> = run
        .impls()
        .into_iter()
        .filter(|i| record(run, i, Metric::Contention2Waits).is_some())
        .collect();
    if impls.is_empty() {
        return Vec::new();
    }
    let mut rows = Vec::new();
    let mut waiting: Vec<(f64, String)> = Vec::new();
    for imp in &impls {
        let get = |m| record(run, imp, m);
        let mut row = vec![Cell::plain(imp.clone())];
        let count = |l: f64| {
            if l < 100.0 {
                format!("{l:.0}")
            } else {
                figure(l)
            }
        };
        let sync = locks(imp);
        row.push(Cell::plain(sync.map_or("-".into(), |(l, _)| count(l))));
        row.push(Cell::plain(
            sync.and_then(|(_, a)| a).map_or("-".into(), count),
        ));
        row.push(cell(get(Metric::Contention1PerS), false));
        row.push(cell(get(Metric::Contention2Scaling), true));
        row.push(cell(get(Metric::Contention2Waits), false));
        row.push(cell(get(Metric::Contention8Scaling), true));
        row.push(cell(get(Metric::Contention8Waits), false));
        rows.push(row);
        if let Some(w) = get(Metric::Contention2Waits).filter(|w| w.median > 0.0) {
            waiting.push((
                w.median,
                format!(
                    "{imp} {:.3} (scaling {:.0}%)",
                    w.median,
                    100.0 * get(Metric::Contention2Scaling).map_or(f64::NAN, |r| r.median)
                ),
            ));
        }
    }
    let mut out = vec![
        Block::Para(METHOD.into()),
        Block::Table(Table {
            caption: format!(
                "{}: one server context shared by threads (run {}; hover: the interval)",
                run.records
                    .first()
                    .map_or("handshake", |r| r.scenario.as_str()),
                run.run_id
            ),
            header: [
                "impl",
                "locks/hs",
                "atomics/hs",
                "1 thread hs/s",
                "2 threads scaling",
                "2 threads waits/hs",
                "8 threads scaling",
                "8 threads waits/hs",
            ]
            .map(String::from)
            .to_vec(),
            rows,
            label_cols: 1,
        }),
    ];
    waiting.sort_by(|a, b| b.0.total_cmp(&a.0));
    out.push(Block::Para(if waiting.is_empty() {
        "No stack blocked: no thread waited on a lock in any sample.".into()
    } else {
        format!(
            "Blocking waits per handshake with two threads on one server context: {}; none for the others.",
            waiting.into_iter().map(|(_, s)| s).collect::<Vec<_>>().join(", ")
        )
    }));
    out.push(Block::Para(PUBLISHED.into()));
    out.extend(refusals(run, "Not measured"));
    out
}

/// What many cores showed, published (the sources); this machine's two cores cannot
/// repeat it, so it stands beside the counts that carry over, labelled.
const PUBLISHED: &str = "A published finding, not measured here: HAProxy's \"The State of SSL Stacks\" (2025, with its issues #1903 and #2454) found OpenSSL 3.x taking about 60 lock/unlock pairs per request and 3.0 many times slower than 1.1.1 at 24 to 64 threads, while AWS-LC and wolfSSL scaled about linearly. Two cores cannot show that collapse; the waits, locks and atomics per handshake above are what carries over to a machine with more.";

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::record::Env;

    fn rec(imp: &str, m: Metric, v: f64) -> Record {
        Record::from_samples(
            "contention",
            "handshake-tls13-ecdsa-p256-x25519-full",
            (imp, "v"),
            (imp, "v"),
            m,
            vec![v, v * 1.01, v * 0.99],
            Env::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_row_per_stack_and_the_stacks_that_block_named() {
        let mut records = Vec::new();
        for (imp, waits, scaling) in [("locky", 0.12, 0.66), ("lean", 0.0001, 0.9)] {
            records.push(rec(imp, Metric::Contention1PerS, 2000.0));
            records.push(rec(imp, Metric::Contention2Scaling, scaling));
            records.push(rec(imp, Metric::Contention2Waits, waits));
            records.push(rec(imp, Metric::Contention8Scaling, scaling));
            records.push(rec(imp, Metric::Contention8Waits, waits / 2.0));
        }
        let run = RunData {
            run_id: "c".into(),
            env: Env::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        };
        let b = blocks(&run, &|imp| {
            (imp == "locky").then_some((61.0, Some(2300.0)))
        });
        let Block::Table(t) = &b[1] else {
            panic!("a table")
        };
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0][1].text, "61");
        assert_eq!(t.rows[0][2].text, "2,300");
        assert_eq!(t.rows[0][4].text, "66%");
        assert_eq!(t.rows[0][5].text, "0.120");
        assert_eq!(t.rows[1][1].text, "-");
        assert_eq!(t.rows[1][2].text, "-");
        let Block::Para(p) = &b[2] else {
            panic!("a sentence")
        };
        assert!(
            p.contains(": locky 0.120 (scaling 66%), lean 0.000 (scaling 90%);"),
            "{p}"
        );
    }
}
