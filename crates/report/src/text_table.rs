//! Plain-text tables for the terminal: first columns left-aligned, figures right-aligned.

pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    left_cols: usize,
}

impl Table {
    pub fn new(header: &[&str], left_cols: usize) -> Table {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
            left_cols,
        }
    }

    /// The terminal form of a document table: the text of each cell.
    pub fn from_doc(t: &crate::doc::Table) -> Table {
        let header: Vec<&str> = t.header.iter().map(String::as_str).collect();
        let mut out = Table::new(&header, t.label_cols);
        for r in &t.rows {
            out.row(r.iter().map(|c| c.text.clone()).collect());
        }
        out
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let cols = self.header.len();
        let mut width = vec![0; cols];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(cols) {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        for r in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate().take(cols) {
                if i > 0 {
                    line.push_str("  ");
                }
                if i < self.left_cols {
                    line.push_str(&format!("{c:<w$}", w = width[i]));
                } else {
                    line.push_str(&format!("{c:>w$}", w = width[i]));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align() {
        let mut t = Table::new(&["impl", "value"], 1);
        t.row(vec!["a".into(), "1".into()]);
        t.row(vec!["long-name".into(), "1,000".into()]);
        assert_eq!(
            t.render(),
            "impl       value\na              1\nlong-name  1,000\n"
        );
    }
}
