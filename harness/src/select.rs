//! Choosing scenarios: the filters `list` and `run` share (`--filter`, `--transport`,
//! `--revision`, `--tag`), the tags a scenario carries, and its one-line listing.
//!
//! A scenario has no `tags:` field: its tags are derived, so they can never drift from the
//! file — the area folder it lives in (`stdio`, `http`, `regressions`, …), the bases its
//! checks rest on (`must`, `should`, `project`, `driver`, `unclassified`), `pending` when
//! it is marked so, `slow` when its run deadline is [`SLOW_DEADLINE_MS`] or more, and `host`
//! when a host that runs no plan can pass it ([`crate::exercise::host_can_pass`]). A tag
//! filter `!tag` keeps the scenarios *without* that tag (`--tag '!slow'`: a quick pass).

use mcp_scenario::{Revision, Scenario, TransportName};
use std::collections::BTreeSet;
use std::path::Path;

/// A scenario whose run deadline is this long or longer is tagged `slow`: it is given that
/// long because it waits out a client's own default timeout (stdio/no-timeout-given-default-bounds:
/// 30 s for the bundled client, 60 s for the TypeScript SDK), and one such run sets the
/// wall time of a whole pass. Every other scenario's deadline is seconds.
pub const SLOW_DEADLINE_MS: u64 = 30_000;

/// Which scenarios (and which of their transports) to keep; every given filter must match.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// A name glob (`*`, `?`, `[…]`) when it holds one, else a substring of the name; for
    /// `list`'s text filter, a substring of the name or the summary.
    pub filter: Option<String>,
    /// Search the summary too (`list`'s text filter), not the name only.
    pub in_summary: bool,
    /// Only these transports (a scenario over several keeps the matching ones).
    pub transports: Vec<TransportName>,
    /// Only scenarios speaking one of these revisions.
    pub revisions: Vec<Revision>,
    /// Only scenarios carrying every one of these tags; `!tag`: only those without it.
    pub tags: Vec<String>,
}

impl Selection {
    /// Whether the scenario at `path` is selected (its transports are checked apart, by
    /// [`Selection::transports_of`]).
    pub fn matches(&self, path: &Path, scenario: &Scenario) -> bool {
        if !self.revisions.is_empty() && !self.revisions.contains(&scenario.revision) {
            return false;
        }
        if self.transports_of(scenario).is_empty() {
            return false;
        }
        let tags = tags(path, scenario);
        let wanted = |t: &String| match t.strip_prefix('!') {
            Some(without) => !tags.contains(without),
            None => tags.contains(t),
        };
        if !self.tags.iter().all(wanted) {
            return false;
        }
        match &self.filter {
            None => true,
            Some(f) if is_glob(f) => glob::Pattern::new(f).is_ok_and(|p| p.matches(&scenario.name)),
            Some(f) => {
                let f = f.to_lowercase();
                scenario.name.contains(&f) || (self.in_summary && scenario.summary.to_lowercase().contains(&f))
            }
        }
    }

    /// The scenario's transports this selection keeps.
    pub fn transports_of(&self, scenario: &Scenario) -> Vec<TransportName> {
        scenario
            .transport
            .to_vec()
            .into_iter()
            .filter(|t| self.transports.is_empty() || self.transports.contains(t))
            .collect()
    }

    /// The first `--tag` (with or without `!`) that none of `loaded` carries, as an error
    /// naming the closest known tag and every known one.
    pub fn unknown_tag(&self, loaded: &[(std::path::PathBuf, Scenario)]) -> Option<crate::error::HarnessError> {
        let mut known: BTreeSet<String> = loaded.iter().flat_map(|(p, s)| tags(p, s)).collect();
        // Tags a library may carry on no scenario today, still legitimate to ask for.
        known.extend(["pending", "slow"].map(String::from));
        let given = self.tags.iter().map(|t| t.trim_start_matches('!')).find(|t| !known.contains(*t))?;
        let hint = known
            .iter()
            .map(|k| (strsim::levenshtein(given, k), k))
            .filter(|(d, k)| *d <= 2.max(k.len() / 3))
            .min_by_key(|(d, _)| *d)
            .map(|(_, k)| format!("; did you mean `{k}`?"))
            .unwrap_or_default();
        Some(crate::error::HarnessError::UnknownTag {
            given: given.to_string(),
            hint,
            known: known.into_iter().collect::<Vec<_>>().join(", "),
        })
    }

    /// Whether any filter is given.
    pub fn is_empty(&self) -> bool {
        self.filter.is_none() && self.transports.is_empty() && self.revisions.is_empty() && self.tags.is_empty()
    }
}

fn is_glob(f: &str) -> bool {
    f.contains(['*', '?', '['])
}

/// The scenario's tags (see the module docs), sorted.
pub fn tags(path: &Path, scenario: &Scenario) -> BTreeSet<String> {
    let mut tags = BTreeSet::new();
    if let Some(area) = area(path) {
        tags.insert(area);
    }
    for entry in &scenario.checks {
        tags.insert(entry.level().as_str().to_string());
    }
    if scenario.pending.is_some() {
        tags.insert("pending".into());
    }
    if scenario.deadline_ms >= SLOW_DEADLINE_MS {
        tags.insert("slow".into());
    }
    if crate::exercise::host_can_pass(scenario) {
        tags.insert("host".into());
    }
    tags
}

/// The folder right under `scenarios/` (or the file's own folder elsewhere).
fn area(path: &Path) -> Option<String> {
    let parts: Vec<String> = path.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let at = parts.iter().rposition(|p| p == "scenarios");
    let folder = match at {
        Some(i) if i + 2 < parts.len() => parts.get(i + 1),
        _ if parts.len() >= 2 => parts.get(parts.len() - 2),
        _ => None,
    };
    folder.filter(|f| !f.is_empty() && f.as_str() != "." && f.as_str() != "scenarios").cloned()
}

/// One line per scenario: name, transports, revision, tags, and the pending marker with its
/// reason.
pub fn line(path: &Path, scenario: &Scenario) -> String {
    let transports: Vec<&str> = scenario.transport.to_vec().iter().map(|t| t.as_str()).collect();
    let tags: Vec<String> = tags(path, scenario).into_iter().filter(|t| t != "pending").collect();
    let mut line = format!(
        "{}  [{}]  {}  {}",
        scenario.name,
        transports.join(","),
        scenario.revision.as_str(),
        if tags.is_empty() { "-".into() } else { tags.join(",") }
    );
    if let Some(reason) = &scenario.pending {
        line.push_str(&format!("  PENDING: {reason}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(name: &str, transport: &str, checks: &str) -> Scenario {
        let text = format!(
            "name: {name}\nsummary: Streams end cleanly\ntransport: {transport}\nrevision: 2025-11-25\nclient:\n  - op: connect\nserver:\n  - op: handshake\nchecks:\n{checks}"
        );
        mcp_scenario::load::parse(Path::new("x.yaml"), &text).expect("loads")
    }

    #[test]
    fn filters_combine() {
        let s = scenario("sse-drop-mid-event", "[stdio, http]", "  - sent: {method: initialize}\n    must: \"x\"\n");
        let p = Path::new("scenarios/http/sse-drop-mid-event.yaml");
        let sel = |f: fn(&mut Selection)| {
            let mut sel = Selection::default();
            f(&mut sel);
            sel.matches(p, &s)
        };
        assert!(sel(|_| {}));
        assert!(sel(|s| s.filter = Some("drop".into())));
        assert!(sel(|s| s.filter = Some("sse-*-event".into())));
        assert!(!sel(|s| s.filter = Some("sse-*-line".into())));
        assert!(!sel(|s| s.filter = Some("cleanly".into())));
        assert!(sel(|s| {
            s.filter = Some("Cleanly".into());
            s.in_summary = true;
        }));
        assert!(!sel(|s| s.transports = vec![TransportName::LegacySse]));
        assert!(sel(|s| s.tags = vec!["http".into(), "must".into()]));
        assert!(!sel(|s| s.tags = vec!["should".into()]));
        assert!(sel(|s| s.tags = vec!["!should".into(), "http".into()]));
        assert!(!sel(|s| s.tags = vec!["!http".into()]));
        assert!(!sel(|s| s.revisions = vec![Revision::R2024_11_05]));
        let only_http = Selection { transports: vec![TransportName::Http], ..Selection::default() };
        assert_eq!(only_http.transports_of(&s), [TransportName::Http]);
    }

    #[test]
    fn a_scenario_given_a_client_default_timeout_to_wait_out_is_slow() {
        let mut s = scenario("a", "stdio", "  - sent: {method: initialize}\n    project: \"x\"\n");
        let p = Path::new("scenarios/stdio/a.yaml");
        assert!(!tags(p, &s).contains("slow"));
        s.deadline_ms = SLOW_DEADLINE_MS;
        assert!(tags(p, &s).contains("slow"));
        let quick = Selection { tags: vec!["!slow".into()], ..Selection::default() };
        assert!(!quick.matches(p, &s));
    }

    #[test]
    fn a_line_shows_transports_revision_tags_and_pending() {
        let mut s = scenario("a", "stdio", "  - sent: {method: initialize}\n    should: \"x\"\n");
        s.pending = Some("waits on issue 7".into());
        assert_eq!(
            line(Path::new("scenarios/stdio/a.yaml"), &s),
            "a  [stdio]  2025-11-25  should,stdio  PENDING: waits on issue 7"
        );
    }

    #[test]
    fn an_unknown_tag_is_an_error_that_suggests_the_closest() {
        let s = crate::checks::testing::scenario("stdio", "sent: {method: x}");
        let loaded = vec![(std::path::PathBuf::from("scenarios/stdio/x.yaml"), s)];
        let with = |t: &str| Selection { tags: vec![t.into()], ..Selection::default() }.unknown_tag(&loaded);
        let e = with("!shuold").expect("unknown").to_string();
        assert!(e.starts_with("unknown tag `shuold`") && e.contains("carry") && e.contains("project"), "{e}");
        assert!(with("stdio").is_none() && with("!slow").is_none() && with("pending").is_none());
        assert!(with("projct").expect("unknown").to_string().contains("did you mean `project`?"));
    }
}
