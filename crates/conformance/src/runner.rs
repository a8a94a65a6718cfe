//! Building BoGo, BoringSSL's TLS test runner, from the sources the boring-sys crate ships
//! (already in the cargo registry once the BoringSSL driver is built). The runner is a Go test
//! binary; its `go.mod` asks for a newer Go than the system's, which `GOTOOLCHAIN=auto` fetches
//! through the Go module proxy, as it does the runner's modules. The crate leaves out the
//! seven test keys the runner embeds, so they are generated here with the key types it expects.
//! The binary is cached per boring-sys version and written whole or not at all.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The keys the runner embeds (`//go:embed` in runner.go), with `openssl genpkey` options
/// that make each: all PKCS#8, as the runner parses them.
const KEYS: &[(&str, &[&str])] = &[
    (
        "rsa_2048_key.pem",
        &["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
    ),
    (
        "rsa_1024_key.pem",
        &["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"],
    ),
    (
        "ecdsa_p256_key.pem",
        &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
    ),
    (
        "ecdsa_p384_key.pem",
        &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"],
    ),
    (
        "ecdsa_p521_key.pem",
        &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-521"],
    ),
    ("ed25519_key.pem", &["-algorithm", "ED25519"]),
    (
        "channel_id_key.pem",
        &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
    ),
];

/// The parts of BoringSSL's tree the runner builds from.
const TREE: &[&str] = &["go.mod", "go.sum", "ssl/test/runner", "util/testresult"];

/// The patch boring-sys applies to every BoringSSL it builds (post-quantum groups, and ML-DSA
/// among the schemes a client or server accepts by default). It changes the runner's tests to
/// match, so the runner gets the same hunks: without them it expects the unpatched library's
/// defaults and fails the `boring` impl's ML-DSA tests for what boring-sys chose.
const LIBRARY_PATCH: &str = "patches/boring-pq.patch";

/// Which version of this crate's runner build a cached binary came from; raised when the
/// build changes, so an older binary is not reused.
const BUILD_REVISION: u32 = 4;

/// A boring-sys source tree in the cargo registry.
#[derive(Debug, Clone)]
pub struct Sources {
    pub version: String,
    /// `deps/boringssl` inside the crate.
    pub boringssl: PathBuf,
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from(".cargo"))
}

/// Numeric parts of a version, for ordering ("5.10.0" after "5.4.0").
fn version_key(v: &str) -> Vec<u64> {
    v.split(['.', '-', '+'])
        .map(|p| p.parse().unwrap_or(0))
        .collect()
}

/// The boring-sys sources to build from: `version` if given (the one the BoringSSL driver
/// links, so the runner matches the library it was written for), else the newest present.
pub fn find_sources(version: Option<&str>) -> Result<Sources> {
    let registry = cargo_home().join("registry/src");
    let mut found: Vec<Sources> = Vec::new();
    for index in fs::read_dir(&registry)
        .with_context(|| format!("no cargo registry at {}", registry.display()))?
        .flatten()
    {
        for krate in fs::read_dir(index.path())?.flatten() {
            let name = krate.file_name().to_string_lossy().into_owned();
            let Some(v) = name.strip_prefix("boring-sys-") else {
                continue;
            };
            let boringssl = krate.path().join("deps/boringssl");
            if boringssl.join("ssl/test/runner/runner.go").is_file() {
                found.push(Sources {
                    version: v.to_string(),
                    boringssl,
                });
            }
        }
    }
    if let Some(want) = version {
        if let Some(s) = found.iter().find(|s| s.version == want) {
            return Ok(s.clone());
        }
    }
    found.sort_by_key(|s| version_key(&s.version));
    found.pop().with_context(|| {
        format!(
            "no boring-sys sources with BoGo's runner in {}; `make build` fetches them with the BoringSSL driver",
            registry.display()
        )
    })
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    if from.is_dir() {
        fs::create_dir_all(to)?;
        for e in fs::read_dir(from)?.flatten() {
            copy_tree(&e.path(), &to.join(e.file_name()))?;
        }
    } else {
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::copy(from, to)
            .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    }
    Ok(())
}

/// Runs `cmd` to its end; its output, or an error with all it printed.
fn run(cmd: &mut Command, what: &str) -> Result<std::process::Output> {
    let out = tlsmatrix_registry::child::ends_with_parent(cmd)
        .output()
        .with_context(|| format!("cannot start {what}"))?;
    if !out.status.success() {
        bail!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(out)
}

/// Applies the runner's hunks of `patch` to the tree copied into `work`. The copy sits inside
/// whatever git checkout holds `cache`, where `git apply` would take paths as the checkout's
/// and skip every hunk without a word; the ceiling keeps it to the copy, and at least one
/// hunk must apply.
fn apply_runner_hunks(patch: &Path, work: &Path, cache: &Path) -> Result<()> {
    let ceiling = fs::canonicalize(cache)?;
    let what = format!("git apply {}", patch.display());
    let out = run(
        Command::new("git")
            .current_dir(work)
            .env("GIT_CEILING_DIRECTORIES", &ceiling)
            .args([
                "apply",
                "-v",
                "--whitespace=nowarn",
                "--include=ssl/test/runner/*",
            ])
            .arg(patch),
        &what,
    )?;
    let log = String::from_utf8_lossy(&out.stderr);
    if !log.contains("Applied patch ssl/test/runner/") {
        bail!("{what} changed none of the runner:\n{log}");
    }
    Ok(())
}

/// Makes the runner start each shim with the test's name in its environment
/// ([`tlsmatrix_model::bogo_flags::TEST_NAME_ENV`]), so a shim can say why it did not run a
/// test where the runner keeps only its exit status.
fn name_tests_to_shims(runner_go: &Path) -> Result<()> {
    const START: &str = "\n\tshim, err := newShimProcess(dispatcher, shimPath, flags, env)\n";
    let text = fs::read_to_string(runner_go)?;
    let Some(at) = text.find(START) else {
        bail!(
            "{} no longer starts its shims as tlsmatrix expects ({:?}); the test name cannot be passed",
            runner_go.display(),
            START.trim()
        );
    };
    let named = format!(
        "\n\tif env == nil {{\n\t\tenv = os.Environ()\n\t}}\n\tenv = append(env, \"{}=\"+test.name)",
        tlsmatrix_model::bogo_flags::TEST_NAME_ENV
    );
    let text = format!("{}{named}{}", &text[..at], &text[at..]);
    fs::write(runner_go, text)?;
    Ok(())
}

/// The runner binary for `sources`, built into `cache` the first time.
pub fn build(sources: &Sources, cache: &Path) -> Result<PathBuf> {
    let binary = cache.join(format!("runner-{}-r{BUILD_REVISION}", sources.version));
    if binary.is_file() {
        return Ok(binary);
    }
    fs::create_dir_all(cache).with_context(|| format!("cannot create {}", cache.display()))?;
    let work = cache.join(format!(".build-{}-{}", sources.version, std::process::id()));
    let _ = fs::remove_dir_all(&work);
    let built = (|| -> Result<()> {
        for part in TREE {
            copy_tree(&sources.boringssl.join(part), &work.join(part))?;
        }
        apply_runner_hunks(
            &sources.boringssl.join("../..").join(LIBRARY_PATCH),
            &work,
            cache,
        )?;
        let runner = work.join("ssl/test/runner");
        name_tests_to_shims(&runner.join("runner.go"))?;
        for (file, args) in KEYS {
            run(
                Command::new("openssl")
                    .arg("genpkey")
                    .args(*args)
                    .arg("-out")
                    .arg(runner.join(file)),
                &format!("openssl genpkey for {file}"),
            )?;
        }
        let tmp = work.join("runner.test");
        run(
            Command::new("go")
                .current_dir(&work)
                .env("GOTOOLCHAIN", "auto")
                .env("GOFLAGS", "-mod=mod -buildvcs=false")
                .args(["test", "-c", "-o"])
                .arg(&tmp)
                .arg("./ssl/test/runner"),
            "go test -c ./ssl/test/runner",
        )?;
        // Another process may have finished first; its binary is as good as ours.
        fs::rename(&tmp, &binary)
            .with_context(|| format!("cannot store the runner at {}", binary.display()))
    })();
    let _ = fs::remove_dir_all(&work);
    built.context("building BoGo's runner")?;
    Ok(binary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_numerically() {
        assert!(version_key("5.10.0") > version_key("5.4.0"));
        assert!(version_key("4.19.1") < version_key("5.0.0"));
    }
}
