//! TLS 1.2 pre-shared keys through the family's PSK callbacks, as BoringSSL's shim sets
//! them: a client requires the server's hint to be its identity (or no hint when it has
//! none), and a server requires the client's identity to be its own.

use super::*;
use std::ffi::CString;

#[cfg(any(feature = "boringssl", feature = "aws-lc"))]
use ffi::SSL_CTX_use_psk_identity_hint;
// openssl-sys does not bind it; OpenSSL has it since 1.0.0.
#[cfg(not(any(feature = "boringssl", feature = "aws-lc")))]
extern "C" {
    fn SSL_CTX_use_psk_identity_hint(
        ctx: *mut ffi::SSL_CTX,
        hint: *const std::os::raw::c_char,
    ) -> std::os::raw::c_int;
}

pub fn install(b: &mut SslContextBuilder, extras: &OpenExtras) -> Result<()> {
    let Some(key) = extras.psk.clone() else {
        return Ok(());
    };
    let identity = extras.psk_identity.clone();
    let (client_key, client_identity) = (key.clone(), identity.clone());
    b.set_psk_client_callback(move |_, hint, out_identity, out_key| {
        let hint_ok = match client_identity.is_empty() {
            true => hint.is_none(),
            false => hint == Some(client_identity.as_bytes()),
        };
        // Room for the identity's terminating NUL.
        if !hint_ok
            || client_identity.len() >= out_identity.len()
            || client_key.len() > out_key.len()
        {
            return Ok(0);
        }
        out_identity[..client_identity.len()].copy_from_slice(client_identity.as_bytes());
        out_identity[client_identity.len()] = 0;
        out_key[..client_key.len()].copy_from_slice(&client_key);
        Ok(client_key.len())
    });
    let server_identity = identity.clone();
    b.set_psk_server_callback(move |_, got, out_key| {
        if got.unwrap_or_default() != server_identity.as_bytes() || key.len() > out_key.len() {
            return Ok(0);
        }
        out_key[..key.len()].copy_from_slice(&key);
        Ok(key.len())
    });
    if !identity.is_empty() {
        let hint = CString::new(identity)?;
        // SAFETY: a valid context; the library copies the hint.
        if unsafe { SSL_CTX_use_psk_identity_hint(b.as_ptr(), hint.as_ptr()) } != 1 {
            return Err(describe_stack("setting the PSK identity hint"));
        }
    }
    Ok(())
}
