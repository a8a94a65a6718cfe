//! What an OpenSSL connection negotiated, read through the calls OpenSSL offers for it
//! (`SSL_ctrl` commands and signature NIDs), and its KeyUpdate call. The BoringSSL build
//! reads the same facts through BoringSSL's own calls (`probe_boringssl.rs`).

use std::os::raw::{c_int, c_long, c_void};

use foreign_types::ForeignTypeRef;
use openssl_sys as ffi;
use tlsmatrix_model::codes;
use tlsmatrix_model::scenario::Group;
use tlsmatrix_model::side::Side;

// Declared in tls1.h since 1.1.1 and 3.0; the `openssl-sys` crate does not bind them.
extern "C" {
    fn SSL_get_peer_signature_type_nid(s: *const ffi::SSL, pnid: *mut c_int) -> c_int;
    fn SSL_get_signature_type_nid(s: *const ffi::SSL, pnid: *mut c_int) -> c_int;
    fn SSL_key_update(s: *mut ffi::SSL, updatetype: c_int) -> c_int;
}

// SSL_ctrl commands behind macros in ssl.h.
const SSL_CTRL_GET_PEER_SIGNATURE_NID: c_int = 108;
const SSL_CTRL_GET_SIGNATURE_NID: c_int = 132;
const SSL_CTRL_GET_NEGOTIATED_GROUP: c_int = 134;

// NIDs from obj_mac.h.
const NID_RSA_ENCRYPTION: c_int = 6;
const NID_EC_PUBLIC_KEY: c_int = 408;
const NID_X9_62_PRIME256V1: c_int = 415;
const NID_SHA256: c_int = 672;
const NID_SHA384: c_int = 673;
const NID_SECP384R1: c_int = 715;
const NID_SECP521R1: c_int = 716;
const NID_RSASSA_PSS: c_int = 912;
const NID_X25519: c_int = 1034;
const NID_ED25519: c_int = 1087;
// OpenSSL 3.5+ names an ML-DSA signature by its key type alone (no hash).
const NID_ML_DSA_44: c_int = 1457;
const NID_ML_DSA_65: c_int = 1458;
const NID_ML_DSA_87: c_int = 1459;

/// The key-exchange group, as a TLS code point. OpenSSL 1.1.1 has no command for it (it
/// came with 3.0); there the peer's key share tells it.
pub fn group(ssl: *mut ffi::SSL) -> Option<u16> {
    ctrl_nid_value(ssl, SSL_CTRL_GET_NEGOTIATED_GROUP)
        .or_else(|| peer_key_share_nid(ssl))
        .and_then(group_code_of_nid)
}

/// The curve of the peer's ephemeral key (`SSL_get_peer_tmp_key`), as a NID.
fn peer_key_share_nid(ssl: *mut ffi::SSL) -> Option<c_int> {
    const SSL_CTRL_GET_PEER_TMP_KEY: c_int = 109;
    let mut key: *mut ffi::EVP_PKEY = std::ptr::null_mut();
    // SAFETY: the command writes one EVP_PKEY reference through parg, which we free.
    let r = unsafe {
        ffi::SSL_ctrl(
            ssl,
            SSL_CTRL_GET_PEER_TMP_KEY,
            0,
            &mut key as *mut *mut ffi::EVP_PKEY as *mut c_void,
        )
    };
    if r <= 0 || key.is_null() {
        return None;
    }
    // SAFETY: key is a valid EVP_PKEY we hold one reference to; an EC key's group is
    // borrowed from the EC_KEY, which we hold one reference to until the end.
    unsafe {
        let nid = match ffi::EVP_PKEY_id(key) {
            ffi::EVP_PKEY_EC => {
                let ec = ffi::EVP_PKEY_get1_EC_KEY(key);
                let curve = (!ec.is_null())
                    .then(|| ffi::EC_GROUP_get_curve_name(ffi::EC_KEY_get0_group(ec)));
                ffi::EC_KEY_free(ec);
                curve
            }
            id => Some(id),
        };
        ffi::EVP_PKEY_free(key);
        nid
    }
}

/// Not read on OpenSSL: it reports the peer's signature as NIDs (see `signature_scheme`), which
/// BoGo's exact code points outrun (`open_extras` refuses tests that ask).
pub fn peer_signature_scheme(_: *mut ffi::SSL) -> Option<u16> {
    None
}

/// OpenSSL has no Channel ID.
pub fn channel_id(_: *mut ffi::SSL) -> Option<Vec<u8>> {
    None
}

/// Not reported by OpenSSL.
pub fn hello_retry(_: *mut ffi::SSL) -> Option<bool> {
    None
}

/// Schedules a KeyUpdate that asks the peer to update too; false if OpenSSL refused.
pub fn key_update(ssl: *mut ffi::SSL) -> bool {
    const SSL_KEY_UPDATE_REQUESTED: c_int = 1;
    // SAFETY: valid SSL pointer; the call only schedules the message.
    unsafe { SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) == 1 }
}

/// OpenSSL's marker for a group without a NID (e.g. X25519MLKEM768 in 3.5+): the TLS
/// group code is in the low 16 bits.
const TLSEXT_NID_UNKNOWN: c_int = 0x0100_0000;

fn group_code_of_nid(nid: c_int) -> Option<u16> {
    if nid & TLSEXT_NID_UNKNOWN != 0 {
        return u16::try_from(nid & 0xffff).ok();
    }
    let g = match nid {
        NID_X25519 => Group::X25519,
        NID_X9_62_PRIME256V1 => Group::P256,
        NID_SECP384R1 => Group::P384,
        // Beyond the scenario model's groups, for BoGo's runner.
        NID_SECP521R1 => return Some(0x0019),
        _ => return None,
    };
    Some(codes::group_code(g))
}

/// OpenSSL reports a signature as (key type, hash) NIDs; this turns the pair into the
/// TLS SignatureScheme. RSA-PSS with an rsaEncryption key is the `rsae` scheme.
fn scheme_of_nids(sig_type: c_int, hash: c_int) -> Option<u16> {
    Some(match (sig_type, hash) {
        (NID_EC_PUBLIC_KEY, NID_SHA256) => 0x0403,
        (NID_EC_PUBLIC_KEY, NID_SHA384) => 0x0503,
        (NID_RSASSA_PSS, NID_SHA256) => 0x0804,
        (NID_RSASSA_PSS, NID_SHA384) => 0x0805,
        (NID_RSA_ENCRYPTION, NID_SHA256) => 0x0401,
        (NID_ED25519, _) => 0x0807,
        (NID_ML_DSA_44, _) => 0x0904,
        (NID_ML_DSA_65, _) => 0x0905,
        (NID_ML_DSA_87, _) => 0x0906,
        _ => return None,
    })
}

fn ctrl_nid(ssl: *mut ffi::SSL, cmd: c_int) -> Option<c_int> {
    let mut nid: c_int = 0;
    // SAFETY: these SSL_ctrl commands write one int through parg, or ignore it.
    let r = unsafe { ffi::SSL_ctrl(ssl, cmd, 0, &mut nid as *mut c_int as *mut c_void) };
    (r > 0).then_some(nid)
}

/// For SSL_ctrl commands that return their answer rather than write it.
fn ctrl_nid_value(ssl: *mut ffi::SSL, cmd: c_int) -> Option<c_int> {
    // SAFETY: this command takes no argument and returns a NID or 0.
    let r: c_long = unsafe { ffi::SSL_ctrl(ssl, cmd, 0, std::ptr::null_mut()) };
    (r > 0).then_some(r as c_int)
}

/// The signature scheme of the handshake: the server's, as the client verified it or as the
/// server made it.
pub fn signature_scheme(ssl: *mut ffi::SSL, side: Side) -> Option<u16> {
    let mut sig_type: c_int = 0;
    // SAFETY: valid SSL pointer, one int written.
    let (ok, hash) = unsafe {
        match side {
            Side::Client => (
                SSL_get_peer_signature_type_nid(ssl, &mut sig_type),
                ctrl_nid(ssl, SSL_CTRL_GET_PEER_SIGNATURE_NID),
            ),
            Side::Server => (
                SSL_get_signature_type_nid(ssl, &mut sig_type),
                ctrl_nid(ssl, SSL_CTRL_GET_SIGNATURE_NID),
            ),
        }
    };
    if ok != 1 {
        return None;
    }
    scheme_of_nids(sig_type, hash.unwrap_or(0))
}

/// The OCSP response the server stapled (empty when none came).
pub fn ocsp_response(ssl: *mut ffi::SSL) -> Vec<u8> {
    // SAFETY: a valid SSL pointer, borrowed for this call.
    let ssl = unsafe { openssl::ssl::SslRef::from_ptr(ssl) };
    ssl.ocsp_status().map(<[u8]>::to_vec).unwrap_or_default()
}

/// Sets the OCSP response a server staples (OpenSSL takes it only from its status
/// callback); false if the library refused it.
pub fn set_ocsp_response(ssl: *mut ffi::SSL, response: &[u8]) -> bool {
    // SAFETY: a valid SSL pointer, borrowed for this call.
    let ssl = unsafe { openssl::ssl::SslRef::from_ptr_mut(ssl) };
    ssl.set_ocsp_status(response).is_ok()
}

/// Whether the connection uses the extended master secret (RFC 7627): `SSL_get_extms_support`,
/// a macro over this `SSL_ctrl` command, for TLS 1.2. TLS 1.3's key schedule always covers the
/// handshake transcript (RFC 8446 7.1), which BoringSSL reports as yes and OpenSSL as no (the
/// extension is not sent); reported as BoringSSL does, so the two say the same thing.
pub fn extended_master_secret(ssl: *mut ffi::SSL) -> bool {
    const SSL_CTRL_GET_EXTMS_SUPPORT: c_int = 122;
    const TLS1_3_VERSION: c_int = 0x0304;
    // SAFETY: valid SSL pointer; both calls read the connection's state.
    unsafe {
        ffi::SSL_version(ssl) == TLS1_3_VERSION
            || ffi::SSL_ctrl(ssl, SSL_CTRL_GET_EXTMS_SUPPORT, 0, std::ptr::null_mut()) == 1
    }
}
