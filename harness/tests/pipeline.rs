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
async fn run_counting(relative: &str) -> Tally {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios").join(relative);
    let scenario = mcp_harness::load(&path).expect("the library's scenario loads");
    assert!(
        scenario.client.iter().any(|s| matches!(s, mcp_scenario::ClientStep::WaitSent { .. })),
        "{relative}: the scenario must wait on the record while the client runs (wait_sent)"
    );
    let config =
        RunConfig::new(Target::bundled(None), vec![env!("CARGO_BIN_EXE_mcp-harness").to_string(), "mock".into()]);
    let job = runner::jobs(vec![(path, scenario)], &config.target).remove(0);
    let before = Tally::now();
    let result = runner::run_one(&job, &Arc::new(config)).await;
    let counted = Tally::now().since(before);
    assert_eq!(result.status, Status::Passed, "{relative}: {:?} {:?}", result.reason, result.failures);
    assert!(result.steps.iter().all(|s| s.status == StepStatus::Ok), "{relative}: every step ran: {:?}", result.steps);
    assert!(!result.transcript.is_empty() && !result.wire.is_empty(), "{relative}: rendered and reported");
    counted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_reads_its_record_once_and_builds_one_transcript_and_one_redactor() {
    for scenario in ["stdio/abandoned-request-cancelled.yaml", "http/abandoned-request-cancelled.yaml"] {
        let counted = run_counting(scenario).await;
        assert_eq!(
            counted,
            Tally { record_reads: 1, transcripts: 1, redactors: 1 },
            "{scenario}: one read of the record, one transcript, one redactor per run"
        );
    }
}
