//! Writing the wire transcript ([`mcp_scenario::wire`]): one JSON object per line in
//! `<run-dir>/conn-<n>.jsonl`, written with one `write` per event so that a mock killed by
//! SIGKILL loses nothing it had recorded; reading a run's records back.

use crate::error::MockError;
use crate::sync::lock;
use mcp_scenario::wire::WireEvent;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use tokio::sync::Notify;

/// Notified each time events reach a record file (the stdio recorder's writes, the HTTP
/// journal's flushes), so a live rendering of the record (`--record`, [`crate::live`])
/// waits on the writes instead of polling the files. One process-wide signal: the write
/// paths stay as they are, nobody waits on it in the harness, and a wake-up the watcher
/// did not need only costs it one more rendering.
pub fn written() -> &'static Notify {
    static WRITTEN: Notify = Notify::const_new();
    &WRITTEN
}

/// Appends events to a connection's record file.
pub struct Recorder {
    file: Mutex<File>,
    start: Instant,
    sealed: AtomicBool,
}

impl Recorder {
    /// Creates (truncates) the record file.
    pub fn create(path: &Path) -> Result<Self, MockError> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(|e| MockError::io(format!("creating record file {}", path.display()), e))?;
        Ok(Recorder { file: Mutex::new(file), start: Instant::now(), sealed: AtomicBool::new(false) })
    }

    /// Microseconds since the recorder was created.
    pub fn now_us(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    /// Writes one event as one line, in one `write` call. Errors are logged, not returned:
    /// a full disk must not change what the mock does on the wire.
    pub fn record(&self, event: &WireEvent) {
        if self.sealed.load(Ordering::SeqCst) {
            return;
        }
        let mut line = serde_json::to_vec(event).unwrap_or_default();
        line.push(b'\n');
        let mut file = lock(&self.file);
        if let Err(e) = file.write_all(&line) {
            tracing::error!(error = %e, "cannot write the record file");
        }
        drop(file);
        written().notify_one();
    }

    /// Records nothing more: the mock has ended (its last event is its exit), and what the
    /// tasks still running until the process is gone do must not reach the record.
    pub fn seal(&self) {
        self.sealed.store(true, Ordering::SeqCst);
    }
}

/// The record file of connection `n` in a run directory.
pub fn record_path(run_dir: &Path, connection: usize) -> PathBuf {
    run_dir.join(format!("conn-{connection}.jsonl"))
}

/// Reads every connection's events, in connection order. A torn last line (the mock was
/// killed mid-write) is skipped.
pub fn read_run(run_dir: &Path) -> Vec<Vec<WireEvent>> {
    let mut connections = Vec::new();
    for n in 1.. {
        let Ok(text) = std::fs::read_to_string(record_path(run_dir, n)) else { break };
        connections.push(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect());
    }
    connections
}

/// Claims the next connection number in a run directory (1, 2, …), atomically across
/// processes: a respawned stdio mock learns which part of the script is its own.
pub fn claim_connection(run_dir: &Path) -> Result<usize, MockError> {
    for n in 1..10_000 {
        match OpenOptions::new().write(true).create_new(true).open(run_dir.join(format!("conn-{n}.claim"))) {
            Ok(_) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(MockError::io(format!("claiming a connection in {}", run_dir.display()), e)),
        }
    }
    Err(MockError::io("claiming a connection", std::io::Error::other("too many connections")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_claims() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(claim_connection(dir.path()).expect("claim"), 1);
        assert_eq!(claim_connection(dir.path()).expect("claim"), 2);
        let r = Recorder::create(&record_path(dir.path(), 1)).expect("create");
        r.record(&WireEvent::StdinEof { t_us: 1 });
        assert_eq!(read_run(dir.path()), vec![vec![WireEvent::StdinEof { t_us: 1 }]]);
    }
}
