//! Standing answers: what the request handler gives a GET (`expect_get` with `repeat` or
//! `optional`) or a request (`respond` with `repeat`) no step consumes, so a client that
//! retries or reconnects meets the same answer each time (and it is recorded), and a GET
//! the script did not wait for still gets the scripted answer.

use super::body::MockBody;
use super::conn::{Conn, GetAnswer, GetKind, Shape, StreamHandle};
use super::raw::SocketControl;
use super::shared::Shared;
use crate::sync::lock;
use http::Response;
use mcp_scenario::script::StreamEnd;
use std::sync::Arc;

/// The standing `respond` answer for an unscripted request with `method`, if the
/// connection keeps one.
pub fn respond_again(shared: &Shared, conn: &Conn, method: &str, exchange: u64) -> Option<Response<MockBody>> {
    let r = lock(&conn.standing_responses).get(method).cloned()?;
    Some(shared.respond(conn.index, exchange, r.status, &r.headers, r.body, "respond (repeat)"))
}

/// Why a GET got the standing answer of an `expect_get` with `repeat` (the record's `why`).
pub const REPEATED_GET: &str = "expect_get (repeat)";

/// The standing answer for a GET no step consumes that arrived as `arrived`, if the
/// connection keeps one; `None` leaves the GET to the handler's default.
pub fn answer(
    shared: &Arc<Shared>,
    conn: &Conn,
    arrived: GetKind,
    exchange: u64,
    socket: Arc<SocketControl>,
) -> Option<Response<MockBody>> {
    let (answer, why) = {
        let mut standing = lock(&conn.standing_gets);
        let s = standing.admitting(arrived)?;
        // Only an optional step leaves its first GET pending.
        let why = if s.first_pending { super::conn::OPTIONAL_GET } else { REPEATED_GET };
        let answer = s.answer.clone();
        s.first_pending = false;
        if !s.repeat {
            let kind = s.kind;
            standing.remove(kind);
        }
        (answer, why)
    };
    Some(respond(shared, conn.index, exchange, socket, &answer, why, answer.shape == Shape::OpenStream).0)
}

/// Answers GET `exchange` on connection `n`. An open stream is returned with its handle
/// unless `end_at_once` (a repeat), which ends it cleanly right after its head.
pub fn respond(
    shared: &Arc<Shared>,
    n: usize,
    exchange: u64,
    socket: Arc<SocketControl>,
    answer: &GetAnswer,
    why: &str,
    end_at_once: bool,
) -> (Response<MockBody>, Option<StreamHandle>) {
    match answer.shape {
        Shape::OpenStream => {
            let (response, handle) = shared.open_stream(
                n,
                exchange,
                socket,
                answer.status,
                &answer.headers,
                answer.label.clone(),
                true,
                why,
            );
            if end_at_once {
                shared.end_stream(n, &handle, StreamEnd::Clean, None);
                return (response, None);
            }
            (response, Some(handle))
        }
        Shape::EndedStream | Shape::Plain => {
            let response = shared.respond(n, exchange, answer.status, &answer.headers, answer.body.clone(), why);
            if answer.shape == Shape::EndedStream {
                shared.record_end(n, exchange, "clean");
            }
            (response, None)
        }
    }
}
