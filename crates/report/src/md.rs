//! `report.md`: the same document as Markdown, for pull requests and issue comments. Charts
//! are in `index.html`; here each is named where it would be.

use crate::doc::{Block, Class, Doc, Table};

fn cell_text(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn table(out: &mut String, t: &Table) {
    out.push_str(&format!("*{}*\n\n", cell_text(&t.caption)));
    let header: Vec<String> = t.header.iter().map(|h| cell_text(h)).collect();
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    let align: Vec<&str> = (0..t.header.len())
        .map(|i| if i < t.label_cols { "---" } else { "---:" })
        .collect();
    out.push_str(&format!("|{}|\n", align.join("|")));
    for row in &t.rows {
        let cells: Vec<String> = row
            .iter()
            .map(|c| {
                let text = cell_text(&c.text);
                match c.class {
                    Class::Good | Class::Failed => format!("**{text}**"),
                    Class::Unsupported if c.title.is_some() && !text.is_empty() => {
                        format!("{text} ({})", cell_text(c.title.as_deref().unwrap_or("")))
                    }
                    _ => text,
                }
            })
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out.push('\n');
}

fn block(out: &mut String, b: &Block) {
    match b {
        Block::Para(p) => out.push_str(&format!("{p}\n\n")),
        Block::Bullets(items) | Block::Headlines(items) => {
            for i in items {
                out.push_str(&format!("- {i}\n"));
            }
            out.push('\n');
        }
        Block::Table(t) => table(out, t),
        Block::Chart(c) => out.push_str(&format!(
            "(Chart in index.html: {}, {}.)\n\n",
            c.title, c.unit
        )),
        Block::Folded(summary, blocks) => {
            out.push_str(&format!("**{summary}**\n\n"));
            for b in blocks {
                block(out, b);
            }
        }
    }
}

pub fn render(doc: &Doc) -> String {
    let mut out = format!("# {}\n\n{}\n\n", doc.title, doc.subtitle);
    for s in &doc.sections {
        out.push_str(&format!("## {}\n\n", s.title));
        for b in &s.blocks {
            block(&mut out, b);
        }
    }
    out.push_str("Factors in **bold** are significantly better than the baseline; `~` marks a factor within noise, `*` a noisy figure.\n");
    out
}
