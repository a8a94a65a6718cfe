//! A system library named by its rebuild with symbols (`impl+symbols`): Debian ships
//! OpenSSL 3.0's libcrypto and wolfSSL stripped, so their splits leave most of a handshake
//! unnamed. The companion is the same release rebuilt from Debian's own source package with
//! Debian's patches, configuration and flags, not stripped; the run that counts it counts the system
//! library beside it, so their totals show it runs the same code, and its split names what
//! the system's leaves unnamed. Its figures only explain the system's: every row says which
//! build it is.

use tlsmatrix_history::RunData;
use tlsmatrix_model::class::Class as CodeClass;
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::side::Side;
use tlsmatrix_model::variant::{Variant, SYMBOLS};

use crate::doc::{Block, Cell, Class, Table};
use crate::instruction_split::{count, figure, percent, side_split, split_scenarios};

/// How far a companion's instruction count may lie from the system library's and still be
/// called the same code.
pub const SAME_CODE: f64 = 0.02;

pub const METHOD: &str = "A stripped library names only its exported functions, so most of its handshake falls in \"unnamed\". Each build with symbols below (impl+symbols) is the same release rebuilt from its distribution's own source package (Debian's, of the exact version installed, checked against its SHA-256), with the distribution's patches, configuration and compiler flags; it differs in two things, neither of which changes the code: it is not stripped, and it is compiled without -g (debug information, which GCC keeps out of the generated code). A driver started with LD_LIBRARY_PATH on its folder loads it in place of the system's library, and refuses to run if the loader took the library from anywhere else. The run that counts it counts the system library beside it, so each side's total shows whether it runs the same code (the sentence below gives the bound); its split is the system library's split, named. Its figures explain the system's and are never reported as the system's own.";

/// The stripped libraries with no build with symbols here, and the one built on request.
pub const NOT_NAMED: &str = "NSS is stripped in Debian too, and Debian has its source package; it has no build with symbols here yet, so its unnamed parts stay unnamed. wolfSSL's is built on request (make companions COMPANIONS=\"openssl-3.0 wolfssl\"; make test builds it) and stands above when the run took it.";

/// The build a `+symbols` name explains, when the name is one.
fn system_of(imp: &str) -> Option<&str> {
    Variant::parse(imp)
        .ok()
        .filter(|v| v.symbols)
        .map(|v| v.base)
}

/// One side of a companion and its system library, from the same run.
struct Named {
    scenario: String,
    system: String,
    side: Side,
    /// The companion's total over the system's, less one.
    difference: f64,
}

/// The blocks: the method, per scenario a table of each system library and its companion
/// side by side (total, difference, and the split), and a sentence on the totals.
pub fn blocks(run: &RunData) -> Vec<Block> {
    let impls = run.impls();
    let pairs: Vec<(&str, &str)> = impls
        .iter()
        .filter_map(|i| Some((system_of(i)?, i.as_str())))
        .filter(|(system, _)| impls.iter().any(|i| i == system))
        .collect();
    if pairs.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![Block::Para(METHOD.into())];
    let mut header = vec![
        "build".to_string(),
        "side".into(),
        "instr/hs".into(),
        "vs system".into(),
    ];
    header.extend(CodeClass::split().map(|c| c.name().to_string()));
    header.push("locks/hs".into());
    header.push("provider locks/hs".into());
    let mut named = Vec::new();
    for scenario in split_scenarios(run) {
        let mut rows = Vec::new();
        for &(system, companion) in &pairs {
            for side in [Side::Client, Side::Server] {
                let (Some(s), Some(c)) = (
                    side_split(run, &scenario, system, side),
                    side_split(run, &scenario, companion, side),
                ) else {
                    continue;
                };
                let difference = c.total / s.total.max(1.0) - 1.0;
                named.push(Named {
                    scenario: scenario.clone(),
                    system: system.to_string(),
                    side,
                    difference,
                });
                let layer_locks = |imp: &str| {
                    let (m, _) = Metric::provider_locks_of(side);
                    figure(run, &scenario, imp, m).map_or("-".into(), |r| count(r.median))
                };
                for (imp, build, split, vs) in [
                    (
                        system,
                        format!("{system} (system, stripped)"),
                        &s,
                        Cell::plain(""),
                    ),
                    (
                        companion,
                        format!("{companion} (rebuilt with symbols)"),
                        &c,
                        Cell::with(
                            format!("{:+.2}%", 100.0 * difference),
                            if difference.abs() <= SAME_CODE {
                                Class::Plain
                            } else {
                                Class::Bad
                            },
                            Some(format!("the same code is within {:.0}%", 100.0 * SAME_CODE)),
                        ),
                    ),
                ] {
                    let mut row = vec![
                        Cell::plain(build),
                        Cell::plain(side.to_string()),
                        Cell::plain(count(split.total)),
                        vs,
                    ];
                    row.extend(split.parts.iter().map(|&p| percent(p, split.total)));
                    row.push(Cell::plain(count(split.locks)));
                    row.push(Cell::plain(layer_locks(imp)));
                    rows.push(row);
                }
            }
        }
        if rows.is_empty() {
            continue;
        }
        blocks.push(Block::Table(Table {
            caption: format!(
                "{scenario}: the system library and its build with {SYMBOLS}, counted in one run ({}); hover a share for its count",
                run.run_id
            ),
            header: header.clone(),
            rows,
            label_cols: 2,
        }));
    }
    blocks.push(Block::Para(verdict(&named)));
    blocks.push(Block::Para(NOT_NAMED.into()));
    blocks
}

/// Whether every side's companion counts within `SAME_CODE` of its system library's.
fn verdict(named: &[Named]) -> String {
    let worst = named
        .iter()
        .max_by(|a, b| a.difference.abs().total_cmp(&b.difference.abs()));
    let Some(w) = worst else {
        return "No side was counted for both builds.".into();
    };
    let sides = named.len();
    if w.difference.abs() <= SAME_CODE {
        format!(
            "On all {sides} sides counted, each build with symbols executes within {:.2}% of its system library's instructions (at most {:.0}% allowed): the same code, so its split names the system library's.",
            100.0 * w.difference.abs(),
            100.0 * SAME_CODE
        )
    } else {
        format!(
            "{} {} on {}: the build with symbols executes {:+.2}% of the system's instructions, beyond the {:.0}% that the same code keeps within, so its split does not stand for the system library's there.",
            w.system,
            w.side,
            w.scenario,
            100.0 * w.difference,
            100.0 * SAME_CODE
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::RecordFixture;
    use tlsmatrix_model::record::{Env, Record};

    const S: &str = "handshake-tls13-ecdsa-p256-x25519-full";

    /// A side split all in one class but `unnamed` of it unnamed.
    fn side(imp: &str, side: Side, total: f64, unnamed: f64) -> Vec<Record> {
        let (all, parts, locks) = Metric::split_of(side);
        let rec = |m: Metric, v: f64| {
            RecordFixture::new(m, v)
                .scenario(S)
                .pair(imp, imp)
                .samples(vec![v; 3])
                .build()
        };
        let mut out = vec![rec(all, total), rec(locks, 10.0)];
        for (m, class) in parts.into_iter().zip(CodeClass::split()) {
            let v = match class {
                CodeClass::Unnamed => unnamed,
                CodeClass::Other => total - unnamed,
                _ => 0.0,
            };
            out.push(rec(m, v));
        }
        out
    }

    fn run(companion_client: f64) -> RunData {
        let mut records = Vec::new();
        for s in [Side::Client, Side::Server] {
            records.extend(side("openssl-3.0", s, 1000.0, 700.0));
        }
        records.extend(side(
            "openssl-3.0+symbols",
            Side::Client,
            companion_client,
            1.0,
        ));
        records.extend(side("openssl-3.0+symbols", Side::Server, 1001.0, 1.0));
        RunData {
            run_id: "n".into(),
            env: Env::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        }
    }

    #[test]
    fn a_companion_stands_beside_its_system_library_and_is_judged_the_same_code() {
        let b = blocks(&run(1004.0));
        let Block::Table(t) = &b[1] else {
            panic!("the table after the method")
        };
        let labels: Vec<&str> = t.rows.iter().map(|r| r[0].text.as_str()).collect();
        assert_eq!(
            labels,
            [
                "openssl-3.0 (system, stripped)",
                "openssl-3.0+symbols (rebuilt with symbols)",
                "openssl-3.0 (system, stripped)",
                "openssl-3.0+symbols (rebuilt with symbols)",
            ]
        );
        assert_eq!(t.rows[1][3].text, "+0.40%");
        let Block::Para(said) = &b[2] else {
            panic!("the verdict after the table")
        };
        assert!(said.starts_with("On all 2 sides counted"), "{said}");
        assert!(said.contains("within 0.40%"), "{said}");
    }

    #[test]
    fn a_companion_beyond_the_bound_is_said_not_to_stand_for_the_system() {
        let b = blocks(&run(1050.0));
        let Block::Para(said) = &b[2] else {
            panic!("the verdict after the table")
        };
        assert!(said.contains("openssl-3.0 client"), "{said}");
        assert!(said.contains("+5.00%"), "{said}");
        assert!(said.contains("does not stand for"), "{said}");
        // No companion, no block.
        let mut alone = run(1000.0);
        alone.records.retain(|r| !r.client.ends_with("+symbols"));
        assert!(blocks(&alone).is_empty());
    }
}
