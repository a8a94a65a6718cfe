//! Stamps the build with the compiler version and git revision, for the run environment.

use std::process::Command;

fn output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc_version = output(&rustc, &["--version"]).unwrap_or_else(|| "unknown".into());
    let git = output("git", &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    // --no-optional-locks: a plain `git status` rewrites .git/index when it refreshes it,
    // and this script reruns when the index changes, so every second build recompiled the
    // crates above this one (about a minute on a new clone's first `make report`).
    let dirty = output(
        "git",
        &[
            "--no-optional-locks",
            "status",
            "--porcelain",
            "--untracked-files=no",
        ],
    )
    .map(|s| if s.is_empty() { "" } else { "+dirty" })
    .unwrap_or("");
    println!("cargo:rustc-env=TLSMATRIX_RUSTC_VERSION={rustc_version}");
    println!("cargo:rustc-env=TLSMATRIX_GIT_REVISION={git}{dirty}");
    for p in ["../../.git/HEAD", "../../.git/index"] {
        println!("cargo:rerun-if-changed={p}");
    }
}
