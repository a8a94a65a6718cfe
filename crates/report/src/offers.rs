//! What each client offers on its library's defaults, from the ClientHellos `tlsmatrix
//! interop` read (`results/offers.json`): the table and the sentence the post-quantum section
//! and the terminal show.

use tlsmatrix_history::offers::Offers;
use tlsmatrix_model::client_hello::{group_name, HelloOffer};
use tlsmatrix_model::codes;

use crate::doc::{Cell, Class, Table};

fn names(codes: &[u16], name: impl Fn(u16) -> String) -> String {
    if codes.is_empty() {
        return "none".into();
    }
    codes
        .iter()
        .map(|&c| name(c))
        .collect::<Vec<_>>()
        .join(", ")
}

fn none_or(list: Vec<String>) -> String {
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

/// Client x what its defaults ClientHello offers; hover a row's groups for every group.
pub fn table(offers: &Offers) -> Table {
    let rows = offers
        .clients
        .iter()
        .map(|c| {
            let mut row = vec![Cell::with(
                c.client.clone(),
                Class::Plain,
                Some(c.version.clone()),
            )];
            match &c.offer {
                Some(o) => {
                    let pq_shares = HelloOffer::post_quantum(&o.key_shares);
                    row.push(Cell::with(
                        names(&o.key_shares, group_name),
                        if pq_shares.is_empty() {
                            Class::Plain
                        } else {
                            Class::Good
                        },
                        None,
                    ));
                    row.push(Cell::with(
                        none_or(HelloOffer::post_quantum(&o.groups)),
                        Class::Plain,
                        Some(format!(
                            "every group, in order: {}",
                            names(&o.groups, group_name)
                        )),
                    ));
                    let mldsa = o.mldsa_schemes();
                    row.push(Cell::with(
                        none_or(mldsa.clone()),
                        if mldsa.is_empty() {
                            Class::Plain
                        } else {
                            Class::Good
                        },
                        Some(format!(
                            "every scheme, in order: {}",
                            names(&o.schemes, codes::scheme_name)
                        )),
                    ));
                    row.push(Cell::plain(names(&o.versions, codes::version_name)));
                    row.push(Cell::plain(format!("{} B", o.bytes)));
                }
                None => {
                    row.push(Cell::with("-", Class::Unsupported, Some(c.reason.clone())));
                    row.extend((0..4).map(|_| Cell::plain("")));
                }
            }
            row
        })
        .collect();
    Table {
        caption: format!(
            "What each client offers on its library's defaults: its ClientHello as read by interop run {} (hover: every group and scheme in the client's order; a dash: no defaults client, with why)",
            offers.run_id
        ),
        header: [
            "client",
            "key shares sent",
            "post-quantum groups offered",
            "ML-DSA schemes offered",
            "versions",
            "ClientHello",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        // Every column but the ClientHello's size is a list of names.
        label_cols: 5,
    }
}

/// One sentence: which clients send a post-quantum key share, and which offer ML-DSA, on
/// their defaults.
pub fn sentence(offers: &Offers) -> Option<String> {
    let read: Vec<(&str, &HelloOffer)> = offers
        .clients
        .iter()
        .filter_map(|c| c.offer.as_ref().map(|o| (c.client.as_str(), o)))
        .collect();
    if read.is_empty() {
        return None;
    }
    let who = |pred: &dyn Fn(&HelloOffer) -> bool| -> Vec<&str> {
        read.iter()
            .filter(|(_, o)| pred(o))
            .map(|(n, _)| *n)
            .collect()
    };
    let shares = who(&|o| !HelloOffer::post_quantum(&o.key_shares).is_empty());
    let mldsa = who(&|o| !o.mldsa_schemes().is_empty());
    let list = |v: &[&str]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    Some(format!(
        "On its defaults, {} of the {} clients read send a post-quantum key share ({}); {} offer an ML-DSA signature scheme ({}).",
        shares.len(),
        read.len(),
        list(&shares),
        mldsa.len(),
        list(&mldsa)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_history::offers::{ClientOffer, SCHEMA};

    #[test]
    fn the_table_and_sentence_say_who_sends_post_quantum_shares_and_ml_dsa() {
        let offer = |shares: Vec<u16>, schemes: Vec<u16>| HelloOffer {
            versions: vec![0x0304, 0x0303],
            groups: vec![0x11ec, 0x001d, 0x0017],
            key_shares: shares,
            schemes,
            grease: false,
            bytes: 1400,
        };
        let offers = Offers {
            schema: SCHEMA.into(),
            run_id: "interop-1".into(),
            clients: vec![
                ClientOffer {
                    client: "pq".into(),
                    version: "PQ 1".into(),
                    offer: Some(offer(vec![0x11ec, 0x001d], vec![0x0904, 0x0403])),
                    reason: String::new(),
                },
                ClientOffer {
                    client: "classic".into(),
                    version: "C 1".into(),
                    offer: Some(offer(vec![0x001d], vec![0x0403])),
                    reason: String::new(),
                },
                ClientOffer {
                    client: "none".into(),
                    version: "N 1".into(),
                    offer: None,
                    reason: "it has no client of its library's defaults".into(),
                },
            ],
        };
        let t = table(&offers);
        assert_eq!(t.rows.len(), 3);
        assert_eq!(t.rows[0][1].text, "X25519MLKEM768, x25519");
        assert_eq!(t.rows[0][3].text, "mldsa44");
        assert_eq!(t.rows[1][3].text, "none");
        assert_eq!(
            t.rows[2][1].title.as_deref(),
            Some("it has no client of its library's defaults")
        );
        assert_eq!(
            sentence(&offers).unwrap(),
            "On its defaults, 1 of the 2 clients read send a post-quantum key share (pq); 1 offer an ML-DSA signature scheme (pq)."
        );
    }
}
