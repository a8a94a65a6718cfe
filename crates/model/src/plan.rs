//! Named plans: a set of impls and scenarios that mirrors someone else's published
//! measurement, so that `tlsmatrix run --plan NAME` repeats its configuration here and the
//! report can set its figures beside ours, factor for factor.

use crate::record::Metric;

/// One published figure: what the source calls it, the scenario and figure that measure the
/// same thing here, and the source's value for each library (handshakes or MB per second).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PublishedRow {
    pub label: &'static str,
    pub scenario: &'static str,
    pub metric: Metric,
    /// (impl name here, the source's figure), the plan's baseline first.
    pub values: &'static [(&'static str, f64)],
}

/// A plan: where its figures come from, how it was configured, and what runs it here.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub name: &'static str,
    /// One line for `--help` and `tlsmatrix list`.
    pub about: &'static str,
    pub source: &'static str,
    pub url: &'static str,
    /// The source's machine and library versions, as it states them.
    pub machine: &'static str,
    pub versions: &'static str,
    /// How the source's configuration differs from the scenarios that stand in for it here,
    /// each difference and its expected weight.
    pub differences: &'static [&'static str],
    /// The impls, the baseline first: the published factors are each library over it.
    pub impls: &'static [&'static str],
    pub rows: &'static [PublishedRow],
}

impl Plan {
    /// Every scenario the plan's rows need, each once, in row order.
    pub fn scenarios(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for r in self.rows {
            if !out.contains(&r.scenario) {
                out.push(r.scenario);
            }
        }
        out
    }

    /// The plan's baseline: the library the published factors divide by.
    pub fn baseline(&self) -> &'static str {
        self.impls[0]
    }
}

const R: &str = "rustls-aws-lc";
const B: &str = "boringssl";
const O: &str = "openssl-3.6";

const fn row(
    label: &'static str,
    scenario: &'static str,
    metric: Metric,
    values: &'static [(&'static str, f64)],
) -> PublishedRow {
    PublishedRow {
        label,
        scenario,
        metric,
        values,
    }
}

/// rustls's performance report of 2026-03-07: rustls-bench against ctz/openssl-bench, each
/// side of an in-memory handshake timed apart, a chain of three certificates (rustls's
/// test-ca: end entity, intermediate, root), AES-256-GCM-SHA384 suites, and each library's
/// default key exchange, which in those versions is X25519MLKEM768 in TLS 1.3 and X25519 in
/// TLS 1.2 (openssl-bench sets no groups; rustls-bench takes aws-lc-rs's default provider).
pub const RUSTLS_REPORT: Plan = Plan {
    name: "rustls-report",
    about: "rustls's published report of 2026-03-07: rustls-aws-lc, BoringSSL and OpenSSL 3.6, full and resumed handshakes with a chain of three, bulk TLS 1.2 AES-128-GCM and TLS 1.3 AES-256-GCM",
    source: "rustls performance report, 2026-03-07 (rustls 0.23.37 vs OpenSSL 3.6.1 vs BoringSSL)",
    url: "https://rustls.dev/perf/2026-03-07-report/",
    machine: "bare-metal Xeon E-2386G (AVX-512F, AVX-512 IFMA, VAES), hyper-threading and frequency scaling off",
    versions: "rustls 0.23.37 on aws-lc-rs 1.16.0 / aws-lc-sys 0.37.1; OpenSSL 3.6.1 (gcc); BoringSSL 30cd935 (clang)",
    differences: &[
        "the published handshakes take each library's default groups (openssl-bench sets none, rustls-bench uses aws-lc-rs's default provider), X25519MLKEM768 first in TLS 1.3 in those versions: all three libraries' TLS 1.3 resumed rates fell by 22-53% from the 2024-10-18 report to this one (on the same machine) while their TLS 1.2 ones held within 2%, as a hybrid key exchange in every resumption would. So the TLS 1.3 rows here pin X25519MLKEM768 on both sides and the TLS 1.2 rows X25519",
        "tickets: here each TLS 1.3 resumption's server issues one ticket and its client takes it in; in rustls-bench rustls's server issues two (its default) and its client takes both in, while in openssl-bench OpenSSL's and BoringSSL's servers issue two (their default) and the client never reads them inside the timed handshake, which leaves their clients' ticket work out of the published figures and not rustls's",
        "the published handshakes negotiate AES-256-GCM-SHA384 suites and ours AES-128-GCM-SHA256 (the scenarios fix it): a SHA-384 transcript costs each side a few microseconds, under 2% of a full handshake",
        "openssl-bench's harness zeroes a 256 KiB buffer every time it moves bytes from one side to the other, twice per side per handshake, inside the timed part; rustls-bench does not. Built here against the same BoringSSL and OpenSSL 3.6 as ours, it spent about a quarter of BoringSSL's TLS 1.2 resumed handshake there and about an eighth of OpenSSL's (2-4% of a full one), so the published TLS 1.2 resumed factors understate both, BoringSSL most (docs/findings.md)",
        "the two C libraries against each other: openssl-bench, run here against the same BoringSSL and OpenSSL 3.6, gives the published BoringSSL/OpenSSL ratios of the four TLS 1.3 full-handshake rows within 7%, and ours agree with it; a row where both libraries' factors over rustls sit below the published ones by the same fraction differs on rustls's side (a newer rustls and aws-lc-rs here: see Versions)",
        "rustls-bench writes 1 MB at a time and ours 16 KiB, both in 16 KiB records: here 1 MiB writes on glibc's malloc swing up to 4x from sample to sample within one process (docs/findings.md), 16 KiB writes do not",
        "the published TLS 1.2 resumed row does not say whether it is the session-ID or the ticket run of the two rustls-bench makes; both are measured here and set beside it",
        "ours run on a shared 2-core VM with two groups sampled at once, paired with rustls-aws-lc round by round; theirs on a dedicated machine, each library in turn",
        "rustls receives at 0.76-0.78 of its own sending rate on this machine, in tlsmatrix and in a raw rustls loop alike (cargo bench --bench raw_rustls_bulk), against 0.99 in the published run: its receive path copies each record's plaintext twice and allocates once, which costs more here than on the published Xeon, so every library's receive factor over rustls is higher here",
    ],
    impls: &[R, B, O],
    rows: &[
        row("transfer, 1.2, aes-128-gcm, sending", "bulk-tls12-aes-128-gcm-16k", Metric::SendMbPerS, &[(R, 8133.85), (B, 8291.9), (O, 6610.19)]),
        row("transfer, 1.2, aes-128-gcm, receiving", "bulk-tls12-aes-128-gcm-16k", Metric::RecvMbPerS, &[(R, 7946.96), (B, 6722.26), (O, 7129.43)]),
        row("transfer, 1.3, aes-256-gcm, sending", "bulk-tls13-aes-256-gcm-16k", Metric::SendMbPerS, &[(R, 7421.02), (B, 7564.71), (O, 5844.35)]),
        row("transfer, 1.3, aes-256-gcm, receiving", "bulk-tls13-aes-256-gcm-16k", Metric::RecvMbPerS, &[(R, 7332.91), (B, 6217.68), (O, 6237.52)]),
        row("full handshakes, 1.2, rsa, client", "handshake-tls12-rsa-2048-x25519-full-chain3", Metric::ClientCpuNs, &[(R, 8122.99), (B, 5657.81), (O, 3186.87)]),
        row("full handshakes, 1.2, rsa, server", "handshake-tls12-rsa-2048-x25519-full-chain3", Metric::ServerCpuNs, &[(R, 2835.45), (B, 1476.66), (O, 2154.41)]),
        row("full handshakes, 1.2, ecdsa, client", "handshake-tls12-ecdsa-p256-x25519-full-chain3", Metric::ClientCpuNs, &[(R, 4344.30), (B, 3545.32), (O, 2201.16)]),
        row("full handshakes, 1.2, ecdsa, server", "handshake-tls12-ecdsa-p256-x25519-full-chain3", Metric::ServerCpuNs, &[(R, 13524.99), (B, 9057.57), (O, 5226.96)]),
        row("full handshakes, 1.3, rsa, client", "handshake-tls13-rsa-2048-x25519mlkem768-full-chain3", Metric::ClientCpuNs, &[(R, 4766.63), (B, 3179.48), (O, 2219.64)]),
        row("full handshakes, 1.3, rsa, server", "handshake-tls13-rsa-2048-x25519mlkem768-full-chain3", Metric::ServerCpuNs, &[(R, 2357.36), (B, 1302.03), (O, 1712.64)]),
        row("full handshakes, 1.3, ecdsa, client", "handshake-tls13-ecdsa-p256-x25519mlkem768-full-chain3", Metric::ClientCpuNs, &[(R, 3160.39), (B, 2364.8), (O, 1642.88)]),
        row("full handshakes, 1.3, ecdsa, server", "handshake-tls13-ecdsa-p256-x25519mlkem768-full-chain3", Metric::ServerCpuNs, &[(R, 6786.26), (B, 4981.38), (O, 3176.58)]),
        row("resumed handshakes, 1.2, client (session ID)", "handshake-tls12-rsa-2048-x25519-session-id-chain3", Metric::ClientCpuNs, &[(R, 63870.34), (B, 45390.3), (O, 21136.9)]),
        row("resumed handshakes, 1.2, server (session ID)", "handshake-tls12-rsa-2048-x25519-session-id-chain3", Metric::ServerCpuNs, &[(R, 72480.52), (B, 44429.0), (O, 22647.1)]),
        row("resumed handshakes, 1.2, client (ticket)", "handshake-tls12-rsa-2048-x25519-ticket-chain3", Metric::ClientCpuNs, &[(R, 63870.34), (B, 45390.3), (O, 21136.9)]),
        row("resumed handshakes, 1.2, server (ticket)", "handshake-tls12-rsa-2048-x25519-ticket-chain3", Metric::ServerCpuNs, &[(R, 72480.52), (B, 44429.0), (O, 22647.1)]),
        row("resumed handshakes, 1.3, client", "handshake-tls13-rsa-2048-x25519mlkem768-ticket-chain3", Metric::ClientCpuNs, &[(R, 6735.88), (B, 4648.41), (O, 3594.88)]),
        row("resumed handshakes, 1.3, server", "handshake-tls13-rsa-2048-x25519mlkem768-ticket-chain3", Metric::ServerCpuNs, &[(R, 7249.08), (B, 5687.32), (O, 3780.0)]),
    ],
};

/// The rustls-vs-OpenSSL study the project grew from (seeds/002): rustls 0.22.0 on
/// aws-lc-rs 1.5.2 (gcc, jemalloc, its comparison table) against OpenSSL 3.2.0, both through
/// ctz's benchmark tools of the time: RSA 2048 with a chain of three, X25519 (the default
/// then), AES-256-GCM-SHA384 handshakes, bulk in 1 MB writes.
pub const SEED_002: Plan = Plan {
    name: "seed-002",
    about: "the rustls-vs-OpenSSL study of seeds/002 (rustls 0.22.0 against OpenSSL 3.2.0): RSA 2048 handshakes, full, session-ID and ticket, and the bulk suites",
    source: "seeds/002, rustls 0.22.0 (aws-lc-rs) vs OpenSSL 3.2.0",
    url: "the project's seeds/002",
    machine: "bare-metal Xeon E-2386G (AVX-512F, AVX-512 IFMA, VAES), hyper-threading and frequency scaling off",
    versions: "rustls 0.22.0 on aws-lc-rs 1.5.2 (gcc 12.2, jemalloc); OpenSSL 3.2.0",
    differences: &[
        "OpenSSL 3.2.0 is not built here; OpenSSL 3.6 stands in for it",
        "the seed's TLS 1.3 session-ID rows are stateful TLS 1.3 resumption (the server keeps the session and its ticket only names it), which no scenario here measures, so they are left out",
        "the seed's rustls ran on jemalloc, ours on glibc's malloc: in 0.22 jemalloc more than doubled rustls's sending (the seed traced it to page faults), which rustls 0.23 and this harness no longer show on glibc",
        "the seed's handshakes negotiate AES-256-GCM-SHA384 suites and ours AES-128-GCM-SHA256 (the scenarios fix it): a SHA-384 transcript costs each side a few microseconds",
        "rustls-bench writes 1 MB at a time and ours 16 KiB, both in 16 KiB records (see rustls-report)",
        "ours run on a shared 2-core VM with two groups sampled at once, paired with rustls-aws-lc round by round; the seed's on a dedicated machine, the median of 30 runs of each tool",
    ],
    impls: &[R, O],
    rows: &[
        row("bulk, 1.2, AES128-GCM, sent", "bulk-tls12-aes-128-gcm-16k", Metric::SendMbPerS, &[(R, 6712.29), (O, 6503.58)]),
        row("bulk, 1.2, AES128-GCM, received", "bulk-tls12-aes-128-gcm-16k", Metric::RecvMbPerS, &[(R, 6017.82), (O, 7234.11)]),
        row("bulk, 1.2, AES256-GCM, sent", "bulk-tls12-aes-256-gcm-16k", Metric::SendMbPerS, &[(R, 6193.18), (O, 6162.57)]),
        row("bulk, 1.2, AES256-GCM, received", "bulk-tls12-aes-256-gcm-16k", Metric::RecvMbPerS, &[(R, 5669.77), (O, 6609.27)]),
        row("bulk, 1.2, CHACHA20-POLY1305, sent", "bulk-tls12-chacha20-poly1305-16k", Metric::SendMbPerS, &[(R, 1750.11), (O, 2998.06)]),
        row("bulk, 1.2, CHACHA20-POLY1305, received", "bulk-tls12-chacha20-poly1305-16k", Metric::RecvMbPerS, &[(R, 1731.27), (O, 3107.17)]),
        row("bulk, 1.3, AES256-GCM, sent", "bulk-tls13-aes-256-gcm-16k", Metric::SendMbPerS, &[(R, 6256.94), (O, 6041.82)]),
        row("bulk, 1.3, AES256-GCM, received", "bulk-tls13-aes-256-gcm-16k", Metric::RecvMbPerS, &[(R, 5945.02), (O, 6406.44)]),
        row("handshake-full, 1.2, RSA, client", "handshake-tls12-rsa-2048-x25519-full-chain3", Metric::ClientCpuNs, &[(R, 4991.73), (O, 2581.16)]),
        row("handshake-full, 1.2, RSA, server", "handshake-tls12-rsa-2048-x25519-full-chain3", Metric::ServerCpuNs, &[(R, 1485.95), (O, 2120.95)]),
        row("handshake-session-id, 1.2, RSA, client", "handshake-tls12-rsa-2048-x25519-session-id-chain3", Metric::ClientCpuNs, &[(R, 49893.99), (O, 21514.4)]),
        row("handshake-session-id, 1.2, RSA, server", "handshake-tls12-rsa-2048-x25519-session-id-chain3", Metric::ServerCpuNs, &[(R, 41846.34), (O, 23183.8)]),
        row("handshake-ticket, 1.2, RSA, client", "handshake-tls12-rsa-2048-x25519-ticket-chain3", Metric::ClientCpuNs, &[(R, 47419.84), (O, 21491.3)]),
        row("handshake-ticket, 1.2, RSA, server", "handshake-tls12-rsa-2048-x25519-ticket-chain3", Metric::ServerCpuNs, &[(R, 36518.87), (O, 20190.1)]),
        row("handshake-full, 1.3, RSA, client", "handshake-tls13-rsa-2048-x25519-full-chain3", Metric::ClientCpuNs, &[(R, 4683.46), (O, 2273.57)]),
        row("handshake-full, 1.3, RSA, server", "handshake-tls13-rsa-2048-x25519-full-chain3", Metric::ServerCpuNs, &[(R, 1362.79), (O, 1874.1)]),
        row("handshake-ticket, 1.3, RSA, client", "handshake-tls13-rsa-2048-x25519-ticket-chain3", Metric::ClientCpuNs, &[(R, 11244.79), (O, 5182.51)]),
        row("handshake-ticket, 1.3, RSA, server", "handshake-tls13-rsa-2048-x25519-ticket-chain3", Metric::ServerCpuNs, &[(R, 7347.91), (O, 4718.39)]),
    ],
};

/// Every named plan.
pub const PLANS: &[Plan] = &[RUSTLS_REPORT, SEED_002];

/// The plan of this name, or why there is none.
pub fn named(name: &str) -> Result<&'static Plan, String> {
    PLANS.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = PLANS.iter().map(|p| p.name).collect();
        format!("no plan named '{name}'; plans: {}", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    #[test]
    fn every_plan_names_scenarios_that_parse_and_values_for_every_impl() {
        for p in PLANS {
            assert_eq!(named(p.name).unwrap().name, p.name);
            for r in p.rows {
                let s: Scenario = r
                    .scenario
                    .parse()
                    .unwrap_or_else(|e| panic!("{}: {e}", r.scenario));
                assert_eq!(
                    s.to_string(),
                    r.scenario,
                    "{} is not in its canonical form",
                    r.scenario
                );
                let impls: Vec<&str> = r.values.iter().map(|v| v.0).collect();
                assert_eq!(
                    impls, p.impls,
                    "{}: a value per impl, baseline first",
                    r.label
                );
                assert!(
                    r.values.iter().all(|v| v.1.is_finite() && v.1 > 0.0),
                    "{}",
                    r.label
                );
                let handshake = r.scenario.starts_with("handshake-");
                let time = matches!(r.metric, Metric::ClientCpuNs | Metric::ServerCpuNs);
                assert_eq!(
                    handshake, time,
                    "{}: handshakes are timed per side, bulk in MB/s",
                    r.label
                );
            }
        }
        assert!(named("nope").unwrap_err().contains("rustls-report"));
    }

    #[test]
    fn the_rustls_report_plan_mirrors_its_configuration() {
        let p = &RUSTLS_REPORT;
        assert_eq!(p.baseline(), "rustls-aws-lc");
        // A chain of three in every handshake; each library's default group (the hybrid in
        // TLS 1.3, X25519 in TLS 1.2); the two bulk suites.
        for s in p.scenarios() {
            if s.starts_with("handshake-tls13-") {
                assert!(
                    s.ends_with("-chain3") && s.contains("-x25519mlkem768-"),
                    "{s}"
                );
            } else if s.starts_with("handshake-tls12-") {
                assert!(s.ends_with("-chain3") && s.contains("-x25519-"), "{s}");
            } else {
                assert!(
                    ["bulk-tls12-aes-128-gcm-16k", "bulk-tls13-aes-256-gcm-16k"].contains(&s),
                    "{s}"
                );
            }
        }
        // Its headline: TLS 1.3 ECDSA server handshakes, 6,786 / 4,981 / 3,177 per second.
        let r = p
            .rows
            .iter()
            .find(|r| r.label == "full handshakes, 1.3, ecdsa, server")
            .unwrap();
        assert_eq!(r.values, &[(R, 6786.26), (B, 4981.38), (O, 3176.58)]);
    }
}
