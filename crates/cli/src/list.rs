//! `tlsmatrix list`: what this build can measure.

use anyhow::Result;
use serde_json::json;
use tlsmatrix_model::scenario::{self, Scenario};

use crate::drivers::{self, Registry};

/// Every impl tlsmatrix knows, and what it takes to have the ones a build lacks.
const KNOWN_IMPLS: &[(&str, &str)] = &[
    ("rustls-aws-lc", "`make build` (the main driver)"),
    ("rustls-ring", "`make build` (the main driver)"),
    (
        "openssl-3.0",
        "`make build` with the system's libssl-dev (the main driver)",
    ),
    (
        "openssl-3.6",
        "`make build` (OpenSSL 3.6 from the openssl-src crate, linked into drivers/openssl)",
    ),
    (
        "openssl-4.0",
        "`make build` (OpenSSL 4.0 from the openssl-src crate, linked into drivers/openssl)",
    ),
    (
        "boringssl",
        "`make build` (the boring crate, linked into drivers/boringssl)",
    ),
    (
        "s2n-tls",
        "`make build` (the s2n-tls crate on aws-lc, the main driver)",
    ),
    (
        "go-crypto-tls",
        "`make build` (Go's crypto/tls in go/cmd/tlsmatrix-driver-go)",
    ),
];

pub fn list(as_json: bool) -> Result<()> {
    let reg = Registry::discover()?;
    let defaults = format!(
        "handshakes use {} (with ECDHE and the certificate's key type in TLS 1.2); bulk transfers use an {} certificate and {}",
        scenario::HANDSHAKE_AEAD,
        scenario::BULK_SIG,
        scenario::BULK_GROUP
    );
    let default_suite: Vec<String> = Scenario::default_suite()
        .iter()
        .map(|s| s.to_string())
        .collect();
    let not_built: Vec<(&str, &str)> = KNOWN_IMPLS
        .iter()
        .filter(|(n, _)| reg.impls.iter().all(|e| e.name != *n))
        .copied()
        .collect();
    if as_json {
        let v = json!({
            "not_built": not_built.iter().map(|(n, how)| json!({"name": n, "how": how})).collect::<Vec<_>>(),
            "impls": reg.impls.iter().map(|e| json!({
                "name": e.name,
                "version": e.version,
                "driver": e.driver().path,
                "allocator": e.allocator.name(),
            })).collect::<Vec<_>>(),
            "scenario_kinds": scenario::grammar().into_iter().map(|(form, axes)| json!({
                "form": form,
                "axes": axes.into_iter().map(|(label, values)| json!({
                    "axis": label,
                    "values": values.split(", ").collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "fixed": defaults,
            "default_suite": default_suite,
            "scenarios": Scenario::catalogue().iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("impls:");
    for (driver, entries) in drivers::by_driver(&reg) {
        let name = driver.label();
        for e in entries {
            println!("  {:<23} {}   [{name}]", e.name, e.version);
        }
    }
    for (name, how) in &not_built {
        println!("  {name:<15} not built: {how}");
    }
    println!("\nscenarios (id forms and axis values):");
    for (form, axes) in scenario::grammar() {
        println!("  {form}");
        for (label, values) in axes {
            println!("    {label:<11} {values}");
        }
    }
    println!("  fixed: {defaults}");
    println!(
        "\ndefault suite ({} scenarios, used when --scenario is not given):",
        default_suite.len()
    );
    for s in default_suite {
        println!("  {s}");
    }
    Ok(())
}
