//! The HTTP step engine: runs one connection's part of the server script, in order, each
//! step by its op, against what the request handlers deliver. Requests the script expects
//! are held open until a step answers them (`reply`, `respond`, `raw_response`,
//! `open_stream`, `expect_get`…); everything else was already answered by the handlers'
//! defaults.

use super::conn::Conn;
use super::run::HttpRun;
use super::shared::Shared;
use crate::ops;
use futures::future::BoxFuture;
use mcp_scenario::ServerStep;
use mcp_scenario::script::StreamEnd;
use std::sync::Arc;

/// The [`super::shared::Engine`] the mock runs each connection's script with; what it
/// sends goes out each time it yields ([`super::outbox`]).
pub fn start(shared: Arc<Shared>, conn: Arc<Conn>, steps: Vec<ServerStep>) -> BoxFuture<'static, ()> {
    Box::pin(super::outbox::held_until_yield(run(shared, conn, steps)))
}

/// Runs connection `conn`'s steps, then parks (holding unanswered requests and open GET
/// streams) until the mock ends.
pub async fn run(shared: Arc<Shared>, conn: Arc<Conn>, steps: Vec<ServerStep>) {
    let transport = shared.flavour.transport();
    let mut run = HttpRun::new(shared, conn, steps.len());
    for (i, step) in steps.iter().enumerate() {
        run.index = i;
        run.progress(i + 1, false);
        let op = ops::op(step);
        let ts = op.about().transports;
        if !ts.standing {
            run.conn.mark_ready();
        }
        if ts.contains(transport) {
            op.run_http(&mut run, steps.get(i + 1).map(ops::op)).await;
        } else if !ts.http && !ts.legacy_sse {
            run.note(format!("{}: a stdio-only step; does nothing over HTTP", ops::name(step)));
        } else {
            run.note(format!("{}: does nothing over {}", ops::name(step), transport.as_str()));
        }
    }
    run.conn.mark_ready();
    run.progress(run.total, true);
    // Reply streams end with the script; the GET listener stays (it is long-lived).
    for s in std::mem::take(&mut run.streams) {
        if s.is_get {
            run.streams.push(s);
        } else {
            run.shared.end_stream(run.n(), &s, StreamEnd::Clean, None);
        }
    }
    std::future::pending::<()>().await;
}
