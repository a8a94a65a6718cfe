//! What an adapter gives the crypto floor (`tlsmatrix_model::floor`): each operation a side
//! must perform, made ready with its inputs through the library's own crypto API, so that
//! `tlsmatrix_measure::floor` can time it apart from any TLS.

use std::time::Duration;

use crate::certs::CertSet;
use tlsmatrix_model::floor::CryptoOp;

/// One operation with its inputs in place (keys loaded, a peer's share made, a signature to
/// check). `run` performs it once and returns the time of the operation itself: an input it
/// consumes (a fresh key share for a client's secret) is made before the clock starts.
pub trait PreparedOp {
    fn run(&mut self) -> anyhow::Result<Duration>;
}

/// A closure as a prepared operation.
struct Closure<F>(F);

impl<F: FnMut() -> anyhow::Result<Duration>> PreparedOp for Closure<F> {
    fn run(&mut self) -> anyhow::Result<Duration> {
        (self.0)()
    }
}

/// `f` as a prepared operation: each call runs it once and returns its time.
pub fn prepared(f: impl FnMut() -> anyhow::Result<Duration> + 'static) -> Box<dyn PreparedOp> {
    Box::new(Closure(f))
}

/// A library's crypto API, as its handshake calls it.
pub trait HandshakeCrypto {
    /// What is called, e.g. "ring 0.17.14 through rustls's provider".
    fn api(&self) -> String;
    /// `op` ready to run, keyed by `certs` (the server's leaf key signs, its public key
    /// verifies), or the library's reason it cannot.
    fn prepare(&self, op: CryptoOp, certs: &CertSet) -> Result<Box<dyn PreparedOp>, String>;
}

/// The message a floor signs and verifies: TLS 1.3's CertificateVerify content (RFC 8446
/// 4.4.3), 64 spaces, the context string, a zero and a SHA-256 transcript hash; about the
/// size of what a TLS 1.2 ServerKeyExchange signs too.
pub fn signed_content() -> Vec<u8> {
    let mut m = vec![0x20; 64];
    m.extend_from_slice(b"TLS 1.3, server CertificateVerify\0");
    m.extend_from_slice(&[0x5a; 32]);
    m
}

/// The DER of the first PEM block in `pem`.
pub fn pem_der(pem: &str) -> anyhow::Result<Vec<u8>> {
    Ok(pem::parse(pem)?.into_contents())
}

/// The subject public key's bits from a SubjectPublicKeyInfo (what a verifier is handed):
/// the BIT STRING after the algorithm, without its unused-bits byte.
pub fn spki_key_bits(spki: &[u8]) -> anyhow::Result<&[u8]> {
    let (tag, outer, _) = der_tlv(spki)?;
    anyhow::ensure!(tag == 0x30, "a SubjectPublicKeyInfo is a SEQUENCE");
    let (_, _, after_algorithm) = der_tlv(outer)?;
    let (tag, bits, _) = der_tlv(after_algorithm)?;
    anyhow::ensure!(
        tag == 0x03 && bits.first() == Some(&0),
        "the key is a BIT STRING of whole bytes"
    );
    Ok(&bits[1..])
}

/// One DER element: its tag, its contents and what follows it.
fn der_tlv(der: &[u8]) -> anyhow::Result<(u8, &[u8], &[u8])> {
    let short = || anyhow::anyhow!("truncated DER");
    let (&tag, rest) = der.split_first().ok_or_else(short)?;
    let (&first, mut rest) = rest.split_first().ok_or_else(short)?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let n = usize::from(first & 0x7f);
        anyhow::ensure!(n <= 4 && rest.len() >= n, "bad DER length");
        let len = rest[..n].iter().fold(0, |a, &b| a << 8 | usize::from(b));
        rest = &rest[n..];
        len
    };
    anyhow::ensure!(rest.len() >= len, "truncated DER");
    Ok((tag, &rest[..len], &rest[len..]))
}

/// Runs `op` once, timed: the body of most prepared operations.
pub fn timed<T>(op: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<Duration> {
    let t = std::time::Instant::now();
    let out = op()?;
    let d = t.elapsed();
    drop(std::hint::black_box(out));
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_bits_of_an_ecdsa_spki_are_its_uncompressed_point() {
        let set = crate::certs::generate(tlsmatrix_model::scenario::SigAlg::EcdsaP256).unwrap();
        let key = rcgen::KeyPair::from_pem(&set.key_pem).unwrap();
        let bits = spki_key_bits(&pem_der(&key.public_key_pem()).unwrap())
            .unwrap()
            .to_vec();
        assert_eq!(bits, key.public_key_raw());
        assert_eq!((bits.len(), bits[0]), (65, 4));
        assert!(spki_key_bits(&[0x30, 0x05, 1]).is_err());
    }

    #[test]
    fn pem_blocks_decode() {
        let set = crate::certs::generate(tlsmatrix_model::scenario::SigAlg::Ed25519).unwrap();
        let der = pem_der(&set.key_pem).unwrap();
        assert_eq!(der[0], 0x30);
        assert!(pem_der("no pem here").is_err());
    }
}
