//! The process that started a stdio mock: the client, whose pipes the mock reads.
//!
//! A client that exits closes the mock's stdin as surely as one that closes it on purpose,
//! so an EOF alone says nothing of the client's shutdown. What tells them apart is whether
//! the parent still lived when the EOF arrived: the kernel marks a task as exiting before it
//! releases its files, and reparents the children after, so an EOF made by an exit always
//! finds the parent exiting, a zombie, or gone. A client that closes stdin and then waits
//! for the server to exit (the stdio shutdown SHOULD) is always found alive: the mock looks
//! before it exits. Linux `/proc` only; elsewhere the parent counts as alive.

use nix::unistd::{Pid, getppid};

/// Whether this process's stderr is the very file its parent has as stderr: a client that
/// spawns the server with stderr inherited never reads what the server writes there (it
/// goes wherever the client's own stderr goes), so a stderr fault never reaches its code.
/// Linux `/proc` only; elsewhere, or when either end cannot be read, `false`.
pub fn stderr_shared() -> bool {
    use std::os::unix::fs::MetadataExt;
    let ours = std::fs::metadata("/proc/self/fd/2");
    let theirs = std::fs::metadata(format!("/proc/{}/fd/2", getppid()));
    match (ours, theirs) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// `PF_EXITING` in `/proc/<pid>/stat`'s flags field (include/linux/sched.h).
const PF_EXITING: u64 = 0x4;

/// The parent as it was when the mock started.
#[derive(Debug, Clone, Copy)]
pub struct Parent {
    pid: Pid,
}

impl Parent {
    /// The current parent: call at start, before the client can have gone.
    pub fn now() -> Self {
        Parent { pid: getppid() }
    }

    /// Whether the parent is exiting, a zombie, or gone (the mock was reparented).
    pub fn exiting(&self) -> bool {
        if getppid() != self.pid {
            return true;
        }
        match std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) {
            Ok(stat) => stat_says_exiting(&stat),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
            Err(_) => false,
        }
    }
}

/// Reads the state and flags fields of a `/proc/<pid>/stat` line: `Z`/`X`, or `PF_EXITING`.
/// The command name in parentheses may hold spaces, so the fields are counted after its `)`.
fn stat_says_exiting(stat: &str) -> bool {
    let Some((_, rest)) = stat.rsplit_once(')') else { return false };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state, ppid, pgrp, session, tty_nr, tpgid, flags.
    let zombie = matches!(fields.first(), Some(&("Z" | "X" | "x")));
    let flags = fields.get(6).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    zombie || flags & PF_EXITING != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_living_process_is_not_exiting_and_an_exiting_or_dead_one_is() {
        let live = "4242 (node (driver)) S 1 4242 4242 0 -1 4194560 1 0 0 0";
        assert!(!stat_says_exiting(live));
        let exiting = "4242 (node) S 1 4242 4242 0 -1 4194564 1 0 0 0";
        assert!(stat_says_exiting(exiting));
        let zombie = "4242 (python3) Z 1 4242 4242 0 -1 4194560 1 0 0 0";
        assert!(stat_says_exiting(zombie));
    }

    #[test]
    fn this_test_process_is_alive_to_its_children() {
        // Our own parent (the test runner) is alive while we run.
        assert!(!Parent::now().exiting());
    }
}
