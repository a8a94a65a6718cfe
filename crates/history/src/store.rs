//! The history database (SQLite, bundled): every run with its environment, its records and
//! the cells it could not measure. A run is written as it goes, one transaction per cell, so
//! a run that is killed leaves a valid database holding every cell finished before the kill,
//! and the run marked incomplete.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OptionalExtension, Transaction};
use tlsmatrix_model::measure::Measure;
use tlsmatrix_model::record::{BlockWeather, CellRecord, Env, Paired, Record, CELL_SCHEMA, SCHEMA};
use tlsmatrix_model::trace::Trace;

use crate::run_data::RunData;

/// Bumped when a table changes; a newer database is refused, not guessed at, and an older
/// one is brought up to date (`MIGRATIONS`).
const DB_VERSION: i64 = 2;

/// From version N to N+1, at index N-1.
const MIGRATIONS: &[&str] = &[
    // 2: samples' blocks and paired ratios (JSON), empty for records measured unpaired.
    "ALTER TABLE records ADD COLUMN pairing TEXT NOT NULL DEFAULT '{}';",
];

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    started TEXT NOT NULL,
    finished TEXT,
    measure TEXT NOT NULL,
    command TEXT NOT NULL,
    git_revision TEXT NOT NULL,
    cpu_model TEXT NOT NULL,
    cores INTEGER NOT NULL,
    kernel TEXT NOT NULL,
    compilers TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    scenario TEXT NOT NULL,
    client TEXT NOT NULL,
    server TEXT NOT NULL,
    client_version TEXT NOT NULL,
    server_version TEXT NOT NULL,
    metric TEXT NOT NULL,
    unit TEXT NOT NULL,
    samples TEXT NOT NULL,
    median REAL NOT NULL,
    min REAL NOT NULL,
    ci_low REAL NOT NULL,
    ci_high REAL NOT NULL,
    pairing TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_id, scenario, client, server, metric)
);
CREATE TABLE IF NOT EXISTS cells (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    scenario TEXT NOT NULL,
    client TEXT NOT NULL,
    server TEXT NOT NULL,
    outcome TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (run_id, scenario, client, server)
);
CREATE TABLE IF NOT EXISTS conformance (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    impl TEXT NOT NULL,
    impl_version TEXT NOT NULL,
    runner TEXT NOT NULL,
    test TEXT NOT NULL,
    family TEXT NOT NULL,
    outcome TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (run_id, impl, test)
);
";

pub struct Store {
    pub(crate) conn: Connection,
    path: PathBuf,
}

/// Timed runs of `tlsmatrix run` (the matrix), its instruction-count runs, its heap and
/// multi-core runs (`memory-*`, `throughput-*` scenarios), and the Go transport's benchmarks (`libp2p-*` scenarios, imported
/// by `make bench-go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    Any,
    Matrix,
    /// A run of one measure other than time (`tlsmatrix run --measure NAME`): its row in the
    /// measure table names it.
    Measured(Measure),
    Memory,
    Throughput,
    Libp2p,
    /// A timed run with allocator variants (`impl+jemalloc`), which no main run has.
    Allocators,
    /// Post-quantum handshakes paired with their classical twins (`--pairs twins`).
    Twins,
    /// A run of one measure that takes a companion build with symbols (`impl+symbols`),
    /// which explains a system library's figures and is never a measure's main run.
    Symbols(Measure),
}

impl RunKind {
    pub fn describe(self) -> &'static str {
        match self {
            RunKind::Any => "",
            RunKind::Matrix => "timed `tlsmatrix run` ",
            RunKind::Measured(m) => m.row().run_kind,
            RunKind::Memory => "memory ",
            RunKind::Throughput => "throughput ",
            RunKind::Libp2p => "libp2p benchmark ",
            RunKind::Allocators => "allocator ",
            RunKind::Twins => "post-quantum twin ",
            RunKind::Symbols(_) => "companion ",
        }
    }
}

/// A line of `tlsmatrix history`.
#[derive(Debug, Clone)]
pub struct RunRow {
    pub run_id: String,
    pub started: String,
    pub finished: Option<String>,
    pub measure: String,
    pub git_revision: String,
    pub command: String,
    pub records: i64,
    pub not_measured: i64,
}

impl Store {
    /// Opens or creates the database (and its folder) for writing.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).with_context(|| {
                format!("cannot create the folder of database {}", path.display())
            })?;
        }
        Self::connect(path)
    }

    /// Opens a database that must already exist, for reading.
    pub fn open_existing(path: &Path) -> Result<Store> {
        if !path.is_file() {
            bail!(
                "no history database at {}; `tlsmatrix run` creates it, or point --db at one",
                path.display()
            );
        }
        Self::connect(path)
    }

    fn connect(path: &Path) -> Result<Store> {
        let conn = Connection::open(path)
            .with_context(|| format!("cannot open database {}", path.display()))?;
        // Another process (a report while a run writes) waits instead of failing.
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch("PRAGMA foreign_keys = ON;")?;
        conn.execute_batch(TABLES)
            .with_context(|| format!("{} is not a tlsmatrix database", path.display()))?;
        let version: Option<String> = conn
            .query_row("SELECT value FROM meta WHERE key = 'version'", [], |r| {
                r.get(0)
            })
            .optional()?;
        match version {
            None => {
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('version', ?1)",
                    [DB_VERSION.to_string()],
                )?;
            }
            Some(v) if v == DB_VERSION.to_string() => {}
            Some(v) if v.parse::<i64>().is_ok_and(|n| (1..DB_VERSION).contains(&n)) => {
                let from: i64 = v.parse().expect("checked above");
                for step in &MIGRATIONS[(from - 1) as usize..] {
                    conn.execute_batch(step).with_context(|| {
                        format!("cannot bring {} up to version {DB_VERSION}", path.display())
                    })?;
                }
                conn.execute(
                    "UPDATE meta SET value = ?1 WHERE key = 'version'",
                    [DB_VERSION.to_string()],
                )?;
            }
            Some(v) => bail!(
                "{} is a version {v} tlsmatrix database; this tlsmatrix reads version {DB_VERSION}",
                path.display()
            ),
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records that a run started; it stays incomplete until [`Store::finish_run`]. A run
    /// id already stored (another shard of the same run) is continued.
    pub fn begin_run(&mut self, run_id: &str, measure: &str, env: &Env) -> Result<()> {
        let tx = self.conn.transaction()?;
        let exists: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM runs WHERE run_id = ?1)",
            [run_id],
            |r| r.get(0),
        )?;
        if !exists {
            insert_run(&tx, run_id, measure, env)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// One cell's outcome, atomically: its records, or why it has none.
    pub fn add_cell(
        &mut self,
        records: &[Record],
        not_measured: Option<&CellRecord>,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        insert_records(&tx, records, "INSERT OR REPLACE")?;
        if let Some(c) = not_measured {
            insert_cell(&tx, c, "INSERT OR REPLACE")?;
        }
        tx.commit()
            .with_context(|| format!("cannot write to database {}", self.path.display()))
    }

    pub fn finish_run(&mut self, run_id: &str, finished: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE runs SET finished = ?2 WHERE run_id = ?1",
            params![run_id, finished],
        )?;
        Ok(())
    }

    /// Stores a run read from a file, in one transaction. A run already held is merged: its
    /// records and cells not yet stored are added (the shards of one `run --shard K/N
    /// --run-id ID` import into one run this way); returns how many were new, so importing
    /// the same file twice adds nothing.
    pub fn import(&mut self, run: &RunData, measure: &str) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let exists: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM runs WHERE run_id = ?1)",
            [&run.run_id],
            |r| r.get(0),
        )?;
        if !exists {
            insert_run(&tx, &run.run_id, measure, &run.env)?;
        }
        let before = count_rows(&tx, &run.run_id)?;
        insert_records(&tx, &run.records, "INSERT OR IGNORE")?;
        for c in &run.cells {
            insert_cell(&tx, c, "INSERT OR IGNORE")?;
        }
        let added = count_rows(&tx, &run.run_id)? - before;
        tx.execute(
            "UPDATE runs SET finished = started WHERE run_id = ?1 AND finished IS NULL",
            [&run.run_id],
        )?;
        tx.commit()?;
        Ok(added)
    }

    pub fn runs(&self) -> Result<Vec<RunRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT r.run_id, r.started, r.finished, r.measure, r.git_revision, r.command,
                    (SELECT COUNT(*) FROM records x WHERE x.run_id = r.run_id)
                      + (SELECT COUNT(*) FROM conformance t WHERE t.run_id = r.run_id),
                    (SELECT COUNT(*) FROM cells c WHERE c.run_id = r.run_id)
             FROM runs r ORDER BY r.started, r.run_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(RunRow {
                run_id: r.get(0)?,
                started: r.get(1)?,
                finished: r.get(2)?,
                measure: r.get(3)?,
                git_revision: r.get(4)?,
                command: r.get(5)?,
                records: r.get(6)?,
                not_measured: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The newest run of a kind.
    pub fn latest_run(&self, kind: RunKind) -> Result<Option<String>> {
        // Allocator variants are named `impl+allocator`; a main run has none.
        const VARIANT: &str =
            "EXISTS (SELECT 1 FROM records v WHERE v.run_id = r.run_id AND (v.client LIKE '%+%' OR v.server LIKE '%+%'))";
        // A companion build with symbols (`impl+symbols`) only explains a system library.
        const SYMBOLS: &str =
            "EXISTS (SELECT 1 FROM records v WHERE v.run_id = r.run_id AND (v.client LIKE '%+symbols' OR v.server LIKE '%+symbols'))";
        // A plan run (`tlsmatrix run --plan NAME`, its newest found by `latest_plan_run`) is
        // known by its command line, which the run stores, and is never the main run.
        const PLAN: &str = "(r.command LIKE '% --plan %' OR r.command LIKE '% --plan=%')";
        // A twin run (`--pairs twins`) pairs each impl with itself on two scenarios; no
        // factor between impls comes from it, so it is never the main run either.
        const TWINS: &str =
            "(r.command LIKE '% --pairs twins%' OR r.command LIKE '% --pairs=twins%')";
        let condition = match kind {
            RunKind::Any => "1".to_string(),
            RunKind::Matrix => format!(
                "r.measure = 'time' AND x.scenario NOT LIKE 'libp2p-%' AND x.scenario NOT LIKE 'memory-%' AND x.scenario NOT LIKE 'throughput-%' AND NOT {VARIANT} AND NOT {PLAN} AND NOT {TWINS}"
            ),
            RunKind::Twins => format!("r.measure = 'time' AND {TWINS}"),
            RunKind::Allocators => format!(
                "r.measure = 'time' AND (x.scenario LIKE 'bulk-%' OR x.scenario LIKE 'handshake-%') AND {VARIANT}"
            ),
            // A measure's name is one of the table's, never a user's text.
            RunKind::Measured(m) => format!("r.measure = '{}' AND NOT {SYMBOLS}", m.as_str()),
            RunKind::Symbols(m) => format!("r.measure = '{}' AND {SYMBOLS}", m.as_str()),
            RunKind::Memory => "x.scenario LIKE 'memory-%'".into(),
            RunKind::Throughput => "x.scenario LIKE 'throughput-%'".into(),
            RunKind::Libp2p => "x.scenario LIKE 'libp2p-%'".into(),
        };
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT r.run_id FROM runs r WHERE EXISTS
                       (SELECT 1 FROM records x WHERE x.run_id = r.run_id AND {condition})
                     ORDER BY r.started DESC, r.run_id DESC LIMIT 1"
                ),
                [],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// The newest run of the named plan (`tlsmatrix run --plan NAME`), known by its command.
    pub fn latest_plan_run(&self, plan: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT r.run_id FROM runs r
                 WHERE r.measure = 'time'
                   AND (r.command LIKE '% --plan ' || ?1 || ' %' OR r.command LIKE '% --plan ' || ?1
                        OR r.command LIKE '% --plan=' || ?1 || ' %' OR r.command LIKE '% --plan=' || ?1)
                   AND EXISTS (SELECT 1 FROM records x WHERE x.run_id = r.run_id)
                 ORDER BY r.started DESC, r.run_id DESC LIMIT 1",
                [plan],
                |r| r.get(0),
            )
            .optional()?)
    }

    pub fn load(&self, run_id: &str) -> Result<RunData> {
        let env_row = self
            .conn
            .query_row(
                "SELECT started, finished, command, git_revision, cpu_model, cores, kernel, compilers
                 FROM runs WHERE run_id = ?1",
                [run_id],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, i64>(5)?,
                        r.get::<_, String>(6)?,
                        r.get::<_, String>(7)?,
                    ))
                },
            )
            .optional()?;
        let Some((started, finished, command, git_revision, cpu_model, cores, kernel, compilers)) =
            env_row
        else {
            bail!(
                "no run '{run_id}' in {}; `tlsmatrix history` lists the runs",
                self.path.display()
            );
        };
        let env = Env {
            cpu_model,
            cores: cores as usize,
            kernel,
            compilers: serde_json::from_str(&compilers).unwrap_or_default(),
            git_revision,
            timestamp: started,
            command,
        };
        let mut stmt = self.conn.prepare(
            "SELECT scenario, client, server, client_version, server_version, metric, unit,
                    samples, median, min, ci_low, ci_high, pairing
             FROM records WHERE run_id = ?1 ORDER BY rowid",
        )?;
        let records = stmt
            .query_map([run_id], |r| {
                Ok((
                    [
                        r.get::<_, String>(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                        r.get(7)?,
                    ],
                    [r.get::<_, f64>(8)?, r.get(9)?, r.get(10)?, r.get(11)?],
                    r.get::<_, String>(12)?,
                ))
            })?
            .map(|row| {
                let (
                    [scenario, client, server, cv, sv, metric, unit, samples],
                    [med, min, lo, hi],
                    pairing,
                ) = row?;
                let pairing: Pairing = serde_json::from_str(&pairing)
                    .with_context(|| format!("run {run_id}: unreadable pairing"))?;
                Ok(Record {
                    schema: SCHEMA.into(),
                    run_id: run_id.into(),
                    scenario,
                    client,
                    server,
                    client_version: cv,
                    server_version: sv,
                    metric: metric
                        .parse()
                        .map_err(|e: String| anyhow::anyhow!("run {run_id}: {e}"))?,
                    unit,
                    samples: serde_json::from_str(&samples)
                        .with_context(|| format!("run {run_id}: unreadable samples"))?,
                    median: med,
                    min,
                    ci_low: lo,
                    ci_high: hi,
                    env: env.clone(),
                    blocks: pairing.blocks,
                    paired: pairing.paired,
                    trace: pairing.trace,
                    weather: pairing.weather,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut stmt = self.conn.prepare(
            "SELECT scenario, client, server, outcome, reason FROM cells WHERE run_id = ?1 ORDER BY rowid",
        )?;
        let cells = stmt
            .query_map([run_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                ))
            })?
            .map(|row| {
                let (scenario, client, server, outcome, reason) = row?;
                Ok(CellRecord {
                    schema: CELL_SCHEMA.into(),
                    run_id: run_id.into(),
                    scenario,
                    client,
                    server,
                    outcome: serde_json::from_value(serde_json::Value::String(outcome))
                        .with_context(|| format!("run {run_id}: unknown cell outcome"))?,
                    reason,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(RunData {
            run_id: run_id.into(),
            env,
            status: if finished.is_some() {
                "complete"
            } else {
                "incomplete"
            }
            .into(),
            records,
            cells,
        })
    }
}

/// How a record's samples were paired (and a wire record's flights), as stored in one column.
#[derive(serde::Serialize, serde::Deserialize, Default)]
struct Pairing {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    blocks: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    paired: Option<Paired>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trace: Option<Trace>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    weather: Vec<BlockWeather>,
}

fn insert_run(tx: &Transaction, run_id: &str, measure: &str, env: &Env) -> Result<()> {
    tx.execute(
        "INSERT INTO runs (run_id, started, measure, command, git_revision, cpu_model, cores,
                           kernel, compilers)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            run_id,
            env.timestamp,
            measure,
            env.command,
            env.git_revision,
            env.cpu_model,
            env.cores as i64,
            env.kernel,
            serde_json::to_string(&env.compilers)?,
        ],
    )
    .with_context(|| format!("cannot record run {run_id}"))?;
    Ok(())
}

/// Records and cells stored for a run.
fn count_rows(tx: &Transaction, run_id: &str) -> Result<usize> {
    Ok(tx.query_row(
        "SELECT (SELECT COUNT(*) FROM records WHERE run_id = ?1) + (SELECT COUNT(*) FROM cells WHERE run_id = ?1)",
        [run_id],
        |r| r.get::<_, i64>(0),
    )? as usize)
}

/// `verb`: `INSERT OR REPLACE` while a run writes its own cells, `INSERT OR IGNORE` when a
/// file is merged into a stored run.
fn insert_records(tx: &Transaction, records: &[Record], verb: &str) -> Result<()> {
    let mut stmt = tx.prepare(&format!(
        "{verb} INTO records (run_id, scenario, client, server, client_version,
             server_version, metric, unit, samples, median, min, ci_low, ci_high, pairing)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
    ))?;
    for r in records {
        stmt.execute(params![
            r.run_id,
            r.scenario,
            r.client,
            r.server,
            r.client_version,
            r.server_version,
            r.metric.as_str(),
            r.unit,
            serde_json::to_string(&r.samples)?,
            r.median,
            r.min,
            r.ci_low,
            r.ci_high,
            serde_json::to_string(&Pairing {
                blocks: r.blocks.clone(),
                paired: r.paired.clone(),
                trace: r.trace.clone(),
                weather: r.weather.clone(),
            })?,
        ])?;
    }
    Ok(())
}

fn insert_cell(tx: &Transaction, c: &CellRecord, verb: &str) -> Result<()> {
    tx.execute(
        &format!(
            "{verb} INTO cells (run_id, scenario, client, server, outcome, reason)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
        ),
        params![
            c.run_id,
            c.scenario,
            c.client,
            c.server,
            c.outcome.as_str(),
            c.reason
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::RecordFixture;
    use tlsmatrix_model::record::{CellStatus, Metric};

    fn record(run: &str, median: f64) -> Record {
        RecordFixture::new(Metric::ClientCpuNs, median)
            .run(run)
            .samples(vec![median - 1.0, median, median + 1.0])
            .build()
    }

    fn temp_db(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tlsmatrix-store-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let p = dir.join(name);
        let _ = std::fs::remove_file(&p);
        p
    }

    #[test]
    fn a_run_round_trips_and_an_unfinished_one_is_incomplete() {
        let path = temp_db("rt.db");
        let mut s = Store::open(&path).unwrap();
        // Blocks, pairing and the blocks' weather ride in one column and must come back.
        let r = Record {
            blocks: vec![0, 0, 1],
            paired: Some(Paired {
                reference_client: "b".into(),
                reference_server: "b".into(),
                reference_scenario: None,
                ratios: vec![0.5, 0.6],
                blocks: vec![0, 1],
            }),
            weather: vec![BlockWeather {
                block: 1,
                weather: tlsmatrix_model::weather::Weather {
                    cache_ns: 120.0,
                    memory_ns: 180.0,
                },
            }],
            ..record("r1", 100.0)
        };
        s.begin_run("r1", "time", &r.env).unwrap();
        s.add_cell(std::slice::from_ref(&r), None).unwrap();
        let cell = CellRecord {
            schema: CELL_SCHEMA.into(),
            run_id: "r1".into(),
            scenario: "x".into(),
            client: "a".into(),
            server: "b".into(),
            outcome: CellStatus::Unsupported,
            reason: "different drivers".into(),
        };
        s.add_cell(&[], Some(&cell)).unwrap();
        // Killed here: reopening finds everything written so far, marked incomplete.
        drop(s);
        let s = Store::open_existing(&path).unwrap();
        let run = s.load("r1").unwrap();
        assert_eq!(run.status, "incomplete");
        assert_eq!(run.records, vec![r]);
        assert_eq!(run.cells, vec![cell]);
        let mut s = s;
        s.finish_run("r1", "2026-11-23T10:05:00Z").unwrap();
        assert_eq!(s.load("r1").unwrap().status, "complete");
        assert_eq!(s.runs().unwrap()[0].records, 1);
        assert_eq!(s.latest_run(RunKind::Any).unwrap().as_deref(), Some("r1"));
        assert_eq!(
            s.latest_run(RunKind::Matrix).unwrap().as_deref(),
            Some("r1")
        );
        assert_eq!(s.latest_run(RunKind::Libp2p).unwrap(), None);
    }

    #[test]
    fn a_companion_run_is_never_a_measure_s_main_run() {
        let path = temp_db("symbols.db");
        let mut s = Store::open(&path).unwrap();
        for (id, imp, started) in [
            ("main", "openssl-3.0", "2026-11-23T10:00:00Z"),
            ("named", "openssl-3.0+symbols", "2026-11-23T11:00:00Z"),
        ] {
            let mut r = record(id, 100.0);
            r.client = imp.into();
            r.server = imp.into();
            r.env.timestamp = started.into();
            s.begin_run(id, "instructions", &r.env).unwrap();
            s.add_cell(std::slice::from_ref(&r), None).unwrap();
            s.finish_run(id, started).unwrap();
        }
        let m = Measure::Instructions;
        assert_eq!(
            s.latest_run(RunKind::Measured(m)).unwrap().as_deref(),
            Some("main")
        );
        assert_eq!(
            s.latest_run(RunKind::Symbols(m)).unwrap().as_deref(),
            Some("named")
        );
        assert_eq!(
            s.latest_run(RunKind::Symbols(Measure::Profile)).unwrap(),
            None
        );
    }

    #[test]
    fn a_plan_run_is_never_taken_for_the_main_run() {
        let path = temp_db("plan.db");
        let mut s = Store::open(&path).unwrap();
        for (id, command, started) in [
            ("main", "tlsmatrix run --runs 60", "2026-11-23T10:00:00Z"),
            (
                "plan",
                "tlsmatrix run --plan rustls-report --lanes 2",
                "2026-11-23T11:00:00Z",
            ),
        ] {
            let mut r = record(id, 100.0);
            r.env.command = command.into();
            r.env.timestamp = started.into();
            s.begin_run(id, "time", &r.env).unwrap();
            s.add_cell(std::slice::from_ref(&r), None).unwrap();
            s.finish_run(id, started).unwrap();
        }
        assert_eq!(
            s.latest_run(RunKind::Matrix).unwrap().as_deref(),
            Some("main")
        );
        assert_eq!(
            s.latest_plan_run("rustls-report").unwrap().as_deref(),
            Some("plan")
        );
        // A plan is matched by its whole name, not a prefix of it.
        assert_eq!(s.latest_plan_run("rustls").unwrap(), None);
    }

    #[test]
    fn import_is_idempotent_and_unknown_runs_are_named() {
        let path = temp_db("import.db");
        let mut s = Store::open(&path).unwrap();
        let r = record("g1", 5.0);
        let run = RunData {
            run_id: "g1".into(),
            env: r.env.clone(),
            status: "file".into(),
            records: vec![r],
            cells: vec![],
        };
        assert_eq!(s.import(&run, "time").unwrap(), 1);
        assert_eq!(s.import(&run, "time").unwrap(), 0);
        // A second shard of the same run merges into it.
        let mut other = record("g1", 6.0);
        other.client = "b".into();
        let shard = RunData {
            records: vec![other],
            ..run.clone()
        };
        assert_eq!(s.import(&shard, "time").unwrap(), 1);
        assert_eq!(s.runs().unwrap().len(), 1);
        assert_eq!(s.load("g1").unwrap().records.len(), 2);
        let e = s.load("nope").unwrap_err().to_string();
        assert!(e.contains("no run 'nope'"), "{e}");
        let e = Store::open_existing(&temp_db("missing.db")).err().unwrap();
        assert!(e.to_string().contains("no history database"), "{e}");
    }
}
