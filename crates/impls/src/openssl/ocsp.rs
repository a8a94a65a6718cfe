//! OCSP stapling as BoringSSL's shim asks for it, through the status callback every libssl
//! of the family has (`SSL_CTX_set_tlsext_status_cb`).

use super::*;
use openssl::error::ErrorStack;

/// Whether a server's response is set from its callback: when the test asks so, and
/// always on OpenSSL, whose server staples only what its status callback sets.
pub fn set_in_callback(extras: &OpenExtras) -> bool {
    let asked = extras
        .ocsp_callback
        .is_some_and(|c| c.used && c.sets_response);
    asked
        || (!cfg!(any(feature = "boringssl", feature = "aws-lc")) && extras.ocsp_response.is_some())
}

/// The application's status callback, where the test installs one or OpenSSL's server
/// needs one to staple at all. A client's accepts the response unless it fails; a
/// server's staples unless it declines, and a failing one ends the handshake.
pub fn install_callback(b: &mut SslContextBuilder, side: Side, extras: &OpenExtras) -> Result<()> {
    let callback = extras.ocsp_callback.filter(|c| c.used);
    let response = extras
        .ocsp_response
        .clone()
        .filter(|_| set_in_callback(extras));
    match (side, callback) {
        (Side::Client, None) => Ok(()),
        (Side::Client, Some(c)) => Ok(b.set_status_callback(move |_| Ok(!c.fails))?),
        (Side::Server, None) if response.is_none() => Ok(()),
        (Side::Server, c) => Ok(b.set_status_callback(move |ssl| {
            if let Some(r) = &response {
                if !probe::set_ocsp_response(ssl.as_ptr(), r) {
                    return Err(ErrorStack::get());
                }
            }
            match c {
                Some(c) if c.fails => Err(ErrorStack::get()),
                Some(c) => Ok(!c.declines),
                None => Ok(true),
            }
        })?),
    }
}
