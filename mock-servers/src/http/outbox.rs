//! What the script engine sends goes out when its task yields, not at once.
//!
//! A step records what it sends and hands the bytes (a stream's data or end, a POST's
//! response) to the connection's task. If those went out at once, a client quick to react
//! (its next POST, its DELETE) could be recorded between two events of the same burst of
//! steps, e.g. between a reply and the end of its stream. The record's order would then
//! depend on how fast the client and the scheduler were, and `make soak` saw exactly that.
//! So while the engine's future is being polled its sends are kept here, and they go out,
//! in order, when the poll returns: whatever the engine did up to its next wait is
//! recorded before the client can see any of it. The request handlers do not run inside
//! the engine's poll, so their sends go out at once.

use crate::sync::lock;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex};

type Send = Box<dyn FnOnce() + std::marker::Send>;

tokio::task_local! {
    static HELD: Arc<Mutex<Vec<Send>>>;
}

/// Runs `send` when the engine's current poll returns, or now outside the engine.
pub fn send(send: impl FnOnce() + std::marker::Send + 'static) {
    match HELD.try_with(Arc::clone) {
        Ok(held) => lock(&held).push(Box::new(send)),
        Err(_) => send(),
    }
}

/// Polls `engine` with its sends held, and lets them go each time a poll returns.
pub async fn held_until_yield<F: Future>(engine: F) -> F::Output {
    let mut engine = pin!(engine);
    let held: Arc<Mutex<Vec<Send>>> = Arc::default();
    std::future::poll_fn(move |cx| {
        let polled = HELD.sync_scope(held.clone(), || engine.as_mut().poll(cx));
        let sends = std::mem::take(&mut *lock(&held));
        for send in sends {
            send();
        }
        polled
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn sends_inside_the_engine_wait_for_its_yield_and_keep_their_order() {
        let order = Arc::new(Mutex::new(Vec::new()));
        let sent = Arc::new(AtomicUsize::new(0));
        let engine = {
            let (order, sent) = (order.clone(), sent.clone());
            async move {
                for n in 1..=2 {
                    let (order, sent) = (order.clone(), sent.clone());
                    send(move || {
                        lock(&order).push(n);
                        sent.fetch_add(1, Ordering::SeqCst);
                    });
                }
                assert_eq!(sent.load(Ordering::SeqCst), 0, "a send went out before the engine yielded");
                tokio::task::yield_now().await;
                assert_eq!(sent.load(Ordering::SeqCst), 2, "the sends did not go out when the engine yielded");
                let order = order.clone();
                send(move || lock(&order).push(3));
            }
        };
        held_until_yield(engine).await;
        assert_eq!(*lock(&order), [1, 2, 3], "the last send goes out when the engine ends");
    }

    #[test]
    fn a_send_outside_the_engine_goes_at_once() {
        let sent = Arc::new(AtomicUsize::new(0));
        let counter = sent.clone();
        send(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        assert_eq!(sent.load(Ordering::SeqCst), 1);
    }
}
