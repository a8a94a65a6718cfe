//! The crypto floor through OpenSSL's libcrypto (any linked release, and AWS-LC through the
//! same `openssl` crate): each group's key exchange as the library's libssl calls it, the key
//! operation of each signature through an EVP_PKEY_CTX set up once (as `openssl speed` times
//! it), and HMAC_CTX for the key schedule's HMACs (`floor_libcrypto`).

use std::any::Any;

use openssl::derive::Deriver;
use openssl::hash::{Hasher, MessageDigest};
use openssl::md::{Md, MdRef};
use openssl::pkey::{Id, PKey, Private, Public};
use openssl::pkey_ctx::PkeyCtx;
use openssl::rsa::Padding;
use openssl::sign::{RsaPssSaltlen, Signer, Verifier};
use tlsmatrix_harness::certs::CertSet;
use tlsmatrix_harness::floor::{
    self, own_key, prepared, timed, HandshakeCrypto, KeyExchange, PreparedOp,
};
use tlsmatrix_model::floor::{CryptoOp, KexPart};
use tlsmatrix_model::scenario::{Group, SigAlg};

use crate::floor_libcrypto::{stack, Hmac, NistCurve};

pub struct EvpCrypto {
    pub api: String,
}

/// `g`'s key exchange as this libcrypto's libssl performs it.
fn key_exchange(g: Group) -> Result<Box<dyn KeyExchange>, String> {
    #[cfg(libcrypto_kem_by_name)]
    if g.is_post_quantum() {
        return kem_by_name::KemByName::of(g).map(|k| Box::new(k) as Box<dyn KeyExchange>);
    }
    floor::from_halves(g, half)
}

/// One half of a group: X25519 through EVP_PKEY, as libssl uses it; the NIST curves'
/// direct path; AWS-LC's ML-KEM through its EVP KEM calls, which its libssl pairs with a
/// curve for each hybrid (ssl/ssl_key_share.cc).
fn half(part: KexPart) -> Result<Box<dyn KeyExchange>, String> {
    if let Some(curve) = NistCurve::of(part) {
        return curve.map(|c| Box::new(c) as Box<dyn KeyExchange>);
    }
    match part {
        KexPart::X25519 => Ok(Box::new(X25519Evp)),
        #[cfg(feature = "aws-lc")]
        p => aws_lc_kem::Kem::of(p).map(|k| Box::new(k) as Box<dyn KeyExchange>),
        #[cfg(not(feature = "aws-lc"))]
        _ => Err(format!(
            "{} has no ML-KEM (OpenSSL 3.5 brought it)",
            openssl::version::version()
        )),
    }
}

/// X25519 through EVP_PKEY: a generated key's raw public key is the share; the peer's is
/// read back from raw bytes for each secret, as a handshake must.
struct X25519Evp;

impl KeyExchange for X25519Evp {
    fn generate(&self) -> anyhow::Result<(Box<dyn Any>, Vec<u8>)> {
        let k = PKey::generate_x25519()?;
        let share = k.raw_public_key()?;
        Ok((Box::new(k), share))
    }

    fn finish(&self, own: &dyn Any, reply: &[u8]) -> anyhow::Result<Vec<u8>> {
        let own: &PKey<Private> = own_key(own)?;
        let peer = PKey::public_key_from_raw_bytes(reply, Id::X25519)?;
        let mut d = Deriver::new(own)?;
        d.set_peer(&peer)?;
        Ok(d.derive_to_vec()?)
    }
}

/// The KEM calls OpenSSL 3.x and AWS-LC name alike, each asked for its sizes first and then
/// run, as their libssl calls them.
#[cfg(any(libcrypto_kem_by_name, feature = "aws-lc"))]
mod kem_calls {
    use std::ffi::c_int;
    use std::ptr::null_mut;

    use openssl::error::ErrorStack;
    use openssl_sys as ffi;

    /// `r` as a result: EVP calls return 1 on success, 0 or less on failure.
    pub fn check(r: c_int, call: &str) -> anyhow::Result<()> {
        anyhow::ensure!(r > 0, "{call} fails: {}", ErrorStack::get());
        Ok(())
    }

    /// A secret encapsulated to the public key `ctx` holds, and its ciphertext.
    ///
    /// # Safety
    /// `ctx` is a live context set up for encapsulation.
    pub unsafe fn encapsulate(ctx: *mut ffi::EVP_PKEY_CTX) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        let (mut ct_len, mut ss_len) = (0, 0);
        check(
            ffi::EVP_PKEY_encapsulate(ctx, null_mut(), &mut ct_len, null_mut(), &mut ss_len),
            "EVP_PKEY_encapsulate",
        )?;
        let (mut ct, mut ss) = (vec![0u8; ct_len], vec![0u8; ss_len]);
        check(
            ffi::EVP_PKEY_encapsulate(
                ctx,
                ct.as_mut_ptr(),
                &mut ct_len,
                ss.as_mut_ptr(),
                &mut ss_len,
            ),
            "EVP_PKEY_encapsulate",
        )?;
        ct.truncate(ct_len);
        ss.truncate(ss_len);
        Ok((ss, ct))
    }

    /// The secret in `ct`, by the private key `ctx` holds.
    ///
    /// # Safety
    /// `ctx` is a live context set up for decapsulation.
    pub unsafe fn decapsulate(ctx: *mut ffi::EVP_PKEY_CTX, ct: &[u8]) -> anyhow::Result<Vec<u8>> {
        let mut ss_len = 0;
        check(
            ffi::EVP_PKEY_decapsulate(ctx, null_mut(), &mut ss_len, ct.as_ptr(), ct.len()),
            "EVP_PKEY_decapsulate",
        )?;
        let mut ss = vec![0u8; ss_len];
        check(
            ffi::EVP_PKEY_decapsulate(ctx, ss.as_mut_ptr(), &mut ss_len, ct.as_ptr(), ct.len()),
            "EVP_PKEY_decapsulate",
        )?;
        ss.truncate(ss_len);
        Ok(ss)
    }
}

/// ML-KEM as OpenSSL 3.5+ runs it: each post-quantum group, hybrids too, is one KEM of the
/// default provider, named in its TLS group table (providers/common/capabilities.c), and
/// libssl calls it by that name (ssl/s3_lib.c): a key generated for the client's share; a
/// key made from the group's parameters and given the client's share, encapsulated to, for
/// the server's; decapsulation for the client's secret.
#[cfg(libcrypto_kem_by_name)]
mod kem_by_name {
    use std::any::Any;
    use std::ffi::{c_int, c_uchar, c_void, CString};
    use std::ptr::{null, null_mut};

    use super::kem_calls::{check, decapsulate, encapsulate};
    use foreign_types::ForeignType;
    use openssl::error::ErrorStack;
    use openssl::pkey::{PKey, Private};
    use openssl_sys as ffi;
    use tlsmatrix_harness::floor::{own_key, KeyExchange};
    use tlsmatrix_model::scenario::Group;

    extern "C" {
        // OpenSSL 3.0+; openssl-sys binds none of the three.
        fn EVP_PKEY_CTX_new_from_pkey(
            libctx: *mut ffi::OSSL_LIB_CTX,
            pkey: *mut ffi::EVP_PKEY,
            propquery: *const std::ffi::c_char,
        ) -> *mut ffi::EVP_PKEY_CTX;
        fn EVP_PKEY_get1_encoded_public_key(
            pkey: *mut ffi::EVP_PKEY,
            out: *mut *mut c_uchar,
        ) -> usize;
        fn EVP_PKEY_set1_encoded_public_key(
            pkey: *mut ffi::EVP_PKEY,
            key: *const c_uchar,
            len: usize,
        ) -> c_int;
    }

    pub struct KemByName {
        name: &'static str,
        c_name: CString,
    }

    /// An EVP_PKEY_CTX freed on drop.
    struct Ctx(*mut ffi::EVP_PKEY_CTX);

    impl Drop for Ctx {
        fn drop(&mut self) {
            // SAFETY: made by one of the constructors below, owned here.
            unsafe { ffi::EVP_PKEY_CTX_free(self.0) }
        }
    }

    fn ctx(p: *mut ffi::EVP_PKEY_CTX, call: &str) -> anyhow::Result<Ctx> {
        anyhow::ensure!(!p.is_null(), "{call} fails: {}", ErrorStack::get());
        Ok(Ctx(p))
    }

    impl KemByName {
        pub fn of(g: Group) -> Result<KemByName, String> {
            let name = match g {
                Group::Mlkem512 => "ML-KEM-512",
                Group::Mlkem768 => "ML-KEM-768",
                Group::Mlkem1024 => "ML-KEM-1024",
                Group::X25519Mlkem768 => "X25519MLKEM768",
                Group::Secp256r1Mlkem768 => "SecP256r1MLKEM768",
                Group::Secp384r1Mlkem1024 => "SecP384r1MLKEM1024",
                g => return Err(format!("{g} is not a KEM")),
            };
            let kem = KemByName {
                name,
                c_name: CString::new(name).expect("no NUL in a name"),
            };
            // The library's own refusal where it has no such KEM (OpenSSL 3.0-3.4).
            kem.by_name()
                .map_err(|e| format!("{} {e}", openssl::version::version()))?;
            Ok(kem)
        }

        fn by_name(&self) -> anyhow::Result<Ctx> {
            // SAFETY: a NUL-terminated name; the default library context.
            let p = unsafe {
                ffi::EVP_PKEY_CTX_new_from_name(null_mut(), self.c_name.as_ptr(), null())
            };
            ctx(p, &format!("EVP_PKEY_CTX_new_from_name(\"{}\")", self.name))
        }

        /// A key generated (`keygen`) or made from the group's parameters alone.
        fn key(&self, keygen: bool) -> anyhow::Result<PKey<Private>> {
            let c = self.by_name()?;
            let mut key = null_mut();
            // SAFETY: a live context; the key it makes is owned by the PKey below.
            unsafe {
                if keygen {
                    check(ffi::EVP_PKEY_keygen_init(c.0), "EVP_PKEY_keygen_init")?;
                    check(ffi::EVP_PKEY_keygen(c.0, &mut key), "EVP_PKEY_keygen")?;
                } else {
                    check(ffi::EVP_PKEY_paramgen_init(c.0), "EVP_PKEY_paramgen_init")?;
                    check(ffi::EVP_PKEY_paramgen(c.0, &mut key), "EVP_PKEY_paramgen")?;
                }
                Ok(PKey::from_ptr(key))
            }
        }
    }

    impl KeyExchange for KemByName {
        fn generate(&self) -> anyhow::Result<(Box<dyn Any>, Vec<u8>)> {
            let key = self.key(true)?;
            let mut out = null_mut();
            // SAFETY: a live key; the encoding it allocates is copied, then freed.
            let share = unsafe {
                let n = EVP_PKEY_get1_encoded_public_key(key.as_ptr(), &mut out);
                anyhow::ensure!(
                    n > 0 && !out.is_null(),
                    "EVP_PKEY_get1_encoded_public_key fails: {}",
                    ErrorStack::get()
                );
                let share = std::slice::from_raw_parts(out, n).to_vec();
                ffi::CRYPTO_free(out.cast::<c_void>(), null(), 0);
                share
            };
            Ok((Box::new(key), share))
        }

        fn respond(&self, share: &[u8]) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
            let peer = self.key(false)?;
            // SAFETY: live key and context; each buffer is sized by the call before.
            unsafe {
                check(
                    EVP_PKEY_set1_encoded_public_key(peer.as_ptr(), share.as_ptr(), share.len()),
                    "EVP_PKEY_set1_encoded_public_key",
                )?;
                let c = ctx(
                    EVP_PKEY_CTX_new_from_pkey(null_mut(), peer.as_ptr(), null()),
                    "EVP_PKEY_CTX_new_from_pkey",
                )?;
                check(
                    ffi::EVP_PKEY_encapsulate_init(c.0, null()),
                    "EVP_PKEY_encapsulate_init",
                )?;
                encapsulate(c.0)
            }
        }

        fn finish(&self, own: &dyn Any, reply: &[u8]) -> anyhow::Result<Vec<u8>> {
            let own: &PKey<Private> = own_key(own)?;
            // SAFETY: live key and context; the secret's buffer is sized by the call before.
            unsafe {
                let c = ctx(
                    EVP_PKEY_CTX_new_from_pkey(null_mut(), own.as_ptr(), null()),
                    "EVP_PKEY_CTX_new_from_pkey",
                )?;
                check(
                    ffi::EVP_PKEY_decapsulate_init(c.0, null()),
                    "EVP_PKEY_decapsulate_init",
                )?;
                decapsulate(c.0, reply)
            }
        }
    }
}

/// ML-KEM as AWS-LC's libssl runs it (ssl/ssl_key_share.cc, KEMKeyShare): an EVP_PKEY_KEM
/// key of the size's NID, whose context is kept from the share to the secret; the peer's
/// share read with EVP_PKEY_kem_new_raw_public_key and encapsulated to.
#[cfg(feature = "aws-lc")]
mod aws_lc_kem {
    use std::any::Any;
    use std::ffi::c_int;
    use std::ptr::null_mut;

    use super::kem_calls::{check, decapsulate, encapsulate};
    use openssl::error::ErrorStack;
    use openssl_sys as ffi;
    use tlsmatrix_harness::floor::{own_key, KeyExchange};
    use tlsmatrix_model::floor::KexPart;

    pub struct Kem(c_int);

    /// An EVP_PKEY_CTX freed on drop, with the key it was made for.
    struct Ctx(*mut ffi::EVP_PKEY_CTX, *mut ffi::EVP_PKEY);

    impl Drop for Ctx {
        fn drop(&mut self) {
            // SAFETY: both owned here; a null key is allowed.
            unsafe {
                ffi::EVP_PKEY_CTX_free(self.0);
                ffi::EVP_PKEY_free(self.1);
            }
        }
    }

    impl Kem {
        pub fn of(part: KexPart) -> Result<Kem, String> {
            Ok(Kem(match part {
                KexPart::MlKem512 => ffi::NID_MLKEM512,
                KexPart::MlKem768 => ffi::NID_MLKEM768,
                KexPart::MlKem1024 => ffi::NID_MLKEM1024,
                p => return Err(format!("{p:?} is not a KEM")),
            } as c_int))
        }

        /// A context for the key `key` (owned from here on), or an error naming `call`.
        fn ctx_for(key: *mut ffi::EVP_PKEY, call: &str) -> anyhow::Result<Ctx> {
            anyhow::ensure!(!key.is_null(), "{call} fails: {}", ErrorStack::get());
            // SAFETY: a live key, owned by the Ctx from here on.
            let c = unsafe { ffi::EVP_PKEY_CTX_new(key, null_mut()) };
            let c = Ctx(c, key);
            anyhow::ensure!(
                !c.0.is_null(),
                "EVP_PKEY_CTX_new fails: {}",
                ErrorStack::get()
            );
            Ok(c)
        }
    }

    impl KeyExchange for Kem {
        fn generate(&self) -> anyhow::Result<(Box<dyn Any>, Vec<u8>)> {
            let mut key = null_mut();
            let mut len = 0;
            // SAFETY: each context and key is checked and freed; the share's buffer is sized
            // by the call before.
            unsafe {
                let keygen = Ctx(
                    ffi::EVP_PKEY_CTX_new_id(ffi::EVP_PKEY_KEM as c_int, null_mut()),
                    null_mut(),
                );
                anyhow::ensure!(
                    !keygen.0.is_null(),
                    "EVP_PKEY_CTX_new_id(EVP_PKEY_KEM) fails: {}",
                    ErrorStack::get()
                );
                check(
                    ffi::EVP_PKEY_CTX_kem_set_params(keygen.0, self.0),
                    "EVP_PKEY_CTX_kem_set_params",
                )?;
                check(ffi::EVP_PKEY_keygen_init(keygen.0), "EVP_PKEY_keygen_init")?;
                check(ffi::EVP_PKEY_keygen(keygen.0, &mut key), "EVP_PKEY_keygen")?;
                let own = Kem::ctx_for(key, "EVP_PKEY_keygen")?;
                check(
                    ffi::EVP_PKEY_get_raw_public_key(own.1, null_mut(), &mut len),
                    "EVP_PKEY_get_raw_public_key",
                )?;
                let mut share = vec![0u8; len];
                check(
                    ffi::EVP_PKEY_get_raw_public_key(own.1, share.as_mut_ptr(), &mut len),
                    "EVP_PKEY_get_raw_public_key",
                )?;
                share.truncate(len);
                Ok((Box::new(own), share))
            }
        }

        fn respond(&self, share: &[u8]) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
            // SAFETY: the key and context are checked and freed by Ctx; buffers sized first.
            unsafe {
                let peer =
                    ffi::EVP_PKEY_kem_new_raw_public_key(self.0, share.as_ptr(), share.len());
                let c = Kem::ctx_for(peer, "EVP_PKEY_kem_new_raw_public_key")?;
                encapsulate(c.0)
            }
        }

        fn finish(&self, own: &dyn Any, reply: &[u8]) -> anyhow::Result<Vec<u8>> {
            let own: &Ctx = own_key(own)?;
            // SAFETY: the context lives in `own`; the secret's buffer is sized first.
            unsafe { decapsulate(own.0, reply) }
        }
    }
}
/// The hash a scheme signs with; none for the schemes that sign the message whole.
fn digest(sig: SigAlg) -> Option<(MessageDigest, &'static MdRef)> {
    match sig {
        SigAlg::EcdsaP256 | SigAlg::Rsa2048 | SigAlg::Rsa3072 => {
            Some((MessageDigest::sha256(), Md::sha256()))
        }
        SigAlg::EcdsaP384 => Some((MessageDigest::sha384(), Md::sha384())),
        SigAlg::Ed25519 | SigAlg::MlDsa44 | SigAlg::MlDsa65 | SigAlg::MlDsa87 => None,
    }
}

/// One signature made or checked. Hash-then-sign schemes hash the message with a reused
/// hasher and run the key operation through an EVP_PKEY_CTX set up once, as `openssl speed`
/// times them (plus the hash), so the floor is the key operation's cost without the
/// per-signature context libssl sets up; the others sign the message whole (EVP_DigestSign).
enum SigOp<T> {
    Prehashed(PkeyCtx<T>, Hasher),
    Whole(PKey<T>),
}

fn sig_ctx<T>(sig: SigAlg, mut ctx: PkeyCtx<T>) -> anyhow::Result<SigOp<T>> {
    let Some((md, evp)) = digest(sig) else {
        unreachable!("only hash-then-sign schemes get a context")
    };
    ctx.set_signature_md(evp)?;
    if sig.is_rsa() {
        ctx.set_rsa_padding(Padding::PKCS1_PSS)?;
        ctx.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
    }
    Ok(SigOp::Prehashed(ctx, Hasher::new(md)?))
}

impl SigOp<Private> {
    fn signer(sig: SigAlg, key: PKey<Private>) -> anyhow::Result<Self> {
        if digest(sig).is_none() {
            return Ok(SigOp::Whole(key));
        }
        let mut ctx = PkeyCtx::new(&key)?;
        ctx.sign_init()?;
        sig_ctx(sig, ctx)
    }

    fn sign(&mut self, msg: &[u8]) -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        match self {
            SigOp::Prehashed(ctx, hasher) => {
                hasher.update(msg)?;
                ctx.sign_to_vec(&hasher.finish()?, &mut out)?;
            }
            SigOp::Whole(key) => out = Signer::new_without_digest(key)?.sign_oneshot_to_vec(msg)?,
        }
        Ok(out)
    }
}

impl SigOp<Public> {
    fn verifier(sig: SigAlg, key: PKey<Public>) -> anyhow::Result<Self> {
        if digest(sig).is_none() {
            return Ok(SigOp::Whole(key));
        }
        let mut ctx = PkeyCtx::new(&key)?;
        ctx.verify_init()?;
        sig_ctx(sig, ctx)
    }

    fn verify(&mut self, msg: &[u8], signature: &[u8]) -> anyhow::Result<bool> {
        Ok(match self {
            SigOp::Prehashed(ctx, hasher) => {
                hasher.update(msg)?;
                ctx.verify(&hasher.finish()?, signature)?
            }
            SigOp::Whole(key) => {
                Verifier::new_without_digest(key)?.verify_oneshot(signature, msg)?
            }
        })
    }
}

impl HandshakeCrypto for EvpCrypto {
    fn api(&self) -> String {
        self.api.clone()
    }

    fn prepare(&self, op: CryptoOp, certs: &CertSet) -> Result<Box<dyn PreparedOp>, String> {
        let key = || {
            let der = floor::pem_der(&certs.key_pem).map_err(|e| e.to_string())?;
            PKey::private_key_from_pkcs8(&der).map_err(stack("loading the key"))
        };
        let anyhow_err = |e: anyhow::Error| e.to_string();
        Ok(match op {
            CryptoOp::KeyShare(g) | CryptoOp::ServerShare(g) | CryptoOp::ClientSecret(g) => {
                return floor::key_exchange_op(op, key_exchange(g)?);
            }
            CryptoOp::Sign(sig) => {
                let mut signer = SigOp::signer(sig, key()?).map_err(anyhow_err)?;
                let msg = floor::signed_content();
                signer
                    .sign(&msg)
                    .map_err(|e| format!("{sig} signing: {e}"))?;
                prepared(move || timed(|| signer.sign(&msg)))
            }
            CryptoOp::Verify(sig) => {
                let private = key()?;
                let msg = floor::signed_content();
                let der = private
                    .public_key_to_der()
                    .map_err(stack("the public key"))?;
                let signature = SigOp::signer(sig, private)
                    .and_then(|mut s| s.sign(&msg))
                    .map_err(|e| format!("{sig} signing: {e}"))?;
                let public = PKey::public_key_from_der(&der).map_err(stack("the public key"))?;
                let mut verifier = SigOp::verifier(sig, public).map_err(anyhow_err)?;
                if !verifier.verify(&msg, &signature).map_err(anyhow_err)? {
                    return Err(format!("its own {sig} signature did not verify"));
                }
                floor::verification(move || verifier.verify(&msg, &signature))
            }
            CryptoOp::Hmac(hash) => Hmac::op(hash)?,
        })
    }
}
