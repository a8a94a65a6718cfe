//! The crypto floor of a handshake: the cryptographic operations one side must perform for a
//! scenario, whatever the library, read from its version, group, signature, resumption, mutual
//! authentication and chain length. A library's own primitives timed over this list are the
//! least its handshake can cost (`tlsmatrix run --measure floor`); what its handshake takes
//! above that is protocol, parsing, allocation and locking.
//!
//! The list is a floor, not an estimate: it leaves out what a stack may do but the protocol does
//! not require of it (ticket encryption, the resumption secret when no ticket is used, hashing
//! the transcript and the certificates' bodies, key-share validation beyond what the library's
//! key agreement call does), so a stack can never be below it.

use crate::scenario::{Aead, ConnParams, Extras, Group, SigAlg, Version};
use crate::side::Side;

/// The hash of a suite's HMACs: SHA-384 for AES-256-GCM, SHA-256 for the others (TLS 1.3's
/// suites and the TLS 1.2 ECDHE suites measured here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hash {
    Sha256,
    Sha384,
}

impl Hash {
    pub fn of(aead: Aead) -> Hash {
        match aead {
            Aead::Aes256Gcm => Hash::Sha384,
            Aead::Aes128Gcm | Aead::Chacha20Poly1305 => Hash::Sha256,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Hash::Sha256 => "SHA-256",
            Hash::Sha384 => "SHA-384",
        }
    }
}

/// One operation, as the two sides of a key exchange divide it. For a hybrid group each is
/// the whole hybrid (both key shares, both secrets), as TLS uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CryptoOp {
    /// The client's key share: a key pair (and for ML-KEM a decapsulation key) made.
    KeyShare(Group),
    /// The server's reply to a key share: its own key pair made and the secret agreed with
    /// the client's share (for ML-KEM, an encapsulation to the client's key).
    ServerShare(Group),
    /// The client's secret from the server's reply (agreement, decapsulation).
    ClientSecret(Group),
    /// A handshake signature (CertificateVerify, or TLS 1.2's ServerKeyExchange).
    Sign(SigAlg),
    /// One signature verified: the peer's handshake signature or one certificate's.
    Verify(SigAlg),
    /// One HMAC of a short input: each HKDF-Extract, HKDF-Expand-Label of up to one
    /// block, Finished MAC and TLS 1.2 PRF step is one.
    Hmac(Hash),
}

impl CryptoOp {
    /// The part of the floor it belongs to.
    pub fn part(self) -> FloorPart {
        match self {
            CryptoOp::KeyShare(_) | CryptoOp::ServerShare(_) | CryptoOp::ClientSecret(_) => {
                FloorPart::KeyExchange
            }
            CryptoOp::Sign(_) | CryptoOp::Verify(_) => FloorPart::Signatures,
            CryptoOp::Hmac(_) => FloorPart::KeySchedule,
        }
    }
}

impl CryptoOp {
    /// The fewest runs of the operation one sample's mean may rest on. ML-DSA signing loops
    /// until a candidate passes its norm checks (rejection sampling, FIPS 204): the loops a
    /// signature takes vary widely, so a mean over a few signatures swings by tens of
    /// percent, where a handshake batch averages its signatures over more.
    pub fn min_runs(self) -> u32 {
        match self {
            CryptoOp::Sign(s) if s.is_mldsa() => 64,
            _ => 1,
        }
    }
}

/// The fewest handshakes a mean over `params`'s handshake may rest on: the most any
/// operation either side performs needs ([`CryptoOp::min_runs`]); 1 where none varies.
pub fn min_handshakes(params: &ConnParams) -> u32 {
    [Side::Client, Side::Server]
        .into_iter()
        .flat_map(|side| operations(params, side))
        .map(|(op, _)| op.min_runs())
        .max()
        .unwrap_or(1)
}

impl std::fmt::Display for CryptoOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CryptoOp::KeyShare(g) => write!(f, "{g} key share"),
            CryptoOp::ServerShare(g) => write!(f, "{g} server share and secret"),
            CryptoOp::ClientSecret(g) => write!(f, "{g} client secret"),
            CryptoOp::Sign(s) => write!(f, "{s} sign"),
            CryptoOp::Verify(s) => write!(f, "{s} verify"),
            CryptoOp::Hmac(h) => write!(f, "HMAC-{}", h.as_str()),
        }
    }
}

/// One half of a group's key exchange, as a library that builds a hybrid from its halves
/// performs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KexPart {
    X25519,
    P256,
    P384,
    MlKem512,
    MlKem768,
    MlKem1024,
}

impl KexPart {
    /// Whether it is a KEM (the server encapsulates) rather than a Diffie-Hellman agreement.
    pub fn is_kem(self) -> bool {
        matches!(
            self,
            KexPart::MlKem512 | KexPart::MlKem768 | KexPart::MlKem1024
        )
    }

    /// The bytes of its key share and of the server's reply: an uncompressed point for the
    /// NIST curves; an encapsulation key and a ciphertext for ML-KEM (FIPS 203, table 3).
    pub fn wire_len(self) -> (usize, usize) {
        match self {
            KexPart::X25519 => (32, 32),
            KexPart::P256 => (65, 65),
            KexPart::P384 => (97, 97),
            KexPart::MlKem512 => (800, 768),
            KexPart::MlKem768 => (1184, 1088),
            KexPart::MlKem1024 => (1568, 1568),
        }
    }

    /// The group of this part alone, where TLS has one.
    pub fn group(self) -> Group {
        match self {
            KexPart::X25519 => Group::X25519,
            KexPart::P256 => Group::P256,
            KexPart::P384 => Group::P384,
            KexPart::MlKem512 => Group::Mlkem512,
            KexPart::MlKem768 => Group::Mlkem768,
            KexPart::MlKem1024 => Group::Mlkem1024,
        }
    }
}

/// A group's halves in the order its key share puts them on the wire: ML-KEM first for
/// X25519MLKEM768, the curve first for the SecP hybrids (draft-ietf-tls-ecdhe-mlkem).
pub fn kex_parts(g: Group) -> &'static [KexPart] {
    match g {
        Group::X25519 => &[KexPart::X25519],
        Group::P256 => &[KexPart::P256],
        Group::P384 => &[KexPart::P384],
        Group::Mlkem512 => &[KexPart::MlKem512],
        Group::Mlkem768 => &[KexPart::MlKem768],
        Group::Mlkem1024 => &[KexPart::MlKem1024],
        Group::X25519Mlkem768 => &[KexPart::MlKem768, KexPart::X25519],
        Group::Secp256r1Mlkem768 => &[KexPart::P256, KexPart::MlKem768],
        Group::Secp384r1Mlkem1024 => &[KexPart::P384, KexPart::MlKem1024],
    }
}

/// The three parts a floor is reported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloorPart {
    KeyExchange,
    Signatures,
    KeySchedule,
}

impl FloorPart {
    pub const ALL: [FloorPart; 3] = [
        FloorPart::KeyExchange,
        FloorPart::Signatures,
        FloorPart::KeySchedule,
    ];
}

/// HMACs of TLS 1.3's key schedule (RFC 8446 7.1) for one side of a full handshake: three
/// extracts; "derived" twice, the two handshake and two application traffic secrets and the
/// exporter master secret; a key and an IV for each of the four traffic secrets; the two
/// finished keys and the two Finished MACs (one made, one checked).
const TLS13_FULL_HMACS: u32 = 3 + 2 + 4 + 1 + 8 + 2 + 2;
/// A PSK handshake adds the PSK from the resumption secret, the binder key, its finished key
/// and the binder itself (made by the client, checked by the server).
const TLS13_PSK_HMACS: u32 = 4;
/// TLS 1.2's PRF (RFC 5246 5) with a 32-byte hash: two HMACs per output block, so the master
/// secret (48 bytes) four, the key block of an AEAD suite four (AES-256-GCM with SHA-384, 72
/// bytes in 48-byte blocks, four too), each Finished (12 bytes) two, made and checked.
const TLS12_MASTER_HMACS: u32 = 4;
const TLS12_KEY_BLOCK_HMACS: u32 = 4;
const TLS12_FINISHED_HMACS: u32 = 2 * 2;

/// The operations `side` must perform in one handshake of `params`, each with its count.
pub fn operations(params: &ConnParams, side: Side) -> Vec<(CryptoOp, u32)> {
    let resumed = params.resumption.is_resumed();
    let mut ops = Vec::new();
    // TLS 1.2 resumes without a key exchange; TLS 1.3 resumes with psk_dhe_ke, as every
    // stack here does by default.
    let exchanges = !(resumed && params.version == Version::Tls12);
    if exchanges {
        match side {
            Side::Client => {
                if params.extras.hrr {
                    ops.push((CryptoOp::KeyShare(Extras::hrr_decoy(params.group)), 1));
                }
                ops.push((CryptoOp::KeyShare(params.group), 1));
                ops.push((CryptoOp::ClientSecret(params.group), 1));
            }
            Side::Server => ops.push((CryptoOp::ServerShare(params.group), 1)),
        }
    }
    if !resumed {
        // The server proves its key and the client checks it and each certificate of the
        // chain (the root signed the last one); with mutual TLS the other way round, one
        // client certificate signed by the root.
        let chain = params.extras.chain.certificates() as u32;
        let (signs, verifies) = match (side, params.extras.mtls) {
            (Side::Server, false) => (1, 0),
            (Side::Server, true) => (1, 2),
            (Side::Client, false) => (0, 1 + chain),
            (Side::Client, true) => (1, 1 + chain),
        };
        if signs > 0 {
            ops.push((CryptoOp::Sign(params.sig), signs));
        }
        if verifies > 0 {
            ops.push((CryptoOp::Verify(params.sig), verifies));
        }
    }
    let hmacs = match (params.version, resumed) {
        (Version::Tls13, false) => TLS13_FULL_HMACS,
        (Version::Tls13, true) => TLS13_FULL_HMACS + TLS13_PSK_HMACS,
        (Version::Tls12, false) => {
            TLS12_MASTER_HMACS + TLS12_KEY_BLOCK_HMACS + TLS12_FINISHED_HMACS
        }
        (Version::Tls12, true) => TLS12_KEY_BLOCK_HMACS + TLS12_FINISHED_HMACS,
    };
    ops.push((CryptoOp::Hmac(Hash::of(params.aead)), hmacs));
    ops
}

/// The operations of both sides as one command-line argument, which the runner hands each
/// driver (`--floor-ops`) so that a driver in another language times the list this module
/// makes rather than one of its own: `side:op:arg:count` entries joined by `;`, e.g.
/// `client:key-share:x25519:1;server:sign:ecdsa-p256:1;server:hmac:sha256:22`.
pub fn encode(params: &ConnParams) -> String {
    let mut out = Vec::new();
    for side in [Side::Client, Side::Server] {
        for (op, n) in operations(params, side) {
            let (kind, arg) = match op {
                CryptoOp::KeyShare(g) => ("key-share", g.as_str()),
                CryptoOp::ServerShare(g) => ("server-share", g.as_str()),
                CryptoOp::ClientSecret(g) => ("client-secret", g.as_str()),
                CryptoOp::Sign(s) => ("sign", s.as_str()),
                CryptoOp::Verify(s) => ("verify", s.as_str()),
                CryptoOp::Hmac(Hash::Sha256) => ("hmac", "sha256"),
                CryptoOp::Hmac(Hash::Sha384) => ("hmac", "sha384"),
            };
            out.push(format!("{side}:{kind}:{arg}:{n}"));
        }
    }
    out.join(";")
}

/// The operations an [`encode`]d argument lists, each with its side and count.
pub fn decode(text: &str) -> Result<Vec<(Side, CryptoOp, u32)>, String> {
    use crate::scenario::Axis;
    text.split(';')
        .map(|entry| {
            let bad = || format!("'{entry}' is not side:op:arg:count");
            let parts: Vec<&str> = entry.split(':').collect();
            let [side, kind, arg, n] = parts[..] else {
                return Err(bad());
            };
            let side = match side {
                "client" => Side::Client,
                "server" => Side::Server,
                _ => return Err(bad()),
            };
            let op = match kind {
                "key-share" => CryptoOp::KeyShare(Group::named(arg)?),
                "server-share" => CryptoOp::ServerShare(Group::named(arg)?),
                "client-secret" => CryptoOp::ClientSecret(Group::named(arg)?),
                "sign" => CryptoOp::Sign(SigAlg::named(arg)?),
                "verify" => CryptoOp::Verify(SigAlg::named(arg)?),
                "hmac" if arg == "sha256" => CryptoOp::Hmac(Hash::Sha256),
                "hmac" if arg == "sha384" => CryptoOp::Hmac(Hash::Sha384),
                _ => return Err(bad()),
            };
            Ok((side, op, n.parse().map_err(|_| bad())?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_group_is_its_halves_and_a_single_half_is_its_own_group() {
        for &g in Group::ALL {
            let parts = kex_parts(g);
            assert_eq!(
                parts.len(),
                if g.is_post_quantum() && parts.iter().any(|p| !p.is_kem()) {
                    2
                } else {
                    1
                },
                "{g}"
            );
            assert_eq!(parts.iter().any(|p| p.is_kem()), g.is_post_quantum(), "{g}");
            if let [one] = parts {
                assert_eq!(one.group(), g);
            }
        }
        // The client's X25519MLKEM768 share: 1184 + 32 bytes (draft-ietf-tls-ecdhe-mlkem).
        let share: usize = kex_parts(Group::X25519Mlkem768)
            .iter()
            .map(|p| p.wire_len().0)
            .sum();
        assert_eq!(share, 1216);
    }
    use crate::scenario::Scenario;

    fn ops(id: &str, side: Side) -> Vec<(CryptoOp, u32)> {
        operations(&id.parse::<Scenario>().unwrap().params(), side)
    }

    fn count(ops: &[(CryptoOp, u32)], f: impl Fn(CryptoOp) -> bool) -> u32 {
        ops.iter().filter(|(o, _)| f(*o)).map(|(_, n)| n).sum()
    }

    #[test]
    fn a_full_tls13_handshake_signs_once_and_verifies_the_chain_and_the_signature() {
        let server = ops("handshake-tls13-ecdsa-p256-x25519-full", Side::Server);
        let client = ops("handshake-tls13-ecdsa-p256-x25519-full", Side::Client);
        assert_eq!(count(&server, |o| matches!(o, CryptoOp::Sign(_))), 1);
        assert_eq!(count(&server, |o| matches!(o, CryptoOp::Verify(_))), 0);
        assert_eq!(count(&client, |o| matches!(o, CryptoOp::Verify(_))), 2);
        assert!(client.contains(&(CryptoOp::KeyShare(Group::X25519), 1)));
        assert!(server.contains(&(CryptoOp::ServerShare(Group::X25519), 1)));
        let chain4 = ops(
            "handshake-tls13-ecdsa-p256-x25519-full-chain4",
            Side::Client,
        );
        assert_eq!(count(&chain4, |o| matches!(o, CryptoOp::Verify(_))), 5);
        let mtls = ops("handshake-tls13-ecdsa-p256-x25519-full-mtls", Side::Server);
        assert_eq!(count(&mtls, |o| matches!(o, CryptoOp::Verify(_))), 2);
    }

    #[test]
    fn resumption_drops_the_signatures_and_tls12_resumption_the_key_exchange() {
        let t13 = ops("handshake-tls13-ecdsa-p256-x25519-ticket", Side::Server);
        assert!(t13.iter().all(|(o, _)| o.part() != FloorPart::Signatures));
        assert!(t13.contains(&(CryptoOp::ServerShare(Group::X25519), 1)));
        let t12 = ops("handshake-tls12-ecdsa-p256-x25519-session-id", Side::Client);
        assert_eq!(t12, vec![(CryptoOp::Hmac(Hash::Sha256), 8)]);
    }

    #[test]
    fn the_argument_decodes_to_the_same_operations() {
        for id in [
            "handshake-tls13-ecdsa-p256-x25519mlkem768-full-mtls",
            "handshake-tls12-rsa-2048-p256-full",
            "handshake-tls13-ecdsa-p256-x25519-ticket",
        ] {
            let params = id.parse::<Scenario>().unwrap().params();
            let mut want = Vec::new();
            for side in [Side::Client, Side::Server] {
                want.extend(
                    operations(&params, side)
                        .into_iter()
                        .map(|(o, n)| (side, o, n)),
                );
            }
            assert_eq!(decode(&encode(&params)).unwrap(), want, "{id}");
        }
        assert!(decode("client:sign:dsa:1").is_err());
        assert!(decode("client:sign:ecdsa-p256").is_err());
    }

    #[test]
    fn a_retried_hello_makes_a_second_key_share() {
        let client = ops("handshake-tls13-ecdsa-p256-x25519-full-hrr", Side::Client);
        assert_eq!(count(&client, |o| matches!(o, CryptoOp::KeyShare(_))), 2);
    }
}
