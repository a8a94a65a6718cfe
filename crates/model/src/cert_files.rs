//! The file names of a run's generated PKI, in each key type's folder (`<certs>/<sig>/`):
//! written by `tlsmatrix_harness::certs`, handed to the `openssl` and `gnutls` command-line
//! peers by the interop matrix, and read by the Go driver and peers (`go/internal/tlsconf`,
//! whose test holds its names to these).

/// The trust anchor every client and mTLS server trusts.
pub const CA: &str = "ca.pem";
/// The server's one-certificate chain (leaf only); tools outside tlsmatrix are pointed here.
pub const CHAIN: &str = "chain.pem";
/// The server's private key.
pub const KEY: &str = "key.pem";
/// The client's certificate chain, for mTLS.
pub const CLIENT_CHAIN: &str = "client.pem";
/// The client's private key.
pub const CLIENT_KEY: &str = "client-key.pem";

/// The file of the server chain with `certificates` certificates, leaf first.
pub fn chain(certificates: usize) -> String {
    match certificates {
        1 => CHAIN.to_string(),
        n => format!("chain{n}.pem"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_longer_chain_has_its_length_in_the_name() {
        assert_eq!(super::chain(1), "chain.pem");
        assert_eq!(super::chain(4), "chain4.pem");
    }
}
