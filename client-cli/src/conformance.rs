//! The official MCP conformance suite's client contract, as its runner drives a client:
//! it starts a scenario server, runs the client command with the server URL appended as
//! the last argument, and sets `MCP_CONFORMANCE_SCENARIO` (the scenario name),
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` (the revision to speak: stateful up to 2025-11-25,
//! stateless 2026-07-28) and, for some scenarios, `MCP_CONFORMANCE_CONTEXT` (JSON data
//! such as the tool calls to make, or a pre-registered client's `client_id`,
//! `client_secret` and `issuer`: [`authorization`](crate::authorization)). The scenario
//! server then judges what it saw.
//!
//! Every run has an OAuth client on its HTTP transport, so an authorization scenario is
//! met like any server that answers 401: by the bundled transports' authorization client,
//! whatever the scenario's name.
//!
//! Each scenario gets a [`Plan`]: the [`Step`]s a client that meets the scenario's
//! expectations takes. A scenario without its own plan (the OAuth ones, say) gets the
//! default plan, a plain client's use: list the tools and call each.

use crate::error::ClientError;
use serde_json::Value;

/// The scenario name.
pub const SCENARIO_ENV: &str = "MCP_CONFORMANCE_SCENARIO";
/// The revision the runner asks for.
pub const PROTOCOL_VERSION_ENV: &str = "MCP_CONFORMANCE_PROTOCOL_VERSION";
/// Scenario-specific JSON data.
pub const CONTEXT_ENV: &str = "MCP_CONFORMANCE_CONTEXT";

/// What the runner told the client through its environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Environment {
    /// `MCP_CONFORMANCE_SCENARIO`.
    pub scenario: String,
    /// `MCP_CONFORMANCE_PROTOCOL_VERSION`, when set.
    pub protocol_version: Option<String>,
    /// `MCP_CONFORMANCE_CONTEXT`, parsed; `None` when unset.
    pub context: Option<Value>,
}

impl Environment {
    /// Reads the environment; `Ok(None)` when `MCP_CONFORMANCE_SCENARIO` is unset (not a
    /// conformance run).
    pub fn from_env() -> Result<Option<Environment>, ClientError> {
        Environment::from_vars(|name| std::env::var(name).ok())
    }

    /// Like [`Environment::from_env`], reading variables through `var`.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Option<Environment>, ClientError> {
        let Some(scenario) = var(SCENARIO_ENV).filter(|s| !s.is_empty()) else { return Ok(None) };
        let context = match var(CONTEXT_ENV) {
            Some(raw) => {
                Some(serde_json::from_str(&raw).map_err(|e| ClientError::BadContext(format!("not JSON: {e}")))?)
            }
            None => None,
        };
        let protocol_version = var(PROTOCOL_VERSION_ENV).filter(|v| !v.is_empty());
        Ok(Some(Environment { scenario, protocol_version, context }))
    }
}

/// One thing a client does during a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// `server/discover` (stateless revisions only; a stateful session skips it).
    Discover,
    /// `tools/list`, every page.
    ListTools,
    /// `tools/list`, then `tools/call` for each listed tool with arguments sampled from its
    /// `inputSchema` ([`arguments`](crate::arguments)).
    CallListedTools,
    /// `tools/list`, then the tool calls `MCP_CONFORMANCE_CONTEXT` names (`toolCalls`:
    /// `[{name, arguments}]`), with exactly those arguments.
    CallContextTools,
    /// `resources/list`, then `resources/read` for each listed resource.
    ReadResources,
    /// `prompts/list`, then `prompts/get` for each listed prompt (required arguments sampled).
    GetPrompts,
}

/// A scenario's steps, in order, after the session is open (opening it is the handshake
/// on stateful revisions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The scenario name.
    pub scenario: String,
    /// The steps.
    pub steps: &'static [Step],
    /// Whether the scenario has a plan of its own (else it got [`DEFAULT_STEPS`]).
    pub dedicated: bool,
}

/// What a client does in a scenario without a plan of its own.
pub const DEFAULT_STEPS: &[Step] = &[Step::CallListedTools];

/// Scenario → steps. Names are the suite's (`conformance list --client`).
const PLANS: &[(&str, &[Step])] = &[
    // The handshake is the whole scenario.
    ("initialize", &[]),
    ("tools_call", &[Step::CallListedTools]),
    // The tool call's reply stream closes after a primed event: the transport resumes it.
    ("sse-retry", &[Step::CallListedTools]),
    // Every POST's `_meta` and headers are judged; the first one is refused with -32022.
    ("request-metadata", &[Step::Discover, Step::ListTools]),
    // Mcp-Method / Mcp-Name on every kind of request.
    ("http-standard-headers", &[Step::CallListedTools, Step::ReadResources, Step::GetPrompts]),
    // Mcp-Param-* mirrored from the context's arguments.
    ("http-custom-headers", &[Step::CallContextTools]),
    // The listing excludes tools with invalid x-mcp-header; the valid one is called.
    ("http-invalid-tool-headers", &[Step::CallListedTools]),
    // Input-required results are answered and retried by the transport.
    ("sep-2322-client-request-state", &[Step::CallListedTools]),
    // Listing must not fetch a network $ref in a schema.
    ("json-schema-ref-no-deref", &[Step::ListTools]),
    // The tool asks for an elicitation; the answer applies the schema's defaults.
    ("elicitation-sep1034-client-defaults", &[Step::CallListedTools]),
];

/// The plan for `scenario`.
pub fn plan_for(scenario: &str) -> Plan {
    match PLANS.iter().find(|(name, _)| *name == scenario) {
        Some((_, steps)) => Plan { scenario: scenario.to_owned(), steps, dedicated: true },
        None => Plan { scenario: scenario.to_owned(), steps: DEFAULT_STEPS, dedicated: false },
    }
}

/// The names of the scenarios with a plan of their own.
pub fn planned_scenarios() -> impl Iterator<Item = &'static str> {
    PLANS.iter().map(|(name, _)| *name)
}

/// The `toolCalls` of a context: `(name, arguments)` pairs.
pub fn context_tool_calls(context: Option<&Value>) -> Result<Vec<(String, Value)>, ClientError> {
    let Some(calls) = context.and_then(|c| c.get("toolCalls")) else {
        return Err(ClientError::BadContext("this scenario needs a toolCalls list and the context has none".into()));
    };
    let calls = calls.as_array().ok_or_else(|| ClientError::BadContext("toolCalls must be an array".into()))?;
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let name = call.get("name").and_then(Value::as_str).ok_or_else(|| {
                ClientError::BadContext(format!(
                    "toolCalls[{i}] has no string name (write {{\"name\": …, \"arguments\": {{…}}}})"
                ))
            })?;
            Ok((name.to_owned(), call.get("arguments").cloned().unwrap_or_else(|| Value::Object(Default::default()))))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashMap;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn reads_the_runner_environment() {
        assert_eq!(Environment::from_vars(vars(&[])).ok(), Some(None));
        let env = Environment::from_vars(vars(&[
            (SCENARIO_ENV, "http-custom-headers"),
            (PROTOCOL_VERSION_ENV, "2026-07-28"),
            (CONTEXT_ENV, r#"{"toolCalls": []}"#),
        ]));
        assert_eq!(
            env.ok().flatten(),
            Some(Environment {
                scenario: "http-custom-headers".into(),
                protocol_version: Some("2026-07-28".into()),
                context: Some(json!({"toolCalls": []})),
            })
        );
        let bad = Environment::from_vars(vars(&[(SCENARIO_ENV, "x"), (CONTEXT_ENV, "{")]));
        assert!(matches!(bad, Err(ClientError::BadContext(_))));
    }

    #[test]
    fn scenarios_without_a_plan_get_the_default() {
        assert_eq!(plan_for("initialize").steps, &[] as &[Step]);
        assert!(plan_for("http-custom-headers").dedicated);
        let auth = plan_for("auth/metadata-default");
        assert_eq!((auth.steps, auth.dedicated), (DEFAULT_STEPS, false));
        assert!(planned_scenarios().any(|s| s == "sse-retry"));
    }

    #[test]
    fn context_tool_calls_keep_their_arguments_verbatim() {
        let context = json!({"toolCalls": [{"name": "t", "arguments": {"v": null, "s": " padded "}}, {"name": "u"}]});
        assert_eq!(
            context_tool_calls(Some(&context)).ok(),
            Some(vec![("t".into(), json!({"v": null, "s": " padded "})), ("u".into(), json!({}))])
        );
        assert!(context_tool_calls(None).is_err());
        assert!(context_tool_calls(Some(&json!({"toolCalls": [{"arguments": {}}]}))).is_err());
    }
}
