"""The reference client's OAuth client (`connect.oauth`), written against the MCP
authorization pages of each revision and the RFCs they defer to; docs/authorization.md lists
the same rules with their citations (the bundled Rust client follows them too, but nothing
here is taken from it that a page does not say).

Standard library only, like the rest of the reference client. A 401 from the MCP endpoint
starts the flow:

1. the `Bearer` challenge of `WWW-Authenticate` (RFC 6750 §3; RFC 9728 §5.1);
2. protected resource metadata (RFC 9728; 2025-06-18 on): the challenge's
   `resource_metadata`, else the well-known URI at the endpoint's path, then at the root;
   its `resource` must be this endpoint (§3.3) and it must name an authorization server;
   2025-03-26 has none: the MCP URL without its path is the authorization base URL;
3. authorization server metadata (RFC 8414; OpenID Connect Discovery) at the URLs the
   revision lists, in its order; its `issuer` must be the one the URL was built from; PKCE
   S256 must be advertised where the revision says so (2025-11-25 on), and must not be
   refused anywhere; 2025-03-26 without metadata uses the default endpoints;
4. registration in the pages' priority: pre-registered, a Client ID Metadata Document where
   the server accepts those, dynamic registration (RFC 7591);
5. scopes: the challenge's, else `scopes_supported`, else the configured ones;
6. authorization code with PKCE S256, a fresh `state` and `resource` (RFC 8707); the user
   step is answered headlessly by following the authorization server's redirect; the
   redirect must go to the registered redirect URI with our `state` (and the issuer's `iss`
   where present or promised, RFC 9207);
7. the token request (with `resource`), then the MCP request is re-sent once with the token.

A later 401 refreshes (keeping a rotated refresh token, never the old one), or runs the
flow again when there is nothing to refresh or the refresh is refused. A 403
`insufficient_scope` (2025-11-25 on) steps up to the union of the scopes asked so far and
the challenge's, at most a few times and never for scopes already asked for. OAuth requests
carry neither the MCP token nor the configured headers, and follow no redirect.

Why the revision comes from the harness (MCP_CONFORMANCE_PROTOCOL_VERSION) rather than the
handshake: the first 401 answers `initialize` itself, before any version is negotiated, so
the client authorizes by the rules of the revision it was configured to speak.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import ipaddress
import json
import secrets
import threading
import urllib.parse
from typing import Any

#: Each planted auth bug and what it breaks (client.py lists these after its own).
BUGS: dict[str, str] = {
    "pkce-plain": "sends code_challenge_method=plain (the verifier itself as the challenge) instead of S256",
    "ignores-pkce-support": "runs the flow when the authorization server metadata advertises no code_challenge_methods_supported",
    "no-resource-parameter": "leaves the resource parameter (RFC 8707) out of the authorization and token requests",
    "refresh-without-resource": "leaves the resource parameter out of the refresh request",
    "resource-metadata-root-first": "asks the root well-known URI for the protected resource metadata before the one at the endpoint's path",
    "openid-before-oauth-metadata": "asks openid-configuration before oauth-authorization-server for the authorization server metadata",
    "skips-issuer-check": "uses authorization server metadata whose issuer is not the one its URL was built from",
    "skips-resource-check": "uses protected resource metadata that names another resource",
    "no-default-endpoints": "on 2025-03-26 treats a missing metadata document as fatal instead of using the default endpoints",
    "follows-cross-origin-redirect": "follows a 307/308 of an MCP request to another origin, its Authorization header along",
    "keeps-rotated-refresh-token": "keeps the old refresh token when the refresh answers a rotated one",
    "token-to-oauth-requests": "sends the MCP access token on its requests to the authorization server too",
    "token-in-query": "sends the access token as the access_token query parameter, not the Authorization header",
    "ignores-challenge-scope": "asks for scopes_supported even when the 401 challenge names the scope",
    "unbounded-step-up": "steps up again on every 403 insufficient_scope, even for scopes already asked for",
    "openid-appended-before-inserted": "for an issuer with a path, asks the appended openid-configuration before the inserted one",
    "cimd-without-support": "uses its Client ID Metadata Document URL as the client id where the server does not advertise support",
    "ignores-cimd-support": "registers dynamically although the server accepts its Client ID Metadata Document",
    "guesses-register-endpoint": "posts to {origin}/register when the metadata names no registration_endpoint (the 2025-03-26 default, on every revision)",
    "registers-despite-client-id": "registers dynamically although a pre-registered client id is configured",
    "authorizes-after-refused-registration": "goes on to authorize with its client name as the client id when registration is refused",
    "issuer-from-origin-without-resource-metadata": "takes the MCP origin as the authorization server when no protected resource metadata exists (the 2025-03-26 rule, on every revision)",
    "skips-root-resource-metadata": "asks only the well-known URI at the endpoint's path for the protected resource metadata, never the root one",
    "treats-2025-06-18-as-2025-03-26": "authorizes by the 2025-03-26 rules on 2025-06-18 (no protected resource metadata)",
    "ignores-scopes-supported": "asks for the configured scopes where the protected resource metadata lists scopes_supported",
    "no-step-up": "hands a 403 insufficient_scope to the caller instead of stepping up",
    "retries-failed-flow": "runs the whole flow a second time when the first fails (a second authorization for one request)",
    "retries-token-on-5xx": "sends the token request a second time when the token endpoint answers 5xx (replaying a single-use code)",
    "ignores-state": "takes the code from a redirect whose state is not the one it sent",
    "accepts-missing-state": "verifies the redirect's state only when there is one (a redirect with no state is taken)",
}
#: The planted bug switched on (client.py sets it from --bug).
BUG: str | None = None


def bug(name: str) -> bool:
    assert name in BUGS, name
    return BUG == name


#: The redirect URI when the plan gives none: a loopback one, as a native client's.
DEFAULT_REDIRECT_URI = "http://127.0.0.1/callback"
CLIENT_NAME = "mcp-harness-reference"
#: Step-ups per connection ("Retry … no more than a few times").
MAX_STEP_UPS = 3
#: How much of an OAuth error body an error quotes.
BODY_QUOTE = 200
#: Bodies read from the authorization server are capped (a metadata document is small).
MAX_BODY = 1024 * 1024

#: The revisions' rule sets (docs/authorization.md "Per revision, in short").
BASE_2025_03 = "2025-03-26"  # no resource metadata; base URL metadata or default endpoints
RFC8414_ONLY = "2025-06-18"  # resource metadata; RFC 8414 only
CURRENT = "2025-11-25"  # both metadata forms, PKCE in the metadata, step-up


def rules_of(revision: str) -> str:
    if revision >= "2025-11-25":
        return CURRENT
    if revision >= "2025-06-18" and not bug("treats-2025-06-18-as-2025-03-26"):
        return RFC8414_ONLY
    return BASE_2025_03


class AuthorizationFailed(Exception):
    """The flow cannot go on; str() says why (never with a token, code or secret in it)."""


# ---------------------------------------------------------------------------------------
# WWW-Authenticate
# ---------------------------------------------------------------------------------------


def parse_challenge(header: str | None) -> dict[str, str]:
    """The parameters of the `Bearer` challenge in a `WWW-Authenticate` value (RFC 9110
    §11.6.1: several challenges may share the header; values are tokens or quoted strings
    with backslash escapes). Only `resource_metadata`, `scope` and `error` are kept."""
    out: dict[str, str] = {}
    if not header:
        return out
    s, i, n = header, 0, len(header)
    in_bearer = seen_bearer = False

    def token() -> str:
        nonlocal i
        start = i
        while i < n and s[i] not in ' \t,="':
            i += 1
        return s[start:i]

    while True:
        while i < n and s[i] in " \t,":
            i += 1
        name = token()
        if not name:
            break
        while i < n and s[i] in " \t":
            i += 1
        # `name=value`, unless the `=` is a token68's padding (`Basic dXNl==`).
        if i < n and s[i] == "=" and not (i + 1 >= n or s[i + 1] in "=, "):
            i += 1
            while i < n and s[i] in " \t":
                i += 1
            if i < n and s[i] == '"':
                i += 1
                chars = []
                while i < n and s[i] != '"':
                    if s[i] == "\\" and i + 1 < n:
                        i += 1
                    chars.append(s[i])
                    i += 1
                i += 1
                value = "".join(chars)
            else:
                value = token()
            if in_bearer and name.lower() in ("resource_metadata", "scope", "error"):
                out[name.lower()] = value
        else:
            in_bearer = name.lower() == "bearer" and not seen_bearer
            seen_bearer = seen_bearer or in_bearer
            while i < n and s[i] == "=":
                i += 1
    return out


def scopes_of(value: str | None) -> list[str]:
    return (value or "").split()


# ---------------------------------------------------------------------------------------
# URLs
# ---------------------------------------------------------------------------------------


def origin_of(url: str) -> str:
    u = urllib.parse.urlsplit(url)
    return f"{u.scheme.lower()}://{u.netloc.lower()}"


def canonical(endpoint: str) -> str:
    """The canonical URI of the MCP server (RFC 8707 §2; the pages' Canonical Server URI):
    lowercase scheme and host, no fragment, no trailing slash for an endpoint at the root."""
    u = urllib.parse.urlsplit(endpoint)
    path = u.path if u.path not in ("", "/") or u.query else ""
    return f"{origin_of(endpoint)}{path}" + (f"?{u.query}" if u.query else "")


def secure(url: str, what: str) -> str:
    """An authorization server URL: `https`, or `http` on a loopback host ("All
    authorization server endpoints MUST be served over HTTPS"; the loopback exception is
    this project's, whose mocks are plain HTTP on 127.0.0.1)."""
    u = urllib.parse.urlsplit(url)
    host = (u.hostname or "").lower()
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if u.scheme == "https" or (u.scheme == "http" and loopback):
        return url
    raise AuthorizationFailed(f"{what}: {origin_of(url)} is not https")


def resource_metadata_urls(endpoint: str) -> list[str]:
    """RFC 9728 §3.1 as the pages order it: at the endpoint's path, then at the root."""
    base = origin_of(endpoint)
    path = urllib.parse.urlsplit(endpoint).path.rstrip("/")
    urls = [f"{base}/.well-known/oauth-protected-resource{path}"] if path else []
    urls.append(f"{base}/.well-known/oauth-protected-resource")
    if path and bug("skips-root-resource-metadata"):
        urls.pop()
    if bug("resource-metadata-root-first"):
        urls.reverse()
    return urls


def server_metadata_urls(issuer: str, rules: str) -> list[str]:
    """The issuer's metadata URLs in the revision's order (RFC 8414 §3.1 path insertion;
    OpenID Connect Discovery insertion and appending from 2025-11-25 on)."""
    base = origin_of(issuer)
    path = urllib.parse.urlsplit(issuer).path.rstrip("/")
    if rules == BASE_2025_03:
        return [f"{base}/.well-known/oauth-authorization-server"]
    if rules == RFC8414_ONLY:
        return [f"{base}/.well-known/oauth-authorization-server{path}"]
    urls = [f"{base}/.well-known/oauth-authorization-server{path}", f"{base}/.well-known/openid-configuration{path}"]
    if path:
        urls.append(f"{base}{path}/.well-known/openid-configuration")
    if path and bug("openid-appended-before-inserted"):
        urls[1], urls[2] = urls[2], urls[1]
    if bug("openid-before-oauth-metadata"):
        urls[0], urls[1] = urls[1], urls[0]
    return urls


def with_query(url: str, pairs: list[tuple[str, str]]) -> str:
    u = urllib.parse.urlsplit(url)
    extra = urllib.parse.urlencode(pairs)
    return urllib.parse.urlunsplit((u.scheme, u.netloc, u.path, f"{u.query}&{extra}" if u.query else extra, u.fragment))


# ---------------------------------------------------------------------------------------
# The OAuth traffic's own HTTP: no redirects, no MCP headers, bounded
# ---------------------------------------------------------------------------------------


class Answered:
    def __init__(self, status: int, headers: http.client.HTTPMessage, body: bytes):
        self.status = status
        self.headers = headers
        self.text = body[:BODY_QUOTE * 4].decode("utf-8", errors="replace")[:BODY_QUOTE]
        try:
            self.json: Any = json.loads(body)
        except ValueError:
            self.json = None

    def field(self, name: str) -> str | None:
        value = self.json.get(name) if isinstance(self.json, dict) else None
        return value if isinstance(value, str) else None

    def describe(self) -> str:
        error, detail = self.field("error"), self.field("error_description")
        if error and detail:
            return f"HTTP {self.status}: {error} ({detail})"
        if error:
            return f"HTTP {self.status}: {error}"
        return f"HTTP {self.status}: {self.text}" if self.text else f"HTTP {self.status}"


class OAuthHttp:
    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        #: Planted bug `token-to-oauth-requests`: the MCP token these requests would carry.
        self.leaked_authorization: str | None = None

    def send(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> Answered:
        u = urllib.parse.urlsplit(url)
        cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
        conn = cls(u.hostname, u.port, timeout=self.timeout_s)
        target = (u.path or "/") + (f"?{u.query}" if u.query else "")
        headers = {"Accept": "application/json", **headers}
        if self.leaked_authorization and bug("token-to-oauth-requests"):
            headers["Authorization"] = self.leaked_authorization
        try:
            conn.request(method, target, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read(MAX_BODY + 1)
            return Answered(resp.status, resp.headers, data[:MAX_BODY])
        except TimeoutError:
            raise AuthorizationFailed(f"{origin_of(url)}{u.path}: timed out") from None
        except (OSError, http.client.HTTPException) as e:
            raise AuthorizationFailed(f"{origin_of(url)}{u.path}: could not connect ({type(e).__name__})") from None
        finally:
            conn.close()

    def get_json(self, url: str, protocol_version: str | None = None) -> dict[str, Any] | None:
        """A metadata document: the object of a 2xx, None for a 4xx (try the next URL),
        failure for anything else."""
        headers = {"MCP-Protocol-Version": protocol_version} if protocol_version else {}
        answer = self.send("GET", url, headers, None)
        if 200 <= answer.status < 300:
            if not isinstance(answer.json, dict):
                raise AuthorizationFailed(f"{url} answered a body that is not a JSON object")
            return answer.json
        if 400 <= answer.status < 500:
            return None
        raise AuthorizationFailed(f"{url} answered {answer.describe()}")

    def post_form(self, url: str, pairs: list[tuple[str, str]]) -> Answered:
        body = urllib.parse.urlencode(pairs).encode("ascii")
        return self.send("POST", url, {"Content-Type": "application/x-www-form-urlencoded"}, body)

    def post_json(self, url: str, doc: dict[str, Any]) -> Answered:
        return self.send("POST", url, {"Content-Type": "application/json"}, json.dumps(doc).encode("utf-8"))


# ---------------------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------------------


def strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def protected_resource(web: OAuthHttp, endpoint: str, from_challenge: str | None) -> tuple[str, list[str]]:
    """The authorization server (issuer) and `scopes_supported` from the validated
    protected resource metadata."""
    urls = [from_challenge] if from_challenge else resource_metadata_urls(endpoint)
    for url in urls:
        if not urllib.parse.urlsplit(url).scheme:
            raise AuthorizationFailed(f"the 401's resource_metadata {json.dumps(url)} is not a URL")
        doc = web.get_json(url)
        if doc is None:
            continue
        resource = doc.get("resource") if isinstance(doc.get("resource"), str) else ""
        here = canonical(endpoint)
        if resource not in (here, endpoint) and not bug("skips-resource-check"):
            raise AuthorizationFailed(f"the protected resource metadata names resource {json.dumps(resource)}, not {here}")
        servers = strings(doc.get("authorization_servers"))
        if not servers:
            raise AuthorizationFailed("the protected resource metadata lists no authorization_servers")
        return servers[0], strings(doc.get("scopes_supported"))
    if bug("issuer-from-origin-without-resource-metadata"):
        return origin_of(endpoint), []
    raise AuthorizationFailed(f"no protected resource metadata (tried {', '.join(urls)})")


class ServerMetadata:
    def __init__(self, issuer: str, authorization: str, token: str, registration: str | None,
                 metadata_documents: bool = False, iss_parameter: bool = False):
        self.issuer = issuer
        self.authorization_endpoint = authorization
        self.token_endpoint = token
        self.registration_endpoint = registration
        self.client_id_metadata_documents = metadata_documents
        self.iss_parameter = iss_parameter


def authorization_server(web: OAuthHttp, issuer: str, rules: str, endpoint: str) -> ServerMetadata:
    version = BASE_2025_03 if rules == BASE_2025_03 else None
    urls = server_metadata_urls(issuer, rules)
    for url in urls:
        doc = web.get_json(url, version)
        if doc is not None:
            return validate_server(doc, issuer, rules)
    if rules == BASE_2025_03 and not bug("no-default-endpoints"):
        # "clients MUST use the following default endpoint paths relative to the
        # authorization base URL" (2025-03-26, Fallbacks for Servers without Metadata Discovery).
        base = origin_of(endpoint)
        return ServerMetadata(base, secure(f"{base}/authorize", "authorize"), secure(f"{base}/token", "token"),
                              secure(f"{base}/register", "register"))
    raise AuthorizationFailed(f"no authorization server metadata (tried {', '.join(urls)})")


def validate_server(doc: dict[str, Any], issuer: str, rules: str) -> ServerMetadata:
    claimed = doc.get("issuer") if isinstance(doc.get("issuer"), str) else ""
    if claimed != issuer and not bug("skips-issuer-check"):
        raise AuthorizationFailed(f"the authorization server metadata claims issuer {json.dumps(claimed)}, not {json.dumps(issuer)}")
    methods = strings(doc.get("code_challenge_methods_supported")) if "code_challenge_methods_supported" in doc else None
    if methods is None and rules == CURRENT and not bug("ignores-pkce-support"):
        raise AuthorizationFailed(
            "the authorization server metadata has no code_challenge_methods_supported: "
            "PKCE is not supported, so the client refuses to proceed"
        )
    if methods is not None and "S256" not in methods:
        raise AuthorizationFailed(f"the authorization server does not support PKCE S256 (code_challenge_methods_supported: {methods})")

    def endpoint(name: str) -> str | None:
        value = doc.get(name)
        return secure(value, name) if isinstance(value, str) else None

    authorization, token = endpoint("authorization_endpoint"), endpoint("token_endpoint")
    if authorization is None:
        raise AuthorizationFailed("the authorization server metadata has no authorization_endpoint")
    if token is None:
        raise AuthorizationFailed("the authorization server metadata has no token_endpoint")
    return ServerMetadata(
        issuer, authorization, token, endpoint("registration_endpoint"),
        doc.get("client_id_metadata_document_supported") is True,
        doc.get("authorization_response_iss_parameter_supported") is True,
    )


# ---------------------------------------------------------------------------------------
# Registration, PKCE, the redirect, the token endpoint
# ---------------------------------------------------------------------------------------


class Registration:
    def __init__(self, client_id: str, client_secret: str | None = None):
        self.client_id = client_id
        self.client_secret = client_secret


def register(web: OAuthHttp, settings: dict[str, Any], redirect_uri: str, server: ServerMetadata) -> Registration:
    """The pages' priority: pre-registered, then a Client ID Metadata Document the server
    accepts, then dynamic registration."""
    if settings.get("client_id") and not bug("registers-despite-client-id"):
        return Registration(settings["client_id"], settings.get("client_secret"))
    cimd_accepted = server.client_id_metadata_documents and not bug("ignores-cimd-support") or bug("cimd-without-support")
    if settings.get("client_metadata_url") and cimd_accepted:
        return Registration(settings["client_metadata_url"])
    registration_endpoint = server.registration_endpoint
    if registration_endpoint is None and bug("guesses-register-endpoint"):
        registration_endpoint = f"{origin_of(server.authorization_endpoint)}/register"
    if registration_endpoint is None:
        raise AuthorizationFailed("no client id: the authorization server offers no registration and none is configured")
    answer = web.post_json(registration_endpoint, {
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    })
    if not 200 <= answer.status < 300 and bug("authorizes-after-refused-registration"):
        return Registration(CLIENT_NAME)
    if not 200 <= answer.status < 300:
        raise AuthorizationFailed(f"dynamic client registration refused: {answer.describe()}")
    client_id = answer.field("client_id")
    if not client_id:
        raise AuthorizationFailed("dynamic client registration answered no client_id")
    return Registration(client_id, answer.field("client_secret"))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def pkce_pair() -> tuple[str, str, str]:
    """(verifier, challenge, method): a fresh 32-byte verifier (43 characters) and its S256
    challenge (RFC 7636 §4.1–4.2)."""
    verifier = b64url(secrets.token_bytes(32))
    if bug("pkce-plain"):
        return verifier, verifier, "plain"
    return verifier, b64url(hashlib.sha256(verifier.encode("ascii")).digest()), "S256"


def follow_redirect(url: str, timeout_s: float) -> str:
    """The user-interaction step, headless: the authorization endpoint of the mock
    redirects at once, so its `Location` is where a browser would have gone."""
    u = urllib.parse.urlsplit(url)
    cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
    conn = cls(u.hostname, u.port, timeout=timeout_s)
    try:
        conn.request("GET", (u.path or "/") + (f"?{u.query}" if u.query else ""))
        resp = conn.getresponse()
        resp.read(MAX_BODY)
        location = resp.getheader("Location")
    except (OSError, http.client.HTTPException) as e:
        raise AuthorizationFailed(f"the authorization endpoint could not be reached ({type(e).__name__})") from None
    finally:
        conn.close()
    if 300 <= resp.status < 400 and location:
        return urllib.parse.urljoin(url, location)
    raise AuthorizationFailed(f"the authorization endpoint answered HTTP {resp.status} instead of redirecting")


def code_from(redirect: str, redirect_uri: str, state: str, issuer: str, iss_required: bool) -> str:
    """The code of the authorization response, once it is shown to be ours: the registered
    redirect URI, the issuer's `iss` (RFC 9207 §2.4, checked before anything else in it is
    acted on), our `state`."""
    got, want = urllib.parse.urlsplit(redirect), urllib.parse.urlsplit(redirect_uri)
    if origin_of(redirect) != origin_of(redirect_uri) or (got.path or "/") != (want.path or "/"):
        raise AuthorizationFailed(
            f"the authorization server redirected to {origin_of(redirect)}{got.path}, not to the registered redirect_uri"
        )
    params = dict(urllib.parse.parse_qsl(got.query, keep_blank_values=True))
    iss = params.get("iss")
    if iss is not None and iss != issuer:
        raise AuthorizationFailed(f"the redirect's iss {json.dumps(iss)} is not the issuer {json.dumps(issuer)} (RFC 9207): ignored")
    if iss is None and iss_required:
        raise AuthorizationFailed("the redirect has no iss, which the authorization server's metadata promises (RFC 9207)")
    if "error" in params:
        detail = f" ({params['error_description']})" if "error_description" in params else ""
        raise AuthorizationFailed(f"the authorization server refused: {params['error']}{detail}")
    returned = params.get("state")
    if returned is None and bug("accepts-missing-state"):
        returned = state
    if returned != state and not bug("ignores-state"):
        raise AuthorizationFailed("the redirect's state is not the one sent: the answer is discarded")
    if not params.get("code"):
        raise AuthorizationFailed("the redirect carries no code")
    return params["code"]


class Tokens:
    def __init__(self, access: str, refresh: str | None):
        self.access = access
        self.refresh = refresh

    def __repr__(self) -> str:  # never the tokens themselves
        return f"Tokens(refresh={self.refresh is not None})"


def token_request(web: OAuthHttp, endpoint: str, client: Registration, resource: str | None,
                  grant: list[tuple[str, str]], what: str) -> Tokens:
    pairs = list(grant) + [("client_id", client.client_id)]
    if client.client_secret:
        pairs.append(("client_secret", client.client_secret))
    if resource is not None:
        pairs.append(("resource", resource))
    try:
        answer = web.post_form(endpoint, pairs)
    except AuthorizationFailed as e:
        raise AuthorizationFailed(f"{what} failed: {e}") from None
    if answer.status >= 500 and bug("retries-token-on-5xx"):
        answer = web.post_form(endpoint, pairs)
    if not 200 <= answer.status < 300:
        raise AuthorizationFailed(f"{what} was refused: {answer.describe()}")
    if not isinstance(answer.json, dict):
        raise AuthorizationFailed(f"{what} answered a body that is not JSON")
    kind = answer.field("token_type") or ""
    if kind.lower() != "bearer":
        raise AuthorizationFailed(f"{what} answered token_type {json.dumps(kind)}, not Bearer")
    access = answer.field("access_token")
    if not access:
        raise AuthorizationFailed(f"{what} answered no access_token")
    return Tokens(access, answer.field("refresh_token"))


# ---------------------------------------------------------------------------------------
# One connection's authorization client
# ---------------------------------------------------------------------------------------


class Authorizer:
    """What one connection obtained and the decisions on its 401s and 403s. One flow at a
    time: a request that met a 401 while another's flow ran takes that flow's token."""

    def __init__(self, settings: dict[str, Any], endpoint: str, revision: str, timeout_s: float):
        self.settings = settings
        self.endpoint = endpoint
        self.resource = canonical(endpoint)
        self.rules = rules_of(revision)
        self.timeout_s = timeout_s
        self.redirect_uri = settings.get("redirect_uri") or DEFAULT_REDIRECT_URI
        self.web = OAuthHttp(timeout_s)
        self.lock = threading.Lock()
        self.tokens: Tokens | None = None
        self.server: ServerMetadata | None = None
        self.client: Registration | None = None
        #: Registrations by issuer: a client id is never used at another server.
        self.registrations: dict[str, Registration] = {}
        #: The scopes asked for so far.
        self.requested: set[str] = set()
        self.step_ups = 0

    def current(self) -> str | None:
        """The `Authorization` value of the token held, if any."""
        tokens = self.tokens
        return f"Bearer {tokens.access}" if tokens else None

    def respond(self, status: int, www_authenticate: str | None, sent: str | None) -> str | None:
        """What to re-send a request answered `status` with: a new `Authorization` value, or
        None to hand the answer to the caller. Raises AuthorizationFailed."""
        with self.lock:
            held = self.current()
            if held is not None and held != sent:
                return held
            challenge = parse_challenge(www_authenticate)
            self.web.leaked_authorization = held
            if status == 401:
                fresh = self.refresh()
                if fresh is not None:
                    return fresh
                try:
                    return self.flow(challenge, None)
                except AuthorizationFailed:
                    if not bug("retries-failed-flow"):
                        raise
                    return self.flow(challenge, None)
            if status == 403 and challenge.get("error") == "insufficient_scope" and self.rules == CURRENT:
                if bug("no-step-up"):
                    return None
                asked = set(scopes_of(challenge.get("scope")))
                already = asked <= self.requested or self.step_ups >= MAX_STEP_UPS
                if already and not bug("unbounded-step-up"):
                    return None
                self.step_ups += 1
                return self.flow(challenge, self.requested | asked)
            return None

    def refresh(self) -> str | None:
        """Refreshes the held token; None when there is nothing to refresh with or the server
        refused (then the tokens are dropped and the whole flow runs again)."""
        tokens, server, client = self.tokens, self.server, self.client
        if tokens is None or server is None or client is None or not tokens.refresh:
            self.tokens = None
            return None
        grant = [("grant_type", "refresh_token"), ("refresh_token", tokens.refresh)]
        if self.requested:
            grant.append(("scope", " ".join(sorted(self.requested))))
        resource = None if bug("refresh-without-resource") or bug("no-resource-parameter") else self.resource
        try:
            new = token_request(self.web, server.token_endpoint, client, resource, grant, "the refresh request")
        except AuthorizationFailed:
            self.tokens = None
            return None
        # A rotated refresh token replaces the old one, which is never sent again.
        keep = tokens.refresh if bug("keeps-rotated-refresh-token") else (new.refresh or tokens.refresh)
        self.tokens = Tokens(new.access, keep)
        return self.current()

    def flow(self, challenge: dict[str, str], wanted: set[str] | None) -> str:
        """The whole flow; `wanted` set for a step-up."""
        if self.rules == BASE_2025_03:
            issuer, scopes_supported = origin_of(self.endpoint), []
        else:
            issuer, scopes_supported = protected_resource(self.web, self.endpoint, challenge.get("resource_metadata"))
        server = authorization_server(self.web, issuer, self.rules, self.endpoint)
        client = self.registrations.get(server.issuer)
        if client is None:
            client = register(self.web, self.settings, self.redirect_uri, server)
            self.registrations[server.issuer] = client
        from_challenge = scopes_of(challenge.get("scope"))
        if wanted is not None:
            scopes = set(wanted)
        elif from_challenge and not bug("ignores-challenge-scope"):
            scopes = set(from_challenge)
        elif scopes_supported and not bug("ignores-scopes-supported"):
            scopes = set(scopes_supported)
        else:
            scopes = set(from_challenge or self.settings.get("scopes") or [])
        verifier, code_challenge, method = pkce_pair()
        state = b64url(secrets.token_bytes(16))
        query = [("response_type", "code"), ("client_id", client.client_id), ("redirect_uri", self.redirect_uri),
                 ("code_challenge", code_challenge), ("code_challenge_method", method), ("state", state)]
        if scopes:
            query.append(("scope", " ".join(sorted(scopes))))
        resource = None if bug("no-resource-parameter") else self.resource
        if resource is not None:
            query.append(("resource", resource))
        redirect = follow_redirect(with_query(server.authorization_endpoint, query), self.timeout_s)
        code = code_from(redirect, self.redirect_uri, state, server.issuer, server.iss_parameter)
        grant = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", self.redirect_uri),
                 ("code_verifier", verifier)]
        self.tokens = token_request(self.web, server.token_endpoint, client, resource, grant, "the token request")
        self.requested, self.server, self.client = scopes, server, client
        return f"Bearer {self.tokens.access}"
