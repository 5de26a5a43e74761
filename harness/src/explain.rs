//! A scenario in words (`mcp-harness explain`): what the client under test is asked to do
//! (the plan), what the mock does step by step (the server script, per connection), and
//! what is checked, on which basis and spec sentence. The words come from the typed
//! scenario: plan steps here (one arm per [`ClientStep`], so a new step cannot be left
//! out), server ops from [`mcp_mock::ops::About::explain`], checks from
//! [`crate::checks::CheckKind::explain`] — both required of every op and check.

use crate::checks;
use crate::select;
use mcp_scenario::basis::Level;
use mcp_scenario::plan::Connect;
use mcp_scenario::script::connection_parts;
use mcp_scenario::{ClientStep, Scenario};
use std::fmt::Write as _;
use std::path::Path;

/// The whole explanation, ready to print.
pub fn explain(path: &Path, scenario: &Scenario) -> String {
    let mut s = String::new();
    let transports: Vec<&str> = scenario.transport.to_vec().iter().map(|t| t.as_str()).collect();
    let _ = writeln!(s, "{} — {}", scenario.name, scenario.summary);
    let _ = writeln!(s, "file: {}", path.display());
    let _ = writeln!(
        s,
        "runs over: {} · revision {} · deadline {}ms (plus a start-up allowance for external clients)",
        transports.join(", "),
        scenario.revision.as_str(),
        scenario.deadline_ms
    );
    let tags: Vec<String> = select::tags(path, scenario).into_iter().collect();
    if !tags.is_empty() {
        let _ = writeln!(s, "tags: {}", tags.join(", "));
    }
    if let Some(reason) = &scenario.pending {
        let _ = writeln!(s, "PENDING (never run): {reason}");
    }
    for r in &scenario.refs {
        let _ = writeln!(s, "ref: {r}");
    }

    let _ = writeln!(s, "\nThe client is asked to (the plan):");
    for (i, step) in scenario.client.iter().enumerate() {
        let _ = writeln!(s, "  {}. {}", i + 1, step_words(step));
    }

    let _ = writeln!(s, "\nThe mock (the server script):");
    let parts: Vec<_> = connection_parts(&scenario.server).collect();
    let mut number = 0;
    for (c, part) in parts.iter().enumerate() {
        if parts.len() > 1 {
            let _ = writeln!(s, "  on connection {}:", c + 1);
        }
        for step in part.iter() {
            number += 1;
            let _ = writeln!(s, "  {number}. {}", mcp_mock::ops::explain(step));
        }
        // The `new_connection` step between parts.
        number += 1;
    }
    let _ = writeln!(s, "{}", fault_words(scenario));
    for (step, why) in &scenario.deviations {
        let _ = writeln!(s, "  Step {step} breaks the revision's schema on purpose: {why}.");
    }

    let _ = writeln!(s, "\nWhat is checked:");
    if scenario.checks.is_empty() {
        let _ = writeln!(s, "  (no checks of its own)");
    }
    for (i, entry) in scenario.checks.iter().enumerate() {
        let _ = writeln!(s, "  {}. {}", i + 1, checks::explain(&entry.check));
        let basis = match &entry.basis {
            Some(b) if !b.targets.is_empty() => {
                format!("{}: {} [binds: {}]", b.level.as_str().to_uppercase(), b.reference, b.targets.join(", "))
            }
            Some(b) => format!("{}: {}", b.level.as_str().to_uppercase(), b.reference),
            None => "unclassified: no basis written yet".into(),
        };
        let _ = writeln!(s, "     rests on {basis} — {}", weight(entry.level()));
    }
    let _ = writeln!(s, "  and, on every run, the always-on rules: {}.", checks::always::names().join("; "));
    let _ = writeln!(s, "  The transcript is compared with the snapshot beside the scenario.");
    s
}

/// Where the scenario's fault is, and what a client that never meets it gets.
fn fault_words(scenario: &Scenario) -> String {
    let what = "a client that never meets it is not exercised, neither passed nor failed";
    match crate::exercise::site(scenario) {
        Some(site) => format!(
            "  The fault: step {} ({}){}; {what}.",
            site.index,
            site.op,
            if site.declared { ", as the scenario's `fault:` says" } else { ", derived from the script" }
        ),
        None => format!("  The fault: the script's standing rules, met by any client message; {what}."),
    }
}

/// What a failure of a check at this level means for each kind of client.
fn weight(level: Level) -> &'static str {
    match level {
        Level::Must | Level::Unclassified | Level::Driver => "fails any client",
        Level::Should | Level::Robustness => "fails the bundled client; a warning for others (--strict fails them)",
        Level::Project => "fails the bundled client; a note for others",
        Level::Promise => {
            "a client's own documented promise, not an MCP rule: fails the targets it names; a note for others"
        }
    }
}

/// A plan step in words.
pub fn step_words(step: &ClientStep) -> String {
    match step {
        ClientStep::Connect(c) => connect_words(c),
        ClientStep::Request { method, timeout_ms, background, label, pad_params, .. } => {
            let mut s = format!("send the request `{method}`");
            if let Some(p) = pad_params {
                let _ = write!(s, " (params padded by {p} bytes)");
            }
            if let Some(ms) = timeout_ms {
                let _ = write!(s, " with a {ms}ms timeout");
            }
            match (background, label) {
                (true, Some(l)) => {
                    let _ = write!(s, " in the background, as `{l}`");
                }
                (_, Some(l)) => {
                    let _ = write!(s, " as `{l}`, and wait for its outcome");
                }
                _ => s.push_str(" and wait for its outcome"),
            }
            s
        }
        ClientStep::Await { request } => format!("wait for the outcome of `{request}`"),
        ClientStep::Cancel { request } => format!("cancel `{request}`"),
        ClientStep::Abandon { request } => format!("stop waiting for `{request}` without cancelling it"),
        ClientStep::Notify { method, .. } => format!("send the notification `{method}`"),
        ClientStep::Wait { ms } => format!("pause {ms}ms"),
        ClientStep::WaitSent { method, http_method, count, timeout_ms } => {
            let what = match (http_method, method) {
                (Some(h), Some(m)) => format!("{h} `{m}`"),
                (Some(one), None) => one.clone(),
                (None, Some(m)) => format!("`{m}`"),
                (None, None) => "message".into(),
            };
            format!("wait (at most {timeout_ms}ms) until the mock has received {count} {what} from the client")
        }
        ClientStep::WaitClosed { timeout_ms } => {
            format!("wait (at most {timeout_ms}ms) until the transport reports closed")
        }
        ClientStep::WaitNotification { method, timeout_ms } => {
            format!("wait (at most {timeout_ms}ms) for the notification `{method}`")
        }
        ClientStep::Close => "close the connection".into(),
        ClientStep::WaitManager { event, count, timeout_ms } => {
            format!("wait (at most {timeout_ms}ms) until the manager reported {count} `{event}` event(s)")
        }
        ClientStep::ManagerTools => "report the manager's status and the tools it shows".into(),
    }
}

fn connect_words(c: &Connect) -> String {
    let mut s = if c.handshake {
        "connect and run the MCP handshake".to_string()
    } else {
        "connect, without a handshake".into()
    };
    let mut with = Vec::new();
    if let Some(ms) = c.timeout_ms {
        with.push(if ms == 0 { "no timeout".to_string() } else { format!("a {ms}ms timeout") });
    }
    if !c.headers.is_empty() {
        with.push(format!("headers {}", c.headers.keys().cloned().collect::<Vec<_>>().join(", ")));
    }
    if c.auth_refresh.is_some() {
        with.push("an auth refresh hook".into());
    }
    if let Some(o) = &c.oauth {
        with.push(match &o.client_id {
            Some(id) => format!("an OAuth client (pre-registered as {id})"),
            None => "an OAuth client".into(),
        });
    }
    if c.managed.is_some() {
        with.push("the reconnecting manager".into());
    }
    if let Some(v) = &c.protocol_version {
        with.push(format!("protocol version {v}"));
    }
    match c.legacy_fallback {
        Some(true) => with.push("a fallback to initialize if the server is legacy (a dual-era client)".into()),
        Some(false) => with.push("no fallback to initialize (a modern-only client)".into()),
        None => {}
    }
    if c.string_ids {
        with.push("string request ids".into());
    }
    if !with.is_empty() {
        let _ = write!(s, ", with {}", with.join(", "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_script_and_checks_are_in_words() {
        let text = "name: t\nsummary: One sentence.\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n    timeout_ms: 200\n  - op: request\n    method: tools/list\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: reply\n    result: {\"tools\": []}\nchecks:\n  - outcome: {step: 2, ok: true}\n    must: \"2025-11-25 basic: MUST answer\"\n  - not_sent: {method: ping}\n";
        let scenario = mcp_scenario::load::parse(Path::new("scenarios/stdio/t.yaml"), text).expect("loads");
        let words = explain(Path::new("scenarios/stdio/t.yaml"), &scenario);
        for want in [
            "t — One sentence.",
            "  1. connect and run the MCP handshake, with a 200ms timeout",
            "  2. send the request `tools/list` and wait for its outcome",
            "  1. answers `initialize` (with the scenario's revision) and waits for `notifications/initialized`",
            "  2. waits for the client's `tools/list`",
            "  3. answers the latest expected request with the result {\"tools\":[]}",
            "  1. plan step 2 succeeded",
            "     rests on MUST: 2025-11-25 basic: MUST answer — fails any client",
            "  2. the client never sent `ping`",
            "     rests on unclassified: no basis written yet — fails any client",
            "always-on rules: finishes before the deadline;",
        ] {
            assert!(words.contains(want), "missing {want:?} in:\n{words}");
        }
    }
}
