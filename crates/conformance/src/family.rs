//! The runner's tests grouped by what they exercise, from their names (the runner has no
//! families of its own; its test files come close, and the names follow them).

use tlsmatrix_model::glob;

/// Families in the order the report lists them; a test takes the first family with a pattern
/// matching its name.
const FAMILIES: &[(&str, &[&str])] = &[
    (
        "DTLS and QUIC (not TLS over TCP)",
        &["DTLS*", "*-DTLS*", "QUIC*", "*-QUIC*", "MTU*"],
    ),
    ("Basic handshakes", &["Basic-*"]),
    (
        "Version negotiation",
        &[
            "VersionNegotiation*",
            "MinimumVersion-*",
            "Downgrade-*",
            "ConflictingVersion*",
            "NoSupportedVersions*",
            "*VersionTolerance*",
            "SendV2ClientHello*",
            "FallbackSCSV*",
            "NoSSL3*",
            "TLS1-*",
            "TLS11-*",
            "TLS12-*",
            "ClientShouldNotAllowInTLS12*",
        ],
    ),
    (
        "Cipher suites",
        &[
            "TLS-*",
            "CipherNegotiation*",
            "NoSharedCipher*",
            "ServerCipherFilter*",
            "CertificateCipherMismatch*",
            "CBC*",
        ],
    ),
    (
        "Key exchange and groups",
        &[
            "CurveTest-*",
            "CurveID*",
            "*MLKEM*",
            "MultiplePQGroups*",
            "UnknownCurve*",
            "NoSupportedCurves*",
            "BadECDHECurve*",
            "*KeyShare*",
            "HelloRetryRequest*",
            "SendHelloRetryRequest*",
            "PointFormat*",
            "BadRSAClientKeyExchange*",
        ],
    ),
    (
        "Resumption and tickets",
        &[
            "Resume-*",
            "CorruptTicket*",
            "SessionTicket*",
            "Ticket*",
            "EmptySessionID*",
            "CredentialSessionIDContext*",
            "SendEmptySessionTicket*",
            "*Resum*",
        ],
    ),
    ("Key update", &["KeyUpdate*"]),
    ("Early data (0-RTT)", &["*EarlyData*"]),
    ("Renegotiation", &["Renegotiat*", "*HelloRequest*"]),
    (
        "Certificates and signatures",
        &[
            "Client-*",
            "Server-*",
            "ClientAuth-*",
            "CertificateSelection-*",
            "CertificateVerification*",
            "BadECDSA*",
            "*KeyUsage*",
            "Verify*",
            "NoCommonAlgorithms*",
            "Check*Curve*",
            "ECDSACurveMismatch*",
            "RejectPSSKeyType*",
            "*Ed25519*",
            "GarbageCertificate*",
            "EmptyCertificateList*",
            "TrustAnchors*",
            "*CertificateType*",
            "NoClientCertificate*",
            "RequireAnyClientCertificate*",
            "SkipClientCertificate*",
            "ServerAuth*",
            "RetainOnlySHA256*",
            "FailCertCallback*",
            "SendReceiveIntermediate*",
            "DelegatedCredentials*",
            "RSA-*",
        ],
    ),
    (
        "Extensions",
        &[
            "ALPN*",
            "ALPS*",
            "NPN*",
            "NegotiateALPNAndNPN*",
            "ServerNameExtension*",
            "*Extension*",
            "Tolerate*",
            "GREASE*",
            "*ExtendedMasterSecret*",
            "SignedCertificateTimestamp*",
            "SendSCT*",
            "*OCSP*",
            "SRTP*",
            "ServerPadding*",
            "*CertCompression*",
        ],
    ),
    (
        "Record layer, alerts and message parsing",
        &[
            "*Record*",
            "LargePlaintext*",
            "LargeCiphertext*",
            "LargeMessage*",
            "MaxSendFragment*",
            "*Fragment*",
            "AppData*",
            "*Alert*",
            "Shutdown*",
            "Unclean*",
            "TrailingMessageData*",
            "TrailingDataWithFinished*",
            "WrongMessageType*",
            "Partial*",
            "*ChangeCipherSpec*",
            "Skip*",
            "Peek*",
            "ExtraHandshake*",
            "BadFinished*",
            "Mix*",
            "Reorder*",
            "ExtraCompressionMethods*",
            "NoNullCompression*",
        ],
    ),
    (
        "Other features (PSK, PAKE, Channel ID, exporters, compliance policies)",
        &[
            "PSK*",
            "*PSK*",
            "PAKE*",
            "*ChannelID*",
            "Compliance-*",
            "Export*",
            "TLSUnique*",
            "NoEarlyKeyingMaterial*",
            "DDoS*",
            "Agree*",
            "JDK11*",
            "DisableEverything*",
            "FalseStart*",
            "NoFalseStart*",
        ],
    ),
];

pub const OTHER: &str = "Other";

/// The family of a test name. Names start with what they test and end with the variant
/// (`-Async`, `-SplitHandshakeRecords`, the version, ...), so families are matched on the
/// first word, with its dash; only the transport (DTLS, QUIC) is read from the whole name.
pub fn of(test: &str) -> &'static str {
    let head = match test.split_once('-') {
        Some((word, _)) => format!("{word}-"),
        None => test.to_string(),
    };
    FAMILIES
        .iter()
        .enumerate()
        .find(|(i, (_, patterns))| {
            let subject = if *i == 0 { test } else { head.as_str() };
            patterns.iter().any(|p| glob::matches(p, subject))
        })
        .map_or(OTHER, |(_, (name, _))| name)
}

/// Family names in report order.
pub fn names() -> impl Iterator<Item = &'static str> {
    FAMILIES
        .iter()
        .map(|(n, _)| *n)
        .chain(std::iter::once(OTHER))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_families() {
        assert_eq!(
            of("DTLS-Retransmit-Client-1"),
            "DTLS and QUIC (not TLS over TCP)"
        );
        assert_eq!(
            of("Resume-Client-TLS12-TLS12-TLS"),
            "Resumption and tickets"
        );
        assert_eq!(of("KeyUpdate-ToServer"), "Key update");
        assert_eq!(
            of("VersionNegotiation-Client-TLS13-TLS12"),
            "Version negotiation"
        );
        assert_eq!(of("Basic-Server-RSA-TLS-Sync"), "Basic handshakes");
        assert_eq!(of("Zzz-Unheard-Of"), OTHER);
        // The variant at the end does not decide.
        assert_eq!(
            of("ChannelID-Client-TLS12-Async-SplitHandshakeRecords"),
            of("ChannelID-Client-TLS12-Sync")
        );
        assert_eq!(
            of("Basic-Client-DTLS-Sync"),
            "DTLS and QUIC (not TLS over TCP)"
        );
    }
}
