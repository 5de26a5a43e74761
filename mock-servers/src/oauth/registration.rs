//! `/register`: dynamic client registration (RFC 7591 §3). An open server registers any
//! client that names its redirect URIs and answers `201` with its metadata and a fresh
//! `client_id`; a refusing one answers `400 invalid_client_metadata`; an absent one `404`.

use super::{Answer, AuthServer, Client, WHY};
use crate::sync::lock;
use mcp_scenario::script::step::Registration;
use serde_json::Value;

impl AuthServer {
    pub(super) fn register(&self, body: &[u8]) -> Answer {
        match self.config.registration {
            Registration::Absent => return Answer::empty(404, vec![], format!("{WHY}: no registration endpoint")),
            Registration::Refused => {
                return Answer::error(
                    400,
                    "invalid_client_metadata",
                    "registration refused (scenario)",
                    format!("{WHY}: registration refused (scenario)"),
                );
            }
            Registration::Open => {}
        }
        let Ok(Value::Object(mut meta)) = serde_json::from_slice::<Value>(body) else {
            return Answer::error(
                400,
                "invalid_client_metadata",
                "the body is not a JSON object",
                format!("{WHY}: bad registration"),
            );
        };
        let uris: Vec<String> = meta
            .get("redirect_uris")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        if uris.is_empty() {
            return Answer::error(
                400,
                "invalid_redirect_uri",
                "redirect_uris is required",
                format!("{WHY}: bad registration"),
            );
        }
        let id = {
            let mut issued = lock(&self.issued);
            issued.next_client += 1;
            let id = format!("client-{}", issued.next_client);
            issued.clients.insert(id.clone(), Client { redirect_uris: uris });
            id
        };
        meta.insert("client_id".into(), Value::from(id));
        meta.entry("token_endpoint_auth_method").or_insert_with(|| Value::from("none"));
        Answer::json(201, &Value::Object(meta), format!("{WHY}: registered"))
    }
}
