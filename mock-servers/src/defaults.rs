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

use mcp_scenario::{ClientStep, Revision, Scenario};
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
        Defaults { tools, result_type: scenario.revision >= Revision::R2026_07_28 }
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
