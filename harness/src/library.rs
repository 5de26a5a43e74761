//! The scenario library embedded in the binary: what `run`, `list`, `check` and `explain`
//! use when no path is given, and what `mcp-harness scenarios export DIR` writes out.
//!
//! Why embedded: the people who run a client suite in CI are SDK authors working in other
//! languages; a library that lives in a checkout makes them clone and build before the first
//! scenario runs. The binary carries the same files as `scenarios/` when it was built
//! (`build.rs` loads each one and fails the build on a file that does not load), so a
//! version of the harness always runs the library it was built and tested with.
//!
//! Why written out to a folder for a run instead of read from memory: a run hands the mock
//! (a child process) the scenario's path, and failure messages, `explain` and the report
//! name a file:line a person can open. The copy goes to a per-user cache folder named by the
//! library's content hash ([`folder`]); every run makes sure each file there holds the
//! embedded bytes (an edited copy is put back: the embedded library is read-only), so runs
//! of one binary always see the same files. To edit scenarios, [`export`] them and run that
//! folder: a path given on the command line is the library then. `./scenarios` in the
//! current folder is *not* taken on its own: the same command must run the same library
//! wherever it is typed, and an SDK repository's own `scenarios/` folder must not hijack it.
//!
//! Snapshots: the bundled target's snapshots are embedded beside their scenarios and
//! compared from the copy; nothing is ever written there ([`crate::snapshot::Policy`]'s
//! `read_only`): a run with no snapshot (every third-party client's) is judged by its
//! checks alone and its transcript goes to the report's `transcripts/`. Keeping snapshots
//! for a client means exporting the library and running the exported folder.

use crate::error::HarnessError;
use std::path::{Path, PathBuf};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/library.rs"));
}

/// What the folder of a run that gave no path is called in messages.
pub const NAME: &str = "the embedded library";

/// Every embedded file: (path under `scenarios/`, contents), sorted by path.
pub fn files() -> &'static [(&'static str, &'static [u8])] {
    embedded::FILES
}

/// How many scenario files the library holds.
pub fn scenario_count() -> usize {
    files().iter().filter(|(p, _)| p.ends_with(".yaml")).count()
}

/// The cache folder the library is written to for runs: `<cache>/mcp-harness/library-
/// <version>-<hash>/scenarios`, where `<cache>` is `$XDG_CACHE_HOME`, else `$HOME/.cache`,
/// else the system's temp folder.
pub fn folder() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache
        .join("mcp-harness")
        .join(format!("library-{}-{:016x}", env!("CARGO_PKG_VERSION"), embedded::HASH))
        .join("scenarios")
}

/// Writes the library to [`folder`] where a file there is missing or differs, and returns
/// the folder. Each file is written beside its place and renamed over it, so a run going on
/// at the same time never reads half a file.
pub fn materialise() -> Result<PathBuf, HarnessError> {
    let dir = folder();
    materialise_in(&dir)?;
    Ok(dir)
}

/// [`materialise`] into `dir`.
fn materialise_in(dir: &Path) -> Result<(), HarnessError> {
    for (rel, bytes) in files() {
        let path = dir.join(rel);
        if std::fs::read(&path).is_ok_and(|b| b == *bytes) {
            continue;
        }
        write_atomically(&path, bytes).map_err(|e| {
            HarnessError::io(
                format!(
                    "writing {} out to {} (set XDG_CACHE_HOME to a writable folder, or export it with `mcp-harness scenarios export DIR` and run DIR)",
                    NAME,
                    path.display()
                ),
                e,
            )
        })?;
    }
    Ok(())
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = parent.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&temp, bytes)?;
    std::fs::rename(&temp, path)
}

/// Writes every embedded file under `dir` (created when missing) for editing; refuses to
/// overwrite a file that differs unless `force`. Returns how many files were written.
pub fn export(dir: &Path, force: bool) -> Result<usize, HarnessError> {
    if !force {
        let differing: Vec<String> = files()
            .iter()
            .filter(|(rel, bytes)| std::fs::read(dir.join(rel)).is_ok_and(|b| b != *bytes))
            .map(|(rel, _)| rel.to_string())
            .collect();
        if !differing.is_empty() {
            let shown: Vec<&str> = differing.iter().take(5).map(String::as_str).collect();
            return Err(HarnessError::Export(format!(
                "{} already holds {} file(s) that differ from {NAME} ({}{}): export to an empty folder, or add --force to overwrite them",
                dir.display(),
                differing.len(),
                shown.join(", "),
                if differing.len() > shown.len() { ", …" } else { "" }
            )));
        }
    }
    for (rel, bytes) in files() {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| HarnessError::io(format!("creating {}", parent.display()), e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| HarnessError::io(format!("writing {}", path.display()), e))?;
    }
    Ok(files().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded library is the checkout's `scenarios/`: the same scenario files, byte
    /// for byte, and the bundled snapshots; nothing a driver column owns.
    #[test]
    fn the_embedded_files_are_the_checkouts() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let mut on_disk = Vec::new();
        crate::discover::files_under(&root, &|p| p.extension().is_some_and(|e| e == "yaml"), &mut on_disk)
            .expect("scenarios/ is readable");
        assert_eq!(scenario_count(), on_disk.len());
        for (rel, bytes) in files() {
            assert_eq!(std::fs::read(root.join(rel)).expect("the file is in the checkout"), *bytes, "{rel}");
            assert!(!rel.contains('@'), "{rel}: a driver's snapshot is not embedded");
        }
        assert!(files().iter().any(|(p, _)| *p == "stdio/handshake-order.snap"));
        assert!(files().iter().any(|(p, _)| *p == "README.md"));
    }

    #[test]
    fn export_writes_every_file_and_keeps_edits_unless_forced() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(export(dir.path(), false).expect("exports"), files().len());
        let edited = dir.path().join("stdio/handshake-order.yaml");
        std::fs::write(&edited, "edited").expect("write");
        let e = export(dir.path(), false).expect_err("an edit is kept").to_string();
        assert!(
            e.contains("1 file(s) that differ") && e.contains("stdio/handshake-order.yaml") && e.contains("--force"),
            "{e}"
        );
        export(dir.path(), true).expect("forced");
        assert_ne!(std::fs::read_to_string(&edited).expect("read"), "edited");
    }

    #[test]
    fn the_copy_for_runs_is_put_back_when_edited() {
        let cache = tempfile::tempdir().expect("tempdir");
        let dir = cache.path().join("scenarios");
        materialise_in(&dir).expect("written");
        let file = dir.join("stdio/handshake-order.yaml");
        std::fs::write(&file, "edited").expect("write");
        materialise_in(&dir).expect("again");
        assert_ne!(std::fs::read_to_string(&file).expect("read"), "edited");
        assert!(folder().ends_with("scenarios") && folder().to_string_lossy().contains("mcp-harness/library-"));
    }
}
