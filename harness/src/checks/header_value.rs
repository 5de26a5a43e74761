//! Comparing a recorded request header with a check's `value` the way the spec compares it,
//! not byte for byte: a client that sends `Accept: application/json, text/event-stream` on
//! its GET lists `text/event-stream` as the spec asks (2025-11-25 transports: "The client MUST
//! include an Accept header, listing text/event-stream"), and `bearer` is the same scheme as
//! `Bearer` (RFC 9110 §11.1: auth schemes are case-insensitive).
//!
//! The media-type lists are split here by hand (commas outside quoted strings) and each member
//! is parsed by the `mime` crate; no well-kept crate parses a whole `Accept` list on its own.

use mime::Mime;

/// How values of one header are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// `Accept`: every media type the check lists must be among the client's (type and
    /// subtype case-insensitive; parameters and order ignored).
    MediaTypeList,
    /// `Content-Type`: the same media type (case-insensitive; parameters such as `charset`
    /// ignored).
    MediaType,
    /// `Authorization`: the scheme case-insensitive, the credentials exactly.
    Credentials,
    /// Everything else (session ids, protocol versions, event ids): the exact value.
    Exact,
}

fn rule_for(name: &str) -> Rule {
    match name.to_ascii_lowercase().as_str() {
        "accept" => Rule::MediaTypeList,
        "content-type" => Rule::MediaType,
        "authorization" => Rule::Credentials,
        _ => Rule::Exact,
    }
}

/// Whether header `name`'s recorded value `got` carries what the check wants.
pub(super) fn matches(name: &str, got: &str, want: &str) -> bool {
    let (got, want) = (got.trim(), want.trim());
    match rule_for(name) {
        Rule::MediaTypeList => {
            let listed: Vec<Mime> = members(got).filter_map(|m| m.parse().ok()).collect();
            let mut wanted = members(want).peekable();
            wanted.peek().is_some()
                && wanted
                    .all(|w| w.parse::<Mime>().is_ok_and(|w| listed.iter().any(|g| g.essence_str() == w.essence_str())))
        }
        Rule::MediaType => match (got.parse::<Mime>(), want.parse::<Mime>()) {
            (Ok(g), Ok(w)) => g.essence_str() == w.essence_str(),
            _ => got == want,
        },
        Rule::Credentials => match (split_scheme(got), split_scheme(want)) {
            (Some((gs, gc)), Some((ws, wc))) => gs.eq_ignore_ascii_case(ws) && gc == wc,
            _ => got == want,
        },
        Rule::Exact => got == want,
    }
}

/// How the wanted value reads in a message: `Accept listing text/event-stream`,
/// `Content-Type: application/json`.
pub(super) fn describe(name: &str, want: &str) -> String {
    match rule_for(name) {
        Rule::MediaTypeList => format!("{name} listing {want}"),
        _ => format!("{name}: {want}"),
    }
}

/// The members of a comma-separated header list, commas inside quoted strings kept.
fn members(list: &str) -> impl Iterator<Item = &str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in list.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&list[start..]);
    parts.into_iter().map(str::trim).filter(|p| !p.is_empty())
}

fn split_scheme(value: &str) -> Option<(&str, &str)> {
    value.split_once(char::is_whitespace).map(|(scheme, rest)| (scheme, rest.trim()))
}

#[cfg(test)]
mod tests {
    use super::matches;
    use rstest::rstest;

    #[rstest]
    #[case("Accept", "text/event-stream", "text/event-stream", true)]
    #[case("Accept", "application/json, text/event-stream", "text/event-stream", true)]
    #[case("accept", "text/event-stream, application/json", "application/json, text/event-stream", true)]
    #[case("Accept", "Text/Event-Stream;q=0.9", "text/event-stream", true)]
    #[case("Accept", "application/json", "text/event-stream", false)]
    #[case("Accept", "*/*", "text/event-stream", false)]
    #[case("Accept", "text/event-stream", "application/json, text/event-stream", false)]
    #[case("Accept", "text/event-stream-x", "text/event-stream", false)]
    #[case("Accept", "text/event-stream; a=\"x,application/json\"", "application/json", false)]
    #[case("Content-Type", "application/json; charset=utf-8", "application/json", true)]
    #[case("Content-Type", "text/plain", "application/json", false)]
    #[case("Authorization", "bearer tok-1", "Bearer tok-1", true)]
    #[case("Authorization", "Bearer tok-2", "Bearer tok-1", false)]
    #[case("Authorization", "Bearer TOK-1", "Bearer tok-1", false)]
    #[case("Mcp-Session-Id", "abc", "abc", true)]
    #[case("Mcp-Session-Id", "ABC", "abc", false)]
    #[case("MCP-Protocol-Version", "2025-11-25", "2025-06-18", false)]
    fn compares_as_the_spec_does(#[case] name: &str, #[case] got: &str, #[case] want: &str, #[case] expected: bool) {
        assert_eq!(matches(name, got, want), expected, "{name}: {got:?} vs {want:?}");
    }
}
