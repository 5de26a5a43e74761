//! Processes an external client started that left its process group (`setsid`, `setpgid`,
//! a daemonising SDK helper) and outlived it. Killing the group cannot reach them, so they
//! are found by two traces the client cannot help leaving: the client's stdout and stderr
//! pipes, which they inherited and may still hold (and so keep the harness's reads from
//! ending), and this run's `MCP_HARNESS_RUN_DIR` in their environment, which every
//! descendant inherits unless it clears its environment. Both traces belong to this run
//! alone (the run directory is unique; the pipes were made for this client), so whoever
//! carries one is this client's and may be killed.
//!
//! Read from `/proc` by hand (`/proc/<pid>/{stat,environ,fd}`), like [`super::process_group`]:
//! the `procfs` crate would add a large dependency for three reads.

use mcp_scenario::results::{Escaped, Leftover, Pipe};
use std::os::fd::RawFd;

/// What marks this run's processes.
#[derive(Debug, Clone, Default)]
pub(super) struct Traces {
    /// `MCP_HARNESS_RUN_DIR=<run dir>`, as it appears in `/proc/<pid>/environ`.
    env_entry: Vec<u8>,
    /// The client's pipes, as `/proc/<pid>/fd/<n>` links name them (`pipe:[<inode>]`).
    pipes: Vec<(String, Pipe)>,
}

impl Traces {
    /// The traces of a run in `run_dir` whose client's pipes the harness reads through
    /// `pipes` (its own read ends; the writers' ends name the same pipe).
    pub(super) fn new(run_dir: &std::path::Path, pipes: &[(RawFd, Pipe)]) -> Self {
        let env_entry = format!("MCP_HARNESS_RUN_DIR={}", run_dir.display()).into_bytes();
        let pipes = pipes
            .iter()
            .filter_map(|(fd, pipe)| {
                let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
                Some((link.to_string_lossy().into_owned(), *pipe))
            })
            .filter(|(link, _)| link.starts_with("pipe:"))
            .collect();
        Traces { env_entry, pipes }
    }

    /// Living processes outside the group `pgid` (whose members the group kill reaches)
    /// that carry a trace of this run, never the harness itself. `look_at_pipes` also reads
    /// every process's open files: only worth it when a pipe is known to be still held.
    pub(super) fn find(&self, pgid: u32, look_at_pipes: bool) -> Vec<Escaped> {
        let me = std::process::id();
        let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
        let mut found: Vec<Escaped> = entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| pid != me)
            .filter(|&pid| {
                super::process_group::state_and_group(pid)
                    .is_some_and(|(state, group)| group != pgid && state != 'Z' && state != 'X')
            })
            .filter_map(|pid| {
                let holding = if look_at_pipes { self.held_by(pid) } else { Vec::new() };
                if holding.is_empty() && !self.in_environment_of(pid) {
                    return None;
                }
                Some(Escaped { process: Leftover { pid, command: super::process_group::command_of(pid) }, holding })
            })
            .collect();
        found.sort_by_key(|e| e.process.pid);
        found
    }

    fn in_environment_of(&self, pid: u32) -> bool {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        environ.split(|&b| b == 0).any(|entry| entry == self.env_entry.as_slice())
    }

    fn held_by(&self, pid: u32) -> Vec<Pipe> {
        if self.pipes.is_empty() {
            return Vec::new();
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return Vec::new() };
        let mut held: Vec<Pipe> = fds
            .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
            .filter_map(|link| {
                let link = link.to_string_lossy();
                self.pipes.iter().find(|(p, _)| *p == link).map(|(_, pipe)| *pipe)
            })
            .collect();
        held.sort_by_key(|p| *p == Pipe::Stderr);
        held.dedup();
        held
    }
}

/// Kills each escaped process (SIGKILL). One already gone is not an error.
pub(super) fn kill(escaped: &[Escaped]) {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    for e in escaped {
        // Never pid 0 or 1 (our group, init); `find` never lists the harness itself.
        if let Ok(raw @ 2..) = i32::try_from(e.process.pid) {
            let _ = kill(Pid::from_raw(raw), Signal::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;

    #[test]
    fn finds_a_process_outside_the_group_by_its_environment_or_a_held_pipe_and_kills_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        // By environment: its own group (as after setsid), the run directory in its env.
        // `spawn` can return while the child is still inside `execve`, where its
        // `/proc/<pid>/environ` reads empty: so the child says `ready` once it runs, and then
        // waits on its stdin without exec'ing anything else.
        let mut by_env = std::process::Command::new("sh")
            .args(["-c", "echo ready; read _"])
            .env("MCP_HARNESS_RUN_DIR", dir.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        let mut ready = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(by_env.stdout.as_mut().expect("piped")), &mut ready)
            .expect("read ready");
        assert_eq!(ready, "ready\n");
        // By pipe: no marker, but it holds the write end of a pipe we read.
        let mut by_pipe = std::process::Command::new("sleep")
            .arg("31")
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("spawn sleep");
        let read_end = by_pipe.stdout.as_ref().expect("piped").as_raw_fd();
        let traces = Traces::new(dir.path(), &[(read_end, Pipe::Stdout)]);
        let found = traces.find(0, true);
        let pids: Vec<u32> = found.iter().map(|e| e.process.pid).collect();
        assert!(pids.contains(&by_env.id()), "{found:?}");
        let piped = found.iter().find(|e| e.process.pid == by_pipe.id()).expect("found by its pipe");
        assert_eq!(piped.holding, [Pipe::Stdout]);
        // Without looking at pipes, only the environment finds it.
        assert!(!traces.find(0, false).iter().any(|e| e.process.pid == by_pipe.id()));
        // Members of the client's own group are the group kill's, not escapees.
        assert!(!traces.find(by_env.id(), false).iter().any(|e| e.process.pid == by_env.id()));
        kill(&found);
        assert!(by_env.wait().is_ok() && by_pipe.wait().is_ok());
        assert!(traces.find(0, true).is_empty());
    }
}
