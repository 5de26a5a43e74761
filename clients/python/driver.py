"""mcp-harness driver for the Python MCP SDK (the `mcp` package; 1.x and 2.x).

Runs the client plan from MCP_HARNESS_PLAN and prints one JSON line per step on stdout, as
clients/README.md specifies. One file serves both pinned lines (clients/python/requirements-*.txt)
because the calls an application makes are nearly the same; where the two differ (timeouts
as timedelta vs float seconds, typed vs generic requests) the driver asks which one it runs.

The driver translates plan ops into what an application would call (ClientSession.list_tools,
call_tool, send_request, an anyio cancel scope for cancellation) and reports the SDK's own
error text. It never works around the SDK: an op the SDK cannot express is reported
`unsupported` with the reason, and the plan stops there.

Revisions from 2026-07-28 on (mcp 2.x only) go through `mcp.client.Client`, the SDK's
application-level client for the stateless revision: connecting runs its `mode="auto"`
negotiation (a `server/discover` probe, the legacy handshake only as its fallback), and
requests use its calls (`call_tool`, `get_prompt`, `read_resource` drive `input_required`
rounds; `listen` opens `subscriptions/listen`). Older revisions keep `ClientSession` with the
initialize handshake.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import json
import os
import sys
import time
from datetime import timedelta
from importlib.metadata import version as package_version
from collections.abc import Awaitable, Callable
from typing import Any

# clients/cmd_contract.py, the contract's inputs shared by the Python drivers (the reference
# client runs with -I, so the folder is put on the path by hand).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cmd_contract  # noqa: E402
import headless_oauth  # noqa: E402

import anyio
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

SDK_VERSION = package_version("mcp")
SDK_MAJOR = int(SDK_VERSION.split(".")[0])
if SDK_MAJOR >= 2:
    import httpx2 as httpx
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client as http_client
    from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY, event_to_notification
    from mcp_types.version import LATEST_MODERN_VERSION
    from mcp_types.version import LATEST_HANDSHAKE_VERSION as INITIALIZE_VERSION
    INITIALIZE_VERSION_NAME = "LATEST_HANDSHAKE_VERSION"
else:
    import httpx
    from mcp.client.streamable_http import streamablehttp_client as http_client
    from mcp.types import LATEST_PROTOCOL_VERSION as INITIALIZE_VERSION
    INITIALIZE_VERSION_NAME = "mcp.types.LATEST_PROTOCOL_VERSION"

from pydantic import TypeAdapter  # noqa: E402  (after the version switch on purpose)

#: How long a step after the first, and a close, wait for the SDK's own notification POSTs to
#: be answered (clients/README.md, "Notifications an SDK POSTs on its own").
SETTLE_S = 0.3

#: The TLS context of every httpx client the driver makes, built once per process (in the
#: persistent mode, once in the parent that forks each plan's child). httpx builds the same
#: context for each client it is not given one, loading the CA bundle again: 30-40 ms of CPU,
#: the largest single cost of an HTTP plan once the interpreter is warm.
_TLS_CONTEXT: Any = None


def tls_context() -> Any:
    global _TLS_CONTEXT
    if _TLS_CONTEXT is None:
        _TLS_CONTEXT = httpx.create_ssl_context()
    return _TLS_CONTEXT


class RefreshOnDenied(httpx.Auth):
    """`connect.auth_refresh` as an application hands the SDK its auth hook (the transports'
    `auth=`, an httpx Auth): asked once on a 401 or 403; when it returns headers the request is
    re-sent once with them and later requests carry them too; `{}` returns nothing, so the
    401/403 goes to the caller."""

    def __init__(self, refreshed: dict[str, str]) -> None:
        self.refreshed = refreshed
        self.current: dict[str, str] = {}

    def auth_flow(self, request: Any) -> Any:
        request.headers.update(self.current)
        response = yield request
        if response.status_code in (401, 403) and self.refreshed:
            self.current = dict(self.refreshed)
            request.headers.update(self.current)
            yield request


def sdk_http_client(headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
    """The client of the SDK's `create_mcp_http_client` (mcp.shared._httpx_utils): its default
    timeouts, the caller's headers and auth, and the default TLS verification, given as the
    process's one context instead of built anew (`tls_context`)."""
    if timeout is None:
        timeout = httpx.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    kwargs: dict[str, Any] = {"timeout": timeout, "verify": tls_context()}
    if headers is not None:
        kwargs["headers"] = headers
    if auth is not None:
        kwargs["auth"] = auth
    return httpx.AsyncClient(**kwargs)


def warm() -> None:
    """Loads, once in the persistent parent, what each forked child would otherwise load again
    on first use: anyio's asyncio backend and stream modules (imported when a loop starts, a
    process is spawned or a socket opened), through one client the HTTP stack under httpx and
    the TLS context, and on 2.x the request and notification adapters. A child then pays only
    for its own plan."""
    for name in ("anyio._backends._asyncio", "anyio._core._sockets", "anyio._core._subprocesses", "anyio.streams.stapled", "anyio.streams.tls"):
        importlib.import_module(name)
    sdk_http_client()
    if SDK_MAJOR >= 2:
        adapter(types.ClientRequest)
        adapter(types.ClientNotification)
    # What is loaded now lives as long as the process: kept out of the collector's scans, a
    # child's collections walk only its own plan's objects (and do not write to, so copy,
    # the parent's pages).
    gc.freeze()


def only_notifications(body: bytes) -> bool:
    """A JSON-RPC body that holds notifications only (messages with a method and no id)."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return False
    messages = parsed if isinstance(parsed, list) else [parsed]
    return bool(messages) and all(isinstance(m, dict) and "method" in m and "id" not in m for m in messages)


class NotificationPosts:
    """The SDK's notification POSTs not answered yet. The SDK hands a notification to its
    transport's writer task and returns at once (notifications/cancelled after a cancel or a
    timeout, notifications/initialized); the POST follows later, so the plan's next step (or
    its close, the DELETE) raced it and the server saw the two in either order. Counted up as
    a notification enters the transport's write stream, down as an HTTP request carrying only
    notifications ends, answered or not."""

    def __init__(self) -> None:
        self.pending = 0
        self.idle = anyio.Event()
        self.idle.set()

    def up(self) -> None:
        self.pending += 1
        if self.idle.is_set():
            self.idle = anyio.Event()

    def down(self) -> None:
        self.pending = max(0, self.pending - 1)
        if self.pending == 0:
            self.idle.set()

    async def settle(self) -> None:
        with anyio.move_on_after(SETTLE_S):
            await self.idle.wait()


class CountingWriteStream:
    """The transport's write stream, counting the notifications the SDK sends through it."""

    def __init__(self, inner: Any, posts: NotificationPosts) -> None:
        self.inner = inner
        self.posts = posts

    async def send(self, item: Any) -> None:
        message = getattr(item, "message", item)
        root = getattr(message, "root", message)
        if getattr(root, "method", None) is not None and getattr(root, "id", None) is None:
            self.posts.up()
        await self.inner.send(item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def __aenter__(self) -> "CountingWriteStream":
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.inner.__aexit__(*exc)


class CountingTransport:
    """An httpx transport that counts down each notification-only POST as it ends."""

    def __init__(self, inner: Any, posts: NotificationPosts) -> None:
        self.inner = inner
        self.posts = posts

    async def handle_async_request(self, request: Any) -> Any:
        try:
            body = request.content
        except Exception:  # a streamed body not read yet (a redirected POST re-sends it)
            body = b""
        counted = request.method == "POST" and only_notifications(body)
        try:
            return await self.inner.handle_async_request(request)
        finally:
            if counted:
                self.posts.down()

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

RESULT_TYPES: dict[str, Any] = {
    "ping": types.EmptyResult,
    "tools/list": types.ListToolsResult,
    "tools/call": types.CallToolResult,
    "resources/list": types.ListResourcesResult,
    "prompts/list": types.ListPromptsResult,
    # The generic types.Result of mcp 2.x drops every member it does not declare, so a method
    # without its own result type here would be reported as `{}`.
    "resources/read": types.ReadResourceResult,
    "resources/templates/list": types.ListResourceTemplatesResult,
    "prompts/get": types.GetPromptResult,
}
if SDK_MAJOR >= 2:
    RESULT_TYPES["server/discover"] = types.DiscoverResult



class Unsupported(Exception):
    """A plan op the SDK cannot express."""


class DriverError(RuntimeError):
    """A step the driver ends itself, never the SDK (reported with `"by": "driver"`)."""


#: The plan fields this driver applies, per op. A step carrying any other field is
#: unsupported (never silently run without it): a field added to the plan later reaches this
#: driver as an unknown key until someone maps it onto the SDK.
IMPLEMENTED: dict[str, set[str]] = {
    # Listed but refused with their own reason: oauth over stdio or beside auth_refresh, managed, reset_timeout_on_progress,
    # max_total_timeout_ms, new_session, and the op abandon.
    "connect": {"handshake", "timeout_ms", "env", "max_message_bytes", "string_ids", "roots", "headers", "auth_refresh", "managed", "protocol_version", "legacy_fallback", "oauth"},
    "request": {"method", "params", "timeout_ms", "background", "as", "pad_params", "reset_timeout_on_progress", "max_total_timeout_ms", "new_session"},
    "await": {"request"},
    "cancel": {"request"},
    "abandon": {"request"},
    "notify": {"method", "params", "pad_params"},
    **cmd_contract.WAIT_OPS,
    "close": set(),
}


def require_params_kept(method: str, params: dict[str, Any] | None, model: Any) -> None:
    """The SDK's typed request must carry every params field the plan gave; pydantic drops
    unknown fields silently, which would run the step without them."""
    if not params:
        return
    dumped = model.model_dump(by_alias=True, mode="json", exclude_none=True) if hasattr(model, "model_dump") else {}
    dumped = dumped.get("params", dumped) if isinstance(dumped, dict) else {}
    lost = sorted(k for k in params if k not in (dumped or {}))
    if lost:
        raise Unsupported(f"the SDK's typed {method} request drops params field(s) {', '.join(lost)}")


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def failed(step: int, error: BaseException, elapsed_ms: int) -> dict[str, Any]:
    """The line of a failed step; one the driver ended itself says so (`"by": "driver"`)."""
    line: dict[str, Any] = {"step": step, "ok": False, "error": error_text(error), "elapsed_ms": elapsed_ms}
    if isinstance(error, DriverError):
        line["by"] = "driver"
    return line


def leaf_errors(e: BaseException) -> list[BaseException]:
    """The errors in `e`, exception groups flattened."""
    if isinstance(e, BaseExceptionGroup):
        return [leaf for x in e.exceptions for leaf in leaf_errors(x)]
    return [e]


def error_text(e: BaseException) -> str:
    text = str(e)
    if isinstance(e, BaseExceptionGroup):
        text = "; ".join(error_text(x) for x in e.exceptions)
    return text or type(e).__name__


def dump(model: Any) -> Any:
    if hasattr(model, "model_dump"):
        return model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return model


def timeout_arg(ms: int | None) -> Any:
    """A per-request timeout in the form this SDK line takes (None: the session default)."""
    if ms is None:
        return None
    seconds = None if ms == 0 else ms / 1000
    if SDK_MAJOR >= 2 or seconds is None:
        return seconds
    return timedelta(seconds=seconds)


@functools.cache
def adapter(union: Any) -> Any:
    """One pydantic TypeAdapter per union (building one costs ~10 ms; `warm` builds them before
    the persistent mode forks)."""
    return TypeAdapter(union)


def typed(kind: str, data: dict[str, Any]) -> Any:
    """Builds a typed ClientRequest / ClientNotification, or says the SDK has no such type."""
    union = types.ClientRequest if kind == "request" else types.ClientNotification
    try:
        if SDK_MAJOR >= 2:
            built = adapter(union).validate_python(data)
        else:
            built = union.model_validate(data)
    except Exception:
        if SDK_MAJOR >= 2 and kind == "request":
            return types.Request(method=data["method"], params=data.get("params"))
        raise Unsupported(
            f"ClientSession (mcp {SDK_VERSION}) sends only the {kind} types of mcp.types.Client{kind.title()}; "
            f"{data['method']} with these params is not one"
        ) from None
    require_params_kept(data["method"], data.get("params"), getattr(built, "root", built))
    return built


class Driver:
    def __init__(self, plan: list[dict[str, Any]], transport: str, server_command: list[str], url: str | None):
        self.plan = plan
        self.transport = transport
        self.server_command = server_command
        self.url = url
        self.stack = contextlib.AsyncExitStack()
        self.session: ClientSession | None = None
        #: The 2026-07-28 connection (`Client`); None on the handshake revisions.
        self.client: Any = None
        self.closed = False
        self.notifications: list[str] = []
        self.notified = anyio.Event()
        self.background: dict[str, dict[str, Any]] = {}
        self.task_group: Any = None
        self.headers: dict[str, str] = {}
        #: `connect.auth_refresh` or `connect.oauth` (the SDK's OAuthClientProvider) as the
        #: transports' httpx Auth.
        self.auth: Any = None
        self.max_message_bytes: int | None = None
        self.posts = NotificationPosts()

    def own(self, client: Any) -> Any:
        """Closes an httpx client the driver made when the session stack closes."""
        self.stack.push_async_callback(client.aclose)
        return client

    async def on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            emit({"report": error_text(message)})
            return
        n = getattr(message, "root", message)
        method = getattr(n, "method", None)
        if method is None:
            return
        params = dump(getattr(n, "params", None)) or {}
        if self.client is not None and SUBSCRIPTION_ID_META_KEY in (params.get("_meta") or {}):
            # A subscriptions/listen frame: the application sees what its Subscription
            # delivers (correlated by subscription id), reported by `listen_call`, not this raw tee.
            return
        self.report_notification(method, params)

    def report_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notifications.append(method)
        emit({"notification": {"method": method, "params": params}})
        self.notified.set()
        self.notified = anyio.Event()

    def counted(self, client: Any) -> Any:
        """An httpx client of the SDK's whose notification POSTs are counted down."""
        client._transport = CountingTransport(client._transport, self.posts)
        return client

    def client_factory(self, **kwargs: Any) -> Any:
        """The SDK's own httpx client factory, counted (the 1.x transports take a factory)."""
        return self.counted(sdk_http_client(**kwargs))

    def transport_cm(self) -> Any:
        """The SDK transport; over HTTP its write stream counts notifications (over stdio
        nothing is POSTed, and the SDK's own context manager is used as it is)."""
        return self.sdk_transport_cm() if self.transport == "stdio" else self.counting_cm()

    @contextlib.asynccontextmanager
    async def counting_cm(self) -> Any:
        async with self.sdk_transport_cm() as streams:
            yield (streams[0], CountingWriteStream(streams[1], self.posts), *streams[2:])

    def sdk_transport_cm(self) -> Any:
        if self.transport == "stdio":
            if not self.server_command:
                raise RuntimeError("MCP_HARNESS_SERVER_COMMAND is missing or empty")
            command, *args = self.server_command
            return stdio_client(StdioServerParameters(command=command, args=args))
        if not self.url:
            raise RuntimeError("no server URL: the harness appends it as the last argument")
        headers = self.headers or None
        if self.transport == "http":
            if SDK_MAJOR >= 2:
                # 2.x takes headers only through an httpx client of the caller's; the SDK's own
                # factory gives it the transports' default timeouts. The transport does not close
                # a client it was given, so it is closed with the rest of the stack.
                # `max_message_bytes` → the transport's `max_sse_event_size` (2.x's only inbound
                # size setting: it caps one SSE event; the SDK leaves JSON responses uncapped).
                sized = {} if self.max_message_bytes is None else {"max_sse_event_size": self.max_message_bytes}
                client = sdk_http_client(headers=headers, auth=self.auth)
                return http_client(self.url, http_client=self.own(self.counted(client)), **sized)
            return http_client(self.url, headers=headers, httpx_client_factory=self.client_factory, auth=self.auth)
        if self.transport == "legacy-sse":
            return sse_client(self.url, headers=headers, httpx_client_factory=self.client_factory, auth=self.auth)
        raise Unsupported(f"unknown transport {self.transport!r}")

    async def connect(self, step: dict[str, Any]) -> None:
        revision = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "")
        modern = revision >= "2026-07-28"
        fallback = step.get("legacy_fallback")
        if fallback is not None and SDK_MAJOR < 2:
            raise Unsupported(f"mcp {SDK_VERSION} has only the initialize handshake: no modern version to fall back from")
        # A modern offer to a legacy server, for a dual-era client: `Client(mode="auto")`.
        if not modern and fallback is True and step.get("protocol_version", "") >= "2026-07-28":
            modern = True
        elif not modern and fallback is not None:
            raise Unsupported("legacy_fallback applies to a modern protocol_version offered to a legacy server (this plan offers none)")
        if modern and SDK_MAJOR < 2:
            raise Unsupported(f"mcp {SDK_VERSION} does not speak {revision} (it has only the initialize handshake)")
        if not modern and "protocol_version" in step:
            raise Unsupported(
                f"ClientSession.initialize always offers {INITIALIZE_VERSION_NAME} ({INITIALIZE_VERSION}); "
                f"it has no setting to offer {step['protocol_version']}"
            )
        if step.get("env"):
            raise Unsupported(f"the SDK reads no transport settings from the environment (plan sets {', '.join(step['env'])})")
        if step.get("max_message_bytes") is not None and not (SDK_MAJOR >= 2 and self.transport == "http"):
            raise Unsupported(
                "the SDK has no inbound message size setting for this transport (stdio_client reads lines unbounded; "
                + ("sse_client has none; only streamable_http_client's max_sse_event_size caps an SSE event)" if SDK_MAJOR >= 2
                   else "sse_client and streamablehttp_client have none)")
            )
        self.max_message_bytes = step.get("max_message_bytes")
        if step.get("string_ids"):
            raise Unsupported(
                "the SDK always uses numeric request ids and has no option for string ids"
                + (" (ClientSession numbers requests from its dispatcher's counter; only the SDK's own subscriptions/listen mints string ids)" if SDK_MAJOR >= 2
                   else " (BaseSession numbers requests from its integer _request_id)")
            )
        refresh = step.get("auth_refresh")
        self.auth = RefreshOnDenied(dict(refresh)) if refresh is not None else None
        if self.auth is not None and self.transport == "stdio":
            raise Unsupported("auth_refresh applies to the HTTP transports only")
        oauth = step.get("oauth")
        if oauth is not None:
            if self.transport == "stdio":
                raise Unsupported("oauth applies to the HTTP transports only (the SDK's OAuthClientProvider is an httpx Auth, the auth= of streamable_http_client and sse_client; stdio_client has none)")
            if refresh is not None:
                raise Unsupported("the SDK's transports take one auth=: the OAuthClientProvider (oauth) or the application's own httpx Auth (auth_refresh), not both")
            headless_oauth.check_plan(oauth, Unsupported)
            self.auth = headless_oauth.make_provider(oauth, self.url or "", httpx, SDK_MAJOR, step.get("timeout_ms"))
        self.headers = dict(step.get("headers") or {})
        if self.headers and self.transport == "stdio":
            raise Unsupported("headers apply to the HTTP transports only")
        if step.get("managed") is not None:
            raise Unsupported("the SDK has no reconnecting connection manager (reconnect with backoff, new session after a 404, tool-call replay rule)")
        roots = step.get("roots") or []

        async def list_roots(_context: Any) -> Any:
            return types.ListRootsResult(roots=[types.Root(**r) for r in roots])

        if modern:
            await self.connect_modern(step, list_roots if roots else None)
            return
        streams = await self.stack.enter_async_context(self.transport_cm())
        read, write = streams[0], streams[1]
        session = ClientSession(
            read,
            write,
            read_timeout_seconds=timeout_arg(step.get("timeout_ms")),
            list_roots_callback=list_roots if roots else None,
            message_handler=self.on_message,
        )
        self.session = await self.stack.enter_async_context(session)
        if step.get("handshake", True):
            try:
                await self.session.initialize()
            except Exception:
                # An application's `async with` leaves the session and its transport on the
                # exception: the connection its connect failed on is closed, never used again.
                # The step reports initialize's own error; one the close raises is a side report.
                self.session = None
                stack, self.stack = self.stack, contextlib.AsyncExitStack()
                try:
                    await stack.aclose()
                except Exception as e:
                    emit({"report": f"close after the failed connect: {error_text(e)}"})
                raise

    async def connect_modern(self, step: dict[str, Any], list_roots: Any) -> None:
        """`Client` in its default `mode="auto"`: the `server/discover` probe, then the
        stateless revision (or its fallback to the handshake, as the SDK decides).
        `handshake: false` pins the revision instead (`mode="2026-07-28"`: adopted without
        any traffic at connect)."""
        preferred = step.get("protocol_version")
        if preferred is not None and preferred != LATEST_MODERN_VERSION:
            raise Unsupported(
                f"Client's server/discover probe always proposes {LATEST_MODERN_VERSION} "
                f"(mcp_types.version.LATEST_MODERN_VERSION); it has no setting to prefer {preferred}"
            )
        # `legacy_fallback: false` (a modern-only client) pins the revision too: no probe,
        # so no fallback.
        auto = step.get("handshake", True) and step.get("legacy_fallback") is not False
        mode = "auto" if auto else LATEST_MODERN_VERSION
        client = Client(
            self.transport_cm(),
            mode=mode,
            read_timeout_seconds=timeout_arg(step.get("timeout_ms")),
            list_roots_callback=list_roots,
            message_handler=self.on_message,
        )
        self.client = await self.stack.enter_async_context(client)
        self.session = self.client.session

    def prepare_modern(self, method: str, params: dict[str, Any] | None, step: dict[str, Any]) -> Callable[[], Awaitable[Any]] | None:
        """The `Client` call an application makes for this request on a 2026-07-28
        connection, or None when `Client` has none that carries every field of the step (then
        the session's generic `send_request`, which stamps the same `_meta` and headers)."""
        client = self.client
        keys = set(params or {})
        timeout = timeout_arg(step.get("timeout_ms"))
        untimed = step.get("timeout_ms") is None
        if step.get("pad_params") is not None:
            return None
        if method == "subscriptions/listen":
            return self.listen_call(params, step)
        if params is not None and "name" in params and keys <= {"name", "arguments"}:
            if method == "tools/call":
                return lambda: client.call_tool(params["name"], params.get("arguments"), read_timeout_seconds=timeout)
            if method == "prompts/get" and untimed:
                return lambda: client.get_prompt(params["name"], params.get("arguments"))
        if method == "resources/read" and keys == {"uri"} and untimed:
            return lambda: client.read_resource(params["uri"])
        lists = {
            "tools/list": client.list_tools,
            "prompts/list": client.list_prompts,
            "resources/list": client.list_resources,
            "resources/templates/list": client.list_resource_templates,
        }
        if method in lists and keys <= {"cursor"} and untimed:
            cursor = (params or {}).get("cursor")
            return lambda: lists[method](cursor=cursor)
        return None

    def listen_call(self, params: dict[str, Any] | None, step: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
        """`Client.listen` for `subscriptions/listen`: the request ends when the stream does
        (the server's result closes it gracefully; a drop raises `SubscriptionLost`).

        The SDK consumes the server's `notifications/subscriptions/acknowledged` itself and
        surfaces it as the `listen` context being entered, with the honored filter; the driver
        reports that as the notification line the contract asks for. The change events the
        Subscription yields (frames correlated to it by subscription id) are reported as their
        notifications; `message_handler`'s raw tee of stamped frames is not (see `on_message`).
        `Client.listen` returns no result, so the step succeeds without one."""
        if step.get("timeout_ms") is not None:
            raise Unsupported("Client.listen takes no per-call timeout (the session read timeout bounds the acknowledgment only)")
        extra = sorted(set(params or {}) - {"notifications"})
        if extra:
            raise Unsupported(f"Client.listen takes only the notifications filter, not params field(s) {', '.join(extra)}")
        wanted = dict((params or {}).get("notifications") or {})
        fields = {
            "toolsListChanged": "tools_list_changed",
            "promptsListChanged": "prompts_list_changed",
            "resourcesListChanged": "resources_list_changed",
            "resourceSubscriptions": "resource_subscriptions",
        }
        unknown = sorted(set(wanted) - set(fields))
        if unknown:
            raise Unsupported(f"Client.listen has no keyword for filter field(s) {', '.join(unknown)}")
        kwargs = {fields[k]: v for k, v in wanted.items()}
        client = self.client

        async def call() -> None:
            async with client.listen(**kwargs) as subscription:
                self.report_notification(
                    "notifications/subscriptions/acknowledged", {"notifications": dump(subscription.honored)}
                )
                meta = {SUBSCRIPTION_ID_META_KEY: subscription.subscription_id}
                async for event in subscription:
                    notification = event_to_notification(event, meta)
                    self.report_notification(notification.method, dump(notification.params) or {})
            return None

        return call

    def need_session(self) -> ClientSession:
        if self.session is None:
            raise DriverError("not connected (the plan has no successful connect before this step)")
        return self.session

    async def request(self, step: dict[str, Any]) -> Any:
        return await self.prepare(step)()

    def prepare(self, step: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
        """Maps a request step onto the SDK call that sends it, without sending: everything
        that makes the step unsupported is raised here, before a background request starts."""
        session = self.need_session()
        method = step["method"]
        params = dict(step["params"]) if step.get("params") is not None else None
        if step.get("pad_params") is not None:
            params = {**(params or {}), "_pad": "x" * step["pad_params"]}
        timeout = timeout_arg(step.get("timeout_ms"))
        plain = step.get("pad_params") is None
        if self.client is not None and (call := self.prepare_modern(method, params, step)) is not None:
            return call
        if method == "tools/list" and plain and step.get("timeout_ms") is None:
            if params:
                typed_params = types.PaginatedRequestParams(**params)
                require_params_kept(method, params, typed_params)
                return lambda: session.list_tools(params=typed_params)
            return lambda: session.list_tools()
        if method == "tools/call" and plain and params is not None and set(params) <= {"name", "arguments"}:
            return lambda: session.call_tool(params["name"], params.get("arguments"), read_timeout_seconds=timeout)
        data: dict[str, Any] = {"method": method}
        if params is not None:
            data["params"] = params
        request = typed("request", data)
        result_type = RESULT_TYPES.get(method, types.Result)
        return lambda: session.send_request(request, result_type, request_read_timeout_seconds=timeout)

    async def background_request(self, step: dict[str, Any]) -> None:
        label = step.get("as") or ""
        entry: dict[str, Any] = {"done": anyio.Event(), "scope": anyio.CancelScope(), "started": time.monotonic()}
        call = self.prepare(step)
        self.background[label] = entry

        async def run() -> None:
            with entry["scope"]:
                try:
                    entry["result"] = await call()
                except Exception as e:  # the SDK's error is the outcome
                    entry["error"] = e
            if entry["scope"].cancelled_caught:
                entry["error"] = DriverError("cancelled by the plan (anyio cancel scope); the SDK raised no error of its own")
            entry["done"].set()

        self.task_group.start_soon(run)

    async def run_step(self, step: dict[str, Any]) -> tuple[Any, int | None]:
        cmd_contract.require_implemented(IMPLEMENTED, step, Unsupported, "this driver")
        op = step.get("op")
        if op == "connect":
            await self.connect(step)
        elif op == "request":
            if step.get("new_session"):
                raise Unsupported("the SDK reports a 404 on the session as an error ('Session terminated') and leaves starting a new session to the application")
            if step.get("reset_timeout_on_progress") or step.get("max_total_timeout_ms") is not None:
                raise Unsupported("the SDK's request timeout is one read timeout: no reset on progress and no separate total bound")
            if step.get("background"):
                self.need_session()
                await self.background_request(step)
            else:
                return await self.request(step), None
        elif op == "await":
            entry = self.background.pop(step["request"], None)
            if entry is None:
                raise RuntimeError(f"no background request labelled {step['request']!r}")
            await entry["done"].wait()
            elapsed = int((time.monotonic() - entry["started"]) * 1000)
            if "error" in entry:
                raise StepError(entry["error"], elapsed)
            return entry.get("result"), elapsed
        elif op == "cancel":
            entry = self.background.get(step["request"])
            if entry is not None:
                entry["scope"].cancel()
        elif op == "abandon":
            raise Unsupported(
                "a Python caller stops waiting by cancelling the task's scope, which is the `cancel` op; "
                "the driver has no separate way to drop a request"
            )
        elif op == "notify":
            session = self.need_session()
            if step["method"] == "notifications/roots/list_changed" and step.get("pad_params") is None:
                await session.send_roots_list_changed()
            else:
                data: dict[str, Any] = {"method": step["method"]}
                params = step.get("params")
                if step.get("pad_params") is not None:
                    params = {**(params or {}), "_pad": "x" * step["pad_params"]}
                if params is not None:
                    data["params"] = params
                await session.send_notification(typed("notification", data))
        elif op == "wait":
            await anyio.sleep(step["ms"] / 1000)
        elif op == "wait_notification":
            timeout = step.get("timeout_ms", 1000)
            with anyio.move_on_after(timeout / 1000):
                while step["method"] not in self.notifications:
                    await self.notified.wait()
            if step["method"] not in self.notifications:
                raise RuntimeError(f"no {step['method']} notification within {timeout}ms")
        elif op == "wait_sent":
            wait = cmd_contract.SentWait(step, Unsupported)
            while wait.pending():
                await anyio.sleep(wait.POLL_S)
            if wait.failure is not None:
                raise RuntimeError(wait.failure)
        elif op == "wait_closed":
            raise Unsupported("ClientSession exposes no connection-closed event or flag to wait on (a closed connection shows only as pending and later requests failing with CONNECTION_CLOSED)")
        elif op == "close":
            await self.close()
        else:
            raise Unsupported(f"plan op {op!r} is unknown to this driver")
        return None, None

    async def transport_failure(self) -> BaseException | None:
        """Leaves the SDK's contexts after the transport's task group cancelled this task, as an
        application's `async with` would, and returns the error that escaped them (None when
        the cancellation had no error behind it). The connection is gone afterwards."""
        stack, self.stack = self.stack, contextlib.AsyncExitStack()
        self.session = None
        self.client = None
        self.closed = True
        try:
            await stack.aclose()
        except BaseException as e:  # noqa: BLE001 - the transport's own error is the outcome
            leaves = [x for x in leaf_errors(e) if not isinstance(x, anyio.get_cancelled_exc_class())]
            return leaves[0] if leaves else None
        return None

    async def close(self) -> None:
        await self.posts.settle()
        for entry in self.background.values():
            entry["scope"].cancel()
        self.closed = True
        await self.stack.aclose()

    async def run(self) -> None:
        async with anyio.create_task_group() as tg:
            self.task_group = tg
            for i, step in enumerate(self.plan):
                n = i + 1
                if i > 0:
                    await self.posts.settle()
                started = time.monotonic()
                try:
                    value, elapsed = await self.run_step(step)
                except Unsupported as e:
                    emit({"step": n, "unsupported": str(e)})
                    break
                except anyio.get_cancelled_exc_class():
                    # The SDK's transport task group failed underneath the step (an OAuth flow
                    # that raises inside the transport's POST task cancels its host, this task):
                    # the step's outcome is what the transport's context manager raises.
                    failure = await self.transport_failure()
                    if failure is None:
                        raise
                    emit(failed(n, failure, int((time.monotonic() - started) * 1000)))
                    continue
                except StepError as e:
                    emit(failed(n, e.error, e.elapsed_ms))
                    continue
                except Exception as e:
                    emit(failed(n, e, int((time.monotonic() - started) * 1000)))
                    continue
                line: dict[str, Any] = {"step": n, "ok": True}
                if value is not None:
                    line["result"] = cmd_contract.shorten(dump(value))
                line["elapsed_ms"] = elapsed if elapsed is not None else int((time.monotonic() - started) * 1000)
                emit(line)
            # Like the bundled target, a plan that does not close ends with an implicit close.
            if not self.closed:
                try:
                    await self.close()
                except Exception as e:
                    emit({"report": f"close after the plan failed: {error_text(e)}"})
            tg.cancel_scope.cancel()


class StepError(Exception):
    def __init__(self, error: BaseException, elapsed_ms: int):
        super().__init__(error_text(error))
        self.error = error
        self.elapsed_ms = elapsed_ms


def run_plan(args: list[str]) -> None:
    """Runs the contract's plan with a fresh Driver (SDK client) on a fresh event loop; `args`
    are the arguments after the driver's own (the URL last, for HTTP)."""
    plan, server_command = cmd_contract.read_plan()
    transport = os.environ.get("MCP_HARNESS_TRANSPORT", "stdio")
    url = args[-1] if args else None
    emit({"sdk": {"name": "mcp (Python SDK)", "version": SDK_VERSION}})
    anyio.run(Driver(plan, transport, server_command, url).run)


def main() -> int:
    if cmd_contract.declare(IMPLEMENTED):
        return 0
    try:
        if cmd_contract.persistent():
            warm()
            return cmd_contract.serve_jobs(run_plan)
        run_plan(sys.argv[1:])
    except cmd_contract.ContractError as e:
        print(f"driver.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
