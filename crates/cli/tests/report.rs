//! `tlsmatrix report` end to end: a database with two matrix runs and a libp2p run becomes a
//! report whose every chart draws and every table has rows *in a real browser* (headless
//! Chromium), that needs nothing from the network, and is never half-written.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;

use tlsmatrix_model::fixture::RecordFixture;
use tlsmatrix_model::record::{CellRecord, CellStatus, Env, Metric, Record, CELL_SCHEMA};

fn record(run: &str, scenario: &str, pair: (&str, &str), metric: Metric, centre: f64) -> Record {
    let samples: Vec<f64> = (0..10)
        .map(|i| centre * (1.0 + 0.004 * f64::from(i % 5)))
        .collect();
    let env = Env {
        cpu_model: "Test CPU".into(),
        cores: 2,
        kernel: "6.1".into(),
        timestamp: format!("2026-11-2{}T10:00:00Z", &run[run.len() - 1..]),
        command: "tlsmatrix run".into(),
        git_revision: "abc".into(),
        ..Env::default()
    };
    RecordFixture::new(metric, centre)
        .run(run)
        .scenario(scenario)
        .pair(pair.0, pair.1)
        .versions(&format!("{} 1.0", pair.0), &format!("{} 1.0", pair.1))
        .samples(samples)
        .env(env)
        .build()
}

/// One pair's record line per metric, each value made `factor` times worse (lower where
/// higher is better, higher where lower is).
fn slowed_lines(
    run: &str,
    scenario: &str,
    pair: (&str, &str),
    metrics: &[(Metric, f64)],
    factor: f64,
) -> String {
    metrics
        .iter()
        .map(|&(m, v)| {
            let v = if m.higher_is_better() {
                v / factor
            } else {
                v * factor
            };
            record(run, scenario, pair, m, v).to_line()
        })
        .collect()
}

/// A matrix run: two impls, two handshake scenarios and a bulk one, and an unsupported cell.
fn matrix_run(run: &str, slowdown: f64) -> String {
    let impls = ["alpha", "beta"];
    let mut lines = String::new();
    for (scenario, metrics) in [
        (
            "handshake-tls13-ecdsa-p256-x25519-full",
            &[
                (Metric::ClientCpuNs, 300_000.0),
                (Metric::ServerCpuNs, 150_000.0),
            ][..],
        ),
        (
            "handshake-tls12-rsa-2048-p256-full",
            &[
                (Metric::ClientCpuNs, 400_000.0),
                (Metric::ServerCpuNs, 900_000.0),
            ],
        ),
        (
            "bulk-tls13-aes-128-gcm-16k",
            &[(Metric::SendMbPerS, 2_000.0), (Metric::RecvMbPerS, 1_800.0)],
        ),
    ] {
        for c in impls {
            for s in impls {
                if scenario.starts_with("bulk") && c == "beta" && s == "alpha" {
                    let cell = CellRecord {
                        schema: CELL_SCHEMA.into(),
                        run_id: run.into(),
                        scenario: scenario.into(),
                        client: c.into(),
                        server: s.into(),
                        outcome: CellStatus::Unsupported,
                        reason: "beta cannot send to alpha <in this test>".into(),
                    };
                    lines.push_str(&cell.to_line());
                    continue;
                }
                let factor = if c == "beta" || s == "beta" { 1.7 } else { 1.0 } * slowdown;
                lines.push_str(&slowed_lines(run, scenario, (c, s), metrics, factor));
            }
        }
    }
    lines
}

/// A memory run: heap per connection, beta keeping twice alpha's as a client.
fn memory_run() -> String {
    let mut lines = String::new();
    for (c, s) in [
        ("alpha", "alpha"),
        ("alpha", "beta"),
        ("beta", "alpha"),
        ("beta", "beta"),
    ] {
        let client = if c == "beta" { 16384.0 } else { 8192.0 };
        for (m, v) in [
            (Metric::ClientHeapBytes, client),
            (Metric::ServerHeapBytes, 7000.0),
        ] {
            lines.push_str(&record("m1", "memory-tls13-ecdsa-p256-n100", (c, s), m, v).to_line());
        }
    }
    lines
}

fn libp2p_run() -> String {
    let mut lines = String::new();
    for (c, s, v) in [
        ("go-crypto-tls", "go-crypto-tls", 1.46e6),
        ("go-crypto-tls", "go-openssl", 2.2e6),
        ("go-openssl", "go-openssl", 2.9e6),
    ] {
        lines.push_str(
            &record(
                "go-bench-1",
                "libp2p-handshake-tls13-ecdsa-p256-x25519",
                (c, s),
                Metric::NsPerOp,
                v,
            )
            .to_line(),
        );
    }
    lines
}

/// The DOM facts the test needs, computed by the browser after layout.
const CHECK_SCRIPT: &str = r#"<script>
window.addEventListener('load', function () {
  var drawn = function (e) { var b = e.getBoundingClientRect(); return b.width > 0 || b.height > 0; };
  var charts = Array.prototype.map.call(document.querySelectorAll('svg.chart'), function (svg) {
    var marks = svg.querySelectorAll('rect.bar, path.line, circle.point, path.errorbar');
    return { title: svg.getAttribute('aria-label'), marks: Array.prototype.filter.call(marks, drawn).length,
             width: svg.getBoundingClientRect().width };
  });
  var tables = Array.prototype.map.call(document.querySelectorAll('table'), function (t) {
    return { caption: t.caption ? t.caption.textContent : '',
             rows: t.tBodies.length ? Array.prototype.filter.call(t.tBodies[0].rows, drawn).length : 0 };
  });
  var pre = document.createElement('pre'); pre.id = 'render-check';
  pre.textContent = JSON.stringify({ charts: charts, tables: tables });
  document.body.appendChild(pre);
});
</script>"#;

fn chromium(args: &[&str]) -> Output {
    let o = Command::new(repo_script("chromium-headless"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "headless chromium failed (scripts/setup installs it): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

#[test]
fn the_report_draws_every_chart_and_table_in_a_browser() {
    let d = scratch("report-render");
    let (db, interop) = write_render_inputs(&d);
    let db_s = db.to_str().unwrap();
    let out = d.join("report");
    let o = tlsmatrix(&[
        "report",
        "--db",
        db_s,
        "--out",
        out.to_str().unwrap(),
        "--interop",
        interop.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    // Self-contained: nothing is fetched from anywhere.
    for needle in ["http://", "https://", "<script", "<link", "@import", "url("] {
        assert!(!html.contains(needle), "index.html contains {needle}");
    }
    assert!(html.contains("r2") && html.contains("beta"));
    // The interop matrix: colour and text both say the outcome, the title why.
    assert!(
        html.contains("<td class=\"num failed\" title=\"why fail\">fail</td>"),
        "{html}"
    );
    assert!(html.contains("interop case version-mismatch"));
    check_report_markdown(&std::fs::read_to_string(out.join("report.md")).unwrap());
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    // Header, then 3 scenarios x 4 pairs x 2 figures but the unsupported cell.
    assert_eq!(csv.lines().count(), 1 + 3 * 4 * 2 - 2);

    check_in_a_browser(&d, &out, &html);
}

/// The render test's database (two matrix runs, the Go benchmarks, a memory run), its
/// interop file and the step times beside it.
fn write_render_inputs(d: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let db = d.join("h.db");
    let db_s = db.to_str().unwrap();
    for (name, text) in [
        ("run1.jsonl", matrix_run("r1", 1.0)),
        ("run2.jsonl", matrix_run("r2", 1.1)),
        ("go.jsonl", libp2p_run()),
        ("memory.jsonl", memory_run()),
    ] {
        let f = d.join(name);
        std::fs::write(&f, text).unwrap();
        let o = tlsmatrix(&["import", f.to_str().unwrap(), "--db", db_s]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let interop = d.join("interop.jsonl");
    let mut cells = String::new();
    for (case, c, s, outcome) in [
        ("tls13", "alpha", "alpha", "pass"),
        ("tls13", "alpha", "tool", "fail"),
        ("tls13", "tool", "alpha", "unsupported"),
        ("version-mismatch", "alpha", "tool", "expected-failure"),
    ] {
        cells.push_str(&format!(
            "{{\"schema\":\"tlsmatrix.interop/1\",\"run_id\":\"i1\",\"case\":\"{case}\",\"client\":\"{c}\",\"server\":\"{s}\",\"client_version\":\"{c} 1\",\"server_version\":\"{s} 1\",\"outcome\":\"{outcome}\",\"reason\":\"why {outcome}\",\"seconds\":0.1,\"command\":\"x\"}}\n"
        ));
    }
    std::fs::write(&interop, cells).unwrap();
    // make report's step times, as scripts/stage writes them beside the interop file.
    std::fs::write(
        d.join("timings.tsv"),
        "# tlsmatrix timings\n# commit abc1234\n# epoch 1000.0\n# left-out compiler axis\tmake build-compilers, then make report\nbuild rust-workspace\t431.2\tbuilt\t1000.0\n\
         interop\t120.0\texit 0\t1431.2\nbuild driver-openssl-3.6-clang\t200.0\tbuilt\t1431.5\n\
         timed-suite\t293.0\texit 0\t1632.0\t527.4\n",
    )
    .unwrap();
    (db, interop)
}

/// The markdown report of the render test's inputs: its tables, the step times, the
/// summary and the memory section.
fn check_report_markdown(md: &str) {
    assert!(md.contains("| scenario | figure | impl A | impl B | A | B | factor A vs B |"));
    assert!(md.contains("How long `make report` took here"), "{md}");
    // When each step began, its CPU where the file gives it, what ran beside it, and the
    // job's length from end to end.
    assert!(
        md.contains("| timed-suite | 10:32 | 4 min 53 s | 8 min 47 s (1.8) | exit 0 | - |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| interop | 7:11 | 2 min 00 s | - | exit 0 | build driver-openssl-3.6-clang |"
        ),
        "{md}"
    );
    assert!(
        md.contains("15 min 25 s from the first step's start"),
        "{md}"
    );
    assert!(md.contains("add up to 17 min 24 s"), "{md}");
    // A step this run left out: a row that says how to get it.
    assert!(
        md.contains(
            "| compiler axis | - | - | - | left out: make build-compilers, then make report | - |"
        ),
        "{md}"
    );
    assert!(md.contains("1 step(s) left out on this run"), "{md}");
    assert!(
        md.contains("beta completes full handshakes 1.70x slower than alpha as a client"),
        "{md}"
    );
    // The summary is one table, a row per figure and a column per impl; the sentences moved
    // into their areas' sections.
    let summary = md
        .split("## Summary")
        .nth(1)
        .unwrap()
        .split("\n## ")
        .next()
        .unwrap();
    assert!(summary.contains("| area | figure |"), "{summary}");
    assert!(
        summary.contains("| full handshakes | client hs/s | 0.59x"),
        "{summary}"
    );
    assert!(!summary.contains("completes full handshakes"), "{summary}");
    // The memory run is the newest but not a matrix run: it joins the report as its section.
    assert!(md.contains("## Memory per session"), "{md}");
    assert!(
        md.contains(
            "beta keeps a connection after its handshake in 2.00x more heap than alpha as a client"
        ),
        "{md}"
    );
}

/// The report in headless Chromium: nothing fetched, every chart draws and every table has
/// rows, and a screenshot is a real picture.
fn check_in_a_browser(d: &std::path::Path, out: &std::path::Path, html: &str) {
    let probe = d.join("probe.html");
    std::fs::write(
        &probe,
        html.replace("</body>", &format!("{CHECK_SCRIPT}</body>")),
    )
    .unwrap();
    let url = format!("file://{}", probe.display());
    let dom = chromium(&["--virtual-time-budget=5000", "--dump-dom", &url]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    let json = dom
        .split("<pre id=\"render-check\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("the check script did not run: {dom}"))
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let facts: serde_json::Value = serde_json::from_str(&json).unwrap();
    let charts = facts["charts"].as_array().unwrap();
    let tables = facts["tables"].as_array().unwrap();
    // Handshake client + server, bulk send + recv, two history lines, the libp2p chart.
    assert!(charts.len() >= 7, "{charts:#?}");
    for c in charts {
        assert!(c["marks"].as_u64().unwrap() > 0, "chart draws nothing: {c}");
        assert!(
            c["width"].as_f64().unwrap() > 100.0,
            "chart has no size: {c}"
        );
    }
    assert!(tables.len() >= 6, "{tables:#?}");
    for t in tables {
        assert!(t["rows"].as_u64().unwrap() > 0, "table without rows: {t}");
    }
    assert!(
        tables
            .iter()
            .any(|t| t["caption"].as_str().unwrap().contains("no figures")),
        "the unsupported cell is listed: {tables:#?}"
    );

    let shot = out.join("screenshot.png");
    chromium(&[
        &format!("--screenshot={}", shot.display()),
        "--window-size=1200,3000",
        &format!("file://{}", out.join("index.html").display()),
    ]);
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.len() > 10_000 && png.starts_with(b"\x89PNG"),
        "{} bytes",
        png.len()
    );
}

/// A run as the main job makes it with seven impls: each impl with itself and against the
/// first (the baseline) on the other side, two handshake scenarios and a bulk one.
fn seven_impl_run() -> (Vec<String>, String) {
    let impls: Vec<String> = [
        "rustls-aws-lc",
        "rustls-ring",
        "openssl-3.0",
        "s2n-tls",
        "boringssl",
        "openssl-3.6",
        "openssl-4.0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let base = impls[0].as_str();
    let mut lines = String::new();
    for (scenario, metrics) in [
        (
            "handshake-tls13-ecdsa-p256-x25519-full",
            &[
                (Metric::ClientCpuNs, 200_000.0),
                (Metric::ServerCpuNs, 100_000.0),
            ][..],
        ),
        (
            "handshake-tls13-rsa-2048-x25519-full",
            &[
                (Metric::ClientCpuNs, 300_000.0),
                (Metric::ServerCpuNs, 900_000.0),
            ],
        ),
        (
            "bulk-tls13-aes-128-gcm-16k",
            &[(Metric::SendMbPerS, 3_000.0), (Metric::RecvMbPerS, 2_800.0)],
        ),
    ] {
        for (i, imp) in impls.iter().enumerate() {
            let slow = 1.0 + 0.3 * i as f64;
            let mut pairs = vec![(imp.as_str(), imp.as_str())];
            if imp != base {
                pairs.extend([(imp.as_str(), base), (base, imp.as_str())]);
            }
            for (c, s) in pairs {
                lines.push_str(&slowed_lines("r7", scenario, (c, s), metrics, slow));
            }
        }
    }
    (impls, lines)
}

/// Layout facts the browser computes: the viewport's width, the widest element outside a
/// scrolling box, every legend entry inside its chart, the headline and the interop summary.
const LAYOUT_SCRIPT: &str = r#"<script>
window.addEventListener('load', function () {
  var vw = document.documentElement.clientWidth, overflow = [];
  Array.prototype.forEach.call(document.querySelectorAll('body *'), function (e) {
    if (e.closest('.scroll') && !e.classList.contains('scroll')) return;
    if (e.closest('details') && !e.closest('details').open) return;
    var b = e.getBoundingClientRect();
    if (b.right > vw + 1) overflow.push(e.tagName + '.' + e.className + ' ' + Math.round(b.right));
  });
  var legends = Array.prototype.map.call(document.querySelectorAll('svg.chart'), function (svg) {
    var box = svg.getBoundingClientRect();
    var entries = svg.querySelectorAll('g.legend-entry');
    var inside = Array.prototype.filter.call(entries, function (g) {
      var b = g.getBoundingClientRect();
      return b.width > 0 && b.left >= box.left - 1 && b.right <= box.right + 1 && b.top >= box.top - 1;
    }).length;
    return { title: svg.getAttribute('aria-label'), entries: entries.length, inside: inside };
  });
  var captions = Array.prototype.map.call(document.querySelectorAll('table caption'), function (c) { return c.textContent; });
  var pre = document.createElement('pre'); pre.id = 'layout-check';
  pre.textContent = JSON.stringify({ viewport: vw, overflow: overflow, legends: legends,
    headlines: document.querySelectorAll('ul.headlines li').length,
    details: document.querySelectorAll('details').length, captions: captions });
  document.body.appendChild(pre);
});
</script>"#;

#[test]
fn seven_impls_fit_the_page_with_a_headline_and_an_interop_summary() {
    let d = scratch("report-seven");
    let db = d.join("h.db");
    let (impls, run) = seven_impl_run();
    // And an instruction-count run of the first two, whose headline must say on what CPU.
    let (a, b) = (impls[0].as_str(), impls[1].as_str());
    let mut counted = String::new();
    for pair in [(a, a), (a, b), (b, a), (b, b)] {
        let send = if pair.0 == b { 3.0e6 } else { 4.8e6 };
        for (m, v) in [
            (Metric::SendInstrPerMib, send),
            (Metric::RecvInstrPerMib, 6.1e6),
        ] {
            counted.push_str(&record("i1", "bulk-tls13-aes-128-gcm-16k", pair, m, v).to_line());
        }
    }
    let f = d.join("run.jsonl");
    std::fs::write(&f, run + &counted).unwrap();
    let o = tlsmatrix(&["import", f.to_str().unwrap(), "--db", db.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Interop among the seven and three tools: ten peers, two cases.
    let mut peers = impls.clone();
    peers.extend(["go-crypto-tls", "openssl-cli", "gnutls-cli"].map(String::from));
    let mut cells = String::new();
    for case in ["tls13-ecdsa", "version-mismatch"] {
        for c in &peers {
            for s in &peers {
                let outcome = match (case, c.as_str(), s.as_str()) {
                    (_, "gnutls-cli", "s2n-tls") => "known-deviation",
                    ("version-mismatch", _, _) => "expected-failure",
                    _ => "pass",
                };
                cells.push_str(&format!(
                    "{{\"schema\":\"tlsmatrix.interop/1\",\"run_id\":\"i7\",\"case\":\"{case}\",\"client\":\"{c}\",\"server\":\"{s}\",\"client_version\":\"{c} 1\",\"server_version\":\"{s} 1\",\"outcome\":\"{outcome}\",\"reason\":\"why {outcome}\",\"seconds\":0.1,\"command\":\"x\"}}\n"
                ));
            }
        }
    }
    let interop = d.join("interop.jsonl");
    std::fs::write(&interop, cells).unwrap();
    let out = d.join("report");
    let o = tlsmatrix(&[
        "report",
        "--db",
        db.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--interop",
        interop.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(!html.contains("<script"));
    // The compact area table: a figure and its factor in one cell.
    assert!(
        html.contains("(0.77x)"),
        "openssl-3.0's factor 1/1.3 in the area table"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("full handshakes, client hs/s: rustls-aws-lc leads, 1.30x better than the runner-up rustls-ring; last openssl-4.0 at 0.36x rustls-aws-lc's."),
        "{md}"
    );
    assert!(
        md.contains(&format!("bulk (instructions), send instr/MiB: {b} leads, 1.60x better than the runner-up {a} (counted on valgrind's CPU, which has no AVX-512 or VAES).")),
        "{md}"
    );
    assert!(
        md.contains("| rustls-aws-lc | **2/2** |"),
        "interop summary cells: {md}"
    );

    let probe = d.join("probe.html");
    std::fs::write(
        &probe,
        html.replace("</body>", &format!("{LAYOUT_SCRIPT}</body>")),
    )
    .unwrap();
    let dom = chromium(&[
        "--virtual-time-budget=5000",
        "--window-size=900,2000",
        "--dump-dom",
        &format!("file://{}", probe.display()),
    ]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    let json = dom
        .split("<pre id=\"layout-check\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("the layout script did not run: {dom}"))
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let facts: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(facts["viewport"].as_u64().unwrap() <= 900, "{facts}");
    assert_eq!(
        facts["overflow"].as_array().unwrap().len(),
        0,
        "wider than the page: {facts}"
    );
    let legends = facts["legends"].as_array().unwrap();
    assert!(legends.len() >= 4, "{facts}");
    for l in legends {
        // The instruction-count run above holds two of the seven.
        let counted = l["title"].as_str().unwrap_or("").contains("instr/");
        assert_eq!(
            l["entries"],
            if counted { 2 } else { 7 },
            "every impl in the legend: {l}"
        );
        assert_eq!(l["inside"], l["entries"], "a legend entry is cut off: {l}");
    }
    assert!(facts["headlines"].as_u64().unwrap() >= 4, "{facts}");
    assert!(facts["details"].as_u64().unwrap() >= 3, "{facts}");
    assert!(
        facts["captions"].as_array().unwrap().iter().any(|c| c
            .as_str()
            .unwrap()
            .starts_with("All cases: passed of applicable cases")),
        "{facts}"
    );
}

#[test]
fn bad_input_is_one_sentence_exit_2_and_no_report() {
    let d = scratch("report-bad");
    let out = d.join("report");
    let db = d.join("h.db");
    let good = d.join("good.jsonl");
    std::fs::write(&good, matrix_run("r1", 1.0)).unwrap();
    let foreign = d.join("foreign.jsonl");
    std::fs::write(
        &foreign,
        "{\"schema\":\"tlsmatrix.result/0\",\"run_id\":\"x\"}\n",
    )
    .unwrap();
    let torn = d.join("torn.jsonl");
    let text = matrix_run("r1", 1.0);
    std::fs::write(&torn, &text[..text.len() - 40]).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["report", "--run", foreign.to_str().unwrap()],
            "which this tlsmatrix does not read",
        ),
        (
            &["report", "--run", torn.to_str().unwrap()],
            "ends in an incomplete line",
        ),
        (
            &[
                "report",
                "--run",
                "no-such-run",
                "--db",
                good.to_str().unwrap(),
            ],
            "is not a tlsmatrix database",
        ),
        (
            &["show", "no-such-run", "--db", db.to_str().unwrap()],
            "no history database",
        ),
        (
            &["compare", good.to_str().unwrap(), foreign.to_str().unwrap()],
            "does not read",
        ),
        (
            &["compare", good.to_str().unwrap(), "x", "--threshold", "abc"],
            "is not a percentage",
        ),
    ];
    for (args, wants) in cases {
        let mut args = args.to_vec();
        let out_s = out.to_str().unwrap();
        if args[0] == "report" {
            args.extend(["--out", out_s]);
        }
        let o = tlsmatrix(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(wants), "{args:?}: wanted '{wants}' in: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!out.exists(), "{args:?} left a report behind");
    }
    // A run id the database does not hold.
    let o = tlsmatrix(&[
        "import",
        good.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let o = tlsmatrix(&[
        "report",
        "--run",
        "nope",
        "--db",
        db.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no run 'nope'"));
    assert!(!out.exists());
    // No stray temporary folders beside the target either.
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".report"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn compare_gates_on_significant_regressions_only() {
    let d = scratch("compare");
    let base = d.join("base.jsonl");
    let same = d.join("same.jsonl");
    let slow = d.join("slow.jsonl");
    std::fs::write(&base, matrix_run("r1", 1.0)).unwrap();
    std::fs::write(&same, matrix_run("r2", 1.0)).unwrap();
    std::fs::write(&slow, matrix_run("r3", 1.2)).unwrap();
    let run = |b: &Path, c: &Path, t: &str| {
        tlsmatrix(&[
            "compare",
            b.to_str().unwrap(),
            c.to_str().unwrap(),
            "--threshold",
            t,
        ])
    };
    let o = run(&base, &same, "5%");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&base, &slow, "5%");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("REGRESSION") && text.contains("0.833x"),
        "{text}"
    );
    // 20% slower is within a 25% threshold.
    assert_eq!(run(&base, &slow, "25%").status.code(), Some(0));
    // Faster is never a regression.
    assert_eq!(run(&slow, &base, "5%").status.code(), Some(0));
}
