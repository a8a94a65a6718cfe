//! The TCP port a process listens on, read from Linux's /proc without connecting to it.
//!
//! A tool that cannot print the port it was given by the OS (gnutls-serv with `-p 0` prints
//! "port 0") used to get a port picked for it in advance and was probed by connecting. Both
//! raced with the other cells: the port could be handed to another server between the pick
//! and the tool's bind, and the probe was then accepted by that server, which serves one
//! connection and had spent it. Reading the socket table touches no one else's server.

use std::collections::HashSet;
use std::fs;

/// `/proc/net/tcp`'s state code for a listening socket.
const TCP_LISTEN: &str = "0A";

/// The port of the first IPv4 TCP socket that process `pid` listens on, or `None` while it
/// has none (or the process is gone).
pub fn ipv4_port(pid: u32) -> Option<u16> {
    let inodes = socket_inodes(pid);
    if inodes.is_empty() {
        return None;
    }
    let table = fs::read_to_string("/proc/net/tcp").ok()?;
    listening_port_in(&table, &inodes)
}

/// The inodes of the sockets among the process's open files.
fn socket_inodes(pid: u32) -> HashSet<u64> {
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return HashSet::new();
    };
    fds.filter_map(|fd| fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|target| {
            let t = target.to_str()?;
            t.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
        })
        .collect()
}

/// In a `/proc/net/tcp` table, the local port of a listening socket whose inode is one of
/// `inodes`. Columns: sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode.
fn listening_port_in(table: &str, inodes: &HashSet<u64>) -> Option<u16> {
    table.lines().skip(1).find_map(|line| {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let (local, state, inode) = (cols.get(1)?, cols.get(3)?, cols.get(9)?);
        if *state != TCP_LISTEN || !inodes.contains(&inode.parse().ok()?) {
            return None;
        }
        u16::from_str_radix(local.rsplit_once(':')?.1, 16).ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 100 0 0 10 0
   1: 00000000:905D 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 100 0 0 10 0
   2: 0100007F:905D 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0000000000000000 20 4 30 10 -1
";

    #[test]
    fn finds_only_the_processs_own_listening_socket() {
        assert_eq!(
            listening_port_in(TABLE, &HashSet::from([222])),
            Some(0x905D)
        );
        assert_eq!(listening_port_in(TABLE, &HashSet::from([111])), Some(8080));
        // An established connection is not a listener, and another process's socket is not ours.
        assert_eq!(listening_port_in(TABLE, &HashSet::from([333])), None);
        assert_eq!(listening_port_in(TABLE, &HashSet::from([444])), None);
        assert_eq!(listening_port_in("", &HashSet::from([111])), None);
    }

    #[test]
    fn reads_a_real_listener_of_this_process() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(ipv4_port(std::process::id()), Some(port));
        drop(l);
        assert_eq!(ipv4_port(std::process::id()), None);
    }
}
