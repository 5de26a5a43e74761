//! The client plan: what the client under test is asked to do, in order. This is the
//! contract every external driver implements (`clients/README.md`): drivers receive the
//! plan as JSON in exactly this shape.

use crate::default_true;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_with::skip_serializing_none;
use std::collections::BTreeMap;

/// One step of the client plan.
#[skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientStep {
    /// Connect (spawn / open) and, unless `handshake: false`, run the MCP handshake.
    Connect(Connect),
    /// Send a request and wait for its outcome (unless `background`). The step reports the
    /// request's end: the result, or the error the SDK raised. For a 2026-07-28
    /// `subscriptions/listen` that end is the subscription's: `ok` with the server's result
    /// when the server ends it gracefully, an error when the stream drops for good or the
    /// request is cancelled; a driver reports each notification that arrives meanwhile as it
    /// comes (a `background` listen is ended by `cancel`).
    Request {
        /// The method.
        method: String,
        /// The params.
        params: Option<Value>,
        /// A per-request timeout override in ms.
        timeout_ms: Option<u64>,
        /// Do not wait; `await` or `cancel` it later by `as`.
        #[serde(default)]
        background: bool,
        /// The label for `await` / `cancel`.
        #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
        label: Option<String>,
        /// Pad the params with a `_pad` string of this many bytes (large requests without
        /// storing them in the file).
        pad_params: Option<usize>,
        /// Each `notifications/progress` for the params' `_meta.progressToken` restarts the
        /// timeout.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        reset_timeout_on_progress: bool,
        /// A bound on the whole request, in ms, that progress never extends.
        max_total_timeout_ms: Option<u64>,
        /// An earlier request met a 404 on its session (Streamable HTTP): the client is to
        /// have started a new session by itself (a new `initialize` without the old session
        /// id; MCP 2025-03-26 on: MUST) and to send this request on it. A client whose SDK
        /// leaves that to the application says `unsupported`, so the run is skipped, never
        /// passed; the bundled client leaves it to its manager (`connect` `managed:`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        new_session: bool,
    },
    /// Wait for a background request's outcome (recorded on this step).
    Await {
        /// The label of the background request.
        request: String,
    },
    /// Cancel a background request.
    Cancel {
        /// The label of the background request.
        request: String,
    },
    /// Stop waiting for a background request without cancelling it: the caller drops it
    /// (the bundled client drops the request's future, as a Rust caller does when it wraps
    /// a call in its own timeout or `select!`). What goes on the wire then is the client's
    /// own doing; nothing is left to `await`. Drivers whose language has no such thing say
    /// `unsupported`.
    Abandon {
        /// The label of the background request.
        request: String,
    },
    /// Send a notification.
    Notify {
        /// The method.
        method: String,
        /// The params.
        params: Option<Value>,
        /// Pad the params with a `_pad` string of this many bytes (a large notification
        /// without storing it in the file), as `request`'s `pad_params`.
        pad_params: Option<usize>,
    },
    /// Pause the plan for this long.
    Wait {
        /// Milliseconds.
        ms: u64,
    },
    /// Wait until the client has received a notification with this method (bounded by
    /// `timeout_ms`, default 1000). Lets a plan act only once the server got somewhere.
    /// A driver whose SDK does not hand notifications of this method to the application (it
    /// consumes them itself, or has no handler for them) says `unsupported`; it never waits
    /// out the bound and reports `ok`, nor reports a notification it did not see.
    WaitNotification {
        /// The notification method.
        method: String,
        /// Bound in ms.
        #[serde(default = "default_wait_closed_ms")]
        timeout_ms: u64,
    },
    /// Wait until the mock has received `count` client messages matching `method` and/or
    /// `http_method` (bounded by `timeout_ms`, default 1000): the client's own background
    /// traffic — a DELETE after close, the GET listener, a retry — that no plan step
    /// returns for. Fails when the bound passes. Drivers read the mock's records in
    /// `MCP_HARNESS_RUN_DIR` (`clients/README.md`).
    WaitSent {
        /// The JSON-RPC method of the message (any, when absent).
        method: Option<String>,
        /// HTTP transports: the HTTP method of the request, e.g. `DELETE` (any, when absent).
        http_method: Option<String>,
        /// How many such messages (at least; default 1).
        #[serde(default = "default_count")]
        count: usize,
        /// Bound in ms.
        #[serde(default = "default_wait_closed_ms")]
        timeout_ms: u64,
    },
    /// Wait until the transport reports closed (bounded by `timeout_ms`, default 1000).
    WaitClosed {
        /// Bound in ms.
        #[serde(default = "default_wait_closed_ms")]
        timeout_ms: u64,
    },
    /// Close the connection.
    Close,
    /// Managed connection (`connect` with `managed`): wait until the manager reported
    /// `count` events named `event` (`reconnected`, `attempt`, `attempt_failed`, `gave_up`,
    /// `breaker_open`, `new_session`, `refreshed`, `replayed`, `replay_refused`,
    /// `disconnected`), bounded by `timeout_ms` (default 1000).
    WaitManager {
        /// The event's name.
        event: String,
        /// How many (at least; default 1).
        #[serde(default = "default_count")]
        count: usize,
        /// Bound in ms.
        #[serde(default = "default_wait_closed_ms")]
        timeout_ms: u64,
    },
    /// Managed connection: the manager's connection status and the names of the tools it
    /// shows now (the stale ones while reconnecting), as this step's result
    /// `{"status": …, "tools": [names]}`; once a `list_changed` made it list resources or
    /// prompts, also `"resources": [names]` / `"prompts": [names]`.
    ManagerTools,
}

/// See [`Connect::managed`]: the manager's reconnect schedule and storm breaker (SPEC §7).
/// Scenarios shrink `base_delay_ms` so they run in milliseconds; the schedule keeps its
/// shape (base, 2·base, 4·base, …).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Managed {
    /// The first backoff delay in ms (default 500).
    #[serde(default = "default_base_delay_ms")]
    pub base_delay_ms: u64,
    /// Reconnect attempts before giving up (default 4).
    #[serde(default = "default_attempts")]
    pub attempts: u32,
    /// Up to this fraction of each delay is added at random (default 0.2).
    #[serde(default = "default_jitter")]
    pub jitter: f64,
    /// Unexpected closes within `breaker_window_ms` that stop reconnecting (default 3).
    #[serde(default = "default_breaker_closes")]
    pub breaker_closes: usize,
    /// The breaker's window in ms (default 60000).
    #[serde(default = "default_breaker_window_ms")]
    pub breaker_window_ms: u64,
}

fn default_base_delay_ms() -> u64 {
    500
}

fn default_attempts() -> u32 {
    4
}

/// The reconnect jitter fraction when a plan gives none; a `backoff` check assumes it too.
pub(crate) fn default_jitter() -> f64 {
    0.2
}

fn default_breaker_closes() -> usize {
    3
}

fn default_breaker_window_ms() -> u64 {
    60_000
}

/// See [`ClientStep::Connect`]: the settings of the connection the client under test opens.
/// An `Option` field may be left out and is not written when `None`.
#[skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Connect {
    /// Run initialize / initialized (default true).
    #[serde(default = "default_true")]
    pub handshake: bool,
    /// The connection's timeout in ms (`0` disables): the default bound of every request
    /// on it, and of the handshake as a whole. It counts from when the transport is
    /// connected (stdio: the server process spawned; HTTP: the first request sent), so
    /// spawning the server is not in it. A driver whose SDK counts spawning too passes the
    /// value on as it is and says so in its README.
    pub timeout_ms: Option<u64>,
    /// Environment for the client (e.g. `MCP_TIMEOUT_MS`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Cap on one inbound message, in bytes.
    pub max_message_bytes: Option<usize>,
    /// Use string request ids.
    #[serde(default)]
    pub string_ids: bool,
    /// Roots the client answers `roots/list` with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<Value>,
    /// HTTP transports: headers the user configured (e.g. an `Authorization` bearer
    /// token). Generated protocol headers must win over them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// HTTP transports: install an auth refresh hook that, asked on a 401/403, returns
    /// these headers (e.g. a new bearer token); `{}` makes a hook that returns nothing.
    /// Absent: no hook.
    pub auth_refresh: Option<BTreeMap<String, String>>,
    /// Run the connection under the manager (SPEC §7): it reconnects after an unexpected
    /// close, starts a new session after a 404, and `request` steps with `tools/call` follow
    /// its replay rule. Absent: a plain transport.
    pub managed: Option<Managed>,
    /// The protocol version the client prefers (default: the scenario's revision), e.g. a
    /// later modern version the mock does not support, to make it negotiate. A driver for
    /// an SDK that takes a list of versions puts this one first, then the scenario's
    /// revision; one whose SDK always offers its own says `unsupported`.
    pub protocol_version: Option<String>,
    /// With a modern `protocol_version` (2026-07-28 on), which client the plan needs when the
    /// server turns out legacy: `true` a dual-era one, which falls back to the initialize
    /// handshake (the versioning page's Dual-era / Legacy row); `false` a modern-only one,
    /// which surfaces the error (Modern / Legacy). Absent: the client's own default. A
    /// driver whose client cannot be what is asked (a client that speaks only 2026-07-28,
    /// asked for `true`) reports the step `unsupported`, so the fallback scenarios never
    /// judge a modern-only client by the legacy rules.
    pub legacy_fallback: Option<bool>,
    /// HTTP transports: authorize with OAuth (MCP's authorization page of the revision):
    /// on a 401 the client discovers the authorization server, registers (or uses the
    /// client id given), runs the authorization code flow with PKCE S256 — its
    /// user-interaction step answered headlessly by following the authorization server's
    /// redirect — and sends the token it gets; it refreshes on a later 401 and steps up on
    /// a 403 `insufficient_scope`. `{}` asks for the flow with the client's defaults. A
    /// driver whose SDK has no OAuth client, or no way to answer the user step without a
    /// person, says `unsupported`. Absent: no OAuth.
    pub oauth: Option<OAuth>,
}

/// `connect`'s `oauth`: the authorization client the plan asks for.
#[skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OAuth {
    /// A pre-registered client id (used before any registration).
    pub client_id: Option<String>,
    /// The pre-registered client's secret (a confidential client).
    pub client_secret: Option<String>,
    /// A Client ID Metadata Document URL (`https://…`), used as the client id where the
    /// authorization server accepts those.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for when neither the 401 nor the resource metadata names any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The redirect URI (default: the client's own, a loopback one).
    pub redirect_uri: Option<String>,
}

fn default_count() -> usize {
    1
}

fn default_wait_closed_ms() -> u64 {
    1000
}
