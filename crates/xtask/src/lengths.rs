//! The size check: no hand-written function over [`MAX_FN_LINES`] lines, no source file over
//! [`MAX_FILE_LINES`], in every Rust crate (tests, benches and build scripts included) and in
//! the Go module. A function is counted from its signature to its closing brace, comments and
//! blank lines included: what a reader has to hold at once. Generated files are left out.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use syn::spanned::Spanned;
use syn::visit::Visit;

pub const MAX_FN_LINES: usize = 150;
pub const MAX_FILE_LINES: usize = 1200;

/// The folders whose sources are checked, from the repository's root.
const ROOTS: &[&str] = &["crates", "libssl-drivers", "build-support", "go"];

/// One place over a limit: the file, the line it starts on, what it is and how long.
#[derive(Debug, PartialEq, Eq)]
pub struct Overlong {
    pub file: PathBuf,
    pub line: usize,
    pub what: String,
    pub lines: usize,
}

impl std::fmt::Display for Overlong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let limit = if self.what == "file" {
            MAX_FILE_LINES
        } else {
            MAX_FN_LINES
        };
        write!(
            f,
            "{}:{}: {} is {} lines (at most {limit})",
            self.file.display(),
            self.line,
            self.what,
            self.lines
        )
    }
}

/// Every place under the roots over a limit.
pub fn check(top: &Path) -> Result<Vec<Overlong>> {
    let mut found = Vec::new();
    for root in ROOTS {
        for file in sources(&top.join(root))? {
            let text =
                fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            if is_generated(&text) {
                continue;
            }
            let shown = file.strip_prefix(top).unwrap_or(&file).to_path_buf();
            found.extend(in_source(&shown, &text)?);
        }
    }
    Ok(found)
}

/// The places over a limit in one file's text.
pub fn in_source(file: &Path, text: &str) -> Result<Vec<Overlong>> {
    let mut found = Vec::new();
    let lines = text.lines().count();
    if lines > MAX_FILE_LINES {
        found.push(Overlong {
            file: file.to_path_buf(),
            line: 1,
            what: "file".into(),
            lines,
        });
    }
    let functions = if file.extension().is_some_and(|e| e == "go") {
        go_functions(text)
    } else {
        rust_functions(text).with_context(|| format!("parsing {}", file.display()))?
    };
    found.extend(
        functions
            .into_iter()
            .filter(|(_, _, n)| *n > MAX_FN_LINES)
            .map(|(name, line, n)| Overlong {
                file: file.to_path_buf(),
                line,
                what: format!("function {name}"),
                lines: n,
            }),
    );
    Ok(found)
}

/// `.rs` and `.go` files below `dir`, leaving out build output and vendored sources.
fn sources(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e?.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if p.is_dir() {
                if !matches!(name, "target" | "vendor" | "node_modules") && !name.starts_with('.') {
                    stack.push(p);
                }
            } else if name.ends_with(".rs") || name.ends_with(".go") {
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Go's and rustfmt-era tools' mark of a generated file.
fn is_generated(text: &str) -> bool {
    text.lines()
        .take(5)
        .any(|l| l.starts_with("// Code generated") && l.contains("DO NOT EDIT"))
}

/// Each Rust function with a body: its name, first line and length in lines.
fn rust_functions(text: &str) -> Result<Vec<(String, usize, usize)>> {
    struct Visitor(Vec<(String, usize, usize)>);
    impl Visitor {
        fn add(&mut self, name: &syn::Ident, whole: proc_macro2::Span) {
            let (start, end) = (name.span().start().line, whole.end().line);
            self.0.push((name.to_string(), start, end + 1 - start));
        }
    }
    impl<'a> Visit<'a> for Visitor {
        fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
            self.add(&f.sig.ident, f.block.span());
            syn::visit::visit_item_fn(self, f);
        }
        fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
            self.add(&f.sig.ident, f.block.span());
            syn::visit::visit_impl_item_fn(self, f);
        }
        fn visit_trait_item_fn(&mut self, f: &'a syn::TraitItemFn) {
            if let Some(body) = &f.default {
                self.add(&f.sig.ident, body.span());
            }
            syn::visit::visit_trait_item_fn(self, f);
        }
    }
    let file = syn::parse_file(text)?;
    let mut v = Visitor(Vec::new());
    v.visit_file(&file);
    Ok(v.0)
}

/// Each top-level Go function or method: gofmt puts its `func` and its closing brace at the
/// start of a line, and nothing else there in between.
fn go_functions(text: &str) -> Vec<(String, usize, usize)> {
    let mut found = Vec::new();
    let mut open: Option<(String, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("func ") {
            if line.ends_with('{') {
                let rest = match rest.strip_prefix('(') {
                    Some(r) => r.split_once(") ").map_or(r, |(_, after)| after),
                    None => rest,
                };
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                open = Some((name, i + 1));
            }
        } else if line == "}" {
            if let Some((name, start)) = open.take() {
                found.push((name, start, i + 2 - start));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(n: usize) -> String {
        "    let _x = 1;\n".repeat(n)
    }

    #[test]
    fn a_long_rust_function_is_named_with_its_line_and_length() {
        let text = format!(
            "fn short() {{\n{}}}\n\nstruct S;\nimpl S {{\n    fn long(&self) {{\n{}    }}\n}}\n",
            body(3),
            body(MAX_FN_LINES - 1)
        );
        let found = in_source(Path::new("a.rs"), &text).unwrap();
        assert_eq!(
            found,
            vec![Overlong {
                file: "a.rs".into(),
                line: 9,
                what: "function long".into(),
                lines: MAX_FN_LINES + 1,
            }]
        );
        assert!(found[0]
            .to_string()
            .contains("a.rs:9: function long is 151 lines"));
    }

    #[test]
    fn go_functions_and_methods_are_measured_from_func_to_the_closing_brace() {
        let text = format!(
            "package x\n\nfunc (s *S) Long() {{\n{}}}\n\nfunc short() {{\n}}\n",
            "\tx := 1\n".repeat(MAX_FN_LINES)
        );
        assert_eq!(
            go_functions(&text),
            vec![
                ("Long".into(), 3, MAX_FN_LINES + 2),
                ("short".into(), 3 + MAX_FN_LINES + 3, 2)
            ]
        );
    }

    #[test]
    fn a_long_file_is_named_and_a_generated_one_is_not() {
        let text = "// x\n".repeat(MAX_FILE_LINES + 1);
        let found = in_source(Path::new("b.rs"), &text).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].what, "file");
        assert!(is_generated(
            "// Code generated by `cargo xtask metrics`. DO NOT EDIT.\n"
        ));
    }

    #[test]
    fn the_tree_keeps_within_the_limits() {
        let top = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let found = check(&top).unwrap();
        let lines: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert!(found.is_empty(), "over the limits:\n{}", lines.join("\n"));
    }
}
