//! Writing the wire transcript ([`mcp_scenario::wire`]): one JSON object per line in
//! `<run-dir>/conn-<n>.jsonl`, each event written before the mock acts on it, so that a mock
//! killed by SIGKILL loses nothing it had acted on; reading a run's records back.

use crate::error::MockError;
use crate::sync::lock;
use mcp_scenario::wire::{RECORD_PREFIX_BYTES, Recorded, WireEvent};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
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

/// The wall-clock time of `start`, in µs since the Unix epoch: what orders records of
/// different mock processes, whose `t_us` each count from their own start.
pub fn origin_unix_us(start: Instant) -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    now.saturating_sub(start.elapsed()).as_micros() as u64
}

/// Appends events to a connection's record file.
pub struct Recorder {
    file: Mutex<Output>,
    start: Instant,
}

/// The record file and what is held for its next write (see [`Recorder::hold`]).
struct Output {
    file: File,
    held: Vec<u8>,
    /// Nothing more is written (see [`Recorder::seal`]). Kept under the file's lock: the
    /// stdio mock records from its stdin reader thread too, and an event either makes the
    /// record before its last event or not at all.
    sealed: bool,
}

/// Writes what [`Recorder::hold`] held when dropped, unless a later event already took it.
#[must_use = "the held event is written when this is dropped"]
pub struct Held<'a>(&'a Recorder);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.flush();
    }
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
        Ok(Recorder { file: Mutex::new(Output { file, held: Vec::new(), sealed: false }), start: Instant::now() })
    }

    /// Microseconds since the recorder was created.
    pub fn now_us(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    /// The wall-clock time of [`Recorder::now_us`]'s zero, in µs since the Unix epoch.
    pub fn origin_unix_us(&self) -> u64 {
        origin_unix_us(self.start)
    }

    /// Writes one event as one line, in one `write` call (after anything held, in the same
    /// call). False when the record is sealed and the event was not written: what it
    /// describes must then not happen on the wire either.
    pub fn record(&self, event: &(impl RecordLine + ?Sized)) -> bool {
        let mut out = lock(&self.file);
        if out.sealed {
            return false;
        }
        event.push_line(&mut out.held);
        write_held(out);
        true
    }

    /// Records the last event, then seals the record ([`Recorder::seal`]) under the same lock,
    /// so that no other thread's event follows it.
    pub fn record_last(&self, event: &(impl RecordLine + ?Sized)) {
        let mut out = lock(&self.file);
        if out.sealed {
            return;
        }
        out.sealed = true;
        event.push_line(&mut out.held);
        write_held(out);
    }

    /// Holds `event` for the next write to the record, which the returned guard makes at
    /// the latest when dropped. An inbound line the mock answers at once is recorded
    /// together with its answer, in one `write` instead of two, still before the answer
    /// reaches the wire: whoever holds must not wait on anything before its next record
    /// (a task that has to wait drops the guard or calls [`Recorder::flush`] first), so a
    /// mock killed at any moment has lost nothing it acted on.
    pub fn hold(&self, event: &(impl RecordLine + ?Sized)) -> Held<'_> {
        let mut out = lock(&self.file);
        if !out.sealed {
            event.push_line(&mut out.held);
        }
        Held(self)
    }

    /// Writes what is held, if anything (nothing once sealed).
    pub fn flush(&self) {
        let mut out = lock(&self.file);
        if out.held.is_empty() || out.sealed {
            out.held.clear();
            return;
        }
        write_held(out);
    }

    /// Records nothing more: the mock has ended (its last event is its exit), and what the
    /// tasks still running until the process is gone do must not reach the record.
    pub fn seal(&self) {
        lock(&self.file).sealed = true;
    }
}

/// Writes the held lines in one `write` call and empties the buffer (keeping its capacity).
/// Errors are logged, not returned: a full disk must not change what the mock does on the
/// wire.
fn write_held(mut out: std::sync::MutexGuard<'_, Output>) {
    let Output { file, held, .. } = &mut *out;
    let result = file.write_all(held);
    held.clear();
    drop(out);
    if let Err(e) = result {
        tracing::error!(error = %e, "cannot write the record file");
    }
    written().notify_one();
}

/// Something the record holds as one line: a [`WireEvent`], or a [`Crossing`] (the same
/// line, written from borrowed bytes).
pub trait RecordLine {
    /// Appends the event to `buf` as one JSON line (nothing if it cannot be serialised).
    fn push_line(&self, buf: &mut Vec<u8>);
}

impl RecordLine for WireEvent {
    fn push_line(&self, buf: &mut Vec<u8>) {
        let start = buf.len();
        match serde_json::to_writer(&mut *buf, self) {
            Ok(()) => buf.push(b'\n'),
            Err(_) => buf.truncate(start),
        }
    }
}

/// The two events of every stdio round trip, a client line and the mock's write, recorded
/// from the bytes they describe: the record line a [`WireEvent::FromClient`] or
/// [`WireEvent::ToClient`] makes, read back as that same event (a unit test holds them
/// together), without copying the bytes into one or re-serialising the parsed line.
/// Why: building, writing and dropping those two events was a third of the stdio mock's
/// time per round trip (`make bench`, "recording floor").
#[derive(Debug, Clone, Copy)]
pub enum Crossing<'a> {
    /// A line the client wrote (without its `\n`).
    FromClient {
        /// Microseconds since the mock started.
        t_us: u64,
        /// The line's bytes.
        line: &'a [u8],
        /// The line's JSON text (the line without a trailing `\r`) when it is JSON: it goes
        /// into the record as written, and reads back as the [`serde_json::Value`] a parse
        /// of the line gives.
        json: Option<&'a [u8]>,
        /// False when the stream ended without a final newline.
        terminated: bool,
    },
    /// Bytes the mock wrote to the client in one write.
    ToClient {
        /// Microseconds since the mock started.
        t_us: u64,
        /// The bytes.
        bytes: &'a [u8],
        /// Why the mock wrote them.
        why: &'a str,
    },
}

impl RecordLine for Crossing<'_> {
    fn push_line(&self, buf: &mut Vec<u8>) {
        let start = buf.len();
        let pushed = match *self {
            Crossing::FromClient { t_us, line, json, terminated } => (|| {
                buf.extend_from_slice(br#"{"event":"from_client","t_us":"#);
                serde_json::to_writer(&mut *buf, &t_us)?;
                buf.extend_from_slice(br#","bytes":"#);
                push_recorded(buf, line)?;
                if let Some(json) = json {
                    buf.extend_from_slice(br#","json":"#);
                    buf.extend_from_slice(json);
                }
                buf.extend_from_slice(if terminated { br#","terminated":true}"# } else { br#","terminated":false}"# });
                Ok::<(), serde_json::Error>(())
            })(),
            Crossing::ToClient { t_us, bytes, why } => (|| {
                buf.extend_from_slice(br#"{"event":"to_client","t_us":"#);
                serde_json::to_writer(&mut *buf, &t_us)?;
                buf.extend_from_slice(br#","bytes":"#);
                push_recorded(buf, bytes)?;
                buf.extend_from_slice(br#","why":"#);
                serde_json::to_writer(&mut *buf, why)?;
                buf.push(b'}');
                Ok(())
            })(),
        };
        match pushed {
            Ok(()) => buf.push(b'\n'),
            Err(_) => buf.truncate(start),
        }
    }
}

/// Appends `bytes` as [`Recorded`] serialises them; whole text is written from the slice
/// itself rather than a copy.
fn push_recorded(buf: &mut Vec<u8>, bytes: &[u8]) -> Result<(), serde_json::Error> {
    match std::str::from_utf8(bytes) {
        Ok(text) if bytes.len() <= RECORD_PREFIX_BYTES => {
            buf.extend_from_slice(br#"{"text":"#);
            serde_json::to_writer(&mut *buf, text)?;
            buf.extend_from_slice(br#","len":"#);
            serde_json::to_writer(&mut *buf, &bytes.len())?;
            buf.push(b'}');
            Ok(())
        }
        _ => serde_json::to_writer(&mut *buf, &Recorded::of(bytes)),
    }
}

/// The record file of connection `n` in a run directory.
pub fn record_path(run_dir: &Path, connection: usize) -> PathBuf {
    run_dir.join(format!("conn-{connection}.jsonl"))
}

/// Reads every connection's events, in connection order, then the stdio probe processes'
/// and any mock killed before it knew which it was (see [`RunFollower::into_run`]). A torn
/// last line (the mock was killed mid-write) is skipped.
pub fn read_run(run_dir: &Path) -> Vec<Vec<WireEvent>> {
    RunFollower::default().into_run(run_dir)
}

/// The events in complete record lines (a torn line, from a mock killed mid-write, is skipped).
fn events_in(bytes: &[u8]) -> impl Iterator<Item = WireEvent> + '_ {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| crossing_in(line).or_else(|| serde_json::from_slice::<WireEvent>(line).ok()))
}

/// A stdio round trip's event ([`Crossing`]: nearly every line of a long run's record) read
/// straight into its variant. `WireEvent` is tagged by a member of its own (`"event"`), so
/// serde reads every line twice over, first into a buffer of its parts (including the whole
/// message), then into the variant (that buffer was most of reading a record). A line that
/// starts with the tag of one of these two is read as the variant's fields alone; anything
/// this strict reading refuses (a member it does not know, one twice) goes the general way,
/// so every line reads back as it did.
fn crossing_in(line: &[u8]) -> Option<WireEvent> {
    if line.starts_with(br#"{"event":"from_client","#) {
        let l: FromClientLine = serde_json::from_slice(line).ok()?;
        Some(WireEvent::FromClient { t_us: l.t_us, bytes: l.bytes, json: l.json, terminated: l.terminated })
    } else if line.starts_with(br#"{"event":"to_client","#) {
        let l: ToClientLine = serde_json::from_slice(line).ok()?;
        Some(WireEvent::ToClient { t_us: l.t_us, bytes: l.bytes, why: l.why })
    } else {
        None
    }
}

/// The members of a [`WireEvent::FromClient`] record line (its tag checked by the caller).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FromClientLine {
    #[serde(rename = "event")]
    _event: serde::de::IgnoredAny,
    t_us: u64,
    bytes: Recorded,
    /// `null` reads back absent, as through `WireEvent`.
    json: Option<serde_json::Value>,
    terminated: bool,
}

/// The members of a [`WireEvent::ToClient`] record line (its tag checked by the caller).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ToClientLine {
    #[serde(rename = "event")]
    _event: serde::de::IgnoredAny,
    t_us: u64,
    bytes: Recorded,
    why: String,
}

fn is_pending(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("pending-") && n.ends_with(".jsonl"))
}

/// Follows a run directory's record files as they grow: each [`RunFollower::update`] reads
/// only what was appended since the last one, so a person's mock that watches its own
/// record (announcing finished scripts, rendering `--record`) reads each byte once rather
/// than the whole record after every event (which made a long session quadratic), and a run
/// whose plan waits on the record (`wait_sent`) reads it once in all, the final read
/// ([`RunFollower::into_run`]) taking up where the waits left off.
#[derive(Debug, Default)]
pub struct RunFollower {
    connections: Vec<Followed>,
    /// The stdio probe processes' records (`probe-<n>.jsonl`), in order.
    probes: Vec<Followed>,
    /// The records of stdio mocks not yet bound to a connection or a probe, by path (a bound
    /// one is renamed: its events are then read under the new name).
    pending: BTreeMap<PathBuf, Followed>,
    /// Whether anything was read yet (the first read is what [`crate::tally`] counts).
    started: bool,
}

#[derive(Debug, Default)]
struct Followed {
    /// Bytes of the file read so far.
    offset: u64,
    /// A last line not yet terminated: the writer's next `write` completes it.
    partial: Vec<u8>,
    events: Vec<WireEvent>,
}

impl Followed {
    /// Reads what `file` gained since the last call.
    fn follow(&mut self, mut file: File) {
        use std::io::{Read, Seek, SeekFrom};
        let mut fresh = Vec::new();
        if file.seek(SeekFrom::Start(self.offset)).is_err() || file.read_to_end(&mut fresh).is_err() {
            return;
        }
        self.offset += fresh.len() as u64;
        self.partial.extend_from_slice(&fresh);
        let Some(last_newline) = self.partial.iter().rposition(|&b| b == b'\n') else { return };
        let rest = self.partial.split_off(last_newline + 1);
        let complete = std::mem::replace(&mut self.partial, rest);
        self.events.extend(events_in(&complete));
    }

    /// Every event, the unterminated last line too when it parses: a probe's or a pending
    /// record is read whole at the end, as it always was.
    fn into_events_with_partial(mut self) -> Vec<WireEvent> {
        self.events.extend(events_in(&self.partial));
        self.events
    }
}

impl RunFollower {
    /// Reads what every connection's file gained. Returns, per connection, how many of its
    /// events were known before this call (the new ones follow).
    pub fn update(&mut self, run_dir: &Path) -> Vec<usize> {
        if !self.started {
            self.started = true;
            crate::tally::record_read();
        }
        let mut before = Vec::new();
        for n in 1.. {
            let Ok(file) = File::open(record_path(run_dir, n)) else { break };
            if self.connections.len() < n {
                self.connections.push(Followed::default());
            }
            let followed = &mut self.connections[n - 1];
            before.push(followed.events.len());
            followed.follow(file);
        }
        before
    }

    /// [`RunFollower::update`], and the probes' and pending records too (what a run's harness
    /// reads; a person's mock has neither).
    pub fn update_all(&mut self, run_dir: &Path) -> Vec<usize> {
        let before = self.update(run_dir);
        for n in 1.. {
            let Ok(file) = File::open(probe_path(run_dir, n)) else { break };
            if self.probes.len() < n {
                self.probes.push(Followed::default());
            }
            self.probes[n - 1].follow(file);
        }
        let listed: std::collections::BTreeSet<PathBuf> = std::fs::read_dir(run_dir)
            .map(|d| d.flatten().map(|e| e.path()).filter(|p| is_pending(p)).collect())
            .unwrap_or_default();
        self.pending.retain(|path, _| listed.contains(path));
        for path in listed {
            if let Ok(file) = File::open(&path) {
                self.pending.entry(path).or_default().follow(file);
            }
        }
        before
    }

    /// Every event read so far, per connection.
    pub fn connections(&self) -> impl Iterator<Item = &[WireEvent]> {
        self.connections.iter().map(|c| c.events.as_slice())
    }

    /// Every event read so far of every record: the connections', then the probes' and the
    /// pending ones' (as [`RunFollower::into_run`] lists them).
    pub fn records(&self) -> impl Iterator<Item = &[WireEvent]> {
        self.connections.iter().chain(&self.probes).chain(self.pending.values()).map(|c| c.events.as_slice())
    }

    /// Reads what is left and returns the whole record: every connection's events, in
    /// connection order; then the stdio probe processes' (`stdio::run::Unbound`), and any
    /// mock's killed before it knew which it was, as connections of their own after the
    /// scripted ones.
    pub fn into_run(mut self, run_dir: &Path) -> Vec<Vec<WireEvent>> {
        self.update_all(run_dir);
        let mut run: Vec<Vec<WireEvent>> = self.connections.into_iter().map(|c| c.events).collect();
        run.extend(self.probes.into_iter().chain(self.pending.into_values()).map(Followed::into_events_with_partial));
        run
    }

    /// [`RunFollower::into_run`], and the whole record of a second mock of the same run that
    /// records in `other_dir` (nginx's second upstream), as the one read of the run's record
    /// that [`crate::tally`] counts: both directories hold one run's wire. Nothing waits on
    /// the second mock's record, so it is read only here, once.
    pub fn into_run_and(self, run_dir: &Path, other_dir: &Path) -> (Vec<Vec<WireEvent>>, Vec<Vec<WireEvent>>) {
        let run = self.into_run(run_dir);
        let other = RunFollower { started: true, ..RunFollower::default() }.into_run(other_dir);
        (run, other)
    }
}

/// The record file of probe process `n` of a run (see `stdio::run::Unbound`).
pub fn probe_path(run_dir: &Path, n: usize) -> PathBuf {
    run_dir.join(format!("probe-{n}.jsonl"))
}

/// The record file a stdio mock writes before it knows whether it serves a connection or a
/// probe.
pub fn pending_path(run_dir: &Path) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    run_dir.join(format!("pending-{}-{n}.jsonl", std::process::id()))
}

/// Claims the next probe number in a run directory (1, 2, …), like [`claim_connection`].
pub fn claim_probe(run_dir: &Path) -> Result<usize, MockError> {
    claim(run_dir, "probe")
}

/// Claims the next connection number in a run directory (1, 2, …), atomically across
/// processes: a respawned stdio mock learns which part of the script is its own.
pub fn claim_connection(run_dir: &Path) -> Result<usize, MockError> {
    claim(run_dir, "conn")
}

fn claim(run_dir: &Path, kind: &str) -> Result<usize, MockError> {
    for n in 1..10_000 {
        match OpenOptions::new().write(true).create_new(true).open(run_dir.join(format!("{kind}-{n}.claim"))) {
            Ok(_) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(MockError::io(format!("claiming a {kind} number in {}", run_dir.display()), e)),
        }
    }
    Err(MockError::io(format!("claiming a {kind} number"), std::io::Error::other("too many")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Record lines read the stdio round trip's way read back as through `WireEvent`:
    /// usual lines, a `null` message, a line not terminated, hex bytes, escapes, and lines the
    /// strict reading refuses (a member it does not know, one twice, the tag twice, a torn
    /// line, a wrong type), which go the general way.
    #[test]
    fn round_trip_lines_read_as_through_wire_event() {
        let lines = [
            r#"{"event":"from_client","t_us":5,"bytes":{"text":"{\"id\":1}","len":8},"json":{"id":1,"a":[1.5,null,"\u00e9"]},"terminated":true}"#,
            r#"{"event":"from_client","t_us":5,"bytes":{"text":"null","len":4},"json":null,"terminated":false}"#,
            r#"{"event":"from_client","t_us":5,"bytes":{"hex":"ff00","len":2},"terminated":true}"#,
            r#"{"event":"from_client","t_us":5,"bytes":{"text":"x","len":1},"json":"x","terminated":true,"extra":1}"#,
            r#"{"event":"from_client","t_us":5,"t_us":6,"bytes":{"text":"x","len":1},"terminated":true}"#,
            r#"{"event":"from_client","event":"to_client","t_us":5,"bytes":{"text":"x","len":1},"why":"w","terminated":true}"#,
            r#"{"event":"from_client","t_us":5.5,"bytes":{"text":"x","len":1},"terminated":true}"#,
            r#"{"event":"from_client","t_us":5,"bytes":{"text":"x","len":1},"terminat"#,
            r#"{"event":"to_client","t_us":7,"bytes":{"text":"{}\n","len":3},"why":"reply \"quoted\""}"#,
            r#"{"event":"to_client","t_us":7,"bytes":{"text":"{}\n","len":3,"hex":null},"why":"w"}"#,
            r#"{"event":"to_client","t_us":7,"bytes":{"text":"{}\n","len":3}}"#,
            r#"{"event":"to_client","why":"w","t_us":7,"bytes":{"text":"","len":0},"more":[]}"#,
            r#"{"event":"stdin_eof","t_us":9}"#,
            "",
        ];
        for line in lines {
            let general = serde_json::from_slice::<WireEvent>(line.as_bytes()).ok();
            assert_eq!(events_in(line.as_bytes()).next(), general, "{line}");
        }
        let fast = lines.iter().filter(|l| crossing_in(l.as_bytes()).is_some()).count();
        assert_eq!(fast, 5, "the usual lines are read the fast way");
        // What the recorder writes is read the fast way.
        let mut written = Vec::new();
        Crossing::FromClient { t_us: 1, line: b"{}", json: Some(b"{}"), terminated: true }.push_line(&mut written);
        assert!(crossing_in(written.trim_ascii_end()).is_some());
    }

    #[test]
    fn round_trip_and_claims() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(claim_connection(dir.path()).expect("claim"), 1);
        assert_eq!(claim_connection(dir.path()).expect("claim"), 2);
        let r = Recorder::create(&record_path(dir.path(), 1)).expect("create");
        r.record(&WireEvent::StdinEof { t_us: 1, parent_exiting: false });
        assert_eq!(read_run(dir.path()), vec![vec![WireEvent::StdinEof { t_us: 1, parent_exiting: false }]]);
    }

    #[test]
    fn a_held_event_goes_out_with_the_next_record_or_when_its_guard_drops() {
        let dir = tempfile::tempdir().expect("tempdir");
        let r = Recorder::create(&record_path(dir.path(), 1)).expect("create");
        let eof = |t_us| WireEvent::StdinEof { t_us, parent_exiting: false };
        let held = r.hold(&eof(1));
        assert_eq!(read_run(dir.path()), vec![vec![]], "held, not yet written");
        r.record(&eof(2));
        assert_eq!(read_run(dir.path()), vec![vec![eof(1), eof(2)]], "written first, in the same write");
        drop(held);
        assert_eq!(read_run(dir.path()), vec![vec![eof(1), eof(2)]], "nothing twice");
        drop(r.hold(&eof(3)));
        assert_eq!(read_run(dir.path()), vec![vec![eof(1), eof(2), eof(3)]], "the guard writes it");
        let held = r.hold(&eof(4));
        r.seal();
        drop(held);
        r.flush();
        assert_eq!(read_run(dir.path()), vec![vec![eof(1), eof(2), eof(3)]], "nothing after the seal");
    }

    #[test]
    fn a_crossing_reads_back_as_the_event_it_stands_for() {
        let long = format!("{{\"text\":\"x{}\"}}", "é".repeat(600));
        let lines: Vec<&[u8]> = vec![
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a \"q\" é"}}}"#.as_bytes(),
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r",
            br#"  { "id" : 1.50, "a" : [ 1e2, -0, "\u00e9\ud83d\ude00" ], "a": {"dup": true} }  "#,
            br#"{"bad json"#,
            b"\x00\x01 \x1b[31m raw control bytes",
            b"{\"s\":\"\xff\xfe\"}",
            b"",
            long.as_bytes(),
        ];
        for line in lines {
            for terminated in [true, false] {
                let trimmed = line.strip_suffix(b"\r").unwrap_or(line);
                let json: Option<serde_json::Value> = serde_json::from_slice(trimmed).ok();
                let crossing =
                    Crossing::FromClient { t_us: 42, line, json: json.is_some().then_some(trimmed), terminated };
                let owned = WireEvent::FromClient { t_us: 42, bytes: Recorded::of(line), json, terminated };
                let mut written = Vec::new();
                crossing.push_line(&mut written);
                assert_eq!(written.iter().filter(|b| **b == b'\n').count(), 1, "one line: {written:?}");
                let read: WireEvent = serde_json::from_slice(&written).expect("a record line");
                assert_eq!(read, owned, "{}", String::from_utf8_lossy(line));
            }
            let crossing = Crossing::ToClient { t_us: 7, bytes: line, why: "reply \"quoted\"" };
            let owned = WireEvent::ToClient { t_us: 7, bytes: Recorded::of(line), why: "reply \"quoted\"".into() };
            let (mut written, mut expected) = (Vec::new(), Vec::new());
            crossing.push_line(&mut written);
            owned.push_line(&mut expected);
            assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&expected), "byte for byte");
        }
        // A compact line (what clients send) is recorded byte for byte as before.
        let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}"#;
        let (mut written, mut expected) = (Vec::new(), Vec::new());
        Crossing::FromClient { t_us: 1, line, json: Some(line), terminated: true }.push_line(&mut written);
        let json = serde_json::from_slice(line).ok();
        WireEvent::FromClient { t_us: 1, bytes: Recorded::of(line), json, terminated: true }.push_line(&mut expected);
        assert_eq!(String::from_utf8_lossy(&written), String::from_utf8_lossy(&expected));
    }

    #[test]
    fn a_follower_reads_only_what_was_appended_and_waits_for_whole_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = record_path(dir.path(), 1);
        let mut follower = RunFollower::default();
        assert_eq!(follower.update(dir.path()), Vec::<usize>::new());
        let r = Recorder::create(&path).expect("create");
        r.record(&WireEvent::StdinEof { t_us: 1, parent_exiting: false });
        assert_eq!(follower.update(dir.path()), vec![0]);
        // Half a line (a writer caught mid-write) is kept until its end arrives.
        let line = serde_json::to_vec(&WireEvent::StdinEof { t_us: 2, parent_exiting: false }).expect("json");
        let mut file = OpenOptions::new().append(true).open(&path).expect("open");
        file.write_all(&line[..5]).expect("write");
        assert_eq!(follower.update(dir.path()), vec![1]);
        file.write_all(&line[5..]).expect("write");
        file.write_all(b"\n").expect("write");
        assert_eq!(follower.update(dir.path()), vec![1]);
        let events: Vec<Vec<WireEvent>> = follower.connections().map(<[WireEvent]>::to_vec).collect();
        assert_eq!(
            events,
            vec![vec![
                WireEvent::StdinEof { t_us: 1, parent_exiting: false },
                WireEvent::StdinEof { t_us: 2, parent_exiting: false }
            ]]
        );
        assert_eq!(events, read_run(dir.path()));
    }

    #[test]
    fn a_pending_record_renamed_while_followed_is_read_under_its_new_name_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let eof = |t_us| WireEvent::StdinEof { t_us, parent_exiting: false };
        let pending = pending_path(dir.path());
        let r = Recorder::create(&pending).expect("create");
        r.record(&eof(1));
        let mut follower = RunFollower::default();
        follower.update_all(dir.path());
        assert_eq!(follower.records().map(<[WireEvent]>::to_vec).collect::<Vec<_>>(), vec![vec![eof(1)]]);
        // The mock learns it serves connection 1: its record takes that name and goes on.
        std::fs::rename(&pending, record_path(dir.path(), 1)).expect("rename");
        r.record(&eof(2));
        let probe = Recorder::create(&probe_path(dir.path(), 1)).expect("create");
        probe.record(&eof(3));
        assert_eq!(follower.into_run(dir.path()), vec![vec![eof(1), eof(2)], vec![eof(3)]]);
    }
}
