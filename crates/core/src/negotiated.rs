//! What a handshake negotiated, as each side sees it, and the check that it is what the
//! scenario names. A measurement of the wrong suite or group is worse than none, so a mismatch
//! fails the scenario.

use crate::codes;
use crate::endpoint::Side;
use crate::scenario::{ConnParams, Version};

/// IANA code points; `None` where this side's library cannot tell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Negotiated {
    pub version: Option<u16>,
    pub cipher_suite: Option<u16>,
    pub group: Option<u16>,
    pub signature_scheme: Option<u16>,
    /// Whether the handshake resumed an earlier session.
    pub resumed: Option<bool>,
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
}

struct Field {
    name: &'static str,
    expected: u16,
    get: fn(&Negotiated) -> Option<u16>,
    show: fn(u16) -> String,
}

/// The fields a handshake of `params` must agree on. A resumed handshake signs nothing, and
/// a resumed TLS 1.2 handshake exchanges no key, so those fields are not checked there.
fn fields(params: &ConnParams) -> Vec<Field> {
    let resumed = params.resumption.is_resumed();
    let mut fields = vec![
        Field {
            name: "version",
            expected: codes::version_code(params.version),
            get: |n| n.version,
            show: codes::version_name,
        },
        Field {
            name: "cipher suite",
            expected: codes::expected_suite(params),
            get: |n| n.cipher_suite,
            show: codes::suite_name,
        },
        Field {
            name: "group",
            expected: codes::group_code(params.group),
            get: |n| n.group,
            show: codes::group_name,
        },
        Field {
            name: "signature scheme",
            expected: codes::signature_scheme_code(params.sig),
            get: |n| n.signature_scheme,
            show: codes::scheme_name,
        },
        Field {
            name: "resumption",
            expected: u16::from(resumed),
            get: |n| n.resumed.map(u16::from),
            show: |r| (if r == 1 { "resumed" } else { "full" }).to_string(),
        },
    ];
    fields.retain(|f| match f.name {
        "signature scheme" => !resumed,
        "group" => !(resumed && params.version == Version::Tls12),
        _ => true,
    });
    fields
}

fn check_field(f: &Field, side: Side, view: &Negotiated) -> Result<(), CheckError> {
    match (f.get)(view) {
        Some(got) if got != f.expected => Err(CheckError::Mismatch {
            side,
            field: f.name,
            expected: (f.show)(f.expected),
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
    use crate::scenario::Scenario;

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
        }
    }

    #[test]
    fn matching_views_pass() {
        let p = params("handshake-tls13-ecdsa-p256-x25519-full");
        let n = full(0x0304, 0x1301, 0x001d, 0x0403);
        let server_blind = Negotiated {
            signature_scheme: None,
            ..n
        };
        assert_eq!(check(&p, &n, &server_blind), Ok(()));
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
        let good = full(0x0303, 0xc02f, 0x0017, 0x0804);
        assert_eq!(check(&p, &good, &good), Ok(()));
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
