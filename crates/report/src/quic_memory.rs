//! The QUIC section's memory table, from a QUIC memory run (`tlsmatrix run --measure
//! quic-memory`): the heap each side keeps per live QUIC connection, after the handshake and
//! after 1 KiB each way, beside the same library's TCP connection.

use tlsmatrix_analysis::quic_memory::{self, MemoryCell};
use tlsmatrix_history::RunData;
use tlsmatrix_model::scenario::Scenario;

use crate::doc::{Block, Cell, Class, Table};
use crate::figures::figure;

const METHOD: &str = "Heap per connection with many connections alive: each stack makes the scenario's number of QUIC connections in memory one after another and keeps them all, then sends 1 KiB each way on each one's stream; a side is charged with the net heap its own calls left allocated (the datagrams' buffers are the harness's, grown before counting). The same library's TCP connections are then made as many, in the same process, as `--measure time` makes them on a memory scenario. Bytes per connection; QUIC/TCP is QUIC's heap after the handshake over TCP's.";

fn kib(bytes: f64) -> Cell {
    Cell::with(
        figure(bytes / 1024.0),
        Class::Plain,
        Some(format!("{} bytes", figure(bytes))),
    )
}

fn ratio(r: Option<f64>) -> Cell {
    match r {
        Some(r) => Cell::with(
            format!("{r:.1}×"),
            if r > 1.0 { Class::Bad } else { Class::Good },
            None,
        ),
        None => Cell::plain("-"),
    }
}

/// How many connections a memory scenario keeps alive.
fn alive(scenario: &str) -> String {
    match scenario.parse::<Scenario>() {
        Ok(Scenario::Memory(m)) => figure(m.sessions.count() as f64),
        _ => scenario.to_string(),
    }
}

fn row(c: &MemoryCell) -> Vec<Cell> {
    let over = c.over_tcp();
    let mut row = vec![Cell::plain(alive(&c.scenario)), Cell::plain(c.imp.clone())];
    for (side, over) in over.into_iter().enumerate() {
        row.extend([
            kib(c.quic[side]),
            kib(c.quic_after_io[side]),
            kib(c.tcp[side]),
            ratio(over),
        ]);
    }
    row
}

/// The span of QUIC/TCP over the cells for one side, with the stacks at its ends.
fn span_sentence(cells: &[MemoryCell]) -> Option<String> {
    let side = |i: usize| {
        let by = |c: &MemoryCell| c.over_tcp()[i].map(|r| (r, c.imp.clone(), alive(&c.scenario)));
        let lo = cells
            .iter()
            .filter_map(by)
            .min_by(|a, b| a.0.total_cmp(&b.0))?;
        let hi = cells
            .iter()
            .filter_map(by)
            .max_by(|a, b| a.0.total_cmp(&b.0))?;
        Some(format!(
            "{:.1}× ({}, {} alive) to {:.1}× ({}, {} alive)",
            lo.0, lo.1, lo.2, hi.0, hi.1, hi.2
        ))
    };
    Some(format!(
        "A live QUIC connection held {} the heap of the same library's TCP connection on the client, and {} on the server.",
        side(0)?,
        side(1)?
    ))
}

/// The method, the table and its sentence, when the run has complete cells.
pub fn blocks(run: &RunData) -> Vec<Block> {
    let cells = quic_memory::cells(run);
    if cells.is_empty() {
        return Vec::new();
    }
    let mut header = vec!["connections alive".to_string(), "impl".into()];
    for side in ["client", "server"] {
        header.extend([
            format!("{side} QUIC KiB"),
            format!("{side} QUIC KiB after I/O"),
            format!("{side} TCP KiB"),
            format!("{side} QUIC/TCP"),
        ]);
    }
    let mut blocks = vec![
        Block::Para(METHOD.into()),
        Block::Table(Table {
            caption: format!(
                "Heap per live connection, QUIC beside TCP, KiB (run {}; hover: bytes)",
                run.run_id
            ),
            header,
            rows: cells.iter().map(row).collect(),
            label_cols: 2,
        }),
    ];
    blocks.extend(span_sentence(&cells).map(Block::Para));
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_analysis::quic_memory::FIGURES;
    use tlsmatrix_model::fixture::RecordFixture;
    use tlsmatrix_model::record::Metric;

    #[test]
    fn a_row_per_stack_and_scenario_and_the_sentence_names_the_ends() {
        let mut records = Vec::new();
        for (scenario, imp, client_quic) in [
            ("memory-tls13-ecdsa-p256-n100", "a", 40_960.0),
            ("memory-tls13-ecdsa-p256-n1000", "b", 10_240.0),
        ] {
            for &m in FIGURES.iter().flatten() {
                let v = match m {
                    Metric::ClientQuicHeapBytes => client_quic,
                    _ => 5_120.0,
                };
                records.push(
                    RecordFixture::new(m, 0.0)
                        .samples(vec![v; 3])
                        .scenario(scenario)
                        .pair(imp, imp)
                        .build(),
                );
            }
        }
        let run = RunData {
            run_id: "qm".into(),
            env: Default::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        };
        let blocks = blocks(&run);
        let [Block::Para(_), Block::Table(t), Block::Para(sentence)] = &blocks[..] else {
            panic!("{} blocks", blocks.len())
        };
        let first: Vec<&str> = t.rows[0].iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            first,
            ["100", "a", "40.0", "5.0", "5.0", "8.0×", "5.0", "5.0", "5.0", "1.0×"]
        );
        assert_eq!(t.rows[1][1].text, "b");
        assert_eq!(t.rows[1][0].text, "1,000");
        assert!(
            sentence.contains("2.0× (b, 1,000 alive) to 8.0× (a, 100 alive)"),
            "{sentence}"
        );
        assert!(blocks_of_nothing());
    }

    fn blocks_of_nothing() -> bool {
        blocks(&RunData {
            run_id: "e".into(),
            env: Default::default(),
            status: "complete".into(),
            records: Vec::new(),
            cells: Vec::new(),
        })
        .is_empty()
    }
}
