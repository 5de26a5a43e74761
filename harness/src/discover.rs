//! Finding and loading scenario files from the paths given on the command line.

use crate::error::HarnessError;
use mcp_scenario::Scenario;
use std::path::{Path, PathBuf};

/// Every `*.yaml` file under `paths` (files as given, folders recursively), sorted, deduped.
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, HarnessError> {
    let mut files = Vec::new();
    for p in paths {
        if !p.exists() {
            return Err(HarnessError::MissingPath(p.clone()));
        }
        if p.is_dir() {
            files_under(p, &is_scenario_file, &mut files)
                .map_err(|e| HarnessError::io(format!("reading {}", p.display()), e))?;
        } else {
            files.push(p.clone());
        }
    }
    files.sort();
    files.dedup();
    if files.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(HarnessError::NoScenarios(shown.join(", ")));
    }
    Ok(files)
}

fn is_scenario_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "yaml" || e == "yml")
}

/// Every file under `dir` (recursively) that `keep` accepts, appended to `out` unsorted.
pub fn files_under(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            files_under(&path, keep, out)?;
        } else if keep(&path) {
            out.push(path);
        }
    }
    Ok(())
}

/// Loads every file; returns all load errors at once so a user fixes them in one pass.
pub fn load_all(files: &[PathBuf]) -> Result<Vec<(PathBuf, Scenario)>, Vec<HarnessError>> {
    let (ok, errors) = load_each(files);
    if errors.is_empty() { Ok(ok) } else { Err(errors) }
}

/// Loads every file: the valid scenarios and, apart, each invalid file's error
/// (`run --keep-going` runs the first and reports the second).
pub fn load_each(files: &[PathBuf]) -> (Vec<(PathBuf, Scenario)>, Vec<HarnessError>) {
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        match crate::load(f) {
            Ok(s) => ok.push((f.clone(), s)),
            Err(e) => errors.push(e),
        }
    }
    (ok, errors)
}
