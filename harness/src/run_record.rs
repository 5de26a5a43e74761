//! The record of one run, read once: what the mock recorded in the run's directory, followed
//! as it grows while the client runs (a `wait_sent` step, the persistent driver's leftover
//! check) and read to its end when the client part is over, into the run's one
//! [`Transcript`] and one [`Redactor`] ([`RunWire`]), which the checks, the rendering, the
//! snapshot and every report of the run then share.
//!
//! Before this, each step read the record again from its first byte (a `wait_sent` every
//! 5 ms, the stdio reaper twice) and the rendering and the runner each learnt a redactor of
//! their own; `mcp_mock::tally` counts both, and the pipeline test holds a run to one of each.

use crate::transcript::{Redactor, Transcript, count_sent};
use mcp_mock::record::RunFollower;
use mcp_scenario::WireEvent;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A run directory's records, followed incrementally (see the module docs).
#[derive(Debug)]
pub struct RunRecord {
    dir: PathBuf,
    follower: Mutex<RunFollower>,
}

/// What one run recorded, as every step after the client's part reads it: built once per run.
#[derive(Debug)]
pub struct RunWire {
    /// The checks' and the rendering's view of the wire.
    pub transcript: Transcript,
    /// Learnt from the whole wire and the run dir: the rendering learns request ids and
    /// exchange numbers into it; verdict texts and the reports' wire go through it.
    pub redactor: Redactor,
}

impl RunRecord {
    /// The record the mock writes in `dir` (nothing is read yet).
    pub fn new(dir: &Path) -> Self {
        RunRecord { dir: dir.to_path_buf(), follower: Mutex::new(RunFollower::default()) }
    }

    /// The run's directory (`conn-<n>.jsonl`, the plan file a driver reads).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Reads what the mock appended since the last look and counts, among the client
    /// messages new since `seen` (per connection, how many events were already counted;
    /// updated), those matching `method` and `http_method` as
    /// [`crate::transcript::count_sent`] does. A waiting step adds these up: each event is
    /// read and counted once however long it waits.
    pub fn sent_since(&self, seen: &mut Vec<usize>, method: Option<&str>, http_method: Option<&str>) -> usize {
        let mut follower = crate::outcome::lock(&self.follower);
        follower.update(&self.dir);
        let mut sent = 0;
        for (i, events) in follower.connections().enumerate() {
            if seen.len() <= i {
                seen.push(0);
            }
            sent += count_sent(&events[seen[i]..], method, http_method);
            seen[i] = events.len();
        }
        sent
    }

    /// How many of the run's stdio servers have started serving (recorded `Started`), read
    /// up to now.
    pub fn serving(&self) -> usize {
        self.with_records(|records| records.filter(|events| events.iter().any(|e| e.started_pid().is_some())).count())
    }

    /// The pids the run's mocks recorded as they started serving (connections, probes,
    /// mocks not yet bound), read up to now.
    pub fn mock_pids(&self) -> Vec<u32> {
        self.with_records(|records| {
            records.flat_map(|events| events.iter().filter_map(WireEvent::started_pid)).collect()
        })
    }

    /// The pids of the run's mocks that have not recorded their exit (yet), read up to now.
    pub fn unexited_mock_pids(&self) -> Vec<u32> {
        self.with_records(|records| {
            records
                .filter(|events| !events.iter().any(WireEvent::is_exit))
                .filter_map(|events| events.iter().find_map(WireEvent::started_pid))
                .collect()
        })
    }

    /// Reads what every record gained, then reads them all (each record's events so far).
    fn with_records<T>(&self, read: impl FnOnce(&mut dyn Iterator<Item = &[WireEvent]>) -> T) -> T {
        let mut follower = crate::outcome::lock(&self.follower);
        follower.update_all(&self.dir);
        read(&mut follower.records())
    }

    /// Reads the rest of the record, with the record of nginx's second upstream when the run
    /// has one ([`second_upstream_dir`]: part of the same one read, as the run ends, since
    /// nothing waits on it), and builds the run's transcript and redactor, with the client's hop as
    /// the fault proxy recorded it (`via:`, [`crate::transcript::Transcript::with_client_hop`];
    /// empty without).
    pub fn into_wire(self, client_hop: Vec<WireEvent>) -> RunWire {
        let follower = self.follower.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (run, second_upstream) = follower.into_run_and(&self.dir, &second_upstream_dir(&self.dir));
        let second_upstream = second_upstream
            .into_iter()
            .map(|c| c.into_iter().map(|e| e.with_exchange_shifted(SECOND_UPSTREAM_EXCHANGE_BASE)).collect())
            .collect();
        let transcript = Transcript::new(run).with_second_upstream(second_upstream).with_client_hop(client_hop);
        let redactor = transcript.redactor(&self.dir);
        RunWire { transcript, redactor }
    }
}

/// Where nginx's second upstream (`via: nginx: second_upstream`, [`crate::via`]) records:
/// `<run-dir>/upstream-2/`.
pub fn second_upstream_dir(run_dir: &Path) -> PathBuf {
    run_dir.join("upstream-2")
}

/// The second upstream's exchange numbers are shifted by this in the transcript, so that
/// they never meet the first mock's (both count from 1).
pub const SECOND_UPSTREAM_EXCHANGE_BASE: u64 = 500_000;
