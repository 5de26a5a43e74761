//! What sits between the client and the mock (`via:`): a real nginx ([`Nginx`]) and/or the
//! in-process fault proxy ([`Fault`], one variant per `fault:`). Data only: running them is
//! `mcp_proxies`'s job, wiring them into a run the harness's.
//!
//! The client always talks to the fault proxy when a scenario has a `via:` (with no faults
//! it only records), so the transcript holds both hops: what the client saw, recorded by
//! the proxy, and what reached the mock, recorded by the mock.

use crate::ScenarioError;
use crate::default_true;
use crate::script::ServerStep;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_with::skip_serializing_none;
use std::collections::BTreeMap;

/// The proxies in front of the mock: `client → faults → nginx → mock`.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Via {
    /// A real nginx reverse proxy between the fault proxy and the mock.
    pub nginx: Option<Nginx>,
    /// Faults the in-process proxy applies, in order, to each request it forwards and each
    /// response it returns. Empty: the proxy forwards everything as is (and records it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<Fault>,
}

/// How the generated nginx config proxies to the mock.
#[skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Nginx {
    /// `proxy_buffering on|off`. Default true (nginx's own default).
    #[serde(default = "default_true")]
    pub buffering: bool,
    /// Whether the upstream's `X-Accel-Buffering: no` turns buffering off for its response
    /// (nginx's default); false writes `proxy_ignore_headers X-Accel-Buffering`.
    #[serde(default = "default_true")]
    pub honour_x_accel_buffering: bool,
    /// `proxy_read_timeout` in ms: the longest silence from the mock before nginx cuts the
    /// response. Default 60000 (nginx's own).
    pub read_timeout_ms: Option<u64>,
    /// Request headers nginx removes before the mock sees them (`proxy_set_header X "";`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strip_request_headers: Vec<String>,
    /// Request headers nginx sets (replacing the client's) before the mock sees them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub set_request_headers: BTreeMap<String, String>,
    /// Response headers nginx hides from the client (`proxy_hide_header`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hide_response_headers: Vec<String>,
    /// Retry a POST on the next upstream after a 502 or a broken connection
    /// (`proxy_next_upstream error timeout http_502 non_idempotent`, 2 tries). The upstream
    /// group lists the mock twice (or the mock and `second_upstream`), so the retry reaches
    /// a mock again: what a gateway in front of a replicated server does.
    #[serde(default)]
    pub retry_post: bool,
    /// A second mock instance behind the same nginx, running this script (it shares nothing
    /// with the first: sessions one issued are unknown to the other). Without sticky sessions
    /// at its worst: every POST that carries an `Mcp-Session-Id` reaches the second instance,
    /// everything else (initialize, a `server/discover` probe, any request sent before a
    /// session exists, GETs, DELETEs) the first. So the routing does not depend on how many
    /// session-less requests a client sends first, or on the order of requests MCP leaves
    /// unordered. Its records follow the first mock's connections in the transcript, headed
    /// `(upstream 2)`.
    pub second_upstream: Option<Vec<ServerStep>>,
}

/// Which requests a fault applies to (every fault's optional `only:`; absent: every request).
#[skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Only {
    /// Only requests whose JSON-RPC body has this `method` (e.g. `tools/call`).
    pub method: Option<String>,
    /// Only requests with this HTTP method (`POST`, `GET`, `DELETE`).
    pub http_method: Option<String>,
}

/// Which side of the exchange a header fault edits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The request, before the mock (or nginx) sees it.
    #[default]
    Request,
    /// The response, before the client sees it.
    Response,
}

/// One fault of the in-process proxy. Body faults see the response body as the pieces the
/// upstream wrote; they run in the order listed, each on the previous one's output.
#[skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "fault", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// Hold the response head `ms` (plus up to `jitter_ms` more, at random) before
    /// forwarding it.
    Latency {
        /// The delay.
        ms: u64,
        /// Up to this much more, uniformly at random.
        #[serde(default)]
        jitter_ms: u64,
        /// Which requests.
        #[serde(default)]
        only: Only,
    },
    /// Forward the response body at no more than this rate.
    Bandwidth {
        /// Bytes per second.
        bytes_per_second: u64,
        /// Which requests.
        #[serde(default)]
        only: Only,
    },
    /// Split every body piece into writes of at most `bytes` (1 = one byte per write),
    /// `delay_ms` apart.
    Rechunk {
        /// The largest write.
        bytes: usize,
        /// Pause between two writes. Default 0.
        #[serde(default)]
        delay_ms: u64,
        /// Which requests.
        #[serde(default)]
        only: Only,
    },
    /// Merge the body pieces that arrive within `window_ms` of the first into one write.
    Coalesce {
        /// How long a write is held for more to join it.
        window_ms: u64,
        /// Which requests.
        #[serde(default)]
        only: Only,
    },
    /// End the response abruptly (the connection closed, no final chunk) after
    /// `after_bytes` body bytes, or after the `after_events`-th complete SSE event
    /// (comments count as events: they are what a proxy sees).
    Cut {
        /// Bytes forwarded before the cut.
        after_bytes: Option<usize>,
        /// SSE events forwarded before the cut.
        after_events: Option<usize>,
        /// Which requests.
        #[serde(default)]
        only: Only,
    },
    /// Reset the client's connection (TCP RST) after `after_bytes` body bytes (default 0:
    /// before any).
    Reset {
        /// Bytes forwarded before the reset.
        #[serde(default)]
        after_bytes: usize,
        /// Which requests.
        #[serde(default)]
        only: Only,
    },
    /// Keep the response open `ms` after the upstream ended it, then end it cleanly.
    SlowClose {
        /// How long the end is held.
        ms: u64,
        /// Which requests.
        #[serde(default)]
        only: Only,
    },
    /// Forward the request, then never answer it (the client's timeout must fire).
    Stall {
        /// Which requests.
        #[serde(default)]
        only: Only,
    },
    /// Remove a header (any case).
    StripHeader {
        /// The header name.
        header: String,
        /// `request` (default) or `response`.
        #[serde(default)]
        side: Side,
        /// Which requests.
        #[serde(default)]
        only: Only,
    },
    /// Set a header to a value, replacing what was there.
    SetHeader {
        /// The header name.
        header: String,
        /// Its new value.
        value: String,
        /// `request` (default) or `response`.
        #[serde(default)]
        side: Side,
        /// Which requests.
        #[serde(default)]
        only: Only,
    },
    /// A gateway that retries: when the upstream answers 502, send the same request again,
    /// up to `tries` times in all (default 2); the client sees the last answer.
    #[serde(rename = "retry_on_502")]
    RetryOn502 {
        /// Attempts in all.
        #[serde(default = "default_tries")]
        tries: u32,
        /// Which requests.
        #[serde(default)]
        only: Only,
    },
    /// Hold a `text/event-stream` response body until the upstream ends it, then forward it
    /// in one write (a buffering proxy).
    BufferSse {
        /// Which requests.
        #[serde(default)]
        only: Only,
    },
}

fn default_tries() -> u32 {
    2
}

impl Fault {
    /// The fault's request filter.
    pub fn only(&self) -> &Only {
        match self {
            Fault::Latency { only, .. }
            | Fault::Bandwidth { only, .. }
            | Fault::Rechunk { only, .. }
            | Fault::Coalesce { only, .. }
            | Fault::Cut { only, .. }
            | Fault::Reset { only, .. }
            | Fault::SlowClose { only, .. }
            | Fault::Stall { only, .. }
            | Fault::StripHeader { only, .. }
            | Fault::SetHeader { only, .. }
            | Fault::RetryOn502 { only, .. }
            | Fault::BufferSse { only, .. } => only,
        }
    }
}

/// The rules a loader checks beyond the types: proxies are HTTP-only (Streamable HTTP),
/// and each fault's numbers make sense. The message names the field and what to write.
pub fn validate(via: &Via, transports: &[crate::TransportName]) -> Result<(), ScenarioError> {
    if transports.iter().any(|t| *t != crate::TransportName::Http) {
        return Err(ScenarioError::ViaNeedsHttp);
    }
    for (i, fault) in via.faults.iter().enumerate() {
        let number = i + 1;
        let zero = |fault, field| Err(ScenarioError::FaultFieldZero { number, fault, field });
        match fault {
            Fault::Rechunk { bytes: 0, .. } => return zero("rechunk", "bytes"),
            Fault::Bandwidth { bytes_per_second: 0, .. } => return zero("bandwidth", "bytes_per_second"),
            Fault::Cut { after_bytes, after_events, .. } if after_bytes.is_some() == after_events.is_some() => {
                return Err(ScenarioError::CutBoundNotOne { number });
            }
            Fault::Cut { after_events: Some(0), .. } => return Err(ScenarioError::CutAfterNoEvents { number }),
            Fault::RetryOn502 { tries: 0, .. } => return zero("retry_on_502", "tries"),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TransportName;

    #[test]
    fn faults_load_and_bad_numbers_say_what_to_write() {
        let via: Via = serde_saphyr::from_str(
            "faults:\n  - fault: rechunk\n    bytes: 1\n  - fault: strip_header\n    header: Mcp-Name\n    only: {method: tools/call}\n",
        )
        .expect("parses");
        assert_eq!(via.faults[1].only().method.as_deref(), Some("tools/call"));
        assert!(validate(&via, &[TransportName::Http]).is_ok());
        assert!(validate(&via, &[TransportName::Stdio]).is_err_and(|e| e.to_string().contains("transport: http")));
        let cut: Via = serde_saphyr::from_str("faults:\n  - fault: cut\n").expect("parses");
        assert_eq!(
            validate(&cut, &[TransportName::Http]).map_err(|e| e.to_string()),
            Err("fault 1 (cut): give exactly one of `after_bytes`, `after_events`".into())
        );
        let slow: Via =
            serde_saphyr::from_str("faults:\n  - fault: bandwidth\n    bytes_per_second: 0\n").expect("parses");
        assert_eq!(
            validate(&slow, &[TransportName::Http]).map_err(|e| e.to_string()),
            Err("fault 1 (bandwidth): `bytes_per_second` must be at least 1".into())
        );
        let unknown = serde_saphyr::from_str::<Via>("faults:\n  - fault: rechunk\n    bytes: 1\n    byte: 2\n");
        assert!(unknown.is_err());
    }
}
