//! A connected session: the transport the options select, the `initialize` handshake on
//! stateful revisions (none on 2026-07-28), requests, listings that follow `nextCursor`,
//! and one retry at a mutually supported revision when the server refuses ours
//! ([`revision`](crate::revision)).

use crate::answers;
use crate::error::ClientError;
use crate::revision::{self, is_stateless};
use crate::server::ConnectOptions;
use mcp_transports::client::{ClientOptions, InitializeResult, create_transport, handshake};
use mcp_transports::{Handlers, RequestOptions, Transport};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Mutex;

/// Pages of one listing followed at most, so a server that always returns a cursor cannot
/// keep a run busy forever.
pub const MAX_PAGES: usize = 100;

/// An open session. Cheap to share behind `&`; every method takes `&self`.
pub struct Session {
    options: ConnectOptions,
    current: Mutex<Connection>,
    /// The revision retry happens once per session, so two servers cannot bounce a client.
    retried: AtomicBool,
}

/// One transport and what was learned when it was opened.
struct Connection {
    transport: Arc<dyn Transport>,
    revision: String,
    initialized: Option<InitializeResult>,
}

impl Session {
    /// Connects, and on a stateful revision runs the handshake.
    pub async fn open(options: ConnectOptions) -> Result<Session, ClientError> {
        let connection = connect(&options, &options.protocol_version.clone()).await?;
        Ok(Session { options, current: Mutex::new(connection), retried: AtomicBool::new(false) })
    }

    /// The revision in force.
    pub async fn revision(&self) -> String {
        self.current.lock().await.revision.clone()
    }

    /// What the handshake learned (`None` on a stateless revision).
    pub async fn initialized(&self) -> Option<InitializeResult> {
        self.current.lock().await.initialized.clone()
    }

    /// Sends one request (`params` an object, `{}` when none) and returns its result. A
    /// stateless request refused with `UnsupportedProtocolVersionError` is retried once at
    /// the most preferred revision both sides speak.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let transport = self.current.lock().await.transport.clone();
        let error = match transport.request(method, Some(params.clone()), RequestOptions::default()).await {
            Ok(result) => return Ok(result),
            Err(e) => e,
        };
        let Some(next) = self.retry_revision(&error).await else { return Err(ClientError::transport(method, error)) };
        tracing::info!(%method, revision = next, "the server refused our protocol version; retrying once");
        let retry = {
            let mut current = self.current.lock().await;
            current.transport.close().await;
            *current = connect(&self.options, next).await?;
            current.transport.clone()
        };
        retry
            .request(method, Some(params), RequestOptions::default())
            .await
            .map_err(|e| ClientError::transport(method, e))
    }

    async fn retry_revision(&self, error: &mcp_transports::TransportError) -> Option<&'static str> {
        let supported = revision::supported_by_server(error)?;
        if !is_stateless(&self.revision().await) || self.retried.swap(true, Ordering::SeqCst) {
            return None;
        }
        revision::mutually_supported(&supported)
    }

    /// Every item of a paginated listing (`tools/list` → `tools`, …), following
    /// `nextCursor` until it is absent, repeats, or [`MAX_PAGES`] pages were read.
    pub async fn list_all(&self, method: &str, member: &'static str) -> Result<Vec<Value>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map(|c| json!({"cursor": c})).unwrap_or_else(|| json!({}));
            let page = self.request(method, params).await?;
            let Some(list) = page.get(member).and_then(Value::as_array) else {
                return Err(ClientError::BadResult { method: method.to_owned(), member });
            };
            items.extend(list.iter().cloned());
            let next = page.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
            if next.is_none() || next == cursor {
                return Ok(items);
            }
            cursor = next;
        }
        tracing::warn!(%method, pages = MAX_PAGES, "the listing kept returning a cursor; keeping what was read");
        Ok(items)
    }

    /// Closes the transport (bounded in time by the transports).
    pub async fn close(&self) {
        self.current.lock().await.transport.close().await;
    }
}

async fn connect(options: &ConnectOptions, revision: &str) -> Result<Connection, ClientError> {
    let handlers = Handlers {
        on_request: Some(answers::request_handler()),
        on_notification: Some(Arc::new(|method: &str, params: &Value| {
            tracing::info!(%method, %params, "server notification");
        })),
        on_error: Some(Arc::new(|error: &mcp_transports::TransportError| tracing::warn!(%error, "transport"))),
        on_close: None,
    };
    let config = options.transport_config(revision);
    let transport = create_transport(&config, handlers).await.map_err(|e| ClientError::transport("connect", e))?;
    if is_stateless(revision) {
        return Ok(Connection { transport, revision: revision.to_owned(), initialized: None });
    }
    let client = ClientOptions {
        protocol_version: revision.to_owned(),
        client_name: env!("CARGO_PKG_NAME").into(),
        client_version: env!("CARGO_PKG_VERSION").into(),
        roots: Vec::new(),
        // The whole handshake is bounded like one request (SPEC §6); 0 disables timeouts.
        timeout: options.timeout_ms.filter(|&ms| ms > 0).map(std::time::Duration::from_millis),
        list_tools: true,
        legacy_fallback: true,
    };
    let initialized = handshake(&*transport, &client).await.map_err(|e| ClientError::transport("initialize", e))?;
    Ok(Connection { transport, revision: initialized.protocol_version.clone(), initialized: Some(initialized) })
}
