//! The metric table checked against itself.

use super::*;
use std::collections::BTreeSet;

#[test]
fn the_table_names_every_metric_once_and_names_round_trip() {
    assert_eq!(
        METRICS
            .iter()
            .map(|r| r.metric)
            .collect::<BTreeSet<_>>()
            .len(),
        METRICS.len()
    );
    assert_eq!(
        METRICS
            .iter()
            .map(|r| r.name)
            .collect::<BTreeSet<_>>()
            .len(),
        METRICS.len()
    );
    for (i, &m) in Metric::ALL.iter().enumerate() {
        assert_eq!(m as usize, i, "{m:?} is out of the enum's order");
        assert_eq!(m.row().metric, m);
        assert_eq!(m.as_str().parse::<Metric>().unwrap(), m);
    }
    // A new variant without a row would be past the table's end.
    assert_eq!(
        Metric::ServerTcpOtherInstructions as usize,
        METRICS.len() - 1
    );
    assert!(!Metric::ClientCpuNs.higher_is_better());
    assert!(Metric::SendMbPerS.higher_is_better());
}

#[test]
fn rows_agree_with_themselves() {
    for r in METRICS {
        // Names say whose figure it is.
        let whose = if r.name.starts_with("client_") || r.name.starts_with("send_") {
            Some(FigureSide::Client)
        } else if r.name.starts_with("server_") || r.name.starts_with("recv_") {
            Some(FigureSide::Server)
        } else {
            None
        };
        if let (Some(w), false) = (whose, r.source == Source::Wire) {
            assert_eq!(r.side, w, "{}", r.name);
        }
        if r.source == Source::Profile || r.unit == "fraction" {
            assert_eq!(r.scale, Scale::Percent, "{}", r.name);
        }
        assert!(!r.about.is_empty() && !r.title.is_empty());
    }
    for m in Metric::SEND_PROFILE.iter().chain(&Metric::RECV_PROFILE) {
        assert!(m.is_profile_share());
    }
}
