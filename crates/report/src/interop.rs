//! Interop results drawn: a summary matrix (passed of applicable cases per client and
//! server) and one matrix per case, for the report and the terminal alike.

use tlsmatrix_history::interop_file::CellLine;
use tlsmatrix_model::interop::CASES;

use crate::doc;
use crate::text_table::Table;

/// The terminal's short words for outcomes, so a matrix of six peers fits a line.
fn short(outcome: &str) -> &str {
    match outcome {
        "expected-failure" => "xfail",
        "known-deviation" => "known",
        "fail" => "FAIL",
        "unsupported" => "unsup",
        other => other,
    }
}

/// Peers in the order the cells first name them.
pub fn peers_of<'a>(cells: impl IntoIterator<Item = &'a CellLine>) -> Vec<&'a str> {
    let mut peers: Vec<&str> = Vec::new();
    for c in cells {
        for p in [c.client.as_str(), c.server.as_str()] {
            if !peers.contains(&p) {
                peers.push(p);
            }
        }
    }
    peers
}

/// Every case at once: per client and server, "passed of applicable cases" (a case failed
/// exactly as it requires counts as passed; unsupported cases are not applicable). Green when
/// all passed, orange when the rest are listed deviations of a third-party peer, red when
/// anything else failed; the hover names the cases that did not pass.
pub fn summary_matrix(cells: &[CellLine]) -> doc::Table {
    summary_matrix_titled(
        cells,
        "All cases: passed of applicable cases per client (rows) and server (columns); green all passed, orange the rest are listed known deviations of a third-party peer, red a failure. Hover a cell for the cases that did not pass.".into(),
    )
}

/// [`summary_matrix`] under another caption, for a subset of the cases.
pub fn summary_matrix_titled(cells: &[CellLine], caption: String) -> doc::Table {
    client_by_server(&peers_of(cells), caption, |client, server| {
        let pair: Vec<&CellLine> = cells
            .iter()
            .filter(|c| c.client == *client && c.server == *server)
            .collect();
        let applicable: Vec<&&CellLine> =
            pair.iter().filter(|c| c.outcome != "unsupported").collect();
        let passed = applicable
            .iter()
            .filter(|c| matches!(c.outcome.as_str(), "pass" | "expected-failure"))
            .count();
        let not_passed: Vec<String> = applicable
            .iter()
            .filter(|c| !matches!(c.outcome.as_str(), "pass" | "expected-failure"))
            .map(|c| format!("{}: {}", c.case, c.outcome))
            .collect();
        let class = if applicable.is_empty() {
            doc::Class::Unsupported
        } else if not_passed.is_empty() {
            doc::Class::Good
        } else if applicable.iter().all(|c| c.outcome != "fail") {
            doc::Class::Deviation
        } else {
            doc::Class::Failed
        };
        if pair.is_empty() {
            return doc::Cell::plain("-");
        }
        let title = format!(
            "{client} -> {server}: {passed} of {} applicable cases passed ({} unsupported){}",
            applicable.len(),
            pair.len() - applicable.len(),
            if not_passed.is_empty() {
                String::new()
            } else {
                format!("; not passed: {}", not_passed.join(", "))
            }
        );
        doc::Cell::with(format!("{passed}/{}", applicable.len()), class, Some(title))
    })
}

/// A client-by-server table over `peers`, each cell made by `cell(client, server)`.
fn client_by_server(
    peers: &[&str],
    caption: String,
    cell: impl Fn(&str, &str) -> doc::Cell,
) -> doc::Table {
    let mut header = vec!["client \\ server".to_string()];
    header.extend(peers.iter().map(|p| p.to_string()));
    let rows = peers
        .iter()
        .map(|client| {
            let mut row = vec![doc::Cell::plain(*client)];
            row.extend(peers.iter().map(|server| cell(client, server)));
            row
        })
        .collect();
    doc::Table {
        caption,
        header,
        rows,
        label_cols: 1,
    }
}

/// Per case a client-by-server matrix, peers and cases in the order the cells name them; the
/// cell shows `text(outcome)`, its class the outcome, its hover the reason. The terminal and
/// the report both draw these.
pub fn matrix_tables(cells: &[CellLine], text: fn(&str) -> &str) -> Vec<doc::Table> {
    let mut cases: Vec<&str> = Vec::new();
    for c in cells {
        if !cases.contains(&c.case.as_str()) {
            cases.push(&c.case);
        }
    }
    cases
        .into_iter()
        .map(|case| {
            // The peers that took part in this case: its family's.
            let peers = peers_of(cells.iter().filter(|c| c.case == case));
            let about = CASES.iter().find(|c| c.id == case).map_or("", |c| c.about);
            client_by_server(
                &peers,
                format!("interop case {case}: {about}"),
                |client, server| match cells
                    .iter()
                    .find(|c| c.case == case && c.client == client && c.server == server)
                {
                    Some(c) => {
                        let class = match c.outcome.as_str() {
                            "pass" => doc::Class::Good,
                            "expected-failure" => doc::Class::Expected,
                            "known-deviation" => doc::Class::Deviation,
                            "unsupported" => doc::Class::Unsupported,
                            _ => doc::Class::Failed,
                        };
                        doc::Cell::with(text(&c.outcome), class, Some(c.reason.clone()))
                    }
                    None => doc::Cell::plain("-"),
                },
            )
        })
        .collect()
}

/// The summary matrix, then (Markdown, or text with `verbose`) each case's matrix; then every
/// cell that did not pass with why, unsupported cells only counted unless `verbose`.
pub fn render(cells: &[CellLine], markdown: bool, verbose: bool) -> String {
    let mut out = String::new();
    let full = markdown || verbose;
    let tables = std::iter::once(summary_matrix(cells)).chain(
        full.then(|| matrix_tables(cells, short))
            .into_iter()
            .flatten(),
    );
    for t in tables {
        if markdown {
            out.push('\n');
            out.push_str(&crate::markdown_table(&t));
        } else {
            out.push_str(&format!(
                "\n{}\n{}",
                t.caption,
                Table::from_doc(&t).render()
            ));
        }
    }
    let listed = |c: &&CellLine| match c.outcome.as_str() {
        "fail" | "known-deviation" => true,
        "unsupported" => full,
        _ => false,
    };
    let notes: Vec<&CellLine> = cells.iter().filter(listed).collect();
    if !notes.is_empty() {
        out.push_str(if markdown {
            "\n### Not passing\n\n"
        } else {
            "\nnot passing:\n"
        });
        for c in notes {
            out.push_str(&format!(
                "{}{} {} -> {}: {}: {}\n",
                if markdown { "- " } else { "  " },
                c.case,
                c.client,
                c.server,
                c.outcome,
                c.reason
            ));
        }
    }
    if !full {
        let unsupported = cells.iter().filter(|c| c.outcome == "unsupported").count();
        if unsupported > 0 {
            out.push_str(&format!(
                "\n{unsupported} cells unsupported (--verbose lists each with its reason, and each case's matrix)\n"
            ));
        }
    }
    out
}
