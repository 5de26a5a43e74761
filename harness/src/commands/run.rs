//! `mcp-harness run` and `merge`: scenarios loaded and selected, run in parallel, judged by
//! an expected-failures baseline when one is given, reported; and the exit code.

use super::{Format, emit, library_or};
use crate::baseline::{self, Baseline};
use crate::partition::{self, Partition};
use crate::runner::{self, RunConfig};
use crate::select::Selection;
use crate::{HarnessError, Target, discover, library, report, snapshot, terminal};
use mcp_results::Verdict;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The baseline files a run reads and writes.
pub struct Baselines {
    /// `--expected-failures`: the baseline the runs are judged by.
    pub expected: Option<PathBuf>,
    /// `--write-baseline`: where the baseline of this run is written.
    pub write: Option<PathBuf>,
}

/// How runs are judged: snapshots, and whether SHOULDs fail.
pub struct Judging {
    /// Whether snapshots are rewritten, and whether a missing one fails.
    pub snapshots: snapshot::Policy,
    /// Compare snapshots at all (`--no-snapshots` turns it off).
    pub compare: bool,
    /// `--strict`: a third-party client's unmet SHOULDs fail its runs.
    pub strict: bool,
}

/// How a `run` goes and reports.
pub struct How {
    /// `--fail-fast`: start no runs after the first failure.
    pub fail_fast: bool,
    /// `--keep-going`: skip invalid scenario files instead of stopping.
    pub keep_going: bool,
    /// What goes to stdout.
    pub format: Format,
    /// `--quiet`: the summary leaves passes out.
    pub quiet: bool,
    /// Only this shard of the selected scenarios (`--partition`).
    pub partition: Option<Partition>,
}

/// `run`: the scenarios under `paths` (the embedded library when none) against `target`,
/// `jobs` at once, judged and reported; the exit code, or every error that stopped it.
#[allow(clippy::too_many_arguments)]
pub fn run(
    paths: Vec<PathBuf>,
    target: &str,
    jobs: Option<usize>,
    judging: Judging,
    selection: &Selection,
    reports: PathBuf,
    how: How,
    baselines: Baselines,
) -> Result<i32, Vec<HarnessError>> {
    let baseline = match &baselines.expected {
        Some(path) => Some(Baseline::load(path).map_err(|e| vec![e])?),
        None => None,
    };
    let target = Target::parse(target).map_err(|e| vec![e])?;
    if paths.is_empty() && judging.snapshots.update {
        return Err(vec![HarnessError::Export(format!(
            "--update-snapshots: {} is read-only; write it out with `mcp-harness scenarios export DIR` and run DIR with --update-snapshots",
            library::NAME
        ))]);
    }
    let files = library_or(paths).and_then(|p| discover::scenario_files(&p)).map_err(|e| vec![e])?;
    let (scenarios, invalid) = discover::load_each(&files);
    if !invalid.is_empty() && !how.keep_going {
        return Err(invalid);
    }
    for e in &invalid {
        eprintln!("mcp-harness: skipped (--keep-going): {e}");
    }
    let loaded = scenarios.len();
    if let Some(e) = selection.unknown_tag(&scenarios) {
        return Err(vec![e]);
    }
    let scenarios: Vec<_> = scenarios.into_iter().filter(|(p, s)| selection.matches(p, s)).collect();
    if scenarios.is_empty() && loaded > 0 {
        return Err(vec![HarnessError::NothingSelected(loaded)]);
    }
    let scenarios = match how.partition {
        Some(p) => {
            let selected = scenarios.len();
            let kept: Vec<_> = scenarios.into_iter().filter(|(path, _)| partition::holds(p, path)).collect();
            // An empty shard is no error: with more shards than scenarios some hold none,
            // and merge still wants their (empty) folders.
            eprintln!("shard {p}: {} of the {selected} selected scenarios", kept.len());
            kept
        }
        None => scenarios,
    };
    if let (Some(b), Some(path)) = (&baseline, &baselines.expected) {
        let selftest: Vec<&str> =
            scenarios.iter().filter(|(p, _)| baseline::is_selftest(p)).map(|(_, s)| s.name.as_str()).collect();
        b.refuse_selftest(path, &selftest).map_err(|e| vec![e])?;
    }
    let exe = std::env::current_exe().map_err(|e| vec![HarnessError::io("finding the mcp-harness executable", e)])?;
    let config = Arc::new(RunConfig {
        target: target.clone(),
        mock_command: vec![exe.display().to_string(), "mock".into()],
        snapshots: judging.snapshots,
        compare_snapshots: judging.compare,
        strict: judging.strict,
        fail_fast: how.fail_fast,
    });
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
    let parallel = jobs.unwrap_or(cores * target.runs_per_core());
    let runtime = tokio::runtime::Runtime::new().map_err(|e| vec![HarnessError::io("starting the runtime", e)])?;
    let started = Instant::now();
    let windows = cores * target.window_runs_per_core();
    let mut work = runner::jobs(scenarios, &target);
    work.retain(|job| selection.transports.is_empty() || selection.transports.contains(&job.transport));
    let expected: terminal::Expected = match &baseline {
        Some(b) => {
            let b = b.clone();
            let mut seen = std::collections::HashMap::<String, usize>::new();
            for job in &work {
                *seen.entry(job.scenario.name.clone()).or_default() += 1;
            }
            Arc::new(move |r: &mcp_results::RunResult| {
                b.expects_failure(r, seen.get(&r.scenario).is_some_and(|n| *n > 1))
            })
        }
        None => Arc::new(|_: &mcp_results::RunResult| false),
    };
    let (done, bar) = terminal::progress(work.len(), terminal::ProgressStyle::detect(how.quiet), expected);
    let mut results = runtime.block_on(runner::run_all(work, config, parallel, windows, done));
    bar.done();
    let wall_ms = started.elapsed().as_millis() as u64;
    let judged = baselines.expected.as_deref().zip(baseline.as_ref());
    let code = conclude(&mut results, wall_ms, judged, &how, &reports, invalid.len())?;
    if let Some(path) = &baselines.write {
        let previous = if path.exists() { Baseline::load(path).map_err(|e| vec![e])? } else { Baseline::default() };
        let previous_text = std::fs::read_to_string(path).unwrap_or_default();
        let client = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        std::fs::write(path, baseline::render(&client, &results, &previous, &previous_text))
            .map_err(|e| vec![HarnessError::io(format!("writing {}", path.display()), e)])?;
    }
    Ok(code)
}

/// `merge`: the shards' runs joined ([`crate::merge::join`]), judged and reported as
/// one run's; returns the exit code.
pub fn merge(
    shards: &[PathBuf],
    reports: PathBuf,
    expected_failures: Option<PathBuf>,
    quiet: bool,
) -> Result<i32, Vec<HarnessError>> {
    let baseline = match &expected_failures {
        Some(path) => Some(Baseline::load(path).map_err(|e| vec![e])?),
        None => None,
    };
    let joined = crate::merge::join(shards).map_err(|e| vec![e])?;
    let mut results = joined.runs;
    // The shards' own baseline verdicts are dropped: the merged runs are judged once, by the
    // baseline given here (or by none).
    for r in &mut results {
        r.baseline = None;
    }
    eprintln!("merged {} runs from {} folder(s)", results.len(), shards.len());
    let how = How { fail_fast: false, keep_going: false, format: Format::Text, quiet, partition: None };
    conclude(&mut results, joined.wall_ms, expected_failures.as_deref().zip(baseline.as_ref()), &how, &reports, 0)
}

/// What a run and a merge share once the runs are over: the baseline's verdicts, the summary
/// on stdout, the reports written, and the exit code (see [`exit_code`]).
fn conclude(
    results: &mut [mcp_results::RunResult],
    wall_ms: u64,
    baseline: Option<(&Path, &Baseline)>,
    how: &How,
    reports: &Path,
    invalid: usize,
) -> Result<i32, Vec<HarnessError>> {
    if let Some((_, b)) = baseline {
        let verdicts = b.judge(results);
        for (r, v) in results.iter_mut().zip(verdicts) {
            r.baseline = Some(v);
        }
    }
    let mut summary = report::summary(results, wall_ms);
    if how.quiet {
        summary = report::without_passes(&summary);
    }
    if invalid > 0 {
        summary.push_str(&format!("{invalid} invalid scenario file(s) skipped (--keep-going): see above\n"));
    }
    // With `--format json` stdout is the document alone; the summary goes to stderr.
    match how.format {
        Format::Json => {
            emit(&(report::json(results, wall_ms, how.partition) + "\n"));
            eprint!("{summary}");
        }
        Format::Text if terminal::colour() => emit(&terminal::paint(&summary)),
        Format::Text => emit(&summary),
    }
    report::write(reports, results, wall_ms, how.partition).map_err(|e| vec![e])?;
    if let Some((path, _)) = baseline {
        let mut regressions = 0;
        for r in results.iter() {
            let (baseline, run) = (path.display(), format!("{} [{}]", r.scenario, r.transport.as_str()));
            let change = match r.baseline {
                Some(Verdict::UnexpectedFailure) if r.status == mcp_results::Status::FlakyUnderLoad => {
                    format!("FLAKY UNDER LOAD {run}: {}", r.reason.as_deref().unwrap_or("no reason recorded"))
                }
                Some(Verdict::UnexpectedFailure) => format!("NEW FAILURE  {run}: not in {baseline}"),
                Some(Verdict::UnexpectedNotExercised) => format!(
                    "NOT EXERCISED {run}: not in {baseline}'s not_exercised: list ({})",
                    r.reason.as_deref().unwrap_or("no reason recorded")
                ),
                Some(Verdict::StaleEntry) => format!("NOW PASSES   {run}: remove it from {baseline}"),
                _ => continue,
            };
            regressions += 1;
            println!("{change}");
        }
        println!("baseline {}: {}", path.display(), if regressions == 0 { "unchanged" } else { "CHANGED" });
    }
    Ok(exit_code(results, baseline.is_some(), invalid))
}

/// The exit code of a `run` or `merge` whose runs are over (`mcp-harness --help`, "Exit
/// codes"): `2` when invalid scenario files were skipped (`--keep-going`); under a baseline
/// `1` when any run's verdict fails (a new failure, a run newly not exercised, a stale
/// entry), else `0`; without one `1` when any run failed, errored, was not exercised or was
/// flaky under load, else `0`.
pub fn exit_code(results: &[mcp_results::RunResult], baselined: bool, invalid: usize) -> i32 {
    if invalid > 0 {
        return 2;
    }
    if baselined {
        return i32::from(results.iter().any(|r| r.baseline.is_some_and(Verdict::fails)));
    }
    let t = report::Totals::of(results);
    i32::from(t.failed + t.error + t.not_exercised + t.flaky_under_load > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_results::{RunResult, Status};

    fn run(status: Status, baseline: Option<Verdict>) -> RunResult {
        let mut r: RunResult = serde_json::from_value(serde_json::json!({
            "scenario": "s", "path": "s.yaml", "transport": "stdio", "status": status.as_str(),
        }))
        .expect("a run");
        r.baseline = baseline;
        r
    }

    #[test]
    fn a_run_that_is_no_pass_fails_the_exit_code_and_one_that_judges_nothing_does_not() {
        for status in [Status::Failed, Status::Error, Status::NotExercised, Status::FlakyUnderLoad] {
            assert_eq!(exit_code(&[run(Status::Passed, None), run(status, None)], false, 0), 1, "{status:?}");
        }
        for status in
            [Status::Passed, Status::Warned, Status::Skipped, Status::Pending, Status::NotRun, Status::NotApplicable]
        {
            assert_eq!(exit_code(&[run(status, None)], false, 0), 0, "{status:?}");
        }
    }

    #[test]
    fn under_a_baseline_only_a_change_fails() {
        let expected = run(Status::Failed, Some(Verdict::ExpectedFailure));
        assert_eq!(exit_code(std::slice::from_ref(&expected), true, 0), 0);
        for change in [Verdict::UnexpectedFailure, Verdict::StaleEntry, Verdict::UnexpectedNotExercised] {
            assert_eq!(exit_code(&[expected.clone(), run(Status::Passed, Some(change))], true, 0), 1, "{change:?}");
        }
    }

    #[test]
    fn skipped_invalid_files_win() {
        assert_eq!(exit_code(&[run(Status::Failed, None)], false, 3), 2);
        assert_eq!(exit_code(&[], true, 1), 2);
    }
}
