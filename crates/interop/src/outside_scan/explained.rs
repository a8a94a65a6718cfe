//! Findings in which a stack's defaults peer differs from its library's own command-line
//! server, each with why: what tlsmatrix's peer configures differently from the tool, and
//! on purpose. A difference not listed here fails the scan.

/// (impl, the scanner's finding id, why).
const EXPLAINED: &[(&str, &str, &str)] = &[(
    "gnutls",
    "secure_client_renego",
    "gnutls-serv answers a client's renegotiation request with a new handshake (src/serv.c calls try_rehandshake when gnutls_record_recv returns GNUTLS_E_REHANDSHAKE), which testssl.sh rates a potential DoS; GnuTLS itself renegotiates only when the application calls gnutls_handshake again, and tlsmatrix's peer does not, as most servers do not, so the request ends the connection",
)];

/// Why `imp`'s defaults peer differs from its library's server in finding `id`, if known.
pub fn why(imp: &str, id: &str) -> Option<&'static str> {
    EXPLAINED
        .iter()
        .find(|(i, f, _)| *i == imp && *f == id)
        .map(|(_, _, why)| *why)
}
