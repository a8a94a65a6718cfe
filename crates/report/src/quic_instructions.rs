//! The QUIC section's instruction tables, from a QUIC instruction-count run (`tlsmatrix run
//! --measure quic-instructions`): each side's instructions per QUIC handshake beside the same
//! library's TCP handshake, and the classes of code that QUIC's extra instructions fall in.

use tlsmatrix_analysis::quic_instructions::{self, InstructionCell};
use tlsmatrix_history::RunData;
use tlsmatrix_model::class::Class as CodeClass;
use tlsmatrix_model::side::Side;

use crate::doc::{Block, Cell, Class, Table};
use crate::instruction_split::count;

const METHOD: &str = "Instructions counted by callgrind, each side's calls only: for each side, a batch of the library's TCP handshakes, then as many of its QUIC handshakes over in-memory datagrams, in one process, each function's instructions classed by its name as in \"Where the time goes\" (QUIC's transport machinery falls in the state machine and rest; its packet protection in crypto). A QUIC stack reads the clock, which callgrind slows tens of times: a batch in which any handshake sent a datagram more than the uninstrumented ones (an acknowledgement or loss timer that expired) is counted again, so these are the handshakes a fast machine makes. Counts do not move with the machine's load, so they compare code paths without a shared machine's noise.";

fn ratio(r: f64) -> Cell {
    Cell::with(
        format!("{r:.2}×"),
        if r > 1.0 { Class::Bad } else { Class::Good },
        None,
    )
}

fn totals_row(c: &InstructionCell) -> Vec<Cell> {
    let mut row = vec![Cell::plain(c.scenario.clone()), Cell::plain(c.imp.clone())];
    for side in [Side::Client, Side::Server] {
        let i = side.index();
        row.extend([
            Cell::plain(count(c.quic[i].total)),
            Cell::plain(count(c.tcp[i].total)),
            ratio(c.over_tcp(side)),
        ]);
    }
    row
}

/// A signed count: what QUIC adds to a class, or takes away.
fn added(v: f64) -> Cell {
    let text = if v > 0.0 {
        format!("+{}", count(v))
    } else {
        count(v)
    };
    Cell::plain(text)
}

fn added_row(c: &InstructionCell, side: Side) -> Vec<Cell> {
    let (all, parts) = c.added(side);
    let mut row = vec![
        Cell::plain(c.imp.clone()),
        Cell::plain(side.to_string()),
        added(all),
    ];
    row.extend(parts.into_iter().map(|(_, v)| added(v)));
    row
}

/// The span of QUIC/TCP over the stacks on one side, with the stacks at its ends.
fn span(cells: &[&InstructionCell], side: Side) -> Option<String> {
    let lo = cells
        .iter()
        .min_by(|a, b| a.over_tcp(side).total_cmp(&b.over_tcp(side)))?;
    let hi = cells
        .iter()
        .max_by(|a, b| a.over_tcp(side).total_cmp(&b.over_tcp(side)))?;
    Some(format!(
        "{:.2}× ({}) to {:.2}× ({})",
        lo.over_tcp(side),
        lo.imp,
        hi.over_tcp(side),
        hi.imp
    ))
}

/// The lead scenario's spans per side, and the class that most often takes the largest part
/// of what QUIC adds.
fn sentence(lead: &[&InstructionCell]) -> Option<String> {
    let mut largest: Vec<(CodeClass, usize)> = Vec::new();
    let mut sides = 0;
    for c in lead {
        for side in [Side::Client, Side::Server] {
            sides += 1;
            if let Some((class, _)) = c.largest_addition(side) {
                match largest.iter_mut().find(|(k, _)| *k == class) {
                    Some((_, n)) => *n += 1,
                    None => largest.push((class, 1)),
                }
            }
        }
    }
    let mut out = format!(
        "On {}, a QUIC handshake executed {} the instructions of the same library's TCP handshake on the client, and {} on the server.",
        lead.first()?.scenario,
        span(lead, Side::Client)?,
        span(lead, Side::Server)?,
    );
    if let Some((class, n)) = largest.iter().max_by_key(|(_, n)| *n) {
        out.push_str(&format!(
            " The largest part of what QUIC adds is in {} on {n} of {sides} sides.",
            class.name()
        ));
    }
    Some(out)
}

/// The method, the totals table, the lead scenario's additions by class and the sentence,
/// when the run has complete cells.
pub fn blocks(run: &RunData) -> Vec<Block> {
    let cells = quic_instructions::cells(run);
    let Some(first) = cells.first() else {
        return Vec::new();
    };
    let lead: Vec<&InstructionCell> = cells
        .iter()
        .filter(|c| c.scenario == first.scenario)
        .collect();
    let mut header = vec!["scenario".to_string(), "impl".into()];
    for side in ["client", "server"] {
        header.extend([
            format!("{side} QUIC"),
            format!("{side} TCP"),
            format!("{side} QUIC/TCP"),
        ]);
    }
    let mut added_header = vec!["impl".to_string(), "side".into(), "added".into()];
    added_header.extend(CodeClass::split().map(|c| c.row().short.to_string()));
    let mut blocks = vec![
        Block::Para(METHOD.into()),
        Block::Table(Table {
            caption: format!(
                "Instructions per handshake, QUIC beside the same library's TCP (run {}; callgrind, medians)",
                run.run_id
            ),
            header,
            rows: cells.iter().map(totals_row).collect(),
            label_cols: 2,
        }),
        Block::Table(Table {
            caption: format!(
                "What QUIC adds per handshake by class of code, {}: QUIC's instructions less TCP's (negative: QUIC does less of it)",
                first.scenario
            ),
            header: added_header,
            rows: lead
                .iter()
                .flat_map(|c| [added_row(c, Side::Client), added_row(c, Side::Server)])
                .collect(),
            label_cols: 2,
        }),
    ];
    blocks.extend(sentence(&lead).map(Block::Para));
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_analysis::fixture::quic_instruction_records;
    use tlsmatrix_model::class::SPLIT_CLASSES;

    #[test]
    fn totals_and_additions_by_class_with_the_span_and_the_largest_class() {
        let s = "handshake-tls13-ecdsa-p256-x25519-full";
        let mut records = quic_instruction_records(s, "a", CodeClass::Other, 8_000.0);
        records.extend(quic_instruction_records(s, "b", CodeClass::Other, 800.0));
        let run = RunData {
            run_id: "qi".into(),
            env: Default::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        };
        let blocks = blocks(&run);
        let [Block::Para(_), Block::Table(totals), Block::Table(by_class), Block::Para(s)] =
            &blocks[..]
        else {
            panic!("{} blocks", blocks.len())
        };
        let tcp = 1000.0 * SPLIT_CLASSES as f64;
        let first: Vec<&str> = totals.rows[0].iter().map(|c| c.text.as_str()).collect();
        let quic = count(tcp + 8000.0);
        let factor = format!("{:.2}×", (tcp + 8000.0) / tcp);
        assert_eq!(first[1..5], ["a", quic.as_str(), &count(tcp), &factor]);
        assert_eq!(by_class.rows.len(), 4);
        let other = 3 + CodeClass::Other.split_index().unwrap();
        assert_eq!(by_class.rows[0][other].text, "+8,000");
        assert_eq!(by_class.rows[0][3].text, "0");
        assert!(
            s.contains(&format!("{:.2}× (b) to {factor} (a)", (tcp + 800.0) / tcp))
                && s.contains("in state machine & rest on 4 of 4 sides"),
            "{s}"
        );
    }
}
