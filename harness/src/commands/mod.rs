//! What each `mcp-harness` subcommand does, from its parsed arguments to its exit code, so
//! the binary only parses arguments and calls these (DESIGN: thin binaries over a library).
//! The exit-code rules are [`run::exit_code`]'s, tested here.
//!
//! # Layout
//!
//! - [`run`] — `run` and `merge`: load, select, run, judge by the baseline, report, exit code.
//! - [`review`](mod@review) — `review`: pending snapshots accepted or rejected.
//! - [`check_record`](mod@check_record) — `check-record`: a host's recording judged.
//! - [`browse`] — `list`, `explain`, `check`, `scenarios export`: the library
//!   read, not run.

pub mod browse;
pub mod check_record;
pub mod review;
pub mod run;

use crate::{HarnessError, discover, library};
use std::path::{Path, PathBuf};

/// What `run` prints on stdout.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The human summary.
    Text,
    /// The results.json document.
    Json,
}

/// Writes to stdout; a reader that went away (`| head`) ends the output, never a panic.
pub fn emit(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// The paths given, or, when none is, the embedded library written out for this run
/// ([`library::materialise`]).
pub fn library_or(paths: Vec<PathBuf>) -> Result<Vec<PathBuf>, HarnessError> {
    if paths.is_empty() { Ok(vec![library::materialise()?]) } else { Ok(paths) }
}

/// The file `explain` means: the path as given, or `<name>.yaml` somewhere under `dir`.
pub fn find_scenario(given: &str, dir: &Path) -> Result<PathBuf, HarnessError> {
    let path = PathBuf::from(given);
    if path.is_file() {
        return Ok(path);
    }
    let files = discover::scenario_files(&[dir.to_path_buf()])?;
    let stem = |p: &PathBuf| p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let found: Vec<&PathBuf> = files.iter().filter(|p| stem(p) == given).collect();
    match found.as_slice() {
        [one] => return Ok((*one).clone()),
        [] => {}
        many => {
            return Err(HarnessError::AmbiguousScenario {
                given: given.to_string(),
                dir: dir.to_path_buf(),
                paths: many.iter().map(|p| (*p).clone()).collect(),
            });
        }
    }
    let mut near: Vec<(usize, String)> =
        files.iter().map(|p| (strsim::levenshtein(&stem(p), given), stem(p))).filter(|(d, _)| *d <= 3).collect();
    near.sort();
    let hint = match near.first() {
        Some((_, name)) => format!("; did you mean `{name}`?"),
        None => " (`mcp-harness list --text <word>` finds scenarios by name or summary)".into(),
    };
    Err(HarnessError::ScenarioNotFound { given: given.to_string(), dir: dir.to_path_buf(), hint })
}
