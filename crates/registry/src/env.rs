//! The environment a run was made in, stored with every record.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use tlsmatrix_model::record::Env;

/// The CPU features TLS crypto takes faster paths on (AES and carry-less multiply for
/// AES-GCM, AVX-512 and its IFMA for RSA and GCM, ADX for bignums, SHA extensions), as
/// /proc/cpuinfo names them: what a figure from another machine must be read against.
const CRYPTO_FEATURES: &[&str] = &[
    "aes",
    "pclmulqdq",
    "avx2",
    "adx",
    "sha_ni",
    "vaes",
    "vpclmulqdq",
    "avx512f",
    "avx512ifma",
];

fn crypto_features(cpuinfo: &str) -> String {
    let flags: Vec<&str> = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .and_then(|l| l.split(':').nth(1))
        .map(|f| f.split_whitespace().collect())
        .unwrap_or_default();
    let have: Vec<&str> = CRYPTO_FEATURES
        .iter()
        .copied()
        .filter(|f| flags.contains(f))
        .collect();
    if have.is_empty() {
        "none of ".to_string() + &CRYPTO_FEATURES.join(" ")
    } else {
        have.join(" ")
    }
}

pub fn capture(command: String) -> Env {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or_else(|| "unknown".into(), |s| s.trim().to_string());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let mut compilers = BTreeMap::new();
    compilers.insert("rustc".into(), env!("TLSMATRIX_RUSTC_VERSION").into());
    compilers.insert("cpu_features".into(), crypto_features(&cpuinfo));
    // Whether `--measure counters` could have counted cycles and instructions here; it takes
    // page faults and context switches either way.
    compilers.insert(
        "perf_event_open".into(),
        match tlsmatrix_measure::counters::hardware_counters() {
            Ok(()) => "hardware counters available".into(),
            Err(why) => why,
        },
    );
    Env {
        cpu_model,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel,
        compilers,
        git_revision: env!("TLSMATRIX_GIT_REVISION").into(),
        timestamp: rfc3339(SystemTime::now()),
        command,
    }
}

/// `2026-11-23T10:15:00Z`: UTC, whole seconds.
pub fn rfc3339(t: SystemTime) -> String {
    let (date, (h, m, s)) = civil(t);
    format!(
        "{}-{:02}-{:02}T{h:02}:{m:02}:{s:02}Z",
        date.0, date.1, date.2
    )
}

/// `20261123T101500Z`, for run ids and file names.
pub fn compact(t: SystemTime) -> String {
    let ((y, mo, d), (h, m, s)) = civil(t);
    format!("{y}{mo:02}{d:02}T{h:02}{m:02}{s:02}Z")
}

type Date = (i64, u32, u32);

fn civil(t: SystemTime) -> (Date, (u64, u64, u64)) {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    (
        (date_of_days(days as i64)),
        (rem / 3600, rem % 3600 / 60, rem % 60),
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Howard Hinnant's method).
fn date_of_days(z: i64) -> Date {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_795_428_900);
        assert_eq!(rfc3339(t), "2026-11-23T10:15:00Z");
        assert_eq!(compact(t), "20261123T101500Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn crypto_features_are_read_from_the_flags_line() {
        let cpuinfo = "model name\t: X\nflags\t\t: fpu aes avx2 avx512f avx512ifmax sha_ni\n";
        assert_eq!(crypto_features(cpuinfo), "aes avx2 sha_ni avx512f");
        assert!(crypto_features("model name\t: X\n").starts_with("none of aes"));
    }

    #[test]
    fn capture_fills_every_field() {
        let e = capture("tlsmatrix run".into());
        assert!(e.cores >= 1);
        assert!(!e.cpu_model.is_empty() && !e.kernel.is_empty());
        assert!(e.compilers["rustc"].starts_with("rustc "));
    }
}
