//! A run's environment as the report and `show` print it.

use tlsmatrix_history::RunData;

/// The environment of a run, as `key: value` lines.
pub fn environment(run: &RunData) -> Vec<(String, String)> {
    let e = &run.env;
    let mut out = vec![
        (
            "run".to_string(),
            format!("{} ({})", run.run_id, run.status),
        ),
        ("started".into(), e.timestamp.clone()),
        ("command".into(), e.command.clone()),
        ("git revision".into(), e.git_revision.clone()),
        ("cpu".into(), format!("{} ({} cores)", e.cpu_model, e.cores)),
        ("kernel".into(), e.kernel.clone()),
    ];
    for (tool, v) in &e.compilers {
        out.push((tool.clone(), v.clone()));
    }
    for (name, v) in run.versions() {
        out.push((name, v));
    }
    out
}
