//! The extras beyond the cipher list and the verification callback, on the libraries that
//! take them (`open_extras` refuses them elsewhere). The compliance policy goes last: BoringSSL
//! defines its effect only when nothing configures the context after it.

use super::*;

/// `SSL_CTX_set_signing_algorithm_prefs` or `SSL_CTX_set_verify_algorithm_prefs`.
#[cfg(any(feature = "boringssl", feature = "aws-lc"))]
type SetPrefs = unsafe extern "C" fn(*mut ffi::SSL_CTX, *const u16, usize) -> std::os::raw::c_int;

/// A list the library refuses names a scheme it does not implement (AWS-LC has no ML-DSA
/// in TLS, nor BoringSSL's legacy RSA code point): the test cannot be configured on this
/// library, which BoGo counts as unimplemented, not failed.
#[cfg(any(feature = "boringssl", feature = "aws-lc"))]
fn set_prefs(b: &mut SslContextBuilder, prefs: &[u16], set: SetPrefs, what: &str) -> Result<()> {
    // SAFETY: a valid context; the list is read during the call only.
    if prefs.is_empty() || unsafe { set(b.as_ptr(), prefs.as_ptr(), prefs.len()) } == 1 {
        return Ok(());
    }
    Err(Unimplemented(format!(
        "the library refuses the {what} preferences {prefs:04x?}: {}",
        openssl::error::ErrorStack::get()
    ))
    .into())
}

#[cfg(any(feature = "boringssl", feature = "aws-lc"))]
pub fn apply(b: &mut SslContextBuilder, extras: &OpenExtras) -> Result<()> {
    set_prefs(
        b,
        &extras.signing_prefs,
        ffi::SSL_CTX_set_signing_algorithm_prefs,
        "signing",
    )?;
    set_prefs(
        b,
        &extras.verify_prefs,
        ffi::SSL_CTX_set_verify_algorithm_prefs,
        "verification",
    )?;
    if extras.reverify_on_resume {
        // SAFETY: a valid context.
        unsafe { ffi::SSL_CTX_set_reverify_on_resume(b.as_ptr(), 1) };
    }
    if extras.channel_id_enabled {
        // SAFETY: a valid context.
        unsafe { ffi::SSL_CTX_set_tls_channel_id_enabled(b.as_ptr(), 1) };
    }
    if let Some(pem) = &extras.channel_id_key_pem {
        let key = PKey::private_key_from_pem(pem.as_bytes())?;
        // SAFETY: a valid context and key; the context takes its own reference.
        if unsafe { ffi::SSL_CTX_set1_tls_channel_id(b.as_ptr(), key.as_ptr()) } != 1 {
            return Err(describe_stack("setting the Channel ID key"));
        }
    }
    #[cfg(feature = "boringssl")]
    super::credentials::apply(b, extras)?;
    #[cfg(feature = "boringssl")]
    if let Some(policy) = extras.compliance {
        use ffi::ssl_compliance_policy_t as P;
        use tlsmatrix_harness::endpoint::CompliancePolicy as C;
        let named = match policy {
            C::Fips202205 => P::ssl_compliance_policy_fips_202205,
            C::Fips202609 => P::ssl_compliance_policy_fips_202609,
            C::Wpa3_192_202304 => P::ssl_compliance_policy_wpa3_192_202304,
            C::Cnsa202407 => P::ssl_compliance_policy_cnsa_202407,
            C::Cnsa1_202603 => P::ssl_compliance_policy_cnsa1_202603,
            C::Cnsa2_202603 => P::ssl_compliance_policy_cnsa2_202603,
        };
        // SAFETY: a valid context and one of the enum's values.
        if unsafe { ffi::SSL_CTX_set_compliance_policy(b.as_ptr(), named) } != 1 {
            return Err(describe_stack("setting the compliance policy"));
        }
    }
    Ok(())
}

#[cfg(not(any(feature = "boringssl", feature = "aws-lc")))]
pub fn apply(_: &mut SslContextBuilder, _: &OpenExtras) -> Result<()> {
    Ok(())
}
