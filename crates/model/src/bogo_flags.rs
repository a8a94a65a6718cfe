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

/// The folder `tlsmatrix conformance` gives a shim (in its environment) for the reasons its
/// tests are unimplemented: the runner keeps only the exit status, so a shim leaves its
/// reason in a file named after the test, which the runner (as tlsmatrix builds it) names in
/// `BOGO_TEST_NAME`.
pub const REASONS_DIR_ENV: &str = "TLSMATRIX_BOGO_REASONS";
pub const TEST_NAME_ENV: &str = "BOGO_TEST_NAME";

/// Answers the runner that the test is unimplemented, for `reason`: on stderr, in the reasons
/// folder when there is one, and as the exit status returned.
pub fn answer_unimplemented(reason: &str) -> u8 {
    eprintln!("tlsmatrix-bogo-shim: {reason}");
    let dir = std::env::var_os(REASONS_DIR_ENV);
    let test = std::env::var(TEST_NAME_ENV).ok();
    if let (Some(dir), Some(test)) = (dir, test) {
        // A test name is one path component; anything else is no name the runner gives.
        if !test.is_empty() && !test.contains('/') && !test.starts_with('.') {
            let _ = std::fs::write(std::path::Path::new(&dir).join(test), reason);
        }
    }
    EXIT_UNIMPLEMENTED
}

/// What the runner asked, from the flags this shim honours. Flags that configure the
/// library apply to every connection of the test; those in [`ConnectionFlags`] may differ
/// between the first connection and the resumptions (`-on-initial-`, `-on-resume-`).
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
    /// Verify through BoringSSL's custom callback (its own alert on refusal).
    pub custom_verify: bool,
    /// After each handshake, the verification result must be X509_V_OK, or the application's
    /// refusal under -verify-fail.
    pub expect_verify_result: bool,
    /// Verify the peer again when resuming (BoringSSL's `SSL_CTX_set_reverify_on_resume`).
    pub reverify_on_resume: bool,
    /// BoringSSL's workaround for JDK 11's TLS 1.3 ClientHello.
    pub jdk11_workaround: bool,
    /// No session tickets (`SSL_OP_NO_TICKET`).
    pub no_ticket: bool,
    /// Accept a client's Channel ID (BoringSSL's extension); implied by `expect_channel_id`.
    pub enable_channel_id: bool,
    /// The key file a client sends its Channel ID with.
    pub send_channel_id: Option<String>,
    /// The Channel ID (64 bytes: the key's x and y) a server must have received.
    pub expect_channel_id: Option<Vec<u8>>,
    /// Connections after the first, each resuming the one before.
    pub resume_count: u32,
    pub expect_session_miss: bool,
    /// Client: protocols offered, in ALPN's wire form (length-prefixed).
    pub advertise_alpn: Option<Vec<u8>>,
    /// Server: the one protocol accepted.
    pub select_alpn: Option<String>,
    /// Group code points, most preferred first; empty for the library's defaults.
    pub curves: Vec<u16>,
    pub min_version: Option<u16>,
    pub max_version: Option<u16>,
    /// `-no-tls13` / `-no-tls12`: versions taken out of the range.
    pub no_tls13: bool,
    pub no_tls12: bool,
    pub host_name: Option<String>,
    /// Signature schemes to sign with, most preferred first; empty for the library's.
    pub signing_prefs: Vec<u16>,
    /// Signature schemes accepted from the peer (and advertised), in order; empty for the
    /// library's.
    pub verify_prefs: Vec<u16>,
    /// A TLS 1.2 cipher list in OpenSSL's syntax (`-cipher`).
    pub cipher: Option<String>,
    /// One of BoringSSL's named compliance policies.
    pub compliance: Option<CompliancePolicy>,
    /// Bytes of keying material (RFC 5705, RFC 8446 7.5) each connection exports after its
    /// handshake and sends the runner, which derives the same; 0 for none.
    pub export_keying_material: usize,
    pub export_label: String,
    pub export_context: String,
    /// The context is given (in TLS 1.2 an empty context differs from none).
    pub use_export_context: bool,
    /// Credentials beyond the default one (`-cert-file`/`-key-file` before any of these),
    /// in the order given; the library picks one per handshake.
    pub credentials: Vec<Credential>,
    /// Certificate types (RFC 7250: 0 X.509, 2 raw public key) accepted from the peer, most
    /// preferred first; empty for X.509 only.
    pub accepted_peer_cert_types: Vec<u8>,
    /// Certificate types a client offers for itself; empty for those its credentials have.
    pub available_client_cert_types: Vec<u8>,
    /// The SHA-256 of the raw public key (its SubjectPublicKeyInfo) the peer must present.
    pub expect_peer_rpk_sha256: Option<Vec<u8>>,
    /// Client: ask for a stapled OCSP response.
    pub enable_ocsp_stapling: bool,
    /// Server: the OCSP response the default credential staples.
    pub ocsp_response: Option<Vec<u8>>,
    /// The application's OCSP callback (OpenSSL's status callback), when installed.
    pub ocsp_callback: Option<OcspCallback>,
    /// A client's certificate comes from OpenSSL's `SSL_CTX_set_client_cert_cb`.
    pub old_client_cert_callback: bool,
    /// Server: the protocols NPN advertises, in wire form (`-advertise-empty-npn`: empty).
    pub advertise_npn: Option<Vec<u8>>,
    /// Client: the protocol picked when NPN is advertised (`-select-empty-next-proto`: empty).
    pub select_next_proto: Option<Vec<u8>>,
    /// A TLS 1.2 pre-shared key (`-psk`, its bytes as given) and its identity, which a
    /// server also sends as its hint.
    pub psk: Option<Vec<u8>>,
    pub psk_identity: Option<String>,
    pub initial: ConnectionFlags,
    pub resume: ConnectionFlags,
}

impl ShimFlags {
    /// The checks and data phase of connection `n` (0 is the first).
    pub fn connection(&self, n: u32) -> &ConnectionFlags {
        if n == 0 {
            &self.initial
        } else {
            &self.resume
        }
    }
}

/// One credential the runner adds (`-new-x509-credential`, `-new-rpk-credential`): the flags
/// after it up to the next one configure it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credential {
    /// A raw public key (RFC 7250), made from the key alone; else an X.509 chain.
    pub raw_public_key: bool,
    pub cert_file: Option<String>,
    pub key_file: Option<String>,
    pub signing_prefs: Vec<u16>,
    /// Chosen only when the peer names its issuer as a trust anchor or CA.
    pub must_match_issuer: bool,
    /// The OCSP response stapled with this credential.
    pub ocsp_response: Option<Vec<u8>>,
}

/// The application's OCSP callback, as BoringSSL's shim installs it (`-use-ocsp-callback`):
/// a client's accepts the stapled response unless it fails; a server's staples the response
/// (setting it only then with `sets_response`) unless it declines or fails.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OcspCallback {
    /// Installed (`-use-ocsp-callback`); the other switches mean nothing without it.
    pub used: bool,
    pub sets_response: bool,
    pub declines: bool,
    pub fails: bool,
}

/// What one connection checks and does after its handshake.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionFlags {
    pub expect_version: Option<u16>,
    pub expect_curve_id: Option<u16>,
    pub expect_alpn: Option<String>,
    pub expect_server_name: Option<String>,
    /// The scheme the peer signed the handshake with.
    pub expect_peer_signature: Option<u16>,
    /// Whether the server sent a HelloRetryRequest.
    pub expect_hello_retry: Option<bool>,
    pub shim_writes_first: bool,
    /// The shim ends the connection first: quietly, or with close_notify and then the
    /// runner's under `check_close_notify`.
    pub shim_shuts_down: bool,
    pub check_close_notify: bool,
    pub key_update: bool,
    /// The certificate verification callback fails: a handshake that verifies the peer
    /// must not complete.
    pub verify_fail: bool,
    /// Which credential the handshake used: its index among [`ShimFlags::credentials`], or
    /// -1 for the default one (or none).
    pub expect_selected_credential: Option<i32>,
    /// The certificate type the peer authenticated with (RFC 7250 code).
    pub expect_peer_certificate_type: Option<u8>,
    /// The OCSP response the server stapled (empty: none).
    pub expect_ocsp_response: Option<Vec<u8>>,
    /// The protocol NPN agreed on (`-expect-no-next-proto`: empty, none).
    pub expect_next_proto: Option<Vec<u8>>,
    /// The connection uses the extended master secret (RFC 7627; always so in TLS 1.3).
    pub expect_extended_master_secret: bool,
}

/// BoringSSL's named compliance policies (`SSL_set_compliance_policy`), which bound the
/// versions, suites, groups and signature schemes at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompliancePolicy {
    Fips202205,
    Fips202609,
    Wpa3_192_202304,
    Cnsa202407,
    Cnsa1_202603,
    Cnsa2_202603,
}

impl CompliancePolicy {
    fn of_flag(flag: &str) -> Option<CompliancePolicy> {
        Some(match flag {
            "-fips-202205" => CompliancePolicy::Fips202205,
            "-fips-202609" => CompliancePolicy::Fips202609,
            "-wpa-202304" => CompliancePolicy::Wpa3_192_202304,
            "-cnsa-202407" => CompliancePolicy::Cnsa202407,
            "-cnsa1-202603" => CompliancePolicy::Cnsa1_202603,
            "-cnsa2-202603" => CompliancePolicy::Cnsa2_202603,
            _ => return None,
        })
    }
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

/// Which connections a flag applies to, from its prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Applies {
    All,
    Initial,
    Resume,
}

/// Splits BoringSSL's prefixes off a flag: `-on-shim-` (this is the shim), then
/// `-on-initial-` and `-on-resume-`. `-on-handshaker-` (BoringSSL's split handshakes) and
/// `-on-retry-` (the 0-RTT retry connection) name connections no shim here makes.
fn split_prefix(flag: &str) -> Result<(Applies, &str), Unimplemented> {
    // `prefix` followed by a flag of its own: the flag, with its dash.
    let rest = |prefix: &str, s: &str| -> Option<usize> {
        s.strip_prefix(prefix)
            .filter(|r| r.starts_with('-'))
            .map(|r| s.len() - r.len())
    };
    let mut name = flag;
    if let Some(n) = rest("-on-shim", name) {
        name = &name[n..];
    }
    for prefix in ["-on-handshaker", "-on-retry"] {
        if rest(prefix, name).is_some() {
            return Err(Unimplemented(format!(
                "{flag}: no shim here makes split handshakes or 0-RTT retries"
            )));
        }
    }
    let mut applies = Applies::All;
    for (prefix, a) in [
        ("-on-initial", Applies::Initial),
        ("-on-resume", Applies::Resume),
    ] {
        if let Some(n) = rest(prefix, name) {
            applies = a;
            name = &name[n..];
        }
    }
    Ok((applies, name))
}

/// Sets one connection's expectation or behaviour, for a flag that may differ between
/// connections.
type SetConnection = Box<dyn Fn(&mut ConnectionFlags)>;

/// Reads the runner's flags. Anything this shim does not honour is `Unimplemented`.
pub fn parse(args: &[String]) -> Result<Invocation, Unimplemented> {
    let mut f = ShimFlags::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (applies, flag) = split_prefix(arg)?;
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| Unimplemented(format!("{flag} without a value")))
        };
        // A flag of one connection: applied to the connections its prefix names.
        if let Some(set) = connection_flag(flag, &mut value)? {
            if applies != Applies::Resume {
                set(&mut f.initial);
            }
            if applies != Applies::Initial {
                set(&mut f.resume);
            }
            continue;
        }
        // Every other flag configures the library, once for all of the test's connections.
        if applies != Applies::All {
            return Err(Unimplemented(format!(
                "{arg}: the shim configures a library once per test, not per connection"
            )));
        }
        if let Some(policy) = CompliancePolicy::of_flag(flag) {
            f.compliance = Some(policy);
            continue;
        }
        if let Some(query) = library_flag(&mut f, arg, flag, &mut value)? {
            return Ok(query);
        }
    }
    if f.port == 0 {
        return Err(Unimplemented("no -port: not started by the runner".into()));
    }
    Ok(Invocation::Test(Box::new(f)))
}

/// What the runner takes from the shim's next argument, or why it has none.
type NextValue<'a> = dyn FnMut() -> Result<String, Unimplemented> + 'a;

/// A flag's value as a number.
fn number(flag: &str, v: String) -> Result<u64, Unimplemented> {
    v.parse()
        .map_err(|_| Unimplemented(format!("{flag} {v}: not a number")))
}

/// A flag that may differ between the test's connections, as what it sets on one; `None`
/// for any other flag.
fn connection_flag(
    flag: &str,
    value: &mut NextValue,
) -> Result<Option<SetConnection>, Unimplemented> {
    Ok(match flag {
        "-expect-version" => {
            let v = number(flag, value()?)? as u16;
            Some(Box::new(move |c| c.expect_version = Some(v)))
        }
        "-expect-curve-id" => {
            let v = number(flag, value()?)? as u16;
            Some(Box::new(move |c| c.expect_curve_id = Some(v)))
        }
        "-expect-peer-signature-algorithm" => {
            let v = number(flag, value()?)? as u16;
            Some(Box::new(move |c| c.expect_peer_signature = Some(v)))
        }
        "-expect-alpn" => {
            let v = value()?;
            Some(Box::new(move |c| c.expect_alpn = Some(v.clone())))
        }
        "-expect-server-name" => {
            let v = value()?;
            Some(Box::new(move |c| c.expect_server_name = Some(v.clone())))
        }
        "-expect-hrr" => Some(Box::new(|c| c.expect_hello_retry = Some(true))),
        "-expect-no-hrr" => Some(Box::new(|c| c.expect_hello_retry = Some(false))),
        "-shim-writes-first" => Some(Box::new(|c| c.shim_writes_first = true)),
        "-shim-shuts-down" => Some(Box::new(|c| c.shim_shuts_down = true)),
        "-check-close-notify" => Some(Box::new(|c| c.check_close_notify = true)),
        "-key-update" => Some(Box::new(|c| c.key_update = true)),
        "-verify-fail" => Some(Box::new(|c| c.verify_fail = true)),
        "-expect-selected-credential" => {
            let v = value()?;
            let n: i32 = v
                .parse()
                .map_err(|_| Unimplemented(format!("{flag} {v}: not a credential index")))?;
            Some(Box::new(move |c| c.expect_selected_credential = Some(n)))
        }
        "-expect-ocsp-response" => {
            let v = base64_value(flag, value()?)?;
            Some(Box::new(move |c| c.expect_ocsp_response = Some(v.clone())))
        }
        "-expect-next-proto" => {
            let v = value()?.into_bytes();
            Some(Box::new(move |c| c.expect_next_proto = Some(v.clone())))
        }
        "-expect-no-next-proto" => Some(Box::new(|c| c.expect_next_proto = Some(Vec::new()))),
        "-expect-extended-master-secret" => {
            Some(Box::new(|c| c.expect_extended_master_secret = true))
        }
        "-expect-peer-certificate-type" => {
            let v = number(flag, value()?)? as u8;
            Some(Box::new(move |c| c.expect_peer_certificate_type = Some(v)))
        }
        _ => None,
    })
}

/// Reads a flag that configures the library into `f`; `Some` for the one flag that asks a
/// question instead of starting a test.
fn library_flag(
    f: &mut ShimFlags,
    arg: &str,
    flag: &str,
    value: &mut NextValue,
) -> Result<Option<Invocation>, Unimplemented> {
    match flag {
        "-is-handshaker-supported" => return Ok(Some(Invocation::HandshakerQuery)),
        "-port" => f.port = number(flag, value()?)? as u16,
        "-shim-id" => f.shim_id = number(flag, value()?)?,
        "-ipv6" => f.ipv6 = true,
        "-server" => f.server = true,
        // Before any -new-*-credential these configure the default credential; after
        // one, the last credential added (as BoringSSL's shim reads them).
        "-key-file" => match f.credentials.last_mut() {
            Some(c) => c.key_file = Some(value()?),
            None => f.key_file = Some(value()?),
        },
        "-cert-file" => match f.credentials.last_mut() {
            Some(c) => c.cert_file = Some(value()?),
            None => f.cert_file = Some(value()?),
        },
        "-signing-prefs" => {
            let v = number(flag, value()?)? as u16;
            match f.credentials.last_mut() {
                Some(c) => c.signing_prefs.push(v),
                None => f.signing_prefs.push(v),
            }
        }
        "-new-x509-credential" | "-new-rpk-credential" => f.credentials.push(Credential {
            raw_public_key: flag == "-new-rpk-credential",
            ..Credential::default()
        }),
        "-must-match-issuer" => match f.credentials.last_mut() {
            Some(c) => c.must_match_issuer = true,
            None => return Err(Unimplemented(format!("{flag} before any credential"))),
        },
        "-accepted-peer-cert-types" => f
            .accepted_peer_cert_types
            .push(number(flag, value()?)? as u8),
        "-available-client-cert-types" => f
            .available_client_cert_types
            .push(number(flag, value()?)? as u8),
        "-expect-peer-rpk-sha256" => f.expect_peer_rpk_sha256 = Some(base64_value(flag, value()?)?),
        "-ocsp-response" => {
            let response = base64_value(flag, value()?)?;
            match f.credentials.last_mut() {
                Some(c) => c.ocsp_response = Some(response),
                None => f.ocsp_response = Some(response),
            }
        }
        "-enable-ocsp-stapling" => f.enable_ocsp_stapling = true,
        "-use-old-client-cert-callback" => f.old_client_cert_callback = true,
        "-advertise-npn" => f.advertise_npn = Some(value()?.into_bytes()),
        "-advertise-empty-npn" => f.advertise_npn = Some(Vec::new()),
        "-select-next-proto" => f.select_next_proto = Some(value()?.into_bytes()),
        "-select-empty-next-proto" => f.select_next_proto = Some(Vec::new()),
        "-psk" => f.psk = Some(value()?.into_bytes()),
        "-psk-identity" => f.psk_identity = Some(value()?),
        "-use-ocsp-callback" => f.ocsp_callback.get_or_insert_with(Default::default).used = true,
        "-set-ocsp-in-callback" => {
            f.ocsp_callback
                .get_or_insert_with(Default::default)
                .sets_response = true
        }
        "-decline-ocsp-callback" => {
            f.ocsp_callback
                .get_or_insert_with(Default::default)
                .declines = true
        }
        "-fail-ocsp-callback" => f.ocsp_callback.get_or_insert_with(Default::default).fails = true,
        "-trust-cert" => f.trust_cert = Some(value()?),
        "-verify-peer" => f.verify_peer = true,
        "-expect-verify-result" => f.expect_verify_result = true,
        "-reverify-on-resume" => f.reverify_on_resume = true,
        "-jdk11-workaround" => f.jdk11_workaround = true,
        "-no-ticket" => f.no_ticket = true,
        "-enable-channel-id" => f.enable_channel_id = true,
        "-send-channel-id" => f.send_channel_id = Some(value()?),
        "-expect-channel-id" => f.expect_channel_id = Some(base64_value(flag, value()?)?),
        "-require-any-client-certificate" => f.require_client_cert = true,
        "-resume-count" => f.resume_count = number(flag, value()?)? as u32,
        "-expect-session-miss" => f.expect_session_miss = true,
        "-advertise-alpn" => f.advertise_alpn = Some(value()?.into_bytes()),
        "-select-alpn" => f.select_alpn = Some(value()?),
        "-curves" => f.curves.push(number(flag, value()?)? as u16),
        "-min-version" => f.min_version = Some(number(flag, value()?)? as u16),
        "-max-version" => f.max_version = Some(number(flag, value()?)? as u16),
        "-no-tls13" => f.no_tls13 = true,
        "-no-tls12" => f.no_tls12 = true,
        "-host-name" => f.host_name = Some(value()?),
        "-verify-prefs" => f.verify_prefs.push(number(flag, value()?)? as u16),
        "-cipher" => f.cipher = Some(value()?),
        "-export-keying-material" => f.export_keying_material = number(flag, value()?)? as usize,
        "-export-label" => f.export_label = value()?,
        "-export-context" => f.export_context = value()?,
        "-use-export-context" => f.use_export_context = true,
        // Non-blocking I/O and a handshake driven by the first read or write: the wire
        // below always works that way, so these ask nothing more of it.
        "-async" | "-implicit-handshake" => {}
        "-use-custom-verify-callback" => f.custom_verify = true,
        _ => {
            return Err(Unimplemented(match not_honoured(flag) {
                Some(why) => format!("{arg}: {why}"),
                None => arg.to_string(),
            }))
        }
    }
    Ok(None)
}

/// A flag's base64 value, decoded.
fn base64_value(flag: &str, text: String) -> Result<Vec<u8>, Unimplemented> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(&text)
        .map_err(|e| Unimplemented(format!("{flag} {text}: {e}")))
}

/// Flags honoured by [`parse`], without their prefixes.
pub const HONOURED: &[&str] = &[
    "-port",
    "-shim-id",
    "-ipv6",
    "-server",
    "-key-file",
    "-cert-file",
    "-trust-cert",
    "-verify-peer",
    "-verify-fail",
    "-expect-verify-result",
    "-reverify-on-resume",
    "-jdk11-workaround",
    "-no-ticket",
    "-enable-channel-id",
    "-send-channel-id",
    "-expect-channel-id",
    "-require-any-client-certificate",
    "-resume-count",
    "-expect-session-miss",
    "-advertise-alpn",
    "-select-alpn",
    "-expect-alpn",
    "-curves",
    "-expect-curve-id",
    "-min-version",
    "-max-version",
    "-expect-version",
    "-no-tls13",
    "-no-tls12",
    "-host-name",
    "-expect-server-name",
    "-signing-prefs",
    "-verify-prefs",
    "-expect-peer-signature-algorithm",
    "-cipher",
    "-export-keying-material",
    "-export-label",
    "-export-context",
    "-use-export-context",
    "-new-x509-credential",
    "-new-rpk-credential",
    "-must-match-issuer",
    "-expect-selected-credential",
    "-accepted-peer-cert-types",
    "-available-client-cert-types",
    "-expect-peer-certificate-type",
    "-expect-peer-rpk-sha256",
    "-enable-ocsp-stapling",
    "-expect-ocsp-response",
    "-ocsp-response",
    "-use-ocsp-callback",
    "-set-ocsp-in-callback",
    "-decline-ocsp-callback",
    "-fail-ocsp-callback",
    "-use-old-client-cert-callback",
    "-advertise-npn",
    "-advertise-empty-npn",
    "-expect-next-proto",
    "-expect-no-next-proto",
    "-select-next-proto",
    "-select-empty-next-proto",
    "-psk",
    "-psk-identity",
    "-expect-extended-master-secret",
    "-fips-202205",
    "-fips-202609",
    "-wpa-202304",
    "-cnsa-202407",
    "-cnsa1-202603",
    "-cnsa2-202603",
    "-expect-hrr",
    "-expect-no-hrr",
    "-shim-writes-first",
    "-shim-shuts-down",
    "-check-close-notify",
    "-key-update",
    "-async",
    "-implicit-handshake",
    "-use-custom-verify-callback",
    "-is-handshaker-supported",
];

/// Every other flag BoringSSL's shim takes (`ssl/test/test_config.cc`), with why this shim
/// does not honour it; a test that passes one is unimplemented for every library. A flag in
/// neither list fails `tlsmatrix`'s flag-table test, so a runner that gains one is noticed.
pub const NOT_HONOURED: &[(&[&str], &str)] = &[
    (
        &["-dtls", "-quic", "-mtu", "-initial-timeout-duration-ms", "-quic-transport-params",
          "-expect-quic-transport-params", "-quic-use-legacy-codepoint", "-quic-early-data-context"],
        "other transports: the shim speaks TLS over TCP only",
    ),
    (
        &["-write-settings", "-write-hint-trace", "-handshake-hints", "-allow-hint-mismatch",
          "-handshaker-resume", "-handshaker-path", "-fuzzer-mode", "-wait-for-debugger"],
        "BoringSSL's own test machinery (split handshakes, hint traces, fuzzing, debugging)",
    ),
    (
        &["-no-tls11", "-no-tls1", "-fallback-scsv"],
        "TLS 1.0 and 1.1: tlsmatrix configures every library for TLS 1.2 and 1.3 only",
    ),
    (
        &["-false-start", "-allow-false-start-without-alpn"],
        "False Start: the shim finishes every handshake before it writes",
    ),
    (
        &["-enable-ech-grease", "-reject-unusable-ech-config", "-ech-server-config", "-ech-server-key",
          "-ech-is-retry-config", "-expect-ech-accept", "-expect-ech-name-override",
          "-expect-no-ech-name-override", "-expect-ech-retry-configs", "-expect-no-ech-retry-configs",
          "-ech-config-list"],
        "Encrypted Client Hello: the adapter API has no ECH configuration yet",
    ),
    (
        &["-defer-alps", "-application-settings", "-expect-peer-application-settings",
          "-alps-use-new-codepoint"],
        "ALPS is BoringSSL's own extension (a draft); no other library has it",
    ),
    (
        &["-expect-peer-verify-pref", "-expect-certificate-types", "-curves-flags",
          "-tls13-ciphers", "-tls13-ciphers-flags", "-key-shares", "-no-key-shares",
          "-server-supported-groups-hint", "-server-preference", "-expect-cipher-aes",
          "-expect-cipher-no-aes", "-expect-cipher", "-enable-grease", "-permute-extensions"],
        "a ClientHello detail (key shares, flags, GREASE, order) the adapter API does not set or report",
    ),
    (
        &["-write-different-record-sizes", "-cbc-record-splitting", "-partial-write",
          "-shim-initial-write", "-repeat-shim-initial-write", "-read-with-unfinished-write",
          "-peek-then-read", "-max-send-fragment", "-read-size", "-send-alert",
          "-key-update-before-read", "-early-write-after-message", "-handshake-never-done",
          "-handshake-twice", "-no-op-extra-handshake", "-use-exporter-between-reads"],
        "a way of driving reads and writes the shim's echo loop does not have",
    ),
    (
        &["-expect-advertised-alpn", "-decline-alpn", "-reject-alpn", "-select-empty-alpn",
          "-allow-unknown-alpn-protos"],
        "an ALPN callback behaviour beyond choosing one protocol, which the adapter API does not express",
    ),
    (
        &["-new-psk-credential", "-psk-importer-key",
          "-psk-importer-identity", "-psk-importer-context", "-psk-importer-sha256",
          "-psk-importer-sha384", "-new-spake2plusv1-credential", "-pake-context",
          "-pake-client-id", "-pake-server-id", "-pake-password", "-wrong-pake-role"],
        "TLS 1.3 external PSKs (importers) and PAKEs: the adapter API has no PSK credentials",
    ),
    (
        &["-new-delegated-credential", "-delegated-credential", "-cert-properties",
          "-expect-peer-match-trust-anchor", "-expect-no-peer-match-trust-anchor",
          "-expect-peer-available-trust-anchors", "-requested-trust-anchors",
          "-available-trust-anchors"],
        "delegated credentials, certificate properties and trust anchor IDs: the adapter API does not express them",
    ),
    (
        &["-enable-signed-cert-timestamps", "-expect-signed-cert-timestamps",
          "-signed-cert-timestamps"],
        "SCTs: the adapter API has no signed certificate timestamps",
    ),
    (
        &["-install-cert-compression-algs", "-install-one-cert-compression-alg"],
        "certificate compression: the adapter API does not configure it",
    ),
    (
        &["-srtp-profiles"],
        "SRTP is for DTLS",
    ),
    (
        &["-use-early-callback", "-fail-early-callback", "-fail-early-callback-ech-rewind",
          "-install-ddos-callback", "-fail-ddos-callback", "-fail-cert-callback",
          "-fail-cert-callback-alert",
          "-retain-only-sha256-client-cert",
          "-expect-sha256-client-cert", "-expect-msg-callback", "-private-key-delay-ms"],
        "a library callback or BoringSSL-only switch the adapter API does not expose",
    ),
    (
        &["-tls-unique", "-export-traffic-secrets"],
        "the tls-unique channel binding and raw traffic secrets: the adapter API hands out neither",
    ),
    (
        &["-expect-ticket-renewal", "-expect-no-session", "-use-ticket-callback",
          "-use-ticket-aead-callback", "-renew-ticket", "-skip-ticket", "-ticket-key",
          "-resumption-delay", "-expect-session-id", "-expect-no-session-id",
          "-expect-ticket-age-skew", "-session-id-context", "-resumption-across-names-enabled",
          "-expect-resumable-across-names", "-expect-not-resumable-across-names",
          "-no-legacy-server-connect"],
        "a session or ticket control the adapter API does not have (it keeps the library's defaults)",
    ),
    (
        &["-enable-early-data", "-expect-ticket-supports-early-data", "-expect-accept-early-data",
          "-expect-reject-early-data", "-expect-no-offer-early-data", "-expect-early-data-reason"],
        "0-RTT: no adapter sends or accepts early data",
    ),
    (
        &["-expect-total-renegotiations", "-renegotiate-once", "-renegotiate-freely",
          "-renegotiate-ignore", "-renegotiate-explicit", "-forbid-renegotiation-after-handshake",
          "-expect-secure-renegotiation", "-expect-no-secure-renegotiation"],
        "renegotiation: the adapters keep each library's default (refused or unsupported)",
    ),
    (
        &["-expect-peer-cert-file", "-expect-no-peer-cert",
          "-expect-no-server-name", "-use-client-ca-list", "-expect-client-ca-list",
          "-max-cert-list", "-no-server-name-ack", "-request-server-padding",
          "-expect-server-sent-requested-padding", "-server-supports-padding"],
        "a handshake detail the adapter API does not set or report",
    ),
];

/// Why `flag` (without prefixes) is not honoured; `None` for a flag of [`HONOURED`] or one
/// in neither list.
pub fn not_honoured(flag: &str) -> Option<&'static str> {
    NOT_HONOURED
        .iter()
        .find(|(flags, _)| flags.contains(&flag))
        .map(|(_, why)| *why)
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
            "-export-keying-material",
            "1024",
            "-export-label",
            "label",
            "-export-context",
            "context",
            "-use-export-context",
        ]))
        .unwrap();
        let Invocation::Test(f) = inv else {
            panic!("a test")
        };
        assert_eq!(f.port, 4433);
        assert_eq!(f.shim_id, 7);
        assert!(f.server && f.initial.key_update);
        assert_eq!(f.key_file.as_deref(), Some("k.pem"));
        assert_eq!(f.curves, [29, 23]);
        assert_eq!((f.min_version, f.max_version), (Some(TLS12), Some(TLS13)));
        assert_eq!(f.resume_count, 2);
        assert_eq!(f.select_alpn.as_deref(), Some("h2"));
        assert_eq!(f.host_name.as_deref(), Some("example.test"));
        assert_eq!(f.connection(0).expect_version, Some(TLS13));
        assert!(f.connection(1).key_update);
        assert_eq!(f.export_keying_material, 1024);
        assert_eq!(
            (f.export_label.as_str(), f.export_context.as_str()),
            ("label", "context")
        );
        assert!(f.use_export_context);
    }

    #[test]
    fn credential_flags_configure_the_last_credential_added() {
        let Invocation::Test(f) = parse(&args(&[
            "-port",
            "1",
            "-on-initial-expect-selected-credential",
            "1",
            "-on-resume-expect-selected-credential",
            "-1",
            "-cert-file",
            "default.pem",
            "-signing-prefs",
            "1027",
            "-new-x509-credential",
            "-cert-file",
            "a.pem",
            "-key-file",
            "a.key",
            "-must-match-issuer",
            "-new-rpk-credential",
            "-key-file",
            "b.key",
            "-signing-prefs",
            "2052",
            "-ocsp-response",
            "AQID",
            "-accepted-peer-cert-types",
            "2",
            "-accepted-peer-cert-types",
            "0",
            "-expect-peer-certificate-type",
            "2",
        ]))
        .unwrap() else {
            panic!("a test")
        };
        assert_eq!(f.cert_file.as_deref(), Some("default.pem"));
        assert_eq!(f.signing_prefs, [1027]);
        assert_eq!(f.key_file, None);
        assert_eq!(
            f.credentials,
            [
                Credential {
                    raw_public_key: false,
                    cert_file: Some("a.pem".into()),
                    key_file: Some("a.key".into()),
                    signing_prefs: vec![],
                    must_match_issuer: true,
                    ocsp_response: None,
                },
                Credential {
                    raw_public_key: true,
                    cert_file: None,
                    key_file: Some("b.key".into()),
                    signing_prefs: vec![2052],
                    must_match_issuer: false,
                    ocsp_response: Some(vec![1, 2, 3]),
                },
            ]
        );
        assert_eq!(f.accepted_peer_cert_types, [2, 0]);
        assert_eq!(f.connection(0).expect_selected_credential, Some(1));
        assert_eq!(f.connection(1).expect_selected_credential, Some(-1));
        assert_eq!(f.connection(1).expect_peer_certificate_type, Some(2));
        // BoringSSL's shim refuses a credential's flag before any credential.
        let e = parse(&args(&["-port", "1", "-must-match-issuer"])).unwrap_err();
        assert!(e.0.contains("before any credential"), "{e}");
    }

    #[test]
    fn prefixes_split_a_connection_flag_between_the_first_connection_and_resumptions() {
        let Invocation::Test(f) = parse(&args(&[
            "-port",
            "1",
            "-on-initial-expect-curve-id",
            "29",
            "-on-resume-shim-writes-first",
            "-on-shim-expect-alpn",
            "h2",
            "-fips-202205",
        ]))
        .unwrap() else {
            panic!("a test")
        };
        assert_eq!(f.connection(0).expect_curve_id, Some(29));
        assert_eq!(f.connection(1).expect_curve_id, None);
        assert!(!f.connection(0).shim_writes_first && f.connection(2).shim_writes_first);
        assert_eq!(f.connection(1).expect_alpn.as_deref(), Some("h2"));
        assert_eq!(f.compliance, Some(CompliancePolicy::Fips202205));
        // A verification callback that fails on resumption only.
        let Invocation::Test(f) = parse(&args(&["-port", "1", "-on-resume-verify-fail"])).unwrap()
        else {
            panic!("a test")
        };
        assert!(!f.connection(0).verify_fail && f.connection(1).verify_fail);
        // A configuration flag cannot differ between connections, and no shim here makes
        // split handshakes or 0-RTT retries.
        for refused in [
            &["-on-resume-curves", "29"][..],
            &["-on-retry-expect-alpn", "h2"],
            &["-on-handshaker-key-update"],
        ] {
            let mut a = args(&["-port", "1"]);
            a.extend(args(refused));
            assert!(parse(&a).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn every_honoured_flag_parses_and_no_flag_is_in_both_lists() {
        for flag in HONOURED {
            assert_eq!(not_honoured(flag), None, "{flag} is in both lists");
            if *flag == "-is-handshaker-supported" {
                continue;
            }
            // Every value-taking flag here takes a number, a string or base64; "7710" is all.
            // A credential first, for the flags that configure one.
            let a = args(&["-port", "1", "-new-x509-credential", flag, "7710"]);
            match parse(&a) {
                Ok(_) => {}
                // A flag without a value reads "7710" as the next flag.
                Err(e) => assert!(e.0.starts_with("7710"), "{flag}: {e}"),
            }
        }
    }

    #[test]
    fn what_the_table_lacks_is_unimplemented_by_name() {
        let e = parse(&args(&["-port", "1", "-no-such-flag"])).unwrap_err();
        assert_eq!(e, Unimplemented("-no-such-flag".into()));
        assert_eq!(e.to_string(), "unimplemented: -no-such-flag");
        // A flag listed as not honoured carries its reason.
        let e = parse(&args(&["-port", "1", "-enable-ech-grease"])).unwrap_err();
        assert!(
            e.0.starts_with("-enable-ech-grease: Encrypted Client Hello"),
            "{e}"
        );
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
