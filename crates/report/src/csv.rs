//! `results.csv`: one row per record, for spreadsheets and notebooks; the figures as recorded
//! (per-handshake nanoseconds stay nanoseconds) plus the noisy flag.

use tlsmatrix_model::record::Record;

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn render(records: &[Record]) -> String {
    let mut out = String::from(
        "run_id,scenario,client,server,client_version,server_version,metric,unit,median,min,ci_low,ci_high,samples,noisy\n",
    );
    for r in records {
        let cols = [
            field(&r.run_id),
            field(&r.scenario),
            field(&r.client),
            field(&r.server),
            field(&r.client_version),
            field(&r.server_version),
            r.metric.as_str().to_string(),
            field(&r.unit),
            r.median.to_string(),
            r.min.to_string(),
            r.ci_low.to_string(),
            r.ci_high.to_string(),
            r.samples.len().to_string(),
            r.summary().is_noisy().to_string(),
        ];
        out.push_str(&cols.join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_commas_are_quoted() {
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(field("plain"), "plain");
    }
}
