//! Conformance results in the history database: one row per impl and BoGo test, under a run
//! whose measure is `conformance`.

use anyhow::{Context, Result};
use rusqlite::{params, OptionalExtension};

use crate::store::Store;

/// The measure conformance runs are stored under.
pub const MEASURE: &str = "conformance";

/// One test's outcome for one impl, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConformanceRow {
    pub imp: String,
    pub impl_version: String,
    /// The runner and the sources it was built from, e.g. `BoGo (boring-sys 5.4.0)`.
    pub runner: String,
    pub test: String,
    pub family: String,
    /// passed, failed, unimplemented or deviation.
    pub outcome: String,
    pub reason: String,
}

impl Store {
    /// Stores one impl's results in one transaction: an impl is in the database whole or
    /// not at all. A shard adds its tests to the same run.
    pub fn add_conformance(&mut self, run_id: &str, rows: &[ConformanceRow]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut stmt = tx.prepare(
                "INSERT OR REPLACE INTO conformance
                   (run_id, impl, impl_version, runner, test, family, outcome, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            for r in rows {
                stmt.execute(params![
                    run_id,
                    r.imp,
                    r.impl_version,
                    r.runner,
                    r.test,
                    r.family,
                    r.outcome,
                    r.reason
                ])?;
            }
        }
        tx.commit()
            .with_context(|| format!("cannot write to database {}", self.path().display()))
    }

    /// Every row of a run, by impl and test.
    pub fn conformance(&self, run_id: &str) -> Result<Vec<ConformanceRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT impl, impl_version, runner, test, family, outcome, reason
             FROM conformance WHERE run_id = ?1 ORDER BY impl, test",
        )?;
        let rows = stmt.query_map([run_id], |r| {
            Ok(ConformanceRow {
                imp: r.get(0)?,
                impl_version: r.get(1)?,
                runner: r.get(2)?,
                test: r.get(3)?,
                family: r.get(4)?,
                outcome: r.get(5)?,
                reason: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The newest run holding conformance results.
    pub fn latest_conformance_run(&self) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT r.run_id FROM runs r
                 WHERE EXISTS (SELECT 1 FROM conformance c WHERE c.run_id = r.run_id)
                 ORDER BY r.started DESC, r.run_id DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Whether a run holds conformance results (and so is compared test by test).
    pub fn is_conformance_run(&self, run_id: &str) -> Result<bool> {
        Ok(self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM conformance WHERE run_id = ?1)",
            [run_id],
            |r| r.get(0),
        )?)
    }
}

/// Rows of tests that did not fail in `base` (passed, deviation or unimplemented) and fail in
/// `cand`; impls or tests absent from either run are not compared.
pub fn newly_failing<'a>(
    base: &'a [ConformanceRow],
    cand: &'a [ConformanceRow],
) -> Vec<&'a ConformanceRow> {
    let before: std::collections::HashMap<(&str, &str), &str> = base
        .iter()
        .map(|r| ((r.imp.as_str(), r.test.as_str()), r.outcome.as_str()))
        .collect();
    cand.iter()
        .filter(|r| r.outcome == "failed")
        .filter(|r| {
            before
                .get(&(r.imp.as_str(), r.test.as_str()))
                .is_some_and(|o| *o != "failed")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(imp: &str, test: &str, outcome: &str) -> ConformanceRow {
        ConformanceRow {
            imp: imp.into(),
            impl_version: "v".into(),
            runner: "BoGo".into(),
            test: test.into(),
            family: "Basic handshakes".into(),
            outcome: outcome.into(),
            reason: String::new(),
        }
    }

    #[test]
    fn a_test_that_newly_fails_is_found_and_nothing_else() {
        let base = vec![
            row("a", "T1", "passed"),
            row("a", "T2", "failed"),
            row("a", "T3", "unimplemented"),
        ];
        let cand = vec![
            row("a", "T1", "failed"),
            row("a", "T2", "failed"),
            row("a", "T3", "failed"),
            row("b", "T1", "failed"),
        ];
        let got: Vec<_> = newly_failing(&base, &cand)
            .iter()
            .map(|r| (r.imp.as_str(), r.test.as_str()))
            .collect();
        assert_eq!(got, [("a", "T1"), ("a", "T3")]);
    }
}
