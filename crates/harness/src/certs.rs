//! Test certificates, generated at run time and cached on disk: per signature algorithm, a
//! root CA, three intermediate CAs under it in a line, a leaf for `localhost` at each depth
//! (so the server can send a chain of one to four certificates), and a client certificate,
//! all with keys of that algorithm. No key is ever committed; a cache folder is written whole
//! or not at all (temp folder, then rename).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    RsaKeySize, SignatureAlgorithm,
};

use tlsmatrix_model::scenario::{Chain, SigAlg};

/// PEM text for one signature algorithm.
#[derive(Debug, Clone)]
pub struct CertSet {
    /// The trust anchor clients verify against.
    pub ca_pem: String,
    /// The certificates the server sends, leaf first: entry `k` is the chain of `k + 1`
    /// certificates, its leaf signed by the `k`-th intermediate (or by the root for `k = 0`).
    /// Every leaf has the same key.
    pub chains_pem: Vec<String>,
    /// The leaves' private key, PKCS#8.
    pub key_pem: String,
    /// A client certificate from the same CA, for mutual TLS, and its key.
    pub client_chain_pem: String,
    pub client_key_pem: String,
}

impl CertSet {
    /// A set from someone else's files (the BoGo runner's): the one credential serves as the
    /// server's chain when serving and as the client certificate when connecting; `ca_pem`
    /// is what a peer is verified against. Empty strings where the runner gave nothing.
    pub fn from_pems(ca_pem: String, chain_pem: String, key_pem: String) -> CertSet {
        CertSet {
            ca_pem,
            chains_pem: vec![chain_pem.clone()],
            key_pem: key_pem.clone(),
            client_chain_pem: chain_pem,
            client_key_pem: key_pem,
        }
    }

    pub fn chain_pem(&self, chain: Chain) -> &str {
        &self.chains_pem[chain.certificates() - 1]
    }
}

use tlsmatrix_model::cert_files;

const CA_FILE: &str = cert_files::CA;
const KEY_FILE: &str = cert_files::KEY;
const CLIENT_CHAIN_FILE: &str = cert_files::CLIENT_CHAIN;
const CLIENT_KEY_FILE: &str = cert_files::CLIENT_KEY;
/// Written last, so its presence means the set is whole (sets from older versions lack it
/// and are replaced).
const COMPLETE_FILE: &str = "complete-v3";

fn chain_file(certificates: usize) -> String {
    cert_files::chain(certificates)
}

/// Loads the set for `sig` from `dir/<sig>/`, generating it first if it is not there.
pub fn load_or_generate(dir: &Path, sig: SigAlg) -> Result<CertSet> {
    let folder = dir.join(sig.as_str());
    if !folder.join(COMPLETE_FILE).exists() {
        fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the certificate folder {}", dir.display()))?;
        let tmp = dir.join(format!(".{}.tmp-{}", sig, std::process::id()));
        let set = generate(sig)?;
        write_set(&tmp, &set)?;
        // A set from an older version is replaced whole.
        if folder.exists() && !folder.join(COMPLETE_FILE).exists() {
            let _ = fs::remove_dir_all(&folder);
        }
        // Another process may have won the race; its set is as good as ours.
        if let Err(e) = fs::rename(&tmp, &folder) {
            let _ = fs::remove_dir_all(&tmp);
            if !folder.join(COMPLETE_FILE).exists() {
                return Err(e)
                    .with_context(|| format!("cannot store certificates in {}", folder.display()));
            }
        }
    }
    load(&folder)
}

fn write_set(folder: &PathBuf, set: &CertSet) -> Result<()> {
    fs::create_dir_all(folder)?;
    let mut files = vec![
        (CA_FILE.to_string(), set.ca_pem.as_str()),
        (KEY_FILE.to_string(), &set.key_pem),
        (CLIENT_CHAIN_FILE.to_string(), &set.client_chain_pem),
        (CLIENT_KEY_FILE.to_string(), &set.client_key_pem),
    ];
    for (k, chain) in set.chains_pem.iter().enumerate() {
        files.push((chain_file(k + 1), chain));
    }
    files.push((COMPLETE_FILE.to_string(), ""));
    for (name, text) in files {
        fs::write(folder.join(&name), text)
            .with_context(|| format!("cannot write {}", folder.join(&name).display()))?;
    }
    Ok(())
}

fn load(folder: &Path) -> Result<CertSet> {
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
        ca_pem: read(CA_FILE)?,
        chains_pem: Chain::ALL
            .iter()
            .map(|c| read(&chain_file(c.certificates())))
            .collect::<Result<_>>()?,
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
        // aws-lc writes an ML-DSA private key in its seed form (RFC 9881), the one form
        // every library here reads (BoringSSL parses no other).
        SigAlg::MlDsa44 => {
            KeyPair::generate_for(&rcgen::PKCS_ML_DSA_44).map(|k| (k, &rcgen::PKCS_ML_DSA_44))
        }
        SigAlg::MlDsa65 => {
            KeyPair::generate_for(&rcgen::PKCS_ML_DSA_65).map(|k| (k, &rcgen::PKCS_ML_DSA_65))
        }
        SigAlg::MlDsa87 => {
            KeyPair::generate_for(&rcgen::PKCS_ML_DSA_87).map(|k| (k, &rcgen::PKCS_ML_DSA_87))
        }
    };
    generated.with_context(|| format!("cannot generate a {sig} key"))
}

/// A CA's parameters: CA certificates sign certificates and CRLs, nothing else.
fn ca_params(name: String) -> Result<CertificateParams> {
    let mut params = CertificateParams::new(Vec::new())?;
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    Ok(params)
}

/// An end-entity certificate's parameters for `names` and one extended key usage.
fn end_entity_params(
    names: Vec<String>,
    common_name: String,
    usage: rcgen::ExtendedKeyUsagePurpose,
) -> Result<CertificateParams> {
    let mut params = CertificateParams::new(names)?;
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![usage];
    Ok(params)
}

/// A fresh set for `sig`.
pub fn generate(sig: SigAlg) -> Result<CertSet> {
    let (ca_key, _) = key_pair(sig)?;
    let root_params = ca_params(format!("tlsmatrix test CA ({sig})"))?;
    let ca_cert = root_params.self_signed(&ca_key)?;
    // issuers[k] signs the leaf of the (k + 1)-certificate chain; the intermediates'
    // PEM, nearest the leaf first, follow that leaf.
    let mut issuers = vec![Issuer::new(root_params, ca_key)];
    let mut intermediates_pem: Vec<String> = Vec::new();
    for depth in 1..Chain::ALL.len() {
        let (key, _) = key_pair(sig)?;
        let params = ca_params(format!("tlsmatrix test intermediate CA {depth} ({sig})"))?;
        let cert = params.signed_by(&key, issuers.last().expect("the root is first"))?;
        intermediates_pem.insert(0, cert.pem());
        issuers.push(Issuer::new(params, key));
    }

    let (leaf_key, _) = key_pair(sig)?;
    let mut chains_pem = Vec::new();
    for (k, issuer) in issuers.iter().enumerate() {
        let mut params = end_entity_params(
            vec![tlsmatrix_model::scenario::SERVER_NAME.to_string()],
            format!("tlsmatrix test server ({sig})"),
            rcgen::ExtendedKeyUsagePurpose::ServerAuth,
        )?;
        if sig.is_rsa() {
            // As RSA server certificates have long been issued: NSS's verifier
            // (CERT_CheckKeyUsage for certUsageSSLServer) refuses an RSA server key that
            // may not encipher, though no suite measured here encrypts with it.
            params.key_usages.push(KeyUsagePurpose::KeyEncipherment);
        }
        let leaf = params.signed_by(&leaf_key, issuer)?;
        let above = &intermediates_pem[intermediates_pem.len() - k..];
        chains_pem.push(leaf.pem() + &above.concat());
    }

    let (client_key, _) = key_pair(sig)?;
    let client = end_entity_params(
        Vec::new(),
        format!("tlsmatrix test client ({sig})"),
        rcgen::ExtendedKeyUsagePurpose::ClientAuth,
    )?
    .signed_by(&client_key, &issuers[0])?;

    Ok(CertSet {
        ca_pem: ca_cert.pem(),
        chains_pem,
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
        for chain in Chain::ALL {
            let n = a.chain_pem(*chain).matches("BEGIN CERTIFICATE").count();
            assert_eq!(n, chain.certificates(), "{chain}");
        }
        assert!(fs::read_dir(&dir).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("tmp")));
        fs::remove_dir_all(&dir).unwrap();
    }
}
