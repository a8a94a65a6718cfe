//! What an adapter allocates to stand in for the harness's transport (a datagram pair in place
//! of a UDP socket, whose buffers would be the kernel's) is not the library's heap. A binary
//! that counts heap registers how to pause its count; an adapter makes such a transport
//! inside [`outside_count`], which is a plain call where nothing counts.

use std::sync::OnceLock;

static PAUSE: OnceLock<fn(bool) -> bool> = OnceLock::new();

/// Registers the heap counter's switch: given whether to count, it returns whether it was
/// counting. The first registration holds.
pub fn register(switch: fn(bool) -> bool) {
    let _ = PAUSE.set(switch);
}

/// Runs `f` with the heap count paused, if a counter is registered.
pub fn outside_count<R>(f: impl FnOnce() -> R) -> R {
    match PAUSE.get() {
        None => f(),
        Some(switch) => {
            let was = switch(false);
            let r = f();
            switch(was);
            r
        }
    }
}
