//! The report says only what its run measured: no string in the report's code may carry a
//! measured figure (a time, a rate, a share, a factor, a size), for it would be printed as the
//! reader's own whatever her machine. A published figure is allowed when its string says so
//! ("published", with its source); the method's own constants (the interval's level, the
//! thresholds it applies, the sizes a scenario names) are listed below, each with why.

use std::path::Path;

use tlsmatrix_history::{read_jsonl, RunData};
use tlsmatrix_model::measure::MEASURES;
use tlsmatrix_report::{markdown, Companions};

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
    (
        "85%",
        "the share of its own AEAD a bulk transfer is held to (bulk_causes::CEILING_TARGET)",
    ),
    (
        "10%",
        "how far a time split's parts may sum from the time above the floor (overhead::TOLERANCE)",
    ),
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

/// The fixture run (`tests/fixture`, a real run's files trimmed to five stacks and a few
/// scenarios, each file's environment once on its first line), loaded as `tlsmatrix report`
/// loads results files.
fn fixture(kind: &str) -> Option<RunData> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture");
    let text = std::fs::read_to_string(dir.join(format!("{kind}.jsonl"))).ok()?;
    let mut lines = text.lines();
    let env = lines.next()?;
    let env = &env[r#"{"env":"#.len()..env.len() - 1];
    let whole: String = lines
        .map(|l| match l.strip_prefix('{') {
            // Records carry the run's environment; cells (unsupported, failed) do not.
            Some(rest) if l.contains(r#""metric":"#) => format!("{{\"env\":{env},{rest}\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    let path = std::env::temp_dir().join(format!(
        "tlsmatrix-fixture-{}-{kind}.jsonl",
        std::process::id()
    ));
    std::fs::write(&path, whole).unwrap();
    let run = read_jsonl(&path).unwrap().pop();
    let _ = std::fs::remove_file(&path);
    run
}

/// A factor fixed by `key` and `seed`, never near 1 (from 0.35 to 0.62, or from 1.6 to 2.6):
/// how another machine's figure for the same cell might sit against this one's, far enough
/// that a rounded figure (a "2%") cannot stay put by chance.
fn factor(key: &str, seed: u64) -> f64 {
    let mut h = seed ^ 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    let u = (h >> 12) as f64 / (1u64 << 52) as f64;
    if h & 1 == 0 {
        0.35 + 0.27 * u
    } else {
        1.6 + u
    }
}

/// `run` as another machine would have measured it: every figure of every cell moved by a
/// factor of its own (its paired ratios by another), on an AMD CPU without AVX-512.
fn elsewhere(run: &RunData, seed: u64) -> RunData {
    let mut run = run.clone();
    for r in &mut run.records {
        let key = format!("{} {} {} {:?}", r.scenario, r.client, r.server, r.metric);
        let f = factor(&key, seed);
        for v in
            r.samples
                .iter_mut()
                .chain([&mut r.median, &mut r.min, &mut r.ci_low, &mut r.ci_high])
        {
            *v *= f;
        }
        if let Some(p) = &mut r.paired {
            let g = factor(&format!("{key} paired"), seed);
            p.ratios.iter_mut().for_each(|v| *v *= g);
        }
        r.env.cpu_model = "AMD EPYC 7B13".into();
        r.env.compilers.insert(
            "cpu_features".into(),
            "aes pclmulqdq avx2 adx sha_ni".into(),
        );
    }
    run
}

/// The report's prose (every line but its tables') as `report.md` writes it.
fn prose(run: &RunData, extra: &Companions) -> Vec<String> {
    markdown(run, &[], extra)
        .lines()
        .filter(|l| !l.trim_start().starts_with('|'))
        .map(str::to_string)
        .collect()
}

fn companions(load: &dyn Fn(&str) -> Option<RunData>) -> Companions {
    Companions {
        measured: MEASURES
            .iter()
            .filter(|r| r.companion)
            .filter_map(|r| Some((r.measure, load(r.name)?)))
            .collect(),
        areas: ["memory", "throughput"]
            .into_iter()
            .filter_map(load)
            .collect(),
        allocators: load("allocators"),
        ..Companions::default()
    }
}

/// A prose line as a template (each figure a mark, every other number a 0) and its figures
/// in order: two renders' lines with one template say the same thing of the same cells.
fn template(line: &str) -> (String, Vec<String>) {
    let found = figures(line);
    let mut rest = line;
    let mut marked = String::new();
    for f in &found {
        // A figure's number as the line writes it: "2.10x" or "275 ns" (figures keeps the
        // space before a unit).
        let at = rest.find(f.as_str()).unwrap_or(rest.len());
        marked.push_str(&rest[..at]);
        marked.push('\u{1}');
        rest = &rest[(at + f.len()).min(rest.len())..];
    }
    marked.push_str(rest);
    let mut t = String::new();
    let mut in_number = false;
    for c in marked.chars() {
        if c.is_ascii_digit() || (in_number && (c == ',' || c == '.')) {
            if !in_number {
                t.push('0');
            }
            in_number = true;
        } else {
            in_number = false;
            t.push(c);
        }
    }
    (t, found)
}

/// Every figure the report's prose states comes from its run: rendered from the fixture run,
/// and from the same run as three other machines would have measured it, a figure of the
/// first render that stands unchanged, in the same sentence about the same cells, in every
/// other render did not come from the measurements, and fails the test unless it is one of
/// the method's constants, a published figure labelled so, or the library's own words in a
/// cell's reason.
#[test]
fn every_figure_in_the_prose_moves_with_the_run() {
    let run = fixture("main").expect("the fixture's main run");
    let here = prose(&run, &companions(&|k| fixture(k)));
    let away: Vec<Vec<(String, Vec<String>)>> = [1, 2, 3]
        .into_iter()
        .map(|seed| {
            let moved = |k: &str| fixture(k).map(|r| elsewhere(&r, seed));
            prose(&elsewhere(&run, seed), &companions(&moved))
                .iter()
                .map(|l| template(l))
                .collect()
        })
        .collect();
    // The run's own words: why a cell (of the main run or a companion) has no figures.
    let kinds = [
        "main",
        "instructions",
        "memory",
        "throughput",
        "counters",
        "ceiling",
        "profile",
        "setup",
        "floor",
        "contention",
        "allocators",
    ];
    let cells: Vec<String> = kinds
        .iter()
        .filter_map(|k| fixture(k))
        .flat_map(|r| r.cells.into_iter().map(|c| c.reason))
        .collect();
    let reasons: Vec<&str> = cells.iter().map(String::as_str).collect();
    let (mut judged, mut found) = (0, Vec::new());
    for line in &here {
        let (t, figs) = template(line);
        if figs.is_empty()
            || line.contains("published")
            || reasons.iter().any(|r| !r.is_empty() && line.contains(r))
        {
            continue;
        }
        // The same sentence in each other render; a sentence that changed with the figures
        // cannot be judged here.
        let twins: Vec<Vec<&Vec<String>>> = away
            .iter()
            .map(|p| p.iter().filter(|(u, _)| *u == t).map(|(_, f)| f).collect())
            .collect();
        if twins.iter().any(Vec::is_empty) {
            continue;
        }
        judged += 1;
        for (i, f) in figs.iter().enumerate() {
            let stays = twins
                .iter()
                .all(|lines| lines.iter().all(|g| g.get(i) == Some(f)));
            if stays && !METHOD_CONSTANTS.iter().any(|(c, _)| c == f) {
                found.push(format!(
                    "{f} in: {}",
                    line.chars().take(160).collect::<String>()
                ));
            }
        }
    }
    assert!(
        judged > 40,
        "only {judged} prose lines with figures could be matched across renders:\n{}",
        here.join("\n")
    );
    assert!(
        found.is_empty(),
        "figures in the report's prose that stay put when the run's measurements move (take them from the run, or label a published figure with its source):\n{}",
        found.join("\n")
    );
}
