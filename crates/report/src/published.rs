//! Published figures beside ours: a named plan's run (`tlsmatrix run --plan NAME`) set
//! against the tables it mirrors, factor for factor. A published table gives each library's
//! rate; its factor is that rate over the plan's baseline's. Ours is each library paired
//! with the same baseline round by round. Where the two differ by more than
//! [`DIFFERS_BY`], the row says so, and the section lists what differs between the two
//! set-ups (CPU features, versions, configuration) with what the run recorded.

use tlsmatrix_history::RunData;
use tlsmatrix_model::plan::{self, Plan};

use crate::doc::{Block, Cell, Class, Section, Table};
use crate::figures::{factor_text, figure, own_factor, summary};

/// How far ours may sit from the published factor before the row is called different.
pub const DIFFERS_BY: f64 = 0.15;

/// The plan a run was made with, read from its command line.
pub fn plan_of(run: &RunData) -> Option<&'static Plan> {
    run.env
        .option("--plan")
        .and_then(|name| plan::named(name).ok())
}

/// Ours over published, as a share off 1: 0.2 is 20% above.
fn departure(ours: f64, published: f64) -> f64 {
    ours / published - 1.0
}

/// The section, when the run is a plan's.
pub fn section(run: &RunData) -> Option<Section> {
    let plan = plan_of(run)?;
    let baseline = plan.baseline();
    let mut header = vec!["published figure".to_string(), "scenario here".to_string()];
    header.push(format!("{baseline} here"));
    for imp in &plan.impls[1..] {
        header.push(format!("{imp}: published"));
        header.push(format!("{imp}: ours"));
    }
    let mut rows = Vec::new();
    let mut differing = Vec::new();
    let mut compared = 0;
    for r in plan.rows {
        let base_rate = r.values[0].1;
        let mut row = vec![Cell::plain(r.label), Cell::plain(r.scenario)];
        let base_here = own_factor(&run.records, r.scenario, baseline, r.metric, baseline);
        row.push(match base_here {
            Some((rec, _)) => Cell::plain(figure(summary(rec).median)),
            None => Cell::plain("-"),
        });
        for (imp, value) in &r.values[1..] {
            let published = value / base_rate;
            row.push(Cell::plain(format!("{published:.2}x")));
            let ours = own_factor(&run.records, r.scenario, imp, r.metric, baseline).map(|x| x.1);
            row.push(match ours {
                Some(f) => {
                    compared += 1;
                    let off = departure(f.ratio, published);
                    let differs = off.abs() > DIFFERS_BY;
                    if differs {
                        differing.push(format!("{} ({imp}, {:+.0}%)", r.label, off * 100.0));
                    }
                    Cell::with(
                        format!("{} ({:+.0}%)", factor_text(&f), off * 100.0),
                        if differs { Class::Bad } else { Class::Same },
                        Some(format!(
                            "ours over the published factor; more than {:.0}% apart is marked",
                            DIFFERS_BY * 100.0
                        )),
                    )
                }
                None => Cell::with(
                    "not measured",
                    Class::Unsupported,
                    Some(unmeasured_reason(run, r.scenario, imp)),
                ),
            });
        }
        rows.push(row);
    }
    let mut blocks = vec![Block::Para(format!(
        "{}: {}. Its tables give each library's rate; the factors here are each over {baseline}'s, as ours are (each library paired round by round with {baseline} in this run, its 95% interval in brackets). A factor above 1 is faster than {baseline}. In brackets after ours: how far it sits from the published factor; more than {:.0}% apart is marked.",
        plan.source,
        plan.url,
        DIFFERS_BY * 100.0
    ))];
    blocks.push(Block::Bullets(setups(plan, run)));
    blocks.push(Block::Para(if differing.is_empty() {
        format!("All {compared} compared factors are within {:.0}% of the published ones.", DIFFERS_BY * 100.0)
    } else {
        format!(
            "{} of {compared} factors differ by more than {:.0}%: {}. The set-ups above are what differs between the two runs; docs/findings.md says which of these rows are traced to a cause.",
            differing.len(),
            DIFFERS_BY * 100.0,
            differing.join("; ")
        )
    }));
    blocks.push(Block::Table(Table {
        caption: format!("{} beside this run", plan.source),
        header,
        rows,
        label_cols: 2,
    }));
    Some(Section {
        id: format!("published-{}", plan.name),
        title: format!("Published figures beside ours: {}", plan.source),
        blocks,
    })
}

/// The two set-ups side by side: the machine and CPU features, the versions, and each
/// configuration difference the plan names.
fn setups(plan: &Plan, run: &RunData) -> Vec<String> {
    let features = run
        .env
        .compilers
        .get("cpu_features")
        .map_or("not recorded".to_string(), |f| f.clone());
    let mut versions: Vec<String> = Vec::new();
    for imp in plan.impls {
        if let Some(r) = run.records.iter().find(|r| r.client == *imp) {
            versions.push(format!("{imp}: {}", r.client_version));
        }
    }
    let mut out = vec![
        format!(
            "Machine: published on a {}; here a {} ({} cores), CPU features {features}.",
            plan.machine, run.env.cpu_model, run.env.cores
        ),
        format!(
            "Versions: published {}; here {}.",
            plan.versions,
            if versions.is_empty() {
                "none recorded".to_string()
            } else {
                versions.join("; ")
            }
        ),
    ];
    out.extend(
        plan.differences
            .iter()
            .map(|d| format!("Configuration: {d}.")),
    );
    out
}

/// Why a cell of the plan has no figure: the run's own reason when it recorded one.
fn unmeasured_reason(run: &RunData, scenario: &str, imp: &str) -> String {
    run.cells
        .iter()
        .find(|c| c.scenario == scenario && c.client == imp && c.server == imp)
        .map_or("not in this run".to_string(), |c| c.reason.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::RecordFixture;
    use tlsmatrix_model::record::Metric;

    fn run_of(command: &str, records: Vec<tlsmatrix_model::record::Record>) -> RunData {
        RunData {
            run_id: "r".into(),
            env: tlsmatrix_model::record::Env {
                command: command.into(),
                ..Default::default()
            },
            status: "complete".into(),
            records,
            cells: vec![],
        }
    }

    #[test]
    fn the_plan_is_read_from_the_command_line() {
        for command in [
            "tlsmatrix run --plan rustls-report --lanes 2",
            "tlsmatrix run --lanes 2 --plan=rustls-report",
        ] {
            assert_eq!(
                plan_of(&run_of(command, vec![])).unwrap().name,
                "rustls-report"
            );
        }
        assert!(plan_of(&run_of("tlsmatrix run --runs 60", vec![])).is_none());
        assert!(section(&run_of("tlsmatrix run", vec![])).is_none());
    }

    #[test]
    fn each_factor_is_set_beside_the_published_one_and_a_far_one_is_marked() {
        // TLS 1.3 ECDSA server handshakes, published 6,786 / 4,981 / 3,177 per second:
        // BoringSSL 0.73x, OpenSSL 0.47x. Here BoringSSL takes 1.37x the baseline's time
        // (0.73x, as published) and OpenSSL 1.5x (0.67x: 42% above the published 0.47x).
        let scenario = "handshake-tls13-ecdsa-p256-x25519mlkem768-full-chain3";
        let base = "rustls-aws-lc";
        let rec = |imp: &str, time_ratio: f64| {
            let mut f = RecordFixture::new(Metric::ServerCpuNs, 150_000.0 * time_ratio)
                .scenario(scenario)
                .pair(imp, imp);
            if imp != base {
                f = f.paired_with(base, &[time_ratio; 8]);
            }
            f.build()
        };
        let run = run_of(
            "tlsmatrix run --plan rustls-report",
            vec![
                rec(base, 1.0),
                rec("boringssl", 4981.38_f64.recip() * 6786.26),
                rec("openssl-3.6", 1.5),
            ],
        );
        let s = section(&run).unwrap();
        let Some(Block::Table(t)) = s.blocks.iter().find(|b| matches!(b, Block::Table(_))) else {
            panic!("no table");
        };
        let row = t
            .rows
            .iter()
            .find(|r| r[0].text == "full handshakes, 1.3, ecdsa, server")
            .unwrap();
        assert_eq!(row[3].text, "0.73x");
        assert!(
            row[4].text.starts_with("0.73x") && row[4].text.ends_with("(+0%)"),
            "{}",
            row[4].text
        );
        assert!(matches!(row[4].class, Class::Same));
        assert_eq!(row[5].text, "0.47x");
        assert!(
            row[6].text.starts_with("0.67x") && row[6].text.ends_with("(+42%)"),
            "{}",
            row[6].text
        );
        assert!(matches!(row[6].class, Class::Bad));
        // Rows this run did not measure say so, with the run's reason where it has one.
        let other = t
            .rows
            .iter()
            .find(|r| r[1].text == "bulk-tls12-aes-128-gcm-16k")
            .unwrap();
        assert_eq!(other[4].text, "not measured");
        let text = match &s.blocks[2] {
            Block::Para(p) => p.clone(),
            _ => panic!(),
        };
        assert!(
            text.starts_with("1 of 2 factors differ by more than 15%"),
            "{text}"
        );
    }
}
