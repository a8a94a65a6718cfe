//! A client certificate given through the oldest callback the family has
//! (`SSL_CTX_set_client_cert_cb`), which hands over a leaf and its key (no chain) when the
//! server asks, or nothing.

use super::*;
use std::os::raw::c_int;
use std::sync::OnceLock;

type Identity = Option<(X509, PKey<openssl::pkey::Private>)>;

/// Where the context keeps the identity its callback hands over.
fn index() -> Result<ContextIndex<Identity>> {
    static INDEX: OnceLock<ContextIndex<Identity>> = OnceLock::new();
    context_index(&INDEX)
}

pub fn install(b: &mut SslContextBuilder, cfg: &EndpointConfig) -> Result<()> {
    let identity = match cfg.client_cert {
        true => {
            let leaf = X509::stack_from_pem(cfg.certs.client_chain_pem.as_bytes())?
                .into_iter()
                .next()
                .context("the client's certificate chain is empty")?;
            let key = PKey::private_key_from_pem(cfg.certs.client_key_pem.as_bytes())?;
            Some((leaf, key))
        }
        false => None,
    };
    b.set_ex_data(index()?, identity);
    // SAFETY: a valid context; the callback is a plain function that reads the context's
    // data and hands the library references of its own.
    unsafe { SSL_CTX_set_client_cert_cb(b.as_ptr(), Some(hand_over)) };
    Ok(())
}

#[cfg(not(any(feature = "boringssl", feature = "aws-lc")))]
type ClientCertCallback =
    unsafe extern "C" fn(*mut ffi::SSL, *mut *mut ffi::X509, *mut *mut ffi::EVP_PKEY) -> c_int;

#[cfg(any(feature = "boringssl", feature = "aws-lc"))]
use ffi::SSL_CTX_set_client_cert_cb;
// openssl-sys does not bind it; every OpenSSL release since 0.9.7 has it.
#[cfg(not(any(feature = "boringssl", feature = "aws-lc")))]
extern "C" {
    fn SSL_CTX_set_client_cert_cb(ctx: *mut ffi::SSL_CTX, cb: Option<ClientCertCallback>);
}

/// 1 with a certificate and key, 0 for none (as BoringSSL's shim answers).
unsafe extern "C" fn hand_over(
    ssl: *mut ffi::SSL,
    out_x509: *mut *mut ffi::X509,
    out_pkey: *mut *mut ffi::EVP_PKEY,
) -> c_int {
    let ssl = openssl::ssl::SslRef::from_ptr(ssl);
    let Ok(index) = index() else { return -1 };
    match ssl.ssl_context().ex_data(index) {
        Some(Some((leaf, key))) => {
            // The library takes ownership: give it references of its own.
            let (leaf, key) = (leaf.clone(), key.clone());
            *out_x509 = leaf.as_ptr();
            *out_pkey = key.as_ptr();
            std::mem::forget((leaf, key));
            1
        }
        _ => 0,
    }
}
