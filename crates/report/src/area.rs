//! The areas a run's scenarios fall into (full and resumed handshakes, extras, bulk, memory,
//! throughput): the terminal and the report group figures by them, from the parsed id.

use tlsmatrix_model::scenario::{Extras, Resumption, Scenario};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Area {
    Handshake,
    Resumption,
    /// Full handshakes with an extra: mTLS, a longer chain, a HelloRetryRequest. Kept apart
    /// so they do not move the plain full-handshake summary.
    Extras,
    Bulk,
    Memory,
    Throughput,
    Other,
}

impl Area {
    pub fn title(self) -> &'static str {
        match self {
            Area::Handshake => "Full handshakes",
            Area::Resumption => "Resumed handshakes",
            Area::Extras => "Handshakes with mTLS, longer chains or a HelloRetryRequest",
            Area::Bulk => "Bulk transfer",
            Area::Memory => "Memory per session",
            Area::Throughput => "Handshake throughput on one and all cores",
            Area::Other => "Other scenarios",
        }
    }

    /// The area's name in the summary's table.
    pub fn short(self) -> &'static str {
        match self {
            Area::Handshake => "full handshakes",
            Area::Resumption => "resumed handshakes",
            Area::Extras => "mTLS, chains, HRR",
            Area::Bulk => "bulk",
            Area::Memory => "memory",
            Area::Throughput => "throughput",
            Area::Other => "other",
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            Area::Handshake => "handshake",
            Area::Resumption => "resumption",
            Area::Extras => "extras",
            Area::Bulk => "bulk",
            Area::Memory => "memory",
            Area::Throughput => "throughput",
            Area::Other => "other",
        }
    }
}

pub fn area(scenario: &str) -> Area {
    match scenario.parse::<Scenario>() {
        Ok(Scenario::Handshake(h)) if h.extras != Extras::default() => Area::Extras,
        Ok(Scenario::Handshake(h)) if h.resumption == Resumption::Full => Area::Handshake,
        Ok(Scenario::Handshake(_)) => Area::Resumption,
        Ok(Scenario::Bulk(_)) => Area::Bulk,
        Ok(Scenario::Memory(_)) => Area::Memory,
        Ok(Scenario::Throughput(_)) => Area::Throughput,
        Err(_) => Area::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_follow_the_scenario() {
        assert_eq!(
            area("handshake-tls13-ecdsa-p256-x25519-full"),
            Area::Handshake
        );
        assert_eq!(area("bulk-tls13-aes-128-gcm-16k"), Area::Bulk);
        assert_eq!(
            area("handshake-tls13-ecdsa-p256-x25519-full-hrr"),
            Area::Extras
        );
        assert_eq!(area("memory-tls13-ecdsa-p256-n100"), Area::Memory);
        assert_eq!(area("libp2p-handshake"), Area::Other);
    }
}
