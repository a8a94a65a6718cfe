//! What the integration tests of the `tlsmatrix` binary share: the binary and the drivers
//! built beside it, scratch folders, results-file readers and fake drivers.
#![allow(dead_code)] // each test file uses its own subset

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tlsmatrix_model::record::{Record, SCHEMA};

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tlsmatrix"))
}

/// Where `cargo build --release` put the binary and `make build` the drivers.
pub fn release_dir() -> PathBuf {
    bin().parent().unwrap().to_path_buf()
}

/// One of the repository's scripts (`scripts/NAME`), which make runs.
pub fn repo_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts")
        .join(name)
}

/// Runs `tlsmatrix` with the drivers in `driver_dir`.
pub fn tlsmatrix_with(driver_dir: &Path, args: &[&str]) -> Output {
    assert!(
        driver_dir.join("tlsmatrix-driver").exists(),
        "build the driver first (`make build`); looked in {}",
        driver_dir.display()
    );
    Command::new(bin())
        .args(args)
        .env("TLSMATRIX_DRIVER_DIR", driver_dir)
        .output()
        .unwrap()
}

/// Runs `tlsmatrix` with the real drivers built beside it.
pub fn tlsmatrix(args: &[&str]) -> Output {
    tlsmatrix_with(&release_dir(), args)
}

/// A fresh, empty folder for one test, under the test target's own temporary folder.
pub fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every line of a JSON-lines file, parsed; none when the file is missing.
pub fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The result records of a results file (skipping the lines of unmeasured cells).
pub fn result_records(path: &Path) -> Vec<Record> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| l.contains(&format!("\"schema\":\"{SCHEMA}\"")))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Writes an executable file at `path` (a fake driver, shim or peer, with its own `#!`).
pub fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Writes an executable shell script at `path`.
pub fn script(path: &Path, body: &str) {
    executable(path, &format!("#!/bin/sh\n{body}"));
}

/// A fake `tlsmatrix-driver` in `dir` whose `info` lists one impl at `version` and which
/// otherwise runs `rest` (shell).
pub fn fake_driver(dir: &Path, name: &str, version: &str, rest: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("tlsmatrix-driver");
    script(
        &path,
        &format!(
            "if [ \"$1\" = info ]; then echo '{{\"impls\":[{{\"name\":\"{name}\",\"version\":\"{version}\"}}]}}'; exit 0; fi\n{rest}\n"
        ),
    );
    path
}

/// Every process below `pid`, children first, read from /proc.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut queue = vec![pid];
    while let Some(p) = queue.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let children = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            for c in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                out.push(c);
                queue.push(c);
            }
        }
    }
    out
}

/// Whether a process has ended (gone, or a zombie nobody has reaped yet).
pub fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses, which may hold spaces.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
        Err(_) => true,
    }
}

/// Waits up to `limit` for `tlsmatrix` (started with piped output) to have started a child
/// process; returns its descendants then.
pub fn wait_for_children(child: &mut std::process::Child, limit: std::time::Duration) -> Vec<u32> {
    let until = std::time::Instant::now() + limit;
    loop {
        let below = descendants(child.id());
        if !below.is_empty() || std::time::Instant::now() > until {
            return below;
        }
        if let Ok(Some(st)) = child.try_wait() {
            panic!("tlsmatrix ended before it started a child: {st}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Gives the command the default action for SIGINT and SIGQUIT, which a shell without job
/// control sets to "ignore" for its background commands and every process below inherits,
/// and for SIGHUP and SIGTERM, which `nohup` and some CI runners ignore: a test of what
/// tlsmatrix does on a signal must not depend on how the tests were started (under `nohup
/// make test`, SIGHUP reached a `peer server` that ignored it).
pub fn default_signals(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: signal(2) is async-signal-safe, the one call made between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            for s in [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP, libc::SIGTERM] {
                libc::signal(s, libc::SIG_DFL);
            }
            Ok(())
        })
    }
}

/// Sends `signal` to `child` (tlsmatrix) and checks that it and every process it had
/// started (`below`) end within a few seconds.
pub fn signal_ends_the_tree(child: &mut std::process::Child, below: &[u32], signal: i32) {
    // SAFETY: kill(2) on a process this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while child.try_wait().ok().flatten().is_none() {
        if std::time::Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tlsmatrix did not end within 10 s of signal {signal}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while below.iter().any(|p| !ended(*p)) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let left: Vec<String> = below
        .iter()
        .filter(|p| !ended(**p))
        .map(|p| {
            let cmd = std::fs::read_to_string(format!("/proc/{p}/cmdline")).unwrap_or_default();
            format!("{p} {}", cmd.replace('\0', " "))
        })
        .collect();
    assert!(
        left.is_empty(),
        "left behind after signal {signal}: {left:?}"
    );
}

/// A server a test started, killed when dropped: a failing assertion leaves none behind.
pub struct Running(pub std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A server started by `args`, and the address it printed on a `prefix` line.
pub fn serve(cmd: &mut Command, prefix: &str) -> (Running, String) {
    // A stdin that stays open: `openssl s_server` closes its connections at stdin's end.
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let addr = loop {
        let line = lines
            .next()
            .expect("the server ended before listening")
            .unwrap();
        if let Some(rest) = line.strip_prefix(prefix) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    // Keep draining its output so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (Running(child), addr)
}

/// The impls this build has, from `tlsmatrix list --json`.
/// The built impls on glibc's malloc (an allocator variant runs the same library code).
pub fn built_impls() -> Vec<(String, String)> {
    let o = tlsmatrix(&["list", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["impls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["allocator"] == "glibc")
        .map(|i| {
            (
                i["name"].as_str().unwrap().to_string(),
                i["version"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Held by the tests that keep both cores busy with tight loops (ceilings, counters), by those
/// that keep one busy for long (callgrind) and by the one that times a real socket against a
/// model, so that they never overlap: on two cores the first made the last's proxy 10 ms
/// late in a fresh `make test`, and callgrind beside a ceiling skewed its shares.
pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One clear sentence and a non-zero exit; no panic, no backtrace, no results file.
pub fn assert_clean_failure(o: &Output, wants: &str, out: &Path) {
    let err = stderr(o);
    assert!(!o.status.success(), "should fail: {err}");
    assert!(err.contains(wants), "stderr lacks '{wants}': {err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    assert!(!out.exists() || std::fs::read_to_string(out).unwrap().is_empty());
}
