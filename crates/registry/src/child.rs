//! Child processes that end with tlsmatrix. Drivers, peers and BoGo's runner run in process
//! groups of their own (so a kill at a limit takes what they started too), which also keeps
//! a terminal's Ctrl-C from reaching them; without this a killed `tlsmatrix peer server`
//! left its driver listening.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Has the kernel send `cmd`'s process SIGTERM when the thread that starts it ends: tlsmatrix
/// killed by SIGTERM, SIGINT, SIGHUP or SIGKILL, its exit, or its panic. Start the child from
/// the thread that waits for it, since the signal follows that thread's end.
pub fn ends_with_parent(cmd: &mut Command) -> &mut Command {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only prctl and getppid, both async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl; then no signal will come.
            if libc::getppid() != parent {
                return Err(std::io::Error::other("its parent ended before it started"));
            }
            Ok(())
        })
    }
}
