//! `tlsmatrix-openssl-build VERSION PREFIX`: builds OpenSSL VERSION (1.1.1, 3.6 or 4.0) from the
//! sources the openssl-src crate ships, as static libraries installed under PREFIX, unless
//! PREFIX already holds that exact release. OpenSSL 3.5, the LTS, comes from openssl-src
//! 300.5, which cannot share a lock file with 300.6: `lts/` builds this same source as a
//! workspace of its own with the `lts` feature (`tlsmatrix-openssl-build-lts 3.5 PREFIX`). The per-version drivers link it statically
//! (OPENSSL_DIR=PREFIX, OPENSSL_STATIC=1), so they never load the system's libssl.so.3, which
//! has the same soname. A release built once is kept in this machine's cache (see
//! `cache_dir`), keyed by its openssl-src crate, target, C compiler and recipe, and a fresh
//! clone copies it from there instead of building it again.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// Builds one release into an output folder (openssl-src installs under `<out>/install`).
type Builder = fn(&Path) -> Result<(), String>;

/// The build recipe's own version, part of every cache key: bump it when `configure!` (the
/// flags a release is built with) changes, so no clone takes a build made the old way.
const RECIPE: u32 = 1;

/// The release lines this builder makes.
#[cfg(not(feature = "lts"))]
const RELEASES: &[&str] = &["1.1.1", "3.6", "4.0"];
#[cfg(feature = "lts")]
const RELEASES: &[&str] = &["3.5"];

/// The file that records which release a prefix holds.
const STAMP: &str = "tlsmatrix-openssl-release";
/// The file that records the cache key a prefix was built under (see `cache_key`): only a
/// build whose key is known goes into the cache.
const KEY: &str = "tlsmatrix-openssl-key";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [version, prefix] = args.as_slice() else {
        bail!(
            "usage: tlsmatrix-openssl-build {} PREFIX",
            RELEASES.join("|")
        );
    };
    // OpenSSL's Configure takes only an absolute --prefix.
    let prefix = std::path::absolute(prefix)?;
    let (release, source, build): (&str, PathBuf, Builder) = match version.as_str() {
        // 1.1.1w, the last 1.1.1 release: the baseline of the 3.0 regression.
        #[cfg(not(feature = "lts"))]
        // Its openssl-src has no try_build: its build panics, with the make output above.
        "1.1.1" => (
            openssl_src_1::version(),
            openssl_src_1::source_dir(),
            |out| {
                std::panic::catch_unwind(|| {
                    configure!(openssl_src_1).out_dir(out).build();
                })
                .map_err(|_| "the build failed (its output is above)".to_string())
            },
        ),
        #[cfg(not(feature = "lts"))]
        "3.6" => (
            openssl_src_3::version(),
            openssl_src_3::source_dir(),
            |out| {
                configure!(openssl_src_3)
                    .out_dir(out)
                    .try_build()
                    .map(|_| ())
            },
        ),
        #[cfg(not(feature = "lts"))]
        "4.0" => (
            openssl_src_4::version(),
            openssl_src_4::source_dir(),
            |out| {
                configure!(openssl_src_4)
                    .out_dir(out)
                    .try_build()
                    .map(|_| ())
            },
        ),
        #[cfg(feature = "lts")]
        "3.5" => (
            openssl_src_35::version(),
            openssl_src_35::source_dir(),
            |out| {
                configure!(openssl_src_35)
                    .out_dir(out)
                    .try_build()
                    .map(|_| ())
            },
        ),
        other => bail!(
            "no OpenSSL {other} from this builder; it builds {}",
            RELEASES.join(", ")
        ),
    };
    let stamp = prefix.join(STAMP);
    let key = cache_key(&source);
    let cached = cache_dir().map(|d| d.join("openssl").join(&key));
    if holds(&prefix, release) {
        println!("OpenSSL {release} is already built in {}", prefix.display());
        // Kept only if it is known to have been built as this call would build it.
        if std::fs::read_to_string(prefix.join(KEY)).is_ok_and(|k| k.trim() == key) {
            keep(&prefix, cached.as_deref(), release);
        }
        return Ok(());
    }
    if let Some(cached) = cached.as_deref().filter(|c| holds(c, release)) {
        copy_tree(cached, &prefix)?;
        println!(
            "OpenSSL {release} taken from this machine's cache ({}) into {}",
            cached.display(),
            prefix.display()
        );
        return Ok(());
    }
    let work = sibling(&prefix, "building");
    let _ = std::fs::remove_dir_all(&work);
    eprintln!("building OpenSSL {release} (a few minutes) ...");
    build(&work).map_err(|e| anyhow::anyhow!("building OpenSSL {release}: {e}"))?;
    // openssl-src installs under <out>/install; that is the prefix.
    let _ = std::fs::remove_dir_all(&prefix);
    std::fs::rename(work.join("install"), &prefix)
        .with_context(|| format!("cannot move the build to {}", prefix.display()))?;
    let _ = std::fs::remove_dir_all(&work);
    std::fs::write(prefix.join(KEY), &key)?;
    std::fs::write(&stamp, release)?;
    println!("OpenSSL {release} built in {}", prefix.display());
    keep(&prefix, cached.as_deref(), release);
    Ok(())
}

/// Puts the build in `prefix` into the cache unless the cache holds it already. A cache that
/// cannot be written costs the next clone a build, nothing else.
fn keep(prefix: &Path, cached: Option<&Path>, release: &str) {
    let Some(cached) = cached.filter(|c| !holds(c, release)) else {
        return;
    };
    match copy_tree(prefix, cached) {
        Ok(()) => println!("kept in this machine's cache: {}", cached.display()),
        Err(e) => eprintln!("not kept in the cache: {e:#}"),
    }
}

/// Whether `dir` holds a whole install of `release` (its stamp is written last).
fn holds(dir: &Path, release: &str) -> bool {
    std::fs::read_to_string(dir.join(STAMP)).is_ok_and(|s| s.trim() == release)
}

/// Where built releases are kept between clones on this machine: `$TLSMATRIX_CACHE` (empty:
/// no cache), else `$XDG_CACHE_HOME/tlsmatrix`, else `~/.cache/tlsmatrix`.
fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TLSMATRIX_CACHE") {
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("tlsmatrix"))
}

/// What a build depends on: the exact openssl-src crate (its folder is named with its
/// version, `openssl-src-300.6.1+3.6.3`), the target, the C compiler (`$CC` and the first
/// line of its `--version`), and the recipe.
fn cache_key(source: &Path) -> String {
    let krate = source
        .parent()
        .and_then(|p| p.file_name())
        .map_or("openssl-src".into(), |n| n.to_string_lossy().into_owned());
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let version = std::process::Command::new(&cc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "unknown".into());
    let compiler: String = format!("{cc} {version}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".+-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{krate}-{}-{compiler}-recipe{RECIPE}", target())
}

/// `path` with `.suffix` added to its last component.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".");
    s.push(suffix);
    PathBuf::from(s)
}

/// Copies the folder `from` to `to`, whole or not at all: into a sibling first, then renamed
/// over whatever `to` was.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let tmp = sibling(to, &format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(&tmp)
        .status()
        .context("cannot run cp")?;
    if !status.success() {
        let _ = std::fs::remove_dir_all(&tmp);
        bail!("cp -a {} {} failed", from.display(), tmp.display());
    }
    let _ = std::fs::remove_dir_all(to);
    std::fs::rename(&tmp, to)
        .with_context(|| format!("cannot move {} to {}", tmp.display(), to.display()))
}

/// openssl-src is made for build scripts, which cargo tells the target; this runs on Linux
/// for the machine it runs on.
fn target() -> String {
    format!("{}-unknown-linux-gnu", std::env::consts::ARCH)
}

/// An openssl-src build for this machine, from whichever openssl-src release crate.
macro_rules! configure {
    ($krate:ident) => {{
        let mut b = $krate::Build::new();
        b.target(&target()).host(&target());
        b
    }};
}
use configure;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_names_the_crate_the_target_the_compiler_and_the_recipe() {
        let key = cache_key(Path::new("/registry/openssl-src-300.6.1+3.6.3/openssl"));
        assert!(key.starts_with("openssl-src-300.6.1+3.6.3-"), "{key}");
        assert!(key.contains(&target()), "{key}");
        assert!(key.ends_with(&format!("-recipe{RECIPE}")), "{key}");
        assert!(!key.contains('/') && !key.contains(' '), "{key}");
    }

    #[test]
    fn a_tree_is_copied_whole_and_only_a_stamped_one_counts() {
        let root = std::env::temp_dir().join(format!("openssl-build-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let from = root.join("from");
        std::fs::create_dir_all(from.join("lib")).unwrap();
        std::fs::write(from.join("lib/libssl.a"), b"archive").unwrap();
        let to = root.join("cache/openssl/key");
        assert!(!holds(&to, "3.6.3"));
        copy_tree(&from, &to).unwrap();
        // Copied, but without the stamp it holds no release.
        assert_eq!(std::fs::read(to.join("lib/libssl.a")).unwrap(), b"archive");
        assert!(!holds(&to, "3.6.3"));
        std::fs::write(from.join(STAMP), "3.6.3").unwrap();
        copy_tree(&from, &to).unwrap();
        assert!(holds(&to, "3.6.3"));
        assert!(!holds(&to, "3.5.5"));
        // No temporary sibling is left behind.
        let left: Vec<_> = std::fs::read_dir(to.parent().unwrap()).unwrap().collect();
        assert_eq!(left.len(), 1, "{left:?}");
        let _ = std::fs::remove_dir_all(&root);
    }
}
