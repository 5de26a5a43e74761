//! Processes an external client started that left its process group (`setsid`, `setpgid`,
//! a daemonising SDK helper) and outlived it. Killing the group cannot reach them, so they
//! are found by two traces the client cannot help leaving: the client's stdout and stderr
//! pipes, which they inherited and may still hold (and so keep the harness's reads from
//! ending), and this run's `MCP_HARNESS_RUN_DIR` in their environment, which every
//! descendant inherits unless it clears its environment. Both traces belong to this run
//! alone (the run directory is unique; the pipes were made for this client), so whoever
//! carries one is this client's and may be killed.
//!
//! One look at `/proc` is not enough: an escapee may fork between the look and the kill,
//! and a process caught inside `execve` shows neither its environment nor its command line
//! for a moment. So [`Traces::sweep`] looks, kills, and looks again until a look finds
//! nobody new and nobody mid-exec (bounded by [`SWEEP_ROUNDS`]).
//!
//! Read from `/proc` by hand (`/proc/<pid>/{stat,environ,cmdline,exe,fd}`), like
//! [`crate::process_group`]: the `procfs` crate would add a large dependency for a few reads.

use mcp_results::{Escaped, Leftover, Pipe};
use std::os::fd::RawFd;
use std::time::Duration;

/// How many looks a sweep takes at most; each after the first follows a kill or a process
/// caught mid-exec.
pub(super) const SWEEP_ROUNDS: usize = 50;
/// The pause between two looks: long enough for an `execve` to finish.
const SWEEP_PAUSE: Duration = Duration::from_millis(2);

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

    /// Finds and kills (SIGKILL) every living process outside the group `pgid` (whose
    /// members the group kill reaches) that carries a trace of this run, never the harness
    /// itself; looks again after each kill and while a process is caught mid-exec, so a
    /// child forked just before its parent died, or still inside `execve`, is found too.
    /// `look_at_pipes` also reads every process's open files: only worth it when a pipe is
    /// known to be still held. Returns whom it killed, by pid.
    pub(super) async fn sweep(&self, pgid: u32, look_at_pipes: bool) -> Vec<Escaped> {
        let mut killed: Vec<Escaped> = Vec::new();
        for _ in 0..SWEEP_ROUNDS {
            let look = self.find(pgid, look_at_pipes);
            kill(&look.found);
            let before = killed.len();
            for e in look.found {
                if !killed.iter().any(|k| k.process.pid == e.process.pid) {
                    killed.push(e);
                }
            }
            if killed.len() == before && !look.mid_exec {
                break;
            }
            tokio::time::sleep(SWEEP_PAUSE).await;
        }
        killed.sort_by_key(|e| e.process.pid);
        killed
    }

    /// One look at `/proc`: the processes outside `pgid` that carry a trace of this run.
    fn find(&self, pgid: u32, look_at_pipes: bool) -> Look {
        let me = std::process::id();
        let mut look = Look::default();
        let Ok(entries) = std::fs::read_dir("/proc") else { return look };
        let outside = entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| pid != me)
            .filter(|&pid| {
                crate::process_group::state_and_group(pid)
                    .is_some_and(|(state, group)| group != pgid && state != 'Z' && state != 'X')
            });
        for pid in outside {
            let holding = if look_at_pipes { self.held_by(pid) } else { Vec::new() };
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            if holding.is_empty() && !self.marks(&environ) {
                look.mid_exec |= environ.is_empty() && in_exec(pid);
                continue;
            }
            look.found
                .push(Escaped { process: Leftover { pid, command: crate::process_group::command_of(pid) }, holding });
        }
        look.found.sort_by_key(|e| e.process.pid);
        look
    }

    /// Whether an environment block (`/proc/<pid>/environ`) holds this run's marker.
    fn marks(&self, environ: &[u8]) -> bool {
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

/// What one look at `/proc` saw.
#[derive(Debug, Default)]
struct Look {
    /// The processes carrying a trace of this run.
    found: Vec<Escaped>,
    /// Whether some process was inside `execve`, its traces not readable yet.
    mid_exec: bool,
}

/// Whether `pid` (whose environment reads empty) is inside `execve`: between the switch to
/// its new memory and the kernel writing its arguments and environment there, both read
/// empty while its executable is already known. A kernel thread has no executable; a process
/// we may not inspect still shows its command line.
fn in_exec(pid: u32) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    cmdline.is_empty() && std::fs::read_link(format!("/proc/{pid}/exe")).is_ok()
}

/// Kills each escaped process (SIGKILL). One already gone is not an error.
fn kill(escaped: &[Escaped]) {
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

    /// `sh` in a group of its own with `env`, said `ready` once it runs (so it is past its
    /// `execve`), now waiting on its stdin.
    fn waiting_sh(env: &[(&str, &std::path::Path)]) -> std::process::Child {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "echo ready; read _"])
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        let mut ready = String::new();
        let stdout = child.stdout.as_mut().expect("piped");
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut ready).expect("read ready");
        assert_eq!(ready, "ready\n");
        child
    }

    #[tokio::test]
    async fn finds_a_process_outside_the_group_by_its_environment_or_a_held_pipe_and_kills_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        // By environment: its own group (as after setsid), the run directory in its env.
        let mut by_env = waiting_sh(&[("MCP_HARNESS_RUN_DIR", dir.path())]);
        // By pipe: no marker, but it holds the write end of a pipe we read.
        let mut by_pipe = std::process::Command::new("sleep")
            .arg("31")
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("spawn sleep");
        let read_end = by_pipe.stdout.as_ref().expect("piped").as_raw_fd();
        let traces = Traces::new(dir.path(), &[(read_end, Pipe::Stdout)]);
        let found = traces.find(0, true).found;
        let pids: Vec<u32> = found.iter().map(|e| e.process.pid).collect();
        assert!(pids.contains(&by_env.id()), "{found:?}");
        let piped = found.iter().find(|e| e.process.pid == by_pipe.id()).expect("found by its pipe");
        assert_eq!(piped.holding, [Pipe::Stdout]);
        // Without looking at pipes, only the environment finds it.
        assert!(!traces.find(0, false).found.iter().any(|e| e.process.pid == by_pipe.id()));
        // Members of the client's own group are the group kill's, not escapees.
        assert!(!traces.find(by_env.id(), false).found.iter().any(|e| e.process.pid == by_env.id()));
        // The sweep kills both, each named once however many looks it took.
        let killed = traces.sweep(0, true).await;
        assert_eq!(killed.iter().map(|e| e.process.pid).collect::<Vec<_>>(), pids, "{killed:?}");
        assert!(by_env.wait().is_ok() && by_pipe.wait().is_ok());
        assert!(traces.find(0, true).found.is_empty());
        assert!(traces.sweep(0, true).await.is_empty());
    }

    #[test]
    fn a_running_process_is_not_mid_exec() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut unmarked = waiting_sh(&[]);
        assert!(!in_exec(unmarked.id()));
        assert!(!in_exec(std::process::id()));
        // Not ours, not mid-exec: a look neither finds it nor waits for it.
        let look = Traces::new(dir.path(), &[]).find(0, false);
        assert!(!look.found.iter().any(|e| e.process.pid == unmarked.id()), "{look:?}");
        let _ = unmarked.kill();
        let _ = unmarked.wait();
    }
}
