//! The GET listener of stateful revisions (SPEC §4): unsolicited server messages, started
//! after `notifications/initialized` under a bounded startup deadline, disabled silently
//! when the server does not offer it, closing the transport when an established stream
//! ends for good.

use super::session::Outbound;
use super::stream::StreamEnd;
use super::{EVENT_STREAM, Inner};
use crate::error::TransportError;
use crate::http_common::mime;
use reqwest::{Response, StatusCode};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

impl Inner {
    /// Starts the GET listener (SPEC §4): waits for its startup at most the startup
    /// deadline; any failure disables it silently. A 200 stream that ends before its first
    /// byte counts as "no body" (disabled silently, no close): otherwise a server that
    /// answers 200-then-close would make every reconnect close again. A stream that
    /// delivered something and then ends (after resumptions) closes the transport.
    pub(super) async fn start_listener(self: &Arc<Self>) {
        let deadline = self.core.timeout.map(|t| {
            let ms = u64::try_from(t.as_millis()).unwrap_or(u64::MAX);
            Duration::from_millis((ms / 4).clamp(1, 1000))
        });
        let (started_tx, started_rx) = oneshot::channel::<()>();
        let inner = self.clone();
        tokio::spawn(async move {
            let open = inner.open_listener();
            let opened = tokio::select! {
                _ = inner.core.shutdown.cancelled() => None,
                r = async { match deadline {
                    Some(d) => tokio::time::timeout(d, open).await.unwrap_or_else(|_| {
                        tracing::debug!("GET listener disabled: startup deadline passed");
                        None
                    }),
                    None => open.await,
                } } => r,
            };
            let _ = started_tx.send(());
            let Some(resp) = opened else { return };
            match inner.run_stream(resp, None).await {
                StreamEnd::Shutdown | StreamEnd::Settled => {}
                StreamEnd::NoBody => tracing::debug!("GET listener disabled: the stream had no body"),
                StreamEnd::Ended | StreamEnd::Failed(_) => {
                    inner.shut(TransportError::Closed { reason: Some("HTTP GET stream closed".into()) }).await
                }
            }
        });
        // Without a timeout the listener has no deadline, but the handshake still must not
        // hang on an optional stream: stop waiting after the formula's maximum.
        let wait = deadline.unwrap_or(Duration::from_millis(1000));
        let _ = tokio::time::timeout(wait + Duration::from_millis(5), started_rx).await;
    }

    /// Opens the GET stream; `None` (with a debug log) when the server does not offer one.
    async fn open_listener(&self) -> Option<Response> {
        match self.send(Outbound::Get(None)).await {
            Ok((resp, _)) => {
                let status = resp.status();
                let sse = mime(&resp).as_deref() == Some(EVENT_STREAM);
                if status.is_success() && sse && resp.content_length() != Some(0) && status != StatusCode::NO_CONTENT {
                    Some(resp)
                } else {
                    tracing::debug!(status = status.as_u16(), sse, "GET listener disabled");
                    None
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "GET listener disabled");
                None
            }
        }
    }
}
