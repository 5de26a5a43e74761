//! An external client's process group: who is still in it once the client has exited, and
//! killing it. The client starts as the leader of its own group, so everything it spawned
//! without leaving the group (an SDK helper, the stdio mock, a forgotten `sleep 60 &`) is
//! found by its process group id.
//!
//! Members are read from `/proc/<pid>/stat` by hand: two fields of one line, where the
//! `procfs` crate would add a large dependency for them.

use mcp_results::Leftover;
use std::collections::HashMap;
use std::time::Duration;

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
    let mut found: Vec<Leftover> = pids(pgid).map(|pid| Leftover { pid, command: command_of(pid) }).collect();
    found.sort_by_key(|l| l.pid);
    found
}

/// The pids of the living processes of group `pgid`.
fn pids(pgid: u32) -> impl Iterator<Item = u32> {
    let entries = std::fs::read_dir("/proc").into_iter().flatten();
    entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok()).filter(move |&pid| {
        state_and_group(pid).is_some_and(|(state, group)| group == pgid && state != 'Z' && state != 'X')
    })
}

/// How long each thread of group `pgid` has waited for a CPU so far (runnable, not running),
/// by thread id, in ns: the second field of `/proc/<pid>/task/<tid>/schedstat`. Empty where
/// the kernel keeps no such figures. The harness's own scheduling lag does not show a client
/// starved of CPU (a thread that wakes now and then is served promptly; a busy one waits its
/// turn), and this does.
pub(crate) fn cpu_waits(pgid: u32) -> HashMap<u32, u64> {
    let mut waits = HashMap::new();
    for pid in pids(pgid) {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { continue };
        for task in tasks.flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|t| t.parse::<u32>().ok()) else { continue };
            let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            if let Some(wait) = stat.split_whitespace().nth(1).and_then(|w| w.parse().ok()) {
                waits.insert(tid, wait);
            }
        }
    }
    waits
}

/// The longest any thread of group `pgid` has waited for a CPU since `before` was read
/// ([`cpu_waits`]; a thread started since counts from zero).
pub(crate) fn longest_cpu_wait_since(pgid: u32, before: &HashMap<u32, u64>) -> Duration {
    let longest = cpu_waits(pgid)
        .into_iter()
        .map(|(tid, wait)| wait.saturating_sub(before.get(&tid).copied().unwrap_or(0)))
        .max()
        .unwrap_or(0);
    Duration::from_nanos(longest)
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
    fn a_group_whose_threads_share_one_cpu_is_seen_waiting_for_it() {
        use std::os::unix::process::CommandExt;
        // Three busy loops on one CPU: each runs a third of the time and waits the rest.
        if std::process::Command::new("taskset").arg("-V").output().is_err() {
            return eprintln!("taskset is missing: the CPU wait is not measured here");
        }
        let spin = |group: i32| {
            std::process::Command::new("taskset")
                .args(["-c", "0", "sh", "-c", "while :; do :; done"])
                .process_group(group)
                .spawn()
                .expect("spawn a busy loop")
        };
        let mut leader = spin(0);
        let pgid = leader.id();
        let mut others = [spin(pgid as i32), spin(pgid as i32)];
        let before = cpu_waits(pgid);
        // Measured over a span: there is no event to wait on, the waiting is what is measured.
        std::thread::sleep(Duration::from_millis(300));
        let waited = longest_cpu_wait_since(pgid, &before);
        kill(pgid);
        for child in std::iter::once(&mut leader).chain(&mut others) {
            let _ = child.wait();
        }
        assert!(waited >= Duration::from_millis(50), "the busiest loop waited only {waited:?} in 300 ms");
        assert_eq!(longest_cpu_wait_since(pgid, &HashMap::new()), Duration::ZERO, "the group is gone");
    }

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
