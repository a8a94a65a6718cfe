//! One interop cell: start the server, learn its address, start the client, feed it when it
//! is a tool, wait for both under one deadline, kill whatever is left, and judge the outcome
//! against the case.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tlsmatrix_model::interop::{payload, Case, Echo, Expect};
use tlsmatrix_model::side::Side;

use super::peers::{Peer, Server};
use super::process::{start, wait_ready, Running};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Pass,
    ExpectedFailure,
    /// Failed because a third-party peer deviates as a listed known deviation says.
    KnownDeviation,
    Fail,
    Unsupported,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::ExpectedFailure => "expected-failure",
            Outcome::KnownDeviation => "known-deviation",
            Outcome::Fail => "fail",
            Outcome::Unsupported => "unsupported",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Verdict {
    pub outcome: Outcome,
    pub reason: String,
    pub seconds: f64,
}

/// The sentence a side's output ends with: a peer's `error:` line, else its last line.
fn sentence(output: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .rev()
        .find(|l| l.starts_with("error: ") || l.contains(":error:") || l.contains("alert"))
        .or(lines.last())
        .map(|l| l.trim_start_matches("error: ").to_string())
        .unwrap_or_else(|| "no output".into())
}

/// "protocol_version" is found in "tlsv1 alert protocol version" and "ProtocolVersion".
fn mentions(output: &str, what: &str) -> bool {
    let squash = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    squash(output).contains(&squash(what))
}

pub fn run(case: &Case, client: &Peer, server: &Peer, certs: &Path, timeout: Duration) -> Verdict {
    let started = Instant::now();
    let verdict = |outcome, reason: String| Verdict {
        outcome,
        reason,
        seconds: started.elapsed().as_secs_f64(),
    };
    for (peer, side) in [(client, Side::Client), (server, Side::Server)] {
        if let Err(why) = peer.supports(case, side) {
            return verdict(
                Outcome::Unsupported,
                format!("{} as {side}: {why}", peer.name),
            );
        }
    }
    if let Some(why) =
        tlsmatrix_model::impls::pair_refusal(&client.name, &server.name, &case.client.params())
    {
        return verdict(Outcome::Unsupported, why);
    }
    let deadline = started + timeout;
    let secs = timeout.as_secs().max(1);
    let plan = match server.server(case, certs, secs) {
        Ok(p) => p,
        Err(e) => return verdict(Outcome::Fail, format!("cannot prepare the server: {e}")),
    };
    let mut srv = match start(plan.cmd, false) {
        Ok(r) => r,
        Err(e) => return verdict(Outcome::Fail, format!("cannot start the server: {e}")),
    };
    let addr = match wait_ready(&mut srv, &plan.ready, deadline) {
        Ok(a) => a,
        Err(None) => {
            srv.kill();
            return verdict(
                Outcome::Fail,
                format!("timed out: the server did not start listening within {secs} s"),
            );
        }
        Err(Some(())) => {
            let text = srv.text();
            srv.kill();
            if let Some(why) = unsupported_line(&text) {
                return verdict(Outcome::Unsupported, why);
            }
            return judge_failure(
                case,
                started,
                "",
                &text,
                "the server exited before listening",
            );
        }
    };
    // "ADDR" or, from a libp2p peer, "ADDR peer ID backend B".
    let mut words = addr.split_whitespace();
    let addr = words.next().unwrap_or_default().to_string();
    let server_id = words.skip_while(|w| *w != "peer").nth(1);
    let to = Server {
        addr: &addr,
        peer_id: server_id,
        echo: plan.echo,
    };
    let cplan = client.client(case, certs, &to, secs);
    let cplan_must_print = cplan.must_print;
    let mut cli = match start(cplan.cmd, cplan.fed) {
        Ok(r) => r,
        Err(e) => {
            srv.kill();
            return verdict(Outcome::Fail, format!("cannot start the client: {e}"));
        }
    };
    let client_done = Arc::new(AtomicBool::new(false));
    let feed = cplan
        .fed
        .then(|| feed(&mut cli, case, plan.echo, deadline, client_done.clone()));
    let (client_ok, server_ok) =
        wait_both(&mut cli, &mut srv, deadline, &client_done, plan.persistent);
    let (ctext, stext) = (cli.text(), srv.text());
    cli.kill();
    srv.kill();
    client_done.store(true, Ordering::Relaxed);
    let fed_ok = match feed.map(|h| h.join().unwrap_or_else(|_| Err("feeder panicked".into()))) {
        Some(Err(why)) => Some(why),
        _ => None,
    };
    // A peer of ours that cannot play its side says so on a line of its own.
    if let Some(why) = unsupported_line(&ctext).or(unsupported_line(&stext)) {
        return verdict(Outcome::Unsupported, why);
    }
    match (client_ok, server_ok) {
        // One side failed and the other is still waiting: the failure is the story.
        (Some(false), None) | (None, Some(false)) => {
            judge_failure(case, started, &ctext, &stext, &fed_ok.unwrap_or_default())
        }
        (None, _) | (_, None) => {
            let who = if client_ok.is_none() {
                "client"
            } else {
                "server"
            };
            verdict(
                Outcome::Fail,
                format!(
                    "timed out: the {who} was still running after {secs} s (client: {}; server: {})",
                    sentence(&ctext),
                    sentence(&stext)
                ),
            )
        }
        (Some(true), Some(true)) if fed_ok.is_none() => match case.expect {
            Expect::Pass => match cplan_must_print.filter(|m| !ctext.contains(m)) {
                Some(missing) => verdict(
                    Outcome::Fail,
                    format!(
                        "the client never printed \"{missing}\": {}",
                        sentence(&ctext)
                    ),
                ),
                None => verdict(Outcome::Pass, pass_summary(&ctext, &stext, case)),
            },
            Expect::Alert(a) => verdict(
                Outcome::Fail,
                format!("the handshake completed, but the case must fail with {a}"),
            ),
            Expect::Truncation => verdict(
                Outcome::Fail,
                format!(
                    "the client did not notice the missing close_notify: {}",
                    sentence(&ctext)
                ),
            ),
            Expect::ClientRefuses => verdict(
                Outcome::Fail,
                format!(
                    "the client accepted a server it must refuse: {}",
                    sentence(&ctext)
                ),
            ),
        },
        _ => {
            let why = fed_ok.unwrap_or_default();
            judge_failure(case, started, &ctext, &stext, &why)
        }
    }
}

fn unsupported_line(output: &str) -> Option<String> {
    output
        .lines()
        .find_map(|l| l.strip_prefix("unsupported: "))
        .map(str::to_string)
}

/// Waits until both have exited, or one has failed and the other had a second to follow,
/// or the deadline passed. `None` for a side still running.
fn wait_both(
    cli: &mut Running,
    srv: &mut Running,
    deadline: Instant,
    client_done: &AtomicBool,
    persistent: bool,
) -> (Option<bool>, Option<bool>) {
    let (mut c, mut s) = (None, None);
    let mut grace: Option<Instant> = None;
    loop {
        if c.is_none() {
            c = cli.child.try_wait().ok().flatten().map(|st| st.success());
            if c.is_some() {
                client_done.store(true, Ordering::Relaxed);
            }
        }
        if s.is_none() {
            s = srv.child.try_wait().ok().flatten().map(|st| st.success());
        }
        if persistent && c.is_some() && s.is_none() {
            // Give it a moment to print why it dropped the connection, if it did.
            std::thread::sleep(Duration::from_millis(100));
            s = Some(true);
        }
        if c.is_some() && s.is_some() {
            break;
        }
        if grace.is_none() && (c == Some(false) || s == Some(false) || c == Some(true)) {
            grace = Some(Instant::now() + Duration::from_secs(1));
        }
        // A peer of ours that cannot play its side says so and exits before it connects: the
        // other side has nothing to tell, so waiting out the grace would only cost a second
        // (a fifth of the whole interop run was such waits).
        let said_unsupported = |r: &Running| unsupported_line(&r.output.lock().unwrap()).is_some();
        if c == Some(false) && said_unsupported(cli) || s == Some(false) && said_unsupported(srv) {
            break;
        }
        let now = Instant::now();
        if now >= deadline || grace.is_some_and(|g| now >= g) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    (c, s)
}

/// A peer of ours says what it negotiated in its `ok:` line; a tool client only shows that
/// the echo arrived, which the feeder checked.
fn pass_summary(ctext: &str, stext: &str, case: &Case) -> String {
    [ctext, stext]
        .iter()
        .flat_map(|t| t.lines())
        .find_map(|l| l.strip_prefix("ok: "))
        .map_or_else(
            || format!("{} bytes echoed intact", case.bytes),
            str::to_string,
        )
}

/// The alert by name as the TLS libraries spell it, or by number as OpenSSL ("SSL alert
/// number 70") and GnuTLS ("Received alert [70]") print it.
fn mentions_alert(output: &str, name: &str) -> bool {
    let code = match name {
        "protocol_version" => Some(70),
        "no_application_protocol" => Some(120),
        "handshake_failure" => Some(40),
        "certificate_required" => Some(116),
        _ => None,
    };
    mentions(output, name)
        || code.is_some_and(|c| {
            output.contains(&format!("alert number {c}"))
                || output.contains(&format!("alert [{c}]"))
        })
}

fn judge_failure(case: &Case, started: Instant, ctext: &str, stext: &str, extra: &str) -> Verdict {
    let both = format!(
        "client: {}; server: {}{}",
        sentence(ctext),
        sentence(stext),
        if extra.is_empty() {
            String::new()
        } else {
            format!("; {extra}")
        }
    );
    let outcome = match case.expect {
        Expect::Alert(a) if mentions_alert(ctext, a) => Outcome::ExpectedFailure,
        // The client refused, and the server heard about it in an alert, not a dropped socket.
        Expect::ClientRefuses
            if mentions(stext, "alert") && !ctext.lines().any(|l| l.starts_with("ok: ")) =>
        {
            Outcome::ExpectedFailure
        }
        Expect::Truncation
            if [
                "without close_notify",
                "unexpected eof",
                "non-properly terminated",
                "premature",
            ]
            .iter()
            .any(|m| mentions(ctext, m)) =>
        {
            Outcome::ExpectedFailure
        }
        _ => Outcome::Fail,
    };
    Verdict {
        outcome,
        reason: both,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// Writes the payload into a tool client and checks what it prints back, then closes its
/// stdin so it ends the connection; when the server is to drop the connection instead, stdin
/// stays open until the client has noticed by itself.
fn feed(
    cli: &mut Running,
    case: &Case,
    echo: Echo,
    deadline: Instant,
    client_done: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Result<(), String>> {
    let mut stdin = cli.child.stdin.take().expect("piped");
    let output = cli.stdout.clone();
    let data = payload(case.bytes);
    let want = echo.expected(&data);
    let expect = case.expect;
    std::thread::spawn(move || {
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&data);
            stdin
        });
        let stdin = writer.join().map_err(|_| "writer panicked".to_string())?;
        let waiting = |until_echo: bool| {
            while !client_done.load(Ordering::Relaxed) && Instant::now() < deadline {
                if until_echo && output.lock().unwrap().starts_with(&want) {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            !until_echo || output.lock().unwrap().starts_with(&want)
        };
        if !matches!(expect, Expect::Alert(_)) && !waiting(true) {
            let got = output.lock().unwrap().len();
            return Err(format!(
                "the echo did not arrive: {got} of {} bytes",
                want.len()
            ));
        }
        // A client that is to be refused, or cut off, must see it happen: in TLS 1.3 the
        // server's verdict on a client certificate arrives after the client's handshake is done.
        if expect != Expect::Pass {
            waiting(false);
        }
        drop(stdin);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alerts_are_found_however_a_library_spells_them() {
        assert!(mentions(
            "SSL routines::tlsv1 alert protocol version",
            "protocol_version"
        ));
        assert!(mentions(
            "received fatal alert: ProtocolVersion",
            "protocol_version"
        ));
        assert!(!mentions("handshake failure", "protocol_version"));
        assert_eq!(sentence("x\nerror: it broke\n\n"), "it broke");
        assert!(mentions_alert(
            "*** Received alert [120]: No supported application protocol",
            "no_application_protocol"
        ));
        assert!(mentions_alert("SSL alert number 70", "protocol_version"));
        assert!(!mentions_alert("SSL alert number 40", "protocol_version"));
    }
}
