//! The read and write loops of the C libraries' endpoints (wolfSSL, Mbed TLS, NSS): each
//! library's call and its return codes differ, what is done with them does not.

use anyhow::Result;
use tlsmatrix_harness::endpoint::PeerClosed;

/// What one read call of a library gave.
pub enum Read {
    /// This many bytes of plaintext.
    Data(usize),
    /// The peer's close_notify.
    Closed,
    /// Nothing, but call again now (the library took a post-handshake message).
    #[cfg_attr(not(feature = "mbedtls"), allow(dead_code))] // Mbed TLS's alone so far
    Again,
    /// Nothing until more records arrive.
    Empty,
    Failed(anyhow::Error),
}

/// Writes all of `data` through `write`, which returns how many bytes it took (at most
/// `c_int::MAX` at a time, as the libraries' lengths are ints).
pub fn write_all(data: &[u8], mut write: impl FnMut(&[u8]) -> Result<usize>) -> Result<()> {
    let mut off = 0;
    while off < data.len() {
        let end = data.len().min(off + std::ffi::c_int::MAX as usize);
        off += write(&data[off..end])?;
    }
    Ok(())
}

/// Fills `buf` from `read` until it is full or nothing more has arrived. A close_notify
/// behind data is kept in `peer_closed` and reported by the next call, as the libraries
/// report it once.
pub fn read_into(
    buf: &mut [u8],
    peer_closed: &mut bool,
    mut read: impl FnMut(&mut [u8]) -> Read,
) -> Result<usize> {
    if *peer_closed {
        return Err(PeerClosed.into());
    }
    let mut got = 0;
    while got < buf.len() {
        let end = buf.len().min(got + std::ffi::c_int::MAX as usize);
        match read(&mut buf[got..end]) {
            Read::Data(n) => got += n,
            Read::Again => {}
            Read::Empty => break,
            Read::Closed if got == 0 => return Err(PeerClosed.into()),
            Read::Closed => {
                *peer_closed = true;
                break;
            }
            Read::Failed(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_behind_data_is_reported_by_the_next_call() {
        let mut script = vec![Read::Closed, Read::Data(3)];
        let mut closed = false;
        let mut buf = [0u8; 8];
        let n = read_into(&mut buf, &mut closed, |_| script.pop().unwrap()).unwrap();
        assert_eq!(n, 3);
        assert!(closed);
        let again = read_into(&mut buf, &mut closed, |_| unreachable!());
        assert!(again.unwrap_err().is::<PeerClosed>());
    }

    #[test]
    fn again_reads_on_and_empty_stops() {
        let mut script = vec![Read::Empty, Read::Data(2), Read::Again];
        let mut closed = false;
        let mut buf = [0u8; 8];
        let n = read_into(&mut buf, &mut closed, |_| script.pop().unwrap()).unwrap();
        assert_eq!(n, 2);
        assert!(!closed);
    }

    #[test]
    fn writes_go_on_until_all_is_taken() {
        let mut calls = Vec::new();
        write_all(b"abcdef", |d| {
            calls.push(d.len());
            Ok(d.len().min(4))
        })
        .unwrap();
        assert_eq!(calls, [6, 2]);
    }
}
