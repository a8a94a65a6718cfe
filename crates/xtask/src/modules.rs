//! The import-cycle check: every module of a crate, what it refers to through `crate::`,
//! `super::` and `self::` paths (in `use` items, in code and in macro arguments), and the
//! strongly connected components of that graph.
//!
//! A reference from `a::x` to `b::y` is an edge between the siblings `a` and `b`: cycles are
//! looked for among the children of each module, so a parent using its child and the child
//! using `super::` is not a cycle, while two sibling files that import each other are. Test
//! modules (`#[cfg(test)]`) are left out: a test may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

type ModPath = Vec<String>;

/// One reference from a module to a path, with where it was written.
struct Reference {
    from: ModPath,
    to: ModPath,
    file: PathBuf,
    line: usize,
}

/// Every crate directory under `crates/` (and nested workspaces' crates) with a crate root.
pub fn workspace_crates() -> Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    let mut stack = vec![PathBuf::from("crates")];
    while let Some(dir) = stack.pop() {
        let entries = fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?;
        for e in entries {
            let p = e?.path();
            if p.is_dir() && p.file_name().is_some_and(|n| n != "src" && n != "target") {
                if !roots(&p).is_empty() {
                    dirs.push(p.clone());
                }
                stack.push(p);
            }
        }
    }
    dirs.sort();
    anyhow::ensure!(
        !dirs.is_empty(),
        "no crate under crates/ (run from the repository's root)"
    );
    Ok(dirs)
}

fn roots(dir: &Path) -> Vec<PathBuf> {
    ["src/lib.rs", "src/main.rs"]
        .into_iter()
        .map(move |r| dir.join(r))
        .filter(|p| p.is_file())
        .collect()
}

/// Checks every crate root under `dirs`; prints each cycle; returns how many there are.
pub fn check(dirs: &[PathBuf]) -> Result<usize> {
    let mut cycles = 0;
    let mut checked = 0;
    for dir in dirs {
        let mut any = false;
        for root in roots(dir) {
            any = true;
            let mut refs = Vec::new();
            let mut modules = BTreeSet::new();
            walk_file(&root, Vec::new(), true, &mut modules, &mut refs)?;
            let found = cycles_in(&modules, &refs);
            for c in &found {
                println!("import cycle in {}: {}", root.display(), c);
            }
            cycles += found.len();
            checked += modules.len();
        }
        anyhow::ensure!(any, "{}: no src/lib.rs or src/main.rs", dir.display());
    }
    if cycles == 0 {
        println!(
            "modules: {checked} modules in {} crates, no import cycle",
            dirs.len()
        );
    }
    Ok(cycles)
}

/// Parses one module file and the files of the modules it declares.
fn walk_file(
    file: &Path,
    path: ModPath,
    owns_dir: bool,
    modules: &mut BTreeSet<ModPath>,
    refs: &mut Vec<Reference>,
) -> Result<()> {
    let text = fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let ast = syn::parse_file(&text).with_context(|| format!("parsing {}", file.display()))?;
    // Where `mod child;` files live: beside lib.rs/main.rs/mod.rs, else in a folder named
    // after this module.
    let parent = file.parent().unwrap_or(Path::new("."));
    let child_dir = if owns_dir {
        parent.to_path_buf()
    } else {
        parent.join(file.file_stem().unwrap_or_default())
    };
    walk_items(&ast.items, file, &child_dir, path, modules, refs)
}

fn walk_items(
    items: &[syn::Item],
    file: &Path,
    child_dir: &Path,
    path: ModPath,
    modules: &mut BTreeSet<ModPath>,
    refs: &mut Vec<Reference>,
) -> Result<()> {
    modules.insert(path.clone());
    let mut collector = Collector {
        from: &path,
        file,
        refs,
    };
    for item in items {
        if is_test(item_attrs(item)) {
            continue;
        }
        if let syn::Item::Mod(m) = item {
            continue_with_mod(m, file, child_dir, &path, modules, collector.refs)?;
        } else {
            collector.visit_item(item);
        }
    }
    Ok(())
}

fn continue_with_mod(
    m: &syn::ItemMod,
    file: &Path,
    child_dir: &Path,
    path: &ModPath,
    modules: &mut BTreeSet<ModPath>,
    refs: &mut Vec<Reference>,
) -> Result<()> {
    let name = m.ident.to_string();
    let mut child = path.clone();
    child.push(name.clone());
    if let Some((_, items)) = &m.content {
        return walk_items(items, file, &child_dir.join(&name), child, modules, refs);
    }
    let explicit = m.attrs.iter().find_map(|a| {
        // `#[cfg_attr(feature = "x", path = "y.rs")]`: the first such file stands for all.
        if let syn::Meta::List(l) = &a.meta {
            if l.path.is_ident("cfg_attr") {
                let t = l.tokens.to_string();
                let at = t.find("path = \"")? + "path = \"".len();
                return t[at..].split('"').next().map(str::to_string);
            }
        }
        let syn::Meta::NameValue(nv) = &a.meta else {
            return None;
        };
        if !nv.path.is_ident("path") {
            return None;
        }
        match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        }
    });
    let (target, owns_dir) = match explicit {
        Some(p) => {
            let t = file.parent().unwrap_or(Path::new(".")).join(p);
            let owns = t.file_name().is_some_and(|n| n == "mod.rs");
            (t, owns)
        }
        None => {
            let flat = child_dir.join(format!("{name}.rs"));
            if flat.is_file() {
                (flat, false)
            } else {
                (child_dir.join(&name).join("mod.rs"), true)
            }
        }
    };
    walk_file(&target, child, owns_dir, modules, refs)
        .with_context(|| format!("module {} declared in {}", name, file.display()))
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        _ => &[],
    }
}

/// `#[cfg(test)]`, alone or inside `all(...)`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let tokens = a.meta.require_list().map(|l| l.tokens.to_string());
            tokens.is_ok_and(|t| t == "test" || (t.starts_with("all") && t.contains("test")))
        }
    })
}

struct Collector<'a> {
    from: &'a ModPath,
    file: &'a Path,
    refs: &'a mut Vec<Reference>,
}

impl Collector<'_> {
    fn note(&mut self, segments: Vec<String>, line: usize) {
        if let Some(to) = resolve(self.from, &segments) {
            self.refs.push(Reference {
                from: self.from.clone(),
                to,
                file: self.file.to_path_buf(),
                line,
            });
        }
    }

    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.use_leaf(prefix, &n.ident),
            syn::UseTree::Rename(r) => self.use_leaf(prefix, &r.ident),
            syn::UseTree::Glob(g) => {
                self.note(prefix.clone(), g.star_token.spans[0].start().line);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(t, prefix);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &[String], ident: &syn::Ident) {
        let mut segs = prefix.to_vec();
        if ident != "self" {
            segs.push(ident.to_string());
        }
        self.note(segs, ident.span().start().line);
    }

    /// `crate :: a :: b` sequences inside a macro's arguments, which syn leaves as tokens.
    fn macro_tokens(&mut self, tokens: TokenStream) {
        let list: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < list.len() {
            match &list[i] {
                TokenTree::Group(g) => self.macro_tokens(g.stream()),
                TokenTree::Ident(id) if id == "crate" || id == "super" || id == "self" => {
                    let line = id.span().start().line;
                    let mut segs = vec![id.to_string()];
                    // `:: name` after it, as long as the path goes on.
                    let mut j = i + 1;
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(n)),
                    ) = (list.get(j), list.get(j + 1), list.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segs.push(n.to_string());
                        j += 3;
                    }
                    if segs.len() > 1 {
                        self.note(segs, line);
                    }
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&u.tree, &mut Vec::new());
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(first) = p.segments.first() {
            self.note(segs, first.ident.span().start().line);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.macro_tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }

    // Items nested in functions may be test-only too.
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
}

/// The absolute module-relative path a `crate::`/`super::`/`self::` path names, or None for
/// paths that start anywhere else (other crates, locals, the prelude).
fn resolve(from: &ModPath, segs: &[String]) -> Option<ModPath> {
    let first = segs.first()?;
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "super" | "self" => from.clone(),
        _ => return None,
    };
    let mut rest = segs;
    if first == "crate" {
        rest = &segs[1..];
    } else {
        while let Some(s) = rest.first() {
            match s.as_str() {
                "super" => {
                    base.pop()?;
                }
                "self" => {}
                _ => break,
            }
            rest = &rest[1..];
        }
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// Cycles among sibling modules, each as `a -> b (file:line) -> ... -> a`.
fn cycles_in(modules: &BTreeSet<ModPath>, refs: &[Reference]) -> Vec<String> {
    // Edges between siblings, with the first place each was written.
    let mut edges: BTreeMap<(ModPath, ModPath), String> = BTreeMap::new();
    for r in refs {
        // The module a path lands in: its longest prefix that is a module.
        let to = (0..=r.to.len())
            .rev()
            .map(|n| r.to[..n].to_vec())
            .find(|p| modules.contains(p))
            .unwrap_or_default();
        let common = r.from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if common == r.from.len() || common == to.len() {
            continue; // one contains the other
        }
        let a = r.from[..=common].to_vec();
        let b = to[..=common].to_vec();
        edges
            .entry((a, b))
            .or_insert_with(|| format!("{}:{}", r.file.display(), r.line));
    }
    let mut adjacency: BTreeMap<&ModPath, Vec<&ModPath>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        adjacency.entry(a).or_default().push(b);
    }
    let mut out = Vec::new();
    for scc in strongly_connected(&adjacency) {
        if scc.len() < 2 {
            continue;
        }
        let members: BTreeSet<&ModPath> = scc.iter().copied().collect();
        let start = scc[0];
        let path = shortest_cycle(start, &adjacency, &members);
        let mut text = name(start);
        for w in path.windows(2) {
            let at = &edges[&(w[0].clone(), w[1].clone())];
            text.push_str(&format!(" -> {} ({at})", name(&w[1])));
        }
        let others: Vec<String> = scc.iter().map(|m| name(m)).collect();
        out.push(format!("{text}; in the circle: {}", others.join(", ")));
    }
    out
}

fn name(p: &ModPath) -> String {
    format!("crate::{}", p.join("::"))
}

/// Tarjan's algorithm, iterative enough for a crate's few hundred modules.
fn strongly_connected<'a>(adj: &BTreeMap<&'a ModPath, Vec<&'a ModPath>>) -> Vec<Vec<&'a ModPath>> {
    struct State<'a> {
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        on_stack: BTreeSet<&'a ModPath>,
        stack: Vec<&'a ModPath>,
        next: usize,
        out: Vec<Vec<&'a ModPath>>,
    }
    fn visit<'a>(v: &'a ModPath, adj: &BTreeMap<&'a ModPath, Vec<&'a ModPath>>, s: &mut State<'a>) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        for &w in adj.get(v).map(Vec::as_slice).unwrap_or(&[]) {
            if !s.index.contains_key(w) {
                visit(w, adj, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w);
                if w == v {
                    break;
                }
            }
            comp.sort();
            s.out.push(comp);
        }
    }
    let mut s = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        on_stack: BTreeSet::new(),
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for &v in adj.keys() {
        if !s.index.contains_key(v) {
            visit(v, adj, &mut s);
        }
    }
    s.out
}

/// A shortest path from `start` back to itself inside the component (breadth first).
fn shortest_cycle<'a>(
    start: &'a ModPath,
    adj: &BTreeMap<&'a ModPath, Vec<&'a ModPath>>,
    members: &BTreeSet<&'a ModPath>,
) -> Vec<ModPath> {
    let mut prev: BTreeMap<&ModPath, &ModPath> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in adj.get(v).map(Vec::as_slice).unwrap_or(&[]) {
            if !members.contains(w) {
                continue;
            }
            if w == start {
                let mut path = vec![start.clone()];
                let mut at = v;
                while at != start {
                    path.push(at.clone());
                    at = prev[at];
                }
                path.push(start.clone());
                path.reverse();
                return path;
            }
            if !prev.contains_key(w) {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    vec![start.clone()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_of(files: &[(&str, &str)]) -> (tempdir::Dir, usize) {
        let dir = tempdir::Dir::new();
        for (name, text) in files {
            let p = dir.0.join("src").join(name);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        let n = check(std::slice::from_ref(&dir.0)).unwrap();
        (dir, n)
    }

    mod tempdir {
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new() -> Dir {
                use std::sync::atomic::{AtomicUsize, Ordering};
                static N: AtomicUsize = AtomicUsize::new(0);
                let p = std::env::temp_dir().join(format!(
                    "xtask-modules-{}-{}",
                    std::process::id(),
                    N.fetch_add(1, Ordering::SeqCst)
                ));
                let _ = std::fs::remove_dir_all(&p);
                std::fs::create_dir_all(&p).unwrap();
                Dir(p)
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn finds_a_cycle_through_use_code_and_macros() {
        for (a, b) in [
            (
                "use crate::b::B; pub struct A;",
                "use crate::a::A; pub struct B;",
            ),
            (
                "pub fn f() { crate::b::g() }",
                "pub fn g() { super::a::f() }",
            ),
            (
                "pub fn f() { println!(\"{}\", crate::b::G) }",
                "use crate::{a::{self}}; pub const G: u8 = 1;",
            ),
        ] {
            let (_d, n) = crate_of(&[("lib.rs", "mod a; mod b;"), ("a.rs", a), ("b.rs", b)]);
            assert_eq!(n, 1, "a: {a} / b: {b}");
        }
    }

    #[test]
    fn a_cycle_between_nested_siblings_counts_and_parent_child_does_not() {
        let (_d, n) = crate_of(&[
            ("lib.rs", "mod p;"),
            ("p.rs", "mod x; mod y; use self::x::X; pub struct P;"),
            ("p/x.rs", "use super::y::Y; use super::P; pub struct X;"),
            ("p/y.rs", "use crate::p::x::X; pub struct Y;"),
        ]);
        assert_eq!(n, 1);
        let (_d, n) = crate_of(&[
            ("lib.rs", "mod p; mod q; use q::Q;"),
            ("p.rs", "mod x; use self::x::X; pub struct P;"),
            ("p/x.rs", "use super::P; use crate::q::Q; pub struct X;"),
            ("q.rs", "pub struct Q;"),
        ]);
        assert_eq!(n, 0);
    }

    #[test]
    fn test_modules_are_left_out() {
        let (_d, n) = crate_of(&[
            ("lib.rs", "mod a; mod b;"),
            ("a.rs", "use crate::b::B; pub struct A;"),
            (
                "b.rs",
                "pub struct B;\n#[cfg(test)]\nmod tests { use crate::a::A; }",
            ),
        ]);
        assert_eq!(n, 0);
    }
}
