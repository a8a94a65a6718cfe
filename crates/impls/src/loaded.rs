//! Which shared object a function was loaded from, as the dynamic loader says: how a
//! companion build loaded in place of the system's library is told from it.

use std::ffi::{c_void, CStr};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// The file of the object holding `function`, made absolute; `None` where the loader has no
/// answer.
pub fn object_of(function: *const c_void) -> Option<PathBuf> {
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the address and writes `info`, whose strings stay valid
    // while the object is loaded (for the process's life here).
    let found = unsafe { libc::dladdr(function, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated path owned by the loader.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let path = PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes()));
    Some(std::fs::canonicalize(&path).unwrap_or(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_libc_function_lies_in_libc() {
        let file = object_of(libc::strlen as *const c_void).expect("libc is loaded");
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("libc"), "{}", file.display());
    }
}
