//! The report says only what its run measured: no string in the report's code may carry a
//! measured figure (a time, a rate, a share, a factor, a size), for it would be printed as the
//! reader's own whatever her machine. A published figure is allowed when its string says so
//! ("published", with its source); the method's own constants (the interval's level, the
//! thresholds it applies, the sizes a scenario names) are listed below, each with why.

use std::path::Path;

/// Tokens that are the method's choices, not measurements.
const METHOD_CONSTANTS: &[(&str, &str)] = &[
    ("95%", "the level of every confidence interval"),
    ("90%", "the coverage repeatability checks against"),
    ("5%", "the noisy-cell and default regression thresholds"),
    ("0.5%", "an example threshold in compare's error message"),
    ("0.05%", "the smallest regression threshold compare accepts"),
    ("0%", "the bounds of a threshold"),
    ("100%", "the bounds of a threshold, and CSS widths"),
    ("1%", "how close two leaders must be to lead together"),
    ("1 KiB", "the data the memory scenarios move each way"),
    ("4 KiB", "the page size the aliasing trap is about"),
    ("16 KiB", "TLS's largest record"),
    ("5 bytes", "the TLS record header"),
    ("30 ms", "the round trip the wire scenarios name"),
    ("1,460 bytes", "TCP's segment payload on Ethernet"),
    (
        "14.6 KB",
        "TCP's initial window: 10 segments of 1,460 bytes (RFC 6928)",
    ),
];

const UNITS: &[&str] = &[
    "MB/s", "GB/s", "KiB", "MiB", "KB", "kB", "MB", "bytes", "ns", "µs", "us", "ms", "s", "%", "x",
];

/// The figures with units in `text`: "2.10x", "275 ns", "82%", "14 KB".
fn figures(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit()
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || "{._-:".contains(chars[i - 1])));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == ',' || chars[j] == '.') {
            j += 1;
        }
        let number: String = chars[i..j].iter().collect::<String>();
        let number = number.trim_end_matches([',', '.']);
        let mut k = i + number.chars().count();
        if k < chars.len() && chars[k] == ' ' {
            k += 1;
        }
        let rest: String = chars[k..].iter().collect();
        let unit = UNITS.iter().find(|u| {
            rest.starts_with(*u)
                && !rest[u.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '/')
        });
        if let Some(u) = unit {
            let sep = if k > i + number.chars().count() {
                " "
            } else {
                ""
            };
            out.push(format!("{number}{sep}{u}"));
        }
        i = j.max(i + 1);
    }
    out
}

/// The string literals of a line of code (not of a comment).
fn literals(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find('"') {
        let body = &rest[start + 1..];
        let mut end = None;
        let mut escaped = false;
        for (n, c) in body.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(n);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(end) = end else { break };
        out.push(&body[..end]);
        rest = &body[end + 1..];
    }
    out
}

#[test]
fn no_string_in_the_report_code_carries_a_measured_figure() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // Tests may hold any figure they assert on.
        let code = text.split("#[cfg(test)]").next().unwrap();
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for lit in literals(line) {
                if lit.contains("published") {
                    continue;
                }
                for f in figures(lit) {
                    if !METHOD_CONSTANTS.iter().any(|(c, _)| *c == f) {
                        found.push(format!(
                            "{}:{}: {f} in \"{}\"",
                            path.file_name().unwrap().to_string_lossy(),
                            n + 1,
                            lit.chars().take(90).collect::<String>()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "figures in the report's strings that no run measured (take them from the run, cite docs/findings.md with its machine and date, or label a published figure with its source):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scanner_finds_figures_and_only_figures() {
    assert_eq!(
        figures("aws-lc 275 to 324 ns, 2.10x, 82% of 16 KiB, 14.6 KB, 1,774/s"),
        ["324 ns", "2.10x", "82%", "16 KiB", "14.6 KB"]
    );
    assert!(figures("{:.0} MB/s, x25519mlkem768, tls13, n1000, 0x11ec, p256").is_empty());
    assert_eq!(literals(r#"f("a \"b\" 1%", "c")"#), [r#"a \"b\" 1%"#, "c"]);
}
