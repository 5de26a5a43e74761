//! The crate's modules import each other without a circle (DESIGN.md: "behaviour modules
//! import data, never each other in a circle"). The module graph is read from the sources:
//! every `use` tree and every `crate::…`, `super::…`, `self::…` path, and in a `mod.rs` /
//! `lib.rs` every path through a child module, resolved to the longest module prefix.
//! Comments, literals and `#[cfg(test)]` modules (last in their files) do not count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every module of `src/` (outside `bin/`), by path (`crate`, `http`, `http::run`), with
/// whether its file holds its children (`mod.rs`, `lib.rs`) and its source.
fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, (bool, String)>) {
    for entry in std::fs::read_dir(dir).expect("read src dir").flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            if prefix.is_empty() && name == "bin" {
                continue;
            }
            let mut p = prefix.to_vec();
            p.push(name);
            modules(&path, &p, out);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            let mut p = prefix.to_vec();
            let holds_children = stem == "mod" || stem == "lib";
            if !holds_children {
                p.push(stem.to_string());
            }
            let key = if p.is_empty() { "crate".to_string() } else { p.join("::") };
            out.insert(key, (holds_children, std::fs::read_to_string(&path).expect("read source")));
        }
    }
}

/// The source without comments, string and char literals, and unit tests.
fn code(source: &str) -> String {
    let source = source.split("#[cfg(test)]").next().unwrap_or_default();
    let b: Vec<char> = source.chars().collect();
    let (mut out, mut i) = (String::new(), 0);
    let at = |i: usize, s: &str| s.chars().enumerate().all(|(k, c)| b.get(i + k) == Some(&c));
    while i < b.len() {
        if at(i, "//") {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if at(i, "/*") {
            i += 2;
            while i < b.len() && !at(i, "*/") {
                i += 1;
            }
            i += 2;
        } else if b[i] == 'r' && (at(i, "r\"") || at(i, "r#")) && (i == 0 || !b[i - 1].is_alphanumeric()) {
            let hashes = b[i + 1..].iter().take_while(|c| **c == '#').count();
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            i += 2 + hashes;
            while i < b.len() && !at(i, &close) {
                i += 1;
            }
            i += close.len();
            out.push_str("\"\"");
        } else if b[i] == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == '\'' && b.get(i + 1) == Some(&'\\') {
            // An escaped char literal: `'\n'`, `'\''`, `'\u{1F}'`.
            i += 3;
            while i < b.len() && b[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else if b[i] == '\'' && b.get(i + 2) == Some(&'\'') {
            i += 3;
            out.push_str("' '");
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// A `use` tree (`a::{b, c::{d, e}}`) as its paths.
fn expand(tree: &str) -> Vec<String> {
    let Some(open) = tree.find('{') else { return vec![tree.to_string()] };
    let prefix = tree[..open].trim_end_matches("::");
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut items, mut depth, mut cur) = (Vec::new(), 0, String::new());
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    items.push(cur);
    items
        .iter()
        .map(|it| it.trim())
        .filter(|it| !it.is_empty())
        .flat_map(|it| if it == "self" { vec![prefix.to_string()] } else { expand(&format!("{prefix}::{it}")) })
        .collect()
}

/// Every path in `code` starting with one of `roots` (`crate`, `super`, a child module…).
fn paths(code: &str, roots: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(pos) = rest.find("use ") {
        let start = pos + 4;
        let preceded = rest[..pos].chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_');
        let end = rest[start..].find(';').map_or(rest.len(), |e| start + e);
        if !preceded {
            let tree: String = rest[start..end].chars().filter(|c| !c.is_whitespace()).collect();
            found.extend(expand(&tree));
        }
        rest = &rest[start..];
    }
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let word_start = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == ':');
        let len = chars[i..].iter().take_while(|c| c.is_alphanumeric() || **c == '_' || **c == ':').count();
        if word_start && len > 0 {
            let path: String = chars[i..i + len].iter().collect();
            if path.contains("::") && !path.ends_with("::") {
                found.push(path);
            }
            i += len;
        } else {
            i += 1;
        }
    }
    found
        .into_iter()
        .map(|p| p.split("::").map(str::to_string).filter(|s| !s.is_empty()).collect::<Vec<_>>())
        .filter(|p| p.first().is_some_and(|r| roots.contains(r)))
        .collect()
}

fn graph(src: &Path) -> Graph {
    let mut mods = BTreeMap::new();
    modules(src, &[], &mut mods);
    let names: BTreeSet<String> = mods.keys().cloned().collect();
    let resolve = |segs: &[String]| {
        (1..=segs.len())
            .map(|n| segs[..n].join("::"))
            .take_while(|m| names.contains(m))
            .last()
            .unwrap_or_else(|| "crate".to_string())
    };
    let mut g = Graph::new();
    for (m, (holds_children, source)) in &mods {
        let me: Vec<String> = if m == "crate" { Vec::new() } else { m.split("::").map(str::to_string).collect() };
        let mut roots: BTreeSet<String> = ["crate", "super", "self"].iter().map(|s| s.to_string()).collect();
        if *holds_children {
            let parent = if m == "crate" { String::new() } else { format!("{m}::") };
            roots.extend(
                names.iter().filter_map(|n| n.strip_prefix(&parent)).filter(|c| !c.contains("::")).map(str::to_string),
            );
        }
        let edges = g.entry(m.clone()).or_default();
        for p in paths(&code(source), &roots) {
            let target = match p[0].as_str() {
                "crate" => resolve(&p[1..]),
                "super" | "self" => {
                    // `self` is the module; `super` its parent (a file's module is `me`).
                    let mut base = me.clone();
                    let mut k = 0;
                    while k < p.len() && (p[k] == "super" || p[k] == "self") {
                        if p[k] == "super" {
                            base.pop();
                        }
                        k += 1;
                    }
                    base.extend_from_slice(&p[k..]);
                    if base.is_empty() { "crate".to_string() } else { resolve(&base) }
                }
                _ => resolve(&[me.clone(), p.clone()].concat()),
            };
            if target != *m {
                edges.insert(target);
            }
        }
    }
    g
}

/// A circle in `g`, if there is one.
fn circle(g: &Graph) -> Option<Vec<String>> {
    fn visit(g: &Graph, m: &str, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(pos) = path.iter().position(|p| p == m) {
            return Some(path[pos..].to_vec());
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(g, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys().find_map(|m| visit(g, m, &mut Vec::new(), &mut done))
}

#[test]
fn modules_import_each_other_without_a_circle() {
    let g = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(g.len() > 40, "read too few modules: {:?}", g.keys());
    assert!(g["ops::op"].contains("http::run") && g["http::engine"].contains("ops"), "edges are read: {g:?}");
    if let Some(c) = circle(&g) {
        panic!("import circle: {} -> {}", c.join(" -> "), c[0]);
    }
}

#[test]
fn a_circle_is_found() {
    let mut g = Graph::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("a".into());
    assert_eq!(circle(&g), Some(vec!["a".to_string(), "b".to_string()]));
    assert_eq!(expand("super::{op::{Op, X}, rules}"), vec!["super::op::Op", "super::op::X", "super::rules"]);
}
