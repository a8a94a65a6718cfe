//! The BoGo shim: BoringSSL's TLS test runner (`ssl/test/runner`) starts it once per test with
//! flags that say how to configure the stack and what to check, and the shim connects back to
//! the runner, plays its side over TCP through any [`TlsLibrary`], echoes data, and exits 0 when
//! every check held. A flag this shim cannot honour exits at once with status 89, which the
//! runner counts as "unimplemented", never as passed; so every flag not in [`parse`] is refused,
//! and a flag is only listed once the adapters honour it for every library.

use std::fs;
use std::io::Write;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::wire::{self, Received, Wire};
use tlsmatrix_harness::certs::CertSet;
use tlsmatrix_harness::endpoint::{
    Credential, EndpointConfig, OpenExtras, OpenPolicy, TlsEndpoint, TlsLibrary,
};
use tlsmatrix_model::scenario::SERVER_NAME;
use tlsmatrix_model::scenario::{Aead, Chain, Resumption, SigAlg, Version};
use tlsmatrix_model::side::Side;

use tlsmatrix_model::bogo_flags::{alpn_names, group_of, version_of};
pub use tlsmatrix_model::bogo_flags::{
    answer_unimplemented, parse, ConnectionFlags, Invocation, ShimFlags, Unimplemented,
};

/// How long one connection may take; the runner's own idle timeout (15 s) is shorter, so the
/// runner kills a shim that waits before this bites. It bounds a shim started by hand.
const CONNECTION_LIMIT: Duration = Duration::from_secs(30);

/// How long the end of a connection waits for the runner to close its side.
const DRAIN_LIMIT: Duration = Duration::from_secs(5);

/// The runner reads echoes 512 bytes at a time from BoringSSL's shim; reading as little
/// makes records arrive split across reads, as the runner's tests expect.
const READ_SIZE: usize = 512;

fn read_pem(path: &Option<String>) -> Result<String> {
    match path {
        Some(p) => fs::read_to_string(p).with_context(|| format!("cannot read {p}")),
        None => Ok(String::new()),
    }
}

/// The endpoint configuration the flags describe. `Err(Unimplemented)` for a request the
/// adapters cannot express; other errors (an unreadable file) fail the test.
pub fn config(flags: &ShimFlags) -> Result<EndpointConfig> {
    let mut min = flags
        .min_version
        .map_or(Ok(Version::Tls12), |c| version_of(c, "-min-version"))?;
    let mut max = flags
        .max_version
        .map_or(Ok(Version::Tls13), |c| version_of(c, "-max-version"))?;
    if flags.no_tls13 {
        max = Version::Tls12;
    }
    if flags.no_tls12 {
        min = Version::Tls13;
    }
    if min > max {
        return Err(Unimplemented(
            "no version left between TLS 1.2 and 1.3 (the runner's own bounds are outside what tlsmatrix configures)".into(),
        )
        .into());
    }
    // Groups by name where the scenario model has them all, else by code point (an extra
    // only some adapters take).
    let (groups, group_codes) = match flags.curves.iter().map(|c| group_of(*c)).collect() {
        Ok(named) => (named, Vec::new()),
        Err(_) => (Vec::new(), flags.curves.clone()),
    };
    let alpn = match (flags.server, &flags.advertise_alpn, &flags.select_alpn) {
        (false, Some(wire), _) => alpn_names(wire)?,
        (true, _, Some(p)) => vec![p.clone()],
        _ => Vec::new(),
    };
    let key_pem = read_pem(&flags.key_file)?;
    // No chain is verified (see `OpenPolicy`), so -trust-cert is not read: the runner
    // passes an empty path for credentials without a root.
    let certs = CertSet::from_pems(String::new(), read_pem(&flags.cert_file)?, key_pem.clone());
    if flags.server && key_pem.is_empty() && flags.credentials.is_empty() && flags.psk.is_none() {
        bail!("a server test without -key-file, a credential or a pre-shared key");
    }
    let credentials = flags
        .credentials
        .iter()
        .map(|c| {
            Ok(Credential {
                raw_public_key: c.raw_public_key,
                chain_pem: read_pem(&c.cert_file)?,
                key_pem: read_pem(&c.key_file)?,
                signing_prefs: c.signing_prefs.clone(),
                must_match_issuer: c.must_match_issuer,
                ocsp_response: c.ocsp_response.clone(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let both = [&flags.initial, &flags.resume];
    Ok(EndpointConfig {
        version: max,
        // Ignored with `open` set; present because pinned configurations need them.
        aead: Aead::Aes128Gcm,
        sig: SigAlg::EcdsaP256,
        groups,
        client_first_group: None,
        resumption: Resumption::Ticket,
        certs: Arc::new(certs),
        server_name: flags.host_name.clone().unwrap_or(SERVER_NAME.into()),
        alpn,
        // BoringSSL's shim: -verify-peer asks for a certificate and overrides
        // -require-any-client-certificate, which alone makes one mandatory.
        require_client_cert: flags.server && flags.require_client_cert && !flags.verify_peer,
        client_cert: !flags.server && !key_pem.is_empty(),
        chain: Chain::One,
        open: Some(OpenPolicy {
            min_version: min,
            max_version: max,
            request_client_cert: flags.server && (flags.verify_peer || flags.require_client_cert),
            sni: flags.host_name.clone(),
            every_tls12_suite: true,
            middlebox_compat: true,
            extras: OpenExtras {
                signing_prefs: flags.signing_prefs.clone(),
                verify_prefs: flags.verify_prefs.clone(),
                cipher_list: flags.cipher.clone(),
                compliance: flags.compliance,
                verify_fails: flags.initial.verify_fail,
                verify_fails_on_resume: flags.resume.verify_fail,
                verify_soft: (flags.initial.verify_fail || flags.resume.verify_fail)
                    && !flags.verify_peer
                    && !flags.server,
                custom_verify: flags.custom_verify,
                reverify_on_resume: flags.reverify_on_resume,
                jdk11_workaround: flags.jdk11_workaround,
                no_ticket: flags.no_ticket,
                reads_verify_result: flags.expect_verify_result,
                channel_id_enabled: flags.enable_channel_id || flags.expect_channel_id.is_some(),
                channel_id_key_pem: flags
                    .send_channel_id
                    .is_some()
                    .then(|| read_pem(&flags.send_channel_id))
                    .transpose()?,
                reads_channel_id: flags.expect_channel_id.is_some(),
                reads_peer_signature: both.iter().any(|c| c.expect_peer_signature.is_some()),
                reads_hello_retry: both.iter().any(|c| c.expect_hello_retry.is_some()),
                exports_keying_material: flags.export_keying_material > 0,
                group_codes,
                credentials,
                reads_selected_credential: both
                    .iter()
                    .any(|c| c.expect_selected_credential.is_some()),
                accepted_peer_cert_types: flags.accepted_peer_cert_types.clone(),
                available_client_cert_types: flags.available_client_cert_types.clone(),
                peer_rpk_sha256: flags.expect_peer_rpk_sha256.clone(),
                reads_peer_cert_type: both
                    .iter()
                    .any(|c| c.expect_peer_certificate_type.is_some()),
                requests_ocsp: flags.enable_ocsp_stapling,
                ocsp_response: flags.ocsp_response.clone(),
                ocsp_callback: flags.ocsp_callback,
                reads_ocsp_response: both.iter().any(|c| c.expect_ocsp_response.is_some()),
                old_client_cert_callback: flags.old_client_cert_callback,
                npn_advertised: flags.advertise_npn.clone(),
                npn_selected: flags.select_next_proto.clone(),
                reads_next_proto: both.iter().any(|c| c.expect_next_proto.is_some()),
                psk: flags.psk.clone(),
                psk_identity: flags.psk_identity.clone().unwrap_or_default(),
                reads_extended_master_secret: both.iter().any(|c| c.expect_extended_master_secret),
            },
        }),
    })
}

fn side(flags: &ShimFlags) -> Side {
    if flags.server {
        Side::Server
    } else {
        Side::Client
    }
}

/// What one test run ended with: the exit status the runner reads.
pub fn run(lib: &dyn TlsLibrary, flags: &ShimFlags) -> Result<()> {
    let cfg = config(flags)?;
    if let Err(reason) = lib.supports(&cfg) {
        return Err(Unimplemented(reason).into());
    }
    if let Some(open) = &cfg.open {
        lib.open_extras(&open.extras).map_err(Unimplemented)?;
    }
    let factory = lib.factory(side(flags), &cfg)?;
    for n in 0..=flags.resume_count {
        let tcp = connect_back(flags)?;
        let deadline = Instant::now() + CONNECTION_LIMIT;
        let (mut wire, mut ep) = wire::connect(factory.as_ref(), tcp, deadline)?;
        let result = wire
            .handshake(ep.as_mut())
            .with_context(|| format!("connection {} handshake", n + 1))
            .and_then(|()| check(flags, flags.connection(n), ep.as_ref(), n > 0))
            .and_then(|()| export(flags, &mut wire, ep.as_mut()))
            .and_then(|()| exchange(flags.connection(n), &mut wire, ep.as_mut()));
        if result.is_err() {
            // The alert the library queued while failing goes out before the stream ends.
            let _ = wire.flush();
        }
        wire.drain(DRAIN_LIMIT);
        result?;
    }
    Ok(())
}

/// Connects to the runner and says which test this process serves.
fn connect_back(flags: &ShimFlags) -> Result<TcpStream> {
    let addr = if flags.ipv6 {
        SocketAddr::from((Ipv6Addr::LOCALHOST, flags.port))
    } else {
        SocketAddr::from((Ipv4Addr::LOCALHOST, flags.port))
    };
    let mut tcp = TcpStream::connect_timeout(&addr, CONNECTION_LIMIT)
        .with_context(|| format!("cannot connect to the runner at {addr}"))?;
    tcp.write_all(&flags.shim_id.to_le_bytes())?;
    Ok(tcp)
}

/// The checks BoringSSL's shim makes after a handshake, for the flags honoured here.
fn check(
    flags: &ShimFlags,
    conn: &ConnectionFlags,
    ep: &dyn TlsEndpoint,
    resumed_expected: bool,
) -> Result<()> {
    let got = ep.negotiated();
    if let Some(want) = conn.expect_version {
        if got.version != Some(want) {
            bail!("want version {want:04x}, got {:04x?}", got.version);
        }
    }
    if let Some(want) = conn.expect_curve_id {
        if got.group != Some(want) {
            bail!("want group {want}, got {:?}", got.group);
        }
    }
    let expect_resume = resumed_expected && !flags.expect_session_miss;
    match got.resumed {
        Some(r) if r != expect_resume => {
            bail!(
                "session unexpectedly was{} reused",
                if r { "" } else { " not" }
            )
        }
        None if resumed_expected => bail!("the library cannot tell whether it resumed"),
        _ => {}
    }
    let alpn = ep.alpn().map(|p| String::from_utf8_lossy(&p).into_owned());
    if let Some(want) = &conn.expect_alpn {
        if alpn.as_ref() != Some(want) {
            bail!("want ALPN {want:?}, got {alpn:?}");
        }
    }
    if let Some(want) = &conn.expect_server_name {
        if ep.sni().as_ref() != Some(want) {
            bail!("want server name {want:?}, got {:?}", ep.sni());
        }
    }
    expect("peer signature scheme", conn.expect_peer_signature, || {
        ep.peer_signature_scheme()
    })?;
    if flags.expect_verify_result {
        // X509_V_OK, or X509_V_ERR_APPLICATION_VERIFICATION: the application refused.
        let want = if conn.verify_fail { 50 } else { 0 };
        expect("verification result", Some(want), || ep.verify_result())?;
    }
    expect("Channel ID", flags.expect_channel_id.clone(), || {
        ep.channel_id()
    })?;
    expect("credential chosen", conn.expect_selected_credential, || {
        ep.selected_credential()
    })?;
    if conn.expect_extended_master_secret {
        expect("extended master secret", Some(true), || {
            ep.extended_master_secret()
        })?;
    }
    expect("NPN protocol", conn.expect_next_proto.clone(), || {
        ep.next_proto()
    })?;
    expect("OCSP response", conn.expect_ocsp_response.clone(), || {
        ep.ocsp_response()
    })?;
    expect(
        "peer certificate type",
        conn.expect_peer_certificate_type,
        || ep.peer_cert_type(),
    )?;
    expect("HelloRetryRequest", conn.expect_hello_retry, || {
        ep.hello_retry()
    })?;
    Ok(())
}

/// Fails unless the endpoint reports `want` (when one is asked); an endpoint that cannot tell
/// reports `None`, which fails too.
fn expect<T: PartialEq + std::fmt::Debug>(
    what: &str,
    want: Option<T>,
    got: impl FnOnce() -> Option<T>,
) -> Result<()> {
    let Some(want) = want else {
        return Ok(());
    };
    let got = got();
    if got.as_ref() != Some(&want) {
        bail!("want {what} {want:?}, got {got:?}");
    }
    Ok(())
}

/// Keying material the connection exports, sent to the runner, which derives the same and
/// compares (`-export-keying-material`): after the checks and before any other data, as in
/// BoringSSL's shim.
fn export(flags: &ShimFlags, wire: &mut Wire, ep: &mut dyn TlsEndpoint) -> Result<()> {
    if flags.export_keying_material == 0 {
        return Ok(());
    }
    let context = flags
        .use_export_context
        .then_some(flags.export_context.as_bytes());
    let material = ep
        .export_keying_material(
            flags.export_label.as_bytes(),
            context,
            flags.export_keying_material,
        )
        .context("the adapter took the exporter flags but exports nothing")??;
    wire.send(ep, &material)
}

/// The data phase: optionally write "hello" first, then echo every read back with each byte
/// flipped, until the runner ends the stream; close as BoringSSL's shim does. A shim that
/// shuts down first does so after its write: with -check-close-notify it sends close_notify
/// and waits for the runner's, else it just ends the stream.
fn exchange(flags: &ConnectionFlags, wire: &mut Wire, ep: &mut dyn TlsEndpoint) -> Result<()> {
    if flags.shim_writes_first {
        wire.send(ep, b"hello")?;
    }
    if flags.shim_shuts_down {
        // BoringSSL's shim shuts down quietly (no close_notify) unless told to check it.
        if !flags.check_close_notify {
            return Ok(());
        }
        wire.send_close(ep)?;
        let mut buf = [0u8; READ_SIZE];
        return match wire.recv(ep, &mut buf)? {
            Received::Closed => Ok(()),
            Received::Data(_) => bail!("data from the runner after the shim's close_notify"),
            Received::Eof => bail!("the runner's stream ended without close_notify"),
        };
    }
    let mut buf = [0u8; READ_SIZE];
    let clean = loop {
        match wire.recv(ep, &mut buf)? {
            Received::Data(n) => {
                if flags.key_update {
                    wire.key_update(ep)?;
                }
                let flipped: Vec<u8> = buf[..n].iter().map(|b| b ^ 0xff).collect();
                wire.send(ep, &flipped)?;
            }
            Received::Closed => break true,
            Received::Eof => break false,
        }
    };
    if flags.check_close_notify {
        if !clean {
            bail!("the runner's stream ended without close_notify");
        }
        wire.send_close(ep)?;
    }
    Ok(())
}
