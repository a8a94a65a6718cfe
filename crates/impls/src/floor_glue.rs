//! The crypto floor of a C library reached through this crate's own C glue: each glue file
//! fills one table of calls (`csrc/tm_floor.h`, mirrored by `Fns`) with its library's
//! calls as that library's TLS stack makes them, and everything else (the key exchange's
//! halves, signing, verifying, HMACs as prepared operations) is here once. NSS, wolfSSL,
//! Mbed TLS and GnuTLS use it.

use std::any::Any;
use std::ffi::{c_int, c_uint, c_void};

use tlsmatrix_harness::certs::CertSet;
use tlsmatrix_harness::floor::{
    self, own_key, prepared, timed, HandshakeCrypto, KeyExchange, PreparedOp,
};
use tlsmatrix_model::floor::{CryptoOp, Hash, KexPart};
use tlsmatrix_model::scenario::SigAlg;

type Handle = *mut c_void;

/// `tm_floor_fns` (csrc/tm_floor.h), field for field.
#[repr(C)]
pub struct Fns {
    kex_new: unsafe extern "C" fn(c_int) -> Handle,
    kex_free: unsafe extern "C" fn(Handle),
    kex_generate: unsafe extern "C" fn(Handle, *mut u8, *mut c_uint) -> Handle,
    own_free: unsafe extern "C" fn(Handle),
    kex_derive:
        unsafe extern "C" fn(Handle, Handle, *const u8, c_uint, *mut u8, *mut c_uint) -> c_int,
    signer_new: unsafe extern "C" fn(*const u8, c_uint, c_int) -> Handle,
    signer_free: unsafe extern "C" fn(Handle),
    sign: unsafe extern "C" fn(Handle, *const u8, c_uint, *mut u8, *mut c_uint) -> c_int,
    verifier_new: unsafe extern "C" fn(Handle) -> Handle,
    verifier_free: unsafe extern "C" fn(Handle),
    verify: unsafe extern "C" fn(Handle, *const u8, c_uint, *const u8, c_uint) -> c_int,
    hmac_new: unsafe extern "C" fn(*const u8, c_int) -> Handle,
    hmac_free: unsafe extern "C" fn(Handle),
    hmac: unsafe extern "C" fn(Handle, *const u8, c_uint, *mut u8) -> c_int,
}

const SHARE_MAX: usize = 133;
const SECRET_MAX: usize = 66;
const SIG_MAX: usize = 512;
const HMAC_MAX: usize = 48;

/// A C library's floor: its glue's table, what it is called, and how the library words its
/// last error.
pub struct GlueCrypto {
    pub api: String,
    pub fns: &'static Fns,
    /// The library's text for the calling thread's last error.
    pub last_error: fn() -> String,
    /// The library's version, for its refusals.
    pub version: String,
}

/// A glue object freed by its own call on drop.
struct Owned(Handle, unsafe extern "C" fn(Handle));

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: made by the glue, freed once by its own call.
        unsafe { (self.1)(self.0) }
    }
}

/// A handle checked for null; the library's last error otherwise.
fn owned(
    last_error: fn() -> String,
    h: Handle,
    free: unsafe extern "C" fn(Handle),
    what: &str,
) -> anyhow::Result<Owned> {
    anyhow::ensure!(!h.is_null(), "{what}: {}", last_error());
    Ok(Owned(h, free))
}

/// One half of a key exchange through the glue.
struct Half {
    kex: Owned,
    fns: &'static Fns,
    last_error: fn() -> String,
}

impl KeyExchange for Half {
    fn generate(&self) -> anyhow::Result<(Box<dyn Any>, Vec<u8>)> {
        let mut share = [0u8; SHARE_MAX];
        let mut n = 0;
        // SAFETY: a live half; `share` is the SHARE_MAX bytes the call may write.
        let own = unsafe { (self.fns.kex_generate)(self.kex.0, share.as_mut_ptr(), &mut n) };
        let own = owned(self.last_error, own, self.fns.own_free, "key generation")?;
        Ok((Box::new(own), share[..n as usize].to_vec()))
    }

    fn finish(&self, own: &dyn Any, reply: &[u8]) -> anyhow::Result<Vec<u8>> {
        let own: &Owned = own_key(own)?;
        let mut secret = [0u8; SECRET_MAX];
        let mut n = 0;
        // SAFETY: live objects; `secret` is the SECRET_MAX bytes the call may write.
        let ok = unsafe {
            (self.fns.kex_derive)(
                self.kex.0,
                own.0,
                reply.as_ptr(),
                reply.len() as c_uint,
                secret.as_mut_ptr(),
                &mut n,
            )
        };
        anyhow::ensure!(ok == 1, "key agreement: {}", (self.last_error)());
        Ok(secret[..n as usize].to_vec())
    }
}

/// tm_floor.h's scheme number, where TLS 1.3 has one the glue can be asked for.
fn scheme(sig: SigAlg) -> Option<c_int> {
    match sig {
        SigAlg::EcdsaP256 => Some(0),
        SigAlg::EcdsaP384 => Some(1),
        SigAlg::Rsa2048 | SigAlg::Rsa3072 => Some(2),
        SigAlg::Ed25519 => Some(3),
        SigAlg::MlDsa44 | SigAlg::MlDsa65 | SigAlg::MlDsa87 => None,
    }
}

impl GlueCrypto {
    fn half(&self, part: KexPart) -> Result<Box<dyn KeyExchange>, String> {
        let index = match part {
            KexPart::X25519 => 0,
            KexPart::P256 => 1,
            KexPart::P384 => 2,
            _ => return Err(format!("{} has no ML-KEM", self.version)),
        };
        // SAFETY: a plain constructor; null is checked.
        let kex = unsafe { (self.fns.kex_new)(index) };
        let kex = owned(
            self.last_error,
            kex,
            self.fns.kex_free,
            &format!("{} key exchange", part.group()),
        )
        .map_err(|e| e.to_string())?;
        Ok(Box::new(Half {
            kex,
            fns: self.fns,
            last_error: self.last_error,
        }))
    }

    fn signer(&self, sig: SigAlg, certs: &CertSet) -> anyhow::Result<Owned> {
        let scheme = scheme(sig)
            .ok_or_else(|| anyhow::anyhow!("{} has no {sig} signature", self.version))?;
        let der = floor::pem_der(&certs.key_pem)?;
        // SAFETY: the glue copies what it keeps of the DER.
        let s = unsafe { (self.fns.signer_new)(der.as_ptr(), der.len() as c_uint, scheme) };
        owned(
            self.last_error,
            s,
            self.fns.signer_free,
            &format!("{} refuses a {sig} key", self.version),
        )
    }
}

fn sign(
    g: &'static Fns,
    last_error: fn() -> String,
    signer: &Owned,
    msg: &[u8],
) -> anyhow::Result<Vec<u8>> {
    let mut sig = vec![0u8; SIG_MAX];
    let mut n = 0;
    // SAFETY: a live signer; `sig` is the SIG_MAX bytes the call may write.
    let ok = unsafe {
        (g.sign)(
            signer.0,
            msg.as_ptr(),
            msg.len() as c_uint,
            sig.as_mut_ptr(),
            &mut n,
        )
    };
    anyhow::ensure!(ok == 1, "signing: {}", last_error());
    sig.truncate(n as usize);
    Ok(sig)
}

fn verify(g: &'static Fns, verifier: &Owned, msg: &[u8], sig: &[u8]) -> bool {
    // SAFETY: a live verifier; both buffers are read during the call only.
    unsafe {
        (g.verify)(
            verifier.0,
            msg.as_ptr(),
            msg.len() as c_uint,
            sig.as_ptr(),
            sig.len() as c_uint,
        ) == 1
    }
}

impl HandshakeCrypto for GlueCrypto {
    fn api(&self) -> String {
        self.api.clone()
    }

    fn prepare(&self, op: CryptoOp, certs: &CertSet) -> Result<Box<dyn PreparedOp>, String> {
        let text = |e: anyhow::Error| e.to_string();
        let (fns, last_error) = (self.fns, self.last_error);
        let msg = floor::signed_content();
        Ok(match op {
            CryptoOp::KeyShare(g) | CryptoOp::ServerShare(g) | CryptoOp::ClientSecret(g) => {
                return floor::key_exchange_op(op, floor::from_halves(g, |p| self.half(p))?);
            }
            CryptoOp::Sign(sig) => {
                let signer = self.signer(sig, certs).map_err(text)?;
                sign(fns, last_error, &signer, &msg).map_err(text)?;
                prepared(move || timed(|| sign(fns, last_error, &signer, &msg)))
            }
            CryptoOp::Verify(sig) => {
                let signer = self.signer(sig, certs).map_err(text)?;
                let signature = sign(fns, last_error, &signer, &msg).map_err(text)?;
                // SAFETY: a live signer; the verifier is a new object.
                let v = unsafe { (fns.verifier_new)(signer.0) };
                let verifier =
                    owned(self.last_error, v, fns.verifier_free, "the public key").map_err(text)?;
                if !verify(fns, &verifier, &msg, &signature) {
                    return Err(format!(
                        "its own {sig} signature did not verify: {}",
                        last_error()
                    ));
                }
                floor::verification(move || Ok(verify(fns, &verifier, &msg, &signature)))
            }
            CryptoOp::Hmac(hash) => {
                let len = match hash {
                    Hash::Sha256 => 32,
                    Hash::Sha384 => 48,
                };
                // SAFETY: the glue copies the key's `len` bytes; null is checked.
                let h = unsafe { (fns.hmac_new)(floor::HMAC_KEY.as_ptr(), len) };
                let h = owned(self.last_error, h, fns.hmac_free, "an HMAC key").map_err(text)?;
                prepared(move || {
                    // The whole key, not its pointer alone: a closure that captured only the
                    // field would leave the key to be freed when `prepare` returns.
                    let h = &h;
                    let mut out = [0u8; HMAC_MAX];
                    timed(|| {
                        // SAFETY: a live key; `out` is the HMAC_MAX bytes the call may write.
                        let ok = unsafe {
                            (fns.hmac)(h.0, floor::HMAC_INPUT.as_ptr(), 64, out.as_mut_ptr())
                        };
                        anyhow::ensure!(ok == 1, "HMAC: {}", last_error());
                        Ok(out)
                    })
                })
            }
        })
    }
}
