//! The scenario library under `cargo test`: one test per scenario file, run against the
//! bundled transports; checks must hold and the transcript must match the insta snapshot
//! beside the scenario (`cargo insta review` accepts changes).

use mcp_harness::runner::{self, RunConfig};
use mcp_harness::{Target, snapshot};
use mcp_results::Status;
use rstest::rstest;
use std::path::PathBuf;
use std::sync::Arc;

/// The bundled client with this build's mock, comparing no snapshot.
pub(crate) fn config() -> RunConfig {
    RunConfig::new(Target::bundled(None), vec![env!("CARGO_BIN_EXE_mcp-harness").to_string(), "mock".into()])
}

#[rstest]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenario(#[files("../scenarios/**/*.yaml")] path: PathBuf) {
    let loaded = mcp_harness::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let config = Arc::new(config());
    let jobs = runner::jobs(vec![(path.clone(), loaded)], &config.target);
    assert!(!jobs.is_empty(), "{} runs over no transport", path.display());
    for job in jobs {
        let result = runner::run_one(&job, &config).await;
        if matches!(result.status, Status::Skipped | Status::Pending) {
            continue;
        }
        let failures: Vec<String> = result.failures.iter().map(|f| format!("{}: {}", f.check, f.message)).collect();
        assert!(
            failures.is_empty(),
            "{} [{}] failed:\n{}\n\ntranscript:\n{}",
            path.display(),
            job.transport.as_str(),
            failures.join("\n"),
            result.transcript
        );
        let name = snapshot::name_for(&job.path, &job.scenario, job.transport, &config.target);
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(std::path::absolute(path.parent().expect("scenario dir")).expect("absolute"));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_input_file(&path);
        settings.bind(|| insta::assert_snapshot!(name, result.transcript));
    }
}
