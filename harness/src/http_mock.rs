//! The HTTP mock as a child process of the harness (Streamable HTTP and legacy SSE runs):
//! started in its own process group, its `listening` line read within a bound, stopped
//! after the run with SIGTERM (it records what is still open and flushes) and then its
//! whole group killed, so nothing outlives the run even if the mock misbehaves.

use crate::process_group;
use mcp_scenario::TransportName;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStdout, Command};

/// How long the mock may take to bind and print its `listening` line.
const STARTUP_BOUND: Duration = Duration::from_secs(10);
/// How long a stopped mock may take to flush its record and exit before it is killed.
const STOP_BOUND: Duration = Duration::from_secs(2);

/// Why the HTTP mock did not start (the run errors with this reason).
#[derive(Debug, thiserror::Error)]
pub enum MockStartError {
    /// The run config names no mock command.
    #[error("no mock command configured")]
    NoCommand,
    /// The mock program could not be spawned.
    #[error("cannot start the HTTP mock {program:?}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// It exited before it could be watched.
    #[error("the HTTP mock exited at once")]
    ExitedAtOnce,
    /// Its stdout was not captured.
    #[error("the HTTP mock has no stdout")]
    NoStdout,
    /// It did not announce its URL.
    #[error("the HTTP mock did not start: {why}; its stderr: {stderr}")]
    NotListening {
        /// What it did instead.
        why: NotListening,
        /// What it wrote to stderr (trimmed).
        stderr: String,
    },
}

/// How the mock failed to print its `listening <url>` line.
#[derive(Debug, thiserror::Error)]
pub enum NotListening {
    /// Nothing within the bound.
    #[error("no `listening` line within {0}s")]
    Timeout(u64),
    /// Its stdout could not be read.
    #[error("cannot read its stdout: {0}")]
    Read(std::io::Error),
    /// Another first line.
    #[error("it printed {0:?} instead of `listening <url>`")]
    Printed(String),
}

/// A running HTTP mock.
pub struct HttpMock {
    child: Child,
    pid: u32,
    /// The URL the client connects to.
    pub url: String,
    // Held open so the mock never sees a closed stdout.
    _stdout: BufReader<ChildStdout>,
    /// Once reaped, its pid may be reused: never signal it again.
    reaped: bool,
}

impl HttpMock {
    /// Starts `<mock_command> http|legacy-sse --scenario … --run-dir … --deadline-ms …` and
    /// waits (bounded) for its `listening` line. The error says what the mock printed.
    pub async fn start(
        mock_command: &[String],
        transport: TransportName,
        scenario: &Path,
        run_dir: &Path,
        deadline_ms: u64,
    ) -> Result<Self, MockStartError> {
        let (program, args) = mock_command.split_first().ok_or(MockStartError::NoCommand)?;
        let sub = match transport {
            TransportName::LegacySse => "legacy-sse",
            _ => "http",
        };
        let mut cmd = Command::new(program);
        cmd.args(args)
            .arg(sub)
            .arg("--scenario")
            .arg(scenario)
            .arg("--run-dir")
            .arg(run_dir)
            .arg("--deadline-ms")
            .arg(deadline_ms.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|source| MockStartError::Spawn { program: program.clone(), source })?;
        let pid = child.id().ok_or(MockStartError::ExitedAtOnce)?;
        let stdout = child.stdout.take().ok_or(MockStartError::NoStdout)?;
        let mut stderr = child.stderr.take();
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let read = tokio::time::timeout(STARTUP_BOUND, reader.read_line(&mut line)).await;
        let url = line.trim().strip_prefix("listening ").map(str::to_string);
        match (read, url) {
            (Ok(Ok(_)), Some(url)) => {
                // Drain stderr in the background so a chatty mock can never block on it.
                if let Some(mut err) = stderr.take() {
                    tokio::spawn(async move {
                        let mut sink = Vec::new();
                        let _ = err.read_to_end(&mut sink).await;
                    });
                }
                Ok(HttpMock { child, pid, url, _stdout: reader, reaped: false })
            }
            (read, _) => {
                process_group::kill(pid);
                let mut text = String::new();
                if let Some(mut err) = stderr {
                    let _ = tokio::time::timeout(Duration::from_secs(1), err.read_to_string(&mut text)).await;
                }
                let _ = tokio::time::timeout(STOP_BOUND, child.wait()).await;
                let why = match read {
                    Err(_) => NotListening::Timeout(STARTUP_BOUND.as_secs()),
                    Ok(Err(e)) => NotListening::Read(e),
                    Ok(Ok(_)) => NotListening::Printed(line.trim().to_string()),
                };
                Err(MockStartError::NotListening { why, stderr: text.trim().to_string() })
            }
        }
    }

    /// The mock's pid (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Stops the mock: SIGTERM (it flushes its record), a bounded wait, then SIGKILL to the
    /// whole group and a reap.
    pub async fn stop(mut self) {
        let _ = kill(Pid::from_raw(self.pid as i32), Signal::SIGTERM);
        if tokio::time::timeout(STOP_BOUND, self.child.wait()).await.is_ok() {
            self.reaped = true;
            return;
        }
        process_group::kill(self.pid);
        self.reaped = tokio::time::timeout(STOP_BOUND, self.child.wait()).await.is_ok();
    }
}

impl Drop for HttpMock {
    fn drop(&mut self) {
        // A run cut short (its future dropped) must still leave nothing behind.
        if !self.reaped {
            process_group::kill(self.pid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_program_that_is_not_the_mock_is_reported_with_what_it_printed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let echo = ["/bin/echo".to_string(), "hello".into()];
        let e = HttpMock::start(&echo, TransportName::Http, Path::new("s.yaml"), dir.path(), 1000)
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        let printed = format!("hello http --scenario s.yaml --run-dir {} --deadline-ms 1000", dir.path().display());
        assert_eq!(
            e,
            format!("the HTTP mock did not start: it printed {printed:?} instead of `listening <url>`; its stderr: ")
        );
        let none = HttpMock::start(&[], TransportName::Http, Path::new("s.yaml"), dir.path(), 1000).await;
        assert_eq!(none.err().map(|e| e.to_string()).as_deref(), Some("no mock command configured"));
    }
}
