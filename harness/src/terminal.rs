//! What the terminal gets beyond plain text: colour for snapshot diffs (only on a terminal,
//! never with `NO_COLOR` set) and a progress bar while runs go (indicatif, only on a
//! terminal and never under CI; plain lines otherwise).

use mcp_scenario::results::{RunResult, Status};
use std::io::IsTerminal;
use std::sync::Arc;

/// Whether stdout may carry colour: a terminal, and `NO_COLOR` unset or empty
/// (<https://no-color.org> semantics).
pub fn colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// How progress is shown while runs go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressStyle {
    /// A bar on stderr (stderr is a terminal and `CI` is unset).
    Bar,
    /// One line on stderr per finished run.
    Lines,
    /// Nothing (`--quiet`).
    Off,
}

impl ProgressStyle {
    /// The style for this process: a bar on a terminal, plain lines otherwise or under CI.
    pub fn detect(quiet: bool) -> ProgressStyle {
        if quiet {
            ProgressStyle::Off
        } else if std::io::stderr().is_terminal() && std::env::var_os("CI").is_none() {
            ProgressStyle::Bar
        } else {
            ProgressStyle::Lines
        }
    }
}

/// Progress over `total` runs in `style`: the callback the runner calls as each run ends,
/// and a handle that clears the bar when the runs are over.
pub fn progress(total: usize, style: ProgressStyle) -> (crate::runner::Progress, Finish) {
    match style {
        ProgressStyle::Bar => {
            let bar = indicatif::ProgressBar::new(total as u64);
            let template = "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}";
            if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            let shown = bar.clone();
            let done: crate::runner::Progress = Arc::new(move |r: &RunResult| {
                shown.set_message(format!("{} [{}]", r.scenario, r.transport.as_str()));
                shown.inc(1);
            });
            (done, Finish(Some(bar)))
        }
        ProgressStyle::Lines => {
            let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let done: crate::runner::Progress = Arc::new(move |r: &RunResult| {
                let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                eprintln!("[{n}/{total}] {} {} [{}]", word(r.status), r.scenario, r.transport.as_str());
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
                out.push_str(line);
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
        assert!(painted.starts_with("FAIL  x\n"));
    }
}
