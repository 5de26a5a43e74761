//! The third-party compatibility matrix: reads each client's `results.json` (written by
//! `make validate` under `reports/clients/<client>/`) and writes `reports/clients/<client>.md`
//! and the scenario × client grid `reports/clients/README.md`.
//!
//! A failing cell's reason is the first failed check's message, which the checks draw from
//! the recorded wire transcript, so every reason can be traced to the run's `.snap`.

use crate::error::HarnessError;
use crate::report::Totals;
use mcp_results::{RunResult, SnapshotStatus, Status, Verdict};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One cell of the matrix.
#[derive(Debug, Clone)]
struct Cell {
    status: Status,
    /// Passed with unmet SHOULDs (`Some(true)`) or only SPEC.md notes (`Some(false)`).
    flagged: Option<bool>,
    reason: String,
    /// What the reason's check rests on: `must: <sentence>`, `unclassified`, ….
    rests_on: String,
    baseline: Option<Verdict>,
    /// [`RunResult::is_baseline_race_draw`].
    race_draw: bool,
}

const REASON_CHARS: usize = 140;

/// A reason with the times the run measured (a step that `took 1508ms`, requests sent `at +0
/// ms, +1058 ms`) cut to the 100 ms below and marked `≈` (under 100 ms, `<100`): the
/// committed pages change when a verdict or a reason does, not with a few ms of timer jitter
/// at every `make validate` (`results.json` and the run's own report keep the exact figures).
/// Cut rather than rounded because timers fire late, not early: a step bounded by a 1 s
/// timer takes 1001-1010 ms, a retry after a second comes at 1020-1060 ms, and rounding put
/// the latter on both sides of 1050. The bounds a scenario sets (`bound is 1000ms`) are not
/// measured and stay as written.
fn without_jitter(reason: &str) -> String {
    static MEASURED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"took (\d+)ms|\(at (?:\+\d+ ms(?:, )?)+\)").expect("a valid pattern")
    });
    static OFFSET: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\+(\d+) ms").expect("a valid pattern"));
    let coarse = |ms: &str| match ms.parse::<u64>() {
        Ok(0) => "0".to_string(),
        Ok(ms) if ms < 100 => "<100".to_string(),
        Ok(ms) => format!("≈{}", ms / 100 * 100),
        Err(_) => ms.to_string(),
    };
    MEASURED
        .replace_all(reason, |c: &regex::Captures| match c.get(1) {
            Some(ms) => format!("took {}ms", coarse(ms.as_str())),
            None => OFFSET.replace_all(&c[0], |o: &regex::Captures| format!("+{} ms", coarse(&o[1]))).into_owned(),
        })
        .into_owned()
}

fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|");
    if flat.chars().count() > REASON_CHARS {
        format!("{}…", flat.chars().take(REASON_CHARS).collect::<String>())
    } else {
        flat
    }
}

fn cell(run: &RunResult) -> Cell {
    let first = match run.status {
        _ if !run.status.is_verdict() => None,
        Status::Failed => run.failures.first(),
        Status::Warned => run.warnings.first(),
        _ => run.warnings.first().or(run.notes.first()),
    };
    let reason = match (run.status, first) {
        (_, Some(f)) => format!("{}: {}", f.check, f.message),
        (status, None) if !status.is_verdict() => run.reason.clone().unwrap_or_default(),
        (Status::Failed, None) => match run.snapshot {
            SnapshotStatus::Mismatch { .. } => "wire transcript differs from the committed snapshot".into(),
            SnapshotStatus::Missing { .. } => "no committed snapshot".into(),
            _ => run.reason.clone().unwrap_or_default(),
        },
        (_, None) => String::new(),
    };
    let basis = first.map(|f| match &f.reference {
        Some(r) => format!("{}: {r}", f.level),
        None => format!("{} (no spec sentence yet)", f.level),
    });
    // A pass shows the check it rests on first, then what its warning or note rests on.
    let rests_on = match (run.status, evidence(run), basis) {
        (Status::Passed, Some(e), Some(b)) => {
            format!("{e}; the {}: {b}", if run.warnings.is_empty() { "note" } else { "warning" })
        }
        (Status::Passed, Some(e), None) => e,
        (_, _, b) => b.unwrap_or_default(),
    };
    let flagged = match run.status {
        Status::Passed => first.is_some().then_some(!run.warnings.is_empty()),
        Status::Warned | Status::NotApplicable | Status::NotExercised => (!run.warnings.is_empty()).then_some(true),
        _ => None,
    };
    Cell {
        status: run.status,
        flagged,
        reason: one_line(&without_jitter(&reason)),
        rests_on: one_line(&rests_on),
        baseline: run.baseline,
        race_draw: run.is_baseline_race_draw(),
    }
}

/// What a pass rests on: the first check with an MCP basis (or the driver contract, or a
/// promise of this client's own) the run judged, as `must: check 2 (outcome): <sentence>`.
fn evidence(run: &RunResult) -> Option<String> {
    use mcp_results::Judgement;
    use mcp_scenario::basis::Level;
    run.judged
        .iter()
        .find(|j| {
            // A promise is judged (held or unmet) only for a client it binds.
            matches!(j.level, Level::Must | Level::Should | Level::Driver | Level::Promise)
                && matches!(j.judgement, Judgement::Held | Judgement::Unmet)
        })
        .map(|j| format!("{}: {} — {}", j.level, j.check, j.reference.as_deref().unwrap_or("")))
}

/// A grid cell: the run's [`symbol`], unless the client's own race (named in its baseline)
/// decides it: this run's status is one draw of that race and the next `make validate` may
/// show the other, so the grid claims neither (the client's page keeps the draw).
fn grid_symbol(cell: &Cell) -> &'static str {
    if cell.race_draw {
        return "flaky (baseline)";
    }
    symbol(cell)
}

fn symbol(cell: &Cell) -> &'static str {
    match cell.status {
        Status::Passed => match cell.flagged {
            Some(true) => "pass (warn)",
            Some(false) => "pass (note)",
            None => "pass",
        },
        Status::Warned => "warn",
        Status::Failed => "**FAIL**",
        Status::Skipped => "skip",
        Status::Error => "error",
        Status::Pending => "pending",
        Status::NotRun => "not run",
        // Harm found on the way stays visible where no verdict is given.
        Status::NotExercised if cell.flagged == Some(true) => "not exercised (warn)",
        Status::NotExercised => "not exercised",
        Status::NotApplicable if cell.flagged == Some(true) => "n/a (warn)",
        Status::NotApplicable => "n/a",
        Status::FlakyUnderLoad => "flaky under load",
    }
}

/// Reads every `<dir>/<client>/results.json` and writes the Markdown files into `dir`.
/// Returns the clients found.
pub fn write(dir: &Path) -> Result<Vec<String>, HarnessError> {
    let mut clients: BTreeMap<String, Vec<RunResult>> = BTreeMap::new();
    let entries = std::fs::read_dir(dir).map_err(|e| HarnessError::io(format!("reading {}", dir.display()), e))?;
    for entry in entries.flatten() {
        if !entry.path().join("results.json").is_file() {
            continue;
        }
        let written = crate::report::read(&entry.path())?;
        clients.insert(entry.file_name().to_string_lossy().into_owned(), written.runs);
    }
    if clients.is_empty() {
        return Err(HarnessError::io(
            format!("no <client>/results.json under {}", dir.display()),
            std::io::Error::other("run `make validate` first"),
        ));
    }
    crate::findings::write(dir, &clients, Path::new("."))?;
    // (scenario, transport) → client → cell
    let mut rows: BTreeMap<(String, &str), BTreeMap<String, Cell>> = BTreeMap::new();
    for (client, runs) in &clients {
        for run in runs {
            rows.entry((run.scenario.clone(), run.transport.as_str())).or_default().insert(client.clone(), cell(run));
        }
        std::fs::write(dir.join(format!("{client}.md")), client_page(client, runs))
            .map_err(|e| HarnessError::io(format!("writing {client}.md"), e))?;
    }
    let mut grid = String::from("# Compatibility matrix: third-party MCP clients × scenarios\n\n");
    grid.push_str(
        "Generated by `make validate` (`mcp-harness matrix`); do not edit by hand. Each client's page \
         gives the one-line reason for every failing or skipped cell, drawn from the run's wire \
         transcript (its snapshot sits beside the scenario as `<scenario>@<client>.snap`).\n\n",
    );
    grid.push_str(
        "A failing cell broke an MCP MUST (or a check not yet classified); a pass met the scenario's \
         fault, ran its plan to the end, and names on the client's page the check with an MCP basis \
         it rests on (or `promise:`, the client's own documented promise, which is no MCP rule); `pass (warn)` met every MUST but not a SHOULD, or has a robustness finding \
         (a crash, a hang, a retry loop); `warn` met the fault and broke a SHOULD handling it, with \
         no check on an MCP sentence held (no pass); `pass (note)` differs only from a rule of our own SPEC.md \
         for the bundled transports. `not exercised`: the client never met the scenario's fault, or \
         never finished its plan after it (no evidence either way); `n/a`: no check with an MCP \
         basis applies to a third-party client there (every check is SPEC.md's); `(warn)` beside either \
         keeps a robustness finding or an unmet SHOULD seen on the way; `flaky (baseline)`: the client's \
         own race, named in its expected-failures baseline, moves this cell between runs (its page \
         gives the status this run drew, and no finding is written from it). Each client's page \
         says what every reason rests on; the times a run measured appear there cut to the 100 ms \
         below (`≈`), exact in each client's `results.json`.\n\n",
    );
    let _ = writeln!(
        grid,
        "| client | passed | warn | failed | flaky (baseline) | not exercised | n/a | skipped | error | with warnings | with notes |\n|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for (client, runs) in &clients {
        let (t, flaky) = totals(runs);
        let _ = writeln!(
            grid,
            "| [{client}]({client}.md) | {} | {} | {} | {flaky} | {} | {} | {} | {} | {} | {} |",
            t.passed, t.warn_only, t.failed, t.not_exercised, t.not_applicable, t.skipped, t.error, t.warned, t.noted
        );
    }
    let names: Vec<&String> = clients.keys().collect();
    let _ = write!(grid, "\n| scenario | transport |");
    for c in &names {
        let _ = write!(grid, " {c} |");
    }
    let _ = write!(grid, "\n|---|---|");
    for _ in &names {
        grid.push_str("---|");
    }
    grid.push('\n');
    for ((scenario, transport), cells) in &rows {
        let _ = write!(grid, "| {scenario} | {transport} |");
        for c in &names {
            let shown = cells.get(*c).map(grid_symbol).unwrap_or("—");
            let _ = write!(grid, " {shown} |");
        }
        grid.push('\n');
    }
    std::fs::write(dir.join("README.md"), grid).map_err(|e| HarnessError::io("writing README.md", e))?;
    Ok(clients.into_keys().collect())
}

/// A client's runs by status, those whose verdict is one draw of a race its baseline names
/// (`flaky:`) counted apart, as the grid shows them: a passed, warn or failed total then moves
/// only when a verdict does.
fn totals(runs: &[RunResult]) -> (Totals, usize) {
    let drawn = runs.iter().filter(|r| r.is_baseline_race_draw()).count();
    (Totals::of(runs.iter().filter(|r| !r.is_baseline_race_draw())), drawn)
}

fn client_page(client: &str, runs: &[RunResult]) -> String {
    let mut page = format!(
        "# {client}: scenario results\n\nGenerated by `make validate`; see [README.md](README.md) for the grid.\n\n"
    );
    let (t, flaky) = totals(runs);
    let _ = writeln!(
        page,
        "{} passed, {} warn, {} failed, {flaky} flaky (baseline), {} not exercised, {} not applicable, {} skipped, {} errors; {} with warnings, {} with notes.\n",
        t.passed, t.warn_only, t.failed, t.not_exercised, t.not_applicable, t.skipped, t.error, t.warned, t.noted
    );
    page.push_str("| scenario | transport | result | baseline | reason | rests on |\n|---|---|---|---|---|---|\n");
    let mut sorted: Vec<&RunResult> = runs.iter().collect();
    sorted.sort_by(|a, b| (&a.path, a.transport.as_str()).cmp(&(&b.path, b.transport.as_str())));
    for run in sorted {
        let c = cell(run);
        let _ = writeln!(
            page,
            "| {} | {} | {} | {} | {} | {} |",
            run.scenario,
            run.transport.as_str(),
            symbol(&c),
            c.baseline.map(Verdict::as_str).unwrap_or(""),
            c.reason,
            if crate::findings::must_failures(run).is_empty() {
                c.rests_on.clone()
            } else {
                format!("{} ([finding](findings/{client}/{}.md))", c.rests_on, crate::findings::cell_name(run))
            }
        );
    }
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_times_are_cut_to_100_ms_and_bounds_kept() {
        assert_eq!(
            without_jitter("check 1 (outcome): step 2 took 1508ms, bound is 1000ms"),
            "check 1 (outcome): step 2 took ≈1500ms, bound is 1000ms"
        );
        assert_eq!(
            without_jitter("step 3 took 149ms, expected at least 140ms"),
            "step 3 took ≈100ms, expected at least 140ms"
        );
        assert_eq!(
            without_jitter("step 3 took 45ms, expected at least 140ms"),
            "step 3 took <100ms, expected at least 140ms"
        );
        // A retry a second after the first request, give or take the client's latency.
        for late in [1026, 1039, 1058, 1099] {
            assert_eq!(
                without_jitter(&format!("the client sent 2 GET request(s), expected at most 1 (at +0 ms, +{late} ms)")),
                "the client sent 2 GET request(s), expected at most 1 (at +0 ms, +≈1000 ms)"
            );
        }
        for kept in ["no notification within 1000ms", "still connected after 500ms", "run deadline of 6000ms expired"] {
            assert_eq!(without_jitter(kept), kept);
        }
    }

    #[test]
    fn writes_client_pages_and_grid() {
        let dir = tempfile::tempdir().expect("tempdir");
        let client = dir.path().join("fake");
        std::fs::create_dir_all(&client).expect("mkdir");
        let runs = serde_json::json!({"runs": [
            {"scenario": "a", "path": "scenarios/stdio/a.yaml", "transport": "stdio", "status": "passed"},
            {"scenario": "b", "path": "scenarios/stdio/b.yaml", "transport": "stdio", "status": "failed",
             "failures": [{"check": "check 1 (outcome)", "message": "step 2 failed: boom | bang"}]},
            {"scenario": "c", "path": "scenarios/stdio/c.yaml", "transport": "stdio", "status": "skipped", "reason": "no string ids"},
            {"scenario": "d", "path": "scenarios/stdio/d.yaml", "transport": "stdio", "status": "passed",
             "warnings": [{"check": "check 2 (sent)", "message": "never sent ping", "level": "should", "reference": "2025-11-25 basic/utilities/ping: SHOULD"}]},
            {"scenario": "e", "path": "scenarios/http/e.yaml", "transport": "http", "status": "not_applicable",
             "reason": "nothing here judges a third-party client",
             "warnings": [{"check": "check 3 (http)", "message": "2 GETs", "level": "robustness", "reference": "a retry loop"}]},
            {"scenario": "f", "path": "scenarios/http/f.yaml", "transport": "http", "status": "failed", "baseline": "flaky",
             "failures": [{"check": "check 4 (http)", "message": "1 of 7 lacked Authorization", "level": "must", "reference": "r"}]}
        ]});
        std::fs::write(client.join("results.json"), runs.to_string()).expect("write");
        assert_eq!(write(dir.path()).expect("writes"), vec!["fake".to_string()]);
        let page = std::fs::read_to_string(dir.path().join("fake.md")).expect("page");
        assert!(
            page.contains(
                "| b | stdio | **FAIL** |  | check 1 (outcome): step 2 failed: boom \\| bang | unclassified (no spec sentence yet) |"
            ),
            "{page}"
        );
        assert!(page.contains("no string ids"));
        let grid = std::fs::read_to_string(dir.path().join("README.md")).expect("grid");
        // f's failure is counted apart: `failed` is b alone.
        assert!(grid.contains("| [fake](fake.md) | 2 | 0 | 1 | 1 | 0 | 1 | 1 | 0 | 2 | 0 |"), "{grid}");
        assert!(page.contains("2 passed, 0 warn, 1 failed, 1 flaky (baseline), 0 not exercised"), "{page}");
        // Harm seen in a run that earns no verdict (e) is not dropped from the grid.
        let rows = [
            "| a | stdio | pass |",
            "| e | http | n/a (warn) |",
            "| d | stdio | pass (warn) |",
            "| f | http | flaky (baseline) |",
        ];
        for row in rows {
            assert!(grid.contains(row), "{row} in {grid}");
        }
        // The client's own race: its page keeps this run's draw, and no finding comes of it.
        assert!(
            page.contains("| f | http | **FAIL** | flaky | check 4 (http): 1 of 7 lacked Authorization | must: r |"),
            "{page}"
        );
        assert!(!dir.path().join("findings/fake/f@http.md").exists());
        assert!(
            page.contains("| d | stdio | pass (warn) |  | check 2 (sent): never sent ping | should: 2025-11-25 basic/utilities/ping: SHOULD |"),
            "{page}"
        );
    }
}
