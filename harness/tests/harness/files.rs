//! The files the integration tests write and find: a scenario, script or baseline written into
//! a fresh temporary folder for one test, and every file of a tree with one extension.

use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A fresh temporary folder holding the file `name` with `text`, and that file's path. The
/// folder, and the file, last as long as the returned `TempDir`.
pub(crate) fn file_in_tempdir(name: &str, text: &str) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    (dir, path)
}

/// Appends every file under `dir` (in its subfolders too) whose extension is `extension`.
pub(crate) fn collect_with_extension(dir: &Path, extension: &str, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_with_extension(&path, extension, out);
        } else if path.extension().is_some_and(|e| e == extension) {
            out.push(path);
        }
    }
}
