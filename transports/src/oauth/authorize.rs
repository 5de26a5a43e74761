//! The authorization request (OAuth 2.1 §4.1.1) and the check of its answer: the URL the
//! host's callback opens, then the redirect it returns — to the registered redirect URI,
//! with our `state`, with an `iss` equal to the issuer when there is one (RFC 9207 §2.4,
//! before anything else of the answer is acted on), and a code.

use super::error::AuthError;
use url::Url;

/// Everything one authorization request sends.
pub struct Request<'a> {
    /// The server's authorization endpoint.
    pub endpoint: &'a Url,
    /// `client_id`.
    pub client_id: &'a str,
    /// `redirect_uri`.
    pub redirect_uri: &'a str,
    /// `code_challenge` (S256).
    pub challenge: &'a str,
    /// `state`.
    pub state: &'a str,
    /// `scope`, when any.
    pub scope: Option<&'a str>,
    /// `resource` (RFC 8707).
    pub resource: &'a str,
}

impl Request<'_> {
    /// The URL the user agent opens.
    pub fn url(&self) -> Url {
        let mut url = self.endpoint.clone();
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code");
            q.append_pair("client_id", self.client_id);
            q.append_pair("redirect_uri", self.redirect_uri);
            q.append_pair("code_challenge", self.challenge);
            q.append_pair("code_challenge_method", "S256");
            q.append_pair("state", self.state);
            if let Some(s) = self.scope {
                q.append_pair("scope", s);
            }
            q.append_pair("resource", self.resource);
        }
        url
    }
}

/// The code in `redirect`, after the checks; the error says which failed.
pub fn code_from(
    redirect: &Url,
    redirect_uri: &str,
    state: &str,
    issuer: &str,
    iss_required: bool,
) -> Result<String, AuthError> {
    let expected = Url::parse(redirect_uri)
        .map_err(|_| AuthError::RedirectUriNotAUrl { redirect_uri: redirect_uri.to_string() })?;
    if redirect.origin() != expected.origin() || redirect.path() != expected.path() {
        return Err(AuthError::WrongRedirect {
            to: format!("{}{}", redirect.origin().ascii_serialization(), redirect.path()),
        });
    }
    let param = |k: &str| redirect.query_pairs().find(|(n, _)| n == k).map(|(_, v)| v.into_owned());
    match param("iss") {
        Some(iss) if iss != issuer => return Err(AuthError::ForeignIss { iss, issuer: issuer.to_string() }),
        None if iss_required => return Err(AuthError::MissingIss),
        _ => {}
    }
    if let Some(error) = param("error") {
        return Err(AuthError::Denied { error, description: param("error_description") });
    }
    if param("state").as_deref() != Some(state) {
        return Err(AuthError::StateMismatch);
    }
    param("code").filter(|c| !c.is_empty()).ok_or(AuthError::NoCode)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).expect("url")
    }

    #[test]
    fn the_redirect_is_checked_before_its_code_is_used() {
        let ok = u("http://127.0.0.1/cb?code=c&state=s&iss=http%3A%2F%2Fas");
        assert_eq!(code_from(&ok, "http://127.0.0.1/cb", "s", "http://as", true).ok(), Some("c".into()));
        let e = |url: &str, required| {
            code_from(&u(url), "http://127.0.0.1/cb", "s", "http://as", required).expect_err("refused").to_string()
        };
        assert!(e("http://localhost/cb?code=c&state=s", false).contains("not to the registered redirect_uri"));
        assert!(e("http://127.0.0.1/cb?code=c&state=t", false).contains("state"));
        assert!(e("http://127.0.0.1/cb?code=c&state=s&iss=http%3A%2F%2Fevil", false).contains("iss"));
        assert!(e("http://127.0.0.1/cb?code=c&state=s", true).contains("no iss"));
        // A mismatched iss wins over an error: the error is not acted on.
        assert!(e("http://127.0.0.1/cb?error=access_denied&iss=x", false).contains("iss"));
        assert!(e("http://127.0.0.1/cb?error=access_denied&state=s", false).contains("refused: access_denied"));
        let r = Request {
            endpoint: &u("http://127.0.0.1/authorize"),
            client_id: "c",
            redirect_uri: "http://127.0.0.1/cb",
            challenge: "ch",
            state: "s",
            scope: Some("a b"),
            resource: "http://127.0.0.1/mcp",
        };
        assert_eq!(
            r.url().as_str(),
            "http://127.0.0.1/authorize?response_type=code&client_id=c&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&code_challenge=ch&code_challenge_method=S256&state=s&scope=a+b&resource=http%3A%2F%2F127.0.0.1%2Fmcp"
        );
    }
}
