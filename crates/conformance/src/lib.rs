//! Conformance: BoringSSL's BoGo runner against each impl's shim (`tlsmatrix-driver bogo-shim`,
//! the same adapters the benchmarks measure), one runner process per impl, every test's outcome
//! classified as passed, failed (with the runner's message), unimplemented (a flag the shim
//! does not honour, or outside tlsmatrix's scope) or a known deviation of the library.

pub mod config;
pub mod family;
pub mod flag_table;
pub mod quick;
pub mod runner;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use tlsmatrix_model::glob;

use config::Expectations;

/// The schema of every line of the conformance results file.
pub const SCHEMA: &str = "tlsmatrix.conformance/1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Passed,
    Failed,
    Unimplemented,
    Deviation,
}

impl Outcome {
    pub const ALL: [Outcome; 4] = [
        Outcome::Passed,
        Outcome::Failed,
        Outcome::Unimplemented,
        Outcome::Deviation,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Unimplemented => "unimplemented",
            Outcome::Deviation => "deviation",
        }
    }
}

/// One test's result for one impl.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResult {
    pub test: String,
    pub family: String,
    pub outcome: Outcome,
    /// The runner's message for a failure; the reason for a deviation or an unimplemented test.
    pub reason: String,
}

/// An impl to test: its name, exact version, and the driver that contains it.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    pub version: String,
    pub driver: PathBuf,
    /// The front shim (`tlsmatrix-bogo-shim`) for a driver that reads the flag table of
    /// `tlsmatrix_model::bogo_flags`; none for the Go driver, whose shim has its own.
    pub front: Option<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct Options {
    /// Test-name patterns (`*`, `?`); empty for every test.
    pub tests: Vec<String>,
    /// Shard K of N (1-based), as the runner shards: every Nth test from the Kth.
    pub shard: (u32, u32),
    /// Tests run at once (the runner's workers).
    pub jobs: usize,
    /// The whole run of one impl is killed after this.
    pub limit: Duration,
    /// The runner's own limit on each wait of a test.
    pub idle_timeout: Duration,
    /// Where shims and the runner's output go.
    pub work: PathBuf,
}

/// One impl's run.
#[derive(Debug)]
pub struct ImplRun {
    pub results: Vec<TestResult>,
    /// Deviation patterns that matched no failing test.
    pub stale: Vec<String>,
    pub seconds: f64,
}

/// The runner's JSON output (Chromium's test results format).
#[derive(Deserialize)]
struct RunnerOutput {
    tests: BTreeMap<String, RunnerResult>,
}

#[derive(Deserialize)]
struct RunnerResult {
    actual: String,
    #[serde(default)]
    error: String,
}

/// The shim the runner starts: the front shim through a link named after the impl, beside
/// a file naming its driver; or, for a driver with a flag table of its own, a script that
/// runs the driver as a BoGo shim.
fn write_shim(target: &Target, dir: &Path) -> Result<PathBuf> {
    fs::create_dir_all(dir)?;
    if let Some(front) = &target.front {
        let link = dir.join(&target.name);
        let _ = fs::remove_file(&link);
        std::os::unix::fs::symlink(front, &link)
            .with_context(|| format!("cannot link {} to {}", link.display(), front.display()))?;
        let named = dir.join(format!("{}.driver", target.name));
        fs::write(&named, format!("{}\n", target.driver.display()))
            .with_context(|| format!("cannot write {}", named.display()))?;
        return Ok(link);
    }
    let path = dir.join(format!("{}.sh", target.name));
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let script = format!(
        "#!/bin/sh\nexec {} bogo-shim --impl {} -- \"$@\"\n",
        quote(&target.driver.to_string_lossy()),
        quote(&target.name)
    );
    fs::write(&path, script).with_context(|| format!("cannot write {}", path.display()))?;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755))?;
    Ok(path)
}

/// The runner's messages run to many lines (both sides' stderr); the first lines say it.
fn short_message(error: &str) -> String {
    const MAX: usize = 600;
    let text = error.trim();
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{} ...", &text[..i]),
        None => text.to_string(),
    }
}

/// Classifies the runner's verdicts. Tests the runner never reported (a run killed at its
/// limit) are absent.
pub fn classify(
    verdicts: impl IntoIterator<Item = (String, String, String)>,
    expect: &Expectations,
) -> (Vec<TestResult>, Vec<String>) {
    let mut used = BTreeSet::new();
    let mut out = Vec::new();
    for (test, actual, error) in verdicts {
        let scope = expect.out_of_scope(&test);
        let (outcome, reason) = match actual.as_str() {
            "PASS" => (Outcome::Passed, String::new()),
            // The shim's own reason where it left one (`error` holds it for these).
            "SKIP" => (
                Outcome::Unimplemented,
                match (scope, error.is_empty()) {
                    (Some((_, why)), _) => why.to_string(),
                    (None, false) => error,
                    (None, true) => "the shim does not honour one of the test's flags".into(),
                },
            ),
            _ => match (
                scope,
                expect
                    .deviation(&test)
                    .or_else(|| expect.deviation_by_message(&error)),
            ) {
                (Some((_, why)), _) => (Outcome::Unimplemented, why.to_string()),
                (None, Some((pattern, why))) => {
                    used.insert(pattern.to_string());
                    (Outcome::Deviation, why.to_string())
                }
                (None, None) => (Outcome::Failed, short_message(&error)),
            },
        };
        out.push(TestResult {
            family: family::of(&test).to_string(),
            test,
            outcome,
            reason,
        });
    }
    out.sort_by(|a, b| a.test.cmp(&b.test));
    let stale = expect
        .deviation_patterns()
        .filter(|p| !used.contains(*p))
        .map(str::to_string)
        .collect();
    (out, stale)
}

/// Verdicts from the runner's `-pipe` lines, for a run killed before it wrote its JSON.
fn verdict_of_line(line: &str) -> Option<(String, &'static str)> {
    let (status, rest) = line.split_once(" (")?;
    let name = rest.strip_suffix(')')?.to_string();
    let actual = match status {
        "PASSED" => "PASS",
        "FAILED" => "FAIL",
        "UNIMPLEMENTED" => "SKIP",
        _ => return None,
    };
    Some((name, actual))
}

/// The runner's temporary folder (its TMPDIR), beside its JSON output and removed when
/// dropped: the runner writes its test keys and certificates to a folder it removes only when
/// it ends well, and it ends with os.Exit (which skips Go's deferred removal) when a test
/// fails, so each run left a `testing-certs*` folder in /tmp.
struct RunnerTmp(PathBuf);

impl RunnerTmp {
    fn beside(json: &Path) -> Result<Self> {
        let dir = json.with_extension("tmp");
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(RunnerTmp(dir))
    }
}

impl Drop for RunnerTmp {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// The runner's command line against `shim`: the selection of `opts` (`tests`, the shard),
/// less the tests that match a pattern of `skip`.
fn runner_command(
    runner: &Path,
    shim: &Path,
    json: &Path,
    tmp: &RunnerTmp,
    opts: &Options,
    tests: &[String],
    skip: &[&str],
) -> Command {
    let mut cmd = Command::new(runner);
    cmd.env("TMPDIR", &tmp.0);
    cmd.arg("-shim-path")
        .arg(shim)
        .args(["-pipe", "-allow-unimplemented", "-loose-errors"])
        .arg("-json-output")
        .arg(json)
        .arg("-num-workers")
        .arg(opts.jobs.to_string())
        .arg("-idle-timeout")
        .arg(format!("{}s", opts.idle_timeout.as_secs().max(1)))
        .current_dir(json.parent().unwrap_or(Path::new(".")));
    if !tests.is_empty() {
        cmd.arg("-test").arg(tests.join(";"));
    }
    if !skip.is_empty() {
        cmd.arg("-skip").arg(skip.join(";"));
    }
    if opts.shard.1 > 1 {
        cmd.env("TEST_SHARD_INDEX", (opts.shard.0 - 1).to_string())
            .env("TEST_TOTAL_SHARDS", opts.shard.1.to_string());
    }
    cmd
}

/// The tests of `opts`'s selection that are not run (other transports: see
/// [`Expectations::not_run_patterns`]), listed by the runner itself: it runs just those
/// against a stub shim that answers "unimplemented" at once. About 1.5 s for all of them,
/// instead of a real shim's start per test and impl.
pub fn not_run_tests(runner: &Path, opts: &Options) -> Result<Vec<String>> {
    let expect = Expectations::for_impl("")?;
    let patterns: Vec<String> = expect.not_run_patterns().map(str::to_string).collect();
    if patterns.is_empty() {
        return Ok(Vec::new());
    }
    let dir = opts.work.join("shims");
    fs::create_dir_all(&dir)?;
    let stub = dir.join("not-run.sh");
    fs::write(
        &stub,
        concat!(
            "#!/bin/sh\n",
            "for a in \"$@\"; do [ \"$a\" = -is-handshaker-supported ] && { echo No; exit 0; }; done\n",
            "exit 89\n",
        ),
    )
    .with_context(|| format!("cannot write {}", stub.display()))?;
    fs::set_permissions(&stub, fs::Permissions::from_mode(0o755))?;
    let out_dir = opts.work.join("out");
    fs::create_dir_all(&out_dir)?;
    let json = out_dir.join("not-run.json");
    let _ = fs::remove_file(&json);
    let tmp = RunnerTmp::beside(&json)?;
    let out = runner_command(runner, &stub, &json, &tmp, opts, &patterns, &[])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot start BoGo's runner {}", runner.display()))?;
    let Ok(text) = fs::read_to_string(&json) else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("No tests run") {
            return Ok(Vec::new());
        }
        anyhow::bail!(
            "BoGo's runner wrote no listing of the tests it skips ({}): {}",
            out.status,
            stderr.trim()
        );
    };
    let listing: RunnerOutput = serde_json::from_str(&text)
        .with_context(|| format!("{} is not the runner's JSON output", json.display()))?;
    Ok(listing
        .tests
        .into_keys()
        .filter(|t| opts.tests.is_empty() || opts.tests.iter().any(|p| glob::matches(p, t)))
        .collect())
}

/// Runs the runner against one impl's shim; `on_test` is called as each test finishes.
/// `not_run` ([`not_run_tests`]) are recorded as unimplemented, for the reason in scope.json,
/// without being started.
pub fn run_impl(
    runner: &Path,
    target: &Target,
    opts: &Options,
    not_run: &[String],
    mut on_test: impl FnMut(),
) -> Result<ImplRun> {
    let started = Instant::now();
    let expect = Expectations::for_impl(&target.name)?;
    let shim = write_shim(target, &opts.work.join("shims"))?;
    let out_dir = opts.work.join("out");
    fs::create_dir_all(&out_dir)?;
    let json = out_dir.join(format!("{}.json", target.name));
    let _ = fs::remove_file(&json);
    let skip: Vec<&str> = expect.not_run_patterns().collect();
    let reasons = opts.work.join("reasons").join(&target.name);
    let _ = fs::remove_dir_all(&reasons);
    fs::create_dir_all(&reasons).with_context(|| format!("cannot create {}", reasons.display()))?;
    let tmp = RunnerTmp::beside(&json)?;
    let mut cmd = runner_command(runner, &shim, &json, &tmp, opts, &opts.tests, &skip);
    cmd.env(tlsmatrix_model::bogo_flags::REASONS_DIR_ENV, &reasons);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Its own process group, so a kill at the limit takes every shim with it; and it ends
    // with tlsmatrix, its shims then finding it gone.
    cmd.process_group(0);
    tlsmatrix_registry::child::ends_with_parent(&mut cmd);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start BoGo's runner {}", runner.display()))?;
    let pid = child.id() as i32;
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let (tx, rx) = mpsc::channel::<Option<(String, &'static str)>>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(v) = verdict_of_line(&line) {
                let _ = tx.send(Some(v));
            }
        }
        let _ = tx.send(None);
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut text);
        text
    });
    let deadline = started + opts.limit;
    let mut seen: Vec<(String, &'static str)> = Vec::new();
    let mut killed = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left.max(Duration::from_millis(1))) {
            Ok(Some(v)) => {
                seen.push(v);
                on_test();
            }
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // SAFETY: signals the runner's process group, which holds only it and its shims.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
                killed = true;
                break;
            }
        }
    }
    let status = child.wait()?;
    let _ = reader.join();
    let runner_stderr = err_reader.join().unwrap_or_default();
    if killed {
        let limit = opts.limit.as_secs();
        let verdicts = seen.into_iter().map(|(t, a)| {
            (
                t,
                a.to_string(),
                format!("(the run was killed at its {limit} s limit; message lost)"),
            )
        });
        let (results, _) = classify(verdicts, &expect);
        anyhow::bail!(
            "BoGo's runner for {} passed its limit of {limit} s and was killed after {} tests ({} passed)",
            target.name,
            results.len(),
            results.iter().filter(|r| r.outcome == Outcome::Passed).count()
        );
    }
    let not_run: Vec<TestResult> = not_run
        .iter()
        .map(|test| TestResult {
            family: family::of(test).to_string(),
            test: test.clone(),
            outcome: Outcome::Unimplemented,
            reason: expect
                .out_of_scope(test)
                .map_or("not run", |s| s.1)
                .to_string(),
        })
        .collect();
    if runner_stderr.contains("No tests run") {
        if !not_run.is_empty() {
            return Ok(ImplRun {
                results: not_run,
                stale: Vec::new(),
                seconds: started.elapsed().as_secs_f64(),
            });
        }
        anyhow::bail!(
            "--test {} matches no test of BoGo's runner (names look like Basic-Client-NoTicket-TLS-Sync)",
            opts.tests.join(",")
        );
    }
    let text = fs::read_to_string(&json).with_context(|| {
        format!(
            "BoGo's runner for {} wrote no results ({status}): {}",
            target.name,
            runner_stderr.trim()
        )
    })?;
    let output: RunnerOutput = serde_json::from_str(&text)
        .with_context(|| format!("{} is not the runner's JSON output", json.display()))?;
    let verdicts = output.tests.into_iter().map(|(t, r)| {
        // An unimplemented test's message is the shim's reason, if it left one.
        let error = match r.actual.as_str() {
            "SKIP" => fs::read_to_string(reasons.join(&t)).unwrap_or_default(),
            _ => r.error,
        };
        (t, r.actual, error)
    });
    let (mut results, stale) = classify(verdicts, &expect);
    results.extend(not_run);
    results.sort_by(|a, b| a.test.cmp(&b.test));
    Ok(ImplRun {
        results,
        stale,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Counts per outcome.
pub fn tally(results: &[TestResult]) -> BTreeMap<Outcome, usize> {
    let mut t: BTreeMap<Outcome, usize> = Outcome::ALL.iter().map(|o| (*o, 0)).collect();
    for r in results {
        *t.entry(r.outcome).or_default() += 1;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unimplemented_test_keeps_the_shims_reason_unless_out_of_scope() {
        let expect = Expectations::for_impl("rustls-ring").unwrap();
        let (r, _) = classify(
            [
                (
                    "A".to_string(),
                    "SKIP".to_string(),
                    "unimplemented: -x".to_string(),
                ),
                ("B".to_string(), "SKIP".to_string(), String::new()),
                (
                    "DTLS-C".to_string(),
                    "SKIP".to_string(),
                    "unimplemented: -y".to_string(),
                ),
            ],
            &expect,
        );
        assert_eq!(r[0].reason, "unimplemented: -x");
        assert_eq!(
            r[1].reason,
            "the shim does not honour one of the test's flags"
        );
        assert!(r[2].reason.starts_with("DTLS"), "{}", r[2].reason);
    }

    #[test]
    fn pipe_lines_give_verdicts() {
        assert_eq!(
            verdict_of_line("PASSED (Basic-Client-Sync)"),
            Some(("Basic-Client-Sync".into(), "PASS"))
        );
        assert_eq!(verdict_of_line("UNIMPLEMENTED (X-Y)").unwrap().1, "SKIP");
        assert_eq!(verdict_of_line("14/0/20/40/8000"), None);
    }

    #[test]
    fn failures_are_classified_by_scope_then_deviation() {
        let expect = Expectations::for_impl("no-such-impl").unwrap();
        let (r, stale) = classify(
            [
                ("A-TLS1".to_string(), "FAIL".to_string(), "x".to_string()),
                ("B".to_string(), "FAIL".to_string(), "boom".to_string()),
                ("C".to_string(), "SKIP".to_string(), String::new()),
                ("D".to_string(), "PASS".to_string(), String::new()),
            ],
            &expect,
        );
        let got: Vec<_> = r.iter().map(|t| (t.test.as_str(), t.outcome)).collect();
        assert_eq!(
            got,
            [
                ("A-TLS1", Outcome::Unimplemented),
                ("B", Outcome::Failed),
                ("C", Outcome::Unimplemented),
                ("D", Outcome::Passed)
            ]
        );
        assert_eq!(r[1].reason, "boom");
        assert!(stale.is_empty());
    }

    /// A deviation keyed by the runner's error text (wolfSSL's missing compatibility-mode
    /// change_cipher_spec) covers any test that fails with it, and only those.
    #[test]
    fn a_deviation_can_be_known_by_the_runners_error() {
        let expect = Expectations::for_impl("wolfssl").unwrap();
        let ccs = "local: \"tls: error invalid TLS 1.3 ChangeCipherSpec: 170303001755\"";
        let (r, stale) = classify(
            [
                (
                    "KeyUpdate-ToServer".to_string(),
                    "FAIL".to_string(),
                    ccs.to_string(),
                ),
                (
                    "KeyUpdate-ToClient".to_string(),
                    "FAIL".to_string(),
                    "bad record MAC".to_string(),
                ),
            ],
            &expect,
        );
        // Sorted by name: KeyUpdate-ToClient (bad record MAC), then KeyUpdate-ToServer.
        assert_eq!(r[0].outcome, Outcome::Failed, "{}", r[0].reason);
        assert_eq!(r[1].outcome, Outcome::Deviation);
        assert!(
            r[1].reason.contains("WOLFSSL_TLS13_MIDDLEBOX_COMPAT"),
            "{}",
            r[1].reason
        );
        // The message matched, so it is not stale; the name patterns were not.
        assert!(
            !stale.iter().any(|p| p.contains("ChangeCipherSpec")),
            "{stale:?}"
        );
        assert!(
            stale.contains(&"VersionNegotiation-Client2-*".to_string()),
            "{stale:?}"
        );
    }
}
