//! Each side's metric of a kind, for code that handles both sides alike.

use super::Metric;
use crate::side::Side;

impl Metric {
    /// A side's crypto floor and its parts (`FloorPart::ALL`'s order).
    pub fn floor_of(side: Side) -> (Metric, [Metric; 3]) {
        match side {
            Side::Client => (
                Metric::ClientFloorNs,
                [
                    Metric::ClientFloorKexNs,
                    Metric::ClientFloorSigNs,
                    Metric::ClientFloorKdfNs,
                ],
            ),
            Side::Server => (
                Metric::ServerFloorNs,
                [
                    Metric::ServerFloorKexNs,
                    Metric::ServerFloorSigNs,
                    Metric::ServerFloorKdfNs,
                ],
            ),
        }
    }

    /// A side's floor over its handshake time.
    pub fn floor_share_of(side: Side) -> Metric {
        match side {
            Side::Client => Metric::ClientFloorShare,
            Side::Server => Metric::ServerFloorShare,
        }
    }

    /// A side's QUIC handshake time (`--measure quic`).
    pub fn quic_ns_of(side: Side) -> Metric {
        match side {
            Side::Client => Metric::ClientQuicNs,
            Side::Server => Metric::ServerQuicNs,
        }
    }

    /// A side's QUIC handshake time over its TCP handshake time.
    pub fn quic_over_tcp_of(side: Side) -> Metric {
        match side {
            Side::Client => Metric::ClientQuicOverTcp,
            Side::Server => Metric::ServerQuicOverTcp,
        }
    }

    /// A side's handshake time.
    pub fn handshake_ns_of(side: Side) -> Metric {
        match side {
            Side::Client => Metric::ClientCpuNs,
            Side::Server => Metric::ServerCpuNs,
        }
    }

    /// A side's lock calls and atomics made for OpenSSL 3's provider layer, per handshake
    /// (`--measure instructions`).
    pub fn provider_locks_of(side: Side) -> (Metric, Metric) {
        match side {
            Side::Client => (
                Metric::ClientProviderLockCalls,
                Metric::ClientProviderAtomics,
            ),
            Side::Server => (
                Metric::ServerProviderLockCalls,
                Metric::ServerProviderAtomics,
            ),
        }
    }

    /// A side's atomic read-modify-writes per handshake (`--measure instructions`).
    pub fn atomics_of(side: Side) -> Metric {
        match side {
            Side::Client => Metric::ClientAtomics,
            Side::Server => Metric::ServerAtomics,
        }
    }

    /// Each side's profile shares (`--measure profile`), in `profile::Category::REPORTED`'s
    /// order: cipher, copies, malloc, kernel, elsewhere.
    pub const SEND_PROFILE: [Metric; 5] = [
        Metric::SendCipherShare,
        Metric::SendCopyShare,
        Metric::SendAllocShare,
        Metric::SendKernelShare,
        Metric::SendOtherShare,
    ];
    pub const RECV_PROFILE: [Metric; 5] = [
        Metric::RecvCipherShare,
        Metric::RecvCopyShare,
        Metric::RecvAllocShare,
        Metric::RecvKernelShare,
        Metric::RecvOtherShare,
    ];
}
