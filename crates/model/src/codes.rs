//! IANA code points for what a handshake negotiates. Adapters report these numbers, so the
//! check compares like with like whatever names each library uses internally.

use crate::scenario::{Aead, ConnParams, Group, SigAlg, Version};

pub fn version_code(v: Version) -> u16 {
    match v {
        Version::Tls12 => 0x0303,
        Version::Tls13 => 0x0304,
    }
}

pub fn group_code(g: Group) -> u16 {
    match g {
        Group::X25519 => 0x001d,
        Group::P256 => 0x0017,
        Group::P384 => 0x0018,
        Group::X25519Mlkem768 => 0x11ec,
        Group::Secp256r1Mlkem768 => 0x11eb,
        Group::Secp384r1Mlkem1024 => 0x11ed,
        Group::Mlkem512 => 0x0200,
        Group::Mlkem768 => 0x0201,
        Group::Mlkem1024 => 0x0202,
    }
}

/// The one signature scheme a scenario offers for a certificate key. RSA uses PSS in both
/// versions: TLS 1.3 requires it and every modern TLS 1.2 stack prefers it.
pub fn signature_scheme_code(s: SigAlg) -> u16 {
    match s {
        SigAlg::EcdsaP256 => 0x0403,
        SigAlg::EcdsaP384 => 0x0503,
        SigAlg::Rsa2048 | SigAlg::Rsa3072 => 0x0804,
        SigAlg::Ed25519 => 0x0807,
        SigAlg::MlDsa44 => 0x0904,
        SigAlg::MlDsa65 => 0x0905,
        SigAlg::MlDsa87 => 0x0906,
    }
}

/// The cipher suite a scenario pins: TLS 1.3 names only the AEAD; TLS 1.2 pairs it with ECDHE
/// and the certificate's key type.
pub fn cipher_suite_code(version: Version, aead: Aead, sig: SigAlg) -> u16 {
    match (version, aead, sig.is_rsa()) {
        (Version::Tls13, Aead::Aes128Gcm, _) => 0x1301,
        (Version::Tls13, Aead::Aes256Gcm, _) => 0x1302,
        (Version::Tls13, Aead::Chacha20Poly1305, _) => 0x1303,
        (Version::Tls12, Aead::Aes128Gcm, false) => 0xc02b,
        (Version::Tls12, Aead::Aes256Gcm, false) => 0xc02c,
        (Version::Tls12, Aead::Chacha20Poly1305, false) => 0xcca9,
        (Version::Tls12, Aead::Aes128Gcm, true) => 0xc02f,
        (Version::Tls12, Aead::Aes256Gcm, true) => 0xc030,
        (Version::Tls12, Aead::Chacha20Poly1305, true) => 0xcca8,
    }
}

pub fn expected_suite(p: &ConnParams) -> u16 {
    cipher_suite_code(p.version, p.aead, p.sig)
}

/// Readable name for a code point, for error messages; unknown codes print as hex.
pub fn version_name(code: u16) -> String {
    match code {
        0x0301 => "TLS 1.0".into(),
        0x0302 => "TLS 1.1".into(),
        0x0303 => "TLS 1.2".into(),
        0x0304 => "TLS 1.3".into(),
        c => format!("version 0x{c:04x}"),
    }
}

pub fn suite_name(code: u16) -> String {
    let name = match code {
        0x1301 => "TLS_AES_128_GCM_SHA256",
        0x1302 => "TLS_AES_256_GCM_SHA384",
        0x1303 => "TLS_CHACHA20_POLY1305_SHA256",
        0xc02b => "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        0xc02c => "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        0xcca9 => "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        0xc02f => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        0xc030 => "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        0xcca8 => "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        c => return format!("suite 0x{c:04x}"),
    };
    name.into()
}

/// The suites tlsmatrix names, by IANA code and the name OpenSSL (and s2n-tls) use.
const OPENSSL_SUITES: &[(u16, &str)] = &[
    (0x1301, "TLS_AES_128_GCM_SHA256"),
    (0x1302, "TLS_AES_256_GCM_SHA384"),
    (0x1303, "TLS_CHACHA20_POLY1305_SHA256"),
    (0xc02b, "ECDHE-ECDSA-AES128-GCM-SHA256"),
    (0xc02c, "ECDHE-ECDSA-AES256-GCM-SHA384"),
    (0xcca9, "ECDHE-ECDSA-CHACHA20-POLY1305"),
    (0xc02f, "ECDHE-RSA-AES128-GCM-SHA256"),
    (0xc030, "ECDHE-RSA-AES256-GCM-SHA384"),
    (0xcca8, "ECDHE-RSA-CHACHA20-POLY1305"),
];

pub fn openssl_suite_name(code: u16) -> Option<&'static str> {
    OPENSSL_SUITES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, n)| *n)
}

pub fn openssl_suite_code(name: &str) -> Option<u16> {
    OPENSSL_SUITES
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(c, _)| *c)
}

/// Groups by code point and the name OpenSSL, BoringSSL and AWS-LC take in a group list,
/// beyond the scenario model's (for BoGo's runner, which names others).
const OPENSSL_GROUPS: &[(u16, &str)] = &[
    (0x0017, "P-256"),
    (0x0018, "P-384"),
    (0x0019, "P-521"),
    (0x001d, "X25519"),
    (0x001e, "X448"),
    (0x0200, "MLKEM512"),
    (0x0201, "MLKEM768"),
    (0x0202, "MLKEM1024"),
    (0x11eb, "SecP256r1MLKEM768"),
    (0x11ec, "X25519MLKEM768"),
    (0x11ed, "SecP384r1MLKEM1024"),
    (0x6399, "X25519Kyber768Draft00"),
];

/// The name OpenSSL's family takes for a group's code point, if it is one of theirs.
pub fn openssl_group_name(code: u16) -> Option<&'static str> {
    OPENSSL_GROUPS
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, n)| *n)
}

pub fn group_name(code: u16) -> String {
    Group::ALL
        .iter()
        .find(|g| group_code(**g) == code)
        .map(|g| g.to_string())
        .or_else(|| openssl_group_name(code).map(str::to_string))
        .unwrap_or_else(|| format!("group 0x{code:04x}"))
}

/// The signature schemes tlsmatrix names, by IANA code and name.
const SCHEMES: &[(u16, &str)] = &[
    (0x0201, "rsa_pkcs1_sha1"),
    (0x0203, "ecdsa_sha1"),
    (0x0401, "rsa_pkcs1_sha256"),
    (0x0501, "rsa_pkcs1_sha384"),
    (0x0601, "rsa_pkcs1_sha512"),
    (0x0403, "ecdsa_secp256r1_sha256"),
    (0x0503, "ecdsa_secp384r1_sha384"),
    (0x0603, "ecdsa_secp521r1_sha512"),
    (0x0804, "rsa_pss_rsae_sha256"),
    (0x0805, "rsa_pss_rsae_sha384"),
    (0x0806, "rsa_pss_rsae_sha512"),
    (0x0809, "rsa_pss_pss_sha256"),
    (0x080a, "rsa_pss_pss_sha384"),
    (0x080b, "rsa_pss_pss_sha512"),
    (0x0807, "ed25519"),
    (0x0808, "ed448"),
    (0x0904, "mldsa44"),
    (0x0905, "mldsa65"),
    (0x0906, "mldsa87"),
];

pub fn scheme_name(code: u16) -> String {
    match SCHEMES.iter().find(|(c, _)| *c == code) {
        Some((_, name)) => (*name).into(),
        None => format!("scheme 0x{code:04x}"),
    }
}

/// The IANA code of a signature scheme's IANA name, for libraries that report names.
pub fn scheme_code(name: &str) -> Option<u16> {
    SCHEMES.iter().find(|(_, n)| *n == name).map(|(c, _)| *c)
}
/// Whether the first dotted version number in `text` ("OpenSSL 3.0.19 ...", "GnuTLS 3.7.9")
/// is at least `min`.
pub fn version_at_least(text: &str, min: &[u32]) -> bool {
    let Some(start) = text.find(|c: char| c.is_ascii_digit()) else {
        return false;
    };
    let got: Vec<u32> = text[start..]
        .split(|c: char| c != '.' && !c.is_ascii_digit())
        .next()
        .unwrap_or("")
        .split('.')
        .filter_map(|p| p.parse().ok())
        .collect();
    got.as_slice() >= min
}
