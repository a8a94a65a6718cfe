//! What the crypto floors of OpenSSL's libcrypto and of its forks (AWS-LC through the
//! `openssl` crate, BoringSSL through `boring`, the same API under another name) share: the
//! NIST curves' ECDH through EC_KEY and ECDH_compute_key, the library's direct path, and the
//! key schedule's HMACs through one HMAC_CTX re-keyed per HMAC.

use std::any::Any;
use std::ffi::{c_int, c_void};

#[cfg(feature = "boringssl")]
use boring as openssl;
#[cfg(feature = "boringssl")]
use boring_sys as ffi;
#[cfg(not(feature = "boringssl"))]
use foreign_types::ForeignType;
#[cfg(feature = "boringssl")]
use foreign_types_boring::ForeignType;
use openssl::bn::BigNumContext;
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::nid::Nid;
use openssl::pkey::Private;
#[cfg(not(feature = "boringssl"))]
use openssl_sys as ffi;
use tlsmatrix_harness::floor::{self, own_key, prepared, timed, KeyExchange, PreparedOp};
use tlsmatrix_model::floor::{Hash, KexPart};

pub fn stack(what: &str) -> impl Fn(openssl::error::ErrorStack) -> String + '_ {
    move |e| format!("{what}: {e}")
}

extern "C" {
    /// In every libcrypto here (OpenSSL 1.1.1 to 4.0, AWS-LC, BoringSSL); openssl-sys binds
    /// no ECDH. The KDF is a function pointer, always null here.
    fn ECDH_compute_key(
        out: *mut c_void,
        outlen: usize,
        pub_key: *const ffi::EC_POINT,
        ecdh: *const ffi::EC_KEY,
        kdf: *const c_void,
    ) -> c_int;
}

/// A NIST curve's ECDH, with the group made once (libssl's EVP route costs more, never less).
pub struct NistCurve(EcGroup);

impl NistCurve {
    /// The curve of `part`, or `None` for the other parts.
    pub fn of(part: KexPart) -> Option<Result<NistCurve, String>> {
        let nid = match part {
            KexPart::P256 => Nid::X9_62_PRIME256V1,
            KexPart::P384 => Nid::SECP384R1,
            _ => return None,
        };
        Some(
            EcGroup::from_curve_name(nid)
                .map(NistCurve)
                .map_err(stack("the curve")),
        )
    }
}

impl KeyExchange for NistCurve {
    fn generate(&self) -> anyhow::Result<(Box<dyn Any>, Vec<u8>)> {
        let ec = EcKey::generate(&self.0)?;
        let mut ctx = BigNumContext::new()?;
        let share =
            ec.public_key()
                .to_bytes(&self.0, PointConversionForm::UNCOMPRESSED, &mut ctx)?;
        Ok((Box::new(ec), share))
    }

    /// The secret with the peer's point as sent, the point read back first.
    fn finish(&self, own: &dyn Any, reply: &[u8]) -> anyhow::Result<Vec<u8>> {
        let own: &EcKey<Private> = own_key(own)?;
        let mut ctx = BigNumContext::new()?;
        let point = EcPoint::from_bytes(&self.0, reply, &mut ctx)?;
        let mut out = vec![0u8; 66];
        // SAFETY: the point and key are live and of one group; `out` holds any secret of the
        // curves here (P-384: 48 bytes).
        let n = unsafe {
            ECDH_compute_key(
                out.as_mut_ptr().cast(),
                out.len(),
                point.as_ptr(),
                own.as_ptr(),
                std::ptr::null(),
            )
        };
        anyhow::ensure!(n > 0, "ECDH_compute_key failed");
        out.truncate(n as usize);
        Ok(out)
    }
}

/// HMAC_CTX, made once and re-keyed per HMAC (HMAC_Init_ex with a key).
pub struct Hmac {
    ctx: *mut ffi::HMAC_CTX,
    md: *const ffi::EVP_MD,
    key: [u8; 48],
    len: usize,
}

impl Drop for Hmac {
    fn drop(&mut self) {
        // SAFETY: made by HMAC_CTX_new, used by this value only.
        unsafe { ffi::HMAC_CTX_free(self.ctx) }
    }
}

impl Hmac {
    fn new(hash: Hash) -> Result<Hmac, String> {
        // SAFETY: plain constructors; a null context is checked.
        let (ctx, md) = unsafe {
            (
                ffi::HMAC_CTX_new(),
                match hash {
                    Hash::Sha256 => ffi::EVP_sha256(),
                    Hash::Sha384 => ffi::EVP_sha384(),
                },
            )
        };
        if ctx.is_null() {
            return Err("HMAC_CTX_new failed".into());
        }
        let len = match hash {
            Hash::Sha256 => 32,
            Hash::Sha384 => 48,
        };
        Ok(Hmac {
            ctx,
            md,
            key: floor::HMAC_KEY,
            len,
        })
    }

    /// One HMAC of `hash` over a short input, ready to run.
    pub fn op(hash: Hash) -> Result<Box<dyn PreparedOp>, String> {
        let mut h = Hmac::new(hash)?;
        Ok(prepared(move || timed(|| h.mac(&floor::HMAC_INPUT))))
    }

    fn mac(&mut self, msg: &[u8]) -> anyhow::Result<[u8; 64]> {
        let mut out = [0u8; 64];
        let mut n = 0;
        // SAFETY: the context and digest are live; `out` holds any digest (64 bytes).
        let ok = unsafe {
            ffi::HMAC_Init_ex(
                self.ctx,
                self.key.as_ptr().cast(),
                self.len as _,
                self.md,
                std::ptr::null_mut(),
            ) == 1
                && ffi::HMAC_Update(self.ctx, msg.as_ptr(), msg.len()) == 1
                && ffi::HMAC_Final(self.ctx, out.as_mut_ptr(), &mut n) == 1
        };
        anyhow::ensure!(ok && n as usize == self.len, "HMAC failed");
        Ok(out)
    }
}
