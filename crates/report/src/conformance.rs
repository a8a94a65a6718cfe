//! The conformance section: each impl's BoGo score, a family-by-impl table, and the failing
//! tests with the runner's first line, folded per impl.

use std::collections::BTreeMap;

use tlsmatrix_history::conformance::ConformanceRow;

use crate::doc::{Block, Cell, Class, Section, Table};

/// Failing tests named in a family cell's hover before "and N more".
const HOVER_TESTS: usize = 12;

const ABOUT: &str = "BoGo is BoringSSL's TLS test runner (ssl/test/runner): thousands of tests, each a Go TLS peer with a deliberate quirk (malformed messages, wrong state transitions, downgrade tricks, bad extensions, record-layer abuse) against a shim that configures the library under test as each test asks. rustls, AWS-LC and BoringSSL run it in their own CI with their own shims; here every impl runs it through one shim (its Go twin for crypto/tls) over the same adapters the benchmarks measure, so the scores compare. A test is passed, failed (the runner's message is kept), unimplemented (with the shim's reason: a flag no shim honours yet, or a setting this library lacks; or the test lies outside what tlsmatrix configures: DTLS, QUIC, TLS 1.0 and 1.1), or a known deviation of the library (listed with its reason in crates/conformance/config/). Error strings are not compared (the runner's -loose-errors), but the alert a library sends is. BoGo encodes BoringSSL's choices where the RFCs leave room, so a failure is a difference from BoringSSL, not necessarily a bug; the score is passed of the tests the shim could run.";

#[derive(Default, Clone, Copy)]
struct Tally {
    passed: usize,
    failed: usize,
    unimplemented: usize,
    deviation: usize,
}

impl Tally {
    fn add(&mut self, outcome: &str) {
        match outcome {
            "passed" => self.passed += 1,
            "failed" => self.failed += 1,
            "deviation" => self.deviation += 1,
            _ => self.unimplemented += 1,
        }
    }

    /// Tests the shim could run: everything but unimplemented.
    fn ran(&self) -> usize {
        self.passed + self.failed + self.deviation
    }

    fn class(&self) -> Class {
        match (self.ran(), self.failed, self.deviation) {
            (0, _, _) => Class::Unsupported,
            (_, 0, 0) => Class::Good,
            (_, 0, _) => Class::Deviation,
            _ => Class::Failed,
        }
    }
}

fn impls_of(rows: &[ConformanceRow]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in rows {
        if !out.contains(&r.imp.as_str()) {
            out.push(&r.imp);
        }
    }
    out
}

fn percent(part: usize, whole: usize) -> String {
    if whole == 0 {
        "–".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

fn score_table(rows: &[ConformanceRow], impls: &[&str]) -> Table {
    let mut out = Vec::new();
    for imp in impls {
        let mut t = Tally::default();
        let mut version = "";
        for r in rows.iter().filter(|r| r.imp == *imp) {
            t.add(&r.outcome);
            version = &r.impl_version;
        }
        out.push(vec![
            Cell::plain(*imp),
            Cell::plain(version),
            Cell::plain(t.ran().to_string()),
            Cell::plain(t.passed.to_string()),
            Cell::with(
                t.failed.to_string(),
                if t.failed > 0 {
                    Class::Failed
                } else {
                    Class::Plain
                },
                None,
            ),
            Cell::plain(t.deviation.to_string()),
            Cell::plain(t.unimplemented.to_string()),
            Cell::with(percent(t.passed, t.ran()), t.class(), None),
        ]);
    }
    Table {
        caption: "Per impl: tests the shim could run, and how they ended; the score is passed of those run.".into(),
        header: [
            "impl",
            "version",
            "run",
            "passed",
            "failed",
            "known deviations",
            "unimplemented",
            "score",
        ]
        .map(String::from)
        .to_vec(),
        rows: out,
        label_cols: 2,
    }
}

fn family_table(rows: &[ConformanceRow], impls: &[&str]) -> Table {
    let mut cells: BTreeMap<(&str, &str), (Tally, Vec<&str>)> = BTreeMap::new();
    for r in rows {
        let e = cells
            .entry((r.family.as_str(), r.imp.as_str()))
            .or_default();
        e.0.add(&r.outcome);
        if r.outcome == "failed" {
            e.1.push(&r.test);
        }
    }
    let mut out = Vec::new();
    for family in tlsmatrix_conformance::family::names() {
        if !cells.keys().any(|(f, _)| *f == family) {
            continue;
        }
        let mut row = vec![Cell::plain(family)];
        for imp in impls {
            let (t, failing) = cells.get(&(family, *imp)).cloned().unwrap_or_default();
            let title = if failing.is_empty() {
                format!(
                    "{imp}: {} passed, {} known deviations, {} unimplemented",
                    t.passed, t.deviation, t.unimplemented
                )
            } else {
                let more = failing.len().saturating_sub(HOVER_TESTS);
                format!(
                    "{imp}: failing: {}{}",
                    failing[..failing.len().min(HOVER_TESTS)].join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                )
            };
            let text = if t.ran() == 0 {
                "–".to_string()
            } else {
                format!("{}/{}", t.passed, t.ran())
            };
            row.push(Cell::with(text, t.class(), Some(title)));
        }
        out.push(row);
    }
    let mut header = vec!["family".to_string()];
    header.extend(impls.iter().map(|s| s.to_string()));
    Table {
        caption: "Passed of the tests run, per family and impl: green all passed, orange the rest are known deviations, red a failure; the hover names the failing tests.".into(),
        header,
        rows: out,
        label_cols: 1,
    }
}

/// The failing tests of each impl, folded, with the runner's first line.
fn failures(rows: &[ConformanceRow], impls: &[&str]) -> Vec<Block> {
    impls
        .iter()
        .filter_map(|imp| {
            let failing: Vec<&ConformanceRow> = rows
                .iter()
                .filter(|r| r.imp == *imp && r.outcome == "failed")
                .collect();
            if failing.is_empty() {
                return None;
            }
            let table = Table {
                caption: format!("{imp}: failing tests and the runner's verdict."),
                header: vec!["test".into(), "family".into(), "runner".into()],
                rows: failing
                    .iter()
                    .map(|r| {
                        vec![
                            Cell::plain(&r.test),
                            Cell::plain(&r.family),
                            Cell::plain(first_words(&r.reason)),
                        ]
                    })
                    .collect(),
                label_cols: 3,
            };
            Some(Block::Folded(
                format!("{imp}: {} failing tests", failing.len()),
                vec![Block::Table(table)],
            ))
        })
        .collect()
}

/// The runner's message in one line: its verdict and the shim's first words.
fn first_words(reason: &str) -> String {
    let words: Vec<&str> = reason.split_whitespace().collect();
    let line = words.join(" ");
    match line.char_indices().nth(240) {
        Some((i, _)) => format!("{} ...", &line[..i]),
        None => line,
    }
}

/// Fewer tests an impl than this is a subset of BoGo's suite (the quick one has 50, the full
/// one about 5,000 here), which the section says.
const FULL_SUITE_LEAST: usize = 1000;

pub fn section(run_id: &str, rows: &[ConformanceRow]) -> Option<Section> {
    if rows.is_empty() {
        return None;
    }
    let impls = impls_of(rows);
    let runner = &rows[0].runner;
    let per_impl = rows.iter().filter(|r| r.imp == impls[0]).count();
    let subset = if per_impl < FULL_SUITE_LEAST {
        " A subset of BoGo's tests (make report's default is its quick one, which checks that each shim and adapter work, not how a library scores): the scores below say little beside the full suite's thousands, which `make report CONFORMANCE=full` runs (about 9 minutes on a new 2-core machine, then reused while the binaries stay)."
    } else {
        ""
    };
    let mut blocks = vec![
        Block::Para(ABOUT.into()),
        Block::Para(format!(
            "Run {run_id}: {runner}, {per_impl} tests per impl.{subset}"
        )),
        Block::Table(score_table(rows, &impls)),
        Block::Table(family_table(rows, &impls)),
    ];
    blocks.extend(failures(rows, &impls));
    Some(Section {
        id: "conformance".into(),
        title: "Conformance (BoGo)".into(),
        blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(imp: &str, test: &str, family: &str, outcome: &str) -> ConformanceRow {
        ConformanceRow {
            imp: imp.into(),
            impl_version: "1".into(),
            runner: "BoGo (boring-sys 5.4.0)".into(),
            test: test.into(),
            family: family.into(),
            outcome: outcome.into(),
            reason: "unexpected success\nwant: x".into(),
        }
    }

    #[test]
    fn scores_count_only_tests_run_and_failures_are_listed() {
        let rows = vec![
            row("a", "Basic-1", "Basic handshakes", "passed"),
            row("a", "Basic-2", "Basic handshakes", "failed"),
            row(
                "a",
                "DTLS-1",
                "DTLS and QUIC (not TLS over TCP)",
                "unimplemented",
            ),
            row("b", "Basic-1", "Basic handshakes", "passed"),
            row("b", "Basic-2", "Basic handshakes", "deviation"),
            row(
                "b",
                "DTLS-1",
                "DTLS and QUIC (not TLS over TCP)",
                "unimplemented",
            ),
        ];
        let s = section("r1", &rows).unwrap();
        let Block::Table(scores) = &s.blocks[2] else {
            panic!("no score table")
        };
        assert_eq!(scores.rows[0][2].text, "2");
        assert_eq!(scores.rows[0][7].text, "50.0%");
        assert_eq!(scores.rows[1][7].class, Class::Deviation);
        let Block::Table(families) = &s.blocks[3] else {
            panic!("no family table")
        };
        let basic = families
            .rows
            .iter()
            .find(|r| r[0].text == "Basic handshakes")
            .unwrap();
        assert_eq!(basic[1].text, "1/2");
        assert!(basic[1].title.as_ref().unwrap().contains("Basic-2"));
        assert!(matches!(&s.blocks[4], Block::Folded(t, _) if t.starts_with("a: 1 failing")));
        assert_eq!(s.blocks.len(), 5, "b has no failures to fold");
        // Three tests an impl: a subset, which the section says and says how to take them all.
        let Block::Para(run) = &s.blocks[1] else {
            panic!("no run line")
        };
        assert!(run.contains("3 tests per impl. A subset"), "{run}");
        assert!(run.contains("make report CONFORMANCE=full"), "{run}");
        let full: Vec<ConformanceRow> = (0..FULL_SUITE_LEAST)
            .map(|i| row("a", &format!("T-{i}"), "Basic handshakes", "passed"))
            .collect();
        let s = section("r2", &full).unwrap();
        let Block::Para(run) = &s.blocks[1] else {
            panic!("no run line")
        };
        assert!(
            !run.contains("subset"),
            "the full suite is no subset: {run}"
        );
    }
}
