//! The scenario file itself: name, transports, revision, and its three parts — the client
//! plan ([`crate::plan`]), the server script ([`crate::script`]) and the checks
//! ([`crate::checks`]).
//!
//! The Rust types are the single source of truth: the loader deserialises them strictly
//! (unknown fields rejected) and `scenarios/schema.json` is generated from them.
//! Documentation with examples: `scenarios/README.md`.

use crate::ScenarioError;
use crate::basis::CheckEntry;
use crate::plan::ClientStep;
use crate::script::ServerStep;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;
use std::collections::BTreeMap;

/// One scenario file.
#[skip_serializing_none]
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
    /// Marks the scenario pending, with the reason (e.g. the issue it waits on): it is
    /// loaded and validated like any other, reported with status `pending` and the reason,
    /// counted in the totals, and never run.
    pub pending: Option<String>,
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
    /// The step of `server:` (1-based) that makes the scenario's fault, where the one the
    /// loader derives is not it. A run whose client never met the fault is reported *not
    /// exercised*, never passed (scenarios/README.md, "The fault and earned verdicts"). By
    /// default: the first step that deviates from a conformant server (raw bytes, a delay or
    /// stall, an HTTP status, a dropped stream, an exit, an expired session, a required
    /// token…); in a script without one, its first answer to a client message other than the
    /// handshake.
    pub fault: Option<usize>,
    /// Server steps (1-based, as `fault` numbers them) that send a message the revision's
    /// schema does not allow, on purpose, each with why: a malformed result the client must
    /// refuse, a notification a broken server sends. Every other message the mock sends is
    /// valid for the revision (`harness/tests/harness/mock_conformance.rs` holds it to the
    /// official schema); the fault's own step needs no entry. `mcp-harness explain` names
    /// each. E.g. `deviations: {4: "a tools/list result without tools"}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub deviations: BTreeMap<usize, String>,
    /// What must hold of the outcome and the wire transcript, each with what it rests on.
    #[serde(default)]
    pub checks: Vec<CheckEntry>,
    /// Proxies between the client and the mock (HTTP transports only): a real nginx and/or
    /// the fault proxy. The transcript then shows both hops.
    pub via: Option<crate::via::Via>,
}

fn default_deadline_ms() -> u64 {
    3000
}

/// The transports a scenario runs over: one name or a list of names.
///
/// `Deserialize` is written by hand (serde's `untagged` would hide which value was wrong
/// behind "did not match any variant"): a string is one name, a sequence several.
#[derive(Debug, Clone, Serialize, JsonSchema)]
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

impl<'de> Deserialize<'de> for TransportSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Set;
        impl<'de> serde::de::Visitor<'de> for Set {
            type Value = TransportSet;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "a transport ({}) or a list of them", TransportName::VALID)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TransportSet, E> {
                TransportName::parse(v).map(TransportSet::One).map_err(E::custom)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<TransportSet, A::Error> {
                let mut names = Vec::new();
                while let Some(name) = seq.next_element::<TransportName>()? {
                    names.push(name);
                }
                Ok(TransportSet::Many(names))
            }
        }
        d.deserialize_any(Set)
    }
}

/// A wire transport.
///
/// `Deserialize` is written by hand so an unknown name lists the valid ones and the closest
/// ([`TransportName::parse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TransportName {
    /// Newline-delimited JSON over a child process's stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
    /// Legacy HTTP+SSE (2024-11-05).
    LegacySse,
}

impl<'de> Deserialize<'de> for TransportName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        TransportName::parse(&name).map_err(serde::de::Error::custom)
    }
}

impl TransportName {
    /// Every transport, in the order messages list them.
    pub const ALL: [TransportName; 3] = [TransportName::Stdio, TransportName::Http, TransportName::LegacySse];

    /// The valid names, as messages list them.
    pub const VALID: &'static str = "`stdio`, `http` (Streamable HTTP) or `legacy-sse` (HTTP+SSE, 2024-11-05)";

    /// Reads a name as scenario files and `--transport` write it; an unknown one is
    /// refused with the valid names and, when one is obviously meant, that one.
    pub fn parse(name: &str) -> Result<TransportName, ScenarioError> {
        if let Some(t) = TransportName::ALL.into_iter().find(|t| t.as_str() == name) {
            return Ok(t);
        }
        Err(ScenarioError::UnknownTransport {
            name: name.to_string(),
            valid: TransportName::VALID,
            closest: TransportName::closest(name).map(TransportName::as_str),
        })
    }

    /// The transport an unknown name obviously means: a spelling of it (case, `_` for `-`,
    /// the long name `streamable-http`, plain `sse`), or one a typo or two away.
    fn closest(name: &str) -> Option<TransportName> {
        let folded = name.trim().to_ascii_lowercase().replace(['_', ' ', '+'], "-");
        let alias = match folded.as_str() {
            "streamable-http" | "streamablehttp" | "streamable" | "https" => Some(TransportName::Http),
            "sse" | "legacy" | "http-sse" | "legacysse" | "legacy-http" => Some(TransportName::LegacySse),
            "std-io" | "pipe" | "pipes" => Some(TransportName::Stdio),
            other => TransportName::ALL.into_iter().find(|t| t.as_str() == other),
        };
        alias.or_else(|| {
            TransportName::ALL
                .into_iter()
                .map(|t| (strsim::levenshtein(&folded, t.as_str()), t))
                .filter(|(d, _)| *d <= 2)
                .min_by_key(|(d, _)| *d)
                .map(|(_, t)| t)
        })
    }

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
    /// Every revision, oldest first.
    pub const ALL: [Revision; 5] = [
        Revision::R2024_11_05,
        Revision::R2025_03_26,
        Revision::R2025_06_18,
        Revision::R2025_11_25,
        Revision::R2026_07_28,
    ];

    /// Reads a revision as written (`2025-11-25`); an unknown one is refused with the valid ones.
    pub fn parse(s: &str) -> Result<Revision, ScenarioError> {
        Revision::ALL.into_iter().find(|r| r.as_str() == s).ok_or_else(|| ScenarioError::UnknownRevision {
            given: s.to_string(),
            valid: Revision::ALL.iter().map(|r| r.as_str()).collect(),
        })
    }

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
