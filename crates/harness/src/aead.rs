//! The contract for a library's own AEAD, apart from its TLS stack: what an adapter hands
//! out (`TlsLibrary::record_aead`) so `ceiling` can time the library's crypto alone.

use tlsmatrix_model::scenario::{Aead, BulkScenario, Version};

/// One key of a library's AEAD used as a TLS record layer uses it: the record's sequence
/// number makes the nonce, its 5-byte header is the additional data.
pub trait RecordAead {
    /// Encrypts `buf` in place and appends the tag.
    fn seal(&mut self, seq: u64, aad: &[u8; 5], buf: &mut Vec<u8>) -> anyhow::Result<()>;
    /// Checks and removes the tag and decrypts `buf` in place.
    fn open(&mut self, seq: u64, aad: &[u8; 5], buf: &mut Vec<u8>) -> anyhow::Result<()>;
}

/// A library's AEAD with the name of the API it is reached through, e.g.
/// "aws-lc-rs aead::LessSafeKey".
pub struct LibraryAead {
    pub api: String,
    pub aead: Box<dyn RecordAead>,
}

/// A C library's AEAD call that reads its input from one buffer and writes its output to
/// another (GnuTLS's, Mbed TLS's, NSS's): what [`OutOfPlace`] needs of it.
pub trait OutOfPlaceCall {
    /// Seals (`seal`) or opens `input` for `nonce` and `aad` into `out`, which has room for
    /// the input and a 16-byte tag; returns how many bytes it wrote.
    fn call(
        &mut self,
        seal: bool,
        nonce: &[u8; 12],
        aad: &[u8; 5],
        input: &[u8],
        out: &mut [u8],
    ) -> anyhow::Result<usize>;
}

/// A [`RecordAead`] over an out-of-place call: each record goes through a scratch buffer and
/// back (the copy is part of what such an API costs a TLS stack built on it).
pub struct OutOfPlace<C> {
    pub call: C,
    scratch: Vec<u8>,
}

impl<C: OutOfPlaceCall> OutOfPlace<C> {
    pub fn new(call: C) -> Self {
        OutOfPlace {
            call,
            scratch: Vec::new(),
        }
    }

    fn run(
        &mut self,
        seal: bool,
        seq: u64,
        aad: &[u8; 5],
        buf: &mut Vec<u8>,
    ) -> anyhow::Result<()> {
        self.scratch.resize(buf.len() + 16, 0);
        let n = self
            .call
            .call(seal, &nonce(&IV, seq), aad, buf, &mut self.scratch)?;
        buf.clear();
        buf.extend_from_slice(&self.scratch[..n]);
        Ok(())
    }
}

impl<C: OutOfPlaceCall> RecordAead for OutOfPlace<C> {
    fn seal(&mut self, seq: u64, aad: &[u8; 5], buf: &mut Vec<u8>) -> anyhow::Result<()> {
        self.run(true, seq, aad, buf)
    }

    fn open(&mut self, seq: u64, aad: &[u8; 5], buf: &mut Vec<u8>) -> anyhow::Result<()> {
        self.run(false, seq, aad, buf)
    }
}

/// Key length of an AEAD.
pub fn key_len(aead: Aead) -> usize {
    match aead {
        Aead::Aes128Gcm => 16,
        Aead::Aes256Gcm | Aead::Chacha20Poly1305 => 32,
    }
}

/// The TLS nonce: the IV with the sequence number XORed into its last 8 bytes.
pub fn nonce(iv: &[u8; 12], seq: u64) -> [u8; 12] {
    let mut n = *iv;
    for (b, s) in n[4..].iter_mut().zip(seq.to_be_bytes()) {
        *b ^= s;
    }
    n
}

/// The fixed key and IV a ceiling uses (any key costs the same).
pub const KEY: [u8; 32] = [0x42; 32];
pub const IV: [u8; 12] = [0x24; 12];

/// Plaintext bytes one record of this bulk scenario encrypts: a write or a full record,
/// whichever is smaller, and in TLS 1.3 the content type byte inside the encryption.
pub fn record_plaintext(b: &BulkScenario) -> usize {
    b.size.bytes().min(16 * 1024) + usize::from(b.version == Version::Tls13)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nonce_xors_the_sequence_into_the_iv_tail() {
        let n = nonce(&[0; 12], 0x0102);
        assert_eq!(n[..10], [0; 10]);
        assert_eq!(n[10..], [1, 2]);
        assert_eq!(nonce(&IV, 0), IV);
    }
}
