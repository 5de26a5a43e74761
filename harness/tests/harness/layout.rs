//! The harness's `lib.rs` "Layout" section lists every top-level module once, each after
//! every module it imports — so a reader meets each module after what it builds on (and
//! the top-level modules cannot import each other in a circle; `architecture.rs` checks
//! circles between all modules of every crate).
//!
//! The graph is built from the source text: every `crate::…` and `super::…` path (in `use`
//! lines, `use … {…}` groups and expressions), outside comments, resolved to the longest
//! known module prefix; a folder counts as one top-level module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// `crate::a::b` for each `.rs` file of the library (the binary's `main.rs` is left out).
fn modules() -> BTreeMap<String, PathBuf> {
    let mut files = Vec::new();
    crate::files::collect_with_extension(Path::new(SRC), "rs", &mut files);
    let mut modules = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(SRC).expect("under src").with_extension("");
        let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        match parts.last().map(String::as_str) {
            Some("main") => continue,
            Some("lib") | Some("mod") => {
                parts.pop();
            }
            _ => {}
        }
        modules.insert(std::iter::once("crate".to_string()).chain(parts).collect::<Vec<_>>().join("::"), file);
    }
    modules
}

/// The text with `//` comments removed (doc comments hold intra-doc links, not imports).
fn code(text: &str) -> String {
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The paths a module's code names, absolute (`crate::x::Y`).
fn paths(module: &str, text: &str) -> Vec<String> {
    let code = code(text);
    let bytes = code.as_bytes();
    let word = |i: usize| bytes.get(i).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i..].starts_with(b"crate::") || bytes[i..].starts_with(b"super::");
        if !starts || (i > 0 && word(i - 1)) {
            i += 1;
            continue;
        }
        // The path: words and `::` (all ASCII), then an optional `{…}` group.
        let mut end = i;
        while word(end) || bytes[end..].starts_with(b"::") {
            end += if word(end) { 1 } else { 2 };
        }
        let head = code[i..end].trim_end_matches("::");
        let group = code[end..].strip_prefix('{').map(|g| g.split('}').next().unwrap_or(""));
        let mut segs: Vec<&str> = head.split("::").collect();
        let mut base: Vec<&str> = module.split("::").collect();
        if segs[0] == "crate" {
            base = vec!["crate"];
            segs.remove(0);
        }
        // `super` is the parent of the module (of the folder, in a folder's mod.rs).
        while segs.first() == Some(&"super") {
            segs.remove(0);
            base.pop();
        }
        let prefix = base.into_iter().chain(segs).collect::<Vec<_>>().join("::");
        match group {
            Some(g) => {
                for item in g.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    out.push(format!("{prefix}::{}", item.split(" as ").next().unwrap_or(item).trim()));
                }
            }
            None => out.push(prefix),
        }
        i = end.max(i + 1);
    }
    out
}

/// The longest known module a path starts with.
fn owner<'a>(path: &str, modules: &'a BTreeMap<String, PathBuf>) -> Option<&'a str> {
    let segs: Vec<&str> = path.split("::").collect();
    (1..=segs.len())
        .rev()
        .map(|n| segs[..n].join("::"))
        .find_map(|p| modules.get_key_value(&p).map(|(k, _)| k.as_str()))
}

fn top(module: &str) -> String {
    module.split("::").take(2).collect::<Vec<_>>().join("::")
}

fn graphs() -> (BTreeMap<String, BTreeSet<String>>, BTreeMap<String, BTreeSet<String>>) {
    let modules = modules();
    let (mut files, mut tops) = (BTreeMap::new(), BTreeMap::<String, BTreeSet<String>>::new());
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).expect("readable");
        // An inline module (here: the unit tests at the end of a file) is one level deeper,
        // so its `super::` is the file's module.
        let inline = text.lines().position(|l| {
            let l = l.trim_start().trim_start_matches("pub ");
            l.starts_with("mod ") && l.ends_with('{')
        });
        let lines: Vec<&str> = text.lines().collect();
        let (outer, inner) = lines.split_at(inline.unwrap_or(lines.len()));
        let found =
            paths(module, &outer.join("\n")).into_iter().chain(paths(&format!("{module}::inline"), &inner.join("\n")));
        for path in found {
            let Some(to) = owner(&path, &modules) else { continue };
            if to == module {
                continue;
            }
            let (from_top, to_top) = (top(module), top(to));
            if from_top != to_top && module != "crate" && to != "crate" {
                tops.entry(from_top).or_default().insert(to_top);
            }
            // A folder naming its own parts assembles it; it is not an import.
            if !to.starts_with(&format!("{module}::")) {
                files.entry(module.clone()).or_insert_with(BTreeSet::new).insert(to.to_string());
            }
        }
    }
    (tops, files)
}

#[test]
fn layout_lists_every_module_after_what_it_imports() {
    let lib = std::fs::read_to_string(Path::new(SRC).join("lib.rs")).expect("lib.rs");
    let listed: Vec<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//! - [`"))
        .filter_map(|l| l.split('`').next())
        .map(|m| format!("crate::{m}"))
        .collect();
    let declared: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|m| format!("crate::{}", m.trim_end_matches(';')))
        .collect();
    assert_eq!(listed.iter().cloned().collect::<BTreeSet<_>>(), declared, "Layout and `pub mod` lines differ");
    assert_eq!(listed.len(), declared.len(), "a module is listed twice");
    let (tops, _) = graphs();
    assert!(tops.values().flatten().count() > 10, "the graph looks empty: {tops:?}");
    let rank = |m: &str| listed.iter().position(|l| l == m);
    for (from, tos) in &tops {
        for to in tos {
            assert!(rank(to) < rank(from), "{from} imports {to}, listed after it in lib.rs's Layout");
        }
    }
}
