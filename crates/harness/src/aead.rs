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
