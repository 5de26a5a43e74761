//! An external client's process group: who is still in it once the client has exited, and
//! killing it. The client starts as the leader of its own group, so everything it spawned
//! without leaving the group (an SDK helper, the stdio mock, a forgotten `sleep 60 &`) is
//! found by its process group id.
//!
//! Members are read from `/proc/<pid>/stat` by hand: two fields of one line, where the
//! `procfs` crate would add a large dependency for them.

use mcp_results::Leftover;

/// Characters of a leftover's command line kept.
const COMMAND_CHARS: usize = 200;

/// Sets `cmd` up to start an external client (or its declaration probe) as the leader of a
/// process group of its own, so that the group id finds and kills all it spawns, and killed
/// when dropped: no stdin, stdout piped (the contract's lines), stderr as `stderr`.
pub(crate) fn lead_own_group(
    cmd: &mut tokio::process::Command,
    stderr: std::process::Stdio,
) -> &mut tokio::process::Command {
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(stderr)
        .process_group(0)
        .kill_on_drop(true)
}

/// Kills every process in the group `pgid`. A group that is already gone is not an error.
pub(crate) fn kill(pgid: u32) {
    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;
    // pgid 0 or 1 would mean "our own group" or init: never signal those.
    if let Ok(raw @ 2..) = i32::try_from(pgid) {
        let _ = killpg(Pid::from_raw(raw), Signal::SIGKILL);
    }
}

/// The living processes of group `pgid` (zombies are already dead and are left out).
pub(crate) fn members(pgid: u32) -> Vec<Leftover> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut found: Vec<Leftover> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| state_and_group(pid).is_some_and(|(state, group)| group == pgid && state != 'Z' && state != 'X'))
        .map(|pid| Leftover { pid, command: command_of(pid) })
        .collect();
    found.sort_by_key(|l| l.pid);
    found
}

/// The state and process group of `pid`, if it exists.
pub(crate) fn state_and_group(pid: u32) -> Option<(char, u32)> {
    group_of(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The state and process group from a `/proc/<pid>/stat` line: `pid (comm) state ppid pgrp …`.
/// `comm` may hold spaces and parentheses, so fields are counted after its last `)`.
fn group_of(stat: &str) -> Option<(char, u32)> {
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    Some((state, fields.next()?.parse().ok()?))
}

/// `pid`'s command line (its name when it has none), shortened.
pub(crate) fn command_of(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let line =
        raw.split(|&b| b == 0).filter(|a| !a.is_empty()).map(String::from_utf8_lossy).collect::<Vec<_>>().join(" ");
    let line = if line.is_empty() {
        std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim().to_string()
    } else {
        line
    };
    if line.chars().count() > COMMAND_CHARS {
        format!("{}…", line.chars().take(COMMAND_CHARS).collect::<String>())
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_state_and_group_past_a_command_name_with_parentheses() {
        assert_eq!(group_of("42 (a) b) (c) S 1 4242 4242 0 -1"), Some(('S', 4242)));
        assert_eq!(group_of("7 (sleep) Z 1 7 7"), Some(('Z', 7)));
        assert_eq!(group_of("garbage"), None);
    }

    #[test]
    fn finds_a_process_left_in_a_group_and_kill_ends_it() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sleep").arg("30").process_group(0).spawn().expect("spawn sleep");
        let pgid = child.id();
        let found = members(pgid);
        assert_eq!(found.len(), 1, "{found:?}");
        // Right after the fork the child may not have exec'd yet: its name is `sleep` or its
        // command line `sleep 30`.
        assert!(found[0].command.starts_with("sleep"), "{found:?}");
        kill(pgid);
        let _ = child.wait();
        assert!(members(pgid).is_empty());
    }
}
