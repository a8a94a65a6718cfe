//! What each client offers on its library's defaults (`results/offers.json`, written by
//! `tlsmatrix interop`): the versions, groups, key shares and signature schemes of the
//! ClientHello each defaults client sent. Replaced whole by each interop run that reads them.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};
use tlsmatrix_model::client_hello::HelloOffer;

pub const SCHEMA: &str = "tlsmatrix.offers/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Offers {
    pub schema: String,
    /// The interop run that read them.
    pub run_id: String,
    pub clients: Vec<ClientOffer>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientOffer {
    pub client: String,
    pub version: String,
    /// The ClientHello's offer; `None` when none was read, and `reason` says why.
    pub offer: Option<HelloOffer>,
    #[serde(default)]
    pub reason: String,
}

pub fn write(path: &Path, offers: &Offers) -> Result<()> {
    crate::whole_file::replace(path, offers)
}

/// The offers in `path`; `Ok(None)` when there are none.
pub fn read(path: &Path) -> Result<Option<Offers>> {
    crate::whole_file::read(path, "a file of offers", SCHEMA)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_round_trip_through_their_file() {
        let dir = std::env::temp_dir().join(format!("tlsmatrix-offers-{}", std::process::id()));
        let path = dir.join("offers.json");
        assert_eq!(read(&path).unwrap(), None);
        let offers = Offers {
            schema: SCHEMA.into(),
            run_id: "interop-x".into(),
            clients: vec![
                ClientOffer {
                    client: "a".into(),
                    version: "A 1.0".into(),
                    offer: Some(HelloOffer {
                        versions: vec![0x0304],
                        groups: vec![0x11ec, 0x001d],
                        key_shares: vec![0x11ec],
                        schemes: vec![0x0403],
                        grease: false,
                        bytes: 1500,
                    }),
                    reason: String::new(),
                },
                ClientOffer {
                    client: "b".into(),
                    version: "B 2.0".into(),
                    offer: None,
                    reason: "it has no client of its library's defaults".into(),
                },
            ],
        };
        write(&path, &offers).unwrap();
        assert_eq!(read(&path).unwrap(), Some(offers));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
