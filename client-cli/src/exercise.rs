//! Runs a [`Plan`]'s steps over a [`Session`]. The first failing request ends the plan with
//! its error: a conformance client that carried on after a failure would be judged on
//! traffic no real client sends.

use crate::arguments;
use crate::conformance::{self, Plan, Step};
use crate::error::ClientError;
use crate::session::Session;
use serde_json::{Map, Value, json};

/// Runs every step of `plan`; `context` is `MCP_CONFORMANCE_CONTEXT`, when set.
pub async fn run(session: &Session, plan: &Plan, context: Option<&Value>) -> Result<(), ClientError> {
    for step in plan.steps {
        tracing::info!(?step, "step");
        run_step(session, *step, context).await?;
    }
    Ok(())
}

async fn run_step(session: &Session, step: Step, context: Option<&Value>) -> Result<(), ClientError> {
    match step {
        Step::Discover => {
            if session.initialized().await.is_some() {
                tracing::info!("server/discover skipped: the session is stateful");
                return Ok(());
            }
            let result = session.request("server/discover", json!({})).await?;
            tracing::info!(%result, "server/discover");
        }
        Step::ListTools => {
            let tools = session.list_all("tools/list", "tools").await?;
            tracing::info!(names = ?names(&tools, "name"), "tools/list");
        }
        Step::CallListedTools => {
            for tool in session.list_all("tools/list", "tools").await? {
                let Some(name) = tool.get("name").and_then(Value::as_str) else { continue };
                call_tool(session, name, arguments::tool_arguments(&tool)).await?;
            }
        }
        Step::CallContextTools => {
            let calls = conformance::context_tool_calls(context)?;
            session.list_all("tools/list", "tools").await?;
            for (name, args) in calls {
                call_tool(session, &name, args).await?;
            }
        }
        Step::ReadResources => {
            for resource in session.list_all("resources/list", "resources").await? {
                let Some(uri) = resource.get("uri").and_then(Value::as_str) else { continue };
                session.request("resources/read", json!({"uri": uri})).await?;
                tracing::info!(%uri, "resources/read");
            }
        }
        Step::GetPrompts => {
            for prompt in session.list_all("prompts/list", "prompts").await? {
                let Some(name) = prompt.get("name").and_then(Value::as_str) else { continue };
                session.request("prompts/get", json!({"name": name, "arguments": prompt_arguments(&prompt)})).await?;
                tracing::info!(%name, "prompts/get");
            }
        }
    }
    Ok(())
}

async fn call_tool(session: &Session, name: &str, arguments: Value) -> Result<(), ClientError> {
    let result = session.request("tools/call", json!({"name": name, "arguments": arguments})).await?;
    tracing::info!(%name, %result, "tools/call");
    Ok(())
}

/// `prompts/get` arguments: a placeholder string for each required argument.
fn prompt_arguments(prompt: &Value) -> Value {
    let required = prompt
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|a| a.get("required").and_then(Value::as_bool).unwrap_or(false));
    let map: Map<String, Value> = required
        .filter_map(|a| a.get("name").and_then(Value::as_str))
        .map(|n| (n.to_owned(), json!("sample")))
        .collect();
    Value::Object(map)
}

fn names<'a>(items: &'a [Value], member: &str) -> Vec<&'a str> {
    items.iter().filter_map(|i| i.get(member).and_then(Value::as_str)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_get_only_the_required_arguments() {
        let prompt = json!({"name": "p", "arguments": [{"name": "a", "required": true}, {"name": "b"}]});
        assert_eq!(prompt_arguments(&prompt), json!({"a": "sample"}));
        assert_eq!(prompt_arguments(&json!({"name": "q"})), json!({}));
    }
}
