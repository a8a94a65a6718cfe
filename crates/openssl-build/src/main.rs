//! `tlsmatrix-openssl-build VERSION PREFIX`: builds OpenSSL VERSION (1.1.1, 3.6 or 4.0) from the
//! sources the openssl-src crate ships, as static libraries installed under PREFIX, unless
//! PREFIX already holds that exact release. OpenSSL 3.5, the LTS, comes from openssl-src
//! 300.5, which cannot share a lock file with 300.6: `lts/` builds this same source as a
//! workspace of its own with the `lts` feature (`tlsmatrix-openssl-build-lts 3.5 PREFIX`). The per-version drivers link it statically
//! (OPENSSL_DIR=PREFIX, OPENSSL_STATIC=1), so they never load the system's libssl.so.3, which
//! has the same soname.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// Builds one release into an output folder (openssl-src installs under `<out>/install`).
type Builder = fn(&Path) -> Result<(), String>;

/// The release lines this builder makes.
#[cfg(not(feature = "lts"))]
const RELEASES: &[&str] = &["1.1.1", "3.6", "4.0"];
#[cfg(feature = "lts")]
const RELEASES: &[&str] = &["3.5"];

/// The file that records which release a prefix holds.
const STAMP: &str = "tlsmatrix-openssl-release";

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
    let (release, build): (&str, Builder) = match version.as_str() {
        // 1.1.1w, the last 1.1.1 release: the baseline of the 3.0 regression.
        #[cfg(not(feature = "lts"))]
        // Its openssl-src has no try_build: its build panics, with the make output above.
        "1.1.1" => (openssl_src_1::version(), |out| {
            std::panic::catch_unwind(|| {
                configure!(openssl_src_1).out_dir(out).build();
            })
            .map_err(|_| "the build failed (its output is above)".to_string())
        }),
        #[cfg(not(feature = "lts"))]
        "3.6" => (openssl_src_3::version(), |out| {
            configure!(openssl_src_3)
                .out_dir(out)
                .try_build()
                .map(|_| ())
        }),
        #[cfg(not(feature = "lts"))]
        "4.0" => (openssl_src_4::version(), |out| {
            configure!(openssl_src_4)
                .out_dir(out)
                .try_build()
                .map(|_| ())
        }),
        #[cfg(feature = "lts")]
        "3.5" => (openssl_src_35::version(), |out| {
            configure!(openssl_src_35)
                .out_dir(out)
                .try_build()
                .map(|_| ())
        }),
        other => bail!(
            "no OpenSSL {other} from this builder; it builds {}",
            RELEASES.join(", ")
        ),
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

/// An openssl-src build for this machine, from whichever openssl-src release crate.
macro_rules! configure {
    ($krate:ident) => {{
        let mut b = $krate::Build::new();
        b.target(&target()).host(&target());
        b
    }};
}
use configure;
