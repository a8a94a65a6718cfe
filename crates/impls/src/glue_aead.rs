//! A library's AEAD reached through this crate's own C glue (`csrc/*_glue.c`), whose calls
//! share one shape: `tm_*_aead_run(handle, seal, nonce, aad, in, in_len, out, cap, &n)`,
//! 0 or the library's error code, and a free for the handle. Mbed TLS and NSS use it.

use std::ffi::{c_int, c_void};

use anyhow::Result;
use tlsmatrix_harness::aead::OutOfPlaceCall;

/// The glue's seal-or-open call.
pub type RunFn = unsafe extern "C" fn(
    *mut c_void,
    c_int,
    *const u8,
    *const u8,
    *const u8,
    usize,
    *mut u8,
    usize,
    *mut usize,
) -> c_int;

/// A keyed handle from the glue, its two calls, and how the library words an error code.
pub struct GlueAead {
    pub handle: *mut c_void,
    pub run: RunFn,
    pub free: unsafe extern "C" fn(*mut c_void),
    /// `Ok` for 0, else the library's error for `what` (e.g. "sealing").
    pub check: fn(c_int, &str) -> Result<()>,
}

// SAFETY: used by one thread at a time (the sampler owns it).
unsafe impl Send for GlueAead {}

impl Drop for GlueAead {
    fn drop(&mut self) {
        // SAFETY: a handle the glue made, freed once by the glue's own free.
        unsafe { (self.free)(self.handle) }
    }
}

impl OutOfPlaceCall for GlueAead {
    fn call(
        &mut self,
        seal: bool,
        nonce: &[u8; 12],
        aad: &[u8; 5],
        input: &[u8],
        out: &mut [u8],
    ) -> Result<usize> {
        let mut n = 0;
        // SAFETY: a live handle; every pointer and length is a live buffer of ours, and the
        // output has room for the input and a tag.
        let rc = unsafe {
            (self.run)(
                self.handle,
                c_int::from(seal),
                nonce.as_ptr(),
                aad.as_ptr(),
                input.as_ptr(),
                input.len(),
                out.as_mut_ptr(),
                out.len(),
                &mut n,
            )
        };
        (self.check)(rc, if seal { "sealing" } else { "opening" })?;
        Ok(n)
    }
}
