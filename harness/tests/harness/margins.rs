//! The library's timing margins: a request's timeout lies at least [`LOAD_MARGIN_MS`] from
//! each server `delay` of its scenario when progress restarts it, and otherwise (and a
//! `max_total_timeout_ms` always) from each send's time since the script's last `expect`. Closer than that, which comes first depends on how loaded the machine is:
//! `make soak` (many runs at once beside a CPU hog) saw a 100 ms progress gap under a
//! 200 ms timeout expire, and a timeout 100 ms after the last progress race it.

use mcp_scenario::{ClientStep, ServerStep};

/// How late a loaded 2-core machine was seen to deliver a mock's timed step, with room.
const LOAD_MARGIN_MS: u64 = 250;

#[test]
fn request_timeouts_keep_clear_of_the_scripts_delays() {
    let pattern = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/**/*.yaml");
    let mut close = std::collections::BTreeSet::new();
    let mut seen = 0;
    for path in glob::glob(pattern).expect("pattern").flatten() {
        let scenario = mcp_harness::load(&path).unwrap_or_else(|e| panic!("{e}"));
        seen += 1;
        // Each delay (a gap between sends, what a progress-restarted timeout races) and each
        // send's time since the script's last `expect` (what a plain timeout races).
        let mut gaps = Vec::new();
        let mut offsets = Vec::new();
        let mut since_expect = 0;
        for step in &scenario.server {
            match step {
                ServerStep::Expect(_) | ServerStep::NewConnection(_) => since_expect = 0,
                ServerStep::Delay(d) => {
                    gaps.push(d.ms);
                    since_expect += d.ms;
                    offsets.push(since_expect);
                }
                _ => {}
            }
        }
        for step in &scenario.client {
            let ClientStep::Request { timeout_ms, method, reset_timeout_on_progress, max_total_timeout_ms, .. } = step
            else {
                continue;
            };
            let mut bounds = Vec::new();
            if let Some(t) = timeout_ms {
                let races = if *reset_timeout_on_progress { (&gaps, "delay") } else { (&offsets, "send at") };
                bounds.push(("timeout_ms", *t, races));
            }
            if let Some(t) = max_total_timeout_ms {
                bounds.push(("max_total_timeout_ms", *t, (&offsets, "send at")));
            }
            for (field, bound, (races, what)) in bounds {
                for t in races.iter().filter(|t| bound.abs_diff(**t) < LOAD_MARGIN_MS) {
                    close.insert(format!("{}: {method} {field} {bound} vs {what} {t} ms", path.display()));
                }
            }
        }
    }
    assert!(seen > 100, "found only {seen} scenarios under {pattern}");
    assert!(
        close.is_empty(),
        "timeouts within {LOAD_MARGIN_MS} ms of a delay race under load; move them apart:\n{}",
        close.into_iter().collect::<Vec<_>>().join("\n")
    );
}
