//! Reading SSE streams (a request's reply stream or the GET stream) and resuming them
//! with GET + `Last-Event-ID` after a break (SPEC §4 "Resumption"); an accepted POST is
//! never re-sent.

use super::session::Outbound;
use super::{BATCH_REVISION, EVENT_STREAM, Inner};
use crate::error::TransportError;
use crate::http_common::{self, StreamStop, event_message, mime, next_chunk, status_error, with_timeout};
use crate::message::RequestId;
use crate::sse::{SseEvent, SseItem, SseParser};
use reqwest::header::HeaderValue;
use reqwest::{Response, StatusCode};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// Reconnection delay when the server sent no `retry` (WHATWG's usual default).
const DEFAULT_RETRY_MS: u64 = 1000;
/// Floor on any reconnection delay, so a `retry: 0` server cannot make us spin.
const MIN_RETRY_MS: u64 = 10;
/// Consecutive resumption attempts without progress before a stream is given up.
pub const MAX_RESUME_ATTEMPTS: u32 = 3;

/// How a reply stream (or the GET stream) ended, resumptions included.
pub(super) enum StreamEnd {
    /// The transport is shutting down.
    Shutdown,
    /// The watched request was settled (the stream was drained afterwards).
    Settled,
    /// The stream ended and could not be resumed.
    Ended,
    /// Resumption failed with an error worth returning (e.g. the session expired).
    Failed(TransportError),
    /// The GET listener's first response ended without a single byte: "no body".
    NoBody,
}

/// What reading one SSE response saw.
struct ReadOutcome {
    /// An event was dispatched or the event id advanced (resets the resumption budget).
    progressed: bool,
    /// Any body byte arrived at all.
    any_bytes: bool,
}

/// Where a stream's resumption stands.
struct Cursor {
    last_id: Option<String>,
    retry_ms: u64,
}

impl Inner {
    fn dispatch_event(self: &Arc<Self>, event: SseEvent) {
        if let Some(value) = event_message(&self.core.correlator, event) {
            match value {
                Value::Array(items) if self.revision() == BATCH_REVISION => {
                    items.into_iter().for_each(|v| http_common::route(self, v))
                }
                other => http_common::route(self, other),
            }
        }
    }

    /// Reads one SSE response to its end, dispatching its events.
    async fn read_events(self: &Arc<Self>, mut resp: Response, cursor: &mut Cursor) -> ReadOutcome {
        let mut parser = SseParser::new(self.core.max_bytes);
        let mut progressed = false;
        let mut any_bytes = false;
        loop {
            let bytes = match next_chunk(&mut resp, &self.core.shutdown).await {
                Ok(bytes) => bytes,
                Err(StreamStop::Shutdown | StreamStop::Ended) => break,
            };
            any_bytes |= !bytes.is_empty();
            for item in parser.feed(&bytes) {
                match item {
                    SseItem::Oversize { limit } => self.core.correlator.oversize(limit),
                    SseItem::Event(ev) => {
                        progressed = true;
                        self.dispatch_event(ev);
                    }
                }
            }
            if let Some(last) = parser.last_event_id()
                && cursor.last_id.as_deref() != Some(last)
            {
                cursor.last_id = Some(last.to_owned());
                progressed = true;
            }
            if let Some(ms) = parser.retry() {
                cursor.retry_ms = ms;
            }
        }
        ReadOutcome { progressed, any_bytes }
    }

    /// Reads a stream, resuming it with GET + `Last-Event-ID` when it breaks after an event
    /// with an id, until `watch` (a request id) is settled or no resumption is possible.
    pub(super) async fn run_stream(self: &Arc<Self>, first: Response, watch: Option<&RequestId>) -> StreamEnd {
        let mut cursor = Cursor { last_id: None, retry_ms: DEFAULT_RETRY_MS };
        let mut next = Some(first);
        let mut attempts = 0;
        let mut first = true;
        loop {
            if let Some(resp) = next.take() {
                let read = self.read_events(resp, &mut cursor).await;
                if read.progressed {
                    attempts = 0;
                }
                if std::mem::replace(&mut first, false) && watch.is_none() && !read.any_bytes {
                    return StreamEnd::NoBody;
                }
            }
            if self.core.shutdown.is_cancelled() {
                return StreamEnd::Shutdown;
            }
            if watch.is_some_and(|id| !self.core.correlator.is_pending(id)) {
                return StreamEnd::Settled;
            }
            // An id that cannot travel as a header cannot be resumed from.
            let Some(last_id) = cursor.last_id.clone().filter(|id| HeaderValue::from_str(id).is_ok()) else {
                return StreamEnd::Ended;
            };
            if attempts >= MAX_RESUME_ATTEMPTS {
                return StreamEnd::Ended;
            }
            attempts += 1;
            let wait = Duration::from_millis(cursor.retry_ms.max(MIN_RETRY_MS));
            tokio::select! {
                _ = self.core.shutdown.cancelled() => return StreamEnd::Shutdown,
                _ = tokio::time::sleep(wait) => {}
            }
            if watch.is_some_and(|id| !self.core.correlator.is_pending(id)) {
                return StreamEnd::Settled;
            }
            match with_timeout(self.core.timeout, self.send(Outbound::Get(Some(&last_id)))).await {
                Ok((resp, _)) if resp.status().is_success() && mime(&resp).as_deref() == Some(EVENT_STREAM) => {
                    next = Some(resp)
                }
                Ok((resp, session)) if resp.status() == StatusCode::NOT_FOUND && session.is_some() => {
                    return StreamEnd::Failed(status_error(resp, session.as_deref()).await);
                }
                Ok((resp, _)) if resp.status() == StatusCode::METHOD_NOT_ALLOWED || resp.status().is_success() => {
                    tracing::debug!(status = resp.status().as_u16(), "server cannot resume the stream");
                    return StreamEnd::Ended;
                }
                Ok((resp, _)) => tracing::debug!(status = resp.status().as_u16(), "resumption GET failed"),
                Err(e) => tracing::debug!(error = %e, "resumption GET failed"),
            }
        }
    }
}
