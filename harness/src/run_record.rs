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
use mcp_scenario::script::connection_parts;
use mcp_scenario::{Scenario, ServerStep, WireEvent};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// How often a wait on the mock's record reads what it gained.
pub const RECORD_POLL: Duration = Duration::from_millis(5);

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

    /// Whether every stdio mock of the run has served all its client wrote: it recorded its
    /// exit (a mock exits on EOF once it has served what it read, and
    /// [`mcp_mock::stdio::EOF_LINGER`] after); or, ignoring EOF (`ignore_stdin_eof`), its
    /// EOF with its script at its end (its `stall`); or its script stands past a
    /// `stop_reading` (it reads no more). An EOF alone is not enough: the script may not have
    /// served the last lines read before it. A mock not yet bound to a connection is done
    /// when it exits.
    pub fn mocks_served_all(&self, scenario: &Scenario) -> bool {
        let mut follower = crate::outcome::lock(&self.follower);
        follower.update_all(&self.dir);
        let scripted = follower.connections().count();
        // Each scripted connection's script, borrowed (the poll runs every few milliseconds);
        // a mock not yet bound to one has none.
        let scripts: Vec<&[ServerStep]> = connection_parts(&scenario.server).take(scripted).collect();
        follower.records().enumerate().all(|(i, events)| {
            let script = scripts.get(i).copied().unwrap_or_default();
            let (reached, finished) = events
                .iter()
                .filter_map(WireEvent::script_progress)
                .fold((0, false), |(r, f), p| (r.max(p.reached), f || p.finished));
            let stops_at = script.iter().position(|s| matches!(s, ServerStep::StopReading(_)));
            let stopped = stops_at.is_some_and(|at| reached > at);
            let ignores_eof = script.iter().any(|s| matches!(s, ServerStep::IgnoreStdinEof(_)));
            let stays = ignores_eof && finished && events.iter().any(WireEvent::is_stdin_eof);
            stopped || stays || events.iter().any(WireEvent::is_exit)
        })
    }

    /// Waits (at most `bound`) until [`RunRecord::mocks_served_all`]: a stdio server that a
    /// client which exits, or says it is done, without waiting for it leaves behind may still
    /// be serving what the client wrote last (under load, for tens of milliseconds and more:
    /// a `notifications/initialized` unserved when the harness killed the server stopped its
    /// script short of the fault, and the run was not exercised). The mock is another process that
    /// records to files, so the record is followed every few milliseconds.
    pub async fn until_mocks_served_all(&self, scenario: &Scenario, bound: Duration) {
        let _ = tokio::time::timeout(bound, async {
            while !self.mocks_served_all(scenario) {
                tokio::time::sleep(RECORD_POLL).await;
            }
        })
        .await;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(server: &str) -> Scenario {
        let text = format!(
            "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: close\nserver:\n{server}"
        );
        mcp_scenario::load::parse(Path::new("t.yaml"), &text).expect("parses")
    }

    fn append(dir: &Path, events: &[WireEvent]) {
        use std::io::Write;
        let path = mcp_mock::record::record_path(dir, 1);
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).expect("open the record");
        for e in events {
            writeln!(file, "{}", serde_json::to_string(e).expect("json")).expect("write the record");
        }
    }

    fn mark(reached: usize, total: usize) -> WireEvent {
        WireEvent::Script { t_us: 1, reached, total, finished: false, output_follows: false }
    }

    fn end(total: usize) -> WireEvent {
        WireEvent::Script { t_us: 1, reached: total, total, finished: true, output_follows: false }
    }

    #[test]
    fn a_mock_has_served_all_once_it_exits_or_reaches_its_end_after_eof() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = scenario("  - op: handshake\n  - op: ignore_stdin_eof\n  - op: stall\n");
        let record = RunRecord::new(dir.path());
        assert!(record.mocks_served_all(&s), "no mock, nothing to serve");
        append(dir.path(), &[WireEvent::Started { pid: 1, stderr_shared: false, origin_unix_us: None }, mark(1, 3)]);
        assert!(!record.mocks_served_all(&s), "the mock is still in its handshake");
        append(dir.path(), &[WireEvent::StdinEof { t_us: 2, parent_exiting: true }]);
        assert!(!record.mocks_served_all(&s), "it read to the end, but has not served the last line read");
        append(dir.path(), &[mark(2, 3), end(3)]);
        assert!(record.mocks_served_all(&s), "it stalls, ignoring the EOF");

        let dir = tempfile::tempdir().expect("tempdir");
        let record = RunRecord::new(dir.path());
        append(
            dir.path(),
            &[mark(1, 3), WireEvent::Exit { t_us: 3, code: Some(0), signal: None, why: "script".into() }],
        );
        assert!(record.mocks_served_all(&s), "it exited");
    }

    #[test]
    fn a_mock_past_its_stop_reading_reads_no_more() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = scenario("  - op: handshake\n  - op: stop_reading\n  - op: stall\n");
        let record = RunRecord::new(dir.path());
        append(dir.path(), &[mark(1, 3)]);
        assert!(!record.mocks_served_all(&s));
        append(dir.path(), &[mark(2, 3)]);
        assert!(record.mocks_served_all(&s), "it stopped reading at step 2");
    }

    #[tokio::test]
    async fn the_wait_for_a_mock_that_never_serves_all_is_bounded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = scenario("  - op: handshake\n");
        append(dir.path(), &[mark(1, 1)]);
        let record = RunRecord::new(dir.path());
        record.until_mocks_served_all(&s, Duration::from_millis(20)).await;
        assert!(!record.mocks_served_all(&s));
    }
}
