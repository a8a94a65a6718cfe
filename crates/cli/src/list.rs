//! `tlsmatrix list`: what this build can measure.

use anyhow::Result;
use serde_json::json;
use tlsmatrix_model::impls;
use tlsmatrix_model::measure::Measure;
use tlsmatrix_model::metric::{Better, METRICS};
use tlsmatrix_model::plan;
use tlsmatrix_model::scenario::{self, Scenario};

use crate::drivers::{self, Registry};

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
    let not_built: Vec<(&str, &str)> = impls::IMPLS
        .iter()
        .filter(|r| reg.impls.iter().all(|e| e.name != r.name))
        .map(|r| (r.name, r.build))
        .collect();
    if as_json {
        let v = json!({
            "not_built": not_built.iter().map(|(n, how)| json!({"name": n, "how": how})).collect::<Vec<_>>(),
            "impls": reg.impls.iter().map(|e| json!({
                "name": e.name,
                "version": e.version,
                "driver": e.driver().path,
                "allocator": e.allocator.name(),
                "quic": e.quic,
                "quic_refused": e.refusal(Measure::Quic),
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
            "plans": plan::PLANS.iter().map(|p| json!({
                "name": p.name,
                "about": p.about,
                "source": p.url,
                "impls": p.impls,
                "scenarios": p.scenarios(),
            })).collect::<Vec<_>>(),
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
    println!("\nQUIC stacks (tlsmatrix run --measure quic):");
    for e in reg.defaults() {
        match &e.quic {
            Some(stack) => println!("  {:<23} {stack} on {}", e.name, e.version),
            None => {
                let why = e.refusal(Measure::Quic).unwrap_or_default();
                let why = why.strip_prefix(&format!("{}: ", e.name)).unwrap_or(&why);
                println!("  {:<23} none: {why}", e.name);
            }
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
    println!("\nplans (tlsmatrix run --plan NAME, in place of --impl and --scenario):");
    for p in plan::PLANS {
        println!("  {:<15} {}", p.name, p.about);
        println!(
            "  {:<15} {} scenarios; {}",
            "",
            p.scenarios().len(),
            p.impls.join(", ")
        );
    }
    Ok(())
}

/// `tlsmatrix list --metrics`: the metric table, as a user reads a results file with it.
pub fn metrics(as_json: bool) -> Result<()> {
    let better = |b: Better| match b {
        Better::Higher => "higher",
        Better::Lower => "lower",
    };
    if as_json {
        let v: Vec<_> = METRICS
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "unit": r.unit,
                    "better": better(r.better),
                    "side": format!("{:?}", r.side).to_lowercase(),
                    "measured_by": r.source.command(),
                    "machine_independent": r.machine_independent,
                    "shown_as": format!("{} ({})", r.title, r.shown_unit),
                    "about": r.about,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "{:<34} {:<17} {:<7} {:<7} {:<27} meaning",
        "metric", "unit", "better", "side", "measured by"
    );
    for r in METRICS {
        println!(
            "{:<34} {:<17} {:<7} {:<7} {:<27} {}",
            r.name,
            r.unit,
            better(r.better),
            format!("{:?}", r.side).to_lowercase(),
            r.source.command(),
            r.about
        );
    }
    Ok(())
}
