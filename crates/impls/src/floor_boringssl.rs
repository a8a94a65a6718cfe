//! The crypto floor through BoringSSL's libcrypto, as its libssl calls it
//! (ssl/ssl_key_share.cc, ssl/ssl_privkey.cc): X25519_keypair and X25519; the NIST curves and
//! the key schedule's HMACs as in the other libcryptos (`floor_libcrypto`); ML-KEM through
//! its own API (MLKEM768_generate_key, _encap, _decap), each hybrid built from its halves;
//! each signature through EVP_DigestSign with a context set up per signature, as libssl sets
//! one up per handshake, and EVP_DigestVerify likewise.

use std::any::Any;

use boring::hash::MessageDigest;
use boring::mlkem::{Algorithm, MlKemPrivateKey, MlKemPublicKey};
use boring::pkey::{PKey, PKeyRef, Private, Public};
use boring::rsa::Padding;
use boring::sign::{RsaPssSaltlen, Signer, Verifier};
use boring_sys as ffi;
use tlsmatrix_harness::certs::CertSet;
use tlsmatrix_harness::floor::{
    self, own_key, prepared, timed, HandshakeCrypto, KeyExchange, PreparedOp,
};
use tlsmatrix_model::floor::{CryptoOp, KexPart};
use tlsmatrix_model::scenario::SigAlg;

use crate::floor_libcrypto::{stack, Hmac, NistCurve};

pub struct BoringCrypto {
    pub api: String,
}

/// One half of a group as BoringSSL's libssl performs it.
fn half(part: KexPart) -> Result<Box<dyn KeyExchange>, String> {
    if let Some(curve) = NistCurve::of(part) {
        return curve.map(|c| Box::new(c) as Box<dyn KeyExchange>);
    }
    Ok(match part {
        KexPart::X25519 => Box::new(X25519),
        KexPart::MlKem768 => Box::new(MlKem(Algorithm::MlKem768)),
        KexPart::MlKem1024 => Box::new(MlKem(Algorithm::MlKem1024)),
        p => {
            return Err(format!(
                "BoringSSL's ML-KEM API (openssl/mlkem.h) has ML-KEM-768 and ML-KEM-1024, no {}",
                p.group()
            ))
        }
    })
}

/// X25519 on raw arrays: no EVP_PKEY on BoringSSL's TLS path.
struct X25519;

impl KeyExchange for X25519 {
    fn generate(&self) -> anyhow::Result<(Box<dyn Any>, Vec<u8>)> {
        let (mut public, mut private) = ([0u8; 32], [0u8; 32]);
        // SAFETY: both arrays are the 32 bytes the call writes.
        unsafe { ffi::X25519_keypair(public.as_mut_ptr(), private.as_mut_ptr()) };
        Ok((Box::new(private), public.to_vec()))
    }

    fn finish(&self, own: &dyn Any, reply: &[u8]) -> anyhow::Result<Vec<u8>> {
        let private: &[u8; 32] = own_key(own)?;
        anyhow::ensure!(
            reply.len() == 32,
            "an X25519 share of {} bytes",
            reply.len()
        );
        let mut secret = [0u8; 32];
        // SAFETY: each pointer is to 32 bytes, as the call reads and writes.
        let ok = unsafe { ffi::X25519(secret.as_mut_ptr(), private.as_ptr(), reply.as_ptr()) };
        anyhow::ensure!(ok == 1, "X25519 refuses the peer's share");
        Ok(secret.to_vec())
    }
}

struct MlKem(Algorithm);

impl KeyExchange for MlKem {
    fn generate(&self) -> anyhow::Result<(Box<dyn Any>, Vec<u8>)> {
        let (public, private) = MlKemPrivateKey::generate(self.0)?;
        Ok((Box::new(private), public.as_bytes().to_vec()))
    }

    fn respond(&self, share: &[u8]) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        let (ciphertext, secret) = MlKemPublicKey::from_slice(self.0, share)?.encapsulate()?;
        Ok((secret.to_vec(), ciphertext))
    }

    fn finish(&self, own: &dyn Any, reply: &[u8]) -> anyhow::Result<Vec<u8>> {
        let private: &MlKemPrivateKey = own_key(own)?;
        Ok(private.decapsulate(reply)?.to_vec())
    }
}

/// The digest a scheme signs with, with RSA-PSS's padding; none for the schemes that sign
/// the message whole.
fn digest(sig: SigAlg) -> Option<MessageDigest> {
    match sig {
        SigAlg::EcdsaP256 | SigAlg::Rsa2048 | SigAlg::Rsa3072 => Some(MessageDigest::sha256()),
        SigAlg::EcdsaP384 => Some(MessageDigest::sha384()),
        SigAlg::Ed25519 | SigAlg::MlDsa44 | SigAlg::MlDsa65 | SigAlg::MlDsa87 => None,
    }
}

fn sign(sig: SigAlg, key: &PKeyRef<Private>, msg: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut s = match digest(sig) {
        Some(md) => Signer::new(md, key)?,
        None => Signer::new_without_digest(key)?,
    };
    if sig.is_rsa() {
        s.set_rsa_padding(Padding::PKCS1_PSS)?;
        s.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
    }
    Ok(s.sign_oneshot_to_vec(msg)?)
}

fn verify(
    sig: SigAlg,
    key: &PKeyRef<Public>,
    msg: &[u8],
    signature: &[u8],
) -> anyhow::Result<bool> {
    let mut v = match digest(sig) {
        Some(md) => Verifier::new(md, key)?,
        None => Verifier::new_without_digest(key)?,
    };
    if sig.is_rsa() {
        v.set_rsa_padding(Padding::PKCS1_PSS)?;
        v.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
    }
    Ok(v.verify_oneshot(signature, msg)?)
}

impl HandshakeCrypto for BoringCrypto {
    fn api(&self) -> String {
        self.api.clone()
    }

    fn prepare(&self, op: CryptoOp, certs: &CertSet) -> Result<Box<dyn PreparedOp>, String> {
        let key = || {
            PKey::private_key_from_pem(certs.key_pem.as_bytes()).map_err(stack("loading the key"))
        };
        let msg = floor::signed_content();
        Ok(match op {
            CryptoOp::KeyShare(g) | CryptoOp::ServerShare(g) | CryptoOp::ClientSecret(g) => {
                return floor::key_exchange_op(op, floor::from_halves(g, half)?);
            }
            CryptoOp::Sign(sig) => {
                let key = key()?;
                sign(sig, &key, &msg).map_err(|e| format!("{sig} signing: {e}"))?;
                prepared(move || timed(|| sign(sig, &key, &msg)))
            }
            CryptoOp::Verify(sig) => {
                let private = key()?;
                let signature =
                    sign(sig, &private, &msg).map_err(|e| format!("{sig} signing: {e}"))?;
                let der = private
                    .public_key_to_der()
                    .map_err(stack("the public key"))?;
                let public = PKey::public_key_from_der(&der).map_err(stack("the public key"))?;
                if !verify(sig, &public, &msg, &signature).map_err(|e| e.to_string())? {
                    return Err(format!("its own {sig} signature did not verify"));
                }
                floor::verification(move || verify(sig, &public, &msg, &signature))
            }
            CryptoOp::Hmac(hash) => Hmac::op(hash)?,
        })
    }
}
