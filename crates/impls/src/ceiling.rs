//! Each library's AEAD through its own crypto API, as its TLS record layer calls it, for
//! the bulk ceiling (`tlsmatrix_harness::aead`): ring's and aws-lc-rs's `LessSafeKey`, OpenSSL's
//! EVP_CIPHER with the key set once and a fresh IV per record, BoringSSL's EVP_AEAD.

#[allow(unused_imports)]
use anyhow::{anyhow, ensure, Result};
#[allow(unused_imports)]
use tlsmatrix_harness::aead::{self, LibraryAead, RecordAead};
#[allow(unused_imports)]
use tlsmatrix_model::scenario::Aead;

/// `LessSafeKey` of ring or aws-lc-rs: aws-lc-rs copies ring's API, so one body serves both.
macro_rules! less_safe_key {
    ($module:ident, $krate:ident, $api:expr) => {
        pub mod $module {
            use super::*;
            use $krate::aead::{
                Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, AES_256_GCM, CHACHA20_POLY1305,
            };

            struct Key(LessSafeKey);

            impl RecordAead for Key {
                fn seal(&mut self, seq: u64, aad: &[u8; 5], buf: &mut Vec<u8>) -> Result<()> {
                    let nonce = Nonce::assume_unique_for_key(aead::nonce(&aead::IV, seq));
                    self.0
                        .seal_in_place_append_tag(nonce, Aad::from(*aad), buf)
                        .map_err(|_| anyhow!("sealing failed"))
                }
                fn open(&mut self, seq: u64, aad: &[u8; 5], buf: &mut Vec<u8>) -> Result<()> {
                    let nonce = Nonce::assume_unique_for_key(aead::nonce(&aead::IV, seq));
                    let n = self
                        .0
                        .open_in_place(nonce, Aad::from(*aad), buf)
                        .map_err(|_| anyhow!("opening failed: the tag did not verify"))?
                        .len();
                    buf.truncate(n);
                    Ok(())
                }
            }

            pub fn record_aead(which: Aead) -> Result<LibraryAead, String> {
                let alg = match which {
                    Aead::Aes128Gcm => &AES_128_GCM,
                    Aead::Aes256Gcm => &AES_256_GCM,
                    Aead::Chacha20Poly1305 => &CHACHA20_POLY1305,
                };
                let key = UnboundKey::new(alg, &aead::KEY[..aead::key_len(which)])
                    .map_err(|_| format!("{} refused a {which} key", $api))?;
                Ok(LibraryAead {
                    api: format!("{} aead::LessSafeKey", $api),
                    aead: Box::new(Key(LessSafeKey::new(key))),
                })
            }
        }
    };
}

#[cfg(any(feature = "rustls-aws-lc", feature = "s2n-tls"))]
less_safe_key!(aws_lc, aws_lc_rs, "aws-lc-rs");
#[cfg(feature = "rustls-ring")]
less_safe_key!(ring_aead, ring, "ring");

/// aws-lc's own allocation call (rustls-aws-lc's and s2n-tls's libcrypto).
#[cfg(any(feature = "rustls-aws-lc", feature = "s2n-tls"))]
pub fn aws_lc_allocation() -> tlsmatrix_harness::endpoint::CAllocation {
    unsafe fn alloc(n: usize) -> *mut std::ffi::c_void {
        aws_lc_sys::OPENSSL_malloc(n)
    }
    unsafe fn free(p: *mut std::ffi::c_void) {
        aws_lc_sys::OPENSSL_free(p)
    }
    tlsmatrix_harness::endpoint::CAllocation {
        call: "aws-lc OPENSSL_malloc",
        alloc,
        free,
    }
}

/// OpenSSL's EVP_CIPHER: the key schedule once, then per record a new IV, the header as
/// AAD, the data in place, the tag read or set: what its record layer does per record.
#[cfg(all(feature = "openssl", not(feature = "boringssl")))]
pub mod evp {
    use super::*;
    use openssl_sys as ffi;
    use std::os::raw::c_int;

    const EVP_CTRL_AEAD_GET_TAG: c_int = 0x10;
    const EVP_CTRL_AEAD_SET_TAG: c_int = 0x11;

    struct Ctx {
        enc: *mut ffi::EVP_CIPHER_CTX,
        dec: *mut ffi::EVP_CIPHER_CTX,
    }

    // SAFETY: each context is used by one thread at a time (the sampler owns it).
    unsafe impl Send for Ctx {}

    impl Drop for Ctx {
        fn drop(&mut self) {
            // SAFETY: both were made by EVP_CIPHER_CTX_new and are not used after.
            unsafe {
                ffi::EVP_CIPHER_CTX_free(self.enc);
                ffi::EVP_CIPHER_CTX_free(self.dec);
            }
        }
    }

    fn ok(rc: c_int, what: &str) -> Result<()> {
        ensure!(rc == 1, "{what} failed");
        Ok(())
    }

    /// Runs the cipher over `data` in place (GCM and ChaCha20-Poly1305 are stream modes,
    /// so the output is as long as the input); `enc`: 1 to seal, 0 to open.
    unsafe fn crypt(
        ctx: *mut ffi::EVP_CIPHER_CTX,
        seq: u64,
        aad: &[u8; 5],
        data: &mut [u8],
        enc: c_int,
    ) -> Result<()> {
        let iv = aead::nonce(&aead::IV, seq);
        let mut out: c_int = 0;
        let p = data.as_mut_ptr();
        let (no_cipher, no_key) = (std::ptr::null(), std::ptr::null());
        ok(
            ffi::EVP_CipherInit_ex(
                ctx,
                no_cipher,
                std::ptr::null_mut(),
                no_key,
                iv.as_ptr(),
                enc,
            ),
            "EVP_CipherInit_ex",
        )?;
        ok(
            ffi::EVP_CipherUpdate(ctx, std::ptr::null_mut(), &mut out, aad.as_ptr(), 5),
            "EVP_CipherUpdate (AAD)",
        )?;
        ok(
            ffi::EVP_CipherUpdate(ctx, p, &mut out, p, data.len() as c_int),
            "EVP_CipherUpdate",
        )?;
        ok(
            ffi::EVP_CipherFinal(ctx, p.add(out as usize), &mut out),
            "EVP_CipherFinal (when opening: the tag did not verify)",
        )
    }

    impl RecordAead for Ctx {
        fn seal(&mut self, seq: u64, aad: &[u8; 5], buf: &mut Vec<u8>) -> Result<()> {
            let n = buf.len();
            // SAFETY: enc is a live context keyed for this cipher; buf holds n bytes and
            // then room for the tag.
            unsafe {
                crypt(self.enc, seq, aad, &mut buf[..], 1)?;
                buf.resize(n + 16, 0);
                ok(
                    ffi::EVP_CIPHER_CTX_ctrl(
                        self.enc,
                        EVP_CTRL_AEAD_GET_TAG,
                        16,
                        buf[n..].as_mut_ptr().cast(),
                    ),
                    "reading the tag",
                )
            }
        }

        fn open(&mut self, seq: u64, aad: &[u8; 5], buf: &mut Vec<u8>) -> Result<()> {
            let n = buf.len().checked_sub(16).ok_or_else(|| anyhow!("no tag"))?;
            // SAFETY: dec is a live context; the tag is 16 bytes at buf[n..].
            unsafe {
                ok(
                    ffi::EVP_CIPHER_CTX_ctrl(
                        self.dec,
                        EVP_CTRL_AEAD_SET_TAG,
                        16,
                        buf[n..].as_mut_ptr().cast(),
                    ),
                    "setting the tag",
                )?;
                crypt(self.dec, seq, aad, &mut buf[..n], 0)?;
            }
            buf.truncate(n);
            Ok(())
        }
    }

    pub fn record_aead(which: Aead) -> Result<LibraryAead, String> {
        // SAFETY: the EVP_* constructors return static ciphers; contexts are checked.
        unsafe {
            let cipher = match which {
                Aead::Aes128Gcm => ffi::EVP_aes_128_gcm(),
                Aead::Aes256Gcm => ffi::EVP_aes_256_gcm(),
                Aead::Chacha20Poly1305 => ffi::EVP_chacha20_poly1305(),
            };
            let ctx = Ctx {
                enc: ffi::EVP_CIPHER_CTX_new(),
                dec: ffi::EVP_CIPHER_CTX_new(),
            };
            let keyed = !ctx.enc.is_null()
                && !ctx.dec.is_null()
                && ffi::EVP_EncryptInit_ex(
                    ctx.enc,
                    cipher,
                    std::ptr::null_mut(),
                    aead::KEY.as_ptr(),
                    std::ptr::null(),
                ) == 1
                && ffi::EVP_DecryptInit_ex(
                    ctx.dec,
                    cipher,
                    std::ptr::null_mut(),
                    aead::KEY.as_ptr(),
                    std::ptr::null(),
                ) == 1;
            if !keyed {
                return Err(format!("OpenSSL cannot key {which}"));
            }
            Ok(LibraryAead {
                api: "OpenSSL EVP_CIPHER (EVP_CipherInit_ex per record)".into(),
                aead: Box::new(ctx),
            })
        }
    }
}

/// BoringSSL's EVP_AEAD, which its own TLS record layer uses.
#[cfg(feature = "boringssl")]
pub mod evp {
    use super::*;
    use boring_sys as ffi;

    struct Ctx(*mut ffi::EVP_AEAD_CTX);

    // SAFETY: the context is used by one thread at a time (the sampler owns it).
    unsafe impl Send for Ctx {}

    impl Drop for Ctx {
        fn drop(&mut self) {
            // SAFETY: made by EVP_AEAD_CTX_new and not used after.
            unsafe { ffi::EVP_AEAD_CTX_free(self.0) }
        }
    }

    impl RecordAead for Ctx {
        fn seal(&mut self, seq: u64, aad: &[u8; 5], buf: &mut Vec<u8>) -> Result<()> {
            let nonce = aead::nonce(&aead::IV, seq);
            let n = buf.len();
            buf.resize(n + 16, 0);
            let mut out_len = 0usize;
            // SAFETY: in-place sealing is allowed (out == in); buf has room for the tag.
            let rc = unsafe {
                ffi::EVP_AEAD_CTX_seal(
                    self.0,
                    buf.as_mut_ptr(),
                    &mut out_len,
                    buf.len(),
                    nonce.as_ptr(),
                    12,
                    buf.as_ptr(),
                    n,
                    aad.as_ptr(),
                    5,
                )
            };
            ensure!(rc == 1 && out_len == n + 16, "EVP_AEAD_CTX_seal failed");
            Ok(())
        }

        fn open(&mut self, seq: u64, aad: &[u8; 5], buf: &mut Vec<u8>) -> Result<()> {
            let nonce = aead::nonce(&aead::IV, seq);
            let mut out_len = 0usize;
            // SAFETY: in-place opening is allowed (out == in).
            let rc = unsafe {
                ffi::EVP_AEAD_CTX_open(
                    self.0,
                    buf.as_mut_ptr(),
                    &mut out_len,
                    buf.len(),
                    nonce.as_ptr(),
                    12,
                    buf.as_ptr(),
                    buf.len(),
                    aad.as_ptr(),
                    5,
                )
            };
            ensure!(rc == 1, "EVP_AEAD_CTX_open failed: the tag did not verify");
            buf.truncate(out_len);
            Ok(())
        }
    }

    pub fn record_aead(which: Aead) -> Result<LibraryAead, String> {
        // SAFETY: static AEAD descriptions; the context is checked.
        unsafe {
            let alg = match which {
                Aead::Aes128Gcm => ffi::EVP_aead_aes_128_gcm(),
                Aead::Aes256Gcm => ffi::EVP_aead_aes_256_gcm(),
                Aead::Chacha20Poly1305 => ffi::EVP_aead_chacha20_poly1305(),
            };
            let ctx = ffi::EVP_AEAD_CTX_new(alg, aead::KEY.as_ptr(), aead::key_len(which), 16);
            if ctx.is_null() {
                return Err(format!("BoringSSL cannot key {which}"));
            }
            Ok(LibraryAead {
                api: "BoringSSL EVP_AEAD_CTX".into(),
                aead: Box::new(Ctx(ctx)),
            })
        }
    }
}

/// OpenSSL's or BoringSSL's own allocation call.
#[cfg(any(feature = "openssl", feature = "boringssl"))]
pub fn openssl_allocation() -> tlsmatrix_harness::endpoint::CAllocation {
    #[cfg(feature = "boringssl")]
    use boring_sys as ffi;
    #[cfg(not(feature = "boringssl"))]
    use openssl_sys as ffi;
    unsafe fn alloc(n: usize) -> *mut std::ffi::c_void {
        ffi::OPENSSL_malloc(n as _)
    }
    unsafe fn free(p: *mut std::ffi::c_void) {
        ffi::OPENSSL_free(p)
    }
    tlsmatrix_harness::endpoint::CAllocation {
        call: "OPENSSL_malloc",
        alloc,
        free,
    }
}
