//! A client's newest session in a C library that hands sessions out as pointers it allocates
//! (wolfSSL, Mbed TLS): kept in a slot its factory's connections share, so the next
//! connection resumes it, and freed with the library's own call when replaced or dropped.

use std::ffi::c_void;
use std::sync::Mutex;

/// A session object the adapter owns.
pub(crate) struct CSession {
    ptr: *mut c_void,
    free: unsafe extern "C" fn(*mut c_void),
}

// SAFETY: a session is moved between connections of one thread at a time, under the slot's
// lock; the libraries keep no thread affinity for it.
unsafe impl Send for CSession {}

impl CSession {
    /// Takes ownership of `ptr` (not null), to be freed by `free`.
    ///
    /// # Safety
    /// `ptr` must be a session the library made and no one else frees, and `free` its
    /// matching free call.
    pub(crate) unsafe fn new(ptr: *mut c_void, free: unsafe extern "C" fn(*mut c_void)) -> Self {
        CSession { ptr, free }
    }

    pub(crate) fn ptr(&self) -> *mut c_void {
        self.ptr
    }
}

impl Drop for CSession {
    fn drop(&mut self) {
        // SAFETY: owned here (see `new`), freed once.
        unsafe { (self.free)(self.ptr) }
    }
}

/// The newest session of a factory's client connections.
#[derive(Default)]
pub(crate) struct SessionSlot(Mutex<Option<CSession>>);

impl SessionSlot {
    /// Keeps `s` in place of the session before it (which is freed).
    pub(crate) fn keep(&self, s: CSession) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
    }

    /// Runs `f` on the kept session, if there is one.
    pub(crate) fn with<R>(&self, f: impl FnOnce(*mut c_void) -> R) -> Option<R> {
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.as_ref().map(|s| f(s.ptr()))
    }
}
