//! Next Protocol Negotiation (the pre-standard ALPN, TLS 1.2 only), which the whole family
//! still has: a server advertises a list and a client picks one protocol, as BoringSSL's
//! shim does it (its callbacks answer with the configured bytes, whatever was offered).

use super::*;
use std::os::raw::{c_int, c_uchar, c_uint, c_void};
use std::sync::OnceLock;

/// What the context's callbacks answer: the server's list (wire form; empty advertises
/// an empty list) and the client's choice.
#[derive(Default)]
struct Npn {
    advertised: Option<Vec<u8>>,
    selected: Option<Vec<u8>>,
}

fn index() -> Result<ContextIndex<Npn>> {
    static INDEX: OnceLock<ContextIndex<Npn>> = OnceLock::new();
    context_index(&INDEX)
}

pub fn install(b: &mut SslContextBuilder, extras: &OpenExtras) -> Result<()> {
    if extras.npn_advertised.is_none() && extras.npn_selected.is_none() {
        return Ok(());
    }
    let select = extras.npn_selected.is_some();
    b.set_ex_data(
        index()?,
        Npn {
            advertised: extras.npn_advertised.clone(),
            selected: extras.npn_selected.clone(),
        },
    );
    // SAFETY: a valid context; the callbacks read the context's data, which lives as long
    // as the context.
    unsafe {
        #[cfg(not(any(feature = "boringssl", feature = "aws-lc")))]
        {
            ffi::SSL_CTX_set_next_protos_advertised_cb(b.as_ptr(), advertise, ptr::null_mut());
            if select {
                ffi::SSL_CTX_set_next_proto_select_cb(b.as_ptr(), choose, ptr::null_mut());
            }
        }
        #[cfg(any(feature = "boringssl", feature = "aws-lc"))]
        {
            ffi::SSL_CTX_set_next_protos_advertised_cb(
                b.as_ptr(),
                Some(advertise),
                ptr::null_mut(),
            );
            if select {
                ffi::SSL_CTX_set_next_proto_select_cb(b.as_ptr(), Some(choose), ptr::null_mut());
            }
        }
    }
    Ok(())
}

use std::ptr;

/// The context's NPN answers, from inside a callback.
///
/// SAFETY: `ssl` is the valid connection a callback was called with.
unsafe fn of<'a>(ssl: *mut ffi::SSL) -> Option<&'a Npn> {
    let ssl = openssl::ssl::SslRef::from_ptr(ssl);
    let ctx: &'a openssl::ssl::SslContextRef = &*(ssl.ssl_context() as *const _);
    ctx.ex_data(index().ok()?)
}

extern "C" fn advertise(
    ssl: *mut ffi::SSL,
    out: *mut *const c_uchar,
    out_len: *mut c_uint,
    _: *mut c_void,
) -> c_int {
    const NOACK: c_int = 3;
    // SAFETY: called by the library with its connection and out-pointers.
    unsafe {
        match of(ssl).and_then(|n| n.advertised.as_ref()) {
            Some(list) => {
                *out = list.as_ptr();
                *out_len = list.len() as c_uint;
                0
            }
            None => NOACK,
        }
    }
}

extern "C" fn choose(
    ssl: *mut ffi::SSL,
    out: *mut *mut c_uchar,
    out_len: *mut c_uchar,
    _: *const c_uchar,
    _: c_uint,
    _: *mut c_void,
) -> c_int {
    // SAFETY: as above; the library only reads what `out` points at.
    unsafe {
        match of(ssl).and_then(|n| n.selected.as_ref()) {
            Some(p) if p.len() <= 255 => {
                *out = p.as_ptr() as *mut c_uchar;
                *out_len = p.len() as c_uchar;
                0
            }
            _ => 2, // SSL_TLSEXT_ERR_ALERT_FATAL
        }
    }
}

/// The protocol NPN agreed on (empty: none).
pub fn negotiated(ssl: *mut ffi::SSL) -> Vec<u8> {
    let mut data = ptr::null();
    let mut len: c_uint = 0;
    // SAFETY: a valid connection; the protocol is owned by it and copied here.
    unsafe {
        ffi::SSL_get0_next_proto_negotiated(ssl, &mut data, &mut len);
        match data.is_null() {
            true => Vec::new(),
            false => std::slice::from_raw_parts(data, len as usize).to_vec(),
        }
    }
}
