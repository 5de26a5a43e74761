//! A mock run by a person — the server command in an MCP host's configuration, or
//! `mcp-mock serve` for a host that connects by URL — rather than by the harness: where its
//! record goes ([`RunDir`]), the rendering `--record FILE` keeps current ([`Live`]), and the
//! notice on stderr when a connection's script has run to its end.
//!
//! # Why the recording is two things
//!
//! `--record FILE` holds the snapshot rendering ([`crate::transcript::render`], the text a
//! `.snap` holds), for a person to read. The rendering is lossy on purpose (long payloads
//! shortened, ids renumbered), so it is not what `mcp-harness check-record` judges: beside
//! it, `FILE.wire/` keeps the structured record — the same `conn-<n>.jsonl` files a
//! harness run dir holds, plus `recording.json` (scenario and transport) — which the
//! checks read exactly as they read a harness run.
//!
//! Nothing is lost to a kill (hosts kill their stdio servers): every event reaches
//! `FILE.wire/` as it happens (on stdio, written before the mock acts on it; the HTTP journal flushes
//! whenever it is idle), and `FILE` is re-rendered from it after each write, through a
//! temp file renamed over `FILE`, so `FILE` is always a whole rendering of a prefix of
//! the record, never a torn one. The rendering is rebuilt whole rather than appended
//! because it is normalised across the whole transcript (session ids, the GET listener's
//! section, abandoned streams listed last); a host session is small enough for that.

use crate::error::MockError;
use crate::record::{RunFollower, written};
use crate::sync::lock;
use crate::transcript::{Transcript, render};
use mcp_results::ClientOutcome;
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{Scenario, TransportName};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The file in a recording's record dir that says what was recorded.
pub const ABOUT_FILE: &str = "recording.json";

/// What a recording is of, written beside its events so `check-record` can refuse a
/// recording of another scenario and knows the transport.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct About {
    /// The scenario's `name`.
    pub scenario: String,
    /// The transport the mock served.
    pub transport: TransportName,
}

impl About {
    /// Reads `recording.json` from a record dir, if it is there.
    pub fn read(record_dir: &Path) -> Option<About> {
        let text = std::fs::read_to_string(record_dir.join(ABOUT_FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }
}

/// Where the structured record of `--record FILE` goes: `FILE.wire/`.
pub fn record_dir_of(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".wire");
    PathBuf::from(name)
}

/// Where a person's mock records.
pub enum RunDir {
    /// `--run-dir DIR`: kept as it is, so a respawned stdio mock serves the script's next
    /// connection (the harness's way).
    Given(PathBuf),
    /// `FILE.wire/` of `--record FILE`, emptied of a previous recording's files at start:
    /// each start of the mock is a new recording, beginning at connection 1.
    Beside(PathBuf),
    /// Neither: a temp dir, removed when the mock ends.
    Temp(tempfile::TempDir),
}

impl RunDir {
    /// The run dir for `--run-dir` and `--record` as given, created if missing.
    pub fn new(run_dir: Option<&Path>, record: Option<&Path>) -> Result<RunDir, MockError> {
        let create = |dir: &Path| {
            std::fs::create_dir_all(dir).map_err(|e| MockError::io(format!("creating {}", dir.display()), e))
        };
        match (run_dir, record) {
            (Some(dir), _) => create(dir).map(|()| RunDir::Given(dir.to_path_buf())),
            (None, Some(file)) => {
                let dir = record_dir_of(file);
                create(&dir)?;
                clear_recording(&dir)?;
                Ok(RunDir::Beside(dir))
            }
            (None, None) => tempfile::Builder::new()
                .prefix("mcp-mock-")
                .tempdir()
                .map(RunDir::Temp)
                .map_err(|e| MockError::io("creating a temp dir for the record", e)),
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        match self {
            RunDir::Given(p) | RunDir::Beside(p) => p,
            RunDir::Temp(t) => t.path(),
        }
    }
}

/// Removes a previous recording's files (and only those) from a record dir.
fn clear_recording(dir: &Path) -> Result<(), MockError> {
    let entries = std::fs::read_dir(dir).map_err(|e| MockError::io(format!("reading {}", dir.display()), e))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = name == ABOUT_FILE
            || name
                .strip_prefix("conn-")
                .and_then(|r| r.strip_suffix(".jsonl").or_else(|| r.strip_suffix(".claim")))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if ours {
            std::fs::remove_file(entry.path())
                .map_err(|e| MockError::io(format!("removing {}", entry.path().display()), e))?;
        }
    }
    Ok(())
}

/// The live side of a person's mock: keeps `--record FILE` rendered and tells stderr when
/// a connection's script is over.
pub struct Live {
    scenario: Scenario,
    transport: TransportName,
    run_dir: PathBuf,
    record: Option<PathBuf>,
    announce: bool,
    /// The record read so far and the connections whose end of script was announced; held
    /// while refreshing, so refreshes never overlap (each reads the record inside the lock:
    /// the last one to write `FILE` has read at least as much as any before it).
    followed: Mutex<Progress>,
}

/// What [`Live::refresh`] keeps between refreshes.
#[derive(Default)]
struct Progress {
    record: RunFollower,
    announced: BTreeSet<usize>,
}

impl Live {
    /// Renders into `record` (when given) and announces the end of each connection's script
    /// on stderr (when `announce`). Writes `recording.json` beside the record.
    pub fn new(
        scenario: &Scenario,
        transport: TransportName,
        run_dir: &Path,
        record: Option<&Path>,
        announce: bool,
    ) -> Result<Live, MockError> {
        if record.is_some() {
            let about = About { scenario: scenario.name.clone(), transport };
            let path = run_dir.join(ABOUT_FILE);
            let text = serde_json::to_string_pretty(&about).unwrap_or_default();
            std::fs::write(&path, text + "\n").map_err(|e| MockError::io(format!("writing {}", path.display()), e))?;
        }
        let live = Live {
            scenario: scenario.clone(),
            transport,
            run_dir: run_dir.to_path_buf(),
            record: record.map(Path::to_path_buf),
            announce,
            followed: Mutex::default(),
        };
        // The file exists (if empty of events) as soon as the mock serves.
        if !live.is_idle() {
            live.refresh()?;
        }
        Ok(live)
    }

    /// Whether there is nothing to keep live (the harness's mocks: no `--record`, no notes).
    pub fn is_idle(&self) -> bool {
        self.record.is_none() && !self.announce
    }

    /// Refreshes after every write to the record, until dropped (abort the task). A
    /// rendering that fails is logged and retried at the next write.
    pub async fn watch(self: Arc<Self>) {
        loop {
            written().notified().await;
            let me = self.clone();
            match tokio::task::spawn_blocking(move || me.refresh()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::error!(error = %e, "cannot write the recording"),
                Err(e) => tracing::error!(error = %e, "the recording task failed"),
            }
        }
    }

    /// Reads the record, rewrites `FILE`, then announces scripts that are newly over (in
    /// that order: whoever reads the note finds the script's events in `FILE`).
    pub fn refresh(&self) -> Result<(), MockError> {
        let mut followed = lock(&self.followed);
        let Progress { record, announced } = &mut *followed;
        let known_before = record.update(&self.run_dir);
        // Only the new events: an end of script already seen was announced then.
        let over: Vec<(usize, usize)> = record
            .connections()
            .zip(known_before.iter().copied())
            .enumerate()
            .filter_map(|(i, (events, before))| script_over(&events[before..]).map(|total| (i + 1, total)))
            .collect();
        // A host's new session the scenario has no connection left for.
        let refused_sessions = record
            .connections()
            .zip(known_before.iter().copied())
            .filter(|(events, before)| events[*before..].iter().any(refuses_a_new_session))
            .count();
        if let Some(file) = &self.record {
            let transcript = Transcript::new(record.connections().map(<[WireEvent]>::to_vec).collect());
            let text = render::transcript(
                &self.scenario,
                self.transport,
                render::Client::HOST,
                &ClientOutcome::default(),
                &transcript,
                &mut transcript.redactor(&self.run_dir),
            );
            write_whole(file, &text)?;
        }
        if self.announce && refused_sessions > 0 {
            let connections = record.connections().count();
            eprintln!(
                "mcp-mock: a new session began (initialize), but the scenario's {connections} connection(s) are used: it \
                 was answered -32601 (unscripted). To serve another session, restart the mock, or give the scenario \
                 another connection (a `new_connection` step and its script)"
            );
        }
        for (n, total) in over {
            if self.announce && announced.insert(n) {
                eprintln!(
                    "mcp-mock: connection {n}: the script has run to its end ({total} steps); the mock keeps \
                     serving: unscripted requests get its defaults (ping, tools/list; other methods -32601)"
                );
            }
        }
        Ok(())
    }
}

/// Whether `event` is the mock's default answer to an `initialize` no connection's script
/// was left to take.
fn refuses_a_new_session(event: &WireEvent) -> bool {
    let (why, body) = match event {
        WireEvent::ToClient { bytes, why, .. } => (why, bytes.text.as_deref()),
        WireEvent::HttpResponse { body, why, .. } => (why, body.as_ref().and_then(|b| b.text.as_deref())),
        _ => return false,
    };
    why.starts_with("auto -32601") && body.is_some_and(|b| b.contains("initialize (unscripted)"))
}

/// The steps of a connection's script, once it has run to its end.
fn script_over(events: &[WireEvent]) -> Option<usize> {
    events.iter().rev().find_map(|e| match e {
        // A mark whose output follows is not the end yet: `FILE` would miss that output.
        WireEvent::Script { total, finished: true, output_follows: false, .. } => Some(*total),
        _ => None,
    })
}

/// Replaces `file` with `text` at once: a temp file in the same directory, renamed over it.
fn write_whole(file: &Path, text: &str) -> Result<(), MockError> {
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let what = || format!("writing the recording {}", file.display());
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| MockError::io(what(), e))?;
    tmp.write_all(text.as_bytes()).map_err(|e| MockError::io(what(), e))?;
    tmp.persist(file).map_err(|e| MockError::io(what(), e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_answer_to_an_initialize_is_a_refused_session() {
        use mcp_scenario::wire::Recorded;
        let answer = |why: &str, text: &str| WireEvent::ToClient {
            t_us: 1,
            bytes: Recorded::of(text.as_bytes()),
            why: why.into(),
        };
        let refused =
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found: initialize (unscripted)"}}"#;
        assert!(refuses_a_new_session(&answer("auto -32601", refused)));
        assert!(!refuses_a_new_session(&answer("auto -32601", &refused.replace("initialize", "tools/call"))));
        assert!(!refuses_a_new_session(&answer("reply", refused)));
    }

    #[test]
    fn a_new_recording_clears_only_its_own_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("session.txt");
        let wire = record_dir_of(&file);
        std::fs::create_dir_all(&wire).expect("mkdir");
        for name in ["conn-1.jsonl", "conn-2.claim", ABOUT_FILE, "notes.md", "conn-x.jsonl"] {
            std::fs::write(wire.join(name), "x").expect("write");
        }
        let run = RunDir::new(None, Some(&file)).expect("run dir");
        assert_eq!(run.path(), wire);
        let mut left: Vec<String> = std::fs::read_dir(&wire)
            .expect("read")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["conn-x.jsonl", "notes.md"]);
    }

    #[test]
    fn the_end_of_a_script_is_its_last_finished_progress() {
        let progress =
            |reached, finished| WireEvent::Script { t_us: 0, reached, total: 2, finished, output_follows: false };
        assert_eq!(script_over(&[progress(1, false), progress(2, false)]), None);
        assert_eq!(script_over(&[progress(2, false), progress(2, true)]), Some(2));
    }

    #[test]
    fn a_script_whose_last_output_is_still_to_be_recorded_is_not_over() {
        // A last `reply`: the mark as it starts, then the reply, then the end.
        let early = WireEvent::Script { t_us: 0, reached: 2, total: 2, finished: true, output_follows: true };
        let reply =
            WireEvent::ToClient { t_us: 1, bytes: mcp_scenario::wire::Recorded::of(b"{}\n"), why: "reply".into() };
        let end = WireEvent::Script { t_us: 0, reached: 2, total: 2, finished: true, output_follows: false };
        assert_eq!(script_over(std::slice::from_ref(&early)), None);
        assert_eq!(script_over(&[early, reply, end]), Some(2));
    }
}
