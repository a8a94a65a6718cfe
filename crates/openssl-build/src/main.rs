//! `tlsmatrix-openssl-build VERSION PREFIX`: builds OpenSSL VERSION (3.6 or 4.0) from the
//! sources the openssl-src crate ships, as static libraries installed under PREFIX, unless
//! PREFIX already holds that exact release. The per-version drivers link it statically
//! (OPENSSL_DIR=PREFIX, OPENSSL_STATIC=1), so they never load the system's libssl.so.3, which
//! has the same soname.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// Builds one release into an output folder (openssl-src installs under `<out>/install`).
type Builder = fn(&Path) -> Result<(), String>;

/// The file that records which release a prefix holds.
const STAMP: &str = "tlsmatrix-openssl-release";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [version, prefix] = args.as_slice() else {
        bail!("usage: tlsmatrix-openssl-build 3.6|4.0 PREFIX");
    };
    // OpenSSL's Configure takes only an absolute --prefix.
    let prefix = std::path::absolute(prefix)?;
    let (release, build): (&str, Builder) = match version.as_str() {
        "3.6" => (openssl_src_3::version(), |out| {
            configure3().out_dir(out).try_build().map(|_| ())
        }),
        "4.0" => (openssl_src_4::version(), |out| {
            configure4().out_dir(out).try_build().map(|_| ())
        }),
        other => bail!("no OpenSSL {other} here; versions: 3.6, 4.0"),
    };
    let stamp = prefix.join(STAMP);
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == release) {
        println!("OpenSSL {release} is already built in {}", prefix.display());
        return Ok(());
    }
    let mut work = prefix.clone().into_os_string();
    work.push(".building");
    let work = PathBuf::from(work);
    let _ = std::fs::remove_dir_all(&work);
    eprintln!("building OpenSSL {release} (a few minutes) ...");
    build(&work).map_err(|e| anyhow::anyhow!("building OpenSSL {release}: {e}"))?;
    // openssl-src installs under <out>/install; that is the prefix.
    let _ = std::fs::remove_dir_all(&prefix);
    std::fs::rename(work.join("install"), &prefix)
        .with_context(|| format!("cannot move the build to {}", prefix.display()))?;
    let _ = std::fs::remove_dir_all(&work);
    std::fs::write(&stamp, release)?;
    println!("OpenSSL {release} built in {}", prefix.display());
    Ok(())
}

/// openssl-src is made for build scripts, which cargo tells the target; this runs on Linux
/// for the machine it runs on.
fn target() -> String {
    format!("{}-unknown-linux-gnu", std::env::consts::ARCH)
}

fn configure3() -> openssl_src_3::Build {
    let mut b = openssl_src_3::Build::new();
    b.target(&target()).host(&target());
    b
}

fn configure4() -> openssl_src_4::Build {
    let mut b = openssl_src_4::Build::new();
    b.target(&target()).host(&target());
    b
}
