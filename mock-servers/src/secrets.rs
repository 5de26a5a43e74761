//! The secret policy: what counts as a credential, in one place, for every output the
//! project writes — `mcp-harness record`'s scenario and capture files, the snapshot and
//! `reports/transcripts/` rendering, `results.json`, JUnit, the HTML and Markdown reports, the
//! harness's log lines, and the mock's own `--record` rendering and Authorization capture.
//!
//! Why one module: two redactors with their own rules had drifted apart (the snapshots'
//! knew only bearer tokens and two OAuth members, so a tool call's `"apiKey"` reached a
//! `.snap` that `record` would have redacted). Every writer now asks this module, and
//! differs only in what it writes in a secret's place ([`Mask`]): `<redacted>` in
//! transcripts and reports ([`Plain`]), `<redacted:N>` numbering distinct values where a
//! reader must still tell two credentials apart (the mock's Authorization record, `record`).
//! It lives in the mock crate because the mock's `--record` and the transcript rendering are
//! here, and the harness depends on this crate; `mcp-scenario` holds data, not behaviour.
//!
//! # What is a secret
//!
//! - **Headers** ([`is_secret_header`]): `Authorization` and `Proxy-Authorization` (the
//!   scheme is kept: it says what kind of credential it was), `Cookie` and `Set-Cookie`, and
//!   any header whose name says it holds a credential (below).
//! - **JSON members** ([`is_secret_member`]): a name that, lowercased without `_`, `-` and
//!   `.`, ends in `token` (`access_token`, `refreshToken`, `id_token`; never
//!   `progressToken`, which a replay needs), or contains `secret`, `password`, `passwd`,
//!   `passphrase`, `apikey`, `accesskey`, `privatekey`, `cookie`, `credential` or `verifier`
//!   (`code_verifier`), or is `authorization`. Only text values are hidden (a string, or the
//!   strings of an array); an object under such a name is searched member by member.
//! - **Query and form parameters** ([`is_secret_param`]): the member names above, plus
//!   `code` (an OAuth authorization code), `key`, `sig` and `signature`. A JSON member named
//!   `code` is not one: JSON-RPC error codes and validation errors use it for plain words.
//! - **Shapes in any text** ([`Policy::text`]): `Bearer <token>` and `Basic <credentials>`
//!   (not a challenge's `realm="…"` or `error=…`, and not a prose word like "bearer token");
//!   `name: value` for a secret header name (`Authorization: Token x`, `X-Api-Key: x`,
//!   `Cookie: a=1; b=2` to the end of the line); `name=value` for a secret parameter
//!   (`?api_key=x`, `code=…&code_verifier=…&client_secret=…&refresh_token=…`);
//!   `--name value` / `--name=value` for a secret parameter on a command line
//!   (`--api-key x`); `"name": "value"` for a secret member in JSON printed as text (also
//!   inside a JSON string, quotes escaped); the password of a URL's user info
//!   (`https://user:pw@host`).
//! - **The user's own patterns** ([`Policy::with_patterns`], `record --redact-pattern`):
//!   each whole match.
//!
//! A value already masked (`<redacted>`, `<redacted:N>`) is left as it is, so every writer
//! may pass text through the policy again. Session ids, ports and the run's temp dir are not
//! secrets: the transcript's `Redactor` replaces them to make text stable, not safe.
//!
//! What the policy cannot see: a credential with no name or shape around it (a bare
//! `sk-…` in a sentence) — give `record` a `--redact-pattern` for those — and bytes that are
//! not UTF-8 (shown as hex).

use crate::error::MockError;
use regex::Regex;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

/// What a masked value starts with, whatever the mask.
const MASKED: &str = "<redacted";

/// What the policy found: the kind of secret, for counts and notes (`record` lists what it
/// redacted, by kind).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The value of a credential header (lowercase name).
    Header(String),
    /// The value of a JSON member whose name says it holds a credential.
    Member(String),
    /// The value of a URL query or form parameter.
    Param(String),
    /// A credential after an HTTP authentication scheme in text (`Bearer`, `Basic`).
    Scheme(String),
    /// The password in a URL's user info.
    UrlPassword,
    /// A match of a user's pattern (the pattern).
    Pattern(String),
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Found::Header(name) => write!(f, "{name} header"),
            Found::Member(name) => write!(f, "JSON member {name:?}"),
            Found::Param(name) => write!(f, "parameter {name:?}"),
            Found::Scheme(scheme) if scheme.eq_ignore_ascii_case("bearer") => f.write_str("bearer token"),
            Found::Scheme(scheme) => write!(f, "{} credentials", scheme.to_ascii_lowercase()),
            Found::UrlPassword => f.write_str("URL password"),
            Found::Pattern(p) => write!(f, "pattern {p:?}"),
        }
    }
}

/// What a writer puts where a secret was.
pub trait Mask {
    /// The text that stands for `secret`, found as `found`.
    fn mask(&mut self, found: &Found, secret: &str) -> String;
}

/// `<redacted>` for every secret: what transcripts, snapshots and reports show.
#[derive(Debug, Clone, Copy, Default)]
pub struct Plain;

impl Mask for Plain {
    fn mask(&mut self, _: &Found, _: &str) -> String {
        "<redacted>".into()
    }
}

impl<F: FnMut(&Found, &str) -> String> Mask for F {
    fn mask(&mut self, found: &Found, secret: &str) -> String {
        self(found, secret)
    }
}

/// Whether `s` is already a mask.
pub fn is_masked(s: &str) -> bool {
    s.starts_with(MASKED)
}

/// A name lowercased without separators: `client_secret`, `Client-Secret` and
/// `clientSecret` read alike.
/// Asked of every member name in every recorded message, so it allocates once (collecting
/// the filtered characters grows the string again and again).
fn normal(name: &str) -> String {
    let mut n = String::with_capacity(name.len());
    for c in name.chars().filter(|c| !SEPARATORS.contains(c)) {
        if c.is_ascii() {
            n.push(c.to_ascii_lowercase());
        } else {
            n.extend(c.to_lowercase());
        }
    }
    n
}

/// What [`normal`] leaves out of a name.
const SEPARATORS: [char; 4] = ['_', '-', '.', ' '];

/// What a secret member's [`normal`] name ends with.
const MEMBER_ENDINGS: [&str; 2] = ["token", "authorization"];
/// What a secret member's [`normal`] name contains.
const MEMBER_PARTS: [&str; 10] = [
    "secret",
    "password",
    "passwd",
    "passphrase",
    "apikey",
    "accesskey",
    "privatekey",
    "cookie",
    "credential",
    "verifier",
];
/// The [`normal`] names of the parameters that are secrets though no member of that name is.
const PARAM_NAMES: [&str; 4] = ["code", "key", "sig", "signature"];

/// `f` of `name`'s [`normal`] form, as bytes. Every member name of every recorded message
/// is asked about, and nearly all are short and ASCII: those are folded on the stack, not
/// into a new string each.
fn with_normal<R>(name: &str, f: impl FnOnce(&[u8]) -> R) -> R {
    let mut folded = [0u8; 64];
    if name.is_ascii() && name.len() <= folded.len() {
        let mut len = 0;
        for b in name.bytes().filter(|b| !SEPARATORS.contains(&char::from(*b))) {
            folded[len] = b.to_ascii_lowercase();
            len += 1;
        }
        return f(&folded[..len]);
    }
    f(normal(name).as_bytes())
}

/// Whether a JSON member with this name holds a credential.
pub fn is_secret_member(name: &str) -> bool {
    with_normal(name, |n| {
        n != b"progresstoken"
            && (MEMBER_ENDINGS.iter().any(|e| n.ends_with(e.as_bytes())) || contains_any(n, &MEMBER_PARTS))
    })
}

/// Whether any of `words` (none empty) is in `text`: what `words.iter().any(|w|
/// text.contains(w))` says, in one pass that tries a word only where its first letter is
/// (ten searches for every member name of a run cost more than the rest of the rule).
fn contains_any(text: &[u8], words: &[&str]) -> bool {
    let firsts = first_letters(words);
    (0..text.len()).any(|at| {
        firsts & (1 << (text[at] & 63)) != 0
            && words.iter().any(|w| w.as_bytes().first() == Some(&text[at]) && text[at..].starts_with(w.as_bytes()))
    })
}

/// The first bytes of `words` as a set of their low six bits: a byte not in it starts none
/// (one test per byte of a name, where trying each word was ten).
fn first_letters(words: &[&str]) -> u64 {
    words.iter().filter_map(|w| w.as_bytes().first()).fold(0, |set, b| set | (1 << (b & 63)))
}

/// Whether a header with this name carries a credential: the member rule, which covers
/// `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, `X-Api-Key`,
/// `X-Auth-Token`, `X-Client-Secret`…
pub fn is_secret_header(name: &str) -> bool {
    is_secret_member(name)
}

/// Whether a URL query or form parameter with this name carries a credential.
pub fn is_secret_param(name: &str) -> bool {
    is_secret_member(name) || with_normal(name, |n| PARAM_NAMES.iter().any(|p| p.as_bytes() == n))
}

/// Whether the header's value is `<scheme> <credential>` (the scheme is kept).
fn has_scheme(name: &str) -> bool {
    with_normal(name, |n| n.ends_with(b"authorization"))
}

/// Whether a credential after `Bearer`/`Basic` in free text looks like one rather than a word
/// of prose ("a bearer token", "Basic checks"): real tokens carry a digit, a capital after the
/// first letter or a punctuation mark, or are long. A header's value is hidden whatever it
/// looks like; this only spares sentences.
pub fn looks_like_credential(s: &str) -> bool {
    s.len() >= 16
        || s.chars().next().is_some_and(|c| c.is_ascii_digit())
        || s.chars().skip(1).any(|c| !c.is_ascii_lowercase())
}

/// Whether what follows `Bearer ` is an auth-param of a challenge (`realm="mcp"`,
/// `error=invalid_token`), not a credential: a token68 (RFC 9110 §11.4) has `=` only as
/// trailing padding.
fn is_auth_param(value: &str, next: Option<char>) -> bool {
    let Some(eq) = value.find('=').filter(|&i| i > 0) else { return false };
    let after = &value[eq + 1..];
    if after.is_empty() { next == Some('"') } else { !after.chars().all(|c| c == '=') }
}

/// A rule's regular expression (the rules are constants: a bad one is a bug caught by the
/// unit tests, which compile them all).
fn rule(re: &str) -> Regex {
    Regex::new(re).unwrap_or_else(|e| panic!("secret rule {re:?}: {e}"))
}

/// The HTTP authentication schemes whose credential text may show (lowercase).
const SCHEMES: [&str; 2] = ["bearer", "basic"];
/// `Bearer x` / `Basic x` (scheme, credential).
static SCHEME: LazyLock<Regex> =
    LazyLock::new(|| rule(&format!(r"(?i)\b({})[ \t]+([A-Za-z0-9._~+/=-]+)", SCHEMES.join("|"))));
/// `Authorization: …` / `Proxy-Authorization: …` (the value's first word, and a second).
static AUTHORIZATION: LazyLock<Regex> =
    LazyLock::new(|| rule(r#"(?i)\b(?:proxy-)?authorization[ \t]*:[ \t]*([^\s;,\]"]+)(?:[ \t]+([^\s;,\]"]+))?"#));
/// `Cookie: …` / `Set-Cookie: …`, to the end of the line.
/// A cookie value never holds a backslash (RFC 6265 cookie-octet), so an escaped `\n` ends it
/// too.
static COOKIE: LazyLock<Regex> = LazyLock::new(|| rule(r#"(?i)\b(?:set-)?cookie[ \t]*:[ \t]*([^\r\n"\[\]\\]+)"#));
/// `name: value` (a header line, YAML).
static NAMED: LazyLock<Regex> =
    LazyLock::new(|| rule(r#"(?:^|[\s\[;{(,])([A-Za-z][A-Za-z0-9_-]*)[ \t]*:[ \t]*"?([A-Za-z0-9._~+/=%-]+)"#));
/// `name=value` (a query string, a form body, `key=value` text).
static PARAM: LazyLock<Regex> =
    LazyLock::new(|| rule(r#"(?:^|[?&;\s"'(,])([A-Za-z][A-Za-z0-9_.-]*)="?([^&\s"',;#<>)\]]+)"#));
/// `--name value` / `--name=value` (a command line: `record` keeps the server's).
static OPTION: LazyLock<Regex> =
    LazyLock::new(|| rule(r#"(?:^|\s)--?([A-Za-z][A-Za-z0-9_-]*)(?:=|[ \t]+)([^\s"'<]+)"#));
/// `"name": "value"` (JSON as text).
static MEMBER: LazyLock<Regex> = LazyLock::new(|| rule(r#""([A-Za-z0-9_$.-]{1,80})"[ \t]*:[ \t]*"((?:[^"\\]|\\.)*)""#));
/// `\"name\": \"value\"` (JSON inside a JSON string).
static ESCAPED_MEMBER: LazyLock<Regex> =
    LazyLock::new(|| rule(r#"\\"([A-Za-z0-9_$.-]{1,80})\\"[ \t]*:[ \t]*\\"((?:[^"\\]|\\[^"])*)\\""#));
/// `scheme://user:password@`.
static USERINFO: LazyLock<Regex> = LazyLock::new(|| rule(r#"(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@"]+:([^/\s@"]+)@"#));

/// Any of `words` (lowercase literals), searched in the folded bytes of a text ([`Hints`]:
/// ASCII, so no check that they are text).
fn any_word(words: &[&str]) -> regex::bytes::Regex {
    let re = words.iter().map(|w| regex::escape(w)).collect::<Vec<_>>().join("|");
    regex::bytes::Regex::new(&re).unwrap_or_else(|e| panic!("secret rule {re:?}: {e}"))
}

/// A scheme's name in folded text ([`Hints`]).
static SCHEME_WORDS: LazyLock<regex::bytes::Regex> = LazyLock::new(|| any_word(&SCHEMES));
/// What a secret member's name holds, in folded text.
static MEMBER_WORDS: LazyLock<regex::bytes::Regex> =
    LazyLock::new(|| any_word(&[&MEMBER_ENDINGS[..], &MEMBER_PARTS[..]].concat()));
/// What a secret parameter's name holds when no member's would, in folded text.
static PARAM_WORDS: LazyLock<regex::bytes::Regex> = LazyLock::new(|| any_word(&PARAM_NAMES));
/// Any of the words above: most texts have none, and one search says so where three would.
static ANY_WORDS: LazyLock<regex::bytes::Regex> =
    LazyLock::new(|| any_word(&[&SCHEMES[..], &MEMBER_ENDINGS[..], &MEMBER_PARTS[..], &PARAM_NAMES[..]].concat()));

/// Which rules could find a secret in a text, from what every secret a rule finds comes
/// with: a scheme's name, a secret name's words, `://` and `@`, a parameter's `=` or an
/// option's `-` after white space. Most of the text a run shows (JSON-RPC members, method
/// names, ids) has none, and the rules' searches were most of the time judging a long run
/// took (issue 41); a rule the hints leave out could have found nothing, so the policy
/// redacts exactly as with every rule run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hints {
    /// `Bearer` or `Basic`: [`SCHEME`].
    schemes: bool,
    /// A secret member's (or header's) name: [`AUTHORIZATION`], [`COOKIE`], [`NAMED`],
    /// [`MEMBER`], [`ESCAPED_MEMBER`].
    members: bool,
    /// A secret parameter's name and `=`: [`PARAM`].
    param: bool,
    /// A secret parameter's name and a `-` at the start or after white space: [`OPTION`].
    option: bool,
    /// A URL's user info: [`USERINFO`].
    urls: bool,
}

impl Hints {
    /// Every rule.
    #[cfg(test)]
    const ALL: Hints = Hints { schemes: true, members: true, param: true, option: true, urls: true };
    /// No rule.
    const NONE: Hints = Hints { schemes: false, members: false, param: false, option: false, urls: false };

    /// The rules either lets through.
    fn or(self, other: Hints) -> Hints {
        Hints {
            schemes: self.schemes || other.schemes,
            members: self.members || other.members,
            param: self.param || other.param,
            option: self.option || other.option,
            urls: self.urls || other.urls,
        }
    }

    fn of(text: &str) -> Self {
        // Most texts are short (a method, a version, an id): folded on the stack; a long one
        // is sized once (collected, it would grow a step at a time).
        let mut short = [0u8; 256];
        let mut long = Vec::new();
        let buffer: &mut [u8] = if text.len() <= short.len() {
            &mut short
        } else {
            long.resize(text.len(), 0);
            &mut long
        };
        let folded = fold(text, buffer);
        let urls = text.contains('@') && text.contains("://");
        if !ANY_WORDS.is_match(folded) {
            return Hints { urls, ..Hints::NONE };
        }
        let members = MEMBER_WORDS.is_match(folded);
        let params = members || PARAM_WORDS.is_match(folded);
        Hints {
            schemes: SCHEME_WORDS.is_match(folded),
            members,
            param: params && param_shape(text),
            option: params && option_shape(text),
            urls,
        }
    }
}

/// The characters beyond ASCII that a rule ignoring case reads as an ASCII letter (Unicode's
/// simple case folding: `ſ` is an `s`, the Kelvin sign a `k`), and that letter.
const FOLDED_TO_ASCII: [(char, u8); 2] = [('\u{17f}', b's'), ('\u{212a}', b'k')];

/// `text` folded into `out` (at least as long) for [`Hints`] to search: ASCII as [`normal`]
/// folds a name (lowercase, without separators), so every name in the text is a run of the
/// folded text (the rules' names are ASCII); beyond ASCII, a character a rule ignoring case
/// reads as a letter ([`FOLDED_TO_ASCII`]) as that letter, any other as bytes no word holds.
/// Byte by byte through [`FOLD`] (asked of every string of a run, three times over), then
/// character by character where one of those characters is.
fn fold<'o>(text: &str, out: &'o mut [u8]) -> &'o [u8] {
    let mut len = 0;
    for &b in text.as_bytes() {
        let folded = FOLD[usize::from(b)];
        out[len] = folded;
        len += usize::from(folded != 0);
    }
    let may_read_as_letter = out[..len].contains(&MAY_READ_AS_LETTER)
        && FOLDED_TO_ASCII.iter().any(|(c, _)| text.contains(c.encode_utf8(&mut [0; 4]) as &str));
    if !may_read_as_letter {
        return &out[..len];
    }
    len = 0;
    for c in text.chars() {
        out[len] = if !c.is_ascii() {
            FOLDED_TO_ASCII.iter().find(|(from, _)| *from == c).map_or(BEYOND_ASCII, |(_, to)| *to)
        } else if SEPARATORS.contains(&c) {
            continue;
        } else {
            c.to_ascii_lowercase() as u8
        };
        len += 1;
    }
    &out[..len]
}

/// What [`fold`] makes of a byte beyond ASCII (no word holds it).
const BEYOND_ASCII: u8 = 0x80;
/// What [`fold`] makes of the first byte of a [`FOLDED_TO_ASCII`] character (and of many
/// others: `→` starts as the Kelvin sign does).
const MAY_READ_AS_LETTER: u8 = 0x81;

/// Each byte as [`fold`] folds it: ASCII lowercase, a separator 0 (left out), a byte beyond
/// ASCII (and NUL) [`BEYOND_ASCII`], the first byte of `ſ` and of the Kelvin sign
/// [`MAY_READ_AS_LETTER`].
static FOLD: [u8; 256] = {
    let mut table = [BEYOND_ASCII; 256];
    let mut b = 1;
    while b < 0x80 {
        table[b] = (b as u8).to_ascii_lowercase();
        b += 1;
    }
    let mut i = 0;
    while i < SEPARATORS.len() {
        table[SEPARATORS[i] as usize] = 0;
        i += 1;
    }
    i = 0;
    while i < FOLDED_TO_ASCII.len() {
        let mut first = [0u8; 4];
        FOLDED_TO_ASCII[i].0.encode_utf8(&mut first);
        table[first[0] as usize] = MAY_READ_AS_LETTER;
        i += 1;
    }
    table
};

/// Whether `text` has what every match of [`PARAM`] holds: `=` right after a name's
/// character.
fn param_shape(text: &str) -> bool {
    let name = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
    text.as_bytes().windows(2).any(|w| w[1] == b'=' && name(w[0]))
}

/// Whether `text` has what every match of [`OPTION`] holds: `-` or `--` and an ASCII letter,
/// at the start or after white space (`\s` is Unicode's, which `char::is_whitespace` is).
fn option_shape(text: &str) -> bool {
    text.match_indices('-').any(|(at, _)| {
        let after = &text.as_bytes()[at + 1..];
        let name = after.strip_prefix(b"-").unwrap_or(after);
        name.first().is_some_and(u8::is_ascii_alphabetic)
            && text[..at].chars().next_back().is_none_or(char::is_whitespace)
    })
}

/// A secret's place in a text.
#[derive(Debug, PartialEq)]
struct Span {
    start: usize,
    end: usize,
    found: Found,
}

impl Span {
    /// Adds the secret at `start..end` to `spans`, unless it is empty.
    fn add(spans: &mut Vec<Span>, start: usize, end: usize, found: Found) {
        if end > start {
            spans.push(Span { start, end, found });
        }
    }
}

/// The policy, plus any patterns a user added. [`Policy::default`] is the project's rules
/// alone.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    patterns: Vec<(String, Regex)>,
}

impl Policy {
    /// The rules plus `patterns` (regular expressions whose whole match is a secret). The
    /// rules are compiled here, not at their first use (some 50 ms in a debug build):
    /// `record` builds its policy before it relays anything, so no captured line waits on
    /// the compiler (a wait that showed up as a `delay` in the recorded scenario).
    pub fn with_patterns(patterns: &[String]) -> Result<Self, MockError> {
        for rule in [&SCHEME, &AUTHORIZATION, &COOKIE, &NAMED, &PARAM, &OPTION, &MEMBER, &ESCAPED_MEMBER, &USERINFO] {
            LazyLock::force(rule);
        }
        for words in [&SCHEME_WORDS, &MEMBER_WORDS, &PARAM_WORDS, &ANY_WORDS] {
            LazyLock::force(words);
        }
        let patterns = patterns
            .iter()
            .map(|p| {
                Regex::new(p)
                    .map(|re| (p.clone(), re))
                    .map_err(|e| MockError::Pattern { pattern: p.clone(), message: e.to_string() })
            })
            .collect::<Result<_, _>>()?;
        Ok(Policy { patterns })
    }

    /// `text` with every secret the shapes and the patterns find replaced by `mask`'s text.
    pub fn text(&self, text: &str, mask: &mut impl Mask) -> String {
        self.masked(text, mask).into_owned()
    }

    /// [`Policy::text`], borrowed when nothing in `text` is a secret (most strings of a
    /// run): no copy for them.
    pub(crate) fn masked<'t>(&self, text: &'t str, mask: &mut impl Mask) -> Cow<'t, str> {
        let mut spans = found_in(text);
        for (p, re) in &self.patterns {
            spans.extend(re.find_iter(text).filter(|m| !m.is_empty()).map(|m| Span {
                start: m.start(),
                end: m.end(),
                found: Found::Pattern(p.clone()),
            }));
        }
        spans.retain(|s| !is_masked(&text[s.start..]));
        // Earliest first; of two that overlap, the earlier (then the longer) wins.
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for s in spans {
            if s.start < at {
                continue;
            }
            out.push_str(&text[at..s.start]);
            out.push_str(&mask.mask(&s.found, &text[s.start..s.end]));
            at = s.end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// A header's value as an output shows it: a credential header's value masked (the
    /// scheme of an Authorization value kept), any other value through [`Policy::text`].
    pub fn header(&self, name: &str, value: &str, mask: &mut impl Mask) -> String {
        if !is_secret_header(name) {
            return self.text(value, mask);
        }
        let lower = name.to_ascii_lowercase();
        let found = Found::Header(lower);
        if has_scheme(name)
            && let Some((scheme, rest)) = value.trim().split_once(' ')
            && !rest.trim().is_empty()
        {
            let rest = rest.trim();
            if is_masked(rest) {
                return value.to_owned();
            }
            return format!("{scheme} {}", mask.mask(&found, rest));
        }
        if is_masked(value) { value.to_owned() } else { mask.mask(&found, value) }
    }

    /// Masks, in place, every secret member's text and every secret in the other strings.
    pub fn json(&self, v: &mut Value, mask: &mut impl Mask) {
        match v {
            Value::String(s) => {
                if let Cow::Owned(masked) = self.masked(s, mask) {
                    *s = masked;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.json(i, mask)),
            Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    if is_secret_member(key) {
                        self.member(key, value, mask);
                    } else {
                        self.json(value, mask);
                    }
                }
            }
            _ => {}
        }
    }

    /// The text of a secret member `key`: masked (an Authorization value keeps its scheme),
    /// unless it is a mask already.
    pub(crate) fn member_text<'t>(&self, key: &str, text: &'t str, mask: &mut impl Mask) -> Cow<'t, str> {
        if has_scheme(key) {
            Cow::Owned(self.header(key, text, mask))
        } else if is_masked(text) {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(mask.mask(&Found::Member(key.to_owned()), text))
        }
    }

    /// The value of a secret member: its text masked (an Authorization value keeps its
    /// scheme), an object searched member by member.
    fn member(&self, key: &str, value: &mut Value, mask: &mut impl Mask) {
        match value {
            Value::String(s) => {
                if let Cow::Owned(masked) = self.member_text(key, s, mask) {
                    *s = masked;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.member(key, i, mask)),
            Value::Object(_) => self.json(value, mask),
            _ => {}
        }
    }
}

/// The project's shape rules, in the order their secrets are listed (of two that find the
/// same span, the first names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    Scheme,
    Authorization,
    Cookie,
    Named,
    Param,
    Option,
    Member,
    EscapedMember,
    UserInfo,
}

impl Rule {
    const ALL: [Rule; 9] = [
        Rule::Scheme,
        Rule::Authorization,
        Rule::Cookie,
        Rule::Named,
        Rule::Param,
        Rule::Option,
        Rule::Member,
        Rule::EscapedMember,
        Rule::UserInfo,
    ];

    /// Whether `hints` let the rule run.
    fn wanted(self, hints: Hints) -> bool {
        match self {
            Rule::Scheme => hints.schemes,
            Rule::Authorization | Rule::Cookie | Rule::Named | Rule::Member | Rule::EscapedMember => hints.members,
            Rule::Param => hints.param,
            Rule::Option => hints.option,
            Rule::UserInfo => hints.urls,
        }
    }

    /// Whether a match may hold a line break past its first character: a JSON string's
    /// value (`[^"\\]` takes a raw newline). Every other rule's match is one line, at most
    /// with the line break before it (`(?:^|\s)`).
    fn crosses_lines(self) -> bool {
        matches!(self, Rule::Member | Rule::EscapedMember)
    }

    /// Adds the secrets the rule finds in `text` to `spans`.
    fn find(self, text: &str, spans: &mut Vec<Span>) {
        match self {
            Rule::Scheme => {
                for c in SCHEME.captures_iter(text) {
                    let (Some(scheme), Some(cred)) = (c.get(1), c.get(2)) else { continue };
                    let next = text[cred.end()..].chars().next();
                    // `Authorization: Bearer x` is the header rule's; here only what looks like a token.
                    if !is_auth_param(cred.as_str(), next) && looks_like_credential(cred.as_str()) {
                        Span::add(spans, cred.start(), cred.end(), Found::Scheme(scheme.as_str().to_owned()));
                    }
                }
            }
            Rule::Authorization => {
                for c in AUTHORIZATION.captures_iter(text) {
                    let Some(first) = c.get(1) else { continue };
                    let found = Found::Header("authorization".into());
                    match c.get(2) {
                        // `<scheme> <credential>`: the scheme stays.
                        Some(second) if first.as_str().chars().all(|ch| ch.is_ascii_alphabetic()) => {
                            let next = text[second.end()..].chars().next();
                            if !is_auth_param(second.as_str(), next) {
                                Span::add(spans, second.start(), second.end(), found);
                            }
                        }
                        _ => Span::add(spans, first.start(), first.end(), found),
                    }
                }
            }
            Rule::Cookie => {
                for c in COOKIE.captures_iter(text) {
                    let Some(value) = c.get(1) else { continue };
                    let end = value.start() + value.as_str().trim_end().len();
                    Span::add(spans, value.start(), end, Found::Header("cookie".into()));
                }
            }
            Rule::Named => named_values(text, &NAMED, spans, |name| {
                // Authorization and cookie lines have their own rules above.
                let own_rule = has_scheme(name) || with_normal(name, |n| n.ends_with(b"cookie"));
                (is_secret_header(name) && !own_rule).then(|| Found::Header(name.to_ascii_lowercase()))
            }),
            Rule::Param | Rule::Option => {
                let re = if self == Rule::Param { &*PARAM } else { &*OPTION };
                named_values(text, re, spans, |name| is_secret_param(name).then(|| Found::Param(name.to_owned())));
            }
            Rule::Member | Rule::EscapedMember => {
                let re = if self == Rule::Member { &*MEMBER } else { &*ESCAPED_MEMBER };
                named_values(text, re, spans, |name| is_secret_member(name).then(|| Found::Member(name.to_owned())));
            }
            Rule::UserInfo => {
                for c in USERINFO.captures_iter(text) {
                    if let Some(password) = c.get(1) {
                        Span::add(spans, password.start(), password.end(), Found::UrlPassword);
                    }
                }
            }
        }
    }
}

/// Every secret the project's shapes find in `text` (they may overlap): the rules `hints`
/// let through, each alone over the whole text.
fn shapes(text: &str, hints: Hints) -> Vec<Span> {
    shapes_in(text, &[Piece { start: 0, end: text.len(), hints }], hints)
}

/// A part of a text, and its own hints.
#[derive(Debug, Clone, Copy)]
struct Piece {
    start: usize,
    end: usize,
    hints: Hints,
}

/// [`shapes`], each rule that keeps to a line run on only the `pieces` whose hints let it
/// through, and each rule that may cross lines over the whole text if `whole` lets it. The
/// pieces must cut the text only just before a line break (see [`found_in`]); rule by rule,
/// piece by piece, the spans come in the order the rules over the whole text give them.
fn shapes_in(text: &str, pieces: &[Piece], whole: Hints) -> Vec<Span> {
    let mut spans = Vec::new();
    for rule in Rule::ALL {
        if rule.crosses_lines() {
            if rule.wanted(whole) {
                rule.find(text, &mut spans);
            }
            continue;
        }
        for piece in pieces.iter().filter(|p| rule.wanted(p.hints)) {
            let from = spans.len();
            rule.find(&text[piece.start..piece.end], &mut spans);
            for s in &mut spans[from..] {
                s.start += piece.start;
                s.end += piece.start;
            }
        }
    }
    spans
}

/// Texts longer than this are searched line by line (see [`found_in`]).
const LINE_BY_LINE: usize = 4096;

/// Every secret the shapes find in `text`: [`shapes`] with the text's [`Hints`]. A long text
/// of many lines (the whole transcript of a run, which the redactor passes the policy over
/// once more at its end for a shape spanning its pieces) is cut just before each line break,
/// and a rule that keeps to one line runs only on the lines whose own hints let it through:
/// most lines have no secret word, and one that has (`"code"` in every JSON-RPC error) rarely
/// has the rest of a rule's shape (`=`).
///
/// Exact: such a rule's match holds no line break but as its first character (`\s` before a
/// name), so every match over the whole text lies in one piece, each piece starting at a
/// line break; the piece's match there is the same (`\b` sees a line break or the text's
/// end alike; a `^` a piece's start allows is followed by a letter or `-`, never its line
/// break), and the search goes on after it in both. A word of the hints holds no line break,
/// so the pieces' hints together are the whole text's.
fn found_in(text: &str) -> Vec<Span> {
    if text.len() <= LINE_BY_LINE {
        let hints = Hints::of(text);
        return if hints == Hints::NONE { Vec::new() } else { shapes(text, hints) };
    }
    let mut pieces = Vec::new();
    let mut whole = Hints::NONE;
    let mut start = 0;
    let breaks = text.match_indices('\n').map(|(at, _)| at).filter(|&at| at > 0);
    for end in breaks.chain([text.len()]) {
        let hints = Hints::of(&text[start..end]);
        if hints != Hints::NONE {
            whole = whole.or(hints);
            pieces.push(Piece { start, end, hints });
        }
        start = end;
    }
    shapes_in(text, &pieces, whole)
}

/// The values of `re`'s `name … value` matches (its groups 1 and 2) in `text` whose name
/// `secret` finds a secret's.
fn named_values(text: &str, re: &Regex, spans: &mut Vec<Span>, secret: impl Fn(&str) -> Option<Found>) {
    for c in re.captures_iter(text) {
        let (Some(name), Some(value)) = (c.get(1), c.get(2)) else { continue };
        if let Some(found) = secret(name.as_str()) {
            Span::add(spans, value.start(), value.end(), found);
        }
    }
}

/// A log writer whose every write passes the policy: what the harness's `tracing` output
/// goes through, so a transport's debug line quoting an error body never prints a token.
/// The `fmt` subscriber writes each event in one call, so a secret is never split between
/// two writes.
#[derive(Debug)]
pub struct LogWriter<W>(pub W);

impl<W: std::io::Write> std::io::Write for LogWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(Policy::default().text(&text, &mut Plain).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(s: &str) -> String {
        Policy::default().text(s, &mut Plain)
    }

    #[test]
    fn names_that_hold_credentials() {
        for name in [
            "Authorization",
            "proxy-authorization",
            "Cookie",
            "set-cookie",
            "X-Api-Key",
            "x-auth-token",
            "access_token",
            "refreshToken",
            "id_token",
            "client_secret",
            "clientSecret",
            "password",
            "apiKey",
            "api_key",
            "code_verifier",
            "aws_secret_access_key",
            "credentials",
        ] {
            assert!(is_secret_member(name), "{name}");
            assert!(is_secret_header(name), "{name}");
            assert!(is_secret_param(name), "{name}");
        }
        for name in [
            "progressToken",
            "nextCursor",
            "token_type",
            "maxTokens",
            "code",
            "www-authenticate",
            "mcp-session-id",
            "authorization_endpoint",
            "code_challenge",
        ] {
            assert!(!is_secret_member(name), "{name}");
        }
        for name in ["code", "key", "sig"] {
            assert!(is_secret_param(name) && !is_secret_member(name), "{name}");
        }
    }

    #[test]
    fn names_fold_alike_on_the_stack_and_off_it() {
        let long = "X-".repeat(40) + "Api_Key";
        for name in
            ["Client-Secret", "progress_Token", "a.b c-d_E", "", "K\u{212a}ey", "Stra\u{df}e_token", long.as_str()]
        {
            assert_eq!(with_normal(name, <[u8]>::to_vec), normal(name).into_bytes(), "{name}");
        }
        assert!(is_secret_member(&long) && !is_secret_member("progress_Token"));
    }

    #[test]
    fn one_pass_finds_a_word_wherever_a_search_for_each_would() {
        for text in
            ["", "x", "passwd", "mypassphrasex", "pas", "secre", "cookiecookie", "verifie", "xcredential", "apike"]
        {
            let searched = MEMBER_PARTS.iter().any(|w| text.contains(w));
            assert_eq!(contains_any(text.as_bytes(), &MEMBER_PARTS), searched, "{text}");
        }
        assert!(!contains_any(b"anything", &[]));
    }

    /// What the policy makes of each text (the text itself, where it is left alone).
    fn assert_shown(cases: &[(&str, &str)]) {
        for (given, shown) in cases {
            assert_eq!(text(given), *shown, "{given}");
        }
    }

    #[test]
    fn bearer_and_basic_credentials_but_not_challenges_or_prose() {
        assert_shown(&[
            ("authorization: Bearer abc.def-123 next", "authorization: Bearer <redacted> next"),
            ("using Bearer srvlog-Token-4242 now", "using Bearer <redacted> now"),
            ("Basic dXNlcjpwYXNz", "Basic <redacted>"),
            ("Bearer abc123== next", "Bearer <redacted> next"),
        ]);
        // Challenges keep their parameters; prose keeps its words; masks are left alone, so
        // text may pass the policy twice.
        for kept in [
            r#"www-authenticate: Bearer realm="mcp""#,
            "Bearer error=invalid_token",
            "re-sent with the new bearer token",
            "Basic checks pass",
            "Bearer <redacted:2>",
            "lacked Authorization: Bearer <redacted:1>",
        ] {
            assert_eq!(text(kept), kept);
        }
    }

    #[test]
    fn header_lines_cookies_parameters_and_urls_in_text() {
        assert_shown(&[
            ("Authorization: Token abc", "Authorization: Token <redacted>"),
            ("authorization: rawsecret", "authorization: <redacted>"),
            ("[accept: */*; x-api-key: k-1; mcp-method: x]", "[accept: */*; x-api-key: <redacted>; mcp-method: x]"),
            ("Cookie: a=1; b=2\nnext", "Cookie: <redacted>\nnext"),
            (r"Cookie: a=1\n", r"Cookie: <redacted>\n"),
            (
                "grant_type=authorization_code&code=c1&code_verifier=v1&client_secret=s1&refresh_token=r1&state=ok",
                "grant_type=authorization_code&code=<redacted>&code_verifier=<redacted>&client_secret=<redacted>&refresh_token=<redacted>&state=ok",
            ),
            ("POST /message?session_id=1&api_key=k9", "POST /message?session_id=1&api_key=<redacted>"),
            ("see http://user:pw1@127.0.0.1/x", "see http://user:<redacted>@127.0.0.1/x"),
            (
                "server.py --api-key k1 --port 9 --token=t1",
                "server.py --api-key <redacted> --port 9 --token=<redacted>",
            ),
        ]);
        // Words that only look like names stay: a sentence, JSON-RPC, a progress token.
        for kept in ["an unknown token: {\"a\":1}", "{\"progressToken\":\"p1\"}", "exit code 1"] {
            assert_eq!(text(kept), kept);
        }
    }

    #[test]
    fn json_printed_as_text_plain_or_inside_a_string() {
        assert_shown(&[
            (r#"{"apiKey": "k", "n": 1}"#, r#"{"apiKey": "<redacted>", "n": 1}"#),
            (r#"{"access_token":"s3cr3t"}"#, r#"{"access_token":"<redacted>"}"#),
            (r#""text":"{\"password\":\"pw\"}""#, r#""text":"{\"password\":\"<redacted>\"}""#),
            (r#"{"code": "invalid_type"}"#, r#"{"code": "invalid_type"}"#),
        ]);
    }

    #[test]
    fn json_members_at_any_depth_and_strings_inside() {
        let mut v = json!({
            "params": {"arguments": {"apiKey": "k", "password": "p", "deep": [{"client_secret": "s", "ok": "x"}],
            "note": "Bearer abc.def", "Authorization": "Basic dXNlcjpwYXNz", "tokens": ["a"], "progressToken": "p1",
            "credentials": {"user": "u", "passwd": "q"}, "refresh_token": ["r1", "r2"], "code": "invalid_type"}}
        });
        Policy::default().json(&mut v, &mut Plain);
        assert_eq!(
            v,
            json!({
                "params": {"arguments": {"apiKey": "<redacted>", "password": "<redacted>",
                "deep": [{"client_secret": "<redacted>", "ok": "x"}], "note": "Bearer <redacted>",
                "Authorization": "Basic <redacted>", "tokens": ["a"], "progressToken": "p1",
                "credentials": {"user": "u", "passwd": "<redacted>"}, "refresh_token": ["<redacted>", "<redacted>"],
                "code": "invalid_type"}}
            })
        );
    }

    #[test]
    fn headers_keep_the_scheme_and_masks() {
        let p = Policy::default();
        assert_eq!(p.header("Authorization", "Bearer abc", &mut Plain), "Bearer <redacted>");
        assert_eq!(p.header("authorization", "Bearer <redacted:1>", &mut Plain), "Bearer <redacted:1>");
        assert_eq!(p.header("Set-Cookie", "sid=1; Path=/", &mut Plain), "<redacted>");
        assert_eq!(p.header("location", "/cb?code=c9&state=s", &mut Plain), "/cb?code=<redacted>&state=s");
        assert_eq!(p.header("content-type", "application/json", &mut Plain), "application/json");
    }

    /// The hints only spare searches: in every shape, with every name spelt in every way the
    /// name rules read alike (case, separators), and in text beyond ASCII, the rules they let
    /// through find what all the rules find.
    #[test]
    fn hints_leave_out_only_rules_that_find_nothing() {
        let names =
            [&MEMBER_ENDINGS[..], &MEMBER_PARTS[..], &PARAM_NAMES[..], &SCHEMES[..], &["progressToken"]].concat();
        let spellings = |name: &str| {
            let mut split = String::new();
            for (i, c) in name.chars().enumerate() {
                if i > 0 {
                    split.push(SEPARATORS[i % 3]);
                }
                split.push(c);
            }
            [name.to_owned(), name.to_ascii_uppercase(), format!("x_{name}_id"), split]
        };
        let shapes_of = |name: &str| {
            [
                format!("{name}: v1-secret"),
                format!("[a: 1; {name}: v1]"),
                format!("?a=1&{name}=v1&b=2"),
                format!("run --{name} v1 --{name}=v2"),
                format!(r#"{{"{name}": "v1", "n": 1}}"#),
                format!(r#""text":"{{\"{name}\":\"v1\"}}""#),
                format!("{name} Abc123xyz and https://u:{name}@host/"),
            ]
        };
        let mut texts: Vec<String> = names.iter().flat_map(|n| spellings(n)).flat_map(|n| shapes_of(&n)).collect();
        texts.extend(
            [
                "baſic abcdefgh12345678",
                "Set-Cooki\u{212a}: a=1",
                "\u{212a}ey=v1 and token=\u{e9}t\u{e9}",
                r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}"#,
                "exit code 1, sig 9",
                "",
            ]
            .map(String::from),
        );
        // An option at the start, after a tab or a line break; a parameter's name with no `=`.
        texts.extend(
            ["--code c1", "a\t-key k2", "x\n--sig=s1", "code: c1 -32601", "{\"code\":-32601}", "key -k"]
                .map(String::from),
        );
        // Beyond ASCII: white space before an option, a transcript's arrows, letters a rule
        // ignoring case reads as ASCII.
        texts.extend(
            [
                "\u{a0}--token x",
                "x\u{2003}-key=v",
                "\u{e9} token=v",
                "← {\"code\":-32601} [auto -32601]",
                "→ Set-Coo\u{212a}ie: a=1; Bearer x1",
                "Authoriza\u{17f}ion: abc",
                "ba\u{17f}ic QWxhZGRpbjpvcGVu \u{212a}EY=1",
            ]
            .map(String::from),
        );
        // Longer than the stack's fold.
        texts.extend(names.iter().map(|n| format!("{} {n}=v1 x-{n}: v2", "a b_".repeat(100))));
        texts.push("a b_".repeat(100));
        for text in &texts {
            assert_eq!(shapes(text, Hints::of(text)), shapes(text, Hints::ALL), "{text}");
        }
        // And they do spare them: plain JSON-RPC meets no rule.
        let plain = Hints::of(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow"}}"#);
        assert_eq!(plain, Hints::NONE);
    }

    /// The hints' fold reads as an ASCII letter every character beyond ASCII a rule ignoring
    /// case does, and no other.
    #[test]
    fn the_characters_beyond_ascii_read_as_letters_are_folded_to_them() {
        let letter = rule("(?i)^[a-z]$");
        let read_as_letters: Vec<char> = (0x80..=0x10ffff)
            .filter_map(char::from_u32)
            .filter(|c| letter.is_match(c.encode_utf8(&mut [0; 4])))
            .collect();
        assert_eq!(read_as_letters, FOLDED_TO_ASCII.map(|(c, _)| c));
        for (c, to) in FOLDED_TO_ASCII {
            assert!(rule(&format!("(?i)^{}$", char::from(to))).is_match(&c.to_string()), "{c}");
            let mut out = [0u8; 16];
            assert_eq!(fold(&format!("A_{c}é"), &mut out), [b'a', to, BEYOND_ASCII]);
        }
        let mut out = [0u8; 16];
        assert_eq!(fold("A_é-b\0.C", &mut out), [b'a', BEYOND_ASCII, BEYOND_ASCII, b'b', BEYOND_ASCII, b'c']);
        assert_eq!(fold("→ Ke", &mut out), [MAY_READ_AS_LETTER, BEYOND_ASCII, BEYOND_ASCII, b'k', b'e']);
        assert_eq!(fold("→\u{212a}e", &mut out), [BEYOND_ASCII, b'k', b'e']);
    }

    /// A long text of many lines is searched line by line exactly as whole: shapes at a line's
    /// start and end, a JSON value running over lines (plain and escaped), lines beyond ASCII,
    /// CRLF, a text that starts with a line break.
    #[test]
    fn a_long_text_line_by_line_finds_what_the_whole_text_does() {
        let tricky = [
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}",
            "protocol_violations=0 late_responses=1 code=c0de1",
            "note: the \"password\": \"abc",
            "def\" ends here and \"apiKey\":\"k1\"",
            r#"text \"token\": \"a"#,
            r#"b\" and more"#,
            "Authorization: Bearer",
            "tok-en-1 Bearer abc123xyz",
            "Cookie: a=1\r",
            "x-api-key: k1",
            "--token t1 and -key=v2",
            "sig=s1&code=c2",
            "see https://u:pw@h/ and https://a",
            "b:c@d/",
            "baſic abcdefgh12345678 K\u{212a}ey=v1",
            "-",
            "",
        ];
        let filler = "→ {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"slow\"}}";
        let mut lines = vec![filler; LINE_BY_LINE / filler.len() + 1];
        for (i, line) in tricky.iter().enumerate() {
            lines.insert(i * 3, line);
        }
        for text in [lines.join("\n"), format!("\n{}", lines.join("\r\n")), format!("{}\n", tricky.join("\n"))] {
            let text = if text.len() > LINE_BY_LINE { text } else { text.repeat(LINE_BY_LINE / text.len() + 1) };
            let whole = shapes(&text, Hints::ALL);
            assert_eq!(found_in(&text), whole);
            assert!(whole.len() > 10, "{whole:?}");
        }
    }

    #[test]
    fn a_mask_sees_each_secret_and_patterns_add_to_the_rules() {
        let p = Policy::with_patterns(&["cust-[0-9]+".into()]).expect("valid");
        let mut seen = Vec::new();
        let out = p.text("id cust-42 with Bearer tok-1", &mut |f: &Found, s: &str| {
            seen.push(format!("{f}={s}"));
            format!("<redacted:{}>", seen.len())
        });
        assert_eq!(out, "id <redacted:1> with Bearer <redacted:2>");
        assert_eq!(seen, ["pattern \"cust-[0-9]+\"=cust-42", "bearer token=tok-1"]);
        let e = Policy::with_patterns(&["(".into()]).expect_err("invalid");
        assert!(e.to_string().starts_with("\"(\" is not a regular expression"), "{e}");
    }

    #[test]
    fn log_lines_pass_the_policy() {
        use std::io::Write;
        let mut w = LogWriter(Vec::new());
        w.write_all(b"DEBUG transport report error=HTTP 401: {\"refresh_token\":\"r1\"}\n").expect("write");
        assert_eq!(
            String::from_utf8_lossy(&w.0),
            "DEBUG transport report error=HTTP 401: {\"refresh_token\":\"<redacted>\"}\n"
        );
    }
}
