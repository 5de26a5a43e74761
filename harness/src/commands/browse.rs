//! `list`, `explain`, `check` and `scenarios export`: the commands that read the scenario
//! library (the paths given, else the embedded one) without running it.

use crate::commands::{emit, find_scenario, library_or};
use crate::select::{self, Selection};
use crate::{HarnessError, discover, explain, library};
use std::path::{Path, PathBuf};

/// `list`: one line per selected scenario on stdout, the count on stderr.
pub fn list(paths: Vec<PathBuf>, selection: &Selection) -> Result<i32, Vec<HarnessError>> {
    let loaded = load(paths)?;
    if let Some(e) = selection.unknown_tag(&loaded) {
        return Err(vec![e]);
    }
    let shown: Vec<_> = loaded.iter().filter(|(p, s)| selection.matches(p, s)).collect();
    let lines: String = shown.iter().map(|(p, s)| select::line(p, s) + "\n").collect();
    emit(&lines);
    eprintln!("{} of {} scenarios", shown.len(), loaded.len());
    Ok(0)
}

/// `explain`: one scenario (a path, or a name found under `dir` or the embedded library) in
/// words.
pub fn explain(scenario: &str, dir: Option<PathBuf>) -> Result<i32, Vec<HarnessError>> {
    let dirs = library_or(dir.into_iter().collect()).map_err(|e| vec![e])?;
    let path = find_scenario(scenario, &dirs[0]).map_err(|e| vec![e])?;
    let loaded = crate::load(&path).map_err(|e| vec![e])?;
    emit(&explain::explain(&path, &loaded));
    Ok(0)
}

/// `check`: every scenario file loads and validates.
pub fn check(paths: Vec<PathBuf>) -> Result<i32, Vec<HarnessError>> {
    let whose = if paths.is_empty() { format!(" ({})", library::NAME) } else { String::new() };
    let loaded = load(paths)?;
    println!("{} scenario files are valid{whose}", loaded.len());
    Ok(0)
}

/// `scenarios export DIR`: the embedded library written out to edit or extend.
pub fn export(dir: &Path, force: bool) -> Result<i32, Vec<HarnessError>> {
    let n = library::export(dir, force).map_err(|e| vec![e])?;
    println!(
        "wrote {n} files of {} ({} scenarios) to {}: run them with `mcp-harness run {}`",
        library::NAME,
        library::scenario_count(),
        dir.display(),
        dir.display()
    );
    Ok(0)
}

fn load(paths: Vec<PathBuf>) -> Result<Vec<(PathBuf, mcp_scenario::Scenario)>, Vec<HarnessError>> {
    let files = library_or(paths).and_then(|p| discover::scenario_files(&p)).map_err(|e| vec![e])?;
    discover::load_all(&files)
}
