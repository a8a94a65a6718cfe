//! What a server's first flight says in the clear, read off the bytes as they cross: for an
//! adapter whose library does not report what it negotiated (Mbed TLS has no call for the
//! group, the signature scheme or whether it resumed). The wire is the better witness anyway:
//! it is what the peer received, not what a library believes it sent.
//!
//! From the server's records before the first encrypted one it reads: the ServerHello's
//! `key_share` group (TLS 1.3; a HelloRetryRequest names the same group) and
//! `pre_shared_key` (resumed); in TLS 1.2, the ServerKeyExchange's named curve and signature
//! scheme, and whether a Certificate came before the ChangeCipherSpec (a resumed TLS 1.2
//! handshake sends none). TLS 1.3's CertificateVerify is encrypted, so its scheme is not here.

/// Fed the server's byte stream, as the server writes it or the client reads it.
#[derive(Debug, Default)]
pub struct ServerFlight {
    /// Unparsed stream bytes: a record not yet whole.
    pending: Vec<u8>,
    /// Handshake-record bodies: a message not yet whole.
    messages: Vec<u8>,
    tls13: bool,
    saw_server_hello: bool,
    saw_certificate: bool,
    psk: bool,
    group: Option<u16>,
    tls12_scheme: Option<u16>,
    /// The flight's clear part has ended (or was not understood): nothing more is read.
    done: bool,
    /// Why reading stopped early, for a test to see.
    malformed: bool,
}

const CHANGE_CIPHER_SPEC: u8 = 20;
const HANDSHAKE: u8 = 22;
const APPLICATION_DATA: u8 = 23;
const SERVER_HELLO: u8 = 2;
const CERTIFICATE: u8 = 11;
const SERVER_KEY_EXCHANGE: u8 = 12;
const SERVER_HELLO_DONE: u8 = 14;
const EXT_PRE_SHARED_KEY: u16 = 0x0029;
const EXT_SUPPORTED_VERSIONS: u16 = 0x002b;
const EXT_KEY_SHARE: u16 = 0x0033;
/// More than any first flight the harness makes (a chain of three is under 4 KiB).
const LIMIT: usize = 64 * 1024;

impl ServerFlight {
    /// Reads on from the stream; once the clear part has ended this is one branch.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.done {
            return;
        }
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        while !self.done && self.pending.len() - at >= 5 {
            let kind = self.pending[at];
            let len = usize::from(u16::from_be_bytes([
                self.pending[at + 3],
                self.pending[at + 4],
            ]));
            if self.pending.len() - at < 5 + len {
                break;
            }
            let body = at + 5..at + 5 + len;
            at = body.end;
            match kind {
                HANDSHAKE => {
                    self.messages.extend_from_slice(&self.pending[body]);
                    self.read_messages();
                }
                // TLS 1.3's middlebox-compatibility CCS comes before the encrypted records.
                CHANGE_CIPHER_SPEC if self.tls13 => {}
                CHANGE_CIPHER_SPEC | APPLICATION_DATA => self.done = true,
                _ => self.stop_malformed(),
            }
        }
        self.pending.drain(..at);
        if self.pending.len() + self.messages.len() > LIMIT {
            self.stop_malformed();
        }
        if self.done {
            self.pending = Vec::new();
            self.messages = Vec::new();
        }
    }

    fn stop_malformed(&mut self) {
        self.malformed = true;
        self.done = true;
    }

    fn read_messages(&mut self) {
        // Taken out while its messages are read, so each is read in place.
        let messages = std::mem::take(&mut self.messages);
        let mut at = 0;
        while !self.done && messages.len() - at >= 4 {
            let m = &messages[at..];
            let len = usize::from(m[1]) << 16 | usize::from(m[2]) << 8 | usize::from(m[3]);
            if m.len() < 4 + len {
                break;
            }
            let (kind, body) = (m[0], &m[4..4 + len]);
            at += 4 + len;
            let ok = match kind {
                SERVER_HELLO => self.server_hello(body),
                CERTIFICATE => {
                    self.saw_certificate = true;
                    Some(())
                }
                SERVER_KEY_EXCHANGE => self.server_key_exchange(body),
                SERVER_HELLO_DONE => {
                    self.done = true;
                    Some(())
                }
                _ => Some(()),
            };
            if ok.is_none() {
                self.stop_malformed();
            }
        }
        self.messages = messages;
        self.messages.drain(..at);
    }

    fn server_hello(&mut self, b: &[u8]) -> Option<()> {
        let mut r = Reader(b);
        r.take(2 + 32)?; // legacy version, random
        let sid = usize::from(r.u8()?);
        r.take(sid + 2 + 1)?; // session id, cipher suite, compression
        self.saw_server_hello = true;
        if r.0.is_empty() {
            return Some(()); // no extensions: TLS 1.2
        }
        let mut exts = Reader(r.vec16()?);
        while !exts.0.is_empty() {
            let kind = exts.u16()?;
            let mut data = Reader(exts.vec16()?);
            match kind {
                EXT_SUPPORTED_VERSIONS => self.tls13 = data.u16()? == 0x0304,
                // A ServerHello's share starts with its group; a HelloRetryRequest's is it.
                EXT_KEY_SHARE => self.group = Some(data.u16()?),
                EXT_PRE_SHARED_KEY => self.psk = true,
                _ => {}
            }
        }
        // Reading goes on after a TLS 1.3 ServerHello: after a HelloRetryRequest the next
        // one is in the clear too, and the first encrypted record ends the flight.
        Some(())
    }

    fn server_key_exchange(&mut self, b: &[u8]) -> Option<()> {
        const NAMED_CURVE: u8 = 3;
        let mut r = Reader(b);
        if r.u8()? != NAMED_CURVE {
            return None;
        }
        self.group = Some(r.u16()?);
        let point = usize::from(r.u8()?);
        r.take(point)?;
        self.tls12_scheme = Some(r.u16()?);
        Some(())
    }

    /// The key-exchange group the server chose, once its ServerHello (TLS 1.3) or
    /// ServerKeyExchange (TLS 1.2) has crossed.
    pub fn group(&self) -> Option<u16> {
        self.group
    }

    /// TLS 1.2: the scheme of the server's ServerKeyExchange signature.
    pub fn tls12_scheme(&self) -> Option<u16> {
        self.tls12_scheme
    }

    /// Whether the server resumed a session, once the clear part of its flight has ended:
    /// TLS 1.3 by a `pre_shared_key` in its ServerHello, TLS 1.2 by a ChangeCipherSpec with no
    /// Certificate before it.
    pub fn resumed(&self) -> Option<bool> {
        if !self.saw_server_hello || self.malformed {
            return None;
        }
        if self.tls13 {
            return Some(self.psk);
        }
        self.done.then_some(!self.saw_certificate)
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }

    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = usize::from(self.u16()?);
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut r = vec![kind, 3, 3];
        r.extend_from_slice(&(body.len() as u16).to_be_bytes());
        r.extend_from_slice(body);
        r
    }

    fn message(kind: u8, body: &[u8]) -> Vec<u8> {
        let len = body.len() as u32;
        let mut m = vec![kind, (len >> 16) as u8, (len >> 8) as u8, len as u8];
        m.extend_from_slice(body);
        m
    }

    fn server_hello(exts: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut b = vec![3, 3];
        b.extend_from_slice(&[7; 32]);
        b.push(32);
        b.extend_from_slice(&[1; 32]);
        b.extend_from_slice(&[0x13, 0x01, 0]);
        if !exts.is_empty() {
            let mut all = Vec::new();
            for (kind, data) in exts {
                all.extend_from_slice(&kind.to_be_bytes());
                all.extend_from_slice(&(data.len() as u16).to_be_bytes());
                all.extend_from_slice(data);
            }
            b.extend_from_slice(&(all.len() as u16).to_be_bytes());
            b.extend_from_slice(&all);
        }
        message(SERVER_HELLO, &b)
    }

    fn tls13_hello(group: u16, psk: bool) -> Vec<u8> {
        let mut share = group.to_be_bytes().to_vec();
        share.extend_from_slice(&[0, 32]);
        share.extend_from_slice(&[9; 32]);
        let mut exts = vec![(EXT_SUPPORTED_VERSIONS, vec![3, 4]), (EXT_KEY_SHARE, share)];
        if psk {
            exts.push((EXT_PRE_SHARED_KEY, vec![0, 0]));
        }
        server_hello(&exts)
    }

    /// Feeds `stream` one byte at a time, as a library reading a 5-byte header first would.
    fn fed_bytewise(stream: &[u8]) -> ServerFlight {
        let mut w = ServerFlight::default();
        for b in stream {
            w.feed(std::slice::from_ref(b));
        }
        w
    }

    #[test]
    fn a_tls13_server_hello_names_the_group_and_whether_it_resumed() {
        for psk in [false, true] {
            let mut stream = record(HANDSHAKE, &tls13_hello(0x001d, psk));
            stream.extend(record(CHANGE_CIPHER_SPEC, &[1]));
            stream.extend(record(APPLICATION_DATA, &[0xaa; 40]));
            let w = fed_bytewise(&stream);
            assert_eq!(w.group(), Some(0x001d));
            assert_eq!(w.resumed(), Some(psk));
            assert_eq!(w.tls12_scheme(), None);
            assert!(w.done && !w.malformed);
        }
    }

    #[test]
    fn a_tls12_flight_gives_curve_scheme_and_a_full_handshake() {
        let mut ske = vec![3, 0x00, 0x17, 65];
        ske.extend_from_slice(&[4; 65]);
        ske.extend_from_slice(&[0x04, 0x03, 0, 2, 0x30, 0x00]);
        let mut flight = server_hello(&[]);
        flight.extend(message(CERTIFICATE, &[0, 0, 0]));
        flight.extend(message(SERVER_KEY_EXCHANGE, &ske));
        flight.extend(message(SERVER_HELLO_DONE, &[]));
        // Messages split across records, as a library may write them.
        let (a, b) = flight.split_at(50);
        let mut stream = record(HANDSHAKE, a);
        stream.extend(record(HANDSHAKE, b));
        let w = fed_bytewise(&stream);
        assert_eq!(w.group(), Some(0x0017));
        assert_eq!(w.tls12_scheme(), Some(0x0403));
        assert_eq!(w.resumed(), Some(false));
    }

    #[test]
    fn a_resumed_tls12_flight_has_no_certificate_before_its_change_cipher_spec() {
        let mut stream = record(HANDSHAKE, &server_hello(&[]));
        stream.extend(record(CHANGE_CIPHER_SPEC, &[1]));
        // The encrypted Finished looks like a handshake record; it must not be parsed.
        stream.extend(record(HANDSHAKE, &[0x55; 40]));
        let mut w = ServerFlight::default();
        w.feed(&stream);
        assert_eq!(w.resumed(), Some(true));
        assert_eq!(w.group(), None);
        assert!(!w.malformed);
    }

    #[test]
    fn nothing_is_claimed_before_the_server_hello_or_from_garbage() {
        let mut w = ServerFlight::default();
        assert_eq!((w.group(), w.resumed()), (None, None));
        w.feed(&record(HANDSHAKE, &message(SERVER_HELLO, &[3, 3, 1])));
        assert!(w.malformed);
        assert_eq!((w.group(), w.resumed()), (None, None));
    }
}
