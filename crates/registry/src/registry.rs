//! Finding driver binaries, asking them what they contain, and running one cell in one.
//!
//! Drivers are the executables named `tlsmatrix-driver*` beside the `tlsmatrix` binary (or in
//! `$TLSMATRIX_DRIVER_DIR`). Each links at most one libssl-ABI library, so a run may spawn
//! several different drivers; the CLI itself links no TLS library at all.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tlsmatrix_model::allocator::Allocator;
use tlsmatrix_model::measure::Tool;
use tlsmatrix_model::protocol::{DriverInfo, DriverMessage, Measure};
use tlsmatrix_model::variant::Variant;

/// A driver binary, the allocator its process routes malloc to, and the companion folder
/// its libraries are loaded from instead of the system's, if any: two impls can share an
/// in-memory pair only when all three are the same.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Driver {
    pub path: PathBuf,
    pub allocator: Allocator,
    /// A companion build's folder (`<driver folder>/companions/<impl>`): its process loads
    /// the libraries there (LD_LIBRARY_PATH) and runs only `+symbols` impls.
    pub companion: Option<PathBuf>,
}

impl Driver {
    pub fn new(path: impl Into<PathBuf>, allocator: Allocator) -> Driver {
        Driver {
            path: path.into(),
            allocator,
            companion: None,
        }
    }

    /// A command that starts this driver with its allocator and companion; a driver checks
    /// both against the names it is asked to run before it runs anything.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.path);
        self.set_env(&mut cmd);
        cmd
    }

    /// Sets the allocator and the companion folder on a command that starts the driver,
    /// directly or not (under valgrind, whose guest's loader reads LD_LIBRARY_PATH too).
    pub fn set_env(&self, cmd: &mut Command) {
        cmd.env(
            tlsmatrix_model::allocator::ALLOCATOR_ENV,
            self.allocator.name(),
        );
        if let Some(dir) = &self.companion {
            cmd.env(tlsmatrix_model::variant::COMPANION_ENV, dir);
            cmd.env("LD_LIBRARY_PATH", dir);
        }
    }

    /// The binary's file name, with `+allocator` unless it is glibc's, and its companion
    /// folder where it has one.
    pub fn label(&self) -> String {
        let file = self.path.file_name().unwrap_or_default().to_string_lossy();
        let label = match self.allocator {
            Allocator::Glibc => file.into_owned(),
            a => format!("{file}+{}", a.name()),
        };
        match self.companion.as_deref().and_then(Path::file_name) {
            Some(c) => format!("{label} on companions/{}", c.to_string_lossy()),
            None => label,
        }
    }
}

impl std::fmt::Display for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.allocator {
            Allocator::Glibc => write!(f, "{}", self.path.display())?,
            a => write!(f, "{} ({})", self.path.display(), a.name())?,
        }
        match &self.companion {
            Some(dir) => write!(f, " on the companion {}", dir.display()),
            None => Ok(()),
        }
    }
}

/// One impl, where it lives, and the version its driver reported.
#[derive(Debug, Clone)]
pub struct ImplEntry {
    pub name: String,
    pub version: String,
    /// The allocator it runs on (its name says so unless it is glibc's).
    pub allocator: Allocator,
    /// Every driver that holds it at this same version, first by name first: an impl that
    /// links no libssl (rustls) sits beside each OpenSSL release so they can pair in memory.
    pub drivers: Vec<Driver>,
    /// Measures it cannot be taken with (`--measure` value, reason), as its driver said.
    pub refuses: Vec<(String, String)>,
    /// The QUIC stack its driver drives on it, with its exact version; none where it
    /// drives none (`refuses` says why).
    pub quic: Option<String>,
}

impl ImplEntry {
    /// Why this impl cannot be measured this way, if it cannot.
    pub fn refusal(&self, measure: Measure) -> Option<String> {
        self.refuses
            .iter()
            .find(|(m, _)| m == measure.as_str())
            .map(|(_, why)| format!("{}: {why}", self.name))
    }

    /// The first driver (by name) that holds it: where it runs alone.
    pub fn driver(&self) -> &Driver {
        &self.drivers[0]
    }
}

/// A driver holding both impls, so that they can run as one in-memory pair.
pub fn shared_driver<'a>(a: &'a ImplEntry, b: &ImplEntry) -> Option<&'a Driver> {
    a.drivers.iter().find(|d| b.drivers.contains(d))
}

pub struct Registry {
    /// Impl name to entry, in the order drivers listed them.
    pub impls: Vec<ImplEntry>,
}

pub const DRIVER_PREFIX: &str = "tlsmatrix-driver";

pub fn driver_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("TLSMATRIX_DRIVER_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let exe = std::env::current_exe().context("cannot locate the tlsmatrix binary")?;
    Ok(exe
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".")))
}

impl Registry {
    /// Asks every driver found for its impls. A driver that cannot answer is an error: it
    /// is a broken build, and silently skipping it would silently drop its impls.
    pub fn discover() -> Result<Registry> {
        let dir = driver_dir()?;
        let mut drivers: Vec<PathBuf> = std::fs::read_dir(&dir)
            .with_context(|| format!("cannot list driver folder {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| is_driver(p))
            .collect();
        drivers.sort();
        if drivers.is_empty() {
            bail!(
                "no driver binaries ({DRIVER_PREFIX}*) in {}; build them with `make build`",
                dir.display()
            );
        }
        let mut impls: Vec<ImplEntry> = Vec::new();
        for path in drivers {
            let info = driver_info(&Driver::new(&path, Allocator::Glibc))?;
            // Each impl on glibc's malloc, then on each other allocator the driver offers:
            // the same library in a process whose every allocation goes elsewhere.
            let mut variants = vec![(Allocator::Glibc, None)];
            for a in &info.allocators {
                match Allocator::parse(&a.name) {
                    Some(Allocator::Glibc) => {}
                    Some(allocator) => variants.push((allocator, Some(&a.version))),
                    None => bail!(
                        "driver {} offers an allocator '{}' this tlsmatrix does not know; rebuild it",
                        path.display(),
                        a.name
                    ),
                }
            }
            for (allocator, allocator_version) in variants {
                let driver = Driver::new(&path, allocator);
                for i in &info.impls {
                    let name = Variant::on(&i.name, allocator).map_err(|e| {
                        anyhow::anyhow!("driver {} lists an impl {e}", path.display())
                    })?;
                    let version = match allocator_version {
                        None => i.version.clone(),
                        Some(v) => format!("{} + {v}", i.version),
                    };
                    match impls.iter_mut().find(|e| e.name == name) {
                        // The same build of it; another version would be another impl,
                        // which the first driver's claim on the name keeps out.
                        Some(e) if e.version == version => e.drivers.push(driver.clone()),
                        Some(_) => {}
                        None => impls.push(ImplEntry {
                            name,
                            version,
                            allocator,
                            drivers: vec![driver.clone()],
                            refuses: i
                                .refuses
                                .iter()
                                .map(|r| (r.measure.clone(), r.reason.clone()))
                                .collect(),
                            quic: i.quic.clone(),
                        }),
                    }
                }
            }
            companions(&dir, &path, &info, &mut impls)?;
        }
        Ok(Registry { impls })
    }

    /// The impls a run takes when none are named: each as built plain (gcc, glibc's
    /// malloc). Variants run when named (`make report` names a few).
    pub fn defaults(&self) -> impl Iterator<Item = &ImplEntry> {
        self.impls.iter().filter(|e| {
            tlsmatrix_model::variant::Variant::parse(&e.name).is_ok_and(|v| {
                v.compiler.is_none() && v.allocator == Allocator::Glibc && !v.symbols
            })
        })
    }

    pub fn get(&self, name: &str) -> Result<&ImplEntry> {
        self.impls.iter().find(|e| e.name == name).with_context(|| {
            format!(
                "unknown impl '{name}'; available: {} (`tlsmatrix list` shows versions)",
                self.names().join(", ")
            )
        })
    }

    pub fn names(&self) -> Vec<String> {
        self.impls.iter().map(|e| e.name.clone()).collect()
    }
}

fn is_driver(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    // Cargo writes a dependency file (`.d`) beside each binary; release names have dots.
    name.starts_with(DRIVER_PREFIX)
        && !name.ends_with(".d")
        && p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
}

/// The companion builds of a driver's impls (`<dir>/companions/<impl>`, which `make
/// companions` fills), each asked of the driver started on that folder: it lists, under a
/// `+symbols` name, what it loaded from there.
fn companions(
    dir: &Path,
    path: &Path,
    info: &DriverInfo,
    impls: &mut Vec<ImplEntry>,
) -> Result<()> {
    for i in &info.impls {
        let folder = dir.join("companions").join(&i.name);
        if !folder.is_dir() {
            continue;
        }
        let driver = Driver {
            companion: Some(folder.clone()),
            ..Driver::new(path, Allocator::Glibc)
        };
        let found = driver_info(&driver)?;
        if found.impls.is_empty() {
            bail!(
                "driver {} started on the companion folder {} loaded none of its libraries from there: rebuild it (`make companions`) or remove the folder",
                path.display(),
                folder.display()
            );
        }
        for c in found.impls {
            if impls.iter().any(|e| e.name == c.name) {
                continue;
            }
            impls.push(ImplEntry {
                name: c.name,
                version: c.version,
                allocator: Allocator::Glibc,
                drivers: vec![driver.clone()],
                refuses: c
                    .refuses
                    .iter()
                    .map(|r| (r.measure.clone(), r.reason.clone()))
                    .collect(),
                quic: c.quic,
            });
        }
    }
    Ok(())
}

fn driver_info(driver: &Driver) -> Result<DriverInfo> {
    let out = driver
        .command()
        .arg("info")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot start driver {}", driver))?;
    if !out.status.success() {
        bail!(
            "driver {} failed to describe itself: {}",
            driver,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    serde_json::from_slice(&out.stdout)
        .with_context(|| format!("driver {} printed unreadable info", driver))
}

/// What one cell produced, as the driver told it.
#[derive(Debug)]
pub enum CellOutcome {
    Measured {
        client_version: String,
        server_version: String,
        samples: Vec<Vec<(tlsmatrix_model::record::Metric, f64)>>,
        /// A wire cell's median traced connection.
        trace: Option<tlsmatrix_model::trace::Trace>,
    },
    Unsupported(String),
    Failed(String),
}

pub struct CellRequest<'a> {
    pub driver: &'a Driver,
    /// The core the driver is pinned to, when cells run side by side.
    pub core: Option<usize>,
    pub scenario: &'a str,
    pub client: &'a str,
    pub server: &'a str,
    pub certs: &'a Path,
    pub runs: u32,
    pub warmup_ms: u64,
    pub sample_ms: u64,
    /// A driver that prints nothing for this long is killed and its cell fails.
    pub silence_limit: Duration,
    pub measure: Measure,
    /// Where callgrind writes its dumps when counting instructions.
    pub scratch: &'a Path,
}

/// Bytes per bulk sample when counting instructions: counts are exact, so a few MiB suffice
/// where timing needs 64.
const INSTRUCTION_BULK_BYTES: usize = 4 << 20;
/// Handshakes per side in one instruction sample, before the driver raises it to what the
/// handshake needs: whole periods of the cost that repeats (32 on an RSA server: OpenSSL
/// refreshes its blinding every 32 private-key operations) and 64 where ML-DSA signs. Counts
/// are exact: 8 OpenSSL ECDSA handshakes a side gave the 32's count within 0.02% (Go's, whose
/// collector varies, within 0.2%), and a cell under callgrind then took 4.9 s where it took
/// 10.5.
const INSTRUCTION_HANDSHAKES: u32 = 8;

/// The driver's command line, under callgrind when counting instructions.
fn driver_command(req: &CellRequest) -> Command {
    let counted = req.measure.row().tool == Tool::Valgrind;
    let mut cmd = if counted {
        let mut c = Command::new("valgrind");
        // --vgdb=no: no debugger FIFOs in /tmp, which a killed valgrind leaves behind.
        c.args([
            "-q",
            "--vgdb=no",
            "--tool=callgrind",
            "--collect-atstart=no",
            // Nothing instrumented until the first count begins (Counter::zero): the
            // start, the certificates and the warm-up (aws-lc's CPU-jitter seeding alone
            // is about a second under instrumentation) run on valgrind's plain
            // translation, and the counts are the same.
            "--instr-atstart=no",
            // Global bus events (Ge): atomic read-modify-writes, every LOCK-prefixed
            // instruction, counted beside instructions; what a lock costs where no
            // contention shows it.
            "--collect-bus=yes",
        ])
        .arg(format!("--callgrind-out-file={}", callgrind_out(req)))
        .arg(&req.driver.path);
        req.driver.set_env(&mut c);
        // The Go runtime preempts goroutines with signals (SIGURG), and callgrind's
        // signal bookkeeping trips on them (an assertion in vgCallgrind_post_signal) in
        // most runs of the Go driver; without asynchronous preemption it counts cleanly.
        // Drivers that are not Go ignore the variable.
        c.env(
            "GODEBUG",
            with_godebug(std::env::var("GODEBUG").ok(), "asyncpreemptoff=1"),
        );
        c
    } else {
        req.driver.command()
    };
    cmd.args(["run", "--scenario", req.scenario, "--client", req.client])
        .args(["--server", req.server, "--certs"])
        .arg(req.certs)
        .args(["--runs", &req.runs.to_string()])
        .args(["--warmup-ms", &req.warmup_ms.to_string()])
        .args(["--sample-ms", &req.sample_ms.to_string()]);
    if counted {
        cmd.args(["--measure", req.measure.as_str(), "--callgrind-out"])
            .arg(callgrind_out(req))
            .args(["--per-sample", &INSTRUCTION_HANDSHAKES.to_string()])
            .args(["--bulk-bytes", &INSTRUCTION_BULK_BYTES.to_string()]);
    }
    // Time is the driver's default; a counted measure was named above with its settings.
    if req.measure != Measure::Time && !counted {
        cmd.args(["--measure", req.measure.as_str()]);
    }
    // One list of a floor's operations for every driver, whatever its language.
    if req.measure == Measure::Floor {
        // The driver refuses any other scenario in its own words.
        if let Ok(s @ tlsmatrix_model::scenario::Scenario::Handshake(_)) = req.scenario.parse() {
            cmd.args(["--floor-ops", &tlsmatrix_model::floor::encode(&s.params())]);
        }
    }
    if let Some(core) = req.core {
        pin_to_core(&mut cmd, core);
    }
    cmd
}

/// `GODEBUG` with `setting` added after what the user set (the last of a key wins).
fn with_godebug(user: Option<String>, setting: &str) -> String {
    match user {
        Some(u) if !u.is_empty() => format!("{u},{setting}"),
        _ => setting.to_string(),
    }
}

fn callgrind_out(req: &CellRequest) -> String {
    req.scratch.join("callgrind.%p").display().to_string()
}

/// The CPUs this process may run on, in order: lanes are placed on these, so a run started
/// under `taskset -c 2,3` samples on CPUs 2 and 3 rather than on CPUs it was kept off.
pub fn usable_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity writes at most the size of the set it is given.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let got =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| got == 0 && unsafe { libc::CPU_ISSET(c, &set) })
        .collect();
    if cpus.is_empty() {
        vec![0] // the mask could not be read: CPU 0 alone, one lane
    } else {
        cpus
    }
}

/// Pins the process `cmd` starts to one core, so that all its work shares that core's speed
/// and a process beside it on another core cannot take its place.
pub fn pin_to_core(cmd: &mut Command, core: usize) {
    // SAFETY: only sched_setaffinity, which is async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(move || pin_this_thread(core));
    }
}

/// Restricts the calling thread (or, between fork and exec, the new process) to one CPU.
pub fn pin_this_thread(core: usize) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET stays inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(core, &mut set) };
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Checks that valgrind can run before a run that needs it starts.
pub fn check_valgrind() -> Result<()> {
    Command::new("valgrind").arg("--version").output().map_err(|e| {
        anyhow::anyhow!(
            "--measure instructions runs the drivers under valgrind, which cannot be started ({e}); install it (scripts/setup does)"
        )
    })?;
    Ok(())
}

/// Checks that perf can run before a profile run starts.
pub fn check_perf() -> Result<()> {
    Command::new("perf").arg("--version").output().map_err(|e| {
        anyhow::anyhow!(
            "--measure profile attaches `perf record` to each driver, which cannot be started ({e}); install linux-perf (scripts/setup does)"
        )
    })?;
    Ok(())
}

/// A driver process and its output, line by line: its own process group (so a timeout kills
/// whatever it started too), stdout parsed as messages, stderr kept for the failure message.
/// Dropping it kills the group; if tlsmatrix itself is interrupted, the driver exits at its
/// next write to the closed pipe.
pub struct DriverProcess {
    child: std::process::Child,
    /// Its stdin, when it takes steps from it (`group --stepped`).
    stdin: Option<std::process::ChildStdin>,
    lines: mpsc::Receiver<std::io::Result<String>>,
    stderr: Option<std::thread::JoinHandle<String>>,
    silence_limit: Duration,
}

impl DriverProcess {
    pub fn spawn(cmd: Command, silence_limit: Duration) -> Result<DriverProcess, String> {
        Self::spawn_with(cmd, silence_limit, false)
    }

    /// [`DriverProcess::spawn`] with a pipe to its stdin, for [`DriverProcess::step`].
    pub fn spawn_stepped(cmd: Command, silence_limit: Duration) -> Result<DriverProcess, String> {
        Self::spawn_with(cmd, silence_limit, true)
    }

    fn spawn_with(
        mut cmd: Command,
        silence_limit: Duration,
        stepped: bool,
    ) -> Result<DriverProcess, String> {
        let program = cmd.get_program().to_string_lossy().into_owned();
        crate::child::ends_with_parent(&mut cmd);
        let mut child = cmd
            .stdin(if stepped {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start driver {program}: {e}"))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        Ok(DriverProcess {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: Some(stderr),
            silence_limit,
        })
    }

    /// The next message, or why there is none (silence past the limit, exit, garbage).
    pub fn next_message(&mut self) -> Result<DriverMessage, String> {
        match self.lines.recv_timeout(self.silence_limit) {
            Ok(Ok(line)) => serde_json::from_str::<DriverMessage>(&line)
                .map_err(|_| format!("driver printed an unreadable line: {line}")),
            Ok(Err(e)) => Err(format!("cannot read driver output: {e}")),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(format!(
                "timed out: the driver said nothing for {} s",
                self.silence_limit.as_secs()
            )),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Err("the driver exited without finishing".into())
            }
        }
    }

    /// Tells a stepped driver to take its next step.
    pub fn step(&mut self) -> Result<(), String> {
        use std::io::Write;
        let stdin = self.stdin.as_mut().ok_or("the driver takes no steps")?;
        stdin
            .write_all(b"go\n")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("the driver stopped taking steps: {e}"))
    }

    /// Kills the process group and completes a failure message with how the driver ended
    /// and the last thing it wrote to stderr.
    pub fn finish(mut self, failure: Option<String>) -> Option<String> {
        self.kill();
        let status = self.child.wait();
        let stderr_text = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let mut msg = failure?;
        if let Ok(st) = status {
            if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(&st) {
                if sig != libc::SIGKILL {
                    msg.push_str(&format!(" (driver killed by signal {sig})"));
                }
            }
        }
        if let Some(last) = stderr_text.lines().rev().find(|l| !l.trim().is_empty()) {
            msg.push_str(&format!("; driver stderr: {}", last.trim()));
        }
        Some(msg)
    }

    fn kill(&mut self) {
        // SAFETY: kill(2) on the process group the driver leads.
        unsafe {
            libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL);
        }
    }
}

impl Drop for DriverProcess {
    fn drop(&mut self) {
        if self.stderr.is_some() {
            self.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs one cell in a driver process, calling `on_sample` as samples arrive.
pub fn run_cell(req: &CellRequest, on_sample: impl FnMut()) -> CellOutcome {
    run_command(driver_command(req), req.silence_limit, on_sample)
}

/// Runs a driver command that measures one cell (`run`, `ttfb`) and gathers what it says.
pub fn run_command(
    cmd: Command,
    silence_limit: Duration,
    mut on_sample: impl FnMut(),
) -> CellOutcome {
    let mut proc = match DriverProcess::spawn(cmd, silence_limit) {
        Ok(p) => p,
        Err(e) => return CellOutcome::Failed(e),
    };
    let mut versions = None;
    let mut samples = Vec::new();
    let mut trace = None;
    let outcome = loop {
        match proc.next_message() {
            Ok(DriverMessage::Hello {
                client_version,
                server_version,
                ..
            }) => versions = Some((client_version, server_version)),
            Ok(DriverMessage::Sample { values, .. }) => {
                samples.push(values);
                on_sample();
            }
            Ok(DriverMessage::Trace { trace: t, .. }) => trace = Some(t),
            Ok(DriverMessage::Unsupported { reason, .. }) => {
                break CellOutcome::Unsupported(reason)
            }
            Ok(DriverMessage::Error { message, .. }) => break CellOutcome::Failed(message),
            Ok(DriverMessage::Stepped { .. }) => {
                break CellOutcome::Failed("driver stepped in a run that takes no steps".into())
            }
            Ok(DriverMessage::Done) => match versions.take() {
                Some((client_version, server_version)) => {
                    break CellOutcome::Measured {
                        client_version,
                        server_version,
                        samples,
                        trace: trace.take(),
                    }
                }
                None => {
                    break CellOutcome::Failed(
                        "driver finished without saying which versions ran".into(),
                    )
                }
            },
            Err(e) => break CellOutcome::Failed(e),
        }
    };
    // Whatever happened, leave no process behind: the driver and anything it started.
    match outcome {
        CellOutcome::Failed(msg) => CellOutcome::Failed(proc.finish(Some(msg)).unwrap_or_default()),
        other => {
            proc.finish(None);
            other
        }
    }
}

/// Groups the impls of a registry by the driver that holds them, for `list`.
pub fn by_driver(reg: &Registry) -> BTreeMap<Driver, Vec<&ImplEntry>> {
    let mut m: BTreeMap<Driver, Vec<&ImplEntry>> = BTreeMap::new();
    for e in &reg.impls {
        m.entry(e.driver().clone()).or_default().push(e);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under callgrind the Go driver runs without asynchronous preemption, and whatever the
    /// user put in GODEBUG stays, ahead of it.
    #[test]
    fn callgrind_runs_go_without_async_preemption() {
        assert_eq!(with_godebug(None, "asyncpreemptoff=1"), "asyncpreemptoff=1");
        assert_eq!(
            with_godebug(Some(String::new()), "asyncpreemptoff=1"),
            "asyncpreemptoff=1"
        );
        assert_eq!(
            with_godebug(Some("gctrace=1".into()), "asyncpreemptoff=1"),
            "gctrace=1,asyncpreemptoff=1"
        );
    }

    /// The CPUs come from the affinity mask (here a thread's own, which is what
    /// sched_getaffinity(0) reads), not from a count starting at CPU 0.
    #[test]
    fn usable_cpus_follow_the_affinity_mask() {
        let all = usable_cpus();
        assert!(all.windows(2).all(|w| w[0] < w[1]), "{all:?}");
        let last = *all.last().unwrap();
        let seen = std::thread::spawn(move || {
            pin_this_thread(last).unwrap();
            usable_cpus()
        })
        .join()
        .unwrap();
        assert_eq!(seen, vec![last]);
    }
}
