//! Test certificates, generated at run time and cached on disk: per signature algorithm, a
//! CA and a leaf for `localhost` signed by it, both with keys of that algorithm. No key is ever
//! committed; a cache folder is written whole or not at all (temp folder, then rename).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    RsaKeySize, SignatureAlgorithm,
};

use crate::scenario::SigAlg;

/// PEM text for one signature algorithm.
#[derive(Debug, Clone)]
pub struct CertSet {
    pub sig: SigAlg,
    /// The trust anchor clients verify against.
    pub ca_pem: String,
    /// The certificates the server sends, leaf first.
    pub chain_pem: String,
    /// The leaf's private key, PKCS#8.
    pub key_pem: String,
    /// A client certificate from the same CA, for mutual TLS, and its key.
    pub client_chain_pem: String,
    pub client_key_pem: String,
}

const CA_FILE: &str = "ca.pem";
const CHAIN_FILE: &str = "chain.pem";
const KEY_FILE: &str = "key.pem";
const CLIENT_CHAIN_FILE: &str = "client.pem";
/// Written last, so its presence means the set is whole (older sets lack it).
const CLIENT_KEY_FILE: &str = "client-key.pem";

/// Loads the set for `sig` from `dir/<sig>/`, generating it first if it is not there.
pub fn load_or_generate(dir: &Path, sig: SigAlg) -> Result<CertSet> {
    let folder = dir.join(sig.as_str());
    if !folder.join(CLIENT_KEY_FILE).exists() {
        fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the certificate folder {}", dir.display()))?;
        let tmp = dir.join(format!(".{}.tmp-{}", sig, std::process::id()));
        let set = generate(sig)?;
        write_set(&tmp, &set)?;
        // A set from before client certificates existed is replaced whole.
        if folder.exists() && !folder.join(CLIENT_KEY_FILE).exists() {
            let _ = fs::remove_dir_all(&folder);
        }
        // Another process may have won the race; its set is as good as ours.
        if let Err(e) = fs::rename(&tmp, &folder) {
            let _ = fs::remove_dir_all(&tmp);
            if !folder.join(CLIENT_KEY_FILE).exists() {
                return Err(e)
                    .with_context(|| format!("cannot store certificates in {}", folder.display()));
            }
        }
    }
    load(&folder, sig)
}

fn write_set(folder: &PathBuf, set: &CertSet) -> Result<()> {
    fs::create_dir_all(folder)?;
    for (name, text) in [
        (CA_FILE, &set.ca_pem),
        (CHAIN_FILE, &set.chain_pem),
        (KEY_FILE, &set.key_pem),
        (CLIENT_CHAIN_FILE, &set.client_chain_pem),
        (CLIENT_KEY_FILE, &set.client_key_pem),
    ] {
        fs::write(folder.join(name), text)
            .with_context(|| format!("cannot write {}", folder.join(name).display()))?;
    }
    Ok(())
}

fn load(folder: &Path, sig: SigAlg) -> Result<CertSet> {
    let read = |name: &str| {
        let p = folder.join(name);
        fs::read_to_string(&p).with_context(|| {
            format!(
                "cannot read certificate file {}; delete {} to regenerate it",
                p.display(),
                folder.display()
            )
        })
    };
    Ok(CertSet {
        sig,
        ca_pem: read(CA_FILE)?,
        chain_pem: read(CHAIN_FILE)?,
        key_pem: read(KEY_FILE)?,
        client_chain_pem: read(CLIENT_CHAIN_FILE)?,
        client_key_pem: read(CLIENT_KEY_FILE)?,
    })
}

fn key_pair(sig: SigAlg) -> Result<(KeyPair, &'static SignatureAlgorithm)> {
    let generated = match sig {
        SigAlg::EcdsaP256 => KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
            .map(|k| (k, &rcgen::PKCS_ECDSA_P256_SHA256)),
        SigAlg::EcdsaP384 => KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384)
            .map(|k| (k, &rcgen::PKCS_ECDSA_P384_SHA384)),
        SigAlg::Rsa2048 => KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, RsaKeySize::_2048)
            .map(|k| (k, &rcgen::PKCS_RSA_SHA256)),
        SigAlg::Rsa3072 => KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, RsaKeySize::_3072)
            .map(|k| (k, &rcgen::PKCS_RSA_SHA256)),
        SigAlg::Ed25519 => {
            KeyPair::generate_for(&rcgen::PKCS_ED25519).map(|k| (k, &rcgen::PKCS_ED25519))
        }
    };
    generated.with_context(|| format!("cannot generate a {sig} key"))
}

/// A fresh CA and leaf for `sig`.
pub fn generate(sig: SigAlg) -> Result<CertSet> {
    let (ca_key, _) = key_pair(sig)?;
    let mut ca_params = CertificateParams::new(Vec::new())?;
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("tlsmatrix test CA ({sig})"));
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let (leaf_key, _) = key_pair(sig)?;
    let mut leaf_params = CertificateParams::new(vec![crate::endpoint::SERVER_NAME.to_string()])?;
    leaf_params
        .distinguished_name
        .push(DnType::CommonName, format!("tlsmatrix test server ({sig})"));
    leaf_params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    leaf_params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let leaf = leaf_params.signed_by(&leaf_key, &issuer)?;

    let (client_key, _) = key_pair(sig)?;
    let mut client_params = CertificateParams::new(Vec::new())?;
    client_params
        .distinguished_name
        .push(DnType::CommonName, format!("tlsmatrix test client ({sig})"));
    client_params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    client_params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let client = client_params.signed_by(&client_key, &issuer)?;

    Ok(CertSet {
        sig,
        ca_pem: ca_cert.pem(),
        chain_pem: leaf.pem(),
        key_pem: portable_key_pem(sig, &leaf_key)?,
        client_chain_pem: client.pem(),
        client_key_pem: portable_key_pem(sig, &client_key)?,
    })
}

/// PKCS#8 PEM every library reads. aws-lc writes Ed25519 keys as PKCS#8 v2 (with the public
/// key), which OpenSSL 3.0 refuses; v1 with the bare seed is the form all accept.
fn portable_key_pem(sig: SigAlg, key: &KeyPair) -> Result<String> {
    if sig != SigAlg::Ed25519 {
        return Ok(key.serialize_pem());
    }
    let der = key.serialize_der();
    // The seed follows OCTET STRING { OCTET STRING (32) } in both versions.
    const SEED_PREFIX: [u8; 4] = [0x04, 0x22, 0x04, 0x20];
    let at = der
        .windows(4)
        .position(|w| w == SEED_PREFIX)
        .context("unexpected Ed25519 PKCS#8 layout")?
        + 4;
    let seed = der.get(at..at + 32).context("truncated Ed25519 key")?;
    let mut v1 = vec![
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    v1.extend_from_slice(seed);
    Ok(pem::encode(&pem::Pem::new("PRIVATE KEY", v1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_once_then_loads_the_same_set() {
        let dir = std::env::temp_dir().join(format!("tlsmatrix-certs-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let a = load_or_generate(&dir, SigAlg::EcdsaP256).unwrap();
        let b = load_or_generate(&dir, SigAlg::EcdsaP256).unwrap();
        assert_eq!(a.key_pem, b.key_pem);
        assert!(a.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(a.key_pem.contains("PRIVATE KEY"));
        assert!(fs::read_dir(&dir).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("tmp")));
        fs::remove_dir_all(&dir).unwrap();
    }
}
