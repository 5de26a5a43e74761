//! [`Defaults`]: what the mock answers to an unscripted request the spec lets a client send
//! at any time, shared by the stdio and HTTP engines. A client may ping whenever it likes
//! (basic/utilities/ping) and may list tools before it calls one (the Python SDK lists to
//! learn a tool's output schema); answering those `-32601` would fail a client for traffic
//! the spec allows, while the behaviour under test passed. Every other unscripted method
//! stays `-32601`, which is what a real server says (e.g. `server/discover` to a
//! pre-2026 server).
//!
//! A scripted `expect` for the method, a `reply_always` rule and the 2026-07-28 request
//! checks all come first; the engines consult [`Defaults`] only after them.
//!
//! [`Defaults::capabilities`] is what a handshake or `server/discover` answer advertises when
//! the scenario sets none: what the plan calls and the script serves or announces. A client
//! that follows "only use capabilities that were successfully negotiated" (the lifecycle
//! page of every revision) then sends what the scenario is about instead of refusing it
//! locally.

use mcp_scenario::{ClientStep, Revision, Scenario, ServerStep};
use serde_json::{Value, json};

/// The default answers of one scenario's mock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Defaults {
    /// The distinct tool names the plan calls (`request` steps of `tools/call`), in plan
    /// order: the tools a default `tools/list` lists.
    tools: Vec<String>,
    /// 2026-07-28 results carry `resultType` (basic/index: the result MUST include it), and
    /// listings `ttlMs` / `cacheScope`.
    result_type: bool,
    /// The server capabilities a default answer advertises.
    capabilities: Value,
}

/// A default answer: the JSON-RPC `result` and the label the transcript shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The `result` member.
    pub result: Value,
    /// Why the mock answered so, as the transcript shows it (`default tools/list`).
    pub why: &'static str,
}

impl Defaults {
    /// The defaults for `scenario`: its revision, and the tools its plan calls.
    pub fn for_scenario(scenario: &Scenario) -> Self {
        let mut tools: Vec<String> = Vec::new();
        for step in &scenario.client {
            if let ClientStep::Request { method, params: Some(params), .. } = step
                && method == "tools/call"
                && let Some(name) = params.get("name").and_then(Value::as_str)
                && !tools.iter().any(|t| t == name)
            {
                tools.push(name.to_string());
            }
        }
        Defaults {
            tools,
            result_type: scenario.revision >= Revision::R2026_07_28,
            capabilities: capabilities(scenario),
        }
    }

    /// The server capabilities a handshake or `server/discover` answer advertises when the
    /// scenario sets none (see [`capabilities`]).
    pub fn capabilities(&self) -> &Value {
        &self.capabilities
    }

    /// The default answer to an unscripted request with `method`, if the spec lets a
    /// client send it at any time; `None`: answer `-32601`.
    pub fn answer(&self, method: &str) -> Option<Answer> {
        let (mut result, why) = match method {
            "ping" => (json!({}), "default ping"),
            "tools/list" => {
                let tools: Vec<Value> =
                    self.tools.iter().map(|name| json!({"name": name, "inputSchema": {"type": "object"}})).collect();
                (json!({"tools": tools}), "default tools/list")
            }
            _ => return None,
        };
        if self.result_type {
            result["resultType"] = json!("complete");
            // 2026-07-28 changelog (Minor changes 5): tools/list results carry ttlMs and
            // cacheScope (CacheableResult); 0 ms and private keep any cache out of the run.
            if method == "tools/list" {
                result["ttlMs"] = json!(0);
                result["cacheScope"] = json!("private");
            }
        }
        Some(Answer { result, why })
    }
}

/// The server features an answer advertises, in the order it lists them: the capability,
/// and the prefix of the methods that use it.
const FEATURES: [(&str, &str); 5] = [
    ("tools", "tools/"),
    ("prompts", "prompts/"),
    ("resources", "resources/"),
    ("logging", "logging/"),
    ("completions", "completion/"),
];

/// The server notifications that rest on a capability: the notification, its feature, and
/// the flag of the feature it needs (in the order an answer lists flags).
const ANNOUNCED: [(&str, &str, Option<&str>); 5] = [
    ("notifications/tools/list_changed", "tools", Some("listChanged")),
    ("notifications/prompts/list_changed", "prompts", Some("listChanged")),
    ("notifications/resources/list_changed", "resources", Some("listChanged")),
    ("notifications/resources/updated", "resources", Some("subscribe")),
    ("notifications/message", "logging", None),
];

/// A 2026-07-28 `subscriptions/listen` filter key, and the notification it asks for.
const LISTENED: [(&str, &str); 4] = [
    ("toolsListChanged", "notifications/tools/list_changed"),
    ("resourcesListChanged", "notifications/resources/list_changed"),
    ("promptsListChanged", "notifications/prompts/list_changed"),
    ("resourceSubscriptions", "notifications/resources/updated"),
];

/// What a scenario's mock offers: a capability for each feature the plan calls
/// (`tools/*`, `resources/*`, `prompts/*`, `logging/setLevel`, `completion/complete`) or the
/// script expects, `listChanged` where the script announces a list change, `subscribe` where
/// the plan subscribes to a resource or the script announces an update, `logging` where the
/// script sends log messages. Nothing more: a capability the mock cannot serve would invite
/// calls the script never answers. `completions` only from 2025-03-26, the first revision
/// that has it.
pub fn capabilities(scenario: &Scenario) -> Value {
    let mut methods: Vec<&str> = Vec::new();
    let mut notifications: Vec<&str> = Vec::new();
    for step in &scenario.client {
        if let ClientStep::Request { method, params, .. } = step {
            methods.push(method);
            // 2026-07-28 `subscriptions/listen` names the list changes it asks for.
            if method == "subscriptions/listen"
                && let Some(asked) = params.as_ref().and_then(|p| p.get("notifications")).and_then(Value::as_object)
            {
                let on = |key: &str| asked.get(key).is_some_and(|v| v != &Value::Bool(false) && !v.is_null());
                notifications.extend(LISTENED.iter().filter(|(key, _)| on(key)).map(|(_, n)| *n));
            }
        }
    }
    for step in &scenario.server {
        match step {
            ServerStep::Expect(e) => methods.push(&e.method),
            ServerStep::Notify(n) => notifications.push(&n.method),
            ServerStep::SubscriptionNotify(n) => notifications.push(&n.method),
            // Raw bytes (`send`, an SSE `event`, a `respond` body) may carry a notification
            // too: a method name anywhere in the step counts.
            _ => {
                let text = serde_json::to_string(step).unwrap_or_default();
                notifications.extend(ANNOUNCED.iter().map(|(n, ..)| *n).filter(|n| text.contains(n)));
            }
        }
    }
    // What the scenario needs: a feature, and perhaps one of its flags.
    let mut needs: Vec<(&str, Option<&str>)> = Vec::new();
    for method in methods {
        needs.extend(FEATURES.iter().filter(|(_, prefix)| method.starts_with(prefix)).map(|(f, _)| (*f, None)));
        if method == "resources/subscribe" {
            needs.push(("resources", Some("subscribe")));
        }
    }
    needs.extend(ANNOUNCED.iter().filter(|(n, ..)| notifications.contains(n)).map(|(_, f, flag)| (*f, *flag)));
    let mut caps = serde_json::Map::new();
    for (feature, _) in FEATURES {
        if !needs.iter().any(|(f, _)| *f == feature)
            || (feature == "completions" && scenario.revision < Revision::R2025_03_26)
        {
            continue;
        }
        let flags = ["listChanged", "subscribe"].into_iter().filter(|flag| needs.contains(&(feature, Some(flag))));
        caps.insert(feature.into(), Value::Object(flags.map(|flag| (flag.to_string(), json!(true))).collect()));
    }
    Value::Object(caps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(revision: &str, client: &str) -> Scenario {
        let text = format!(
            "name: defaults\nsummary: s\ntransport: stdio\nrevision: {revision}\nclient:\n{client}\nserver:\n  - op: stall\nchecks: []\n"
        );
        crate::load::parse(std::path::Path::new("defaults.yaml"), &text).expect("scenario")
    }

    #[test]
    fn tools_list_names_each_called_tool_once() {
        let s = scenario(
            "2025-11-25",
            "  - op: connect\n  - op: request\n    method: tools/call\n    params: {\"name\": \"b\"}\n  - op: request\n    method: tools/call\n    params: {\"name\": \"a\"}\n  - op: request\n    method: tools/call\n    params: {\"name\": \"b\"}\n  - op: request\n    method: resources/read\n    params: {\"name\": \"not-a-tool\"}",
        );
        let answer = Defaults::for_scenario(&s).answer("tools/list").expect("tools/list");
        assert_eq!(answer.why, "default tools/list");
        assert_eq!(
            answer.result,
            json!({"tools": [
                {"name": "b", "inputSchema": {"type": "object"}},
                {"name": "a", "inputSchema": {"type": "object"}},
            ]})
        );
    }

    #[test]
    fn capabilities_offer_what_the_plan_calls_and_nothing_more() {
        let plan = "  - op: connect\n  - op: request\n    method: tools/call\n    params: {\"name\": \"t\"}\n  - op: request\n    method: resources/subscribe\n    params: {\"uri\": \"file:///a\"}\n  - op: request\n    method: completion/complete";
        let caps = |revision| capabilities(&scenario(revision, plan));
        assert_eq!(caps("2025-11-25"), json!({"tools": {}, "resources": {"subscribe": true}, "completions": {}}));
        // 2024-11-05 has no completions capability.
        assert_eq!(caps("2024-11-05"), json!({"tools": {}, "resources": {"subscribe": true}}));
        assert_eq!(capabilities(&scenario("2025-11-25", "  - op: connect")), json!({}));
    }

    #[test]
    fn announced_changes_and_log_messages_are_offered() {
        let text = "name: d\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\nserver:\n  - op: handshake\n  - op: notify\n    method: notifications/tools/list_changed\n  - op: notify\n    method: notifications/message\n    params: {\"level\": \"info\", \"data\": \"x\"}\n  - op: expect\n    method: prompts/get\n";
        let s = crate::load::parse(std::path::Path::new("d.yaml"), text).expect("scenario");
        assert_eq!(capabilities(&s), json!({"tools": {"listChanged": true}, "prompts": {}, "logging": {}}));
        let listen = "  - op: connect\n  - op: request\n    method: subscriptions/listen\n    params: {\"notifications\": {\"promptsListChanged\": true}}";
        assert_eq!(capabilities(&scenario("2026-07-28", listen)), json!({"prompts": {"listChanged": true}}));
    }

    #[test]
    fn no_calls_list_no_tools() {
        let s = scenario("2025-11-25", "  - op: connect");
        assert_eq!(Defaults::for_scenario(&s).answer("tools/list").expect("list").result, json!({"tools": []}));
    }

    #[test]
    fn ping_is_empty_and_everything_else_has_no_default() {
        let d = Defaults::for_scenario(&scenario("2025-11-25", "  - op: connect"));
        assert_eq!(d.answer("ping"), Some(Answer { result: json!({}), why: "default ping" }));
        for method in ["server/discover", "resources/list", "tools/call", "initialize", "vendor/x"] {
            assert_eq!(d.answer(method), None, "{method}");
        }
    }

    #[test]
    fn stateless_results_say_complete() {
        let d = Defaults::for_scenario(&scenario("2026-07-28", "  - op: connect"));
        assert_eq!(d.answer("ping").expect("ping").result, json!({"resultType": "complete"}));
        assert_eq!(d.answer("tools/list").expect("list").result["resultType"], json!("complete"));
    }
}
