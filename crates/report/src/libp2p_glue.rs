//! Where an OpenSSL-backend libp2p handshake's time goes, by subtraction: the Go Handshake
//! benchmark's time per handshake (both peers on one CPU, reconnecting, so the libp2p check
//! hits its cache) less what the same library spends on both sides of a mutual-TLS TLS 1.3
//! ECDSA P-256 handshake on the same group in memory (the main run). What is left is the
//! transport's own cost: the socket and kernel, Go's runtime and cgo, the shim, and the
//! libp2p check. `make profile-go` splits the same handshake by profile.

use tlsmatrix_core::record::{Metric, Record};
use tlsmatrix_history::RunData;

use crate::doc::{Cell, Table};
use crate::figures::{self, figure};

/// The in-memory scenario that is the library's own share of a libp2p handshake on `group`.
fn library_scenario(group: &str) -> String {
    format!("handshake-tls13-ecdsa-p256-{group}-full-mtls")
}

/// The main run's impl that is the library a Go OpenSSL-backend impl linked:
/// go-libp2p-openssl (the system libssl) is openssl-3.0.
fn library_impl(go_impl: &str) -> Option<String> {
    match go_impl.strip_prefix("go-libp2p-")? {
        "openssl" => Some("openssl-3.0".into()),
        lib if lib.starts_with("openssl-") || lib == "boringssl" => Some(lib.into()),
        _ => None,
    }
}

/// "OpenSSL 3.6.3 9 Jun 2026" -> "OpenSSL 3.6.3", "BoringSSL (boring 5.4.0, boring-sys
/// 5.4.0)" -> "boring-sys 5.4.0": enough to tell that two records ran one release.
fn release(version: &str) -> String {
    let words: Vec<&str> = version
        .split_whitespace()
        .map(|w| w.trim_matches(|c| matches!(c, '(' | ')' | ',')))
        .collect();
    match words.iter().position(|w| *w == "boring-sys") {
        Some(i) => format!(
            "boring-sys {}",
            words.get(i + 1).copied().unwrap_or_default()
        ),
        None => words.iter().take(2).copied().collect::<Vec<_>>().join(" "),
    }
}

/// The record's own median, in its own unit (ns), not the figure shown for it.
fn median(r: &Record) -> f64 {
    r.median
}

/// A row per OpenSSL-backend impl and group found in both runs (same CPU model, same library
/// release); `None` when there is none.
pub fn table(go: &RunData, run: &RunData) -> Option<Table> {
    let mut rows = Vec::new();
    for r in go.records.iter().filter(|r| {
        r.metric == Metric::NsPerOp
            && r.client == r.server
            && r.scenario.starts_with("libp2p-handshake-tls13-ecdsa-p256-")
    }) {
        let Some(lib) = library_impl(&r.client) else {
            continue;
        };
        let group = r.scenario.rsplit('-').next().unwrap_or_default();
        let scenario = library_scenario(group);
        let side = |m: Metric| {
            run.records.iter().find(|x| {
                x.scenario == scenario && x.client == lib && x.server == lib && x.metric == m
            })
        };
        let (Some(client), Some(server)) = (side(Metric::ClientCpuNs), side(Metric::ServerCpuNs))
        else {
            continue;
        };
        if !figures::same_machine_kind(r, client)
            || release(&client.client_version) != release(&r.client_version)
        {
            continue;
        }
        let whole = median(r);
        let library = median(client) + median(server);
        let rest = whole - library;
        rows.push(vec![
            Cell::plain(&r.client),
            Cell::plain(group),
            Cell::plain(figure(whole / 1e3)),
            Cell::plain(format!("{} ({lib})", figure(library / 1e3))),
            Cell::plain(figure(rest / 1e3)),
            Cell::plain(format!("{:.0}%", 100.0 * rest / whole)),
        ]);
    }
    (!rows.is_empty()).then(|| Table {
        caption: format!(
            "Where an OpenSSL-backend handshake goes (µs): the Go Handshake benchmark (run {}) less the same library's own mutual-TLS handshake, both sides, in memory (run {}, {}); the rest is the transport: sockets and kernel, Go runtime and cgo, shim, libp2p check. make profile-go splits it by profile.",
            go.run_id,
            run.run_id,
            library_scenario("<group>")
        ),
        header: ["impl", "group", "libp2p handshake", "library's own", "rest", "rest share"]
            .map(String::from)
            .to_vec(),
        rows,
        label_cols: 2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_core::record::Env;

    fn record(scenario: &str, imp: &str, version: &str, metric: Metric, value: f64) -> Record {
        let env = Env {
            cpu_model: "EPYC".into(),
            ..Default::default()
        };
        let samples = vec![value; 5];
        Record::from_samples(
            "r",
            scenario,
            (imp, version),
            (imp, version),
            metric,
            samples,
            env,
        )
        .unwrap()
    }

    fn run(records: Vec<Record>) -> RunData {
        RunData {
            run_id: "r".into(),
            env: Env::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        }
    }

    #[test]
    fn the_rest_is_the_handshake_less_both_sides_of_the_library() {
        let v36 = "OpenSSL 3.6.3 9 Jun 2026";
        let go = run(vec![
            record(
                "libp2p-handshake-tls13-ecdsa-p256-x25519",
                "go-libp2p-openssl-3.6",
                v36,
                Metric::NsPerOp,
                1_000_000.0,
            ),
            record(
                "libp2p-handshake-tls13-ecdsa-p256-x25519",
                "go-libp2p-std",
                "go1.26",
                Metric::NsPerOp,
                800_000.0,
            ),
            // Another release than the main run's: no row.
            record(
                "libp2p-handshake-tls13-ecdsa-p256-x25519",
                "go-libp2p-openssl-4.0",
                "OpenSSL 4.0.9",
                Metric::NsPerOp,
                1e6,
            ),
        ]);
        let main = run(vec![
            record(
                "handshake-tls13-ecdsa-p256-x25519-full-mtls",
                "openssl-3.6",
                v36,
                Metric::ClientCpuNs,
                450_000.0,
            ),
            record(
                "handshake-tls13-ecdsa-p256-x25519-full-mtls",
                "openssl-3.6",
                v36,
                Metric::ServerCpuNs,
                350_000.0,
            ),
            record(
                "handshake-tls13-ecdsa-p256-x25519-full-mtls",
                "openssl-4.0",
                "OpenSSL 4.0.3",
                Metric::ClientCpuNs,
                1.0,
            ),
            record(
                "handshake-tls13-ecdsa-p256-x25519-full-mtls",
                "openssl-4.0",
                "OpenSSL 4.0.3",
                Metric::ServerCpuNs,
                1.0,
            ),
        ]);
        let t = table(&go, &main).expect("a row for openssl-3.6");
        assert_eq!(t.rows.len(), 1);
        let texts: Vec<&str> = t.rows[0].iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "go-libp2p-openssl-3.6",
                "x25519",
                "1,000",
                "800 (openssl-3.6)",
                "200",
                "20%"
            ]
        );
        assert!(table(&go, &run(Vec::new())).is_none());
    }

    #[test]
    fn go_impls_map_to_the_library_they_linked() {
        assert_eq!(
            library_impl("go-libp2p-openssl").as_deref(),
            Some("openssl-3.0")
        );
        assert_eq!(
            library_impl("go-libp2p-openssl-3.6").as_deref(),
            Some("openssl-3.6")
        );
        assert_eq!(
            library_impl("go-libp2p-boringssl").as_deref(),
            Some("boringssl")
        );
        assert_eq!(library_impl("go-libp2p-std"), None);
        assert_eq!(library_impl("go-libp2p-upstream"), None);
        assert_eq!(release("OpenSSL 3.6.3 9 Jun 2026"), "OpenSSL 3.6.3");
        assert_eq!(
            release("BoringSSL (boring 5.4.0, boring-sys 5.4.0)"),
            release("BoringSSL (boring-sys 5.4.0)")
        );
    }
}
