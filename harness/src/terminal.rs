//! What the terminal gets beyond plain text: colour for run verdicts and snapshot diffs
//! (only on a terminal, never with `NO_COLOR` set) and progress while runs go: a bar with a
//! failure count and each failure printed above it as it happens (indicatif, only on a
//! terminal and never under CI), or plain lines otherwise — one per run, or, when stdout and
//! stderr are the same pipe or file (the summary lists every run there anyway), only the
//! failures and a count now and then, so a piped run prints each run once.

use mcp_results::{RunResult, Status};
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

/// Whether stdout may carry colour: a terminal, and `NO_COLOR` unset or empty
/// (<https://no-color.org> semantics).
pub fn colour() -> bool {
    colour_on(&std::io::stdout())
}

/// How progress is shown while runs go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressStyle {
    /// A bar on stderr (stderr is a terminal and `CI` is unset).
    Bar,
    /// One line on stderr per finished run.
    Lines,
    /// stderr is where stdout goes: a line per failure and a count every [`TALLY_EVERY`]
    /// runs (the summary then lists every run once).
    Tally,
    /// Nothing (`--quiet`).
    Off,
}

/// In [`ProgressStyle::Tally`], how many runs between two count lines.
const TALLY_EVERY: usize = 25;

/// Whether stdout and stderr are the same file or pipe (`2>&1`): Linux's `/proc/self/fd`.
fn merged_output() -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata("/proc/self/fd/1"), std::fs::metadata("/proc/self/fd/2")) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

impl ProgressStyle {
    /// The style for this process: a bar on a terminal, plain lines otherwise or under CI.
    pub fn detect(quiet: bool) -> ProgressStyle {
        if quiet {
            ProgressStyle::Off
        } else if std::io::stderr().is_terminal() && std::env::var_os("CI").is_none() {
            ProgressStyle::Bar
        } else if merged_output() {
            ProgressStyle::Tally
        } else {
            ProgressStyle::Lines
        }
    }
}

/// Progress over `total` runs in `style`: the callback the runner calls as each run ends,
/// and a handle that clears the bar when the runs are over.
pub fn progress(total: usize, style: ProgressStyle, expected: Expected) -> (crate::runner::Progress, Finish) {
    match style {
        ProgressStyle::Bar => {
            let bar = indicatif::ProgressBar::new(total as u64);
            let template = "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}";
            if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            let shown = bar.clone();
            let failed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let paint = colour_on(&std::io::stderr());
            let done: crate::runner::Progress = Arc::new(move |r: &RunResult| {
                let mut failures = failed.load(std::sync::atomic::Ordering::SeqCst);
                if is_failure(r, &expected) {
                    failures = failed.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                    let line = format!("{} {} [{}]", word(r.status), r.scenario, r.transport.as_str());
                    shown.println(if paint { verdict_colour(&line) } else { line });
                }
                let tally = if failures > 0 { format!("{failures} failed · ") } else { String::new() };
                shown.set_message(format!("{tally}{} [{}]", r.scenario, r.transport.as_str()));
                shown.inc(1);
            });
            (done, Finish(Some(bar)))
        }
        ProgressStyle::Tally => {
            let counts = Arc::new(Mutex::new((0usize, 0usize)));
            let done: crate::runner::Progress = Arc::new(move |r: &RunResult| {
                let mut c = counts.lock().unwrap_or_else(|p| p.into_inner());
                c.0 += 1;
                if is_failure(r, &expected) {
                    c.1 += 1;
                    eprintln!("[{}/{total}] {} {} [{}]", c.0, word(r.status), r.scenario, r.transport.as_str());
                }
                if c.0.is_multiple_of(TALLY_EVERY) || c.0 == total {
                    eprintln!("[{}/{total}] {} failed so far", c.0, c.1);
                }
            });
            (done, Finish(None))
        }
        ProgressStyle::Lines => {
            let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let done: crate::runner::Progress = Arc::new(move |r: &RunResult| {
                let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                eprintln!("[{n}/{total}] {} {} [{}]", verdict_word(r, &expected), r.scenario, r.transport.as_str());
            });
            (done, Finish(None))
        }
        ProgressStyle::Off => (Arc::new(|_: &RunResult| {}), Finish(None)),
    }
}

/// Clears the progress bar (if any) when dropped or finished.
pub struct Finish(Option<indicatif::ProgressBar>);

impl Finish {
    /// Removes the bar from the terminal.
    pub fn done(self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

/// Whether a baseline expects a run's failure (`--expected-failures`), as the run ends.
pub type Expected = Arc<dyn Fn(&RunResult) -> bool + Send + Sync>;

/// A run line's verdict word: an expected failure is labelled as one.
fn verdict_word(r: &RunResult, expected: &Expected) -> String {
    match r.status {
        Status::Failed | Status::Error if expected(r) => format!("{} (expected: baseline)", word(r.status)),
        s => word(s).to_string(),
    }
}

/// A run a person needs to see at once: failed or errored, and no baseline expects it.
fn is_failure(r: &RunResult, expected: &Expected) -> bool {
    matches!(r.status, Status::Failed | Status::Error) && !expected(r)
}

/// Whether this stream may carry colour: a terminal, and `NO_COLOR` unset or empty.
fn colour_on(stream: &impl IsTerminal) -> bool {
    stream.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A run line with its leading verdict word coloured: PASS green, FAIL and ERROR bold red,
/// WARN yellow, NOT EXERCISED magenta, SKIP, N/A and PEND dim. Other lines as they are.
fn verdict_colour(line: &str) -> String {
    const WORDS: [(&str, &str); 8] = [
        ("PASS", "32"),
        ("FAIL", "1;31"),
        ("ERROR", "1;31"),
        ("WARN", "33"),
        ("NOT EXERCISED", "35"),
        ("SKIP", "2"),
        ("N/A", "2"),
        ("PEND", "2"),
    ];
    match WORDS.iter().find(|(w, _)| line.starts_with(w)) {
        Some((w, code)) => format!("\x1b[{code}m{w}\x1b[0m{}", &line[w.len()..]),
        None => line.to_string(),
    }
}

fn word(status: Status) -> &'static str {
    match status {
        Status::Passed => "PASS",
        Status::Warned => "WARN",
        Status::Failed => "FAIL",
        Status::Skipped => "SKIP",
        Status::Error => "ERROR",
        Status::Pending => "PEND",
        Status::NotRun => "NOTRUN",
        Status::NotExercised => "NOT EXERCISED",
        Status::NotApplicable => "N/A",
        Status::FlakyUnderLoad => "FLAKY UNDER LOAD",
    }
}

/// The summary with its diff lines coloured: removed (snapshot) red, added (this run) green,
/// hunk separators dim. Diff lines are the summary's lines indented eight spaces.
pub fn paint(summary: &str) -> String {
    let mut out = String::with_capacity(summary.len());
    for line in summary.lines() {
        let body = line.strip_prefix("        ");
        let code = match body {
            Some(b) if b.starts_with("--- ") || b.starts_with("+++ ") => Some("1"),
            Some(b) if b.starts_with("- ") => Some("31"),
            Some(b) if b.starts_with("+ ") => Some("32"),
            Some("@@") => Some("2"),
            _ => None,
        };
        match code {
            Some(c) => out.push_str(&format!("\x1b[{c}m{line}\x1b[0m\n")),
            None => {
                out.push_str(&verdict_colour(line));
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_diff_lines_are_painted() {
        let summary =
            "FAIL  x\n        --- snapshot\n        - old\n        + new\n        @@\n      - not a diff line\n";
        let painted = super::paint(summary);
        assert!(painted.contains("\x1b[31m        - old\x1b[0m"), "{painted:?}");
        assert!(painted.contains("\x1b[32m        + new\x1b[0m"), "{painted:?}");
        assert!(painted.contains("\n      - not a diff line\n"), "{painted:?}");
        assert!(painted.starts_with("\x1b[1;31mFAIL\x1b[0m  x\n"), "{painted:?}");
    }

    #[test]
    fn verdict_words_are_coloured_and_expected_failures_labelled() {
        assert_eq!(super::verdict_colour("PASS  a"), "\x1b[32mPASS\x1b[0m  a");
        assert_eq!(super::verdict_colour("NOT EXERCISED  b"), "\x1b[35mNOT EXERCISED\x1b[0m  b");
        assert_eq!(super::verdict_colour("  check 1"), "  check 1");
        let failed: mcp_results::RunResult = serde_json::from_value(serde_json::json!({
            "scenario": "s", "path": "s.yaml", "transport": "stdio", "target": "t", "status": "failed"
        }))
        .expect("a run");
        let expected: super::Expected = std::sync::Arc::new(|_| true);
        let unexpected: super::Expected = std::sync::Arc::new(|_| false);
        assert_eq!(super::verdict_word(&failed, &expected), "FAIL (expected: baseline)");
        assert!(!super::is_failure(&failed, &expected) && super::is_failure(&failed, &unexpected));
    }
}
