//! One wire pipeline per run: a real run through the runner reads its record once (the
//! `wait_sent` step's follower and the final read are one read), and builds one transcript
//! and one redactor, which the checks, the rendering, the snapshot and the reports share.
//!
//! Its own test binary: the counts (`mcp_mock::tally`) are process-wide, and the harness's
//! other tests run beside each other in theirs.

use mcp_harness::Target;
use mcp_harness::runner::{self, RunConfig};
use mcp_mock::tally::Tally;
use mcp_results::{Status, StepStatus};
use std::path::PathBuf;
use std::sync::Arc;

/// Runs the library's scenario at `relative` on the bundled target; returns what the run
/// counted.
async fn run_counting(relative: &str, waits_on_the_record: bool) -> Tally {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios").join(relative);
    let scenario = mcp_harness::load(&path).expect("the library's scenario loads");
    assert_eq!(
        scenario.client.iter().any(|s| matches!(s, mcp_scenario::ClientStep::WaitSent { .. })),
        waits_on_the_record,
        "{relative}: whether the scenario waits on the record while the client runs (wait_sent)"
    );
    let config =
        RunConfig::new(Target::bundled(None), vec![env!("CARGO_BIN_EXE_mcp-harness").to_string(), "mock".into()]);
    let job = runner::jobs(vec![(path, scenario)], &config.target).remove(0);
    let before = Tally::now();
    let result = runner::run_one(&job, &Arc::new(config)).await;
    let counted = Tally::now().since(before);
    assert_eq!(result.status, Status::Passed, "{relative}: {:?} {:?}", result.reason, result.failures);
    assert!(
        result.steps.iter().all(|s| matches!(s.status, StepStatus::Ok | StepStatus::Error)),
        "{relative}: every step ran to its end: {:?}",
        result.steps
    );
    assert!(!result.transcript.is_empty() && !result.wire.is_empty(), "{relative}: rendered and reported");
    counted
}

/// Each run is counted alone: the counts are process-wide, so the runs go one after another
/// in one test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_reads_its_record_once_and_builds_one_transcript_and_one_redactor() {
    // Two runs whose plan waits on the record while the client runs (`wait_sent`: the
    // follower's reads and the final one are one read), and one behind nginx with a second
    // upstream (two mocks, each recording in a directory of its own: the run's record is
    // both, read once).
    for (scenario, waits_on_the_record) in [
        ("stdio/abandoned-request-cancelled.yaml", true),
        ("http/abandoned-request-cancelled.yaml", true),
        ("proxies/nginx-no-sticky-sessions.yaml", false),
    ] {
        let counted = run_counting(scenario, waits_on_the_record).await;
        assert_eq!(
            counted,
            Tally { record_reads: 1, transcripts: 1, redactors: 1 },
            "{scenario}: one read of the record, one transcript, one redactor per run"
        );
    }
}
