//! Interop cases: what a client and a server offer, what travels between them, and how the
//! case must end. Every peer, ours or a tool's, runs the same case by id, and the runner
//! judges the outcome against `expect`.

use crate::scenario::{Aead, ConnParams, Extras, Group, Resumption, SigAlg, Version};
use crate::side::Side;

/// One side's offer: a single version, suite, group and certificate key, so that what is
/// negotiated is known in advance and checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    pub version: Version,
    pub aead: Aead,
    pub sig: SigAlg,
    pub group: Group,
    /// A group offered before `group`, with the only key share the client sends, that the
    /// server does not accept: the server must answer with a HelloRetryRequest for `group`.
    pub first: Option<Group>,
    /// ALPN protocols offered or accepted, most preferred first.
    pub alpn: &'static [&'static str],
    /// With anything but `Full`, the client connects twice and the second connection must
    /// resume the first one's session this way.
    pub resumption: Resumption,
}

impl Offer {
    pub const fn tls13() -> Offer {
        Offer {
            version: Version::Tls13,
            aead: Aead::Aes128Gcm,
            sig: SigAlg::EcdsaP256,
            group: Group::X25519,
            first: None,
            alpn: &[],
            resumption: Resumption::Full,
        }
    }

    pub const fn tls12() -> Offer {
        Offer {
            version: Version::Tls12,
            ..Offer::tls13()
        }
    }

    const fn aead(self, aead: Aead) -> Offer {
        Offer { aead, ..self }
    }

    const fn sig(self, sig: SigAlg) -> Offer {
        Offer { sig, ..self }
    }

    const fn group(self, group: Group) -> Offer {
        Offer { group, ..self }
    }

    const fn first(self, first: Group) -> Offer {
        Offer {
            first: Some(first),
            ..self
        }
    }

    const fn alpn(self, alpn: &'static [&'static str]) -> Offer {
        Offer { alpn, ..self }
    }

    const fn resume(self, resumption: Resumption) -> Offer {
        Offer { resumption, ..self }
    }

    /// The groups in the order offered.
    pub fn groups(&self) -> Vec<Group> {
        self.first.into_iter().chain([self.group]).collect()
    }

    pub fn params(&self) -> ConnParams {
        ConnParams {
            version: self.version,
            sig: self.sig,
            group: self.group,
            aead: self.aead,
            resumption: self.resumption,
            extras: Extras::default(),
        }
    }

    /// What connection `n` (from 0) of a case must negotiate: the first is always a full
    /// handshake, the one after it resumes when the offer says so.
    pub fn params_of_connection(&self, n: usize) -> ConnParams {
        let mut p = self.params();
        if n == 0 {
            p.resumption = Resumption::Full;
        }
        p
    }
}

/// How a case must end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Handshake, the negotiated parameters as offered, the payload echoed intact, and
    /// close_notify both ways.
    Pass,
    /// The handshake must fail with the server refusing: the client must report receiving
    /// this alert (e.g. `protocol_version`), not just any failure.
    Alert(&'static str),
    /// The server drops the connection without close_notify after the echo; the client must
    /// notice the truncation and say so.
    Truncation,
    /// The client must refuse the server (e.g. not the peer it dialled) and the server must
    /// be told with an alert.
    ClientRefuses,
}

/// Which protocol a case speaks, and so which peers can take part: plain TLS peers, or
/// libp2p TLS security peers (certificates carry peer ids; no CA, no SNI, ALPN "libp2p"), or
/// QUIC peers (TLS 1.3 inside QUIC version 1 over UDP, ALPN "hq-interop").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Tls,
    Libp2p,
    Quic,
}

/// The ALPN protocol QUIC cases offer: the QUIC interop runner's.
pub const QUIC_ALPN: &str = "hq-interop";

#[derive(Debug, Clone, Copy)]
pub struct Case {
    pub id: &'static str,
    pub about: &'static str,
    pub client: Offer,
    pub server: Offer,
    /// Bytes the client sends and the server echoes.
    pub bytes: usize,
    /// The client's write size (one record each, up to 16 KiB).
    pub write_size: usize,
    pub expect: Expect,
    /// The ALPN protocol both sides must report, when the case offers ALPN.
    pub alpn: Option<&'static str>,
    /// The server must report receiving this host name as SNI.
    pub sni: Option<&'static str>,
    /// The client sends a KeyUpdate halfway through the payload.
    pub key_update: bool,
    /// Mutual TLS: the server requires a client certificate; the client presents one unless
    /// the case is about its absence.
    pub require_client_cert: bool,
    pub client_cert: bool,
    /// In the `--quick` subset.
    pub quick: bool,
    pub family: Family,
    /// libp2p: the client dials a peer id other than the server's.
    pub wrong_peer_id: bool,
}

const KIB: usize = 1024;

/// What a libp2p client sends and expects echoed.
pub const LIBP2P_MESSAGE: &str = "tlsmatrix libp2p interop";

impl Case {
    /// What `side` offers.
    pub fn offer(&self, side: Side) -> &Offer {
        match side {
            Side::Client => &self.client,
            Side::Server => &self.server,
        }
    }

    /// Connections the client makes: two when the second must resume the first.
    pub fn connections(&self) -> usize {
        if self.client.resumption.is_resumed() {
            2
        } else {
            1
        }
    }

    /// A case that passes, echoing 64 KiB in 4 KiB writes.
    const fn new(id: &'static str, about: &'static str, client: Offer, server: Offer) -> Case {
        Case {
            id,
            about,
            client,
            server,
            bytes: 64 * KIB,
            write_size: 4 * KIB,
            expect: Expect::Pass,
            alpn: None,
            sni: None,
            key_update: false,
            require_client_cert: false,
            client_cert: false,
            quick: false,
            family: Family::Tls,
            wrong_peer_id: false,
        }
    }

    /// A libp2p case: the offers are the libp2p TLS profile (TLS 1.3, each peer's own
    /// certificate), which the peers fix themselves; a short message is echoed.
    const fn libp2p(id: &'static str, about: &'static str) -> Case {
        Case {
            family: Family::Libp2p,
            ..Case::same(id, about, Offer::tls13()).sized(LIBP2P_MESSAGE.len(), 64)
        }
    }

    /// A QUIC case: both sides offer `offer` with ALPN hq-interop inside QUIC version 1 over
    /// UDP; once the handshake is done with what the case names, the client asks `GET /N`
    /// on a stream and reads the server's N-byte answer to the stream's end, as the QUIC
    /// interop runner's cases download a file. `bytes` is N: 1 KiB unless the case is
    /// about the transfer.
    const fn quic(id: &'static str, about: &'static str, offer: Offer) -> Case {
        Case {
            family: Family::Quic,
            alpn: Some(QUIC_ALPN),
            ..Case::same(id, about, offer.alpn(&[QUIC_ALPN])).sized(KIB, 0)
        }
    }

    const fn same(id: &'static str, about: &'static str, offer: Offer) -> Case {
        Case::new(id, about, offer, offer)
    }

    const fn quick(self) -> Case {
        Case {
            quick: true,
            ..self
        }
    }

    const fn sized(self, bytes: usize, write_size: usize) -> Case {
        Case {
            bytes,
            write_size,
            ..self
        }
    }

    /// A case that must fail: nothing to echo.
    const fn failing(self, expect: Expect) -> Case {
        Case {
            expect,
            bytes: 0,
            write_size: 1,
            ..self
        }
    }
}

pub const CASES: &[Case] = &[
    Case::same("tls13", "TLS 1.3, AES-128-GCM, X25519, ECDSA P-256", Offer::tls13()).quick(),
    Case::same(
        "tls12",
        "TLS 1.2, ECDHE-ECDSA-AES128-GCM-SHA256, X25519",
        Offer::tls12(),
    )
    .quick(),
    Case::new(
        "version-mismatch",
        "a TLS 1.2-only client against a TLS 1.3-only server: must fail with protocol_version",
        Offer::tls12(),
        Offer::tls13(),
    )
    .failing(Expect::Alert("protocol_version"))
    .quick(),
    Case::same(
        "tls13-aes-256-gcm",
        "TLS_AES_256_GCM_SHA384",
        Offer::tls13().aead(Aead::Aes256Gcm),
    ),
    Case::same(
        "tls13-chacha20-poly1305",
        "TLS_CHACHA20_POLY1305_SHA256",
        Offer::tls13().aead(Aead::Chacha20Poly1305),
    ),
    Case::same(
        "tls12-ecdhe-ecdsa-aes-256-gcm",
        "TLS 1.2 ECDHE-ECDSA-AES256-GCM-SHA384",
        Offer::tls12().aead(Aead::Aes256Gcm),
    ),
    Case::same(
        "tls12-ecdhe-ecdsa-chacha20-poly1305",
        "TLS 1.2 ECDHE-ECDSA-CHACHA20-POLY1305",
        Offer::tls12().aead(Aead::Chacha20Poly1305),
    ),
    Case::same(
        "tls12-ecdhe-rsa-aes-128-gcm",
        "TLS 1.2 ECDHE-RSA-AES128-GCM-SHA256, RSA-2048 certificate",
        Offer::tls12().sig(SigAlg::Rsa2048),
    ),
    Case::same(
        "group-p256",
        "TLS 1.3 key exchange on secp256r1",
        Offer::tls13().group(Group::P256),
    ),
    Case::same(
        "group-x25519mlkem768",
        "TLS 1.3 hybrid post-quantum key exchange X25519MLKEM768",
        Offer::tls13().group(Group::X25519Mlkem768),
    ),
    Case::same(
        "group-secp256r1mlkem768",
        "TLS 1.3 hybrid post-quantum key exchange SecP256r1MLKEM768",
        Offer::tls13().group(Group::Secp256r1Mlkem768),
    ),
    Case::same(
        "group-mlkem768",
        "TLS 1.3 pure post-quantum key exchange MLKEM768",
        Offer::tls13().group(Group::Mlkem768),
    ),
    Case::same(
        "group-secp384r1mlkem1024",
        "TLS 1.3 hybrid post-quantum key exchange SecP384r1MLKEM1024",
        Offer::tls13().group(Group::Secp384r1Mlkem1024),
    ),
    Case::same(
        "group-mlkem512",
        "TLS 1.3 pure post-quantum key exchange MLKEM512",
        Offer::tls13().group(Group::Mlkem512),
    ),
    Case::same(
        "group-mlkem1024",
        "TLS 1.3 pure post-quantum key exchange MLKEM1024",
        Offer::tls13().group(Group::Mlkem1024),
    ),
    Case::same(
        "sig-mldsa44",
        "TLS 1.3 with an ML-DSA-44 certificate chain and signature",
        Offer::tls13().sig(SigAlg::MlDsa44),
    ),
    Case::same(
        "sig-mldsa65",
        "TLS 1.3 with an ML-DSA-65 certificate chain and signature",
        Offer::tls13().sig(SigAlg::MlDsa65),
    ),
    Case::same(
        "sig-mldsa87",
        "TLS 1.3 with an ML-DSA-87 certificate chain and signature",
        Offer::tls13().sig(SigAlg::MlDsa87),
    ),
    Case::new(
        "hrr",
        "HelloRetryRequest: the client's one key share is X25519, the server takes only P-256",
        Offer::tls13().group(Group::P256).first(Group::X25519),
        Offer::tls13().group(Group::P256),
    )
    .quick(),
    Case {
        alpn: Some("http/1.1"),
        ..Case::new(
            "alpn",
            "ALPN: the client offers h2 then http/1.1, the server accepts http/1.1",
            Offer::tls13().alpn(&["h2", "http/1.1"]),
            Offer::tls13().alpn(&["http/1.1"]),
        )
        .sized(4 * KIB, 4 * KIB)
        .quick()
    },
    Case::new(
        "alpn-mismatch",
        "ALPN with nothing in common: the server must refuse with no_application_protocol",
        Offer::tls13().alpn(&["h2"]),
        Offer::tls13().alpn(&["http/1.1"]),
    )
    .failing(Expect::Alert("no_application_protocol")),
    Case {
        sni: Some(crate::scenario::SERVER_NAME),
        ..Case::same(
            "sni",
            "SNI: the client sends localhost and the server must see it",
            Offer::tls13(),
        )
        .sized(4 * KIB, 4 * KIB)
    },
    Case {
        require_client_cert: true,
        client_cert: true,
        ..Case::same(
            "mtls",
            "mutual TLS: the server requires a client certificate from its CA; the client sends one",
            Offer::tls13(),
        )
        .quick()
    },
    Case {
        require_client_cert: true,
        ..Case::same(
            "mtls-missing",
            "the server requires a client certificate and gets none: must fail with certificate_required",
            Offer::tls13(),
        )
        .failing(Expect::Alert("certificate_required"))
    },
    Case {
        key_update: true,
        ..Case::same(
            "key-update",
            "TLS 1.3 KeyUpdate from the client halfway through the payload",
            Offer::tls13(),
        )
    },
    Case::same(
        "sig-rsa-pss",
        "TLS 1.3 with an RSA-2048 certificate: rsa_pss_rsae_sha256",
        Offer::tls13().sig(SigAlg::Rsa2048),
    )
    .quick(),
    Case::same(
        "sig-ecdsa-p384",
        "TLS 1.3 with an ECDSA P-384 certificate: ecdsa_secp384r1_sha384",
        Offer::tls13().sig(SigAlg::EcdsaP384),
    ),
    Case::same(
        "sig-ed25519",
        "TLS 1.3 with an Ed25519 certificate",
        Offer::tls13().sig(SigAlg::Ed25519),
    ),
    Case::same(
        "resume-session-id",
        "TLS 1.2 resumption by session id: the second connection must resume the first",
        Offer::tls12().resume(Resumption::SessionId),
    )
    .sized(4 * KIB, 4 * KIB)
    .quick(),
    Case::same(
        "resume-ticket-tls12",
        "TLS 1.2 resumption by session ticket (RFC 5077)",
        Offer::tls12().resume(Resumption::Ticket),
    )
    .sized(4 * KIB, 4 * KIB),
    Case::same(
        "resume-ticket-tls13",
        "TLS 1.3 resumption by ticket (PSK with a fresh key exchange)",
        Offer::tls13().resume(Resumption::Ticket),
    )
    .sized(4 * KIB, 4 * KIB)
    .quick(),
    Case::same(
        "transfer-10mib",
        "10 MiB each way in full 16 KiB records",
        Offer::tls13(),
    )
    .sized(10 * KIB * KIB, 16 * KIB),
    Case {
        expect: Expect::Truncation,
        ..Case::same(
            "no-close-notify",
            "the server drops the connection without close_notify; the client must report the truncation",
            Offer::tls13(),
        )
        .sized(4 * KIB, 4 * KIB)
        .quick()
    },
    Case::libp2p(
        "libp2p",
        "libp2p TLS handshake: each side proves its peer id in its certificate and checks the other's; then an echo",
    )
    .quick(),
    Case {
        wrong_peer_id: true,
        ..Case::libp2p(
            "libp2p-wrong-peer-id",
            "libp2p: the client dials another peer id than the server's; it must refuse, and the server must get an alert",
        )
        .failing(Expect::ClientRefuses)
        .quick()
    },
    Case::quic(
        "quic-handshake",
        "QUIC v1 handshake and a 1 KiB hq-interop download (the QUIC interop runner's handshake): TLS 1.3, AES-128-GCM, X25519, ECDSA P-256",
        Offer::tls13(),
    )
    .quick(),
    Case::quic(
        "quic-transfer",
        "QUIC v1: a 1 MiB hq-interop download on one stream, through flow control and the congestion window (the QUIC interop runner's transfer, one file)",
        Offer::tls13(),
    )
    .sized(1024 * KIB, 0),
    Case::quic(
        "quic-resumption",
        "QUIC v1: a 1 KiB download, then a second connection that resumes the first by its ticket and downloads 1 KiB again (the QUIC interop runner's resumption)",
        Offer::tls13().resume(Resumption::Ticket),
    ),
    Case::quic(
        "quic-chacha20",
        "QUIC v1 handshake with ChaCha20-Poly1305 only and a 1 KiB download (the QUIC interop runner's chacha20)",
        Offer::tls13().aead(Aead::Chacha20Poly1305),
    ),
    Case::quic(
        "quic-x25519mlkem768",
        "QUIC v1 handshake with the hybrid X25519MLKEM768, whose ClientHello fills more than one Initial datagram, and a 1 KiB download",
        Offer::tls13().group(Group::X25519Mlkem768),
    ),
    Case::quic(
        "quic-mldsa44",
        "QUIC v1 handshake with an ML-DSA-44 chain, which the amplification limit holds back a round trip, and a 1 KiB download",
        Offer::tls13().sig(SigAlg::MlDsa44),
    ),
];

pub fn case(id: &str) -> Result<&'static Case, String> {
    CASES.iter().find(|c| c.id == id).ok_or_else(|| {
        let ids: Vec<&str> = CASES.iter().map(|c| c.id).collect();
        format!("unknown case '{id}'; cases: {}", ids.join(", "))
    })
}

/// What a server sends back: the bytes themselves, or (`openssl s_server -rev`, the only
/// echo that tool has) each line reversed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Echo {
    #[default]
    Same,
    ReversedLines,
}

impl Echo {
    /// As `--echo` spells it, for the drivers' peers and Go's.
    pub fn as_str(self) -> &'static str {
        match self {
            Echo::Same => "same",
            Echo::ReversedLines => "reversed-lines",
        }
    }

    pub fn parse(s: &str) -> Result<Echo, String> {
        [Echo::Same, Echo::ReversedLines]
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| format!("unknown echo '{s}' (same, reversed-lines)"))
    }

    /// What the client must read back for `sent` (whole lines).
    pub fn expected(self, sent: &[u8]) -> Vec<u8> {
        match self {
            Echo::Same => sent.to_vec(),
            Echo::ReversedLines => sent
                .split_inclusive(|&b| b == b'\n')
                .flat_map(|line| {
                    let body = line.strip_suffix(b"\n").unwrap_or(line);
                    body.iter()
                        .rev()
                        .copied()
                        .chain(line.ends_with(b"\n").then_some(b'\n'))
                        .collect::<Vec<u8>>()
                })
                .collect(),
        }
    }
}

/// The bytes a client sends: printable lines, so that line-oriented tools can carry them.
pub fn payload(len: usize) -> Vec<u8> {
    const LINE: usize = 64;
    (0..len)
        .map(|i| {
            if i % LINE == LINE - 1 {
                b'\n'
            } else {
                b'!' + ((i * 7 + i / LINE) % 90) as u8
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_found() {
        for c in CASES {
            assert_eq!(case(c.id).unwrap().id, c.id);
            // A QUIC case's bytes are the answer to its hq-interop request, written as the
            // stack takes them: no write size of its own.
            match c.family {
                Family::Quic => {
                    assert_eq!(c.write_size, 0, "{}", c.id);
                    let transfer = c.id == "quic-transfer";
                    assert_eq!(c.bytes, if transfer { 1 << 20 } else { KIB }, "{}", c.id);
                }
                _ => assert!(c.write_size > 0 && c.write_size <= 16 * KIB),
            }
        }
        assert!(case("nope").unwrap_err().contains("tls13"));
        let mut ids: Vec<_> = CASES.iter().map(|c| c.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), CASES.len());
    }

    #[test]
    fn quic_cases_offer_tls13_and_hq_interop_on_both_sides() {
        let quic: Vec<_> = CASES.iter().filter(|c| c.family == Family::Quic).collect();
        assert_eq!(quic.len(), 6);
        for c in quic {
            assert!(c.id.starts_with("quic-"), "{}", c.id);
            assert_eq!(c.alpn, Some(QUIC_ALPN));
            for offer in [&c.client, &c.server] {
                assert_eq!(offer.version, Version::Tls13);
                assert_eq!(offer.alpn, [QUIC_ALPN]);
                // QUIC resumes by ticket only (RFC 9001 §4.5), in one case, on two connections.
                let resumes = c.id == "quic-resumption";
                let by = if resumes {
                    Resumption::Ticket
                } else {
                    Resumption::Full
                };
                assert_eq!(offer.resumption, by, "{}", c.id);
                assert_eq!(c.connections(), if resumes { 2 } else { 1 });
            }
        }
    }

    #[test]
    fn reversed_lines_keep_their_newlines() {
        assert_eq!(Echo::ReversedLines.expected(b"abc\nxy\n"), b"cba\nyx\n");
        assert_eq!(Echo::Same.expected(b"abc\n"), b"abc\n");
    }

    #[test]
    fn payload_is_printable_lines() {
        let p = payload(1000);
        assert!(p.iter().all(|&b| b == b'\n' || (b'!'..=b'~').contains(&b)));
        assert_eq!(p[63], b'\n');
    }
}
