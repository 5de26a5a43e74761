//! The stdio server's readiness. The bundled plan runner starts its handshake, and with it
//! the connect clock (`connect.timeout_ms`, which bounds the handshake), only once the mock it
//! spawned is serving: on a loaded machine starting a process takes hundreds of ms, and a
//! scenario that is not about start-up would otherwise spend its connect bound on it (a
//! 150 ms bound was seen to expire before the mock had read `initialize`). A scenario about a
//! slow server scripts the slowness (a `delay` before its `handshake`), which still counts:
//! it comes after the mock is serving.

use crate::run_record::RunRecord;
use std::time::Duration;

/// The longest wait for a server to serve; past it the handshake starts anyway (and its own
/// bound then judges a server that never answers).
const BOUND: Duration = Duration::from_secs(5);

/// How often the record is looked at again: the mock is another process that records to
/// files, so there is no in-process event to wait on. Each look reads only what the mock
/// appended since the last one.
const POLL: Duration = Duration::from_millis(5);

/// Waits until more than `before` servers of the run are serving ([`RunRecord::serving`]),
/// or `connected` says the transport is gone (the server exited without serving), or
/// [`BOUND`] passed.
pub async fn wait_for_server(record: &RunRecord, before: usize, connected: impl Fn() -> bool) {
    let _ = tokio::time::timeout(BOUND, async {
        while record.serving() <= before && connected() {
            tokio::time::sleep(POLL).await;
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_started_server_is_serving_and_a_gone_transport_ends_the_wait() {
        use mcp_scenario::wire::WireEvent;
        let dir = tempfile::tempdir().expect("a temp dir");
        let record = RunRecord::new(dir.path());
        assert_eq!(record.serving(), 0);
        // Nothing serves, but the transport is gone: the wait ends at once, not at the bound.
        let waited = tokio::time::timeout(Duration::from_secs(2), wait_for_server(&record, 0, || false)).await;
        assert!(waited.is_ok(), "the wait outlived a closed transport");
        let recorder =
            mcp_mock::record::Recorder::create(&mcp_mock::record::record_path(dir.path(), 1)).expect("a record");
        recorder.record(&WireEvent::Started { pid: 1, stderr_shared: false, origin_unix_us: None });
        assert_eq!(record.serving(), 1);
        let waited = tokio::time::timeout(Duration::from_secs(2), wait_for_server(&record, 0, || true)).await;
        assert!(waited.is_ok(), "the wait missed a serving server");
    }
}
