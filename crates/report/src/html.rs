//! `index.html`: one file with its styles and charts inline; no script, font or image from
//! anywhere else, so it opens the same offline, attached to a mail, or years later.

use std::fmt::Write as _;

use crate::doc::{Block, Class, Doc, Table};
use crate::svg::{self, escape, PALETTE};

const STYLE: &str = r#"
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { margin-bottom: 0; } .subtitle { color: #555; margin-top: .2em; }
nav a { margin-right: 1em; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .6em 0 1.4em; }
caption { text-align: left; color: #555; padding-bottom: .3em; max-width: 1000px; }
th, td { padding: 2px 9px; border-bottom: 1px solid #eee; white-space: nowrap; }
th { background: #f4f4f4; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.good { background: #dff3e4; } td.bad { background: #fbe3e1; } td.same { color: #666; }
td.noisy { background: #fff6d6; } td.expected { background: #e3eefb; } td.deviation { background: #fde3c4; } td.unsupported { background: #eee; color: #555; } td.failed { background: #f8c9c4; font-weight: bold; }
.scroll { max-width: 100%; overflow-x: auto; }
details { margin: .4em 0 1em; } summary { cursor: pointer; color: #0b5394; }
ul.headlines { background: #f4f8fc; border: 1px solid #cfe0f1; border-radius: 4px; padding: .6em 1em .6em 2.2em; }
ul.headlines li { margin: .15em 0; }
.chart { display: block; margin: .8em 0 1.6em; max-width: 100%; height: auto; }
.legendnote { color: #555; font-size: 12px; }
"#;

fn table(out: &mut String, t: &Table) {
    let _ = write!(
        out,
        "<div class=\"scroll\"><table><caption>{}</caption><thead><tr>",
        escape(&t.caption)
    );
    for h in &t.header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead><tbody>");
    for row in &t.rows {
        out.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let mut classes = Vec::new();
            if i >= t.label_cols {
                classes.push("num");
            }
            if c.class != Class::Plain {
                classes.push(c.class.as_str());
            }
            let _ = write!(out, "<td");
            if !classes.is_empty() {
                let _ = write!(out, " class=\"{}\"", classes.join(" "));
            }
            if let Some(t) = &c.title {
                let _ = write!(out, " title=\"{}\"", escape(t));
            }
            let _ = write!(out, ">{}</td>", escape(&c.text));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
}

fn block(out: &mut String, b: &Block, index_of: &dyn Fn(&str) -> usize) {
    match b {
        Block::Para(p) => {
            let _ = write!(out, "<p>{}</p>", escape(p));
        }
        Block::Bullets(items) | Block::Headlines(items) => {
            out.push_str(if matches!(b, Block::Headlines(_)) {
                "<ul class=\"headlines\">"
            } else {
                "<ul>"
            });
            for i in items {
                let _ = write!(out, "<li>{}</li>", escape(i));
            }
            out.push_str("</ul>");
        }
        Block::Table(t) => table(out, t),
        Block::Chart(c) => out.push_str(&svg::render(c, index_of)),
        Block::Folded(summary, blocks) => {
            let _ = write!(out, "<details><summary>{}</summary>", escape(summary));
            for b in blocks {
                block(out, b, index_of);
            }
            out.push_str("</details>");
        }
    }
}

pub fn render(doc: &Doc, impls: &[String]) -> String {
    let index_of = |name: &str| {
        impls
            .iter()
            .position(|i| i == name)
            .unwrap_or(impls.len() + name.len() % PALETTE.len())
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{STYLE}</style></head><body>",
        escape(&doc.title)
    );
    let _ = write!(
        out,
        "<h1>{}</h1><p class=\"subtitle\">{}</p><nav>",
        escape(&doc.title),
        escape(&doc.subtitle)
    );
    for s in &doc.sections {
        let _ = write!(
            out,
            "<a href=\"#{}\">{}</a>",
            escape(&s.id),
            escape(&s.title)
        );
    }
    out.push_str("</nav>");
    for s in &doc.sections {
        let _ = write!(
            out,
            "<section id=\"{}\"><h2>{}</h2>",
            escape(&s.id),
            escape(&s.title)
        );
        for b in &s.blocks {
            block(&mut out, b, &index_of);
        }
        out.push_str("</section>");
    }
    out.push_str("<p class=\"legendnote\">Cell colours: green = significantly better than the baseline (interop: pass), red = significantly worse (interop: fail), grey text = within noise, yellow = noisy figure (*), blue = failed exactly as the case requires, grey = unsupported; hover a cell for its interval or reason.</p></body></html>\n");
    out
}
