//! What an adapter gives the crypto floor (`tlsmatrix_model::floor`): each operation a side
//! must perform, made ready with its inputs through the library's own crypto API, so that
//! `tlsmatrix_measure::floor` can time it apart from any TLS.

use std::any::Any;
use std::time::Duration;

use crate::certs::CertSet;
use tlsmatrix_model::floor::{kex_parts, CryptoOp, KexPart};
use tlsmatrix_model::scenario::Group;

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

/// One key exchange as a library performs it: a group whole, or one half of a hybrid. The
/// default `respond` is Diffie-Hellman's (a key pair of the server's own, agreed with the
/// client's share); a KEM encapsulates instead.
pub trait KeyExchange {
    /// A fresh key pair and the share sent.
    fn generate(&self) -> anyhow::Result<(Box<dyn Any>, Vec<u8>)>;
    /// A client's secret from its key pair (`generate`'s) and the server's reply.
    fn finish(&self, own: &dyn Any, reply: &[u8]) -> anyhow::Result<Vec<u8>>;
    /// A server's secret and reply to a client's share.
    fn respond(&self, share: &[u8]) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        let (own, reply) = self.generate()?;
        Ok((self.finish(own.as_ref(), share)?, reply))
    }
}

/// A key pair of type `T` back from `generate`'s `Box<dyn Any>`.
pub fn own_key<T: 'static>(own: &dyn Any) -> anyhow::Result<&T> {
    own.downcast_ref()
        .ok_or_else(|| anyhow::anyhow!("a key pair of another key exchange"))
}

/// A group's key exchange from its halves (`kex_parts`), as a library without the hybrid as
/// one primitive performs it: the shares and replies side by side in wire order, the secrets
/// concatenated. Each half's lengths are checked, so a half that sends what the group does
/// not fails here rather than being timed.
struct Halves(Vec<(KexPart, Box<dyn KeyExchange>)>);

/// `g`'s key exchange from its halves, each made by `half`: a group of one half is that half
/// alone; otherwise the first half's reason it cannot be made is the group's.
pub fn from_halves(
    g: Group,
    half: impl Fn(KexPart) -> Result<Box<dyn KeyExchange>, String>,
) -> Result<Box<dyn KeyExchange>, String> {
    if let [one] = kex_parts(g) {
        return half(*one);
    }
    let halves = kex_parts(g)
        .iter()
        .map(|&p| Ok((p, half(p)?)))
        .collect::<Result<_, String>>()?;
    Ok(Box::new(Halves(halves)))
}

impl Halves {
    /// `bytes` cut at each half's length (`pick` chooses the share's or the reply's).
    fn cut<'a>(
        &self,
        bytes: &'a [u8],
        pick: fn((usize, usize)) -> usize,
    ) -> anyhow::Result<Vec<&'a [u8]>> {
        let mut rest = bytes;
        let mut pieces = Vec::new();
        for (part, _) in &self.0 {
            let n = pick(part.wire_len());
            anyhow::ensure!(rest.len() >= n, "{part:?}: {} bytes short", n - rest.len());
            let (piece, after) = rest.split_at(n);
            pieces.push(piece);
            rest = after;
        }
        anyhow::ensure!(
            rest.is_empty(),
            "{} bytes beyond the group's halves",
            rest.len()
        );
        Ok(pieces)
    }
}

impl KeyExchange for Halves {
    fn generate(&self) -> anyhow::Result<(Box<dyn Any>, Vec<u8>)> {
        let mut owns = Vec::new();
        let mut share = Vec::new();
        for (part, half) in &self.0 {
            let (own, piece) = half.generate()?;
            anyhow::ensure!(
                piece.len() == part.wire_len().0,
                "{part:?} share of {} bytes",
                piece.len()
            );
            owns.push(own);
            share.extend_from_slice(&piece);
        }
        Ok((Box::new(owns), share))
    }

    fn finish(&self, own: &dyn Any, reply: &[u8]) -> anyhow::Result<Vec<u8>> {
        let owns: &Vec<Box<dyn Any>> = own_key(own)?;
        let mut secret = Vec::new();
        for (((_, half), own), piece) in self.0.iter().zip(owns).zip(self.cut(reply, |l| l.1)?) {
            secret.extend_from_slice(&half.finish(own.as_ref(), piece)?);
        }
        Ok(secret)
    }

    fn respond(&self, share: &[u8]) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        let mut secret = Vec::new();
        let mut reply = Vec::new();
        for ((part, half), piece) in self.0.iter().zip(self.cut(share, |l| l.0)?) {
            let (s, r) = half.respond(piece)?;
            anyhow::ensure!(
                r.len() == part.wire_len().1,
                "{part:?} reply of {} bytes",
                r.len()
            );
            secret.extend_from_slice(&s);
            reply.extend_from_slice(&r);
        }
        Ok((secret, reply))
    }
}

/// A key-exchange operation of the floor (`KeyShare`, `ServerShare`, `ClientSecret`) ready to
/// run through `kex`. A client's secret is timed against one reply made here: any valid ECDH
/// point costs the same, and an ML-KEM ciphertext made for another key is decapsulated at
/// full cost (implicit rejection, FIPS 203). Both sides' secrets are checked to agree once.
pub fn key_exchange_op(
    op: CryptoOp,
    kex: Box<dyn KeyExchange>,
) -> Result<Box<dyn PreparedOp>, String> {
    let text = |e: anyhow::Error| format!("{op}: {e}");
    let (own, share) = kex.generate().map_err(text)?;
    let (server_secret, reply) = kex.respond(&share).map_err(text)?;
    let client_secret = kex.finish(own.as_ref(), &reply).map_err(text)?;
    if client_secret != server_secret {
        return Err(format!("{op}: the two sides' secrets differ"));
    }
    Ok(match op {
        CryptoOp::KeyShare(_) => prepared(move || timed(|| kex.generate())),
        CryptoOp::ServerShare(_) => prepared(move || timed(|| kex.respond(&share))),
        CryptoOp::ClientSecret(_) => prepared(move || {
            let (own, _) = kex.generate()?;
            timed(|| kex.finish(own.as_ref(), &reply))
        }),
        _ => return Err(format!("{op} is not a key exchange")),
    })
}

/// The key every floor's HMACs are keyed with (a SHA-384 key's length; SHA-256 takes its
/// first 32 bytes) and the short input each HMAC reads: a key schedule step's size.
pub const HMAC_KEY: [u8; 48] = [0x42; 48];
pub const HMAC_INPUT: [u8; 64] = [0x17; 64];

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

/// A verification as a prepared operation: `verify` is timed, and a good signature it
/// refuses fails the run rather than being timed as a quick rejection.
pub fn verification(
    mut verify: impl FnMut() -> anyhow::Result<bool> + 'static,
) -> Box<dyn PreparedOp> {
    prepared(move || {
        let t = std::time::Instant::now();
        let ok = verify()?;
        let d = t.elapsed();
        anyhow::ensure!(ok, "a good signature failed to verify");
        Ok(d)
    })
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

    /// A toy key exchange of the right sizes: Diffie-Hellman by XOR of one-byte keys, or a
    /// KEM whose secret is the key's byte plus one.
    struct Toy(KexPart, u8);

    impl KeyExchange for Toy {
        fn generate(&self) -> anyhow::Result<(Box<dyn Any>, Vec<u8>)> {
            Ok((Box::new(self.1), vec![self.1; self.0.wire_len().0]))
        }
        fn finish(&self, own: &dyn Any, reply: &[u8]) -> anyhow::Result<Vec<u8>> {
            let own: &u8 = own_key(own)?;
            Ok(vec![if self.0.is_kem() {
                reply[0] + 1
            } else {
                own ^ reply[0]
            }])
        }
        fn respond(&self, share: &[u8]) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
            if !self.0.is_kem() {
                let mine = self.1 + 2;
                return Ok((vec![mine ^ share[0]], vec![mine; self.0.wire_len().1]));
            }
            Ok((vec![share[0] + 1], vec![share[0]; self.0.wire_len().1]))
        }
    }

    #[test]
    fn a_hybrid_is_its_halves_in_wire_order_and_each_step_runs() {
        let kex = from_halves(Group::X25519Mlkem768, |p| Ok(Box::new(Toy(p, 5)))).unwrap();
        let (own, share) = kex.generate().unwrap();
        assert_eq!(share.len(), 1184 + 32);
        let (secret, reply) = kex.respond(&share).unwrap();
        assert_eq!(reply.len(), 1088 + 32);
        assert_eq!(kex.finish(own.as_ref(), &reply).unwrap(), secret);
        assert!(
            kex.respond(&share[1..]).is_err(),
            "a short share is refused"
        );
        for op in [
            CryptoOp::KeyShare(Group::X25519Mlkem768),
            CryptoOp::ServerShare(Group::X25519Mlkem768),
            CryptoOp::ClientSecret(Group::X25519Mlkem768),
        ] {
            let kex = from_halves(Group::X25519Mlkem768, |p| Ok(Box::new(Toy(p, 5)))).unwrap();
            let mut prepared = key_exchange_op(op, kex).unwrap();
            assert!(prepared.run().is_ok(), "{op}");
        }
    }

    /// A half that disagrees with its peer, or sends the wrong size, fails before any timing.
    #[test]
    fn a_key_exchange_that_does_not_agree_is_refused() {
        struct Lying;
        impl KeyExchange for Lying {
            fn generate(&self) -> anyhow::Result<(Box<dyn Any>, Vec<u8>)> {
                Ok((Box::new(()), vec![1; 32]))
            }
            fn finish(&self, _: &dyn Any, _: &[u8]) -> anyhow::Result<Vec<u8>> {
                Ok(vec![1])
            }
            fn respond(&self, _: &[u8]) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
                Ok((vec![2], vec![1; 32]))
            }
        }
        let op = CryptoOp::ServerShare(Group::X25519);
        let why = key_exchange_op(op, Box::new(Lying)).err().unwrap();
        assert!(why.contains("secrets differ"), "{why}");
        let wrong = from_halves(Group::Secp256r1Mlkem768, |p| {
            Ok(Box::new(Toy(p, 1)) as Box<dyn KeyExchange>)
        })
        .unwrap();
        assert!(wrong.generate().is_ok());
        let refused = from_halves(Group::Secp256r1Mlkem768, |_| {
            Err("no P-256 here".to_string())
        });
        assert_eq!(refused.err().unwrap(), "no P-256 here");
    }

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
