//! Reading a `WWW-Authenticate` header (RFC 9110 §11.6.1): the `Bearer` challenge's
//! parameters the flow uses — `resource_metadata` (RFC 9728 §5.1), `scope` and `error`
//! (RFC 6750 §3). A header may hold several challenges (`Basic realm="x", Bearer …`); only
//! the `Bearer` one counts. Values are a token or a quoted string with `\` escapes.

/// The parameters of a `Bearer` challenge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// Where the protected resource metadata is.
    pub resource_metadata: Option<String>,
    /// The scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// `invalid_token`, `insufficient_scope`, …
    pub error: Option<String>,
}

impl Challenge {
    /// The scopes of [`Challenge::scope`].
    pub fn scopes(&self) -> Vec<String> {
        self.scope.as_deref().unwrap_or_default().split_whitespace().map(str::to_string).collect()
    }
}

/// The `Bearer` challenge of a header value, if it has one.
pub fn parse(header: &str) -> Option<Challenge> {
    let mut p = Parser { s: header.as_bytes(), i: 0 };
    let mut bearer: Option<Challenge> = None;
    // Whether the parameters read now belong to the Bearer challenge.
    let mut in_bearer = false;
    loop {
        p.skip(|b| b == b' ' || b == b'\t' || b == b',');
        let Some(token) = p.token() else { break };
        p.skip(|b| b == b' ' || b == b'\t');
        if p.peek() == Some(b'=') && !p.token68_padding() {
            p.i += 1;
            p.skip(|b| b == b' ' || b == b'\t');
            let value = p.value();
            if let Some(c) = bearer.as_mut().filter(|_| in_bearer) {
                match token.to_ascii_lowercase().as_str() {
                    "resource_metadata" => c.resource_metadata = Some(value),
                    "scope" => c.scope = Some(value),
                    "error" => c.error = Some(value),
                    _ => {}
                }
            }
        } else {
            // A scheme starts a challenge (or a token68 follows one: `Basic dXNl…==`).
            in_bearer = token.eq_ignore_ascii_case("bearer") && bearer.is_none();
            if in_bearer {
                bearer = Some(Challenge::default());
            }
            p.skip(|b| b == b'=');
        }
    }
    bearer
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
    }

    /// Whether the `=` here is a token68's padding (`==`, or `=` then the end or a comma).
    fn token68_padding(&self) -> bool {
        matches!(self.s.get(self.i + 1), None | Some(b'=' | b',' | b' '))
    }

    fn token(&mut self) -> Option<String> {
        let start = self.i;
        self.skip(|b| !matches!(b, b' ' | b'\t' | b',' | b'=' | b'"'));
        (self.i > start).then(|| String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    fn value(&mut self) -> String {
        if self.peek() != Some(b'"') {
            return self.token().unwrap_or_default();
        }
        self.i += 1;
        let mut out = Vec::new();
        while let Some(b) = self.peek() {
            self.i += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    if let Some(next) = self.peek() {
                        out.push(next);
                        self.i += 1;
                    }
                }
                _ => out.push(b),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_parameters_quoted_or_not_among_other_challenges() {
        let c = parse(r#"Bearer resource_metadata="http://h/.well-known/oauth-protected-resource", scope="a b""#)
            .expect("bearer");
        assert_eq!(c.resource_metadata.as_deref(), Some("http://h/.well-known/oauth-protected-resource"));
        assert_eq!(c.scopes(), ["a", "b"]);
        let c = parse(r#"Basic realm="x", Bearer error=insufficient_scope, scope="w \"q\"""#).expect("bearer");
        assert_eq!((c.error.as_deref(), c.scope.as_deref()), (Some("insufficient_scope"), Some("w \"q\"")));
        let c = parse(r#"Bearer error="invalid_token", Basic realm="r", scope="not-bearer's""#).expect("bearer");
        assert_eq!((c.error.as_deref(), c.scope), (Some("invalid_token"), None));
        assert_eq!(parse("Bearer"), Some(Challenge::default()));
        assert_eq!(parse(r#"Basic realm="x""#), None);
        assert_eq!(parse("Basic dXNlcjpwYXNz==, Bearer scope=s").and_then(|c| c.scope), Some("s".into()));
    }
}
