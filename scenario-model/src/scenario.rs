//! The scenario file itself: name, transports, revision, and its three parts — the client
//! plan ([`crate::plan`]), the server script ([`crate::script`]) and the checks
//! ([`crate::checks`]).
//!
//! The Rust types are the single source of truth: the loader deserialises them strictly
//! (unknown fields rejected) and `scenarios/schema.json` is generated from them.
//! Documentation with examples: `scenarios/README.md`.

use crate::basis::CheckEntry;
use crate::plan::ClientStep;
use crate::script::ServerStep;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One scenario file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Unique name; also the snapshot's file name. Lowercase words joined by `-`.
    pub name: String,
    /// One sentence: what this scenario proves.
    pub summary: String,
    /// The transport(s) this scenario runs over.
    pub transport: TransportSet,
    /// The MCP protocol revision the mock speaks, e.g. `2025-11-25`.
    pub revision: Revision,
    /// Where the rule comes from: SPEC section, MCP spec page, seed section, or bug URL.
    #[serde(default)]
    pub refs: Vec<String>,
    /// Hard deadline for the whole run in ms; on expiry the client is killed and the run is
    /// reported as a timeout.
    #[serde(default = "default_deadline_ms")]
    pub deadline_ms: u64,
    /// The client plan: what the client under test is asked to do, in order.
    pub client: Vec<ClientStep>,
    /// The server script the mock executes, in order. A `new_connection` step starts the
    /// script of the client's next connection (a respawn, a new HTTP session).
    pub server: Vec<ServerStep>,
    /// What must hold of the outcome and the wire transcript, each with what it rests on.
    #[serde(default)]
    pub checks: Vec<CheckEntry>,
    /// Proxies between the client and the mock (HTTP transports only): a real nginx and/or
    /// the fault proxy. The transcript then shows both hops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<crate::via::Via>,
}

fn default_deadline_ms() -> u64 {
    3000
}

/// The transports a scenario runs over: one name or a list of names.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TransportSet {
    /// A single transport.
    One(TransportName),
    /// Several transports; the scenario runs once per transport.
    Many(Vec<TransportName>),
}

impl TransportSet {
    /// The transports as a list.
    pub fn to_vec(&self) -> Vec<TransportName> {
        match self {
            TransportSet::One(t) => vec![*t],
            TransportSet::Many(ts) => ts.clone(),
        }
    }
}

/// A wire transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TransportName {
    /// Newline-delimited JSON over a child process's stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
    /// Legacy HTTP+SSE (2024-11-05).
    LegacySse,
}

impl TransportName {
    /// The name as written in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            TransportName::Stdio => "stdio",
            TransportName::Http => "http",
            TransportName::LegacySse => "legacy-sse",
        }
    }
}

/// An MCP protocol revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub enum Revision {
    /// 2024-11-05 (legacy HTTP+SSE).
    #[serde(rename = "2024-11-05")]
    R2024_11_05,
    /// 2025-03-26 (Streamable HTTP, batches).
    #[serde(rename = "2025-03-26")]
    R2025_03_26,
    /// 2025-06-18.
    #[serde(rename = "2025-06-18")]
    R2025_06_18,
    /// 2025-11-25.
    #[serde(rename = "2025-11-25")]
    R2025_11_25,
    /// 2026-07-28 (stateless).
    #[serde(rename = "2026-07-28")]
    R2026_07_28,
}

impl Revision {
    /// The revision string as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::R2024_11_05 => "2024-11-05",
            Revision::R2025_03_26 => "2025-03-26",
            Revision::R2025_06_18 => "2025-06-18",
            Revision::R2025_11_25 => "2025-11-25",
            Revision::R2026_07_28 => "2026-07-28",
        }
    }
}
