//! The QUIC section's bulk table, from a QUIC bulk run (`tlsmatrix run --measure
//! quic-bulk`): each stack's stream rates per side, 16 MiB and 1 MiB each way on a new
//! connection, beside the same library's TLS bulk over TCP with QUIC's paired cost per byte.

use tlsmatrix_analysis::quic::{standing, Standing};
use tlsmatrix_analysis::quic_bulk::{self, BulkCell};
use tlsmatrix_history::RunData;
use tlsmatrix_model::measure::QUIC_BULK_SIZES;
use tlsmatrix_model::record::Record;
use tlsmatrix_model::scenario::Scenario;

use crate::doc::{Block, Cell, Class, Table};
use crate::figures::figure;

/// The method, with the measure's two sizes.
fn method(small: &str, large: &str) -> String {
    format!("Stream data over each QUIC stack in memory, sampled in turns with the same library's TLS bulk over TCP on the same scenario (suite and write size): each QUIC sample opens a new connection for {small} and another for {large}, and sends that many bytes client to server on its stream, then as many back, so slow start and the first flow-control updates are in the figure; each side's rate is the bytes over its own CPU time in the stack's calls (MB: a million bytes). The TCP sample sends {large} client to server. No datagram is lost in memory, and each stack sends datagrams of its own default size, path MTU discovery off. QUIC/TCP is TCP's rate over QUIC's per sample pair: QUIC's CPU per byte as a multiple of TCP's, with its 95% interval.")
}

/// A size in MiB, as the measure's table names it.
fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
}

fn rate(r: &Record) -> Cell {
    Cell::with(
        figure(r.median),
        Class::Plain,
        Some(format!(
            "MB/s, {} samples, 95% interval {}-{}",
            r.samples.len(),
            figure(r.ci_low),
            figure(r.ci_high)
        )),
    )
}

/// A paired QUIC/TCP factor, coloured by where its interval lies, the interval on hover.
pub(crate) fn factor_cell(f: &tlsmatrix_model::record::Record) -> Cell {
    let class = match standing(f) {
        Standing::Costlier => Class::Bad,
        Standing::Cheaper => Class::Good,
        Standing::Same => Class::Same,
    };
    Cell::with(
        format!("{:.2}×", f.median),
        class,
        Some(format!(
            "{} paired samples, 95% interval {:.2}-{:.2}×",
            f.samples.len(),
            f.ci_low,
            f.ci_high
        )),
    )
}

fn row(c: &BulkCell) -> Vec<Cell> {
    let mut row = vec![Cell::plain(c.scenario.clone()), Cell::plain(c.imp.clone())];
    row.extend(c.quic[..4].iter().map(|r| rate(r)));
    row.extend(c.tcp.iter().map(|r| rate(r)));
    row.extend(c.costs.iter().map(|r| factor_cell(r)));
    row.extend(c.quic[4..].iter().map(|r| rate(r)));
    row
}

/// `lo-hi`, or one figure where they read the same.
fn span(lo: f64, hi: f64) -> String {
    let (lo, hi) = (figure(lo), figure(hi));
    if lo == hi {
        lo
    } else {
        format!("{lo}-{hi}")
    }
}

/// What the run's costs span, and the stream bytes per datagram beside a record's, in one
/// sentence.
fn cost_sentence(cells: &[BulkCell], write_size: Option<usize>) -> Option<String> {
    let (send_lo, send_hi) = quic_bulk::cost_range(cells, 0)?;
    let (recv_lo, recv_hi) = quic_bulk::cost_range(cells, 1)?;
    let mut s = format!(
        "Sending {} over QUIC took {:.1}× ({}) to {:.1}× ({}) the client's CPU per byte over TCP, and receiving it {:.1}× ({}) to {:.1}× ({}) the server's.",
        mib(QUIC_BULK_SIZES[1]),
        send_lo.0,
        send_lo.1,
        send_hi.0,
        send_hi.1,
        recv_lo.0,
        recv_lo.1,
        recv_hi.0,
        recv_hi.1
    );
    let per_datagram: Vec<f64> = cells
        .iter()
        .filter_map(|c| Some(c.datagram_bytes?.median))
        .collect();
    let lo = per_datagram.iter().copied().reduce(f64::min);
    let hi = per_datagram.iter().copied().reduce(f64::max);
    if let (Some(lo), Some(hi), Some(write)) = (lo, hi, write_size) {
        s.push_str(&format!(
            " A client datagram carried {} stream bytes, each datagram its own protected packet, where each TCP write of {} bytes went out as one TLS record.",
            span(lo, hi),
            figure(write as f64)
        ));
    }
    Some(s)
}

/// The table and its sentences, when the run has complete cells.
pub fn blocks(run: &RunData) -> Vec<Block> {
    let cells = quic_bulk::cells(run);
    if cells.is_empty() {
        return Vec::new();
    }
    let [small, large] = QUIC_BULK_SIZES.map(mib);
    let mut header = vec!["scenario".to_string(), "impl".into()];
    let each_way = |size: &str| {
        [
            format!("client sends {size}"),
            format!("server receives {size}"),
            format!("server sends {size}"),
            format!("client receives {size}"),
        ]
    };
    header.extend(each_way(&large));
    header.extend(
        [
            "TCP: client sends",
            "TCP: server receives",
            "client send QUIC/TCP",
            "server receive QUIC/TCP",
        ]
        .map(String::from),
    );
    header.extend(each_way(&small));
    let mut blocks = vec![
        Block::Para(method(&small, &large)),
        Block::Table(Table {
            caption: format!(
                "Stream data over QUIC per side, MB/s, beside the same library's TLS bulk over TCP (run {}; hover: the interval)",
                run.run_id
            ),
            header,
            rows: cells.iter().map(row).collect(),
            label_cols: 2,
        }),
    ];
    let write_size = cells
        .first()
        .and_then(|c| c.scenario.parse::<Scenario>().ok())
        .and_then(|s| match s {
            Scenario::Bulk(b) => Some(b.size.bytes()),
            _ => None,
        });
    blocks.extend(cost_sentence(&cells, write_size).map(Block::Para));
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::RecordFixture;
    use tlsmatrix_model::metric::{Source, METRICS};
    use tlsmatrix_model::record::Metric;

    const S: &str = "bulk-tls13-aes-128-gcm-16k";

    /// Every figure of the measure for `imp`, the client's send cost set to `cost`.
    fn cell(imp: &str, cost: f64) -> Vec<Record> {
        METRICS
            .iter()
            .filter(|row| row.source == Source::QuicBulk)
            .map(|row| {
                let v = match row.metric {
                    Metric::ClientQuicSendCostOverTcp => cost,
                    Metric::ClientQuicSend16mDatagramBytes => 1150.0,
                    _ => 900.0,
                };
                RecordFixture::new(row.metric, v)
                    .scenario(S)
                    .pair(imp, imp)
                    .build()
            })
            .collect()
    }

    #[test]
    fn the_table_has_a_row_per_stack_and_the_sentence_names_the_extremes() {
        let mut records = cell("a", 3.1);
        records.extend(cell("b", 30.5));
        // A stack with a figure missing is left out of the table.
        records.extend(
            cell("c", 4.0)
                .into_iter()
                .filter(|r| r.metric != Metric::ServerTcpRecv16mMbPerS),
        );
        let run = RunData {
            run_id: "qb".into(),
            env: Default::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        };
        let made = blocks(&run);
        let Some(Block::Table(t)) = made.get(1) else {
            panic!("no table");
        };
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.header.len(), 14);
        assert!(t.header.contains(&"client sends 16 MiB".to_string()));
        let Some(Block::Para(sentence)) = made.get(2) else {
            panic!("no sentence");
        };
        assert!(
            sentence.contains("× (a) to ") && sentence.contains("× (b) the client's"),
            "{sentence}"
        );
        assert!(
            sentence.contains("carried 1,190 stream bytes"),
            "{sentence}"
        );
        assert!(sentence.contains("16,384 bytes"), "{sentence}");
        assert!(blocks(&RunData {
            records: Vec::new(),
            ..run
        })
        .is_empty());
    }
}
