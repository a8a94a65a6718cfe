//! `cargo xtask weather` end to end, on the drivers `make build` put beside the xtask binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn xtask(args: &[String]) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_xtask"));
    Command::new(bin)
        .args(args)
        .env("TLSMATRIX_DRIVER_DIR", bin.parent().unwrap())
        .output()
        .unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tlsmatrix-xtask-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A refusal is one clear sentence, with no panic and nothing written.
fn assert_clean_failure(o: &Output, wants: &str, out: &Path) {
    let err = stderr(o);
    assert!(!o.status.success(), "should fail: {err}");
    assert!(err.contains(wants), "stderr lacks '{wants}': {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists() || std::fs::read_to_string(out).unwrap().is_empty());
}

/// `cargo xtask weather` follows an impl against the baseline turn by turn with the memory
/// probe between, writes every turn as it goes, and refuses what it cannot follow.
#[test]
fn weather_follows_an_impl_turn_by_turn() {
    let d = scratch("weather");
    let csv = d.join("w.csv");
    let certs = d.join("certs");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = ["weather", "--certs", certs.to_str().unwrap()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(["--out".to_string(), csv.to_str().unwrap().to_string()]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        xtask(&a)
    };
    for (extra, wants) in [
        (&["--impl", "rustls-aws-lc"][..], "both rustls-aws-lc"),
        (
            &[
                "--impl",
                "go-crypto-tls",
                "--scenario",
                "memory-tls13-ecdsa-p256-n100",
            ][..],
            "not a timed handshake or bulk scenario",
        ),
        (
            &["--impl", "go-crypto-tls", "--core", "999"][..],
            "--core 999",
        ),
        (&["--impl", "go-crypto-tls", "--turns", "0"][..], "--turns"),
        (
            &["--impl", "go-crypto-tls", "--turns", "6", "--minutes", "1"][..],
            "cannot be used with",
        ),
    ] {
        assert_clean_failure(&run(extra), wants, &csv);
    }
    // A count of turns, not minutes: on a loaded CI machine 0.2 min once gave four turns.
    let r = run(&["--impl", "go-crypto-tls", "--turns", "6"]);
    assert!(r.status.success(), "{}", stderr(&r));
    let out = String::from_utf8_lossy(&r.stdout).to_string();
    for wants in [
        "go-crypto-tls against rustls-aws-lc",
        "turns by cache probe",
        "turns by memory probe",
        "lowest third",
        "highest third",
        "correlation",
    ] {
        assert!(out.contains(wants), "no '{wants}' in\n{out}");
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("seconds,go-crypto-tls,rustls-aws-lc,ratio,cache_ns,memory_ns")
    );
    let turns: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert!(turns.len() >= 6, "{text}");
    for t in &turns {
        assert!(t.iter().all(|v| v.is_finite() && *v > 0.0), "{t:?}");
        assert!((t[1] / t[2] - t[3]).abs() < 1e-3 * t[3], "{t:?}");
    }
}
