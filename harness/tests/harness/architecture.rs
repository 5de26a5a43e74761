//! The workspace's structural rules (DESIGN "Workspace layout"), checked on the sources:
//! no import circles between the modules of a crate, and no `process::exit` outside the
//! binaries, so every server and target can be driven in-process.
//!
//! A module's dependencies are the modules its non-test code names through `crate::…`,
//! `super::…` or a `use crate::{…}` group. Edges between a module and its own ancestors or
//! descendants are not circles (a folder's `mod.rs` declares its children).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const CRATES: &[&str] = &["scenario-model", "results", "transports", "mock-servers", "proxies", "harness"];

type Module = Vec<String>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `http/engine.rs` → `[http, engine]`; `http/mod.rs`, `lib.rs` → the folder's module.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Module = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The code before the file's `#[cfg(test)]` module (tests may reach anywhere), without
/// comment lines (doc links name modules without importing them).
fn production_code(text: &str) -> String {
    let code = text.find("#[cfg(test)]\nmod tests").map_or(text, |i| &text[..i]);
    code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The `::`-separated identifier path that starts at `text`.
fn path_at(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(after) = rest.strip_prefix("::") {
        let ident: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if ident.is_empty() {
            break;
        }
        rest = &after[ident.len()..];
        parts.push(ident);
    }
    parts
}

/// Every module path the code names, relative to the crate root.
fn named_paths(module: &Module, code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let start = at + "crate".len();
        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = code[start..].strip_prefix("::{") {
            let group = &group[..group.find("};").unwrap_or(group.len())];
            for item in group.split(',') {
                let head = item.trim().split("::").next().unwrap_or("").trim();
                if !head.is_empty() {
                    paths.push(vec![head.to_string()]);
                }
            }
        } else {
            paths.push(path_at(&code[start..]));
        }
    }
    for (at, _) in code.match_indices("super::") {
        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let mut path: Vec<String> = module[..module.len().saturating_sub(1)].to_vec();
        path.extend(path_at(&code[at + "super".len()..]));
        paths.push(path);
    }
    paths
}

fn related(a: &Module, b: &Module) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// The crate's module graph, without ancestor/descendant edges.
fn graph(krate: &str) -> BTreeMap<Module, BTreeSet<Module>> {
    let src = workspace().join(krate).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let sources: BTreeMap<Module, String> = files
        .iter()
        .filter(|f| !f.strip_prefix(&src).is_ok_and(|r| r.starts_with("bin")))
        .map(|f| (module_of(&src, f), std::fs::read_to_string(f).unwrap_or_default()))
        .collect();
    let resolve = |path: &[String]| -> Option<Module> {
        (1..=path.len()).rev().map(|n| path[..n].to_vec()).find(|m| sources.contains_key(m))
    };
    let mut graph = BTreeMap::new();
    for (module, text) in &sources {
        let targets: BTreeSet<Module> = named_paths(module, &production_code(text))
            .iter()
            .filter_map(|p| resolve(p))
            .filter(|t| !related(module, t))
            .collect();
        graph.insert(module.clone(), targets);
    }
    graph
}

/// Groups of modules that reach each other (strongly connected, more than one module).
fn circles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    let reach = |from: &Module| -> BTreeSet<Module> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&Module, BTreeSet<Module>> = graph.keys().map(|m| (m, reach(m))).collect();
    let mut groups: Vec<Vec<Module>> = Vec::new();
    for (m, from_m) in &reached {
        if !from_m.contains(*m) || groups.iter().any(|g| g.contains(m)) {
            continue;
        }
        let group: Vec<Module> =
            graph.keys().filter(|o| from_m.contains(*o) && reached[o].contains(*m)).cloned().collect();
        groups.push(group);
    }
    groups
}

#[test]
fn no_import_circles_between_modules() {
    let mut found = Vec::new();
    for krate in CRATES {
        for group in circles(&graph(krate)) {
            let names: Vec<String> = group.iter().map(|m| m.join("::")).collect();
            found.push(format!("{krate}: {}", names.join(" ↔ ")));
        }
    }
    assert!(found.is_empty(), "modules that import each other in a circle:\n{}", found.join("\n"));
}

#[test]
fn the_circle_finder_sees_a_circle() {
    let m = |s: &str| -> Module { s.split("::").map(String::from).collect() };
    let graph = BTreeMap::from([
        (m("runner"), BTreeSet::from([m("render")])),
        (m("render"), BTreeSet::from([m("runner")])),
        (m("report"), BTreeSet::from([m("runner")])),
    ]);
    assert_eq!(circles(&graph), vec![vec![m("render"), m("runner")]]);
    assert_eq!(named_paths(&m("http::engine"), "use super::shared::lock;"), vec![vec!["http", "shared", "lock"]]);
}

#[test]
fn no_process_exit_outside_the_binaries() {
    let mut found = Vec::new();
    for krate in CRATES {
        let src = workspace().join(krate).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in files {
            let rel = file.strip_prefix(&src).unwrap_or(&file).to_path_buf();
            if rel.starts_with("bin") || rel == Path::new("main.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            for (n, line) in text.lines().enumerate() {
                if line.contains("process::exit") && !line.trim_start().starts_with("//") {
                    found.push(format!("{krate}/src/{}:{}", rel.display(), n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "process::exit outside src/bin/ and main.rs:\n{}", found.join("\n"));
}
