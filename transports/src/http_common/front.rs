//! The one [`Transport`] impl of both HTTP-kind transports. Each public type is a handle on
//! its [`HttpKind`] state ([`HttpFront`]); requests, notifications, the connection state and
//! the counters go through the shared flows, so the two answer alike, and what differs
//! (closing, the negotiated revision, the GET listener) is the kind's.

use super::exchange::{self, HttpKind};
use crate::error::TransportError;
use crate::transport::{Diagnostics, Reply, RequestOptions, Transport};
use serde_json::Value;
use std::sync::Arc;

/// The public type of an HTTP-kind transport: a handle on the state it shares with its
/// background tasks. It gets [`Transport`] from the impl in this module.
pub(crate) trait HttpFront: Send + Sync {
    /// The transport's state.
    type Kind: HttpKind;

    /// The state.
    fn kind(&self) -> &Arc<Self::Kind>;
}

#[async_trait::async_trait]
impl<T: HttpFront> Transport for T {
    async fn request(&self, method: &str, params: Option<Value>, options: RequestOptions) -> Reply {
        exchange::request(self.kind(), method, params, options).await
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), TransportError> {
        exchange::notify(&**self.kind(), method, params).await
    }

    async fn close(&self) {
        self.kind().close().await;
    }

    fn is_connected(&self) -> bool {
        self.kind().core().is_connected()
    }

    fn diagnostics(&self) -> Diagnostics {
        self.kind().core().correlator.diagnostics()
    }

    fn set_protocol_version(&self, version: &str) {
        self.kind().set_protocol_version(version);
    }

    async fn on_initialized(&self) {
        self.kind().on_initialized().await;
    }

    fn fall_back_to_stateful(&self) -> bool {
        self.kind().fall_back_to_stateful()
    }

    fn mirrors_param_headers(&self) -> bool {
        self.kind().mirrors_param_headers()
    }

    fn set_tool_param_headers(&self, tools: Vec<(String, Vec<crate::param_headers::Annotation>)>) {
        self.kind().set_tool_param_headers(tools);
    }
}
