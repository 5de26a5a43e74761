//! Whether a run earned a verdict (DESIGN "A verdict is earned"): where the scenario's fault
//! is ([`site`]), whether the client met it ([`met`]), and whether a third-party pass rests on
//! evidence ([`evidence`]). A client that never met the fault is *not exercised*, never
//! passed and never failed on the scenario's checks: a client that exits at once, hangs, or
//! connects and idles passes nothing.
//!
//! The fault's site is the scenario's `fault:` step when it sets one, else derived from the
//! script (scenarios/README.md, "The fault and earned verdicts"):
//!
//! 1. the first step whose op makes a fault ([`Fault`]: raw bytes, a delay or a stall, an
//!    HTTP status, a dropped stream, an exit, a corrupted reply, a required token…);
//! 2. else the script's first step that acts after it received a client message other than
//!    the handshake (the answer to the request under test);
//! 3. else, a script whose only wait is the handshake: the handshake, done;
//! 4. else (a script of standing rules only): any message from the client.
//!
//! Whatever the site, a connection the client sent nothing on meets no fault.
//!
//! A third-party pass then needs a whole plan ([`cut_short`]) and a check with an MCP basis
//! judged on what came after the fault ([`fault_point`]), not only by an absence.

use crate::checks::{self, Run, waits_for_client};
use crate::transcript::{Connection, Transcript, method_of};
use mcp_mock::ops::{self, Fault};
use mcp_results::{JudgedCheck, Judgement, StepStatus};
use mcp_scenario::basis::Level;
use mcp_scenario::checks::Check;
use mcp_scenario::wire::{Direction, WireEvent};
use mcp_scenario::{Scenario, ServerStep};

/// Where a scenario's fault is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// The connection whose script holds it (1-based).
    pub connection: usize,
    /// The step within that connection's script (1-based), as the mock's progress counts.
    pub step: usize,
    /// The step within `server:` (1-based), as the scenario file numbers it.
    pub index: usize,
    /// How a client meets it.
    pub kind: Fault,
    /// The step in words (`send`, `expect_get`).
    pub op: String,
    /// Set by the scenario's `fault:` (else derived).
    pub declared: bool,
    /// The step makes a fault (declared, or an op that deviates), rather than standing in for
    /// one in a script that has none (its first answer, or its handshake).
    pub deviates: bool,
}

/// Whether a step is one that a standing rule or a connection boundary makes: it neither
/// waits nor answers.
fn standing(step: &ServerStep) -> bool {
    ops::op(step).about().transports.standing || matches!(step, ServerStep::NewConnection(_))
}

/// Each step of `server:` with its connection and its number within that connection's script.
fn numbered(server: &[ServerStep]) -> Vec<(usize, usize, &ServerStep)> {
    let (mut connection, mut step) = (1, 0);
    let mut out = Vec::new();
    for s in server {
        if matches!(s, ServerStep::NewConnection(_)) {
            connection += 1;
            step = 0;
            continue;
        }
        step += 1;
        out.push((connection, step, s));
    }
    out
}

/// Where the scenario's fault is (see the module docs); `None` for a script of standing rules
/// only, whose fault any client message meets.
pub fn site(scenario: &Scenario) -> Option<Site> {
    let index_of =
        |target: *const ServerStep| scenario.server.iter().position(|s| std::ptr::eq(s, target)).map_or(0, |i| i + 1);
    let make = |(connection, step, s): (usize, usize, &ServerStep), kind: Fault, declared: bool| Site {
        connection,
        step,
        index: index_of(s),
        kind,
        op: ops::describe(s),
        declared,
        deviates: declared || ops::op(s).about().fault != Fault::None,
    };
    let steps = numbered(&scenario.server);
    if let Some(n) = scenario.fault {
        let at = steps.iter().copied().find(|(_, _, s)| index_of(*s) == n)?;
        let kind = match ops::op(at.2).about().fault {
            // The 2026-07-28 request checks, or a legacy server refusing requests before its
            // session, as the fault: met by the first request they refuse.
            _ if refuses(at.2) => Fault::FromNextMessage,
            Fault::None if waits_for_client(at.2) => Fault::InAnswer,
            Fault::None => Fault::Here,
            kind => kind,
        };
        return Some(make(at, kind, true));
    }
    // A refused or odd listener GET (a MAY) before another fault sets the scene (no listener
    // in the way); the fault is the later step. Alone, it is the fault, unless it is
    // `optional`: a client need not open the listener, and a refusal is an answer MCP allows,
    // so the script is judged as one without a fault.
    let faulty: Vec<_> =
        steps.iter().copied().filter(|(_, _, s)| ops::op(s).about().fault != Fault::None && !optional_get(s)).collect();
    let listener = |s: &ServerStep| matches!(s, ServerStep::ExpectGet(g) if g.resumption != Some(true));
    if let Some(&at) = faulty.iter().find(|(_, _, s)| !listener(s)).or(faulty.first()) {
        return Some(make(at, ops::op(at.2).about().fault, false));
    }
    // No step deviates: the first answer to a client message other than the handshake.
    let first_wait = steps.iter().position(|(_, _, s)| waits_for_client(s) && !matches!(s, ServerStep::Handshake(_)));
    if let Some(w) = first_wait {
        let acting =
            steps[w + 1..].iter().copied().find(|(c, _, s)| *c == steps[w].0 && !waits_for_client(s) && !standing(s));
        return Some(match acting {
            Some(at) => make(at, Fault::Here, false),
            None => make(steps[w], Fault::InAnswer, false),
        });
    }
    steps
        .iter()
        .copied()
        .find(|(_, _, s)| matches!(s, ServerStep::Handshake(_)))
        .map(|at| make(at, Fault::InAnswer, false))
}

/// Whether a host — an application that connects on its own and runs no plan — can pass the
/// scenario (the `host` tag): every wait of its script is one any client makes happen by
/// connecting (the handshake, `initialize`, `notifications/initialized`, the answer to a
/// request the mock sends), so the fault is met and the script runs to its end without a
/// plan; no check with an MCP basis asks for a message beyond the handshake (a host need not
/// list tools); and one of them is judged on the wire by what the client did, not by an
/// absence (a third-party pass never rests on absences alone), since checks that read a
/// plan's outcome are not applicable to a recording. Habits a host may or may not have
/// (listing tools, opening the GET listener, closing stdin early) make no scenario a host's,
/// and neither does a plan that configures OAuth (`connect.oauth`).
pub fn host_can_pass(scenario: &Scenario) -> bool {
    const HANDSHAKE: [&str; 2] = ["initialize", "notifications/initialized"];
    let natural = |step: &ServerStep| match step {
        ServerStep::Handshake(_) | ServerStep::ExpectResponse(_) => true,
        ServerStep::Expect(e) => HANDSHAKE.contains(&e.method.as_str()),
        step => !waits_for_client(step),
    };
    let mcp = || scenario.checks.iter().filter(|e| matches!(e.level(), Level::Must | Level::Should));
    let by_absence = |c: &Check| matches!(c, Check::NotSent(_) | Check::NotNotified(_));
    let asks_beyond_handshake = |c: &Check| {
        !by_absence(c)
            && checks::reads_outcome(c).is_none()
            && checks::judged_messages(c, scenario).iter().any(|m| !HANDSHAKE.contains(&m.as_str()))
    };
    let judged_on_what_it_did = |c: &Check| !by_absence(c) && checks::reads_outcome(c).is_none();
    // A plan that asks for an OAuth client asks for more than connecting: a host has one
    // only if its user configured it, so the authorization scenarios are no host's.
    let needs_oauth =
        scenario.client.iter().any(|s| matches!(s, mcp_scenario::ClientStep::Connect(c) if c.oauth.is_some()));
    scenario.pending.is_none()
        && !needs_oauth
        && scenario.server.iter().any(|s| matches!(s, ServerStep::Handshake(_)) || waits_for_client(s))
        && scenario.server.iter().all(natural)
        && !mcp().any(|e| asks_beyond_handshake(&e.check))
        && mcp().any(|e| judged_on_what_it_did(&e.check))
}

/// Whether the client met the fault, or where it stopped short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Met {
    /// It did.
    Yes,
    /// It did not: why, in words.
    No(String),
}

/// Whether `event` came from the client: a message, or (unless the harness killed the client
/// at the run deadline, which closes the mock's stdin too) an end of stdin or a signal.
fn from_client(event: &WireEvent, killed: bool) -> bool {
    event.sent_by_client() || (!killed && (event.is_stdin_eof() || event.signal_name().is_some()))
}

/// How far a connection's script got: the highest step reached, and whether it finished.
fn progress(c: &Connection) -> (usize, bool) {
    c.events()
        .iter()
        .filter_map(WireEvent::script_progress)
        .fold((0, false), |(reached, finished), p| (reached.max(p.reached), finished || p.finished))
}

/// Whether the client sent, once the script stood at step `reached`, a message that step does
/// not wait for.
fn diverted(scenario: &Scenario, c: &Connection, reached: usize) -> bool {
    let steps = mcp_scenario::script::connection_script(&scenario.server, c.number());
    let waits_for: Vec<&str> = steps.get(reached.saturating_sub(1)).map(|s| ops::op(s).consumes()).unwrap_or_default();
    let events = c.events();
    let Some(at) = events.iter().position(|e| e.script_progress().is_some_and(|p| p.reached == reached)) else {
        return false;
    };
    events[at..].iter().any(|e| {
        let key = match e.http_method() {
            Some(http_method) => match e.json().and_then(method_of) {
                Some(m) => Some(m),
                None if http_method == "GET" => Some(mcp_mock::http::conn::GET),
                None if http_method == "DELETE" => Some(mcp_mock::http::conn::DELETE),
                None => None,
            },
            None if e.sent_by_client() => e.client_message().and_then(method_of),
            None => return false,
        };
        // A response (no method) or a message the step consumes is on the script's path.
        key.is_some_and(|k| !waits_for.iter().any(|w| *w == k || w.starts_with(&format!("{k}:"))))
    })
}

/// Whether the client met the fault at `site` (`None`: any client message meets it).
/// `killed`: the harness killed the client at the run deadline. Over stdio a connection is
/// the client's by being there (the client spawned that mock); over HTTP it takes a request.
pub fn met(scenario: &Scenario, site: Option<&Site>, transcript: &Transcript, stdio: bool, killed: bool) -> Met {
    let from_client = |e: &WireEvent| from_client(e, killed);
    let contacted = |c: &Connection| stdio || c.events().iter().any(from_client);
    let Some(site) = site else {
        return if transcript.connections().iter().any(contacted) {
            Met::Yes
        } else {
            Met::No("the client never sent the mock anything".into())
        };
    };
    let fault = format!(
        "{} at server step {}{}",
        site.op,
        site.index,
        if site.declared { " (the scenario's `fault:`)" } else { "" }
    );
    let Some(c) = transcript.connection(site.connection).filter(|c| contacted(c)) else {
        let never = if site.connection == 1 {
            "the client never connected".to_string()
        } else {
            format!("the client never made connection {}", site.connection)
        };
        return Met::No(format!("{never}, so it never met the fault ({fault})"));
    };
    // Server stderr the client let through to its own (spawned with stderr inherited): what
    // the mock writes there never reaches the client's code.
    let on_stderr = matches!(scenario.server.get(site.index.wrapping_sub(1)), Some(ServerStep::Stderr(_)));
    let shared = c.events().iter().any(|e| e.stderr_shared() == Some(true));
    if on_stderr && shared {
        return Met::No(format!(
            "the client spawned the server with its stderr inherited, so it never reads what the server writes there: it never met the fault ({fault})"
        ));
    }
    // An optional GET the script answers with the fault (the listener is a MAY): a client
    // that never opens one passes the step by, and meets nothing there.
    let steps = mcp_scenario::script::connection_script(&scenario.server, c.number());
    let optional_get = steps.get(site.step.wrapping_sub(1)).is_some_and(optional_get);
    let sent_get = c.events().iter().any(|e| e.http_method() == Some("GET"));
    if optional_get && !sent_get {
        return Met::No(format!(
            "the client never sent the optional GET the script answers with the fault ({fault}): it never opened the listener, so it never met the fault"
        ));
    }
    let (reached, finished) = progress(c);
    // A client that kept sending what the script did not wait for did not stop: it went
    // another way (skipped a message, sent one the mock refused), and is judged on it. Not
    // one the harness killed at the deadline: it did stop, wherever it had gone.
    let diverted = !killed && diverted(scenario, c, reached);
    let events = c.events();
    if site.declared && steps.get(site.step.wrapping_sub(1)).is_some_and(refuses) {
        let refused = transcript.connections().iter().any(|o| o.events().iter().any(refusal));
        return if refused {
            Met::Yes
        } else {
            Met::No(format!("the mock never refused a request by that rule: the client never met the fault ({fault})"))
        };
    }
    let yes = diverted
        || match site.kind {
            Fault::None | Fault::Here => finished || reached >= site.step,
            Fault::InAnswer => finished || reached > site.step,
            Fault::FromNextMessage => {
                let from = events.iter().position(|e| e.script_progress().is_some_and(|p| p.reached >= site.step));
                let later = transcript.connections().iter().any(|o| o.number() > c.number() && contacted(o));
                from.is_some_and(|i| events[i..].iter().any(from_client)) || later
            }
        };
    if yes {
        return Met::Yes;
    }
    let at = steps.get(reached.saturating_sub(1)).map(ops::describe).unwrap_or_else(|| "its start".into());
    let meet = match site.kind {
        Fault::FromNextMessage => "sent nothing after it",
        Fault::InAnswer => "was never answered there",
        _ => "never got there",
    };
    Met::No(format!(
        "the mock's script stopped at step {reached} of {} ({at}) on connection {}: the client {meet}, so it never met the fault ({fault})",
        steps.len(),
        c.number()
    ))
}

/// Where on the wire the client met the fault: the connection, and the index in its events
/// of the script's progress mark at the fault's step. `None` where there is no one place (a
/// script of standing rules), or where the client went another way than the script (it is
/// judged on all it did).
pub fn fault_point(scenario: &Scenario, site: Option<&Site>, transcript: &Transcript) -> Option<(usize, usize)> {
    let site = site.filter(|s| s.deviates)?;
    let c = transcript.connection(site.connection)?;
    let (reached, finished) = progress(c);
    if !finished && diverted(scenario, c, reached) {
        return None;
    }
    let past = |r: usize| match site.kind {
        Fault::InAnswer => r > site.step,
        _ => r >= site.step,
    };
    let events = c.events();
    // The script's last step has no mark past it: its finishing mark stands in.
    let at = events.iter().position(|e| e.script_progress().is_some_and(|p| past(p.reached) || p.finished))?;
    // A standing rule is met by the first message the mock answers by it (a 404 for the
    // expired session, a 401 for the missing token): what that message carried met the
    // fault; how the client handled it comes after the answer.
    // An optional GET passes its step by before the GET comes (the listener is a MAY), so
    // its mark can precede the refusal: the fault is met when the mock answered the GET.
    let steps = mcp_scenario::script::connection_script(&scenario.server, c.number());
    if steps.get(site.step.wrapping_sub(1)).is_some_and(optional_get) {
        let answered = events
            .iter()
            .position(|e| e.status().is_some() && e.answer_why() == Some(mcp_mock::http::conn::OPTIONAL_GET))?;
        return Some((c.number(), answered));
    }
    if site.kind == Fault::FromNextMessage {
        let ruled = |e: &WireEvent| matches!(e.answer_why(), Some("session expired" | "auth required"));
        let answer = events[at..].iter().position(|e| ruled(e) || refusal(e));
        return Some((c.number(), answer.map_or(at, |n| at + n)));
    }
    Some((c.number(), at))
}

/// Whether `step` is an `optional` `expect_get` (a listener GET the client need not send).
fn optional_get(step: &ServerStep) -> bool {
    matches!(step, ServerStep::ExpectGet(g) if g.optional)
}

/// Whether `step` is a standing rule that refuses requests: the 2026-07-28 request checks
/// (`stateless`), or a `handshake` with `refuse_before` (a legacy server before its session).
fn refuses(step: &ServerStep) -> bool {
    matches!(step, ServerStep::Stateless(_)) || matches!(step, ServerStep::Handshake(h) if h.refuse_before)
}

/// Whether `event` is the mock refusing a request by a rule [`refuses`] names.
fn refusal(event: &WireEvent) -> bool {
    event.answer_why().is_some_and(|why| {
        mcp_mock::stateless::REFUSALS.contains(&why) || why == mcp_mock::http::shared::NO_SESSION_YET
    })
}

/// Whether a held check judged something at or after the fault: a notification the mock sent
/// after it, a request answered after it (or never), a message the client sent after it. A
/// check on what happened before the fault (the notification before the stream was reset,
/// the answer before the duplicate) shows nothing about how the client handled it. Kinds not
/// tied to one place on the wire (closes, signals, orders) count.
fn judges_after(check: &mcp_scenario::checks::Check, run: &Run<'_>, point: (usize, usize)) -> bool {
    use mcp_scenario::checks::Check;
    // Where an event is on the wire: its connection, then the mock's clock (an event without
    // a time takes the last time before it), then its place in the record. The clock wins
    // over the place: an HTTP journal may write a request after the mark of the step that
    // consumed it.
    let clocks: std::collections::HashMap<usize, Vec<u64>> = run
        .transcript
        .connections()
        .iter()
        .map(|c| {
            let times = c
                .events()
                .iter()
                .scan(0u64, |last, e| {
                    *last = e.t_us().unwrap_or(*last);
                    Some(*last)
                })
                .collect();
            (c.number(), times)
        })
        .collect();
    let key = |conn: usize, index: usize| {
        let t = clocks.get(&conn).and_then(|ts| ts.get(index)).copied().unwrap_or(0);
        (conn, t, index)
    };
    let fault = key(point.0, point.1);
    let after = |conn: usize, index: usize| key(conn, index) > fault;
    // Each event on the wire with where it is.
    let placed = || {
        run.transcript
            .connections()
            .iter()
            .flat_map(|c| c.events().iter().enumerate().map(move |(i, e)| (c.number(), i, e)))
    };
    let mock_text = |e: &WireEvent| -> Option<String> {
        e.bytes().filter(|_| e.direction() == Direction::MockToClient).and_then(|b| b.text.clone())
    };
    let client_method = |e: &WireEvent| -> Option<(String, Option<serde_json::Value>)> {
        let json = e.json().filter(|_| e.direction() == Direction::ClientToMock)?;
        Some((crate::transcript::method_of(json)?.to_string(), json.get("id").cloned()))
    };
    match check {
        Check::Notified(n) => {
            let needle = format!("\"method\":\"{}\"", n.method);
            placed().any(|(c, i, e)| after(c, i) && mock_text(e).is_some_and(|t| t.contains(&needle)))
        }
        Check::Sent(s) => placed().any(|(c, i, e)| after(c, i) && client_method(e).is_some_and(|(m, _)| m == s.method)),
        Check::Http(h) => placed().any(|(c, i, e)| {
            let Some(http_method) = e.http_method() else { return false };
            let method = e.json().and_then(crate::transcript::method_of);
            after(c, i)
                && h.http_method.as_deref().is_none_or(|m| m.eq_ignore_ascii_case(http_method))
                && h.method.as_deref().is_none_or(|m| method == Some(m))
        }),
        Check::Outcome(o) => {
            let request = matches!(
                run.scenario.client.get(o.step.wrapping_sub(1)),
                Some(mcp_scenario::ClientStep::Request { .. } | mcp_scenario::ClientStep::Await { .. })
            );
            if !request {
                // A connect ends with the handshake: before a fault the script makes later.
                let connect = matches!(
                    run.scenario.client.get(o.step.wrapping_sub(1)),
                    Some(mcp_scenario::ClientStep::Connect(_))
                );
                return !connect
                    || !placed().any(|(c, i, e)| {
                        !after(c, i) && client_method(e).is_some_and(|(m, _)| m == "notifications/initialized")
                    });
            }
            let methods = crate::checks::plan_method(run.scenario, o.step);
            // Each request of the step's method, and whether the mock answered it before the fault.
            let requests: Vec<(usize, usize, Option<serde_json::Value>)> = placed()
                .filter_map(|(c, i, e)| client_method(e).filter(|(m, _)| methods.contains(m)).map(|(_, id)| (c, i, id)))
                .collect();
            if requests.is_empty() {
                return true;
            }
            // Where the mock last wrote, before the fault, each requested id on each connection
            // (`"id":<id>` in its text, then `,`, `}` or a space): one pass over the wire, not one
            // per request (a client that re-sent its request thousands of times made that
            // quadratic).
            let wanted: std::collections::HashSet<String> =
                requests.iter().filter_map(|(_, _, id)| id.as_ref().map(|v| v.to_string())).collect();
            let longest = wanted.iter().map(String::len).max().unwrap_or(0);
            let mut last_answer: std::collections::HashMap<(usize, &str), (usize, u64, usize)> =
                std::collections::HashMap::new();
            for (c, i, e) in placed() {
                let Some(t) = mock_text(e).filter(|_| !after(c, i)) else { continue };
                for (at, _) in t.match_indices("\"id\":") {
                    let rest = &t[at + "\"id\":".len()..];
                    for (end, _) in
                        rest.char_indices().take(longest + 1).filter(|(_, ch)| matches!(ch, ',' | '}' | ' '))
                    {
                        if let Some(id) = wanted.get(&rest[..end]) {
                            let last = last_answer.entry((c, id.as_str())).or_insert(key(c, i));
                            *last = (*last).max(key(c, i));
                        }
                    }
                }
            }
            requests.iter().any(|(c, i, id)| {
                if after(*c, *i) {
                    return true;
                }
                let Some(id) = id else { return true };
                let answered_before =
                    last_answer.get(&(*c, id.to_string().as_str())).is_some_and(|last| *last > key(*c, *i));
                !answered_before
            })
        }
        _ => true,
    }
}

/// Why the client's plan did not run to its end (it hung until the run deadline, or left a
/// step without a line), if it did not. A pass needs a whole plan: a client cut short has not
/// handled the fault, and every absence (a message not sent, at most N of them) holds for it.
pub fn cut_short(run: &Run<'_>) -> Option<String> {
    // A scenario about a client's own default timeout judges the hang itself (`times_out`).
    if run.outcome.hung && !checks::hang_reported_by_a_check(run) {
        return Some("it hung until the run deadline".into());
    }
    if run.outcome.hung {
        return None;
    }
    let reported = |i: usize| run.outcome.steps.iter().any(|s| s.step == i + 1 && s.status != StepStatus::NotRun);
    let (i, step) = run.scenario.client.iter().enumerate().find(|(i, _)| !reported(*i))?;
    Some(format!("it never finished step {} ({})", i + 1, crate::outcome::describe_step(step)))
}

/// What a third-party pass rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// A check with an MCP basis (or the driver contract) was judged on a whole plan: its name.
    Judged(String),
    /// No check with an MCP basis applies to this client: why (every check is SPEC.md's, our
    /// own client's rules, or reads what the client cannot report).
    NotApplicable(String),
    /// Such checks apply, but the plan was cut short, or they held only by an absence: why.
    CutShort(String),
    /// None held, but one the client broke (a SHOULD: a warning) judged what it did after the
    /// fault: its name. The run warns; it is no pass.
    Unmet(String),
}

/// Whether one of the scenario's checks with an MCP basis (`must`, `should`, or the driver
/// contract for the driver self-test) was judged on a plan that ran to its end ([`cut_short`]):
/// unmet (a warning: the client did something that broke a SHOULD), or held by something the
/// client did, not only by an absence. A `robustness:` check is judged and warns, but a pass rests on no harm
/// avoided alone: a scenario with nothing else is not applicable to a third-party client.
pub fn evidence(run: &Run<'_>, site: Option<&Site>, judged: &[JudgedCheck]) -> Evidence {
    // A promise judges only the targets it binds; the runner marks it not applicable to others.
    let weighs = |l: Level| matches!(l, Level::Must | Level::Should | Level::Driver | Level::Promise);
    let judgement = |name: &str| judged.iter().find(|j| j.check == name).map(|j| j.judgement);
    // Each check with an MCP basis this run judged, with its name and judgement.
    let applying: Vec<(String, &mcp_scenario::basis::CheckEntry, Judgement)> = run
        .scenario
        .checks
        .iter()
        .enumerate()
        .filter(|(_, entry)| weighs(entry.level()))
        .filter_map(|(i, entry)| {
            let name = checks::label(i, &entry.check);
            let judged = judgement(&name).filter(|j| matches!(j, Judgement::Held | Judgement::Unmet))?;
            Some((name, entry, judged))
        })
        .collect();
    // Checks the deadline left unjudged apply; the client just never let them be judged.
    let withheld = run.scenario.checks.iter().enumerate().any(|(i, entry)| {
        weighs(entry.level()) && judgement(&checks::label(i, &entry.check)) == Some(Judgement::NotJudged)
    });
    if applying.is_empty() && withheld && checks::cut_by_deadline(run) {
        return Evidence::CutShort(
            "the client hung until the run deadline before anything with an MCP basis could be judged".into(),
        );
    }
    if applying.is_empty() && withheld {
        let names: Vec<String> = run
            .scenario
            .checks
            .iter()
            .enumerate()
            .filter(|(i, entry)| {
                weighs(entry.level()) && judgement(&checks::label(*i, &entry.check)) == Some(Judgement::NotJudged)
            })
            .map(|(i, entry)| checks::label(i, &entry.check))
            .collect();
        return Evidence::NotApplicable(format!(
            "the client never did what its checks with an MCP basis ({}) are about (the notes say what)",
            names.join(", ")
        ));
    }
    if applying.is_empty() {
        let why = if run.scenario.checks.iter().any(|c| weighs(c.level())) {
            "its checks with an MCP basis do not apply to this client (the bundled client's error texts and counters, what the client said it cannot report, or a promise of another client's)"
        } else {
            "every check of this scenario rests on SPEC.md, the bundled client's own rules, none on an MCP sentence"
        };
        return Evidence::NotApplicable(why.into());
    }
    if let Some(why) = cut_short(run) {
        return Evidence::CutShort(format!("the client met the fault, but {why}"));
    }
    let point = fault_point(run.scenario, site, run.transcript);
    let mut before_only = Vec::new();
    let mut broken = None;
    for (name, entry, judged) in &applying {
        // Unmet, it judged something the client did (a SHOULD it broke: a warning), but shows
        // no handling: evidence for a warning, not for a pass.
        if *judged == Judgement::Unmet {
            broken.get_or_insert_with(|| name.clone());
            continue;
        }
        // What the client did, not only what it did not do: an absence holds for any client.
        if checks::holds_by_absence(&entry.check, run) {
            continue;
        }
        if point.is_none_or(|p| judges_after(&entry.check, run, p)) {
            return Evidence::Judged(name.clone());
        }
        before_only.push(name.as_str());
    }
    if let Some(name) = broken {
        return Evidence::Unmet(name);
    }
    if before_only.is_empty() {
        let names: Vec<&str> = applying.iter().map(|(name, ..)| name.as_str()).collect();
        Evidence::NotApplicable(format!(
            "its checks with an MCP basis ({}) held by an absence only (a message not sent, a close the client's exit makes too), which shows nothing the client did; what it did rests on SPEC.md or robustness checks alone",
            names.join(", ")
        ))
    } else {
        Evidence::NotApplicable(format!(
            "its checks with an MCP basis ({}) judge only what came before the fault; what follows it rests on SPEC.md or robustness checks alone",
            before_only.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_scenario::wire::Recorded;

    fn scenario(server: &str, fault: Option<usize>) -> Scenario {
        let fault = fault.map(|f| format!("fault: {f}\n")).unwrap_or_default();
        let text = format!(
            "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\n{fault}client:\n  - op: connect\nserver:\n{server}"
        );
        mcp_scenario::load::parse(std::path::Path::new("t.yaml"), &text).expect("loads")
    }

    const MALFORMED: &str = "  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: send\n    text: \"junk\\n\"\n  - op: reply\n";
    const PLAIN: &str = "  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: reply\n";

    fn script(reached: usize, total: usize) -> WireEvent {
        WireEvent::Script { t_us: 0, reached, total, finished: false, output_follows: false }
    }

    fn line() -> WireEvent {
        WireEvent::FromClient { t_us: 0, bytes: Recorded::of(b"{}"), json: None, terminated: true }
    }

    use crate::checks::testing::ok_step as ok;

    #[test]
    fn an_end_of_stdin_or_a_signal_is_the_clients_unless_the_harness_killed_it() {
        let eof = WireEvent::StdinEof { t_us: 1, parent_exiting: false };
        let sigterm = WireEvent::Signal { t_us: 1, name: "SIGTERM".into(), ignored: false };
        assert!(from_client(&eof, false) && from_client(&sigterm, false));
        // Killing the client at the run deadline closes the mock's stdin too: not the client's.
        assert!(!from_client(&eof, true) && !from_client(&sigterm, true));
        assert!(from_client(&line(), true), "a message is the client's however it ended");
        assert!(!from_client(&WireEvent::written_to_client(1, "{}", "reply"), false));
    }

    fn message(method: &str) -> WireEvent {
        let json = serde_json::json!({"jsonrpc": "2.0", "id": 9, "method": method});
        WireEvent::FromClient { t_us: 0, bytes: Recorded::of(b"{}"), json: Some(json), terminated: true }
    }

    #[test]
    fn the_first_deviating_step_is_the_fault() {
        let s = site(&scenario(MALFORMED, None)).expect("a site");
        assert_eq!((s.connection, s.step, s.kind, s.op.as_str(), s.declared), (1, 3, Fault::Here, "send", false));
    }

    #[test]
    fn without_a_deviation_the_answer_to_the_first_request_is() {
        let s = site(&scenario(PLAIN, None)).expect("a site");
        assert_eq!((s.step, s.kind), (3, Fault::Here));
        let only_handshake = site(&scenario("  - op: handshake\n", None)).expect("a site");
        assert_eq!((only_handshake.step, only_handshake.kind), (1, Fault::InAnswer));
    }

    #[test]
    fn a_listener_refusal_before_another_fault_only_sets_the_scene() {
        let text = |optional: bool, later: &str| {
            format!(
                "name: t\nsummary: s\ntransport: http\nrevision: 2025-11-25\nclient:\n  - op: connect\nserver:\n  - op: handshake\n  - op: expect_get\n    status: 405\n    optional: {optional}\n  - op: expect\n    method: tools/call\n{later}"
            )
        };
        let load = |t: String| mcp_scenario::load::parse(std::path::Path::new("t.yaml"), &t).expect("loads");
        let dropped =
            site(&load(text(true, "  - op: open_stream\n  - op: end_stream\n    how: mid_event\n"))).expect("a site");
        assert_eq!((dropped.step, dropped.op.as_str()), (5, "end_stream"));
        // Alone, a required refusal is the fault; an optional one is none (the listener is a
        // MAY and the refusal an answer MCP allows): the answer to the call is.
        let required = site(&load(text(false, "  - op: reply\n"))).expect("a site");
        assert_eq!((required.step, required.op.as_str()), (2, "expect_get"));
        let optional = site(&load(text(true, "  - op: reply\n"))).expect("a site");
        assert_eq!((optional.step, optional.op.as_str(), optional.deviates), (4, "reply", false));
    }

    /// The fault in the answer to the script's last step: what the client sent to meet it
    /// (the DELETE itself) comes before the point; the finishing mark is the point.
    #[test]
    fn a_fault_in_the_last_answer_is_placed_at_the_finishing_mark() {
        let scenario = scenario("  - op: handshake\n  - op: expect\n    method: tools/list\n", Some(2));
        let at = site(&scenario);
        assert_eq!(at.as_ref().map(|s| s.kind), Some(Fault::InAnswer));
        let finished = WireEvent::Script { t_us: 0, reached: 2, total: 2, finished: true, output_follows: false };
        let transcript = Transcript::new(vec![vec![script(2, 2), message("tools/list"), finished]]);
        assert_eq!(fault_point(&scenario, at.as_ref(), &transcript), Some((1, 2)));
    }

    #[test]
    fn a_declared_fault_wins_and_is_numbered_across_connections() {
        let server = format!("{PLAIN}  - op: new_connection\n  - op: handshake\n  - op: expect\n    method: ping\n");
        let s = site(&scenario(&server, Some(6))).expect("a site");
        assert_eq!((s.connection, s.step, s.index, s.kind, s.declared), (2, 2, 6, Fault::InAnswer, true));
    }

    #[test]
    fn an_optional_get_the_client_never_sent_meets_nothing() {
        let text = "name: t\nsummary: s\ntransport: http\nrevision: 2025-11-25\nfault: 2\nclient:\n  - op: connect\nserver:\n  - op: handshake\n  - op: expect_get\n    status: 405\n    optional: true\n  - op: expect\n    method: tools/list\n  - op: reply\n";
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), text).expect("loads");
        let at = site(&scenario);
        assert_eq!(at.as_ref().map(|s| s.op.as_str()), Some("expect_get (optional)"));
        let request = |http_method: &str| WireEvent::HttpRequest {
            t_us: 0,
            exchange: 1,
            http_method: http_method.into(),
            path: "/mcp".into(),
            headers: Default::default(),
            body: None,
            json: None,
        };
        let finished = WireEvent::Script { t_us: 0, reached: 4, total: 4, finished: true, output_follows: false };
        let only_posts = Transcript::new(vec![vec![request("POST"), finished.clone()]]);
        assert!(
            matches!(met(&scenario, at.as_ref(), &only_posts, false, false), Met::No(m) if m.contains("never sent the optional GET"))
        );
        let with_get = Transcript::new(vec![vec![request("POST"), request("GET"), finished.clone()]]);
        assert_eq!(met(&scenario, at.as_ref(), &with_get, false, false), Met::Yes);
        // The step's mark passes before the GET comes; the fault is the mock's refusal.
        let passed = WireEvent::Script { t_us: 1, reached: 3, total: 4, finished: false, output_follows: false };
        let refused = WireEvent::HttpResponse {
            t_us: 5,
            exchange: 2,
            status: 405,
            headers: Default::default(),
            body: None,
            json: None,
            why: mcp_mock::http::conn::OPTIONAL_GET.into(),
        };
        let later = Transcript::new(vec![vec![passed, request("POST"), request("GET"), refused, finished]]);
        let (conn, index) = fault_point(&scenario, at.as_ref(), &later).expect("a fault point");
        let event = &later.connection(conn).expect("connection").events()[index];
        assert!(matches!(event, WireEvent::HttpResponse { status: 405, .. }), "{event:?}");
    }

    #[test]
    fn a_declared_stateless_fault_is_met_by_a_refusal_only() {
        let text = "name: t\nsummary: s\ntransport: http\nrevision: 2026-07-28\nfault: 1\nclient:\n  - op: connect\nserver:\n  - op: stateless\n    param_headers: {\"t\": {\"Region\": \"region\"}}\n  - op: reply_always\n    method: tools/call\n    result: {\"resultType\": \"complete\", \"content\": []}\n";
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), text).expect("loads");
        let at = site(&scenario).expect("a site");
        assert_eq!((at.step, at.kind), (1, Fault::FromNextMessage));
        let post = WireEvent::HttpRequest {
            t_us: 2,
            exchange: 1,
            http_method: "POST".into(),
            path: "/mcp".into(),
            headers: Default::default(),
            body: None,
            json: Some(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"})),
        };
        let answer = |status: u16, why: &str| WireEvent::HttpResponse {
            t_us: 3,
            exchange: 1,
            status,
            headers: Default::default(),
            body: None,
            json: None,
            why: why.into(),
        };
        let finished = WireEvent::Script { t_us: 1, reached: 2, total: 2, finished: true, output_follows: false };
        let avoided = Transcript::new(vec![vec![finished.clone(), post.clone(), answer(200, "reply_always")]]);
        assert!(
            matches!(met(&scenario, Some(&at), &avoided, false, false), Met::No(m) if m.contains("never refused")),
            "a client that sent the header at once never met the refusal"
        );
        let refused = Transcript::new(vec![vec![finished, post, answer(400, mcp_mock::stateless::REFUSALS[0])]]);
        assert_eq!(met(&scenario, Some(&at), &refused, false, false), Met::Yes);
        let (conn, index) = fault_point(&scenario, Some(&at), &refused).expect("a fault point");
        let event = &refused.connection(conn).expect("connection").events()[index];
        assert!(matches!(event, WireEvent::HttpResponse { status: 400, .. }), "{event:?}");
    }

    #[test]
    fn server_stderr_the_client_lets_through_meets_nothing() {
        let scenario = scenario(
            "  - op: handshake\n  - op: stderr\n    text: noise\n  - op: expect\n    method: ping\n  - op: reply\n",
            None,
        );
        let at = site(&scenario);
        assert_eq!(at.as_ref().map(|s| s.op.as_str()), Some("stderr"));
        let events = |shared: bool| {
            vec![
                WireEvent::Started { pid: 1, stderr_shared: shared, origin_unix_us: None },
                script(3, 4),
                message("ping"),
                script(4, 4),
            ]
        };
        let met_with = |shared| met(&scenario, at.as_ref(), &Transcript::new(vec![events(shared)]), true, false);
        assert_eq!(met_with(false), Met::Yes);
        assert!(matches!(met_with(true), Met::No(m) if m.contains("stderr inherited")));
    }

    #[test]
    fn a_client_that_stops_before_the_fault_never_met_it() {
        let scenario = scenario(MALFORMED, None);
        let at = site(&scenario);
        let met_with =
            |events: Vec<WireEvent>| met(&scenario, at.as_ref(), &Transcript::new(vec![events]), false, false);
        assert!(
            matches!(met(&scenario, at.as_ref(), &Transcript::new(vec![]), true, false), Met::No(m) if m.contains("never connected"))
        );
        let idle = met_with(vec![script(1, 4), line(), line(), script(2, 4)]);
        assert!(matches!(&idle, Met::No(m) if m.contains("stopped at step 2 of 4 (expect tools/list)")), "{idle:?}");
        assert_eq!(met_with(vec![script(1, 4), line(), script(2, 4), line(), script(3, 4)]), Met::Yes);
        // A client that sent what the script did not wait for went another way: judged.
        assert_eq!(met_with(vec![script(1, 4), line(), line(), script(2, 4), message("ping")]), Met::Yes);
        // The message the stopped step waits for is on the script's path, not a detour.
        assert!(matches!(met_with(vec![script(1, 4), line(), script(2, 4), message("tools/list")]), Met::No(_)));
        // Over HTTP, progress without a request from the client is no contact.
        assert!(matches!(met_with(vec![script(3, 4)]), Met::No(_)));
        // Over stdio the client spawned the mock: a fault the mock makes before any message
        // (it dies at spawn) is met.
        let at_spawn = met(&scenario, at.as_ref(), &Transcript::new(vec![vec![script(3, 4)]]), true, false);
        assert_eq!(at_spawn, Met::Yes);
    }

    /// A pass rests on something the client did: an absence alone (a message not sent) holds
    /// for any client, unless the client also reported a step as a handling client does.
    #[test]
    fn an_absence_alone_is_no_evidence() {
        use mcp_results::{ClientOutcome, JudgedCheck};
        // A project-level outcome beside the absence is no companion: only what an MCP
        // sentence judges of what the client did is evidence.
        let checks = |outcome_held: bool| {
            let mut judged = vec![JudgedCheck {
                check: "check 1 (not_sent)".into(),
                level: Level::Must,
                reference: None,
                judgement: Judgement::Held,
            }];
            judged.push(JudgedCheck {
                check: "check 2 (outcome)".into(),
                level: Level::Project,
                reference: None,
                judgement: if outcome_held { Judgement::Held } else { Judgement::Unmet },
            });
            judged
        };
        let text = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\nserver:\n  - op: handshake\nchecks:\n  - not_sent: {method: ping}\n    must: \"m\"\n  - outcome: {step: 1, ok: false}\n    project: \"p\"\n";
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), text).expect("loads");
        let step = mcp_results::StepOutcome {
            step: 1,
            what: "connect".into(),
            status: StepStatus::Error,
            result: None,
            error: Some("e".into()),
            elapsed_ms: 1,
        };
        let outcome = ClientOutcome { steps: vec![step], ..ClientOutcome::default() };
        let transcript = Transcript::new(vec![]);
        let scope = crate::checks::testing::external_scope(&scenario);
        let run = Run { scenario: &scenario, scope, outcome: &outcome, transcript: &transcript };
        for outcome_held in [false, true] {
            assert!(
                matches!(evidence(&run, site(&scenario).as_ref(), &checks(outcome_held)), Evidence::NotApplicable(why) if why.contains("by an absence only")),
                "outcome held: {outcome_held}"
            );
        }
        // Unmet, the absence judged something the client did: evidence for a warning (a
        // broken SHOULD) or a failure, never for a pass.
        let mut unmet = checks(true);
        unmet[0].judgement = Judgement::Unmet;
        assert_eq!(evidence(&run, site(&scenario).as_ref(), &unmet), Evidence::Unmet("check 1 (not_sent)".into()));
    }

    /// A check on what came before the fault (a request answered before it) is no evidence
    /// of how the client handled it; one on a request answered after it is.
    #[test]
    fn only_what_follows_the_fault_is_evidence() {
        use mcp_results::{ClientOutcome, JudgedCheck};
        let text = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\n  - op: request\n    method: ping\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: reply\n  - op: send\n    text: \"junk\\n\"\n  - op: expect\n    method: ping\n  - op: reply\nchecks:\n  - outcome: {step: 2, ok: true}\n    must: \"m\"\n  - outcome: {step: 3, ok: true}\n    must: \"m\"\n";
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), text).expect("loads");
        let request = |id: u64, method: &str| {
            let json = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method});
            WireEvent::FromClient { t_us: 0, bytes: Recorded::of(b"{}"), json: Some(json), terminated: true }
        };
        let answer = |id: u64| WireEvent::ToClient {
            t_us: 0,
            bytes: Recorded::of(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n").as_bytes()),
            why: "reply".into(),
        };
        let events = vec![
            script(2, 6),
            request(2, "tools/list"),
            script(3, 6),
            answer(2),
            script(4, 6),
            script(5, 6),
            request(3, "ping"),
            script(6, 6),
            answer(3),
        ];
        let transcript = Transcript::new(vec![events]);
        let outcome = ClientOutcome { steps: vec![ok(1), ok(2), ok(3)], ..ClientOutcome::default() };
        let scope = crate::checks::testing::external_scope(&scenario);
        let run = Run { scenario: &scenario, scope, outcome: &outcome, transcript: &transcript };
        let judged = |held: [bool; 2]| -> Vec<JudgedCheck> {
            (0..2)
                .map(|i| JudgedCheck {
                    check: format!("check {} (outcome)", i + 1),
                    level: Level::Must,
                    reference: None,
                    judgement: if held[i] { Judgement::Held } else { Judgement::NotApplicable },
                })
                .collect()
        };
        assert!(
            matches!(evidence(&run, site(&scenario).as_ref(), &judged([true, false])), Evidence::NotApplicable(why) if why.contains("before the fault"))
        );
        assert_eq!(
            evidence(&run, site(&scenario).as_ref(), &judged([true, true])),
            Evidence::Judged("check 2 (outcome)".into())
        );
    }

    #[test]
    fn the_mock_clock_orders_what_the_record_wrote_late() {
        use mcp_results::{ClientOutcome, JudgedCheck};
        // The request under check 1 came before the fault (t = 20) but the record wrote it
        // after the fault's mark (t = 50): by the clock it judges what came before.
        let text = "name: t\nsummary: s\ntransport: stdio\nrevision: 2025-11-25\nclient:\n  - op: connect\n  - op: request\n    method: tools/list\nserver:\n  - op: handshake\n  - op: expect\n    method: tools/list\n  - op: reply\n  - op: send\n    text: \"junk\\n\"\nchecks:\n  - sent: {method: tools/list}\n    must: \"m\"\n";
        let scenario = mcp_scenario::load::parse(std::path::Path::new("t.yaml"), text).expect("loads");
        let mark = |t_us, reached| WireEvent::Script {
            t_us,
            reached,
            total: 4,
            finished: reached == 4,
            output_follows: false,
        };
        let json = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        let request =
            WireEvent::FromClient { t_us: 20, bytes: Recorded::of(b"{}"), json: Some(json), terminated: true };
        let late = Transcript::new(vec![vec![mark(10, 2), mark(30, 3), mark(50, 4), request.clone()]]);
        let in_order = Transcript::new(vec![vec![mark(10, 2), request, mark(30, 3), mark(50, 4)]]);
        let outcome = ClientOutcome { steps: vec![ok(1), ok(2)], ..ClientOutcome::default() };
        let judged = vec![JudgedCheck {
            check: "check 1 (sent)".into(),
            level: Level::Must,
            reference: None,
            judgement: Judgement::Held,
        }];
        for transcript in [&late, &in_order] {
            let scope = crate::checks::testing::external_scope(&scenario);
            let run = Run { scenario: &scenario, scope, outcome: &outcome, transcript };
            let found = evidence(&run, site(&scenario).as_ref(), &judged);
            assert!(matches!(&found, Evidence::NotApplicable(why) if why.contains("before the fault")), "{found:?}");
        }
    }

    #[test]
    fn a_standing_fault_is_met_by_the_next_message() {
        let scenario = scenario("  - op: handshake\n  - op: expire_session\n  - op: expect\n    method: ping\n", None);
        let at = site(&scenario);
        assert_eq!(at.as_ref().map(|s| s.kind), Some(Fault::FromNextMessage));
        let met_with =
            |events: Vec<WireEvent>| met(&scenario, at.as_ref(), &Transcript::new(vec![events]), false, false);
        assert!(matches!(met_with(vec![script(1, 3), line(), script(2, 3), script(3, 3)]), Met::No(_)));
        assert_eq!(met_with(vec![script(1, 3), line(), script(2, 3), script(3, 3), message("ping")]), Met::Yes);
    }
}
