//! How this client answers server-to-client requests (2025-x) and the input requests of a
//! multi round-trip request (2026-07-28, answered through the same handler by the
//! transports): `ping` and `roots/list` as SPEC §6 says, `elicitation/create` accepted with
//! the requested schema's defaults (and placeholders for required fields), anything else
//! `-32601`. A person running `mcp-client` by hand sees every request on stderr.

use crate::arguments;
use futures::FutureExt;
use mcp_transports::RpcError;
use mcp_transports::client::default_request_handler;
use mcp_transports::transport::RequestHandler;
use serde_json::{Value, json};
use std::sync::Arc;

/// The answer to one `elicitation/create`: accept, with content from `requestedSchema`.
pub fn accept_elicitation(params: &Value) -> Value {
    let content = params.get("requestedSchema").map(arguments::sample_object).unwrap_or_default();
    json!({"action": "accept", "content": content})
}

/// The handler every session installs.
pub fn request_handler() -> RequestHandler {
    let fallback = default_request_handler(Vec::new());
    Arc::new(move |method: String, params: Value| {
        tracing::info!(%method, "server request");
        match method.as_str() {
            "elicitation/create" => futures::future::ready(Ok::<Value, RpcError>(accept_elicitation(&params))).boxed(),
            _ => fallback(method, params),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn elicitation_is_accepted_with_defaults_and_the_rest_falls_back() {
        let handler = request_handler();
        let params = json!({"message": "ok?", "requestedSchema": {"type": "object",
            "properties": {"confirmed": {"type": "boolean"}, "name": {"type": "string", "default": "Ann"}},
            "required": ["confirmed"]}});
        assert_eq!(
            handler("elicitation/create".into(), params).await,
            Ok(json!({"action": "accept", "content": {"confirmed": true, "name": "Ann"}}))
        );
        assert_eq!(handler("ping".into(), json!({})).await, Ok(json!({})));
        assert_eq!(handler("sampling/createMessage".into(), json!({})).await.map_err(|e| e.code), Err(-32601));
    }
}
