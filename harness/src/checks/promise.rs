//! Checks resting on `promise:` (a client's own documented promise, not an MCP rule): they
//! judge only the targets the promise names ([`mcp_scenario::basis::Basis::binds`]). For any
//! other client an unmet one is a note saying whose promise it is, and the check is not
//! applicable, so it is never a verdict nor evidence for a pass.

use super::{Evaluation, index_of_label};
use mcp_results::{JudgedCheck, Judgement};
use mcp_scenario::Scenario;
use mcp_scenario::basis::Basis;

/// The promise a check (by its label) rests on when it does not bind `target`.
fn unbound<'a>(scenario: &'a Scenario, label: &str, target: &str) -> Option<&'a Basis> {
    let entry = scenario.checks.get(index_of_label(label)?)?;
    entry.basis.as_ref().filter(|b| !b.binds(target))
}

/// Moves the unmet checks whose promise does not bind `target` to the notes, saying so.
pub fn unbind(scenario: &Scenario, target: &str, found: &mut Evaluation) {
    let (theirs, kept) = std::mem::take(&mut found.unmet)
        .into_iter()
        .partition::<Vec<_>, _>(|r| unbound(scenario, &r.check, target).is_some());
    found.unmet = kept;
    for mut r in theirs {
        let targets = unbound(scenario, &r.check, target).map(|b| b.targets.join(", ")).unwrap_or_default();
        r.message = format!("not this client's promise (it binds {targets}), so no verdict here: {}", r.message);
        found.unjudged.push(r);
    }
}

/// Marks the checks whose promise does not bind `target` not applicable.
pub fn not_applicable(scenario: &Scenario, target: &str, judged: &mut [JudgedCheck]) {
    for j in judged.iter_mut().filter(|j| unbound(scenario, &j.check, target).is_some()) {
        j.judgement = Judgement::NotApplicable;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_results::CheckResult;
    use mcp_scenario::basis::Level;

    fn scenario() -> Scenario {
        mcp_scenario::load::parse(
            std::path::Path::new("p.yaml"),
            "name: p\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\nserver:\n  - op: handshake\n\
             checks:\n  - sent: {method: tools/list}\n    promise: {url: \"https://example.org/d\", says: \"it lists\", targets: [typescript/run]}\n",
        )
        .expect("loads")
    }

    #[test]
    fn a_promise_is_a_verdict_for_its_targets_and_a_note_for_others() {
        let s = scenario();
        let unmet = || CheckResult {
            check: "check 1 (sent)".into(),
            message: "never sent".into(),
            level: Level::Promise,
            reference: None,
            about: Vec::new(),
        };
        let mut theirs = Evaluation { unmet: vec![unmet()], unjudged: Vec::new() };
        unbind(&s, "cmd:clients/typescript/run", &mut theirs);
        assert_eq!(theirs.unmet.len(), 1);
        let mut other = Evaluation { unmet: vec![unmet()], unjudged: Vec::new() };
        unbind(&s, "cmd:clients/rmcp/run", &mut other);
        assert!(other.unmet.is_empty());
        assert!(other.unjudged[0].message.starts_with("not this client's promise (it binds typescript/run)"));
        let mut judged = vec![JudgedCheck {
            check: "check 1 (sent)".into(),
            level: Level::Promise,
            reference: None,
            judgement: Judgement::Held,
        }];
        not_applicable(&s, "bundled", &mut judged);
        assert_eq!(judged[0].judgement, Judgement::NotApplicable);
    }
}
