//! The crypto floor through OpenSSL's libcrypto (any linked release, and AWS-LC through the
//! same `openssl` crate): key generation and agreement for the key exchange,
//! the key operation of each signature through an EVP_PKEY_CTX set up once (as `openssl speed`
//! times it), and HMAC_CTX for the key schedule's HMACs.

use std::time::Instant;

use foreign_types::ForeignType;
use openssl::bn::BigNumContext;
use openssl::derive::Deriver;
use openssl::ec::{EcGroup, EcKey, EcPoint, PointConversionForm};
use openssl::hash::{Hasher, MessageDigest};
use openssl::md::{Md, MdRef};
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private, Public};
use openssl::pkey_ctx::PkeyCtx;
use openssl::rsa::Padding;
use openssl::sign::{RsaPssSaltlen, Signer, Verifier};
use openssl_sys as ffi;
use tlsmatrix_harness::certs::CertSet;
use tlsmatrix_harness::floor::{self, prepared, timed, HandshakeCrypto, PreparedOp};
use tlsmatrix_model::floor::{CryptoOp, Hash};
use tlsmatrix_model::scenario::{Group, SigAlg};

pub struct EvpCrypto {
    pub api: String,
}

fn stack(what: &str) -> impl Fn(openssl::error::ErrorStack) -> String + '_ {
    move |e| format!("{what}: {e}")
}

/// An ECDH group's key pairs and their encoding on the wire: X25519 through EVP_PKEY, as
/// libssl uses it; the NIST curves through EC_KEY and ECDH_compute_key, the library's direct
/// path, with the group made once (libssl's EVP route costs more, never less).
enum Ecdh {
    X25519,
    Curve(EcGroup),
}

/// A key pair of either kind.
enum Own {
    X25519(PKey<Private>),
    Curve(EcKey<Private>),
}

extern "C" {
    /// In every libcrypto here (OpenSSL 1.1.1 to 4.0, AWS-LC); openssl-sys binds no ECDH.
    fn ECDH_compute_key(
        out: *mut std::ffi::c_void,
        outlen: usize,
        pub_key: *const ffi::EC_POINT,
        ecdh: *const ffi::EC_KEY,
        kdf: *const std::ffi::c_void,
    ) -> std::ffi::c_int;
}

impl Ecdh {
    fn of(g: Group) -> Result<Ecdh, String> {
        let curve = |nid| {
            EcGroup::from_curve_name(nid)
                .map(Ecdh::Curve)
                .map_err(stack("the curve"))
        };
        match g {
            Group::X25519 => Ok(Ecdh::X25519),
            Group::P256 => curve(Nid::X9_62_PRIME256V1),
            Group::P384 => curve(Nid::SECP384R1),
            g => Err(format!(
                "tlsmatrix does not yet call this library's {g} key exchange apart from its TLS stack"
            )),
        }
    }

    /// A fresh key pair and its public share as sent.
    fn generate(&self) -> anyhow::Result<(Own, Vec<u8>)> {
        Ok(match self {
            Ecdh::X25519 => {
                let k = PKey::generate_x25519()?;
                let share = k.raw_public_key()?;
                (Own::X25519(k), share)
            }
            Ecdh::Curve(group) => {
                let ec = EcKey::generate(group)?;
                let mut ctx = BigNumContext::new()?;
                let share =
                    ec.public_key()
                        .to_bytes(group, PointConversionForm::UNCOMPRESSED, &mut ctx)?;
                (Own::Curve(ec), share)
            }
        })
    }

    /// The secret of `own` with the peer's `share` as sent, the share read back first.
    fn secret(&self, own: &Own, share: &[u8]) -> anyhow::Result<Vec<u8>> {
        match (self, own) {
            (Ecdh::X25519, Own::X25519(own)) => {
                let peer = PKey::public_key_from_raw_bytes(share, Id::X25519)?;
                let mut d = Deriver::new(own)?;
                d.set_peer(&peer)?;
                Ok(d.derive_to_vec()?)
            }
            (Ecdh::Curve(group), Own::Curve(own)) => {
                let mut ctx = BigNumContext::new()?;
                let point = EcPoint::from_bytes(group, share, &mut ctx)?;
                let mut out = vec![0u8; 66];
                // SAFETY: the point and key are live and of one group; `out` holds any
                // secret of the curves here (P-384: 48 bytes).
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
            _ => anyhow::bail!("a key of another group"),
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

/// HMAC_CTX, made once and re-keyed per HMAC (HMAC_Init_ex with a key).
struct Hmac {
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
            key: [0x42; 48],
            len,
        })
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
            CryptoOp::KeyShare(g) => {
                let e = Ecdh::of(g)?;
                prepared(move || timed(|| e.generate()))
            }
            CryptoOp::ServerShare(g) => {
                let e = Ecdh::of(g)?;
                let (_, share) = e.generate().map_err(anyhow_err)?;
                prepared(move || {
                    timed(|| {
                        let (own, reply) = e.generate()?;
                        Ok((e.secret(&own, &share)?, reply))
                    })
                })
            }
            CryptoOp::ClientSecret(g) => {
                let e = Ecdh::of(g)?;
                let (_, reply) = e.generate().map_err(anyhow_err)?;
                prepared(move || {
                    let (own, _) = e.generate()?;
                    timed(|| e.secret(&own, &reply))
                })
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
                prepared(move || {
                    let t = Instant::now();
                    let ok = verifier.verify(&msg, &signature)?;
                    let d = t.elapsed();
                    anyhow::ensure!(ok, "a good signature failed to verify");
                    Ok(d)
                })
            }
            CryptoOp::Hmac(hash) => {
                let mut h = Hmac::new(hash)?;
                let msg = [0x17u8; 64];
                prepared(move || timed(|| h.mac(&msg)))
            }
        })
    }
}
