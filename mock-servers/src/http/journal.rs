//! The HTTP mock's record writer. Events are serialised by the task that produced them and
//! handed to one writer thread, which appends them to `conn-<n>.jsonl` through buffered
//! writers and flushes whenever its queue runs dry.
//!
//! Why a thread and not a `write` per event as it happens (as the stdio mock does): under a benchmark
//! the mock answers tens of thousands of requests a second, and a syscall per event would
//! halve that. Memory stays flat (a bounded queue; nothing is kept once written), and a
//! mock killed by SIGKILL loses at most the events of the last busy burst: the writer
//! flushes as soon as it is idle, and the harness stops the mock with SIGTERM first, which
//! flushes and waits.

use crate::record::record_path;
use mcp_scenario::wire::WireEvent;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError, sync_channel};
use std::time::{Duration, Instant};

/// How many serialised events may wait for the writer before producers block (backpressure
/// keeps memory flat when the disk is slower than the network).
const QUEUE_DEPTH: usize = 16 * 1024;

enum Msg {
    Line(usize, Vec<u8>),
    Flush(SyncSender<()>),
}

/// A handle producers record through; cheap to share behind an `Arc`.
pub struct Journal {
    tx: SyncSender<Msg>,
    start: Instant,
    sealed: AtomicBool,
}

impl Journal {
    /// Starts the writer thread for `run_dir`. Record files are created (truncated) on their
    /// first event, so connection numbers stay contiguous.
    pub fn start(run_dir: &Path) -> Self {
        let (tx, rx) = sync_channel(QUEUE_DEPTH);
        let dir = run_dir.to_path_buf();
        let spawned = std::thread::Builder::new().name("mcp-mock-journal".into()).spawn(move || writer(dir, rx));
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the record writer; nothing will be recorded");
        }
        Journal { tx, start: Instant::now(), sealed: AtomicBool::new(false) }
    }

    /// Microseconds since the journal started.
    pub fn now_us(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    /// The wall-clock time of [`Journal::now_us`]'s zero, in µs since the Unix epoch.
    pub fn origin_unix_us(&self) -> u64 {
        crate::record::origin_unix_us(self.start)
    }

    /// Queues one event for connection `connection` (1-based). Blocks only while the queue is
    /// full; a dead writer loses the event (logged once per event, never a panic).
    pub fn record(&self, connection: usize, event: &WireEvent) {
        if self.sealed.load(Ordering::SeqCst) {
            return;
        }
        let mut line = match serde_json::to_vec(event) {
            Ok(l) => l,
            Err(e) => {
                tracing::error!(error = %e, "cannot serialise a wire event");
                return;
            }
        };
        line.push(b'\n');
        if self.tx.send(Msg::Line(connection, line)).is_err() {
            tracing::error!("the record writer is gone; an event was lost");
        }
    }

    /// Queues nothing more: the mock has stopped, and what its tasks do until the process is
    /// gone (a connection dropped as they are cancelled) must not reach the record.
    pub fn seal(&self) {
        self.sealed.store(true, Ordering::SeqCst);
    }

    /// Waits (at most `bound`) until everything queued so far is on disk.
    pub fn flush(&self, bound: Duration) {
        let (ack, done) = sync_channel(1);
        if self.tx.send(Msg::Flush(ack)).is_ok() {
            let _ = done.recv_timeout(bound);
        }
    }
}

fn writer(dir: PathBuf, rx: Receiver<Msg>) {
    let mut files: Files = HashMap::new();
    let flush_all = |files: &mut Files| {
        for w in files.values_mut().flatten() {
            if let Err(e) = w.flush() {
                tracing::error!(error = %e, "cannot flush a record file");
            }
        }
        crate::record::written().notify_one();
    };
    loop {
        let msg = match rx.try_recv() {
            Ok(m) => m,
            Err(TryRecvError::Disconnected) => break,
            Err(TryRecvError::Empty) => {
                // Idle: everything so far goes to disk before we sleep.
                flush_all(&mut files);
                // Under load, a short nap lets events pile up so producers never pay for
                // waking a parked writer (a futex call per event); when the queue is still
                // empty after it, park for real.
                std::thread::sleep(Duration::from_millis(1));
                if let Ok(m) = rx.try_recv() {
                    handle(&dir, &mut files, m, &flush_all);
                    continue;
                }
                match rx.recv_timeout(Duration::from_secs(3600)) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
        };
        handle(&dir, &mut files, msg, &flush_all);
    }
    flush_all(&mut files);
}

type Files = HashMap<usize, Option<BufWriter<File>>>;

fn handle(dir: &Path, files: &mut Files, msg: Msg, flush_all: &dyn Fn(&mut Files)) {
    match msg {
        Msg::Line(n, line) => {
            let w = files.entry(n).or_insert_with(|| open(dir, n));
            if let Some(w) = w
                && let Err(e) = w.write_all(&line)
            {
                tracing::error!(error = %e, connection = n, "cannot write the record file");
            }
        }
        Msg::Flush(ack) => {
            flush_all(files);
            let _ = ack.send(());
        }
    }
}

fn open(dir: &Path, connection: usize) -> Option<BufWriter<File>> {
    let path = record_path(dir, connection);
    match File::create(&path) {
        Ok(f) => Some(BufWriter::with_capacity(64 * 1024, f)),
        Err(e) => {
            tracing::error!(error = %e, path = %path.display(), "cannot create the record file");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::read_run;

    #[test]
    fn events_reach_their_connection_files_after_flush() {
        let dir = tempfile::tempdir().expect("tempdir");
        let j = Journal::start(dir.path());
        j.record(1, &WireEvent::Listening { port: 1 });
        j.record(2, &WireEvent::Listening { port: 2 });
        j.record(1, &WireEvent::Note { t_us: 3, text: "x".into() });
        j.flush(Duration::from_secs(5));
        let run = read_run(dir.path());
        assert_eq!(run.len(), 2);
        assert_eq!(run[0].len(), 2);
        assert_eq!(run[1], vec![WireEvent::Listening { port: 2 }]);
    }
}
