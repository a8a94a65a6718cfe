//! The report: a run (with its history and companion runs) is analysed into a [`doc::Doc`]
//! (sections of headlines, tables, charts and sentences), which is drawn as a self-contained
//! `index.html` with SVG charts, as `report.md`, and beside it the figures as `results.csv`.
//! The terminal's tables ([`summary`], [`interop`]) are drawn from the same document model.
//!
//! Layers, each using only those above it: [`area`] and [`figures`] (what a metric is and how
//! it is shown) -> [`doc`] (the document model) -> [`text_table`], [`summary`], [`interop`] and
//! `analysis` (building documents) -> `html`/`svg`, `md`, `csv` (drawing them) -> [`write`].

mod analysis;
pub mod area;
pub mod bulk_causes;
mod companions;
pub mod comparison;
pub mod conformance;
mod contention;
mod crypto_floor;
mod csv;
pub mod doc;
pub mod environment;
pub mod figures;
mod html;
mod instruction_split;
pub mod interop;
pub mod libp2p;
mod md;
pub use tlsmatrix_analysis::netmodel;
pub mod network;
pub mod offers;
pub mod outside_scan;
mod overhead;
pub mod post_quantum;
pub mod published;
mod quic;
mod quic_bulk;
mod quic_instructions;
mod quic_memory;
pub mod releases;
mod self_pairs;
mod setup_costs;
pub mod summary;
mod svg;
mod symbols;
pub mod text_table;
pub mod time_goes;
mod write;

pub use analysis::Companions;
pub use write::{write, OFFERS_FILE, OUTSIDE_SCAN_FILE, PROXY_CHECK_FILE};

/// A run, with its history and companion runs, as `report.md` draws it: what [`write`]
/// writes, without the files.
pub fn markdown(
    run: &tlsmatrix_history::RunData,
    history: &[tlsmatrix_history::RunData],
    extra: &Companions,
) -> String {
    md::render(&analysis::build(run, history, extra))
}

/// A document table as Markdown, as `report.md` writes it.
pub fn markdown_table(t: &doc::Table) -> String {
    let mut out = String::new();
    md::table(&mut out, t);
    out
}
