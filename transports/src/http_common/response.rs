//! Reading responses: status errors with their auth hints, the content type, and body
//! reads that never buffer more than a cap.

use crate::error::TransportError;
use bytes::Bytes;
use reqwest::Response;
use tokio_util::sync::CancellationToken;

/// How much of a non-2xx body goes into `HTTP <status>: <body>` (both HTTP transports).
pub const ERROR_BODY_LIMIT: usize = 4096;

/// The error for a non-2xx status: `SessionExpired` for a 404 on a request that carried a
/// session, else `HTTP <status>: <body>` with the body bounded and the auth hints.
pub(crate) async fn status_error(resp: Response, session: Option<&str>) -> TransportError {
    let status = resp.status().as_u16();
    if status == 404
        && let Some(session_id) = session
    {
        return TransportError::SessionExpired { session_id: session_id.to_owned() };
    }
    let hint = |name: &str| resp.headers().get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let www_authenticate = hint("www-authenticate");
    let mcp_auth_server = hint("mcp-auth-server");
    let body = read_truncated(resp, ERROR_BODY_LIMIT).await;
    TransportError::Http { status, body, www_authenticate, mcp_auth_server, accepted: false }
}

/// The lowercase MIME essence of the response's Content-Type.
pub(crate) fn mime(resp: &Response) -> Option<String> {
    let raw = resp.headers().get(reqwest::header::CONTENT_TYPE)?.to_str().ok()?;
    let essence = raw.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    if essence.is_empty() { None } else { Some(essence) }
}

/// Reads at most `limit` bytes of a body (lossily decoded); the rest is never read.
async fn read_truncated(mut resp: Response, limit: usize) -> String {
    let mut buf = Vec::new();
    while buf.len() < limit {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                let take = chunk.len().min(limit - buf.len());
                buf.extend_from_slice(&chunk[..take]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Why a capped body read failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyError {
    /// Over the cap; reading stopped there.
    #[error("body over the size cap")]
    TooLarge,
    /// The connection failed mid-body (the error carries no URL).
    #[error("{0}")]
    Failed(reqwest::Error),
}

/// Reads a whole body, refusing (without buffering) anything over `limit` bytes.
pub(crate) async fn read_capped(mut resp: Response, limit: usize) -> Result<Vec<u8>, BodyError> {
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(BodyError::TooLarge);
    }
    let mut buf = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if buf.len() + chunk.len() > limit {
                    return Err(BodyError::TooLarge);
                }
                buf.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(buf),
            Err(e) => return Err(BodyError::Failed(e.without_url())),
        }
    }
}

/// Why a streamed body gave no further chunk.
pub(crate) enum StreamStop {
    /// The transport shut down first.
    Shutdown,
    /// The body ended or the connection broke (logged at debug).
    Ended,
}

/// The next chunk of a streamed (SSE) body, unless the transport shuts down first.
pub(crate) async fn next_chunk(resp: &mut Response, shutdown: &CancellationToken) -> Result<Bytes, StreamStop> {
    let chunk = tokio::select! {
        _ = shutdown.cancelled() => return Err(StreamStop::Shutdown),
        c = resp.chunk() => c,
    };
    match chunk {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(StreamStop::Ended),
        Err(e) => {
            tracing::debug!(error = %e.without_url(), "SSE stream broke");
            Err(StreamStop::Ended)
        }
    }
}
