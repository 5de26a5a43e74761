"""`connect.oauth` for the Python driver (driver.py, mcp 1.x and 2.x): the application's half of
the SDK's OAuth client, `mcp.client.auth.OAuthClientProvider`.

The SDK runs the whole flow inside its httpx Auth (discovery, registration, PKCE, the token and
refresh requests, step-up, and the re-send of the request that met the 401); the application
gives it a `TokenStorage` and the user-interaction step as two callbacks: `redirect_handler(url)`
(send the user to the authorization URL) and `callback_handler()` (what reached the redirect
URI). Here that step is headless: the authorization URL is fetched without following redirects
and its `Location` is taken as the browser's landing on the redirect URI (the project's mock
authorization server redirects at once). The SDK checks `state` itself (and on 2.x `iss`).

The plan's fields map onto the provider: `client_id`/`client_secret` → client information in
the storage before the flow (pre-registered: the SDK then does not register), `client_metadata_url`
→ the provider's `client_metadata_url`, `scopes` → `client_metadata.scope` (the SDK's fallback when
neither the challenge nor the resource metadata names scopes), `redirect_uri` → the client
metadata's `redirect_uris`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

#: The redirect URI when the plan names none: a loopback one, as a native application's.
DEFAULT_REDIRECT_URI = "http://127.0.0.1/callback"

#: The `OAuth` fields of the contract (clients/CONTRACT.md) the driver maps.
OAUTH_FIELDS = ("client_id", "client_secret", "client_metadata_url", "scopes", "redirect_uri")

#: How long the headless user step may take when the plan's connect sets no timeout (seconds).
DEFAULT_USER_STEP_S = 10.0


def check_plan(oauth: Any, unsupported: type[Exception]) -> None:
    """Only the contract's fields, with their types: a field this code does not know is
    refused rather than ignored."""
    if not isinstance(oauth, dict):
        raise unsupported(f"connect.oauth must be an object, not {oauth!r}")
    unknown = sorted(k for k in oauth if k not in OAUTH_FIELDS)
    if unknown:
        raise unsupported(f"this driver does not apply connect.oauth field(s) {', '.join(unknown)}")
    scopes = oauth.get("scopes")
    if scopes is not None and not (isinstance(scopes, list) and all(isinstance(s, str) for s in scopes)):
        raise unsupported("connect.oauth.scopes must be an array of strings")


def _landing(url: str) -> str:
    """`url` without query and fragment: what a redirect must land on to reach the redirect URI."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


class MemoryStorage:
    """The SDK's `TokenStorage`, in memory for one plan."""

    def __init__(self, client_info: Any = None) -> None:
        self.tokens: Any = None
        self.client_info = client_info

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


class HeadlessUserStep:
    """`redirect_handler` and `callback_handler` without a person: the redirect handler GETs the
    authorization URL (no redirect followed, bounded) and keeps where the authorization server
    sent the browser; the callback handler answers that landing's query. A redirect elsewhere
    than the redirect URI never reaches the application's callback, and an answer that is no
    redirect leaves the user on a page: both end the flow with the reason."""

    def __init__(self, httpx: Any, redirect_uri: str, timeout_s: float, make_result: Any) -> None:
        self.httpx = httpx
        self.redirect_uri = redirect_uri
        self.timeout_s = timeout_s
        #: Builds the SDK's callback answer from the landing's query parameters.
        self.make_result = make_result
        self.landed: dict[str, str] | None = None

    async def redirect_handler(self, authorization_url: str) -> None:
        self.landed = None
        async with self.httpx.AsyncClient(follow_redirects=False, timeout=self.timeout_s) as client:
            try:
                response = await client.get(authorization_url)
            except self.httpx.HTTPError as e:
                raise RuntimeError(f"the authorization endpoint could not be reached: {type(e).__name__}: {e}") from None
        location = response.headers.get("location")
        if not (300 <= response.status_code < 400) or location is None:
            raise RuntimeError(f"the authorization endpoint answered HTTP {response.status_code} instead of redirecting")
        target = urljoin(authorization_url, location)
        if _landing(target) != _landing(self.redirect_uri):
            raise RuntimeError(f"the authorization server redirected to {_landing(target)}, not to the redirect URI {self.redirect_uri}")
        self.landed = {k: v[0] for k, v in parse_qs(urlsplit(target).query, keep_blank_values=True).items()}

    async def callback_handler(self) -> Any:
        landed, self.landed = self.landed, None
        if landed is None:
            raise RuntimeError("nothing reached the redirect URI")
        if "code" not in landed:
            error = landed.get("error")
            raise RuntimeError(f"the authorization server redirected with {'no code' if error is None else f'error {error}'}")
        return self.make_result(landed)


def make_provider(oauth: dict[str, Any], server_url: str, httpx: Any, sdk_major: int, timeout_ms: int | None) -> Any:
    """The SDK's `OAuthClientProvider` for the plan's `connect.oauth` (an httpx Auth for the
    transports' `auth=`)."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    redirect_uri = oauth.get("redirect_uri") or DEFAULT_REDIRECT_URI
    scopes = oauth.get("scopes") or []
    secret = oauth.get("client_secret")
    metadata = OAuthClientMetadata(
        client_name="mcp-harness-driver",
        redirect_uris=[redirect_uri],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_post" if secret is not None else "none",
        scope=" ".join(scopes) or None,
    )
    registered = None
    if oauth.get("client_id") is not None:
        registered = OAuthClientInformationFull(
            client_id=oauth["client_id"], client_secret=secret, **metadata.model_dump(exclude_none=True)
        )
    if sdk_major >= 2:
        from mcp.shared.auth import AuthorizationCodeResult

        def make_result(landed: dict[str, str]) -> Any:
            # The whole answer: the SDK checks `state` and validates `iss` (RFC 9207) itself.
            return AuthorizationCodeResult(code=landed["code"], state=landed.get("state"), iss=landed.get("iss"))
    else:

        def make_result(landed: dict[str, str]) -> Any:
            # 1.x takes (code, state); it has no place for `iss`.
            return landed["code"], landed.get("state")

    timeout_s = timeout_ms / 1000 if timeout_ms else DEFAULT_USER_STEP_S
    step = HeadlessUserStep(httpx, redirect_uri, timeout_s, make_result)
    return OAuthClientProvider(
        server_url=server_url,
        client_metadata=metadata,
        storage=MemoryStorage(registered),
        redirect_handler=step.redirect_handler,
        callback_handler=step.callback_handler,
        client_metadata_url=oauth.get("client_metadata_url"),
    )
