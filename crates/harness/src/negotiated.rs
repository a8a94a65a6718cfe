//! What a handshake negotiated, as each side sees it, and the check that it is what the
//! scenario names. A measurement of the wrong suite or group is worse than none, so a mismatch
//! fails the scenario.

use tlsmatrix_model::codes;
use tlsmatrix_model::scenario::{ConnParams, Version};
use tlsmatrix_model::side::Side;

/// IANA code points; `None` where this side's library cannot tell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Negotiated {
    pub version: Option<u16>,
    pub cipher_suite: Option<u16>,
    pub group: Option<u16>,
    pub signature_scheme: Option<u16>,
    /// Whether the handshake resumed an earlier session.
    pub resumed: Option<bool>,
    /// How many certificates the peer sent, leaf included; 0 when it sent none.
    pub peer_certs: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    #[error("{side} negotiated {field} {got}, but the scenario asks for {expected}")]
    Mismatch {
        side: Side,
        field: &'static str,
        expected: String,
        got: String,
    },
    #[error("neither side can report the negotiated {field}, so it cannot be checked")]
    Unobserved { field: &'static str },
    #[error("the client sent {hellos} ClientHello(s), but the scenario asks for {}", if *.retry { "a HelloRetryRequest (2)" } else { "no HelloRetryRequest (1)" })]
    Retry { hellos: usize, retry: bool },
}

/// Checks the number of ClientHellos the client wrote: two exactly when the scenario asks
/// for a HelloRetryRequest.
pub fn check_hellos(params: &ConnParams, hellos: usize) -> Result<(), CheckError> {
    let retry = params.extras.hrr;
    if hellos == 1 + usize::from(retry) {
        Ok(())
    } else {
        Err(CheckError::Retry { hellos, retry })
    }
}

struct Field {
    name: &'static str,
    /// What the client's view must say, and what the server's must: the same for every
    /// field but the certificates each received.
    expected: [u16; 2],
    get: fn(&Negotiated) -> Option<u16>,
    show: fn(u16) -> String,
}

impl Field {
    fn same(
        name: &'static str,
        expected: u16,
        get: fn(&Negotiated) -> Option<u16>,
        show: fn(u16) -> String,
    ) -> Field {
        Field {
            name,
            expected: [expected; 2],
            get,
            show,
        }
    }

    fn expected(&self, side: Side) -> u16 {
        self.expected[side.index()]
    }
}

/// The fields a handshake of `params` must agree on. A resumed handshake signs nothing and
/// sends no certificate, and a resumed TLS 1.2 handshake exchanges no key, so those fields
/// are not checked there.
fn fields(params: &ConnParams) -> Vec<Field> {
    let resumed = params.resumption.is_resumed();
    let mut fields = vec![
        Field::same(
            "version",
            codes::version_code(params.version),
            |n| n.version,
            codes::version_name,
        ),
        Field::same(
            "cipher suite",
            codes::expected_suite(params),
            |n| n.cipher_suite,
            codes::suite_name,
        ),
        Field::same(
            "group",
            codes::group_code(params.group),
            |n| n.group,
            codes::group_name,
        ),
        Field::same(
            "signature scheme",
            codes::signature_scheme_code(params.sig),
            |n| n.signature_scheme,
            codes::scheme_name,
        ),
        Field::same(
            "resumption",
            u16::from(resumed),
            |n| n.resumed.map(u16::from),
            |r| (if r == 1 { "resumed" } else { "full" }).to_string(),
        ),
        Field {
            name: "peer certificates",
            expected: [
                params.extras.chain.certificates() as u16,
                u16::from(params.extras.mtls),
            ],
            get: |n| n.peer_certs.map(|c| c.min(usize::from(u16::MAX)) as u16),
            show: |c| format!("{c} received"),
        },
    ];
    fields.retain(|f| match f.name {
        "signature scheme" | "peer certificates" => !resumed,
        "group" => !(resumed && params.version == Version::Tls12),
        _ => true,
    });
    fields
}

fn check_field(f: &Field, side: Side, view: &Negotiated) -> Result<(), CheckError> {
    let expected = f.expected(side);
    match (f.get)(view) {
        Some(got) if got != expected => Err(CheckError::Mismatch {
            side,
            field: f.name,
            expected: (f.show)(expected),
            got: (f.show)(got),
        }),
        _ => Ok(()),
    }
}

/// Checks both sides' views against the scenario: every value a side reports must match, and
/// every value must be reported by at least one side.
pub fn check(
    params: &ConnParams,
    client: &Negotiated,
    server: &Negotiated,
) -> Result<(), CheckError> {
    for f in &fields(params) {
        check_field(f, Side::Client, client)?;
        check_field(f, Side::Server, server)?;
        if (f.get)(client).is_none() && (f.get)(server).is_none() {
            return Err(CheckError::Unobserved { field: f.name });
        }
    }
    Ok(())
}

/// Checks one side's view, for a peer whose other side runs in another process (and may be
/// a tool that reports nothing): what this side reports must match.
pub fn check_one(params: &ConnParams, side: Side, view: &Negotiated) -> Result<(), CheckError> {
    for f in &fields(params) {
        check_field(f, side, view)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::scenario::Scenario;

    fn params(id: &str) -> ConnParams {
        id.parse::<Scenario>().unwrap().params()
    }

    fn full(version: u16, suite: u16, group: u16, scheme: u16) -> Negotiated {
        Negotiated {
            version: Some(version),
            cipher_suite: Some(suite),
            group: Some(group),
            signature_scheme: Some(scheme),
            resumed: Some(false),
            peer_certs: None,
        }
    }

    #[test]
    fn matching_views_pass() {
        let p = params("handshake-tls13-ecdsa-p256-x25519-full");
        let n = full(0x0304, 0x1301, 0x001d, 0x0403);
        let client = Negotiated {
            peer_certs: Some(1),
            ..n
        };
        let server_blind = Negotiated {
            signature_scheme: None,
            ..n
        };
        assert_eq!(check(&p, &client, &server_blind), Ok(()));
    }

    #[test]
    fn a_group_mismatch_names_side_and_both_values() {
        let p = params("handshake-tls13-ecdsa-p256-p256-full");
        let n = full(0x0304, 0x1301, 0x001d, 0x0403);
        let err = check(&p, &n, &n).unwrap_err();
        assert_eq!(
            err.to_string(),
            "client negotiated group x25519, but the scenario asks for p256"
        );
    }

    #[test]
    fn tls12_rsa_expects_the_ecdhe_rsa_suite() {
        let p = params("handshake-tls12-rsa-2048-p256-full");
        let good = Negotiated {
            peer_certs: Some(1),
            ..full(0x0303, 0xc02f, 0x0017, 0x0804)
        };
        assert_eq!(
            check(&p, &good, &full(0x0303, 0xc02f, 0x0017, 0x0804)),
            Ok(())
        );
        let ecdsa_suite = full(0x0303, 0xc02b, 0x0017, 0x0804);
        let err = check(&p, &good, &ecdsa_suite).unwrap_err();
        assert!(err
            .to_string()
            .contains("server negotiated cipher suite TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"));
    }

    #[test]
    fn a_value_nobody_reports_is_an_error_not_a_pass() {
        let p = params("handshake-tls13-ecdsa-p256-x25519-full");
        let n = Negotiated {
            signature_scheme: None,
            ..full(0x0304, 0x1301, 0x001d, 0)
        };
        assert_eq!(
            check(&p, &n, &n),
            Err(CheckError::Unobserved {
                field: "signature scheme"
            })
        );
    }

    #[test]
    fn a_retry_is_counted_in_client_hellos() {
        let plain = params("handshake-tls13-ecdsa-p256-x25519-full");
        let retry = params("handshake-tls13-ecdsa-p256-x25519-full-hrr");
        assert_eq!(check_hellos(&plain, 1), Ok(()));
        assert_eq!(check_hellos(&retry, 2), Ok(()));
        assert_eq!(
            check_hellos(&retry, 1).unwrap_err().to_string(),
            "the client sent 1 ClientHello(s), but the scenario asks for a HelloRetryRequest (2)"
        );
        assert!(check_hellos(&plain, 2).is_err());
    }

    #[test]
    fn each_side_must_have_received_the_certificates_the_scenario_names() {
        let p = params("handshake-tls13-ecdsa-p256-x25519-full-mtls-chain3");
        let base = full(0x0304, 0x1301, 0x001d, 0x0403);
        let client = Negotiated {
            peer_certs: Some(3),
            ..base
        };
        let server = Negotiated {
            peer_certs: Some(1),
            ..base
        };
        assert_eq!(check(&p, &client, &server), Ok(()));
        let no_client_cert = Negotiated {
            peer_certs: Some(0),
            ..base
        };
        assert_eq!(
            check(&p, &client, &no_client_cert).unwrap_err().to_string(),
            "server negotiated peer certificates 0 received, but the scenario asks for 1 received"
        );
        let short_chain = Negotiated {
            peer_certs: Some(1),
            ..base
        };
        assert!(check(&p, &short_chain, &server)
            .unwrap_err()
            .to_string()
            .starts_with("client negotiated peer certificates 1 received"));
    }

    #[test]
    fn a_resumption_scenario_needs_a_resumed_handshake_and_skips_the_signature() {
        let p = params("handshake-tls13-ecdsa-p256-x25519-ticket");
        let resumed = Negotiated {
            signature_scheme: None,
            resumed: Some(true),
            ..full(0x0304, 0x1301, 0x001d, 0)
        };
        assert_eq!(check(&p, &resumed, &resumed), Ok(()));
        let full_hs = full(0x0304, 0x1301, 0x001d, 0x0403);
        assert_eq!(
            check(&p, &full_hs, &resumed).unwrap_err().to_string(),
            "client negotiated resumption full, but the scenario asks for resumed"
        );
        // A resumed TLS 1.2 handshake exchanges no key: the group is not checked.
        let p12 = params("handshake-tls12-ecdsa-p256-x25519-session-id");
        let r12 = Negotiated {
            group: None,
            ..full(0x0303, 0xc02b, 0, 0)
        };
        let r12 = Negotiated {
            signature_scheme: None,
            resumed: Some(true),
            ..r12
        };
        assert_eq!(check(&p12, &r12, &r12), Ok(()));
    }
}
