//! Known deviations: interop cells that fail because a third-party library or tool does
//! not do what the case (and the RFC behind it) requires. They are findings, shown as
//! "known deviation" with the reason, and do not fail the run. A cell matches only when its
//! case, the deviating peer in its role, and the failure's own words all match, so any other
//! failure of the same cell still fails the run.

/// Which side of a cell the deviating peer is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

#[derive(Debug)]
pub struct Deviation {
    pub case: &'static str,
    pub peer: &'static str,
    pub role: Role,
    /// The failure as it shows in the cell's reason: one of these must appear.
    pub evidence: &'static [&'static str],
    /// What the peer does.
    pub what: &'static str,
    /// Why that is a deviation.
    pub why: &'static str,
}

/// GnuTLS's TLS 1.3-only server, as the command-line tool and as the in-memory impl's peer.
const GNUTLS_VERSION_MISMATCH: Deviation = Deviation {
    case: "version-mismatch",
    peer: "gnutls-tool",
    role: Role::Server,
    // NSS's client names a handshake_failure answer to its ClientHello
    // SSL_ERROR_NO_CYPHER_OVERLAP (lib/ssl/ssl3con.c, ssl3_HandleAlert, in wait_server_hello).
    evidence: &[
        "alert number 40",
        "alert [40]",
        "ALERT_HANDSHAKE_FAILURE",
        "SSL_ERROR_NO_CYPHER_OVERLAP",
    ],
    what: "GnuTLS (TLS 1.3 only) answers the TLS 1.2-only hellos of OpenSSL, BoringSSL, NSS \
           and GnuTLS with handshake_failure (40), having found no TLS 1.2 suite it may use; \
           rustls's and crypto/tls's hellos get protocol_version (70)",
    why: "RFC 8446 4.2.1 and appendix D: a server that supports none of the versions a \
          client offers aborts with protocol_version",
};

pub const KNOWN: &[Deviation] = &[
    GNUTLS_VERSION_MISMATCH,
    Deviation {
        peer: "gnutls",
        ..GNUTLS_VERSION_MISMATCH
    },
    Deviation {
        case: "version-mismatch",
        peer: "wolfssl",
        role: Role::Client,
        evidence: &["record layer version error (-326)"],
        what: "wolfSSL's TLS 1.2-only client refuses a record whose version is not TLS 1.2's \
               (VERSION_ERROR), so the protocol_version alert of a BoringSSL or AWS-LC server, \
               sent before any version is agreed in a record marked TLS 1.0 (BoringSSL \
               ssl/tls_record.cc, tls_record_version), never reaches it",
        why: "RFC 5246 appendix E.1 and RFC 8446 5.1: the record-layer version before the \
              handshake settles one is not a version choice; the alert that says why the \
              handshake failed must be read",
    },
    Deviation {
        case: "hrr",
        peer: "mbedtls",
        role: Role::Client,
        evidence: &["containing an unsupported extension (-0x7500)"],
        what: "Mbed TLS 3.6's client accepts only extensions it sent in a HelloRetryRequest \
               (library/ssl_tls13_generic.c, mbedtls_ssl_tls13_check_received_extension), and \
               no first ClientHello carries a cookie, so it refuses with unsupported_extension \
               (110) the cookie that NSS's server puts in every HelloRetryRequest, though \
               ssl_tls13_client.c has a parser for it",
        why: "RFC 8446 4.2.2: a server MAY send a cookie in a HelloRetryRequest, an exception \
              to the rule that only extensions from the ClientHello may be sent, and the \
              client MUST echo it",
    },
    Deviation {
        case: "key-update",
        peer: "mbedtls",
        role: Role::Server,
        evidence: &["An unexpected message was received from our peer (-0x7700)"],
        what: "Mbed TLS 3.6 has no KeyUpdate: its post-handshake handler takes a \
               NewSessionTicket and fails every other handshake message as unexpected \
               (library/ssl_msg.c, ssl_tls13_handle_hs_message_post_handshake), so the \
               client's KeyUpdate ends the connection",
        why: "RFC 8446 4.6.3: upon receiving a KeyUpdate, the receiver MUST update its \
              receiving keys",
    },
    Deviation {
        case: "mtls-missing",
        peer: "mbedtls",
        role: Role::Server,
        // The server's own words: it refused for the case's reason, and the cell failed
        // only because the client did not read why (each client words that its own way, and
        // gnutls-cli not at all).
        evidence: &["required by the authentication mode (-0x7480)"],
        what: "Mbed TLS 3.6's TLS 1.3 server moves its sending keys to the application \
               traffic keys only when the handshake is wrapped up \
               (library/ssl_tls13_generic.c, mbedtls_ssl_tls13_handshake_wrapup), so the \
               certificate_required alert it sends on reading the client's empty Certificate \
               is encrypted under its handshake keys, which the client, past the server's \
               Finished, no longer reads with: the client sees a record it cannot decrypt",
        why: "RFC 8446 7.1 and 4.4.4: after sending its Finished the server's traffic keys \
              are the application traffic keys; the alert that says why the handshake \
              failed must be readable",
    },
    Deviation {
        case: "transfer-10mib",
        peer: "mbedtls",
        role: Role::Client,
        evidence: &["timed out: the client was still running"],
        what: "Mbed TLS 3.6 puts at most 16,383 bytes of data in a TLS 1.3 record (library/\
               ssl_tls.c, mbedtls_ssl_get_max_out_record_payload: the content-type byte is \
               taken from the 16 KiB buffer), so each of the case's 16 KiB writes is a full \
               record and a 1-byte one; gnutls-serv echoes each record with a write of its \
               own, and the 1-byte echo waits on Nagle's algorithm for the client's delayed \
               ACK, about 44 ms a write: 28 s for the 640 writes (it passes with a 60 s limit)",
        why: "RFC 8446 5.1: a record may carry 2^14 bytes of data; the case's full 16 KiB \
              records, which every other stack sends, are one record per write",
    },
    Deviation {
        case: "resume-ticket-tls12",
        peer: "wolfssl",
        role: Role::Client,
        evidence: &["client negotiated resumption full"],
        what: "wolfSSL takes a TLS 1.2 ticket's lifetime hint as the session's timeout \
               (src/internal.c, DoSessionTicket: `ssl->timeout = lifetime`), so a hint of 0, \
               which crypto/tls sends with every TLS 1.2 ticket (handshake_messages.go, \
               newSessionTicketMsg.marshal leaves it zero), expires the session at once and \
               the next hello offers an empty ticket; servers that send a non-zero hint \
               (OpenSSL, rustls, wolfSSL's 300 s) are resumed",
        why: "RFC 5077 3.3: a ticket_lifetime_hint of zero indicates that the lifetime of \
              the ticket is unspecified, not that it has expired",
    },
    Deviation {
        case: "no-close-notify",
        peer: "go-crypto-tls",
        role: Role::Client,
        evidence: &["crypto/tls reported a clean end of stream"],
        what: "crypto/tls reports a TCP FIN at a record boundary without close_notify as a \
               clean end of stream (io.EOF)",
        why: "RFC 8446 6.1: close_notify is what tells an end of data from a truncation; \
              without it the receiver cannot know the data is complete",
    },
];

/// The known deviation that explains a failed cell, if any.
pub fn explain(case: &str, client: &str, server: &str, reason: &str) -> Option<&'static Deviation> {
    KNOWN.iter().find(|d| {
        let peer = match d.role {
            Role::Client => client,
            Role::Server => server,
        };
        d.case == case && d.peer == peer && d.evidence.iter().any(|e| reason.contains(e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::interop::CASES;

    #[test]
    fn a_deviation_explains_only_its_own_failure() {
        let gnutls = "client: OpenSSL: ... SSL alert number 40; server: no output";
        assert!(explain("version-mismatch", "openssl-3.0", "gnutls-tool", gnutls).is_some());
        // Another failure of the same cell, the peer on the other side, or another case: no.
        assert!(explain(
            "version-mismatch",
            "openssl-3.0",
            "gnutls-tool",
            "timed out"
        )
        .is_none());
        assert!(explain("version-mismatch", "gnutls-tool", "openssl-3.0", gnutls).is_none());
        assert!(explain("tls13", "openssl-3.0", "gnutls-tool", gnutls).is_none());
        let go = "the client did not notice the missing close_notify: ok: crypto/tls reported a clean end of stream";
        assert!(explain("no-close-notify", "go-crypto-tls", "rustls-ring", go).is_some());
        assert!(explain("no-close-notify", "rustls-ring", "go-crypto-tls", go).is_none());
    }

    #[test]
    fn mbedtls_deviations_hold_for_its_server_and_its_own_words_only() {
        let refused =
            "client: rustls: cannot decrypt peer's message; server: Mbed TLS: handshake: \
                       SSL - No client certification received from the client, but required by \
                       the authentication mode (-0x7480)";
        assert!(explain("mtls-missing", "rustls-aws-lc", "mbedtls", refused).is_some());
        assert!(explain("mtls-missing", "mbedtls", "rustls-aws-lc", refused).is_none());
        assert!(explain("mtls-missing", "rustls-aws-lc", "mbedtls", "timed out").is_none());
        let key_update = "server: Mbed TLS: receiving: SSL - An unexpected message was received \
                          from our peer (-0x7700)";
        assert!(explain("key-update", "openssl-3.6", "mbedtls", key_update).is_some());
        assert!(explain("key-update", "mbedtls", "openssl-3.6", key_update).is_none());
        let cookie = "client: Mbed TLS: handshake: SSL - Client received an extended server \
                      hello containing an unsupported extension (-0x7500); server: NSS: \
                      handshake: received alert [110]";
        assert!(explain("hrr", "mbedtls", "nss", cookie).is_some());
        assert!(explain("hrr", "nss", "mbedtls", cookie).is_none());
    }

    #[test]
    fn an_nss_client_told_handshake_failure_is_gnutls_version_deviation() {
        let nss = "client: NSS: handshake: SSL_ERROR_NO_CYPHER_OVERLAP: Cannot communicate \
                   securely with peer; server: GnuTLS: handshake: No supported cipher suites";
        assert!(explain("version-mismatch", "nss", "gnutls", nss).is_some());
        assert!(explain("version-mismatch", "nss", "openssl-3.0", nss).is_none());
    }

    #[test]
    fn every_deviation_names_a_real_case_and_never_our_transport() {
        for d in KNOWN {
            assert!(
                CASES.iter().any(|c| c.id == d.case),
                "{}: no such case",
                d.case
            );
            assert!(!d.evidence.is_empty() && !d.what.is_empty() && !d.why.is_empty());
            // The libp2p transport is ours: its failures are never excused.
            assert!(
                !d.peer.starts_with("go-libp2p-"),
                "{} is our own peer",
                d.peer
            );
        }
    }
}
