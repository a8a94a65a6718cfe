//! Every measure of the measure table (crates/model/src/measure.rs) in each place a measure
//! needs beyond its row: the driver's arm that takes its samples, the metrics it records, the
//! report module that reads its companion run, its `make report` stage and results file, its
//! line in the README and its paragraph in the methodology. A place left out fails with a
//! sentence naming it (docs/CONTRIBUTING.md, "Adding a measure", lists them).

use std::path::Path;

use tlsmatrix_model::measure::{Measure, MEASURES};
use tlsmatrix_model::metric::METRICS;

fn read(path: &str) -> String {
    let top = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(top.join(path)).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

/// The report's sources, concatenated.
fn report_sources() -> String {
    let top = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crates/report/src");
    let mut all = String::new();
    for e in std::fs::read_dir(top).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rs") {
            all.push_str(&std::fs::read_to_string(p).unwrap());
        }
    }
    all
}

/// Each place a measure's row implies, with whether it is there.
fn missing_places() -> Vec<String> {
    let driver = read("crates/driver/src/run.rs");
    let makefile = read("Makefile");
    let readme = read("README.md");
    let methodology = read("docs/methodology.md");
    let report = report_sources();
    let mut missing = Vec::new();
    for row in MEASURES {
        let (name, variant) = (row.name, format!("Measure::{:?}", row.measure));
        if !driver.contains(&format!("({variant},")) {
            missing.push(format!(
                "{name}: no arm in the driver's `measure` (crates/driver/src/run.rs) takes its samples"
            ));
        }
        for source in row.sources {
            if !METRICS.iter().any(|m| m.source == *source) {
                missing.push(format!(
                    "{name}: no metric row in crates/model/src/metric.rs has its source {source:?}"
                ));
            }
        }
        if row.companion && !report.contains(&variant) {
            missing.push(format!(
                "{name}: no report module reads its run (`extra.of({variant})` in crates/report/src)"
            ));
        }
        if let Some((stage, file)) = row.stage {
            let line = makefile.lines().find(|l| {
                l.contains(&format!(" {stage} ")) && l.contains(&format!("--measure {name}"))
            });
            match line {
                None => missing.push(format!(
                    "{name}: no `make report` stage '{stage}' runs `tlsmatrix run --measure {name}` (Makefile)"
                )),
                Some(_) if !makefile.contains(&format!("--out {file}")) => missing.push(format!(
                    "{name}: its stage writes no results file {file} (Makefile, --out)"
                )),
                Some(_) => {}
            }
        }
        let listed = readme
            .lines()
            .skip_while(|l| !l.contains("--measure KIND"))
            .take(3)
            .any(|l| l.contains(name));
        if !listed {
            missing.push(format!(
                "{name}: the README's `--measure KIND` line does not list it"
            ));
        }
        if row.measure != Measure::Time && !methodology.contains(&format!("--measure {name}`")) {
            missing.push(format!(
                "{name}: docs/methodology.md has no paragraph on `tlsmatrix run --measure {name}`"
            ));
        }
    }
    missing
}

#[test]
fn every_measure_has_each_of_its_places() {
    let missing = missing_places();
    assert!(
        missing.is_empty(),
        "measures missing a place:\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn the_help_lists_every_measure_of_the_table() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tlsmatrix"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for row in MEASURES {
        assert!(
            help.contains(&format!("  {}", row.name)) && help.contains(row.help),
            "`tlsmatrix run --help` lacks {}: {help}",
            row.name
        );
    }
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_tlsmatrix"))
        .args(["run", "--measure", "speed"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(
        err.contains("unknown measure 'speed'") && err.contains("contention"),
        "{err}"
    );
}
