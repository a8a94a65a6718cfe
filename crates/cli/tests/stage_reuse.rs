//! `scripts/stage --reuse`: a counted stage of `make report` runs again exactly when what its
//! result depends on changed (the fingerprint of binaries, packages and CPU, its command line,
//! its outputs, its database) or when its last run failed a cell; otherwise the timings file
//! says it was reused and since when.

mod common;

use std::path::Path;
use std::process::Command;

use tlsmatrix_model::fixture::RecordFixture;
use tlsmatrix_model::record::Metric;

/// One `scripts/stage --reuse` of a stage that appends "ran" to `log`, writes a results file
/// of one run (`out.jsonl`) and stores it in the database `db.sqlite`, run in `dir`; `extra`
/// is appended to the stage's shell command (a different command line).
fn stage(dir: &Path, extra: &str, reuse: Option<&str>) -> (i32, String) {
    let mut cmd = Command::new(common::repo_script("stage"));
    cmd.current_dir(dir)
        .env("TLSMATRIX_TIMINGS", dir.join("timings.tsv"))
        .args(["--reuse", "counted", "out.jsonl,db:db.sqlite", "sh", "-c"])
        .arg(format!(
            "echo ran >> log; cp run.jsonl out.jsonl && {} import out.jsonl --db db.sqlite 2>/dev/null; {extra}",
            common::bin().display()
        ));
    if let Some(r) = reuse {
        cmd.env("REUSE", r);
    }
    let o = cmd.output().expect("scripts/stage runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

fn runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("log"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn a_counted_stage_is_reused_only_while_nothing_it_depends_on_changed() {
    let dir = common::scratch("stage-reuse");
    let record = RecordFixture::new(Metric::ClientInstructions, 1e6)
        .run("counted-run")
        .build();
    std::fs::write(dir.join("run.jsonl"), record.to_line()).unwrap();
    let begin = Command::new(common::repo_script("stage"))
        .arg("--begin")
        .env("TLSMATRIX_TIMINGS", dir.join("timings.tsv"))
        .status()
        .unwrap();
    assert!(begin.success());

    assert_eq!(stage(&dir, "", None).0, 0);
    assert_eq!(runs(&dir), 1);
    let (code, said) = stage(&dir, "", None);
    assert_eq!((code, runs(&dir)), (0, 1), "not reused: {said}");
    assert!(said.contains("counted: reused, not run"), "{said}");

    // An output changed since: run again.
    std::fs::write(dir.join("out.jsonl"), "").unwrap();
    stage(&dir, "", None);
    assert_eq!(runs(&dir), 2);
    // Another command line: run again.
    stage(&dir, "true", None);
    assert_eq!(runs(&dir), 3);
    stage(&dir, "true", None);
    assert_eq!(runs(&dir), 3);
    // A new database has lost the stage's run: run again.
    std::fs::remove_file(dir.join("db.sqlite")).unwrap();
    stage(&dir, "true", None);
    assert_eq!(runs(&dir), 4);
    // REUSE=0 runs it anyway.
    stage(&dir, "true", Some("0"));
    assert_eq!(runs(&dir), 5);
    // A run that failed a cell is never reused, and its status is kept.
    assert_eq!(stage(&dir, "exit 1", None).0, 1);
    assert_eq!(stage(&dir, "exit 1", None).0, 1);
    assert_eq!(runs(&dir), 7);

    let timings = std::fs::read_to_string(dir.join("timings.tsv")).unwrap();
    let outcomes: Vec<&str> = timings
        .lines()
        .filter(|l| l.starts_with("counted\t"))
        .map(|l| l.split('\t').nth(2).unwrap())
        .collect();
    assert_eq!(outcomes.len(), 9, "{timings}");
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| o.starts_with("reused: unchanged since its run at "))
            .count(),
        2,
        "{timings}"
    );
    assert_eq!(outcomes.last(), Some(&"exit 1"));
}

#[test]
fn the_fingerprint_lists_the_binaries_the_packages_and_the_cpu() {
    let o = Command::new(common::repo_script("fingerprint"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "target/release/tlsmatrix-driver\n",
        "target/release/tlsmatrix-go-peer\n",
        // `make build` builds BoGo's runner, so no stage adds a binary to the fingerprint
        // after the counted stages were keyed.
        "target/bogo/runner-",
        "package valgrind ",
        "package libssl3",
        "\ncpu ",
        "\nflags ",
    ] {
        assert!(text.contains(needle), "no {needle:?} in:\n{text}");
    }
}

/// `scripts/lanes N LINE...` with its exit status.
fn lanes(dir: &Path, workers: &str, lines: &[&str]) -> i32 {
    Command::new(common::repo_script("lanes"))
        .current_dir(dir)
        .arg(workers)
        .args(lines)
        .status()
        .unwrap()
        .code()
        .unwrap_or(-1)
}

#[test]
fn one_worker_runs_the_stages_in_order_and_reports_the_worst() {
    let dir = common::scratch("stage-lane");
    let lane = |lines: &[&str]| lanes(&dir, "1", lines);
    // A failed cell (1) does not stop the lane; what could not run (above 1) does.
    assert_eq!(lane(&["echo a >> seen", "exit 1", "echo b >> seen"]), 1);
    assert_eq!(lane(&["echo c >> seen", "exit 3", "echo d >> seen"]), 3);
    assert_eq!(lane(&["echo e >> seen"]), 0);
    assert_eq!(
        std::fs::read_to_string(dir.join("seen")).unwrap(),
        "a\nb\nc\ne\n"
    );
    assert_eq!(lane(&[]), 2, "no stage is a usage error");
    assert_eq!(lanes(&dir, "0", &["true"]), 2, "no worker is a usage error");
    assert_eq!(lanes(&dir, "two", &["true"]), 2);
}

#[test]
fn a_worker_that_frees_up_takes_the_next_stage() {
    let dir = common::scratch("stage-lanes");
    // The first stage holds one worker; the other takes every other stage meanwhile, each
    // once, in order.
    let status = lanes(
        &dir,
        "2",
        &[
            "sleep 1; echo long >> seen",
            "echo a >> seen",
            "exit 1",
            "echo b >> seen",
        ],
    );
    assert_eq!(status, 1, "a failed cell is reported once all have run");
    assert_eq!(
        std::fs::read_to_string(dir.join("seen")).unwrap(),
        "a\nb\nlong\n"
    );
    // A stage that could not run stops both workers taking more; the one already running
    // ends, and its status is the first stage's that could not.
    let status = lanes(
        &dir,
        "2",
        &[
            "sleep 1; echo running >> stopped",
            "exit 4",
            "echo never >> stopped",
        ],
    );
    assert_eq!(status, 4);
    assert_eq!(
        std::fs::read_to_string(dir.join("stopped")).unwrap(),
        "running\n"
    );
}

#[test]
fn a_stage_beside_others_logs_its_output_and_its_start() {
    let dir = common::scratch("stage-log");
    let timings = dir.join("timings.tsv");
    let run = |args: &[&str]| {
        Command::new(common::repo_script("stage"))
            .current_dir(&dir)
            .env("TLSMATRIX_TIMINGS", &timings)
            .args(args)
            .output()
            .unwrap()
    };
    assert!(run(&["--begin"]).status.success());
    let o = run(&["--log", "quiet-one", "sh", "-c", "echo to-the-log; exit 1"]);
    assert_eq!(o.status.code(), Some(1));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("quiet-one: begun"), "{said}");
    assert!(said.contains("quiet-one: ended after"), "{said}");
    // What the stage printed is in its log (and, as it failed, its end on the terminal).
    let top = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let log = std::fs::read_to_string(top.join("target/logs/stage-quiet-one.log")).unwrap();
    assert_eq!(log, "to-the-log\n");
    let text = std::fs::read_to_string(&timings).unwrap();
    let t = tlsmatrix_history::timings::parse(&text).unwrap();
    assert!(t.epoch.is_some(), "{text}");
    let stage = t.stages.last().unwrap();
    assert_eq!(
        (stage.name.as_str(), stage.outcome.as_str()),
        ("quiet-one", "exit 1")
    );
    assert!(stage.start.unwrap() >= t.epoch.unwrap(), "{text}");
}

/// `scripts/seed-units`: a driver's target folder gets the registry units another folder built
/// for crates in the driver's graph, their build outputs naming the new folder; never
/// openssl-sys (its build reads OPENSSL_DIR), a path package, a crate outside the graph or a
/// unit the folder has.
#[test]
fn a_driver_folder_is_seeded_with_the_registry_units_of_its_graph() {
    let d = common::scratch("seed-units");
    let (from, dest) = (d.join("from"), d.join("dest"));
    let unit = |root: &Path, name: &str, what: &str| {
        let r = root.join("release");
        std::fs::create_dir_all(r.join(".fingerprint").join(name)).unwrap();
        std::fs::write(r.join(".fingerprint").join(name).join("hash"), what).unwrap();
        let build = r.join("build").join(name);
        std::fs::create_dir_all(&build).unwrap();
        std::fs::write(
            build.join("output"),
            format!("cargo:rustc-link-search=native={}/out\n", build.display()),
        )
        .unwrap();
        let (crate_name, hash) = name.rsplit_once('-').unwrap();
        std::fs::create_dir_all(r.join("deps")).unwrap();
        std::fs::write(
            r.join("deps")
                .join(format!("lib{}-{hash}.rlib", crate_name.replace('-', "_"))),
            what,
        )
        .unwrap();
    };
    for name in [
        "ring-0123456789abcdef",
        "ring-4444444444444444",
        "openssl-sys-1111111111111111",
        "tlsmatrix-model-2222222222222222",
        "no-such-crate-here-3333333333333333",
    ] {
        unit(&from, name, "from");
    }
    unit(&dest, "ring-4444444444444444", "dest's own");
    let manifest =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../libssl-drivers/openssl/Cargo.toml");
    let seed = || {
        let o = Command::new(common::repo_script("seed-units"))
            .args([&dest, &from, &manifest])
            .output()
            .expect("scripts/seed-units runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let said = seed();
    assert!(said.starts_with("seeded 1 units"), "{said}");
    let r = dest.join("release");
    assert!(r.join(".fingerprint/ring-0123456789abcdef/hash").exists());
    assert!(r.join("deps/libring-0123456789abcdef.rlib").exists());
    let output = std::fs::read_to_string(r.join("build/ring-0123456789abcdef/output")).unwrap();
    let dest_abs = dest.canonicalize().unwrap();
    assert!(
        output.contains(&format!(
            "{}/release/build/ring-0123456789abcdef/out",
            dest_abs.display()
        )),
        "{output}"
    );
    for absent in [
        "openssl-sys-1111111111111111",
        "tlsmatrix-model-2222222222222222",
        "no-such-crate-here-3333333333333333",
    ] {
        assert!(!r.join(".fingerprint").join(absent).exists(), "{absent}");
    }
    assert_eq!(
        std::fs::read_to_string(r.join(".fingerprint/ring-4444444444444444/hash")).unwrap(),
        "dest's own"
    );
    assert_eq!(seed(), "", "a second seeding finds nothing to copy");
}
