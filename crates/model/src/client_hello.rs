//! What a client offers, read off the first bytes it sends: the versions, the groups, the
//! groups it sends a key share for, and the signature schemes of its ClientHello. A library's
//! defaults are what its ClientHello says, whatever its documentation says.

use crate::codes;

/// A ClientHello's offer, in the client's order, GREASE values left out.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct HelloOffer {
    /// `supported_versions`, or the legacy version alone when the extension is absent.
    pub versions: Vec<u16>,
    /// `supported_groups`.
    pub groups: Vec<u16>,
    /// The groups of `key_share`'s entries: what a TLS 1.3 server can accept without a retry.
    pub key_shares: Vec<u16>,
    /// `signature_algorithms`.
    pub schemes: Vec<u16>,
    /// Whether the client sent GREASE values (RFC 8701) in any of these lists.
    pub grease: bool,
    /// The ClientHello's size in bytes (its handshake message, header included).
    pub bytes: usize,
}

/// Where reading the stream stands.
#[derive(Debug, PartialEq, Eq)]
pub enum Reading {
    /// The ClientHello is not whole yet.
    More,
    Done(HelloOffer),
    /// Not a ClientHello, or one this reader cannot follow: why.
    Malformed(String),
}

const HANDSHAKE: u8 = 22;
const CLIENT_HELLO: u8 = 1;
const EXT_SUPPORTED_GROUPS: u16 = 0x000a;
const EXT_SIGNATURE_ALGORITHMS: u16 = 0x000d;
const EXT_SUPPORTED_VERSIONS: u16 = 0x002b;
const EXT_KEY_SHARE: u16 = 0x0033;
/// A ClientHello larger than this is not one a library sends by default.
const LIMIT: usize = 64 * 1024;

/// RFC 8701's reserved values: both bytes equal, each 0x?A.
pub fn is_grease(v: u16) -> bool {
    v & 0x0f0f == 0x0a0a && v >> 8 == v & 0xff
}

/// Reads the first ClientHello from a client's byte stream, however its records split it.
pub fn read(stream: &[u8]) -> Reading {
    let mut message = Vec::new();
    let mut at = 0;
    while stream.len() - at >= 5 {
        if stream[at] != HANDSHAKE {
            return Reading::Malformed(format!(
                "the first bytes are a record of type {}, not a handshake record",
                stream[at]
            ));
        }
        let len = usize::from(u16::from_be_bytes([stream[at + 3], stream[at + 4]]));
        if stream.len() - at - 5 < len {
            break;
        }
        message.extend_from_slice(&stream[at + 5..at + 5 + len]);
        at += 5 + len;
        if message.len() >= 4 {
            if message[0] != CLIENT_HELLO {
                return Reading::Malformed(format!(
                    "the first handshake message has type {}, not ClientHello",
                    message[0]
                ));
            }
            let body = usize::from(message[1]) << 16
                | usize::from(message[2]) << 8
                | usize::from(message[3]);
            if body > LIMIT {
                return Reading::Malformed(format!("a ClientHello of {body} bytes"));
            }
            if message.len() >= 4 + body {
                return match parse(&message[4..4 + body]) {
                    Ok(mut offer) => {
                        offer.bytes = 4 + body;
                        Reading::Done(offer)
                    }
                    Err(e) => Reading::Malformed(e),
                };
            }
        }
    }
    if stream.len() > LIMIT {
        return Reading::Malformed(format!("{} bytes and no whole ClientHello", stream.len()));
    }
    Reading::More
}

/// A cursor over a message, every read checked.
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err(format!("the ClientHello ends inside its {what}"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u8(&mut self, what: &str) -> Result<usize, String> {
        Ok(usize::from(self.take(1, what)?[0]))
    }

    fn u16(&mut self, what: &str) -> Result<u16, String> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    /// A vector with a one- or two-byte length.
    fn vector(&mut self, len_bytes: usize, what: &str) -> Result<Bytes<'a>, String> {
        let n = if len_bytes == 1 {
            self.u8(what)?
        } else {
            usize::from(self.u16(what)?)
        };
        Ok(Bytes(self.take(n, what)?))
    }

    fn u16s(mut self, what: &str) -> Result<Vec<u16>, String> {
        let mut out = Vec::new();
        while !self.0.is_empty() {
            out.push(self.u16(what)?);
        }
        Ok(out)
    }
}

fn parse(body: &[u8]) -> Result<HelloOffer, String> {
    let mut b = Bytes(body);
    let legacy_version = b.u16("version")?;
    b.take(32, "random")?;
    b.vector(1, "session id")?;
    b.vector(2, "cipher suites")?;
    b.vector(1, "compression methods")?;
    let mut offer = HelloOffer {
        versions: vec![legacy_version],
        ..HelloOffer::default()
    };
    if b.0.is_empty() {
        return Ok(offer);
    }
    let mut exts = b.vector(2, "extensions")?;
    while !exts.0.is_empty() {
        let kind = exts.u16("extension type")?;
        let mut data = exts.vector(2, "extension")?;
        match kind {
            EXT_SUPPORTED_VERSIONS => {
                offer.versions = data
                    .vector(1, "supported_versions")?
                    .u16s("supported_versions")?
            }
            EXT_SUPPORTED_GROUPS => {
                offer.groups = data
                    .vector(2, "supported_groups")?
                    .u16s("supported_groups")?
            }
            EXT_SIGNATURE_ALGORITHMS => {
                offer.schemes = data
                    .vector(2, "signature_algorithms")?
                    .u16s("signature_algorithms")?
            }
            EXT_KEY_SHARE => {
                let mut shares = data.vector(2, "key_share")?;
                while !shares.0.is_empty() {
                    offer.key_shares.push(shares.u16("key_share group")?);
                    shares.vector(2, "key_share entry")?;
                }
            }
            _ => {}
        }
    }
    for list in [
        &mut offer.versions,
        &mut offer.groups,
        &mut offer.key_shares,
        &mut offer.schemes,
    ] {
        let before = list.len();
        list.retain(|&v| !is_grease(v));
        offer.grease |= list.len() != before;
    }
    Ok(offer)
}

impl HelloOffer {
    /// The post-quantum groups among `codes`, by name.
    pub fn post_quantum(codes: &[u16]) -> Vec<String> {
        codes
            .iter()
            .filter(|&&c| is_post_quantum_group(c))
            .map(|&c| group_name(c))
            .collect()
    }

    /// The ML-DSA schemes offered, by name.
    pub fn mldsa_schemes(&self) -> Vec<String> {
        self.schemes
            .iter()
            .filter(|&&c| (0x0904..=0x0906).contains(&c))
            .map(|&c| codes::scheme_name(c))
            .collect()
    }
}

/// A group by its name in IANA's registry ("x25519", "secp256r1", "X25519MLKEM768").
pub fn group_name(code: u16) -> String {
    let name = match code {
        0x0017 => "secp256r1",
        0x0018 => "secp384r1",
        0x0019 => "secp521r1",
        0x001d => "x25519",
        0x001e => "x448",
        0x0100 => "ffdhe2048",
        0x0101 => "ffdhe3072",
        0x0102 => "ffdhe4096",
        0x0103 => "ffdhe6144",
        0x0104 => "ffdhe8192",
        c => {
            return codes::openssl_group_name(c)
                .map_or_else(|| format!("0x{c:04x}"), str::to_string)
        }
    };
    name.into()
}

/// An ML-KEM group, pure or hybrid, or the draft Kyber hybrid some clients still send.
pub fn is_post_quantum_group(code: u16) -> bool {
    matches!(code, 0x0200..=0x0202 | 0x11eb..=0x11ed | 0x6399)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ClientHello with the given extensions, split into records of at most `record` bytes.
    fn hello(exts: &[(u16, Vec<u8>)], record: usize) -> Vec<u8> {
        let mut body = vec![0x03, 0x03];
        body.extend([7u8; 32]);
        body.push(0); // session id
        body.extend([0, 2, 0x13, 0x01]); // one suite
        body.extend([1, 0]); // null compression
        let mut e = Vec::new();
        for (kind, data) in exts {
            e.extend(kind.to_be_bytes());
            e.extend((data.len() as u16).to_be_bytes());
            e.extend(data);
        }
        body.extend((e.len() as u16).to_be_bytes());
        body.extend(e);
        let mut msg = vec![CLIENT_HELLO, 0, (body.len() >> 8) as u8, body.len() as u8];
        msg.extend(body);
        msg.chunks(record)
            .flat_map(|c| {
                let mut r = vec![HANDSHAKE, 3, 1, (c.len() >> 8) as u8, c.len() as u8];
                r.extend(c);
                r
            })
            .collect()
    }

    fn list16(v: &[u16], len_bytes: usize) -> Vec<u8> {
        let items: Vec<u8> = v.iter().flat_map(|x| x.to_be_bytes()).collect();
        let mut out = if len_bytes == 1 {
            vec![items.len() as u8]
        } else {
            (items.len() as u16).to_be_bytes().to_vec()
        };
        out.extend(items);
        out
    }

    fn shares(groups: &[(u16, usize)]) -> Vec<u8> {
        let mut entries = Vec::new();
        for &(g, n) in groups {
            entries.extend(g.to_be_bytes());
            entries.extend((n as u16).to_be_bytes());
            entries.extend(vec![0x55; n]);
        }
        let mut out = (entries.len() as u16).to_be_bytes().to_vec();
        out.extend(entries);
        out
    }

    #[test]
    fn reads_every_list_in_order_across_records_and_drops_grease() {
        let bytes = hello(
            &[
                (EXT_SUPPORTED_VERSIONS, list16(&[0x3a3a, 0x0304, 0x0303], 1)),
                (
                    EXT_SUPPORTED_GROUPS,
                    list16(&[0x2a2a, 0x11ec, 0x001d, 0x0017], 2),
                ),
                (
                    EXT_KEY_SHARE,
                    shares(&[(0x2a2a, 1), (0x11ec, 1216), (0x001d, 32)]),
                ),
                (
                    EXT_SIGNATURE_ALGORITHMS,
                    list16(&[0x0403, 0x0804, 0x0904], 2),
                ),
            ],
            700,
        );
        // Whole: read; one byte short: more.
        let Reading::Done(o) = read(&bytes) else {
            panic!("{:?}", read(&bytes))
        };
        assert_eq!(o.versions, [0x0304, 0x0303]);
        assert_eq!(o.groups, [0x11ec, 0x001d, 0x0017]);
        assert_eq!(o.key_shares, [0x11ec, 0x001d]);
        assert_eq!(o.schemes, [0x0403, 0x0804, 0x0904]);
        assert!(o.grease);
        assert_eq!(HelloOffer::post_quantum(&o.key_shares), ["X25519MLKEM768"]);
        assert_eq!(o.mldsa_schemes(), ["mldsa44"]);
        assert_eq!(read(&bytes[..bytes.len() - 1]), Reading::More);
    }

    #[test]
    fn refuses_what_is_not_a_client_hello() {
        assert!(matches!(read(&[23, 3, 3, 0, 1, 0]), Reading::Malformed(_)));
        // A ServerHello.
        assert!(matches!(
            read(&[22, 3, 3, 0, 4, 2, 0, 0, 0]),
            Reading::Malformed(_)
        ));
        // A key share entry longer than its extension.
        let mut bad = shares(&[(0x001d, 32)]);
        bad.truncate(bad.len() - 1);
        let bytes = hello(&[(EXT_KEY_SHARE, bad)], 16_384);
        let r = read(&bytes);
        assert!(
            matches!(&r, Reading::Malformed(e) if e.contains("key_share")),
            "{r:?}"
        );
    }
}
