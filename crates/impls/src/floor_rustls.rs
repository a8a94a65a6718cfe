//! The crypto floor through a rustls crypto provider: the very calls rustls's handshake makes
//! (`SupportedKxGroup`, `SigningKey`/`Signer`, the provider's verification algorithms, the
//! suite's HKDF), with ring or aws-lc-rs behind them. s2n-tls runs on the same aws-lc, so its
//! floor is aws-lc-rs's.

use std::sync::Arc;

use rustls::crypto::tls13::OkmBlock;
use rustls::crypto::{CryptoProvider, SupportedKxGroup};
use rustls::pki_types::{PrivateKeyDer, SignatureVerificationAlgorithm};
use rustls::SignatureScheme;
use tlsmatrix_harness::certs::CertSet;
use tlsmatrix_harness::floor::{self, prepared, timed, HandshakeCrypto, PreparedOp};
use tlsmatrix_model::codes;
use tlsmatrix_model::floor::{CryptoOp, Hash};
use tlsmatrix_model::scenario::{Group, SigAlg};

pub struct ProviderCrypto {
    pub api: String,
    pub provider: CryptoProvider,
    /// Every group the provider has, beyond those its default offers.
    pub kx_groups: &'static [&'static dyn SupportedKxGroup],
}

fn failed(what: &str) -> impl Fn(rustls::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

impl ProviderCrypto {
    fn group(&self, g: Group) -> Result<&'static dyn SupportedKxGroup, String> {
        let code = codes::group_code(g);
        self.kx_groups
            .iter()
            .copied()
            .find(|k| u16::from(k.name()) == code)
            .ok_or_else(|| format!("the provider has no key exchange group {g}"))
    }

    /// A key share of `g` and the server's reply to it. A client's secret is timed against
    /// this one reply: any valid ECDH point costs the same, and an ML-KEM ciphertext made for
    /// another key is decapsulated at full cost (implicit rejection, FIPS 203).
    fn reply(&self, g: &dyn SupportedKxGroup) -> Result<(Vec<u8>, Vec<u8>), String> {
        let client = g.start().map_err(failed("key share"))?;
        let share = client.pub_key().to_vec();
        let done = g
            .start_and_complete(&share)
            .map_err(failed("server share"))?;
        Ok((share, done.pub_key))
    }

    /// The leaf's key, loaded by the provider as rustls loads it.
    fn key(&self, certs: &CertSet) -> Result<Arc<dyn rustls::sign::SigningKey>, String> {
        let der = floor::pem_der(&certs.key_pem).map_err(|e| e.to_string())?;
        let key = PrivateKeyDer::try_from(der).map_err(|e| e.to_string())?;
        self.provider
            .key_provider
            .load_private_key(key)
            .map_err(failed("loading the key"))
    }
}

fn signer(
    key: &dyn rustls::sign::SigningKey,
    sig: SigAlg,
) -> Result<Box<dyn rustls::sign::Signer>, String> {
    key.choose_scheme(&[scheme(sig)])
        .ok_or_else(|| format!("the provider cannot sign with {}", scheme_name(sig)))
}

fn scheme(sig: SigAlg) -> SignatureScheme {
    SignatureScheme::from(codes::signature_scheme_code(sig))
}

fn scheme_name(sig: SigAlg) -> String {
    codes::scheme_name(codes::signature_scheme_code(sig))
}

impl HandshakeCrypto for ProviderCrypto {
    fn api(&self) -> String {
        self.api.clone()
    }

    fn prepare(&self, op: CryptoOp, certs: &CertSet) -> Result<Box<dyn PreparedOp>, String> {
        Ok(match op {
            CryptoOp::KeyShare(g) => {
                let g = self.group(g)?;
                prepared(move || {
                    timed(|| {
                        let k = g.start().map_err(anyhow::Error::msg)?;
                        std::hint::black_box(k.pub_key());
                        Ok(k)
                    })
                })
            }
            CryptoOp::ServerShare(g) => {
                let g = self.group(g)?;
                let (share, _) = self.reply(g)?;
                prepared(move || timed(|| g.start_and_complete(&share).map_err(anyhow::Error::msg)))
            }
            CryptoOp::ClientSecret(g) => {
                let g = self.group(g)?;
                let (_, reply) = self.reply(g)?;
                prepared(move || {
                    let k = g.start().map_err(anyhow::Error::msg)?;
                    timed(|| k.complete(&reply).map_err(anyhow::Error::msg))
                })
            }
            CryptoOp::Sign(sig) => {
                let signer = signer(self.key(certs)?.as_ref(), sig)?;
                let msg = floor::signed_content();
                prepared(move || timed(|| signer.sign(&msg).map_err(anyhow::Error::msg)))
            }
            CryptoOp::Verify(sig) => {
                let msg = floor::signed_content();
                let key = self.key(certs)?;
                let signature = signer(key.as_ref(), sig)?
                    .sign(&msg)
                    .map_err(failed("signing"))?;
                let spki = key
                    .public_key()
                    .ok_or("the provider's key gives no public key")?;
                let public = floor::spki_key_bits(&spki)
                    .map_err(|e| e.to_string())?
                    .to_vec();
                let alg: &'static dyn SignatureVerificationAlgorithm = self
                    .provider
                    .signature_verification_algorithms
                    .mapping
                    .iter()
                    .find(|(s, _)| *s == scheme(sig))
                    .and_then(|(_, algs)| algs.first().copied())
                    .ok_or_else(|| format!("the provider verifies no {}", scheme_name(sig)))?;
                alg.verify_signature(&public, &msg, &signature)
                    .map_err(|_| "the provider's signature did not verify".to_string())?;
                floor::verification(move || {
                    Ok(alg.verify_signature(&public, &msg, &signature).is_ok())
                })
            }
            CryptoOp::Hmac(hash) => {
                let code = match hash {
                    Hash::Sha256 => 0x1301,
                    Hash::Sha384 => 0x1302,
                };
                let suite = self
                    .provider
                    .cipher_suites
                    .iter()
                    .find_map(|s| match s {
                        rustls::SupportedCipherSuite::Tls13(t)
                            if u16::from(t.common.suite) == code =>
                        {
                            Some(*t)
                        }
                        _ => None,
                    })
                    .ok_or_else(|| format!("the provider has no {} suite", hash.as_str()))?;
                let key =
                    OkmBlock::new(&floor::HMAC_KEY[..suite.common.hash_provider.output_len()]);
                prepared(move || {
                    timed(|| Ok(suite.hkdf_provider.hmac_sign(&key, &floor::HMAC_INPUT)))
                })
            }
        })
    }
}
