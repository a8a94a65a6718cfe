//! The BoGo shim's flag table: what BoringSSL's TLS test runner (`ssl/test/runner`) may ask
//! of a shim, read into [`ShimFlags`]. A flag the table lacks is [`Unimplemented`], which
//! the shim answers with exit status [`EXIT_UNIMPLEMENTED`] at once; the runner counts that
//! test as unimplemented, never as passed. The table is shared by the drivers' shims (which
//! run the tests) and the front shim `tlsmatrix-bogo-shim` (which answers the runner's
//! unimplemented tests without starting a driver), so both refuse exactly the same flags.

use crate::codes;
use crate::scenario::{Group, Version};

/// The runner's exit status for a shim that does not implement what a test asks.
pub const EXIT_UNIMPLEMENTED: u8 = 89;

/// What the runner asked, from the flags this shim honours.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShimFlags {
    pub port: u16,
    pub shim_id: u64,
    pub ipv6: bool,
    pub server: bool,
    pub key_file: Option<String>,
    pub cert_file: Option<String>,
    /// Taken and ignored: no chain is verified (see `OpenPolicy`).
    pub trust_cert: Option<String>,
    pub verify_peer: bool,
    pub require_client_cert: bool,
    /// Connections after the first, each resuming the one before.
    pub resume_count: u32,
    pub expect_session_miss: bool,
    /// Client: protocols offered, in ALPN's wire form (length-prefixed).
    pub advertise_alpn: Option<Vec<u8>>,
    /// Server: the one protocol accepted.
    pub select_alpn: Option<String>,
    pub expect_alpn: Option<String>,
    /// Group code points, most preferred first; empty for the library's defaults.
    pub curves: Vec<u16>,
    pub expect_curve_id: Option<u16>,
    pub min_version: Option<u16>,
    pub max_version: Option<u16>,
    pub expect_version: Option<u16>,
    pub host_name: Option<String>,
    pub expect_server_name: Option<String>,
    pub shim_writes_first: bool,
    pub check_close_notify: bool,
    pub key_update: bool,
}

/// One invocation's request.
#[derive(Debug, PartialEq, Eq)]
pub enum Invocation {
    /// `-is-handshaker-supported`: the runner asks before making its `-Hints` tests; BoGo's
    /// split-handshake feature exists only in BoringSSL, so the answer is "No".
    HandshakerQuery,
    Test(Box<ShimFlags>),
}

/// Why a test cannot run here: the flag and, where it helps, the reason.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("unimplemented: {0}")]
pub struct Unimplemented(pub String);

pub const TLS12: u16 = 0x0303;
pub const TLS13: u16 = 0x0304;

/// Reads the runner's flags. Anything this shim does not honour is `Unimplemented`.
pub fn parse(args: &[String]) -> Result<Invocation, Unimplemented> {
    let mut f = ShimFlags::default();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| Unimplemented(format!("{flag} without a value")))
        };
        let number = |v: String| -> Result<u64, Unimplemented> {
            v.parse()
                .map_err(|_| Unimplemented(format!("{flag} {v}: not a number")))
        };
        match flag.as_str() {
            "-is-handshaker-supported" => return Ok(Invocation::HandshakerQuery),
            "-port" => f.port = number(value()?)? as u16,
            "-shim-id" => f.shim_id = number(value()?)?,
            "-ipv6" => f.ipv6 = true,
            "-server" => f.server = true,
            "-key-file" => f.key_file = Some(value()?),
            "-cert-file" => f.cert_file = Some(value()?),
            "-trust-cert" => f.trust_cert = Some(value()?),
            "-verify-peer" => f.verify_peer = true,
            "-require-any-client-certificate" => f.require_client_cert = true,
            "-resume-count" => f.resume_count = number(value()?)? as u32,
            "-expect-session-miss" => f.expect_session_miss = true,
            "-advertise-alpn" => f.advertise_alpn = Some(value()?.into_bytes()),
            "-select-alpn" => f.select_alpn = Some(value()?),
            "-expect-alpn" => f.expect_alpn = Some(value()?),
            "-curves" => f.curves.push(number(value()?)? as u16),
            "-expect-curve-id" => f.expect_curve_id = Some(number(value()?)? as u16),
            "-min-version" => f.min_version = Some(number(value()?)? as u16),
            "-max-version" => f.max_version = Some(number(value()?)? as u16),
            "-expect-version" => f.expect_version = Some(number(value()?)? as u16),
            "-host-name" => f.host_name = Some(value()?),
            "-expect-server-name" => f.expect_server_name = Some(value()?),
            "-shim-writes-first" => f.shim_writes_first = true,
            "-check-close-notify" => f.check_close_notify = true,
            "-key-update" => f.key_update = true,
            // Non-blocking I/O and a handshake driven by the first read or write: the wire
            // below always works that way, so these ask nothing more of it.
            "-async" | "-implicit-handshake" => {}
            other => return Err(Unimplemented(other.to_string())),
        }
    }
    if f.port == 0 {
        return Err(Unimplemented("no -port: not started by the runner".into()));
    }
    Ok(Invocation::Test(Box::new(f)))
}

pub fn version_of(code: u16, flag: &str) -> Result<Version, Unimplemented> {
    match code {
        TLS12 => Ok(Version::Tls12),
        TLS13 => Ok(Version::Tls13),
        // tlsmatrix configures every library for TLS 1.2 and 1.3 only.
        c => Err(Unimplemented(format!(
            "{flag} {c:#06x}: only TLS 1.2 and 1.3 are configured"
        ))),
    }
}

pub fn group_of(code: u16) -> Result<Group, Unimplemented> {
    Group::ALL
        .iter()
        .copied()
        .find(|g| codes::group_code(*g) == code)
        .ok_or_else(|| Unimplemented(format!("-curves {code}: no adapter names that group")))
}

/// ALPN's wire form split into protocol names.
pub fn alpn_names(mut wire: &[u8]) -> Result<Vec<String>, Unimplemented> {
    let mut out = Vec::new();
    while let Some((&n, rest)) = wire.split_first() {
        let n = usize::from(n);
        if rest.len() < n || n == 0 {
            return Err(Unimplemented("-advertise-alpn: malformed list".into()));
        }
        out.push(String::from_utf8_lossy(&rest[..n]).into_owned());
        wire = &rest[n..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_flag_of_the_table_reads_into_its_field() {
        let inv = parse(&args(&[
            "-port",
            "4433",
            "-shim-id",
            "7",
            "-server",
            "-key-file",
            "k.pem",
            "-cert-file",
            "c.pem",
            "-curves",
            "29",
            "-curves",
            "23",
            "-min-version",
            "771",
            "-max-version",
            "772",
            "-expect-version",
            "772",
            "-resume-count",
            "2",
            "-select-alpn",
            "h2",
            "-host-name",
            "example.test",
            "-async",
            "-implicit-handshake",
            "-key-update",
        ]))
        .unwrap();
        let Invocation::Test(f) = inv else {
            panic!("a test")
        };
        assert_eq!(f.port, 4433);
        assert_eq!(f.shim_id, 7);
        assert!(f.server && f.key_update);
        assert_eq!(f.key_file.as_deref(), Some("k.pem"));
        assert_eq!(f.curves, [29, 23]);
        assert_eq!((f.min_version, f.max_version), (Some(TLS12), Some(TLS13)));
        assert_eq!(f.resume_count, 2);
        assert_eq!(f.select_alpn.as_deref(), Some("h2"));
        assert_eq!(f.host_name.as_deref(), Some("example.test"));
    }

    #[test]
    fn what_the_table_lacks_is_unimplemented_by_name() {
        let e = parse(&args(&["-port", "1", "-enable-ech-grease"])).unwrap_err();
        assert_eq!(e, Unimplemented("-enable-ech-grease".into()));
        assert_eq!(e.to_string(), "unimplemented: -enable-ech-grease");
        // A value missing or not a number, and no port: not started by the runner.
        assert!(parse(&args(&["-port"])).is_err());
        assert!(parse(&args(&["-port", "x"])).is_err());
        assert!(parse(&args(&["-server"]))
            .unwrap_err()
            .0
            .contains("no -port"));
        assert_eq!(
            parse(&args(&["-is-handshaker-supported"])).unwrap(),
            Invocation::HandshakerQuery
        );
    }

    #[test]
    fn only_tls12_and_13_and_named_groups_are_expressible() {
        assert_eq!(version_of(TLS13, "-max-version"), Ok(Version::Tls13));
        assert!(version_of(0x0302, "-max-version").is_err());
        assert_eq!(group_of(29), Ok(Group::X25519));
        assert!(group_of(1234).is_err());
        assert_eq!(
            alpn_names(b"\x02h2\x08http/1.1").unwrap(),
            ["h2", "http/1.1"]
        );
        assert!(alpn_names(b"\x05h2").is_err());
    }
}
