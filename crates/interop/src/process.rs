//! A process the harness starts (a server or client of a cell, a defaults server for an
//! outside scan): its own process group, ended with tlsmatrix, its output collected as it
//! comes, and a wait for the server among them to be ready.

use std::io::{BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::peers::Ready;

/// A started process with its output collected as it comes.
pub struct Running {
    pub child: Child,
    /// stdout and stderr, as text for the verdict.
    pub output: Arc<Mutex<String>>,
    /// stdout alone, as bytes: what a tool client printed back.
    pub stdout: Arc<Mutex<Vec<u8>>>,
    pub lines: mpsc::Receiver<String>,
    /// How many of the two readers (stdout, stderr) have met the end of their pipe.
    readers_done: Arc<AtomicUsize>,
}

pub fn start(mut cmd: std::process::Command, stdin: bool) -> std::io::Result<Running> {
    cmd.stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a kill takes whatever it started too.
        .process_group(0);
    tlsmatrix_registry::child::ends_with_parent(&mut cmd);
    let mut child = cmd.spawn()?;
    let output = Arc::new(Mutex::new(String::new()));
    let (tx, lines) = mpsc::channel();
    let out = child.stdout.take().expect("piped");
    let err = child.stderr.take().expect("piped");
    let stdout = Arc::new(Mutex::new(Vec::new()));
    let (o, raw) = (output.clone(), stdout.clone());
    let readers_done = Arc::new(AtomicUsize::new(0));
    let done = readers_done.clone();
    std::thread::spawn(move || {
        let mut out = out;
        let mut buf = [0u8; 64 * 1024];
        let mut partial = Vec::new();
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 {
                break;
            }
            raw.lock().unwrap().extend_from_slice(&buf[..n]);
            partial.extend_from_slice(&buf[..n]);
            while let Some(i) = partial.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = partial.drain(..=i).collect();
                let line = String::from_utf8_lossy(&line).trim_end().to_string();
                o.lock().unwrap().push_str(&format!("{line}\n"));
                // Nobody may listen for lines any more; the text is kept regardless.
                let _ = tx.send(line);
            }
        }
        done.fetch_add(1, Ordering::Release);
    });
    let o = output.clone();
    let done = readers_done.clone();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = BufReader::new(err).read_to_string(&mut s);
        o.lock().unwrap().push_str(&s);
        done.fetch_add(1, Ordering::Release);
    });
    Ok(Running {
        child,
        output,
        stdout,
        lines,
        readers_done,
    })
}

impl Running {
    pub fn kill(&mut self) {
        // SAFETY: kill(2) on the process group this child leads.
        unsafe {
            libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }

    /// Everything the process printed. Once it has exited, the readers reach the end of
    /// its pipes soon: wait for them (a fixed 20 ms lost a client's whole output on a loaded
    /// machine, "client: no output"), bounded in case a child of it holds the pipes. Of a
    /// process still running, what it printed so far.
    pub fn text(&mut self) -> String {
        let exited = matches!(self.child.try_wait(), Ok(Some(_)));
        let wait = Duration::from_millis(if exited { 2000 } else { 20 });
        let until = Instant::now() + wait;
        while self.readers_done.load(Ordering::Acquire) < 2 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        self.output.lock().unwrap().clone()
    }

    /// Its exit status once it has exited, or `None` when it is still running at `deadline`.
    pub fn wait_until(&mut self, deadline: Instant) -> Option<std::process::ExitStatus> {
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The server's address once it is ready; `Err(None)` at the deadline, `Err(Some(()))` if
/// it exited first.
pub fn wait_ready(
    srv: &mut Running,
    ready: &Ready,
    deadline: Instant,
) -> Result<String, Option<()>> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match ready {
            Ready::Line(prefix) => match srv.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(a) = line.strip_prefix(prefix) {
                        return Ok(a.trim().to_string());
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => return Err(None),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(Some(())),
            },
            Ready::ListeningPort => {
                if let Some(port) = crate::listening::ipv4_port(srv.child.id()) {
                    return Ok(format!("127.0.0.1:{port}"));
                }
                if matches!(srv.child.try_wait(), Ok(Some(_))) {
                    return Err(Some(()));
                }
                if left.is_zero() {
                    return Err(None);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}
