//! The lanes of a connection's events, as a transcript lists them, and the events left out
//! because whether they happen at all is timing, not the client's behaviour: the Streamable
//! HTTP GET listener apart from the POSTs; within it, listener GETs the server refused
//! without the script waiting for them left out, retries shown once, and listener GETs
//! before resumption GETs; on stdio, a stdin EOF that only raced the script's exit, and
//! how the client dropped a connection its connect failed on.

use crate::http::conn::OPTIONAL_GET;
use crate::http::standing::REPEATED_GET;
use mcp_results::{ClientOutcome, StepStatus};
use mcp_scenario::wire::WireEvent;
use mcp_scenario::{ClientStep, Scenario, TransportName};

/// Splits an HTTP connection's events into the main lane and the GET listener lane
/// (Streamable HTTP only; legacy SSE's GET stream is causally ordered with its POSTs). A GET
/// of the authorization server (metadata, `/authorize`) is no listener: it is a step of the
/// flow between a 401 and the re-sent request, and stays in the main lane.
pub(super) fn http_lanes(events: &[WireEvent], transport: TransportName) -> (Vec<&WireEvent>, Vec<&WireEvent>) {
    if transport != TransportName::Http {
        return (events.iter().collect(), Vec::new());
    }
    let gets: std::collections::HashSet<u64> = events
        .iter()
        .filter_map(|e| match e {
            WireEvent::HttpRequest { exchange, http_method, path, .. }
                if http_method == "GET" && !crate::oauth::is_oauth_path(path) =>
            {
                Some(*exchange)
            }
            _ => None,
        })
        .collect();
    events.iter().partition(|e| e.exchange().is_none_or(|x| !gets.contains(&x)))
}

/// When the client sent its DELETE (ending the session), if it did.
pub(super) fn deleted_at(main: &[&WireEvent]) -> Option<u64> {
    main.iter().filter(|e| e.http_method() == Some("DELETE")).find_map(|e| e.t_us())
}

/// The listener lane without the GETs whose number, or presence, is timing:
/// - a listener GET refused (non-2xx) by the mock's own answer (`unscripted GET`), by an
///   `optional` step or, on the client's hop, by the upstream is not shown: the listener is
///   a MAY, and a client that opens it from a task of its own (rmcp) sent it before its plan
///   ended in some runs and not in others (`make soak`); a script that waits for the GET
///   (`expect_get` without `optional`) keeps it;
/// - each other unscripted answer to a listener GET, and each standing answer of an
///   `expect_get` with `repeat`, is shown once: a client that retries its listener sends as
///   many GETs as its retry delay fits before the run ends (the Python SDKs retry every
///   second, racing a one-second request timeout, and Python 1.x sent two or three GETs in
///   the same 1.9 s in `make soak`);
/// - a listener GET sent after the client's own DELETE and refused as a gone session is not
///   shown.
///
/// Resumption GETs (`Last-Event-ID`) are all kept, after the listener's. Where a count or a
/// header matters, a check says so (`http`, `wait_sent`).
pub(super) fn listener_shown<'e>(listener: &[&'e WireEvent], deleted_at: Option<u64>) -> Vec<&'e WireEvent> {
    let mut requests = std::collections::HashMap::new();
    let mut seen = std::collections::HashSet::new();
    let mut hidden = std::collections::HashSet::new();
    for e in listener {
        match e {
            // A resumption (`Last-Event-ID`) is not the listener: its attempts are kept.
            WireEvent::HttpRequest { exchange, http_method, path, headers, t_us, .. }
                if !headers.contains_key("last-event-id") =>
            {
                requests.insert(*exchange, ((http_method, path, headers), *t_us));
            }
            WireEvent::HttpResponse { exchange, status, headers, why, .. } => {
                let Some((request, sent)) = requests.get(exchange) else { continue };
                let after_delete = why == "session expired" && deleted_at.is_some_and(|d| d <= *sent);
                let unscripted = why.starts_with("unscripted");
                let again = unscripted || why == REPEATED_GET;
                let unwaited = unscripted || why == OPTIONAL_GET || why == "upstream";
                let refused_unwaited = unwaited && !(200..300).contains(status);
                if after_delete || refused_unwaited || (again && !seen.insert((*request, *status, headers, why))) {
                    hidden.insert(*exchange);
                }
            }
            _ => {}
        }
    }
    // The listener's GETs, then the resumptions: each kind in its order, but which of two
    // independent GETs the client sent first is its timing.
    let shown = listener.iter().copied().filter(|e| e.exchange().is_none_or(|x| !hidden.contains(&x)));
    let (listening, resuming): (Vec<_>, Vec<_>) =
        shown.partition(|e| e.exchange().is_some_and(|x| requests.contains_key(&x)));
    [listening, resuming].concat()
}

/// The client hop's listener lane without the GETs the upstream had not answered when the
/// run stopped the proxy: the proxy forwards a GET the client sent as its plan ended, and
/// whether the mock's answer came back through the proxy first is timing (rmcp, `make soak`).
/// The mock's side records the GET and its answer if it got there.
pub(super) fn answered_only(listener: Vec<&WireEvent>) -> Vec<&WireEvent> {
    let answered: std::collections::HashSet<u64> =
        listener.iter().filter(|e| e.status().is_some()).filter_map(|e| e.exchange()).collect();
    listener.into_iter().filter(|e| e.exchange().is_none_or(|x| answered.contains(&x))).collect()
}

/// The events without a stdin EOF that only raced the script's own exit: when nothing
/// crossed the pipes between the client closing stdin and the mock exiting as its script
/// ends, which came first is a race (a client that ends its plan as the server ends its
/// script: seen with Python 2.x on `stdio/notify-after-exit`), and the EOF changed nothing.
/// An EOF the mock answered or exited on (`mock exited 0 (stdin EOF)`) is kept.
pub(super) fn without_eof_racing_exit(events: Vec<&WireEvent>) -> Vec<&WireEvent> {
    let racing = |i: usize| {
        events[i + 1..]
            .iter()
            .find(|e| {
                matches!(
                    e,
                    WireEvent::FromClient { .. }
                        | WireEvent::ToClient { .. }
                        | WireEvent::Signal { .. }
                        | WireEvent::Exit { .. }
                )
            })
            .is_some_and(|e| e.is_exit() && e.why() == Some("script"))
    };
    events
        .iter()
        .enumerate()
        .filter(|(i, e)| !(matches!(e, WireEvent::StdinEof { .. }) && racing(*i)))
        .map(|(_, e)| *e)
        .collect()
}

/// The connections (1-based) a `connect` step that failed had opened. Connection `n` is
/// the `n`th connect's only when every connect opened one (a manager's reconnects open more,
/// a connect that could not spawn opens none): otherwise none is named.
pub(super) fn failed_connects(scenario: &Scenario, outcome: &ClientOutcome, connections: usize) -> Vec<usize> {
    let connects: Vec<usize> = scenario
        .client
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, ClientStep::Connect(_)))
        .map(|(i, _)| i)
        .collect();
    if connects.len() != connections {
        return Vec::new();
    }
    let failed = |i: &usize| outcome.steps.get(*i).is_some_and(|s| s.status == StepStatus::Error);
    connects.iter().enumerate().filter(|(_, i)| failed(i)).map(|(n, _)| n + 1).collect()
}

/// A stdio connection's events without how the client dropped it, when that is all its
/// ending was: a trailing stdin EOF and the mock's exit at it, or no exit at all (killed).
/// A client that drops a failed connection closes the mock's stdin, kills it, or both at
/// once (rmcp does both: which the mock sees first flips from run to run). None when the
/// ending says more: a signal the mock saw, an exit of its own.
pub(super) fn without_drop<'a>(events: &[&'a WireEvent]) -> Option<Vec<&'a WireEvent>> {
    let ending = |e: &WireEvent| {
        matches!(e, WireEvent::StdinEof { .. })
            || matches!(e, WireEvent::Exit { why, code: Some(0), .. } if why == "stdin EOF")
    };
    let after = events
        .iter()
        .rposition(|e| matches!(e, WireEvent::FromClient { .. } | WireEvent::ToClient { .. }))
        .map_or(0, |i| i + 1);
    let (before, tail) = events.split_at(after);
    let kept: Vec<&WireEvent> = before.iter().chain(tail.iter().filter(|e| !ending(e))).copied().collect();
    let says_more = |e: &&WireEvent| matches!(e, WireEvent::Signal { .. } | WireEvent::Exit { .. });
    (!kept.iter().any(says_more)).then_some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_scenario::wire::Recorded;

    /// A listener GET (no `Last-Event-ID`) as exchange `exchange`.
    fn get(exchange: u64) -> WireEvent {
        WireEvent::HttpRequest {
            t_us: exchange,
            exchange,
            http_method: "GET".into(),
            path: "/mcp".into(),
            headers: Default::default(),
            body: None,
            json: None,
        }
    }

    /// The answer to exchange `exchange`.
    fn answer(exchange: u64, status: u16, why: &str) -> WireEvent {
        WireEvent::HttpResponse {
            t_us: exchange,
            exchange,
            status,
            headers: Default::default(),
            body: None,
            json: None,
            why: why.into(),
        }
    }

    #[test]
    fn a_repeated_unscripted_get_answer_is_shown_once() {
        let events = [get(1), answer(1, 405, "unscripted GET"), get(2), answer(2, 405, "unscripted GET")];
        let resume = |exchange: u64| match get(exchange) {
            WireEvent::HttpRequest { mut headers, t_us, exchange, http_method, path, body, json } => {
                headers.insert("last-event-id".into(), "s-1".into());
                WireEvent::HttpRequest { t_us, exchange, http_method, path, headers, body, json }
            }
            other => other,
        };
        let more = [get(3), answer(3, 200, "open_stream"), resume(4), answer(4, 405, "unscripted GET")];
        let later = [resume(5), answer(5, 405, "unscripted GET"), get(6), answer(6, 200, "open_stream")];
        let gone = [get(8), answer(8, 404, "session expired")];
        let events = [&events[..], &more, &later, &gone].concat();
        let lane: Vec<&WireEvent> = events.iter().collect();
        let kept = |deleted| -> Vec<u64> {
            listener_shown(&lane, deleted).into_iter().filter_map(WireEvent::exchange).collect()
        };
        // Listener GETs refused unscripted go, the resumptions stay and come last; a GET
        // refused after the client's DELETE goes, and only then.
        assert_eq!(kept(Some(7)), [3, 3, 6, 6, 4, 4, 5, 5]);
        assert_eq!(kept(Some(9)), [3, 3, 6, 6, 8, 8, 4, 4, 5, 5]);
        // A refusal the script waited for stays; one it did not wait for (an optional step's,
        // the upstream's on the client's hop) goes; an unscripted answer that is no refusal is
        // shown once.
        let answers = [
            get(1),
            answer(1, 405, "expect_get"),
            get(2),
            answer(2, 405, OPTIONAL_GET),
            get(3),
            answer(3, 405, "upstream"),
            get(4),
            answer(4, 200, "upstream"),
            get(5),
            answer(5, 200, "unscripted GET"),
            get(6),
            answer(6, 200, "unscripted GET"),
            get(7),
            answer(7, 200, REPEATED_GET),
            get(8),
            answer(8, 200, REPEATED_GET),
        ];
        let lane: Vec<&WireEvent> = answers.iter().collect();
        let kept: Vec<u64> = listener_shown(&lane, None).into_iter().filter_map(WireEvent::exchange).collect();
        // ... and so is a repeated step's standing answer.
        assert_eq!(kept, [1, 1, 4, 4, 5, 5, 7, 7]);
    }

    #[test]
    fn a_dropped_connection_ends_the_same_whichever_the_mock_saw_first() {
        let line = |t_us| WireEvent::FromClient {
            t_us,
            bytes: Recorded::of(b"{}"),
            json: Some(serde_json::json!({})),
            terminated: true,
        };
        let eof = |t_us| WireEvent::StdinEof { t_us, parent_exiting: false };
        let exit = |why: &str| WireEvent::Exit { t_us: 9, code: Some(0), signal: None, why: why.into() };
        let sigterm = WireEvent::Signal { t_us: 5, name: "SIGTERM".into(), ignored: false };
        let closed_first = [line(1), eof(2), exit("stdin EOF")];
        let killed_first = [line(1)];
        let killed_after_eof = [line(1), eof(2)];
        for ending in [&closed_first[..], &killed_first, &killed_after_eof] {
            let events: Vec<&WireEvent> = ending.iter().collect();
            assert_eq!(without_drop(&events), Some(vec![&killed_first[0]]));
        }
        // The mock's own exit, or a signal it saw, say more than a drop: kept as they are.
        for ending in [vec![line(1), exit("script")], vec![line(1), eof(2), sigterm]] {
            assert_eq!(without_drop(&ending.iter().collect::<Vec<_>>()), None);
        }
        // A stdin EOF the mock still wrote after is part of the session.
        let answered = [eof(1), WireEvent::ToClient { t_us: 2, bytes: Recorded::of(b"{}\n"), why: "reply".into() }];
        let events: Vec<&WireEvent> = answered.iter().collect();
        assert_eq!(without_drop(&events), Some(events.clone()));
    }

    #[test]
    fn the_nth_connect_opened_the_nth_connection_only_when_each_opened_one() {
        use mcp_results::StepOutcome;
        let text = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: connect\n  - op: connect\nserver:\n  - op: handshake\n";
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), text).expect("parses");
        let step = |step, status| StepOutcome {
            step,
            what: "connect".into(),
            status,
            result: None,
            error: None,
            elapsed_ms: 0,
        };
        let outcome = ClientOutcome {
            steps: vec![step(1, StepStatus::Error), step(2, StepStatus::Ok), step(3, StepStatus::Error)],
            ..Default::default()
        };
        assert_eq!(failed_connects(&scenario, &outcome, 3), [1, 3]);
        assert!(failed_connects(&scenario, &outcome, 4).is_empty(), "a reconnect opened one more");
        assert!(failed_connects(&scenario, &outcome, 2).is_empty(), "a connect opened none");
    }

    #[test]
    fn a_hop_get_the_upstream_never_answered_is_not_shown() {
        let get = get(1);
        let end = WireEvent::StreamEnd { t_us: 3, exchange: 1, how: "cut by the proxy".into() };
        let note = WireEvent::Note { t_us: 4, text: "n".into() };
        assert_eq!(answered_only(vec![&get, &end, &note]), [&note]);
        let answer = answer(1, 200, "upstream");
        assert_eq!(answered_only(vec![&get, &answer, &end]).len(), 3);
    }

    #[test]
    fn a_stdin_eof_that_only_raced_the_script_exit_is_not_shown() {
        let eof = WireEvent::StdinEof { t_us: 1, parent_exiting: false };
        let exit = |why: &str| WireEvent::Exit { t_us: 2, code: Some(0), signal: None, why: why.into() };
        let (script, on_eof) = (exit("script"), exit("stdin EOF"));
        assert!(without_eof_racing_exit(vec![&eof, &script]).len() == 1);
        assert!(without_eof_racing_exit(vec![&eof, &on_eof]).len() == 2);
        assert!(without_eof_racing_exit(vec![&eof]).len() == 1);
    }
}
