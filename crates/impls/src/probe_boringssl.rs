//! What a BoringSSL or AWS-LC (BoringSSL's fork) connection negotiated, read through their
//! calls (they report TLS code points directly, where OpenSSL has NIDs), and their KeyUpdate
//! call. The counterpart of `probe_openssl.rs`.

#[cfg(feature = "boringssl")]
use boring_sys as ffi;
#[cfg(not(feature = "boringssl"))]
use openssl_sys as ffi;
use tlsmatrix_model::side::Side;

/// The key-exchange group, as a TLS code point.
pub fn group(ssl: *mut ffi::SSL) -> Option<u16> {
    // SAFETY: valid SSL pointer; returns 0 before a key exchange.
    let id = unsafe { ffi::SSL_get_curve_id(ssl) };
    (id != 0).then_some(id)
}

/// The signature scheme of the handshake, as the client verified it. A BoringSSL or AWS-LC server
/// cannot report the scheme it signed with; its peer's view is checked instead.
pub fn signature_scheme(ssl: *mut ffi::SSL, side: Side) -> Option<u16> {
    match side {
        Side::Client => peer_signature_scheme(ssl),
        Side::Server => None,
    }
}

/// The scheme the peer signed the handshake with, either side.
pub fn peer_signature_scheme(ssl: *mut ffi::SSL) -> Option<u16> {
    // SAFETY: valid SSL pointer; returns 0 when no signature was verified.
    Some(unsafe { ffi::SSL_get_peer_signature_algorithm(ssl) }).filter(|&s| s != 0)
}

/// The client's Channel ID as the server received it (empty when none came).
pub fn channel_id(ssl: *mut ffi::SSL) -> Option<Vec<u8>> {
    let mut id = [0u8; 64];
    // SAFETY: valid SSL pointer; writes at most 64 bytes and returns how many it has.
    let n = unsafe { ffi::SSL_get_tls_channel_id(ssl, id.as_mut_ptr(), id.len()) };
    Some(id[..n.min(id.len())].to_vec())
}

/// Whether the handshake had a HelloRetryRequest.
pub fn hello_retry(ssl: *mut ffi::SSL) -> Option<bool> {
    // SAFETY: valid SSL pointer.
    Some(unsafe { ffi::SSL_used_hello_retry_request(ssl) } == 1)
}

/// Schedules a KeyUpdate that asks the peer to update too; false if the library refused.
pub fn key_update(ssl: *mut ffi::SSL) -> bool {
    // SAFETY: valid SSL pointer; the call only schedules the message.
    unsafe { ffi::SSL_key_update(ssl, ffi::SSL_KEY_UPDATE_REQUESTED as i32) == 1 }
}

/// The OCSP response the server stapled (empty when none came).
pub fn ocsp_response(ssl: *mut ffi::SSL) -> Vec<u8> {
    let mut data = std::ptr::null();
    let mut len = 0;
    // SAFETY: valid SSL pointer; the response, if any, is owned by the SSL and copied here.
    unsafe {
        ffi::SSL_get0_ocsp_response(ssl, &mut data, &mut len);
        match data.is_null() {
            true => Vec::new(),
            false => std::slice::from_raw_parts(data, len).to_vec(),
        }
    }
}

/// Sets the OCSP response a server staples; false if the library refused it.
pub fn set_ocsp_response(ssl: *mut ffi::SSL, response: &[u8]) -> bool {
    // SAFETY: valid SSL pointer; the library copies the response.
    unsafe { ffi::SSL_set_ocsp_response(ssl, response.as_ptr(), response.len()) == 1 }
}

/// Whether the connection uses the extended master secret (RFC 7627).
pub fn extended_master_secret(ssl: *mut ffi::SSL) -> bool {
    // SAFETY: valid SSL pointer.
    unsafe { ffi::SSL_get_extms_support(ssl) == 1 }
}
