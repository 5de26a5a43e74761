//! Embeds the scenario library in the binary, checked, and keeps the scenario-library test
//! in step with the files.
//!
//! **Embedding** (`$OUT_DIR/library.rs`, read by `src/library.rs`): every scenario file
//! (`*.yaml`), each bundled snapshot (`<name>.snap`; a driver's `<name>@<client>.snap` is
//! this repository's own third-party column and stays out), `README.md` and `schema.json`,
//! by their path under `scenarios/`. Each scenario file is loaded with the format's own
//! loader (`mcp_scenario::load`: YAML, fields, ops, the name matching the file) and a file
//! that does not load fails the build with the loader's file:line:column message, so no
//! binary ships a library it cannot read. What only the harness can check (the checks'
//! references into the script) is checked by the harness's tests, which load every file.
//! A content hash of the embedded files names the copy the binary writes out for its runs.
//!
//! **Rerunning**: each embedded file is watched, so an edit re-checks and re-embeds it; the
//! scenario folder and every folder below it are watched too, so an added or removed file
//! (a new folder changes its parent's mtime) reruns this script and the scenario-library
//! test (one test per file, rstest's `#[files("../scenarios/**/*.yaml")]`) sees every file.
//! Only paths that exist are watched: cargo treats a missing `rerun-if-changed` path as
//! always changed and would rebuild the harness on every run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn watch(dir: &Path) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut subdirs: Vec<_> =
        entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect();
    subdirs.sort();
    for sub in subdirs {
        watch(&sub);
    }
}

/// Whether a file under `scenarios/` is part of the embedded library.
fn embedded(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    rel == "README.md"
        || rel == "schema.json"
        || name.ends_with(".yaml")
        || (name.ends_with(".snap") && !name.contains('@'))
}

fn files(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(root, &path, out);
            continue;
        }
        let Ok(rel) = path.strip_prefix(root) else { continue };
        let rel = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        if embedded(&rel) {
            out.push((rel, path));
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest.join("../scenarios");
    watch(&root);
    let mut found = Vec::new();
    files(&root, &root, &mut found);
    found.sort();
    let mut invalid = Vec::new();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut code = String::from("/// The embedded library: (path under `scenarios/`, contents), sorted by path.\n");
    code.push_str("pub static FILES: &[(&str, &[u8])] = &[\n");
    for (rel, path) in &found {
        println!("cargo:rerun-if-changed={}", path.display());
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        if rel.ends_with(".yaml")
            && let Err(e) = mcp_scenario::load(path)
        {
            invalid.push(e.to_string());
        }
        for b in rel.bytes().chain([0]).chain(bytes.iter().copied()) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        let _ = writeln!(code, "    ({rel:?}, include_bytes!({:?})),", path.display().to_string());
    }
    code.push_str("];\n");
    let _ = writeln!(code, "/// A hash of every embedded path and its contents.\npub const HASH: u64 = {hash:#x};");
    if !invalid.is_empty() {
        for e in &invalid {
            println!("cargo:warning={e}");
        }
        panic!(
            "{} scenario file(s) do not load, so the library cannot be embedded (each is listed above with its file:line:column); fix them, or check one with `mcp-harness check FILE`",
            invalid.len()
        );
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("library.rs");
    std::fs::write(&out, code).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}
