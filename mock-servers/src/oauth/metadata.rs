//! The well-known documents: protected resource metadata (RFC 9728 §3) at
//! `/.well-known/oauth-protected-resource/mcp` and at the root, and authorization server
//! metadata (RFC 8414 §3; OpenID Connect Discovery 1.0 §4) at the three locations the MCP
//! pages list for an issuer with a path (two without). A location named in `missing` is
//! `404`, as is every other well-known path.

use super::{Answer, AuthServer, MCP_PATH, WHY};
use mcp_scenario::script::step::{Registration, WellKnown};
use serde_json::{Value, json};

impl AuthServer {
    /// The path of the protected resource metadata the 401 challenge names: at the
    /// endpoint's path unless that location is `missing`.
    pub fn resource_metadata_url(&self) -> String {
        let at_path = !self.config.missing.contains(&WellKnown::ResourcePath);
        format!("{}{}", self.origin, if at_path { resource_path() } else { RESOURCE_ROOT.to_string() })
    }

    /// Which well-known location `path` is, if the server serves one there.
    fn location(&self, path: &str) -> Option<WellKnown> {
        let ip = self.issuer_path();
        if path == resource_path() {
            return Some(WellKnown::ResourcePath);
        }
        if path == RESOURCE_ROOT {
            return Some(WellKnown::ResourceRoot);
        }
        if path == format!("/.well-known/oauth-authorization-server{ip}") {
            return Some(WellKnown::Oauth);
        }
        if path == format!("/.well-known/openid-configuration{ip}") {
            return Some(WellKnown::Openid);
        }
        if !ip.is_empty() && path == format!("{ip}/.well-known/openid-configuration") {
            return Some(WellKnown::OpenidAppended);
        }
        None
    }

    /// The answer to a GET of a well-known path.
    pub(super) fn well_known(&self, path: &str) -> Answer {
        let Some(location) = self.location(path) else {
            return Answer::empty(404, vec![], format!("{WHY}: no such document"));
        };
        // Without an issuer path, path appending and insertion are one URL: either name
        // removes it.
        let missing = self.config.missing.contains(&location)
            || (location == WellKnown::Openid
                && self.issuer_path().is_empty()
                && self.config.missing.contains(&WellKnown::OpenidAppended));
        if missing {
            return Answer::empty(404, vec![], format!("{WHY}: {} missing (scenario)", name(location)));
        }
        match location {
            WellKnown::ResourcePath | WellKnown::ResourceRoot => {
                Answer::json(200, &self.resource_metadata(), format!("{WHY}: protected resource metadata"))
            }
            WellKnown::Oauth => {
                Answer::json(200, &self.server_metadata(), format!("{WHY}: metadata ({})", name(location)))
            }
            WellKnown::Openid | WellKnown::OpenidAppended => {
                Answer::json(200, &self.openid_configuration(), format!("{WHY}: metadata ({})", name(location)))
            }
        }
    }

    /// The protected resource metadata document.
    pub fn resource_metadata(&self) -> Value {
        let resource = self.config.resource.as_deref().map(|r| self.expand(r)).unwrap_or_else(|| self.resource());
        let servers: Vec<String> = match &self.config.authorization_servers {
            Some(list) => list.iter().map(|s| self.expand(s)).collect(),
            None => vec![self.issuer()],
        };
        let mut doc = json!({
            "resource": resource,
            "authorization_servers": servers,
            "bearer_methods_supported": ["header"],
        });
        if let Some(scopes) = &self.config.scopes_supported {
            doc["scopes_supported"] = json!(scopes);
        }
        doc
    }

    /// The authorization server metadata document.
    pub fn server_metadata(&self) -> Value {
        let issuer = self.config.issuer.as_deref().map(|i| self.expand(i)).unwrap_or_else(|| self.issuer());
        let o = &self.origin;
        let mut doc = json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{o}/authorize"),
            "token_endpoint": format!("{o}/token"),
        });
        if self.config.registration != Registration::Absent {
            doc["registration_endpoint"] = json!(format!("{o}/register"));
        }
        doc["response_types_supported"] = json!(["code"]);
        doc["grant_types_supported"] = json!(["authorization_code", "refresh_token"]);
        doc["token_endpoint_auth_methods_supported"] = json!(["none", "client_secret_post"]);
        let methods = self.config.code_challenge_methods.clone().unwrap_or_else(|| vec!["S256".into()]);
        if !methods.is_empty() {
            doc["code_challenge_methods_supported"] = json!(methods);
        }
        if let Some(scopes) = &self.config.scopes_supported {
            doc["scopes_supported"] = json!(scopes);
        }
        if self.config.client_id_metadata_documents {
            doc["client_id_metadata_document_supported"] = json!(true);
        }
        if self.config.iss.is_some() {
            doc["authorization_response_iss_parameter_supported"] = json!(true);
        }
        doc
    }

    /// The document at the OpenID Connect Discovery locations: the authorization server
    /// metadata plus the members OpenID Connect Discovery 1.0 §3 marks REQUIRED that OAuth
    /// metadata lacks (`jwks_uri`, `subject_types_supported`,
    /// `id_token_signing_alg_values_supported`). Without them a client that validates the
    /// document as OpenID Provider Metadata rightly refuses it, and the scenarios that serve
    /// it would judge that refusal instead of the discovery order they are about.
    pub fn openid_configuration(&self) -> Value {
        let mut doc = self.server_metadata();
        doc["jwks_uri"] = json!(format!("{}/jwks", self.origin));
        doc["subject_types_supported"] = json!(["public"]);
        doc["id_token_signing_alg_values_supported"] = json!(["RS256"]);
        doc
    }
}

const RESOURCE_ROOT: &str = "/.well-known/oauth-protected-resource";

fn resource_path() -> String {
    format!("{RESOURCE_ROOT}{MCP_PATH}")
}

fn name(location: WellKnown) -> &'static str {
    match location {
        WellKnown::ResourcePath => "resource metadata at the endpoint's path",
        WellKnown::ResourceRoot => "resource metadata at the root",
        WellKnown::Oauth => "oauth-authorization-server",
        WellKnown::Openid => "openid-configuration (inserted)",
        WellKnown::OpenidAppended => "openid-configuration (appended)",
    }
}
