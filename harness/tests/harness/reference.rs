//! The planted-bug self-test: the reference client (`clients/reference/`, Python standard
//! library only) passes the scenarios that catch its planted bugs, and each single-bug variant
//! (`run --bug <name>`) fails one of them with a message naming the planted effect — proof
//! that the library bites on each bug class. `reference_client_passes_the_library` (ignored
//! by default: it takes tens of seconds; `make reference` runs it) holds the reference to the
//! whole library.
//!
//! Runs go through the `cmd:` target as for any third-party client, with snapshots off: the
//! reference client's verdicts come from the checks alone, so nothing here depends on timing
//! recorded in a committed transcript. Runs are parallel (bounded) and wait on the runs
//! themselves, whose deadlines bound them; nothing sleeps.

use futures::StreamExt;
use mcp_harness::Target;
use mcp_harness::runner::{self, Job, RunConfig};
use mcp_results::{CheckResult, RunResult, Status};
use mcp_scenario::basis::Level;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One planted bug, the scenario that catches it, and a substring of the failure message
/// that names the bug's effect (so the test fails if the scenario fails for another reason).
struct Variant {
    bug: &'static str,
    scenario: &'static str,
    message: &'static str,
    /// What the check that catches it rests on. `Must`: the bug fails the run. `Should` and
    /// `Robustness` (harm no MCP sentence names) are warnings. None is caught only as a note:
    /// a planted bug is harm to someone, and a note is no verdict.
    caught_as: Level,
}

const VARIANTS: &[Variant] = &[
    v(
        "answers-first-line",
        "stdio/out-of-order-responses",
        "step 5 result {\"resources\":[]} does not contain {\"tools\":[]}",
    ),
    // A server MUST NOT write non-messages; nothing in the MCP spec asks the client to survive
    // one: a robustness finding.
    robustness(v(
        "dies-on-malformed-line",
        "stdio/malformed-line-after-init",
        "step 2 (request tools/list) failed: Transport closed",
    )),
    v(
        "no-initialized",
        "stdio/initialized-before-first-request",
        "client sent notifications/initialized 0 time(s), expected 1",
    ),
    // Re-POSTing the same request reuses its id while it is still in flight.
    v("reposts-after-drop", "http/resume-after-drop-with-last-event-id", "reused while still in flight"),
    v("ignores-session-id", "http/session-capture-and-resend", "lacked Mcp-Session-Id"),
    // Retrying a refused GET or a 401 without limit breaks no MCP sentence: it floods the
    // server, a robustness finding.
    robustness(v("loops-on-405-get", "http/get-listener-405", "GET request(s), expected at most 1")),
    robustness(v("loops-on-401", "http/auth-401-twice-error-with-hint", "expected at most 4")),
    // "the sender SHOULD … stop waiting for a response" (2025-11-25 lifecycle, Timeouts).
    should(v(
        "no-request-timeout",
        "stdio/late-response-dropped",
        "step 2 (request tools/call) succeeded, expected an error",
    )),
    v(
        "cancels-initialize",
        "regressions/ts-initialize-never-cancelled",
        "client sent notifications/cancelled 1 time(s), expected never",
    ),
    v("sse-lf-only", "http/sse-crlf-line-endings", "client never reported notification notifications/message"),
    // Response ids are the responder's MUST (2025-11-25 basic/index); taking "1" for 1 takes
    // one response for another: a robustness finding.
    robustness(v("id-type-confusion", "stdio/wrong-id-type", "does not contain {\"tools\":[]}")),
    // Shutdown by SIGTERM after a wait and DELETE on close are SHOULDs (2025-11-25 lifecycle,
    // transports): warnings for a third-party client.
    should(v("orphans-server", "stdio/ignores-stdin-eof", "the mock never received SIGTERM")),
    should(v("no-delete", "http/delete-on-close", "the client sent 0 DELETE request(s)")),
    v(
        "keeps-expired-session",
        "http/session-expired-404-new-session",
        "the client sent no HTTP initialize request(s) on connection 2",
    ),
    // Cancelling by notification has no MUST or SHOULD for the caller's own cancellation
    // (2025-11-25 utilities/cancellation); the server is left working: a robustness finding.
    robustness(v(
        "no-cancel-notification",
        "stdio/caller-cancellation",
        "client sent no notifications/cancelled with requestId",
    )),
    v("ping-method-not-found", "stdio/server-ping", "has no result"),
    v("ping-not-empty", "stdio/server-ping", "is not empty"),
    v("no-version-header", "http/protocol-version-header-after-init", "lacked MCP-Protocol-Version: 2025-06-18"),
    v("get-accepts-json-only", "http/get-listener-405", "lacked Accept listing text/event-stream"),
    v("post-accepts-json-only", "http/json-reply", "lacked Accept listing application/json, text/event-stream"),
    v("get-without-session-id", "http/get-listener-delivers-messages", "GET request(s) lacked Mcp-Session-Id"),
    v("reuses-ids", "stdio/out-of-order-responses", "reused while still in flight"),
    v("null-ids", "stdio/initialized-before-first-request", "request id is not a string or an integer"),
    // A driver that drops a plan field fails the driver self-test (never baselined).
    driver(v(
        "ignores-configured-headers",
        "driver-selftest/connect-headers",
        "lacked Authorization: Bearer <redacted:1>",
    )),
    // The OAuth client's (clients/reference/oauth.py, `connect.oauth`).
    v("pkce-plain", "auth/pkce-s256", "lacked code_challenge_method=S256 (one had code_challenge_method=plain)"),
    v(
        "ignores-pkce-support",
        "auth/pkce-not-advertised-refuses",
        "the client sent 1 HTTP request(s) to /authorize, expected 0",
    ),
    v(
        "no-resource-parameter",
        "auth/resource-parameter",
        "/authorize request(s) lacked resource={origin}/mcp (one had no resource)",
    ),
    v(
        "refresh-without-resource",
        "auth/token-expiry-refreshes",
        "1 of the client's 2 /token request(s) lacked resource={origin}/mcp (one had no resource)",
    ),
    v(
        "resource-metadata-root-first",
        "auth/no-resource-metadata-in-401",
        "the client sent no GET request(s) to /.well-known/oauth-protected-resource/mcp",
    ),
    v(
        "openid-before-oauth-metadata",
        "auth/as-metadata-oauth-404-openid",
        "the client sent no HTTP request(s) to /.well-known/oauth-authorization-server",
    ),
    v(
        "skips-issuer-check",
        "auth/issuer-mismatch-refused",
        "the client sent 1 HTTP request(s) to /register, expected 0",
    ),
    v(
        "skips-resource-check",
        "auth/resource-metadata-other-resource",
        "the client sent 1 HTTP request(s) to /.well-known/oauth-authorization-server, expected 0",
    ),
    v(
        "no-default-endpoints",
        "auth/legacy-2025-03-26-default-endpoints",
        "the client sent 0 POST request(s) to /register, expected 1",
    ),
    v(
        "follows-cross-origin-redirect",
        "auth/redirect-to-other-origin-keeps-token",
        "the client sent 1 HTTP request(s) to /elsewhere/mcp, expected 0",
    ),
    v(
        "keeps-rotated-refresh-token",
        "auth/refresh-rotation",
        "1 of the client's /token (answered 400) request(s) carried grant_type=refresh_token, expected 0",
    ),
    v(
        "token-to-oauth-requests",
        "auth/oauth-requests-carry-no-token",
        "request(s) to /token with Authorization, expected 0",
    ),
    v(
        "token-in-query",
        "auth/flow-dynamic-registration",
        "the client sent 0 HTTP initialize request(s) with Authorization: Bearer <redacted:1>, expected 1",
    ),
    v(
        "ignores-challenge-scope",
        "auth/scope-from-challenge",
        "lacked scope=mcp:tools (one had scope=mcp:admin mcp:resources mcp:tools)",
    ),
    // Retry limits on step-up are SHOULDs (2025-11-25 basic/authorization, Step-Up
    // Authorization Flow): a warning.
    should(v(
        "unbounded-step-up",
        "auth/step-up-loop-bounded",
        "the client sent 3 HTTP request(s) to /authorize, expected 2",
    )),
    v(
        "openid-appended-before-inserted",
        "auth/as-metadata-issuer-path-order",
        "the client sent no HTTP request(s) to /.well-known/openid-configuration/tenant1",
    ),
    // The registration priority and the Client ID Metadata Document capability check are
    // SHOULDs (2025-11-25 basic/authorization, Client Registration Approaches): warnings.
    should(v(
        "cimd-without-support",
        "auth/cimd-unsupported-registers",
        "the client sent 0 POST request(s) to /register, expected 1",
    )),
    should(v(
        "ignores-cimd-support",
        "auth/client-id-metadata-document",
        "the client sent 1 HTTP request(s) to /register, expected 0",
    )),
    should(v(
        "guesses-register-endpoint",
        "auth/no-registration-no-client",
        "the client sent 1 HTTP request(s) to /register, expected 0",
    )),
    should(v(
        "registers-despite-client-id",
        "auth/pre-registered-client",
        "the client sent 1 HTTP request(s) to /register, expected 0",
    )),
    v(
        "authorizes-after-refused-registration",
        "auth/registration-refused",
        "the client sent 1 HTTP request(s) to /authorize, expected 0",
    ),
    v(
        "issuer-from-origin-without-resource-metadata",
        "auth/resource-metadata-missing-everywhere",
        "the client sent 1 HTTP request(s) to /.well-known/oauth-authorization-server, expected 0",
    ),
    v(
        "skips-root-resource-metadata",
        "auth/resource-metadata-path-404-root",
        "the client sent 0 GET request(s) to /.well-known/oauth-protected-resource, expected 1",
    ),
    v(
        "treats-2025-06-18-as-2025-03-26",
        "auth/revision-2025-06-18-rfc8414",
        "the client sent 0 HTTP request(s) to /.well-known/oauth-protected-resource/mcp, expected 1",
    ),
    // Scope selection and step-up are SHOULDs (2025-11-25 basic/authorization, Scope
    // Selection Strategy; Step-Up Authorization Flow): warnings.
    should(v(
        "ignores-scopes-supported",
        "auth/scope-from-scopes-supported",
        "lacked scope=mcp:resources mcp:tools (one had scope=configured:scope)",
    )),
    should(v(
        "no-step-up",
        "auth/step-up-insufficient-scope",
        "0 of the client's /authorize request(s) carried scope=files:read files:write, expected 1",
    )),
    v("retries-failed-flow", "auth/token-endpoint-400", "the client sent 2 HTTP request(s) to /authorize, expected 1"),
    v("retries-token-on-5xx", "auth/token-endpoint-500", "the client sent 2 POST request(s) to /token, expected 1"),
    // "MCP clients SHOULD use and verify state parameters … and discard any results that do
    // not include or have a mismatch with the original state" (2025-11-25 basic/authorization,
    // Open Redirection): warnings.
    should(v(
        "ignores-state",
        "auth/state-altered-discarded",
        "the client sent 1 HTTP request(s) to /token, expected 0",
    )),
    should(v(
        "accepts-missing-state",
        "auth/state-omitted-discarded",
        "the client sent 1 HTTP request(s) to /token, expected 0",
    )),
];

const fn v(bug: &'static str, scenario: &'static str, message: &'static str) -> Variant {
    Variant { bug, scenario, message, caught_as: Level::Must }
}

/// `variant` caught as a robustness finding (a flood, a crash) rather than a MUST failure.
const fn robustness(variant: Variant) -> Variant {
    Variant { caught_as: Level::Robustness, ..variant }
}

/// `variant` caught as a SHOULD warning.
const fn should(variant: Variant) -> Variant {
    Variant { caught_as: Level::Should, ..variant }
}

/// `variant` caught by the driver self-test (a failure of the driver, never baselined).
const fn driver(variant: Variant) -> Variant {
    Variant { caught_as: Level::Driver, ..variant }
}

/// How many runs at once: the client is an interpreter, so its runs cost CPU at start-up,
/// but most of a run waits on the mock.
const PARALLEL: usize = 6;

/// Whether a failed check counts: one resting on an MCP MUST, or one not yet classified
/// (judged as a MUST until someone reads the spec for it). `result.failures` already holds
/// only those for a third-party target; this says so where the test relies on it.
fn counts(failure: &CheckResult) -> bool {
    matches!(failure.level, Level::Must | Level::Unclassified)
}

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub(crate) fn launcher(bug: Option<&str>) -> Target {
    let run = root().join("clients/reference/run");
    let run = std::path::absolute(run).expect("absolute path");
    Target::cmd(match bug {
        Some(b) => format!("{} --bug {b}", run.display()),
        None => run.display().to_string(),
    })
}

pub(crate) fn config(target: Target) -> Arc<RunConfig> {
    Arc::new(RunConfig::new(target, vec![env!("CARGO_BIN_EXE_mcp-harness").to_string(), "mock".into()]))
}

pub(crate) fn jobs_for(paths: &[PathBuf], target: &Target) -> Vec<Job> {
    let loaded = paths.iter().map(|p| (p.clone(), mcp_harness::load(p).unwrap_or_else(|e| panic!("{e}")))).collect();
    runner::jobs(loaded, target)
}

fn scenario_path(name: &str) -> PathBuf {
    root().join("scenarios").join(format!("{name}.yaml"))
}

/// Runs every (job, config) pair, `PARALLEL` at a time; `tag` travels with each.
async fn run_all<T>(work: Vec<(Job, Arc<RunConfig>, T)>) -> Vec<(Job, RunResult, T)> {
    futures::stream::iter(work)
        .map(|(job, config, tag)| async move {
            let result = runner::run_one(&job, &config).await;
            (job, result, tag)
        })
        .buffer_unordered(PARALLEL)
        .collect()
        .await
}

/// What is wrong with the reference client's run, if anything.
fn reference_problem(job: &Job, result: &RunResult) -> Option<String> {
    let name = format!("{} [{}]", job.path.display(), job.transport.as_str());
    match result.status {
        // A step the reference client declares unsupported is its own, stated limit.
        Status::Skipped if result.reason.as_deref().is_some_and(|r| r.contains("unsupported")) => None,
        // Every check of the scenario is SPEC.md's: nothing there judges a third-party client.
        Status::NotApplicable => None,
        Status::Skipped | Status::Error | Status::Pending | Status::NotRun | Status::NotExercised => {
            Some(format!("{name}: {:?}: {:?}", result.status, result.reason))
        }
        _ => {
            let failed: Vec<String> =
                result.failures.iter().filter(|f| counts(f)).map(|f| format!("{}: {}", f.check, f.message)).collect();
            (!failed.is_empty()).then(|| format!("{name} failed:\n  {}\n{}", failed.join("\n  "), result.transcript))
        }
    }
}

/// A variant must fail a counting check whose message names its bug's effect (or, for a
/// SHOULD, be warned by one).
fn variant_problem(variant: &Variant, result: &RunResult) -> Option<String> {
    let names = |f: &CheckResult| f.level == variant.caught_as && f.message.contains(variant.message);
    let bit = match variant.caught_as {
        Level::Must => result.failures.iter().any(|f| counts(f) && f.message.contains(variant.message)),
        Level::Driver | Level::Promise => result.failures.iter().any(names),
        Level::Should | Level::Robustness => result.warnings.iter().any(names),
        // A note is no verdict: a planted bug caught only as one is not caught.
        Level::Project | Level::Unclassified => false,
    };
    (!bit).then(|| {
        // Why the run came out as it did, for a failure seen once under load.
        let steps: Vec<String> =
            result.steps.iter().map(|s| format!("{} {:?} {} ms", s.what, s.status, s.elapsed_ms)).collect();
        format!(
            "--bug {} on {}: expected a failure containing {:?}, got {:?} {:?}\n  reason: {:?}\n  steps: {steps:?}\n  load: {:?}\n  took {} ms",
            variant.bug,
            variant.scenario,
            variant.message,
            result.status,
            result.failures,
            result.reason,
            result.load,
            result.duration_ms
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_planted_bug_is_caught_and_the_reference_client_passes_the_same_scenarios() {
    let reference = config(launcher(None));
    let mut scenarios: Vec<PathBuf> = VARIANTS.iter().map(|v| scenario_path(v.scenario)).collect();
    scenarios.sort();
    scenarios.dedup();
    let mut work: Vec<(Job, Arc<RunConfig>, Option<&Variant>)> =
        jobs_for(&scenarios, &reference.target).into_iter().map(|j| (j, reference.clone(), None)).collect();
    let reference_runs = work.len();
    for v in VARIANTS {
        let variant = config(launcher(Some(v.bug)));
        let jobs = jobs_for(&[scenario_path(v.scenario)], &variant.target);
        assert_eq!(jobs.len(), 1, "{} runs on one transport", v.scenario);
        work.extend(jobs.into_iter().map(|j| (j, variant.clone(), Some(v))));
    }
    let results = run_all(work).await;

    let mut problems = Vec::new();
    for (job, result, variant) in &results {
        match variant {
            Some(v) => problems.extend(variant_problem(v, result)),
            None => problems.extend(reference_problem(job, result)),
        }
    }
    assert_eq!(results.len(), reference_runs + VARIANTS.len());
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The reference client passes every driver self-test scenario or reports the field
/// unsupported (a skip): the self-test holds the `cmd:` contract's plan fields to the wire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_client_passes_the_driver_selftest() {
    let reference = config(launcher(None));
    let mut paths = Vec::new();
    collect_yaml(&root().join("scenarios/driver-selftest"), &mut paths);
    paths.sort();
    assert!(paths.len() >= 20, "the driver self-test has a scenario per plan field");
    let work = jobs_for(&paths, &reference.target).into_iter().map(|j| (j, reference.clone(), ())).collect();
    let results = run_all(work).await;
    let problems: Vec<String> = results
        .iter()
        .filter_map(|(job, result, ())| match result.status {
            Status::Skipped => None,
            _ if !result.failures.is_empty() => Some(format!("{}: {:?}", job.path.display(), result.failures)),
            _ => None,
        })
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert!(results.iter().filter(|(_, r, ())| r.status == Status::Passed).count() >= 15, "most fields are applied");
}

/// A script stopped by the mock's own refusal says so, instead of "the client never got that
/// far": the variant that drops the session id did send `notifications/initialized`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_stopped_by_a_refusal_names_the_refused_request() {
    let variant = config(launcher(Some("ignores-session-id")));
    let job = jobs_for(&[scenario_path("http/session-capture-and-resend")], &variant.target).remove(0);
    let result = runner::run_one(&job, &variant).await;
    let stopped = result.failures.iter().find(|f| f.check == "always: server script completes");
    let message = stopped.map(|f| f.message.as_str()).unwrap_or_default();
    assert!(
        message.contains(
            "the client did send, but the mock refused POST notifications/initialized with 400 (session missing)"
        ),
        "{:?}",
        result.failures
    );
}

/// Every bug the client knows is covered above, and every variant above is a bug it knows.
#[test]
fn every_planted_bug_has_a_catching_scenario() {
    let out =
        std::process::Command::new(root().join("clients/reference/run")).arg("--list-bugs").output().expect("run");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let listed: Vec<String> =
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| l.split('\t').next()).map(String::from).collect();
    let covered: Vec<String> = VARIANTS.iter().map(|v| v.bug.to_string()).collect();
    assert_eq!(listed, covered, "clients/reference/client.py BUGS and VARIANTS differ");
    assert!(
        VARIANTS.iter().filter(|v| v.caught_as == Level::Must).count() >= 12,
        "at least 12 variants caught by a MUST"
    );
    let as_notes: Vec<&str> = VARIANTS
        .iter()
        .filter(|v| matches!(v.caught_as, Level::Project | Level::Unclassified))
        .map(|v| v.bug)
        .collect();
    assert!(as_notes.is_empty(), "caught only as a note, which is no verdict: {as_notes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the whole library: tens of seconds; `make reference` runs it"]
async fn reference_client_passes_the_library() {
    let reference = config(launcher(None));
    let mut paths = Vec::new();
    collect_yaml(&root().join("scenarios"), &mut paths);
    paths.sort();
    let work = jobs_for(&paths, &reference.target).into_iter().map(|j| (j, reference.clone(), ())).collect();
    let problems: Vec<String> =
        run_all(work).await.iter().filter_map(|(job, result, ())| reference_problem(job, result)).collect();
    assert!(problems.is_empty(), "{} run(s) failed:\n\n{}", problems.len(), problems.join("\n\n"));
}

/// The strict variant (`--strict`: only negotiated capabilities; over stdio a probe copy of
/// the server asked `server/discover` before the real session, as some SDKs do; over
/// Streamable HTTP `server/discover` before `initialize`) is judged
/// as truly as the lenient one: over the whole library (quick pass) no failure and no
/// warning. The mock advertises what each scenario uses and leaves the script to the
/// process after a probe, or this fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_strict_reference_client_passes_the_library() {
    let mut paths = Vec::new();
    collect_yaml(&root().join("scenarios"), &mut paths);
    paths.sort();
    let target = target_strict();
    let mut jobs = jobs_for(&paths, &target);
    jobs.retain(|j| j.scenario.deadline_ms < 30_000);
    let results = runner::run_all(jobs, config(target), 8, 8, Arc::new(|_: &RunResult| {})).await;
    assert!(results.len() > 300, "the whole library ran ({} runs)", results.len());
    let problems: Vec<String> = results
        .iter()
        .filter_map(|r| {
            let warned: Vec<String> = r.warnings.iter().map(|w| format!("{}: {}", w.check, w.message)).collect();
            let failed = matches!(r.status, Status::Failed | Status::Error | Status::NotExercised | Status::Warned);
            (failed || !warned.is_empty()).then(|| {
                format!("{} [{}]: {:?} {:?} {warned:?}", r.scenario, r.transport.as_str(), r.status, r.failures)
            })
        })
        .collect();
    assert!(problems.is_empty(), "{} run(s):\n{}", problems.len(), problems.join("\n"));
    let passed = results.iter().filter(|r| r.status == Status::Passed).count();
    assert!(passed > 50, "only {passed} runs passed");

    // It really validates: a listing whose tool lacks `inputSchema` is refused.
    let (_dir, malformed) = crate::files::file_in_tempdir(
        "malformed-listing.yaml",
        "name: malformed-listing\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\ndeviations:\n  3: \"a tool without inputSchema\"\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {\"tools\": [{\"name\": \"t\"}]}\nchecks:\n  - outcome: {step: 2, ok: false}\n    project: \"a strict client refuses a result its schema does not allow\"\n",
    );
    let job = jobs_for(&[malformed], &config(target_strict()).target).remove(0);
    let result = runner::run_one(&job, &config(target_strict())).await;
    let step = result.steps.iter().find(|s| s.step == 2).expect("step 2 ran");
    assert!(
        step.error.as_deref().is_some_and(|e| e.contains("invalid tools/list result") && e.contains("inputSchema")),
        "{step:?}\n{}",
        result.transcript
    );
}

fn target_strict() -> Target {
    let run = std::path::absolute(root().join("clients/reference/run")).expect("absolute path");
    Target::cmd(format!("{} --strict", run.display()))
}

/// Appends every scenario file under `dir`.
pub(crate) fn collect_yaml(dir: &Path, out: &mut Vec<PathBuf>) {
    crate::files::collect_with_extension(dir, "yaml", out);
}

/// DESIGN "A verdict is earned": a client that exits at once, one that hangs, and one that
/// connects and then idles pass nothing in the whole library (quick pass: the one `slow`
/// scenario only waits longer); one that connects and then reports every plan step ok
/// without doing it passes no plan that asks for a request without a warning. Runs go through the real
/// runner at high parallelism: these clients mostly wait on their deadlines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_do_nothing_pass_nothing() {
    let mut paths = Vec::new();
    collect_yaml(&root().join("scenarios"), &mut paths);
    paths.sort();
    let run = |client: &'static str| {
        let command = std::path::absolute(root().join("clients/selftest").join(client)).expect("absolute path");
        let target = Target::cmd(command.display().to_string());
        let mut jobs = jobs_for(&paths, &target);
        jobs.retain(|j| j.scenario.deadline_ms < 30_000);
        async move { (client, runner::run_all(jobs, config(target), 48, 16, Arc::new(|_: &RunResult| {})).await) }
    };
    let (null, hang, idle, claims) = tokio::join!(run("null"), run("hang"), run("idle"), run("claims"));
    // The lying client reports its close ok and exits: the mock's stdin ends as its process
    // exits, which is no close of the client's (the mock records its parent exiting).
    let close = claims.1.iter().find(|r| r.scenario == "close-sequence").expect("close-sequence ran");
    let stdin = close.judged.iter().find(|j| j.check.ends_with("(stdin_closed)")).expect("stdin_closed judged");
    assert_eq!(stdin.judgement, mcp_results::Judgement::Unmet, "{:?}", close.warnings);
    assert!(
        close.warnings.iter().any(|w| w.check == "always: stdio shutdown closes stdin first"),
        "the shutdown rule missed the lying client's exit: {:?}",
        close.warnings
    );
    let asks_for_a_request = |r: &RunResult| {
        let scenario = mcp_harness::load(&r.path).expect("loads");
        scenario.client.iter().any(|s| matches!(s, mcp_scenario::ClientStep::Request { .. }))
    };
    for (client, results) in [null, hang, idle, claims] {
        assert!(results.len() > 300, "{client}: the whole library ran ({} runs)", results.len());
        let passed: Vec<String> = results
            .iter()
            .filter(|r| r.status == Status::Passed)
            // The lying client may pass a plan it was only asked to connect in, and pass with the
            // warnings of the SHOULDs it broke where its lie is not visible on the wire.
            .filter(|r| client != "claims" || (asks_for_a_request(r) && r.warnings.is_empty()))
            .map(|r| format!("{} [{}]", r.scenario, r.transport.as_str()))
            .collect();
        assert!(passed.is_empty(), "the {client} client passed {} run(s): {passed:?}", passed.len());
        // Never met is not exercised, never failed on the scenario's checks.
        if client == "null" || client == "hang" {
            let failed: Vec<String> = results
                .iter()
                .filter(|r| r.status == Status::Failed)
                .map(|r| format!("{} [{}]: {:?}", r.scenario, r.transport.as_str(), r.failures))
                .collect();
            assert!(failed.is_empty(), "the {client} client never connected, yet failed: {failed:?}");
        }
    }
}
