//! 2026-07-28 subscriptions across a reconnect (SPEC §7, subscriptions.mdx Graceful
//! Closure: "the server holds no subscription state across reconnections"). A managed
//! `subscriptions/listen` whose connection closed unexpectedly is re-sent on the new
//! connection with the same filter (a new request, so a new JSON-RPC id and subscription
//! id); the time from the drop to the new acknowledgement is reported as a window in which
//! notifications may have been missed.
//!
//! The transports do not expose a request's JSON-RPC id, so an acknowledgement is matched to
//! a listen by connection generation: each listen sent on a generation claims the oldest
//! unclaimed acknowledgement of that generation. With several listens in flight the pairing
//! may swap two of them; every listen still learns when a subscription of its connection
//! came back, which is what the window needs.

use crate::error::TransportError;
use crate::subscriptions;
use std::collections::VecDeque;

/// The long-lived request this module keeps alive.
pub const LISTEN: &str = "subscriptions/listen";

/// The acknowledgements seen per connection generation, not yet claimed by a listen.
#[derive(Debug, Default)]
pub struct AckBook {
    unclaimed: VecDeque<(u64, String)>,
}

impl AckBook {
    /// An acknowledgement of subscription `id` arrived on generation `generation`.
    pub fn record(&mut self, generation: u64, id: String) {
        self.unclaimed.push_back((generation, id));
    }

    /// Claims the oldest acknowledgement of `generation`; acknowledgements of older
    /// generations are forgotten (their connection is gone).
    pub fn claim(&mut self, generation: u64) -> Option<String> {
        self.unclaimed.retain(|(g, _)| *g >= generation);
        let at = self.unclaimed.iter().position(|(g, _)| *g == generation)?;
        self.unclaimed.remove(at).map(|(_, id)| id)
    }
}

/// What to do after a managed listen's request failed with `err`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// The connection went down under it: re-send on the next connection.
    Resend,
    /// The server's answer, a cancellation, the caller's close: the caller gets the error.
    ToCaller,
}

/// The rule: only a listen that lost its connection is re-sent. `connection_down` is
/// whether the transport it was sent on is no longer connected (or already replaced);
/// `closing` whether the caller closed the managed connection.
pub fn after_failure(err: &TransportError, connection_down: bool, closing: bool) -> AfterFailure {
    let lost =
        matches!(err, TransportError::Closed { .. } | TransportError::NotConnected) || subscriptions::dropped(err);
    if lost && connection_down && !closing { AfterFailure::Resend } else { AfterFailure::ToCaller }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{RequestId, RpcError};

    #[test]
    fn a_listen_claims_an_acknowledgement_of_its_own_generation_once() {
        let mut book = AckBook::default();
        book.record(1, "1".into());
        book.record(2, "1".into());
        book.record(2, "2".into());
        assert_eq!(book.claim(3), None, "nothing acknowledged on generation 3 yet");
        let mut book = AckBook::default();
        book.record(1, "1".into());
        book.record(2, "3".into());
        assert_eq!(book.claim(2).as_deref(), Some("3"));
        assert_eq!(book.claim(2), None, "claimed once");
        assert_eq!(book.claim(1), None, "generation 1 was forgotten when 2 was claimed");
        book.record(2, "4".into());
        book.record(2, "5".into());
        assert_eq!(book.claim(2).as_deref(), Some("4"), "oldest first");
    }

    #[test]
    fn only_a_listen_whose_connection_went_down_is_resent() {
        let closed = TransportError::Closed { reason: None };
        let dropped = TransportError::NoResponse { id: RequestId::Number(1) };
        let refused = TransportError::Rpc(RpcError { code: -32601, message: "no".into(), data: None });
        let cancelled = TransportError::Cancelled { reason: None };
        assert_eq!(after_failure(&closed, true, false), AfterFailure::Resend);
        assert_eq!(after_failure(&dropped, true, false), AfterFailure::Resend);
        assert_eq!(after_failure(&TransportError::NotConnected, true, false), AfterFailure::Resend);
        assert_eq!(after_failure(&closed, true, true), AfterFailure::ToCaller, "the caller closed it");
        assert_eq!(after_failure(&closed, false, false), AfterFailure::ToCaller, "still connected");
        assert_eq!(after_failure(&refused, true, false), AfterFailure::ToCaller, "the server answered");
        assert_eq!(after_failure(&cancelled, true, false), AfterFailure::ToCaller);
    }
}
