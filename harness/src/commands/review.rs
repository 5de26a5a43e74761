//! `mcp-harness review`: each pending snapshot's diff, then accept, reject or skip it.

use crate::{snapshot, terminal};
use std::path::PathBuf;

/// `review`: each pending snapshot's diff, then what to do with it (see the subcommand's
/// docs); returns the exit code.
pub fn review(paths: &[PathBuf], accept_all: bool, reject_all: bool) -> i32 {
    use std::io::{BufRead, IsTerminal, Write};
    let pending = snapshot::pending(paths);
    if pending.is_empty() {
        println!(
            "no pending snapshots under {}",
            paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        );
        return 0;
    }
    let asking = !accept_all && !reject_all && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let (mut left, mut accepted, mut rejected) = (0usize, 0usize, 0usize);
    let mut answers = std::io::stdin().lock().lines();
    for (i, p) in pending.iter().enumerate() {
        let text = match snapshot::review_text(p) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("mcp-harness review: cannot read {}: {e}", p.display());
                return 2;
            }
        };
        println!("── {}/{} {} ──", i + 1, pending.len(), snapshot::accepted_path(p).display());
        let shown = if terminal::colour() { terminal::paint(&indent(&text)) } else { indent(&text) };
        print!("{shown}");
        let choice = if accept_all {
            'a'
        } else if reject_all {
            'r'
        } else if asking {
            print!("accept (a), reject (r), skip (s), quit (q)? ");
            let _ = std::io::stdout().flush();
            answers.next().and_then(Result::ok).and_then(|l| l.trim().chars().next()).unwrap_or('q')
        } else {
            's'
        };
        let done = match choice {
            'a' => snapshot::accept(p).map(|()| accepted += 1),
            'r' => snapshot::reject(p).map(|()| rejected += 1),
            'q' => {
                left += pending.len() - i;
                break;
            }
            _ => {
                left += 1;
                Ok(())
            }
        };
        if let Err(e) = done {
            eprintln!("mcp-harness review: {}: {e}", p.display());
            return 2;
        }
    }
    println!("{accepted} accepted, {rejected} rejected, {left} still pending");
    if left > 0 && !asking {
        println!("(accept or reject them: `mcp-harness review` on a terminal, or --accept / --reject)");
    }
    i32::from(left > 0)
}

/// Diff lines as the run summary shows them (eight spaces in), so they colour alike.
fn indent(text: &str) -> String {
    text.lines().map(|l| format!("        {l}\n")).collect()
}
