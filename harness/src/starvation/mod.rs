//! Runs the machine starved: the harness measures its own scheduling lag during every run
//! ([`lag`]), and on stdio, for a client whose connect clock counts the server's start-up,
//! how much later than the client's usual start-up the server it spawned started serving (a
//! machine slow to start a process eats the handshake's bound as a lag does); a run during
//! which the lag passed the scenario's timing margin ([`margin`]) gave a verdict that may
//! rest on the load rather than on the client, so it is run again — at a quarter of the pass's parallelism ([`RERUN_DIVISOR`]; one at a time in the cores' count
//! for a lone `run_one`), so the re-runs meet less contention than the runs they check —
//! until an attempt is not starved (at most [`MAX_RERUNS`]). A run the deadline ended is
//! held to the deadline's slack instead ([`margin::Margins::slack`]): a lag shorter than the room the
//! plan had left cannot have made it hang; its lag also counts how long the client waited for
//! a CPU and, over HTTP, how much later than its usual start-up it first reached the mock. The attempt the
//! machine did not starve is the evidence: when it gives the first attempt's verdict, that
//! verdict stands (as the last attempt reports it); when it differs — or, with every attempt
//! starved, when any two differ — the run is `flaky_under_load`, with each attempt's verdict
//! and lag, never a plain failure or pass.
//!
//! A run the deadline ended while its client was in the plan's own `wait` step
//! ([`crate::checks::cut_in_plan_wait`]) is starved whatever lag the harness measured in its
//! own process (a client starved of CPU took the room the deadline left beside the wait), and
//! such an attempt, having finished no plan, has no verdict to weigh against another; nor has
//! a starved attempt the deadline ended (its lag, the client's wait for a CPU among it, was
//! past the room the plan had: the hang may be the machine's) that failed only on the plan
//! steps its hang left unreported (an id it reused before hanging still counts), nor one that
//! left the run *not exercised* (its client never met the fault, so nothing of its handling
//! was judged), *not applicable* or *skipped* (a step its driver could not take): none judged
//! the client. The attempt the machine did not starve decides.
//!
//! Test hook: `MCP_HARNESS_TEST_LAG=<scenario>=<ms>[,<scenario>=<ms>…]` adds that much lag
//! to the measurement of each named scenario's first attempt, to force the re-run path
//! without loading the machine.
//!
//! # Layout
//!
//! - [`lag`] — the scheduling lag of a run.
//! - [`margin`] — a scenario's timing margin.

pub mod lag;
pub mod margin;

use mcp_results::{Attempt, Load, RunResult, Status};
use mcp_scenario::Scenario;
use std::future::Future;
use std::time::Duration;

/// The test hook's environment variable (see the module doc).
pub const TEST_LAG_ENV: &str = "MCP_HARNESS_TEST_LAG";

/// Re-runs of one starved run, at most.
pub const MAX_RERUNS: usize = 2;

/// Re-runs go at the pass's parallelism divided by this.
pub const RERUN_DIVISOR: usize = 4;

/// The re-run slots of runs started one by one ([`crate::runner::run_one`]): the cores'
/// count.
pub fn default_reruns() -> &'static tokio::sync::Semaphore {
    static SLOTS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    SLOTS.get_or_init(|| {
        tokio::sync::Semaphore::new(std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
    })
}

/// One attempt and what was measured during it.
pub struct Measured {
    /// The attempt's result.
    pub result: RunResult,
    /// The scheduling lag (or the stdio server's late start) measured during it.
    pub lag: Duration,
    /// The run's deadline ended it before its plan finished.
    pub hung: bool,
    /// It ended it in the plan's own `wait` ([`crate::checks::cut_in_plan_wait`]): the
    /// client was not hung, the machine too slow for the scenario's deadline, whatever lag
    /// the harness measured in its own process.
    pub cut_in_wait: bool,
    /// The deadline ended it, and it failed only on outcome checks of the plan steps it
    /// never reported ([`crate::checks::failed_by_the_hang_alone`]): starved, that is no
    /// verdict on the client.
    pub failed_by_hang: bool,
}

/// Runs `attempt` once, and again, each re-run holding a slot of `reruns`, while the machine
/// starves it (see the module doc).
pub async fn settle<F, Fut>(scenario: &Scenario, reruns: &tokio::sync::Semaphore, mut attempt: F) -> RunResult
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Measured>,
{
    let first = attempt().await;
    let lag = first.lag + injected(scenario);
    // Both limits are at least the floor: below it no run needs its scenario walked.
    if (lag <= margin::FLOOR && !first.cut_in_wait) || !is_verdict(first.result.status) {
        return first.result;
    }
    let margins = margin::of(scenario);
    let limit = |m: &Measured| if m.hung { margins.slack } else { margins.timing };
    let starved = |m: &Measured, lag: Duration| m.cut_in_wait || lag > limit(m);
    if !starved(&first, lag) {
        return first.result;
    }
    let mut attempts = vec![summary(&first.result, lag)];
    // A starved attempt the deadline ended in the plan's own wait, or that failed only on the
    // steps its hang left unreported, finished no plan for the machine's sake; a starved one
    // whose client never met the fault judged nothing of its handling, and one not applicable
    // or skipped judged nothing of the client at all: none has a verdict to weigh against
    // another.
    let judged_nothing = |status| matches!(status, Status::NotExercised | Status::NotApplicable | Status::Skipped);
    let no_verdict = |m: &Measured| m.cut_in_wait || m.failed_by_hang || judged_nothing(m.result.status);
    let mut cut = vec![no_verdict(&first)];
    let mut last = first.result;
    let Ok(_slot) = reruns.acquire().await else { return last };
    let mut settled = false;
    for _ in 0..MAX_RERUNS {
        let next = attempt().await;
        attempts.push(summary(&next.result, next.lag));
        settled = !starved(&next, next.lag);
        cut.push(!settled && no_verdict(&next));
        last = next.result;
        if settled {
            break;
        }
    }
    let verdict = |a: &Attempt| (a.status, a.failed.clone());
    // An attempt the machine did not starve is the evidence: the first verdict holds when it
    // agrees, whatever a starved re-run in between said. Without one, any disagreement is.
    let verdicts: Vec<&Attempt> = attempts.iter().zip(&cut).filter(|(_, cut)| !**cut).map(|(a, _)| a).collect();
    let differs = match (verdicts.first(), verdicts.last()) {
        (Some(first), Some(unstarved)) if settled => verdict(first) != verdict(unstarved),
        _ => verdicts.windows(2).any(|w| verdict(w[0]) != verdict(w[1])),
    };
    if differs {
        last.reason = Some(flaky_reason(&attempts, margins.timing));
        last.status = Status::FlakyUnderLoad;
    }
    last.load = Some(Load { margin_ms: margins.timing.as_millis() as u64, attempts });
    last
}

/// A status that is a verdict on the client (a skip, a pending or not-run scenario ran
/// nothing). An error is one too here: starved, a mock or driver may miss its start-up.
fn is_verdict(status: Status) -> bool {
    !matches!(status, Status::Skipped | Status::Pending | Status::NotRun)
}

fn summary(result: &RunResult, lag: Duration) -> Attempt {
    let mut failed: Vec<String> = result.failures.iter().map(|f| f.check.clone()).collect();
    failed.sort();
    failed.dedup();
    Attempt { status: result.status, failed, lag_ms: lag.as_millis() as u64 }
}

fn flaky_reason(attempts: &[Attempt], margin: Duration) -> String {
    let said: Vec<String> = attempts
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let failed = if a.failed.is_empty() { String::new() } else { format!(" ({})", a.failed.join(", ")) };
            format!("attempt {} {}{failed} with {} ms of lag", i + 1, a.status.as_str(), a.lag_ms)
        })
        .collect();
    format!(
        "the machine starved this run (the harness's scheduling lag passed the scenario's {} ms timing margin) and the attempts disagree: {}. The verdict depends on the load: run it on a quieter machine or with fewer runs at once (-j)",
        margin.as_millis(),
        said.join("; ")
    )
}

/// The test hook's lag for this scenario (zero unless `MCP_HARNESS_TEST_LAG` names it).
fn injected(scenario: &Scenario) -> Duration {
    let Ok(spec) = std::env::var(TEST_LAG_ENV) else { return Duration::ZERO };
    spec.split(',')
        .filter_map(|entry| entry.trim().split_once('='))
        .find(|(name, _)| *name == scenario.name)
        .and_then(|(_, ms)| ms.trim().parse().ok())
        .map_or(Duration::ZERO, Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_results::CheckResult;

    fn scenario() -> Scenario {
        let text = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\n    timeout_ms: 300\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: delay\n    ms: 700\n  - op: reply\n    result: {\"tools\": []}\nchecks:\n  - outcome: {step: 2, ok: false}\n    project: \"SPEC §3\"\n";
        mcp_scenario::load::parse(std::path::Path::new("t.yaml"), text).expect("a scenario")
    }

    fn result(status: Status, failed: &[&str]) -> RunResult {
        let mut r: RunResult = serde_json::from_value(serde_json::json!({
            "scenario": "t", "path": "t.yaml", "transport": "stdio", "status": status.as_str(),
        }))
        .expect("a run");
        r.failures = failed
            .iter()
            .map(|c| CheckResult {
                check: c.to_string(),
                message: "m".into(),
                level: mcp_scenario::basis::Level::Must,
                reference: None,
                about: Vec::new(),
            })
            .collect();
        r
    }

    /// Runs `settle` over scripted attempts: each (status, failed checks, lag in ms).
    async fn settled(script: Vec<(Status, Vec<&'static str>, u64)>) -> (RunResult, usize) {
        let mut script = script.into_iter();
        let mut made = 0;
        let slots = tokio::sync::Semaphore::new(1);
        let r = settle(&scenario(), &slots, || {
            made += 1;
            let (status, failed, lag) = script.next().expect("no more attempts were scripted");
            std::future::ready(Measured {
                result: result(status, &failed),
                lag: Duration::from_millis(lag),
                hung: false,
                cut_in_wait: false,
                failed_by_hang: false,
            })
        })
        .await;
        (r, made)
    }

    #[tokio::test]
    async fn a_run_the_machine_did_not_starve_runs_once() {
        let (r, made) = settled(vec![(Status::Failed, vec!["check 2 (outcome)"], 20)]).await;
        assert_eq!((r.status, made, r.load), (Status::Failed, 1, None));
    }

    #[tokio::test]
    async fn a_starved_verdict_that_holds_is_reported_as_it_is_with_its_attempts() {
        let (r, made) = settled(vec![(Status::Passed, vec![], 900), (Status::Passed, vec![], 10)]).await;
        assert_eq!((r.status, made), (Status::Passed, 2));
        let load = r.load.expect("the attempts are recorded");
        assert_eq!(load.margin_ms, 300);
        assert_eq!(load.attempts.iter().map(|a| a.lag_ms).collect::<Vec<_>>(), [900, 10]);
    }

    #[tokio::test]
    async fn a_starved_verdict_that_changes_is_flaky_under_load_never_a_pass_or_failure() {
        let (r, made) =
            settled(vec![(Status::Failed, vec!["check 2 (outcome)"], 900), (Status::Passed, vec![], 10)]).await;
        assert_eq!((r.status, made), (Status::FlakyUnderLoad, 2));
        let reason = r.reason.expect("a reason");
        assert!(reason.contains("attempt 1 failed (check 2 (outcome)) with 900 ms of lag"), "{reason}");
        assert!(reason.contains("attempt 2 passed with 10 ms of lag"), "{reason}");
        // The same status with another failed check is another verdict too.
        let (r, _) = settled(vec![
            (Status::Failed, vec!["check 1 (sent)"], 900),
            (Status::Failed, vec!["check 2 (outcome)"], 0),
        ])
        .await;
        assert_eq!(r.status, Status::FlakyUnderLoad);
    }

    #[tokio::test]
    async fn a_starved_re_run_is_no_evidence_against_an_unstarved_one_that_agrees() {
        let (r, made) = settled(vec![
            (Status::Passed, vec![], 900),
            (Status::Failed, vec!["check 2 (outcome)"], 800),
            (Status::Passed, vec![], 10),
        ])
        .await;
        assert_eq!((r.status, made), (Status::Passed, 3));
        // Starved throughout, the disagreement is all there is.
        let (r, _) = settled(vec![
            (Status::Passed, vec![], 900),
            (Status::Failed, vec!["check 2 (outcome)"], 800),
            (Status::Passed, vec![], 700),
        ])
        .await;
        assert_eq!(r.status, Status::FlakyUnderLoad);
    }

    #[tokio::test]
    async fn re_runs_stop_at_the_first_unstarved_attempt_and_are_bounded() {
        let (_, made) =
            settled(vec![(Status::Passed, vec![], 900), (Status::Passed, vec![], 800), (Status::Passed, vec![], 700)])
                .await;
        assert_eq!(made, 1 + MAX_RERUNS);
    }

    #[tokio::test]
    async fn a_run_the_deadline_ended_is_re_run_only_for_a_lag_the_plan_had_no_room_for() {
        // The scenario's deadline is 3000 ms and its longest time 700 ms: 2300 ms of slack.
        for (lag, runs) in [(900, 1), (2400, 2)] {
            let slots = tokio::sync::Semaphore::new(1);
            let mut made = 0;
            settle(&scenario(), &slots, || {
                made += 1;
                let lag = if made == 1 { lag } else { 0 };
                std::future::ready(Measured {
                    result: result(Status::NotExercised, &[]),
                    lag: Duration::from_millis(lag),
                    hung: true,
                    cut_in_wait: false,
                    failed_by_hang: false,
                })
            })
            .await;
            assert_eq!(made, runs, "a hung run with {lag} ms of lag");
        }
    }

    #[tokio::test]
    async fn a_run_the_deadline_cut_in_the_plans_own_wait_is_re_run_whatever_the_lag() {
        // The harness measured no lag, but the client was in its plan's `wait`, not hung: the
        // steps before it took the room the deadline left, which only a starved machine does.
        let slots = tokio::sync::Semaphore::new(1);
        let mut made = 0;
        let r = settle(&scenario(), &slots, || {
            made += 1;
            let cut = made == 1;
            std::future::ready(Measured {
                result: result(if cut { Status::NotExercised } else { Status::Passed }, &[]),
                lag: Duration::from_millis(5),
                hung: cut,
                cut_in_wait: cut,
                failed_by_hang: false,
            })
        })
        .await;
        // The cut attempt finished no plan, so it is no verdict against the re-run's.
        assert_eq!((made, r.status), (2, Status::Passed));
        assert_eq!(r.load.expect("the attempts are recorded").attempts.len(), 2);
    }

    #[tokio::test]
    async fn a_starved_attempt_that_never_met_the_fault_is_no_verdict_against_an_unstarved_one() {
        // Seen under the heavy soak: starved, the client never met the fault; the re-run did,
        // and nothing there judges a third-party client.
        let (r, made) = settled(vec![(Status::NotExercised, vec![], 900), (Status::NotApplicable, vec![], 10)]).await;
        assert_eq!((r.status, made), (Status::NotApplicable, 2));
        // An unstarved attempt that left it not exercised is evidence like any other.
        let (r, _) = settled(vec![(Status::Passed, vec![], 900), (Status::NotExercised, vec![], 10)]).await;
        assert_eq!(r.status, Status::FlakyUnderLoad);
    }

    #[tokio::test]
    async fn starved_attempts_that_judged_nothing_never_make_a_run_flaky() {
        // Seen under the heavy soak (Python 2.x, a step its SDK cannot take): the starved first
        // attempt's connect gave up before that step, so nothing applied; the two starved
        // re-runs reached the step and were skipped. No attempt judged the client.
        let (r, made) = settled(vec![
            (Status::NotApplicable, vec![], 900),
            (Status::Skipped, vec![], 800),
            (Status::Skipped, vec![], 700),
        ])
        .await;
        assert_eq!((r.status, made), (Status::Skipped, 3));
        // Against an attempt that judged, a starved one that did not is no evidence.
        let (r, _) =
            settled(vec![(Status::NotApplicable, vec![], 900), (Status::Failed, vec!["check 2 (outcome)"], 10)]).await;
        assert_eq!(r.status, Status::Failed);
    }

    #[tokio::test]
    async fn a_starved_hang_failed_only_by_its_unreported_steps_is_no_verdict() {
        // Seen under the heavy soak: an OAuth connect waited 5.3 s for a CPU against a 3 s
        // deadline and hung, failing only the connect's outcome check; the re-run, unstarved,
        // passed. A hung attempt that failed on what it sent (an id reused) is a verdict.
        for (failed_by_hang, status) in [(true, Status::Passed), (false, Status::FlakyUnderLoad)] {
            let slots = tokio::sync::Semaphore::new(1);
            let mut made = 0;
            let r = settle(&scenario(), &slots, || {
                made += 1;
                let first = made == 1;
                std::future::ready(Measured {
                    result: result(if first { Status::Failed } else { Status::Passed }, &[]),
                    lag: Duration::from_millis(if first { 5300 } else { 30 }),
                    hung: first,
                    cut_in_wait: false,
                    failed_by_hang: first && failed_by_hang,
                })
            })
            .await;
            assert_eq!((made, r.status), (2, status), "failed by the hang alone: {failed_by_hang}");
        }
    }

    #[tokio::test]
    async fn a_run_that_ran_nothing_is_never_re_run() {
        let (r, made) = settled(vec![(Status::Skipped, vec![], 5000)]).await;
        assert_eq!((r.status, made), (Status::Skipped, 1));
    }
}
