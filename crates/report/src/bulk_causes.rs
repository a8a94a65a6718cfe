//! "Bulk figures explained": each impl's send and receive rates against its own library's
//! AEAD ceiling, beside the page faults and context switches of the same transfer, and the
//! same figures under each allocator. A stack far below its ceiling spends its time outside
//! the cipher; the counters and the allocator columns say whether the kernel or malloc is
//! where.

use tlsmatrix_analysis::bulk::{
    bulk_scenarios, copy_probe, median, record, shortfalls, size_flips, variant_shortfalls, Cause,
    ColdBlocks, Shortfall,
};
pub use tlsmatrix_analysis::bulk::{Inputs, CEILING_TARGET, FLIP};
use tlsmatrix_history::RunData;
use tlsmatrix_model::record::{self, Metric, Record};
use tlsmatrix_model::variant;

use crate::doc::{scenario_order, Block, Cell, Class, Section, Table};
use crate::figures::factor_text;

fn mbps(v: Option<f64>) -> Cell {
    v.map_or_else(|| Cell::plain("–"), |v| Cell::plain(format!("{v:.0}")))
}

/// The share of the ceiling (the median of per-sample ratios), "82%", red under the target;
/// the hover gives its interval.
fn share(r: Option<&Record>) -> Cell {
    match r {
        Some(r) => Cell::with(
            format!("{:.0}%", r.median * 100.0),
            if r.median < CEILING_TARGET {
                Class::Bad
            } else {
                Class::Good
            },
            Some(format!(
                "95% interval {:.0}-{:.0}%",
                r.ci_low * 100.0,
                r.ci_high * 100.0
            )),
        ),
        None => Cell::plain("–"),
    }
}

fn count(v: Option<f64>) -> Cell {
    v.map_or_else(|| Cell::plain("–"), |v| Cell::plain(format!("{v:.2}")))
}

fn ceiling_table(inp: &Inputs, impls: &[String]) -> Option<Table> {
    let ceiling = inp.ceiling?;
    let mut rows = Vec::new();
    for scenario in bulk_scenarios(ceiling) {
        for imp in impls {
            let at = |m| median(Some(ceiling), &scenario, imp, m);
            if at(Metric::SealMbPerS).is_none() {
                continue;
            }
            let c = inp.counters;
            let counted = |m| count(median(c, &scenario, imp, m));
            rows.push(vec![
                Cell::plain(scenario.clone()),
                Cell::plain(imp.clone()),
                mbps(at(Metric::SendMbPerS)),
                mbps(at(Metric::SealMbPerS)),
                share(record(ceiling, &scenario, imp, Metric::SendShareOfSeal)),
                mbps(at(Metric::RecvMbPerS)),
                mbps(at(Metric::OpenMbPerS)),
                share(record(ceiling, &scenario, imp, Metric::RecvShareOfOpen)),
                counted(Metric::SendPageFaultsPerMib),
                counted(Metric::RecvPageFaultsPerMib),
                counted(Metric::SendContextSwitchesPerMib),
                counted(Metric::RecvContextSwitchesPerMib),
                counted(Metric::SendColdBlocksPerMib),
                counted(Metric::RecvColdBlocksPerMib),
            ]);
        }
    }
    (!rows.is_empty()).then(|| Table {
        caption: format!(
            "Each impl with itself, run {}: bulk MB/s and its own library's AEAD on the same records, sampled in turns in one process, and the share (median of the per-sample ratios); faults, switches and cold blocks per MiB from run {}. Red: under {:.0}% of the ceiling.",
            ceiling.run_id,
            inp.counters.map_or("–", |c| c.run_id.as_str()),
            CEILING_TARGET * 100.0
        ),
        header: [
            "scenario",
            "impl",
            "send MB/s",
            "seal MB/s",
            "send/seal",
            "recv MB/s",
            "open MB/s",
            "recv/open",
            "send faults/MiB",
            "recv faults/MiB",
            "send switches/MiB",
            "recv switches/MiB",
            "send cold blocks/MiB",
            "recv cold blocks/MiB",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        label_cols: 2,
    })
}

/// The build and run variants a variant table can show, as name suffixes with their heading.
const VARIANT_COLUMNS: [(&str, &str); 3] = [
    ("+jemalloc", "jemalloc"),
    ("+mimalloc", "mimalloc"),
    ("+clang", "built by clang"),
];

/// Per library, scenario and figure: the plain build's median (gcc, glibc's malloc), then
/// each variant's with its factor against it (paired when the run sampled them in duet with
/// the baseline). Only the variants the run has get columns.
fn variant_table(run: &RunData) -> Option<Table> {
    let mut bases: Vec<String> = Vec::new();
    for imp in run.impls() {
        let base = variant::base(&imp).to_string();
        if !bases.contains(&base) {
            bases.push(base);
        }
    }
    let columns: Vec<(&str, &str)> = VARIANT_COLUMNS
        .into_iter()
        .filter(|(suffix, _)| run.records.iter().any(|r| r.client.ends_with(suffix)))
        .collect();
    if columns.is_empty() {
        return None;
    }
    let scenarios = scenario_order(run.records.iter().map(|r| r.scenario.as_str()), &[]);
    let mut rows = Vec::new();
    for scenario in &scenarios {
        let metrics: &[Metric] = if scenario.starts_with("bulk-") {
            &[Metric::SendMbPerS, Metric::RecvMbPerS]
        } else {
            &[Metric::ClientCpuNs, Metric::ServerCpuNs]
        };
        for base in &bases {
            for &m in metrics {
                let Some(plain) = record(run, scenario, base, m) else {
                    continue;
                };
                let mut row = vec![
                    Cell::plain(scenario.clone()),
                    Cell::plain(base.clone()),
                    Cell::plain(crate::figures::shown(m).title),
                    Cell::figure(plain),
                ];
                let mut any = false;
                for (suffix, _) in &columns {
                    match record(run, scenario, &format!("{base}{suffix}"), m) {
                        Some(r) => {
                            any = true;
                            row.push(Cell::figure(r));
                            row.push(Cell::factor(r, plain, 0.0));
                        }
                        None => row.extend([Cell::plain("–"), Cell::plain("–")]),
                    }
                }
                if any {
                    rows.push(row);
                }
            }
        }
    }
    let mut header: Vec<String> = ["scenario", "library", "figure", "gcc, glibc"]
        .map(String::from)
        .to_vec();
    for (_, heading) in &columns {
        header.push(heading.to_string());
        header.push("vs plain".into());
    }
    (!rows.is_empty()).then(|| Table {
        caption: format!(
            "Run {}: each library with itself as built by gcc on glibc's malloc, then on jemalloc and mimalloc (every allocation of the process, Rust's and the C library's) and with its C code built by clang; factor: times better than the plain build.",
            run.run_id
        ),
        header,
        rows,
        label_cols: 3,
    })
}

const METHOD: &str = "A bulk figure counts the time of each side's TLS calls (sealing or opening, framing, copying, allocating). The ceiling is the same library's AEAD alone, sampled in turns with the stack's transfer in one process, sealing and opening records of the scenario's size in place through its own crypto API (ring's and aws-lc-rs's LessSafeKey, OpenSSL's EVP_CIPHER with the key set once, BoringSSL's EVP_AEAD; s2n-tls seals with aws-lc as aws-lc-rs does). The share of the ceiling says how much of a stack's time goes to the cipher. Page faults and context switches come from getrusage around every call of each side, in separate runs of the same transfers; instruction counts (callgrind) do not see the kernel's work, so a stack whose time differs while its instructions do not is looked for here first.";

/// The copy probe of the ceiling run (the baseline's, or the first impl's): memcpy of one
/// record apart and 4 KiB-aliased, as a sentence with this run's figures.
fn aliasing_sentence(ceiling: &RunData) -> Option<String> {
    let probe = copy_probe(ceiling)?;
    Some(format!(
        "Copies matter because of one trap, measured in this run: glibc's memcpy of a 16 KiB record ran at {:.0} MB/s with its destination half a page from its source, and at {:.0} MB/s ({:.0} times slower) with the destination 5 bytes past the source modulo 4 KiB (4 KiB aliasing: the CPU takes each store for one the next loads may depend on). rustls copies each record's plaintext to 5 bytes into a fresh block (behind the record header), and jemalloc and mimalloc hand out 16 KiB blocks page-aligned, so an application whose plaintext buffer is page-aligned too, as those allocators make it, falls into the trap on every record: where this was found, a perf call graph put rustls's lost send rate on mimalloc in the copy of OutboundChunks::copy_to_vec, not in the cipher, and memcpy alone reproduced it ({}). Other short distances that are not a multiple of 32 slow the copy too, and libraries keep records a few bytes into page-aligned blocks on both sides of the copy, so tlsmatrix places the application's buffers in the middle of a page whatever the allocator: no allocator decides whether a stack meets the trap.",
        probe.apart,
        probe.aliased,
        probe.slowdown,
        ALIASING_FINDING.cite()
    ))
}

/// What each profile share covers (`Metric::SEND_PROFILE`'s order), as the findings name it.
const PROFILE_CATEGORIES: [&str; 5] = [
    "the cipher",
    "copies (memcpy, memmove, memset)",
    "malloc and free",
    "the kernel",
    "the rest of the library (record framing, buffer management, state)",
];

/// A range of shares, "12-30%", or one figure where they round alike.
fn range(v: impl Iterator<Item = f64> + Clone) -> String {
    let lo = v.clone().fold(f64::INFINITY, f64::min) * 100.0;
    let hi = v.fold(f64::NEG_INFINITY, f64::max) * 100.0;
    if (hi - lo).abs() < 0.5 {
        format!("{lo:.0}%")
    } else {
        format!("{lo:.0}-{hi:.0}%")
    }
}

/// What a shortfall's counters and profile say, as the clause after its figure.
fn cause_text(cause: &Cause) -> String {
    match cause {
        Cause::PageFaults(f) => {
            format!("{f:.1} page faults per MiB: the kernel maps memory it keeps giving back")
        }
        Cause::ColdBlocks(b) => format!(
            "{b:.0} large blocks per MiB that were not just freed (cold in cache), no page faults"
        ),
        Cause::Elsewhere { counted, lead } => {
            let counted = if *counted {
                "no page faults and no cold blocks"
            } else {
                "no counters in this report"
            };
            match lead {
                Some(i) => format!(
                    "{counted}; beside the cipher, the profile puts {} first",
                    PROFILE_CATEGORIES[*i]
                ),
                None => format!("{counted}, and no profile to say where the rest goes"),
            }
        }
    }
}

/// One line per impl and scenario far from its ceiling whose counters point at the kernel
/// or at cold memory; the rest, one line per cause with how many there are and the range
/// of their shares.
fn findings(inp: &Inputs, impls: &[String]) -> Vec<String> {
    let found = shortfalls(inp, impls);
    let mut out: Vec<String> = found
        .counted
        .iter()
        .map(|s| {
            format!(
                "{} {} {} at {:.0}% of its own AEAD ({:.0} against {:.0} MB/s); {}.",
                s.imp,
                s.dir.verb(),
                s.scenario,
                s.share * 100.0,
                s.rate,
                s.ceiling,
                cause_text(&s.cause)
            )
        })
        .collect();
    let label = |s: &Shortfall| format!("{} {} {}", s.imp, s.dir.verb(), s.scenario);
    for g in &found.groups {
        let (Some(low), Some(high)) = (g.first(), g.last()) else {
            continue;
        };
        let leads = g.iter().filter_map(|s| s.lead);
        let profiled = if leads.clone().next().is_none() {
            String::new()
        } else {
            format!(
                " ({} of those sides' time there, {} in the cipher)",
                range(leads.clone().map(|l| l.share)),
                range(leads.map(|l| l.cipher))
            )
        };
        out.push(format!(
            "{} of the {} figures under the target, from {:.0}% of the own AEAD ({}) to {:.0}% ({}): {}{profiled}.",
            g.len(),
            found.total,
            low.share * 100.0,
            label(low),
            high.share * 100.0,
            label(high),
            cause_text(&low.cause)
        ));
    }
    out
}

/// Where each side's time goes, per impl and scenario of the profile run.
fn profile_table(profile: &RunData) -> Option<Table> {
    let mut rows = Vec::new();
    for scenario in bulk_scenarios(profile) {
        for imp in profile.impls().into_iter().filter(|i| !record::is_aa(i)) {
            let shares = |metrics: [Metric; 5]| -> Option<Vec<Cell>> {
                metrics
                    .iter()
                    .map(|m| {
                        record(profile, &scenario, &imp, *m)
                            .map(|r| Cell::plain(format!("{:.0}%", r.median * 100.0)))
                    })
                    .collect()
            };
            let (Some(send), Some(recv)) =
                (shares(Metric::SEND_PROFILE), shares(Metric::RECV_PROFILE))
            else {
                continue;
            };
            let mut row = vec![Cell::plain(scenario.clone()), Cell::plain(imp.clone())];
            row.extend(send);
            row.extend(recv);
            rows.push(row);
        }
    }
    // One reason per impl: they repeat from scenario to scenario.
    let (mut seen, mut unprofiled): (Vec<&str>, Vec<String>) = (Vec::new(), Vec::new());
    for c in profile.cells.iter().filter(|c| c.client == c.server) {
        if seen.contains(&c.client.as_str()) {
            continue;
        }
        seen.push(&c.client);
        let prefix = format!("{}: ", c.client);
        let reason = c.reason.strip_prefix(&prefix).unwrap_or(&c.reason);
        unprofiled.push(format!("{prefix}{reason}"));
    }
    (!rows.is_empty()).then(|| Table {
        caption: format!(
            "Run {}: where each side's time goes. perf record -e cpu-clock at 4 kHz attached to the driver's thread; each perf sample is charged to the side whose call it fell in (both sides run on that thread in turns, and every call is logged on the same clock) and classed by its function's name: cipher (AES, GHASH, ChaCha20, Poly1305), copies (memcpy, memmove, memset), malloc (any allocator), kernel, elsewhere (the rest of the library and its glue). Median shares over the samples.{}",
            profile.run_id,
            if unprofiled.is_empty() {
                String::new()
            } else {
                format!(" Not profiled: {}.", unprofiled.join("; "))
            }
        ),
        header: [
            "scenario",
            "impl",
            "send: cipher",
            "copies",
            "malloc",
            "kernel",
            "elsewhere",
            "recv: cipher",
            "copies",
            "malloc",
            "kernel",
            "elsewhere",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        label_cols: 2,
    })
}

/// One line per impl whose order against the baseline flips between write sizes of the same
/// protocol and cipher, with whether their AEADs alone flip the same way; and whether any of
/// them did.
fn size_flip_lines(main: &RunData, ceiling: &RunData) -> (Vec<String>, bool) {
    let flips = size_flips(main, ceiling);
    let lines = flips
        .iter()
        .map(|f| {
            let why = if f.in_crypto {
                "the same way: the order flips in the crypto, not in the TLS stacks".into()
            } else {
                format!(
                    "which is no flip (their ratio moves {:.2}x between the sizes, the stacks' {:.2}x): most of it lies outside the cipher",
                    f.large.aead / f.small.aead,
                    f.large.stack.ratio / f.small.stack.ratio
                )
            };
            format!(
                "{} {} {} at {} {}'s rate in {} writes and {} in {} writes (paired, run {}); their AEADs alone {} the same records at {:.2}x and {:.2}x, {why}.",
                f.imp,
                f.dir.verb(),
                f.family,
                factor_text(&f.small.stack),
                f.base,
                f.small.size,
                factor_text(&f.large.stack),
                f.large.size,
                main.run_id,
                f.dir.aead_verb(),
                f.small.aead,
                f.large.aead
            )
        })
        .collect();
    (lines, flips.iter().any(|f| f.in_crypto))
}

/// Where an AES-GCM flip lies in the cipher: this run's ceiling shows it, and one cause found
/// on one machine is pointed to, not restated as this run's figures.
fn flip_in_cipher(cpu: &str) -> String {
    format!(
        "The ceiling above shows where a flip lies in the cipher itself (each AEAD alone on the same records, this run). One cause of such a flip was traced on one machine, not on this run's: aws-lc's AVX-512 AES-GCM recomputes hash-key powers on every call above 16 blocks ({}). Whether this CPU ({}) takes that path, `make aead-sizes` measures here: each library's AES-128-GCM alone by record size.",
        FLIP_FINDING.cite(),
        if cpu.is_empty() { "not recorded" } else { cpu }
    )
}

/// One line per variant whose bulk rate falls well below its plain build's, with the cold
/// blocks of both (from the counter run, which takes every variant).
fn variant_findings(run: &RunData, counters: Option<&RunData>) -> Vec<String> {
    variant_shortfalls(run, counters)
        .into_iter()
        .map(|v| {
            let why = match v.cold {
                ColdBlocks::More { variant, plain } => format!(
                    "it gets {variant:.0} cold large blocks per MiB where the plain build gets {plain:.0}"
                ),
                ColdBlocks::NoDifference => "cold blocks do not differ".into(),
                ColdBlocks::NotCounted => "no counters for it in this report".into(),
            };
            format!(
                "{} {} {} at {:.2}x of {} ({:.0} against {:.0} MB/s); {why}.",
                v.variant,
                v.dir.verb(),
                v.scenario,
                v.ratio,
                v.base,
                v.rate,
                v.plain
            )
        })
        .collect()
}

/// Where a variant is slower: this run's counters say how (cold blocks above); one cause found
/// on one machine is pointed to.
fn allocator_cause() -> String {
    format!(
        "Cold blocks per MiB above are this run's counters. Where rustls receives slower on jemalloc or mimalloc, a perf call graph on one machine put the cause in rustls's receive buffer shrinking and growing around every record, which glibc's realloc does in place and the other two by moving the block ({}); `perf record --call-graph dwarf` on the variant's driver finds it on this machine.",
        DEFRAMER_FINDING.cite()
    )
}

/// A finding of `docs/findings.md`: where to read it, on which machine and when it was made.
struct Finding {
    title: &'static str,
    machine: &'static str,
    date: &'static str,
}

impl Finding {
    fn cite(&self) -> String {
        format!(
            "docs/findings.md, \"{}\", {}, {}",
            self.title, self.machine, self.date
        )
    }
}

const ALIASING_FINDING: Finding = Finding {
    title: "4 KiB aliasing in memcpy, met by rustls's record copy",
    machine: "2-core AMD EPYC VM",
    date: "2026-11-25",
};

const FLIP_FINDING: Finding = Finding {
    title: "The flip is in the crypto",
    machine: "2-core AMD EPYC VM with AVX-512",
    date: "2026-11-25",
};

const DEFRAMER_FINDING: Finding = Finding {
    title: "rustls's receive buffer moves on jemalloc and mimalloc",
    machine: "2-core AMD EPYC VM",
    date: "2026-11-25",
};

/// The section, or `None` when no run gives ceilings or allocator variants.
pub fn section(inp: &Inputs) -> Option<Section> {
    let impls: Vec<String> = inp
        .ceiling
        .map(|c| c.impls())
        .unwrap_or_default()
        .into_iter()
        .filter(|i| !i.contains('+'))
        .collect();
    let ceiling = ceiling_table(inp, &impls);
    let allocators = inp.allocators.and_then(variant_table);
    if ceiling.is_none() && allocators.is_none() {
        return None;
    }
    let mut blocks = vec![Block::Para(METHOD.into())];
    if let Some(t) = ceiling {
        blocks.push(Block::Table(t));
        let found = findings(inp, &impls);
        if !found.is_empty() {
            blocks.push(Block::Para(format!(
                "Under {:.0}% of the own ceiling, with the counters of the same transfer:",
                CEILING_TARGET * 100.0
            )));
            blocks.push(Block::Bullets(found));
        }
    }
    if let (Some(main), Some(ceiling)) = (inp.main, inp.ceiling) {
        let (flips, in_crypto) = size_flip_lines(main, ceiling);
        if !flips.is_empty() {
            blocks.push(Block::Para(format!(
                "Where one stack is ahead in one write size and behind in another (by {:.0}% or more each way):",
                (FLIP - 1.0) * 100.0
            )));
            blocks.push(Block::Bullets(flips));
            if in_crypto {
                blocks.push(Block::Para(flip_in_cipher(&main.env.cpu_model)));
            }
        }
    }
    if let Some(t) = inp.profile.and_then(profile_table) {
        blocks.push(Block::Table(t));
    }
    if let Some(s) = inp.ceiling.and_then(aliasing_sentence) {
        blocks.push(Block::Para(s));
    }
    if let Some(t) = allocators {
        blocks.push(Block::Para("Each library below runs the same code on three mallocs, routed by tlsmatrix's own malloc wrapper (glibc's documented replacement interface), so Rust's and the C library's allocations both move; and the same sources with their C code (ring's, aws-lc's, OpenSSL's) compiled by clang instead of gcc. A variant cannot share a process with the plain build, so each runs with itself, sampled in turns with the baseline's own pair.".into()));
        blocks.push(Block::Table(t));
        if let Some(run) = inp.allocators {
            let found = variant_findings(run, inp.counters);
            if !found.is_empty() {
                blocks.push(Block::Bullets(found));
                blocks.push(Block::Para(allocator_cause()));
            }
        }
    }
    Some(Section {
        id: "bulk-causes".into(),
        title: "Bulk figures explained".into(),
        blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::{spread, RecordFixture};
    use tlsmatrix_model::record::Env;

    fn rec(run: &str, scenario: &str, imp: &str, m: Metric, v: f64) -> Record {
        RecordFixture::new(m, v)
            .run(run)
            .scenario(scenario)
            .pair(imp, imp)
            .samples(spread(v, 6, 0.001))
            .build()
    }

    fn run(id: &str, records: Vec<Record>) -> RunData {
        RunData {
            run_id: id.into(),
            env: Env::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        }
    }

    const S: &str = "bulk-tls13-aes-128-gcm-16k";

    #[test]
    fn a_stack_far_below_its_own_ceiling_is_named_with_its_counters() {
        let ceiling = run(
            "c",
            vec![
                rec("c", S, "fast", Metric::SendMbPerS, 9000.0),
                rec("c", S, "fast", Metric::RecvMbPerS, 9500.0),
                rec("c", S, "fast", Metric::SealMbPerS, 10000.0),
                rec("c", S, "fast", Metric::OpenMbPerS, 10000.0),
                rec("c", S, "fast", Metric::SendShareOfSeal, 0.9),
                rec("c", S, "fast", Metric::RecvShareOfOpen, 0.95),
                rec("c", S, "slow", Metric::SendMbPerS, 2000.0),
                rec("c", S, "slow", Metric::RecvMbPerS, 9000.0),
                rec("c", S, "slow", Metric::SealMbPerS, 10000.0),
                rec("c", S, "slow", Metric::OpenMbPerS, 10000.0),
                rec("c", S, "slow", Metric::SendShareOfSeal, 0.2),
                rec("c", S, "slow", Metric::RecvShareOfOpen, 0.9),
                rec("c", S, "bare", Metric::SendMbPerS, 5000.0),
                rec("c", S, "bare", Metric::SealMbPerS, 10000.0),
                rec("c", S, "bare", Metric::SendShareOfSeal, 0.5),
                rec("c", S, "fast", Metric::CopyMbPerS, 60000.0),
                rec("c", S, "fast", Metric::AliasedCopyMbPerS, 3000.0),
            ],
        );
        let counters = run(
            "k",
            vec![
                rec("k", S, "slow", Metric::SendPageFaultsPerMib, 16.0),
                rec("k", S, "slow", Metric::SendColdBlocksPerMib, 0.0),
            ],
        );
        let inp = Inputs {
            main: None,
            ceiling: Some(&ceiling),
            counters: Some(&counters),
            allocators: None,
            profile: None,
        };
        let impls = vec!["fast".to_string(), "slow".to_string()];
        let found = findings(&inp, &impls);
        assert_eq!(found.len(), 1, "{found:?}");
        // A figure without counters is counted in one line per cause, not named alone.
        let with_bare = [impls.clone(), vec!["bare".to_string()]].concat();
        let all = findings(&inp, &with_bare);
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(
            all[1].starts_with(
                "1 of the 2 figures under the target, from 50% of the own AEAD (bare sends"
            ) && all[1].contains("no counters"),
            "{}",
            all[1]
        );
        assert!(found[0].starts_with("slow sends") && found[0].contains("20%"));
        assert!(
            found[0].contains("16.0 page faults per MiB"),
            "{}",
            found[0]
        );
        let table = ceiling_table(&inp, &impls).unwrap();
        assert_eq!(table.rows.len(), 2);
        assert_eq!(table.rows[1][4].text, "20%");
        assert_eq!(table.rows[1][4].class, Class::Bad);
        assert_eq!(table.rows[0][4].class, Class::Good);
        let s = aliasing_sentence(&ceiling).unwrap();
        assert!(
            s.contains("60150 MB/s") && s.contains("3008 MB/s") && s.contains("(20 times"),
            "{s}"
        );
        assert!(section(&inp).is_some());

        // With a profile, the cause is what takes the most of the side's time beside the
        // cipher, with the shares of the figures it covers.
        let mut shares = Vec::new();
        for (m, v) in Metric::SEND_PROFILE
            .into_iter()
            .zip([0.5, 0.3, 0.02, 0.0, 0.18])
        {
            shares.push(rec("p", S, "bare", m, v));
        }
        for (m, v) in Metric::RECV_PROFILE
            .into_iter()
            .zip([0.6, 0.1, 0.0, 0.0, 0.3])
        {
            shares.push(rec("p", S, "bare", m, v));
        }
        let profile = run("p", shares);
        let inp = Inputs {
            profile: Some(&profile),
            ..inp
        };
        let all = findings(&inp, &with_bare);
        assert!(
            all[1].contains("no counters in this report; beside the cipher, the profile puts copies (memcpy, memmove, memset) first (30% of those sides' time there, 50% in the cipher)"),
            "{}",
            all[1]
        );
        let t = profile_table(&profile).unwrap();
        assert_eq!(t.rows.len(), 1);
        let texts: Vec<&str> = t.rows[0].iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts[1..],
            ["bare", "50%", "30%", "2%", "0%", "18%", "60%", "10%", "0%", "0%", "30%"]
        );
    }

    #[test]
    fn each_variant_is_compared_with_the_same_library_built_plain() {
        let h = "handshake-tls13-ecdsa-p256-x25519-full";
        let alloc = run(
            "a",
            vec![
                rec("a", S, "lib", Metric::SendMbPerS, 4000.0),
                rec("a", S, "lib+jemalloc", Metric::SendMbPerS, 6000.0),
                rec("a", S, "lib+mimalloc", Metric::SendMbPerS, 2000.0),
                rec("a", h, "lib", Metric::ClientCpuNs, 100_000.0),
                rec("a", h, "lib+jemalloc", Metric::ClientCpuNs, 100_000.0),
            ],
        );
        let t = variant_table(&alloc).unwrap();
        assert_eq!(
            t.header.len(),
            8,
            "jemalloc and mimalloc only: {:?}",
            t.header
        );
        let send = t
            .rows
            .iter()
            .find(|r| r[2].text.starts_with("send"))
            .unwrap();
        assert_eq!(send[1].text, "lib");
        assert!(send[5].text.starts_with("1.50x"), "{}", send[5].text);
        assert!(send[7].text.starts_with("0.50x"), "{}", send[7].text);
        let client = t.rows.iter().find(|r| r[0].text == h).unwrap();
        assert_eq!(client[6].text, "–", "no mimalloc figure, no factor");
        let counters = run(
            "k",
            vec![
                rec("k", S, "lib", Metric::SendColdBlocksPerMib, 0.0),
                rec("k", S, "lib+mimalloc", Metric::SendColdBlocksPerMib, 192.0),
            ],
        );
        let found = variant_findings(&alloc, Some(&counters));
        assert_eq!(
            found.len(),
            1,
            "only the variant well below its plain build: {found:?}"
        );
        assert!(
            found[0].starts_with("lib+mimalloc sends") && found[0].contains("0.50x"),
            "{}",
            found[0]
        );
        assert!(found[0].contains("192 cold large blocks per MiB where the plain build gets 0"));
    }

    #[test]
    fn an_order_that_flips_with_the_write_size_is_checked_against_the_aeads() {
        use tlsmatrix_model::record::Paired;
        let (k1, k16) = ("bulk-tls13-aes-128-gcm-1k", S);
        // Paired with the baseline's own pair: the factor `f` against "base", in 12 rounds.
        let paired = |mut r: Record, f: f64| {
            r.paired = Some(Paired {
                reference_client: "base".into(),
                reference_server: "base".into(),
                reference_scenario: None,
                ratios: (0..12)
                    .map(|i| f * (1.0 + 0.002 * f64::from(i % 3)))
                    .collect(),
                blocks: (0..12).map(|i| i / 3).collect(),
            });
            r
        };
        let (mut timed, mut shares) = (Vec::new(), Vec::new());
        // (impl, scenario, recv factor, recv share of open, send factor, send share of seal).
        // "ring" receives faster than the baseline in 1 KiB writes and slower in 16 KiB,
        // with shares that make its AEAD's ratio flip too (1.16x and 0.85x); its sending
        // flips as well, but its sealing does not (0.99x and 0.97x). Medians that say
        // otherwise (a cell taken in a slow moment) must not count: only paired factors do.
        for (imp, scenario, recv, recv_share, send, send_share) in [
            ("base", k1, 1.0, 0.50, 1.0, 0.60),
            ("base", k16, 1.0, 0.50, 1.0, 0.66),
            ("ring", k1, 1.19, 0.513, 1.07, 0.648),
            ("ring", k16, 0.88, 0.518, 0.84, 0.571),
            ("other", k1, 1.01, 0.50, 1.0, 0.60),
            ("other", k16, 0.99, 0.50, 1.0, 0.66),
            // Its receiving flips (0.91x, 1.25x), its AEAD does not (0.996x, 1.09x).
            ("ossl", k1, 0.91, 0.4568, 1.0, 0.60),
            ("ossl", k16, 1.25, 0.5734, 1.0, 0.66),
        ] {
            let slow = if imp == "ring" { 0.4 } else { 1.0 };
            let (recv_m, send_m) = (Metric::RecvMbPerS, Metric::SendMbPerS);
            timed.push(paired(rec("t", scenario, imp, recv_m, 5000.0 * slow), recv));
            timed.push(paired(rec("t", scenario, imp, send_m, 7000.0 * slow), send));
            shares.push(rec("c", scenario, imp, Metric::RecvShareOfOpen, recv_share));
            shares.push(rec("c", scenario, imp, Metric::SendShareOfSeal, send_share));
        }
        let (main, ceiling) = (run("t", timed), run("c", shares));
        let (found, in_crypto) = size_flip_lines(&main, &ceiling);
        assert!(in_crypto);
        assert_eq!(found.len(), 3, "ring both ways, ossl receiving: {found:?}");
        let ossl = found
            .iter()
            .find(|f| f.starts_with("ossl receives"))
            .unwrap();
        assert!(
            ossl.contains("at 1.00x and 1.09x, which is no flip (their ratio moves 1.09x between the sizes, the stacks' 1.37x)"),
            "{ossl}"
        );
        let recv = found
            .iter()
            .find(|f| f.starts_with("ring receives"))
            .unwrap();
        assert!(
            recv.contains("at 1.19x [")
                && recv.contains("in 1k writes and 0.88x [")
                && recv.contains("at 1.16x and 0.85x")
                && recv.contains("flips in the crypto"),
            "{recv}"
        );
        let send = found.iter().find(|f| f.starts_with("ring sends")).unwrap();
        assert!(
            send.contains("at 0.99x and 0.97x") && send.contains("outside the cipher"),
            "{send}"
        );
    }
}
