//! BoringSSL's credentials (`SSL_CREDENTIAL`): several certificate chains or raw public keys
//! (RFC 7250) on one context, of which the library picks one per handshake, and the
//! certificate types each side accepts. No other library here has this API, so
//! `open_extras` refuses these requests elsewhere.

use std::os::raw::{c_int, c_void};
use std::ptr;
use std::sync::OnceLock;

use anyhow::{bail, Result};
use boring::pkey::{PKey, PKeyRef};
use boring::ssl::{SslAlert, SslContextBuilder, SslRef, SslVerifyError, SslVerifyMode};
use boring::x509::X509;
use boring_sys as ffi;
use foreign_types_boring::{ForeignType, ForeignTypeRef};
use tlsmatrix_harness::endpoint::{Credential, OpenExtras};

/// An ex_data index, made once per process.
struct ExIndex(OnceLock<c_int>);

impl ExIndex {
    fn get(&self, make: unsafe extern "C" fn() -> c_int) -> c_int {
        // SAFETY: the index functions take no caller state.
        *self.0.get_or_init(|| unsafe { make() })
    }
}

/// Where each credential keeps its number (stored plus one: no data reads as none).
static CREDENTIAL_NUMBER: ExIndex = ExIndex(OnceLock::new());
/// Where each connection keeps the number of the credential its handshake used, recorded
/// when the handshake ends: BoringSSL forgets it with the handshake's state.
static SELECTED: ExIndex = ExIndex(OnceLock::new());

unsafe extern "C" fn new_credential_index() -> c_int {
    ffi::SSL_CREDENTIAL_get_ex_new_index(0, ptr::null_mut(), ptr::null_mut(), None, None)
}

unsafe extern "C" fn new_ssl_index() -> c_int {
    ffi::SSL_get_ex_new_index(0, ptr::null_mut(), ptr::null_mut(), None, None)
}

/// Adds the credentials, the certificate types and the raw public key check `extras` asks
/// for to the context.
pub fn apply(b: &mut SslContextBuilder, extras: &OpenExtras) -> Result<()> {
    for (n, c) in extras.credentials.iter().enumerate() {
        add(b, n, c)?;
    }
    if extras.reads_selected_credential {
        // SAFETY: a valid context; the callback is a plain function.
        unsafe { ffi::SSL_CTX_set_info_callback(b.as_ptr(), Some(record_selected)) };
    }
    set_cert_types(
        b,
        &extras.accepted_peer_cert_types,
        ffi::SSL_CTX_set1_accepted_peer_cert_types,
        "accepted",
    )?;
    set_cert_types(
        b,
        &extras.available_client_cert_types,
        ffi::SSL_CTX_set1_available_client_cert_types,
        "client",
    )?;
    Ok(())
}

/// `SSL_CTX_set1_accepted_peer_cert_types` or `SSL_CTX_set1_available_client_cert_types`.
type SetCertTypes = unsafe extern "C" fn(*mut ffi::SSL_CTX, *const u8, usize) -> c_int;

/// Sets a list of certificate types (RFC 7250 codes); an empty one keeps BoringSSL's default.
fn set_cert_types(
    b: &mut SslContextBuilder,
    types: &[u8],
    set: SetCertTypes,
    what: &str,
) -> Result<()> {
    // SAFETY: a valid context; the list is read during the call only.
    if types.is_empty() || unsafe { set(b.as_ptr(), types.as_ptr(), types.len()) } == 1 {
        return Ok(());
    }
    bail!("BoringSSL refused the {what} certificate types {types:?}")
}

/// Verification that takes a raw public key when its SubjectPublicKeyInfo hashes to `want`
/// (and nothing else), refusing with certificate_unknown as BoringSSL's shim does.
pub fn verify_raw_public_key(b: &mut SslContextBuilder, mode: SslVerifyMode, want: Vec<u8>) {
    b.set_custom_verify_callback(mode, move |ssl| match peer_rpk_sha256(ssl) {
        Some(got) if want == got => Ok(()),
        _ => Err(SslVerifyError::Invalid(SslAlert::CERTIFICATE_UNKNOWN)),
    });
}

fn peer_rpk_sha256(ssl: &SslRef) -> Option<[u8; 32]> {
    // SAFETY: a valid SSL; the key, when there is one, is owned by it and only read here.
    let key = unsafe { ffi::SSL_get0_peer_rpk(ssl.as_ptr()) };
    if key.is_null() {
        return None;
    }
    // SAFETY: a non-null EVP_PKEY that outlives this borrow.
    let key: &PKeyRef<boring::pkey::Public> = unsafe { PKeyRef::from_ptr(key) };
    let spki = key.public_key_to_der().ok()?;
    Some(boring::sha::sha256(&spki))
}

/// The number of the credential the connection's handshake used, or -1 for the default
/// certificate or none.
pub fn selected(ssl: &SslRef) -> i32 {
    // SAFETY: a valid SSL; the slot holds a number, not a pointer.
    let stored = unsafe { ffi::SSL_get_ex_data(ssl.as_ptr(), SELECTED.get(new_ssl_index)) };
    stored as usize as i32 - 1
}

/// The certificate type (RFC 7250 code) the peer authenticated with.
pub fn peer_cert_type(ssl: &SslRef) -> u8 {
    // SAFETY: a valid SSL.
    unsafe { ffi::SSL_get_peer_cert_type(ssl.as_ptr()) as u8 }
}

/// At the end of each handshake, the number of the credential it used, kept on the SSL.
unsafe extern "C" fn record_selected(ssl: *const ffi::SSL, kind: c_int, _value: c_int) {
    if kind != ffi::SSL_CB_HANDSHAKE_DONE as c_int {
        return;
    }
    let cred = ffi::SSL_get0_selected_credential(ssl);
    let number = match cred.is_null() {
        true => ptr::null_mut(),
        false => ffi::SSL_CREDENTIAL_get_ex_data(cred, CREDENTIAL_NUMBER.get(new_credential_index)),
    };
    ffi::SSL_set_ex_data(ssl as *mut ffi::SSL, SELECTED.get(new_ssl_index), number);
}

/// Frees a credential when it goes out of scope (the context keeps its own reference).
struct Owned(*mut ffi::SSL_CREDENTIAL);

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: a credential this code made and still holds.
        unsafe { ffi::SSL_CREDENTIAL_free(self.0) }
    }
}

fn add(b: &mut SslContextBuilder, number: usize, c: &Credential) -> Result<()> {
    let key = match c.key_pem.is_empty() {
        true => None,
        false => Some(PKey::private_key_from_pem(c.key_pem.as_bytes())?),
    };
    let cred = match (c.raw_public_key, &key) {
        // SAFETY: a valid key; the credential takes its own reference.
        (true, Some(key)) => unsafe { ffi::SSL_CREDENTIAL_new_raw_public_key(key.as_ptr()) },
        (true, None) => bail!("credential {number}: a raw public key without -key-file"),
        // SAFETY: no arguments.
        (false, _) => unsafe { ffi::SSL_CREDENTIAL_new_x509() },
    };
    if cred.is_null() {
        bail!("BoringSSL made no credential {number}");
    }
    let cred = Owned(cred);
    if !c.raw_public_key {
        set_chain(&cred, number, &c.chain_pem)?;
        if let Some(key) = &key {
            // SAFETY: a valid credential and key; the credential takes its own reference.
            if unsafe { ffi::SSL_CREDENTIAL_set1_private_key(cred.0, key.as_ptr()) } != 1 {
                bail!("credential {number}: BoringSSL refused its key");
            }
        }
    }
    // SAFETY: a valid credential; the list is read during the call only; the ex_data slot
    // holds a number, never dereferenced.
    unsafe {
        if !c.signing_prefs.is_empty()
            && ffi::SSL_CREDENTIAL_set1_signing_algorithm_prefs(
                cred.0,
                c.signing_prefs.as_ptr(),
                c.signing_prefs.len(),
            ) != 1
        {
            bail!(
                "credential {number}: BoringSSL refused the signing preferences {:04x?}",
                c.signing_prefs
            );
        }
        if c.must_match_issuer {
            ffi::SSL_CREDENTIAL_set_must_match_issuer(cred.0, 1);
        }
        if let Some(response) = &c.ocsp_response {
            let buffer = ffi::CRYPTO_BUFFER_new(response.as_ptr(), response.len(), ptr::null_mut());
            let ok =
                !buffer.is_null() && ffi::SSL_CREDENTIAL_set1_ocsp_response(cred.0, buffer) == 1;
            ffi::CRYPTO_BUFFER_free(buffer);
            if !ok {
                bail!("credential {number}: BoringSSL refused its OCSP response");
            }
        }
        ffi::SSL_CREDENTIAL_set_ex_data(
            cred.0,
            CREDENTIAL_NUMBER.get(new_credential_index),
            (number + 1) as *mut c_void,
        );
        if ffi::SSL_CTX_add1_credential(b.as_ptr(), cred.0) != 1 {
            bail!("BoringSSL refused credential {number} (incomplete, or its key does not match)");
        }
    }
    Ok(())
}

/// The credential's chain, leaf first, as BoringSSL's buffers.
fn set_chain(cred: &Owned, number: usize, chain_pem: &str) -> Result<()> {
    if chain_pem.is_empty() {
        return Ok(());
    }
    let ders = X509::stack_from_pem(chain_pem.as_bytes())?
        .iter()
        .map(|x| x.to_der())
        .collect::<Result<Vec<_>, _>>()?;
    // SAFETY: each buffer copies its DER; the credential takes its own references, and ours
    // are freed below.
    unsafe {
        let buffers: Vec<*mut ffi::CRYPTO_BUFFER> = ders
            .iter()
            .map(|d| ffi::CRYPTO_BUFFER_new(d.as_ptr(), d.len(), ptr::null_mut()))
            .collect();
        let ok = !buffers.iter().any(|b| b.is_null())
            && ffi::SSL_CREDENTIAL_set1_cert_chain(cred.0, buffers.as_ptr(), buffers.len()) == 1;
        for b in buffers.into_iter().filter(|b| !b.is_null()) {
            ffi::CRYPTO_BUFFER_free(b);
        }
        if !ok {
            bail!("credential {number}: BoringSSL refused its certificate chain");
        }
    }
    Ok(())
}
