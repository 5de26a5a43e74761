"""The project's reference MCP client: a small client of our own under the `cmd:` contract
(clients/README.md), written against the MCP specification pages in /work/shared/mcp-spec/
rather than against SPEC.md, which describes the stricter bundled Rust client.

Why Python and only its standard library (json, subprocess, threading, http.client,
socket): the reference client must run on a fresh machine with no install step — no venv,
no node_modules, no cargo build — so `make test` can run it anywhere the harness builds.

It speaks stdio, Streamable HTTP (2025-03-26 … 2025-11-25, stateful: session id,
MCP-Protocol-Version, an Accept listing both types, SSE reply streams with resumption, the
optional GET listener, DELETE on close) and legacy HTTP+SSE (2024-11-05). Over HTTP it
authorizes with OAuth when the plan's `connect.oauth` asks (oauth.py beside this file: the
authorization pages of 2025-03-26 … 2025-11-25, the user step answered by following the
authorization server's redirect); over stdio that field is unsupported, as the pages say.

Planted bugs: `--bug NAME` (or MCP_REFERENCE_BUG=NAME) switches on one realistic single
bug, so the harness's self-test can prove that the scenario library catches it
(harness/tests/harness/reference.rs). `--list-bugs` prints them. Every bug is a one-line
`bug("name")` test at the place the correct code would be, so the variants share the rest.
The OAuth client's planted bugs are listed in oauth.BUGS and tested there with its own
`bug("name")`; `--bug` switches them on the same way.

Strict mode: `--strict` (or MCP_REFERENCE_STRICT=1) is no bug but how strict real SDKs
behave, so the library can be shown to judge them fairly: the client uses only the server
capabilities the handshake negotiated (the lifecycle page: "Only use capabilities that were
successfully negotiated"; a request for another is refused locally, never sent); over
stdio it first spawns a short-lived probe copy of the server, asks it `server/discover`
(the 2026-07-28 stdio version probe), and ends that copy before it starts the real session;
over Streamable HTTP it asks `server/discover` before `initialize`; and it refuses a result
that its revision's official JSON Schema does not allow (as SDKs that validate results do),
read from MCP_SPEC_DIR (default: the `shared/mcp-spec` folder beside the project).
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from typing import Any, Callable

# clients/cmd_contract.py, the contract's inputs shared by the Python drivers (the reference
# client runs with -I, so the folder is put on the path by hand).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cmd_contract  # noqa: E402

# The OAuth client (`connect.oauth`), beside this file.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oauth  # noqa: E402

#: Each planted bug and what it breaks.
BUGS: dict[str, str] = {
    "answers-first-line": "settles the oldest pending request with whatever response comes first, ignoring its id",
    "dies-on-malformed-line": "a stdout line that is not JSON ends the connection",
    "no-initialized": "never sends notifications/initialized after initialize",
    "reposts-after-drop": "re-POSTs the request when its SSE reply stream drops, instead of resuming with GET",
    "ignores-session-id": "never sends the Mcp-Session-Id the server issued",
    "loops-on-405-get": "re-opens the GET listener a second after each 405, again and again",
    "loops-on-401": "asks for new credentials and re-sends on every 401, without limit",
    "no-request-timeout": "never times a request out",
    "cancels-initialize": "sends notifications/cancelled for an initialize that timed out",
    "sse-lf-only": "splits SSE lines on LF only, so CRLF / CR line ends break event parsing",
    "id-type-confusion": "matches response ids by their text, so \"1\" settles request 1",
    "orphans-server": "close() only closes the server's stdin and exits without waiting or signalling",
    "no-delete": "never sends DELETE for the session on close",
    "keeps-expired-session": "after a 404 on its session keeps sending the old session id, never starting a new session",
    "no-cancel-notification": "a cancelled or timed-out request sends no notifications/cancelled",
    "ping-method-not-found": "answers the server's ping with -32601 Method not found",
    "ping-not-empty": "answers the server's ping with a result that is not empty ({\"pong\": true})",
    "no-version-header": "never sends the MCP-Protocol-Version header after initialize (2025-06-18 and later)",
    "get-accepts-json-only": "its GET listener sends Accept: application/json, not listing text/event-stream",
    "post-accepts-json-only": "its POSTs send Accept: application/json, not listing text/event-stream",
    "get-without-session-id": "its GET listener leaves out the Mcp-Session-Id the server issued",
    "reuses-ids": "numbers every request 1, so concurrent requests share an id",
    "null-ids": "sends requests with \"id\": null",
    "ignores-configured-headers": "a driver bug: drops the plan's connect.headers instead of reporting them unsupported",
    # The OAuth client's (oauth.py), each a one-line `oauth.bug("name")` test there.
    **oauth.BUGS,
}
BUG: str | None = None
#: Strict mode (see the module docs).
STRICT = False
#: A request's method prefix → the server capability it needs (each feature page: servers
#: that support it MUST declare it).
NEEDS_CAPABILITY = {
    "tools/": "tools",
    "resources/": "resources",
    "prompts/": "prompts",
    "logging/": "logging",
    "completion/": "completions",
}
#: Strict mode's `server/discover` params: the 2026-07-28 per-request fields.
DISCOVER_PARAMS = {
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
}
#: Strict mode's stdio probe: how long to wait for the probe copy's answer.
PROBE_S = 1.0


def bug(name: str) -> bool:
    assert name in BUGS, name
    return BUG == name


#: Versions this client speaks; it asks for the first, and for 2024-11-05 on legacy SSE.
SUPPORTED_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
LEGACY_VERSION = "2024-11-05"
#: Revisions that allow JSON-RPC batches (removed in 2025-06-18).
BATCH_VERSIONS = {"2024-11-05", "2025-03-26"}
DEFAULT_TIMEOUT_MS = 30000
DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024
ERROR_BODY_CHARS = 4096
#: Resumption: default delay when the server sent no `retry`, and attempts without progress.
DEFAULT_RETRY_MS = 1000
RESUME_ATTEMPTS = 3
#: close(): how long to wait for the server after closing stdin, and after SIGTERM.
GRACE_S = 1.0
DELETE_TIMEOUT_S = 1.0
#: close(): how long queued writes may take before stdin is closed under them.
DRAIN_S = 0.25
#: Headers the transport generates; configured values for them never reach the wire.
PROTOCOL_HEADERS = {"accept", "content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id"}

out_lock = threading.Lock()


def emit(obj: dict[str, Any]) -> None:
    with out_lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def report(text: str) -> None:
    emit({"report": text})


class Schemas:
    """Strict mode: the official JSON Schema of each revision, and a validator for the
    keywords those schemas use ($ref, type, properties, required, additionalProperties, items,
    enum, const, anyOf, allOf, minimum, maximum, maxItems; `format` is not checked). Written
    here because the reference client has no dependencies to install."""

    def __init__(self) -> None:
        here = os.path.dirname(os.path.abspath(__file__))
        self.dir = os.environ.get("MCP_SPEC_DIR") or os.path.join(here, "..", "..", "..", "shared", "mcp-spec")
        self.roots: dict[str, Any] = {}
        self.warned = False

    def root(self, version: str) -> Any:
        if version not in self.roots:
            try:
                with open(os.path.join(self.dir, version, "schema.json"), encoding="utf-8") as f:
                    self.roots[version] = json.load(f)
            except (OSError, ValueError) as e:
                if not self.warned:
                    report(f"strict mode: no schema for {version} ({e}): results are not validated")
                    self.warned = True
                self.roots[version] = None
        return self.roots[version]

    def result_problem(self, version: str, method: str, result: Any) -> str | None:
        """What the schema finds wrong with `result` as the answer to `method`, if anything."""
        root = self.root(version)
        if root is None:
            return None
        defs = root.get("$defs") or root.get("definitions") or {}
        request = next(
            (name for name, d in defs.items()
             if name.endswith("Request") and not name.startswith("JSONRPC")
             and d.get("properties", {}).get("method", {}).get("const") == method),
            None,
        )
        name = request[: -len("Request")] + "Result" if request else None
        if name not in defs:
            return None
        return self.problem(defs[name], result, defs, "result")

    def problem(self, schema: Any, value: Any, defs: dict[str, Any], at: str) -> str | None:
        if not isinstance(schema, dict):
            return None
        if "$ref" in schema:
            return self.problem(defs.get(schema["$ref"].rsplit("/", 1)[-1]), value, defs, at)
        kinds = schema.get("type")
        if kinds is not None and not any(json_type(value, k) for k in (kinds if isinstance(kinds, list) else [kinds])):
            return f"{at} is not of type {kinds}"
        if "const" in schema and value != schema["const"]:
            return f"{at} is not {schema['const']!r}"
        if "enum" in schema and value not in schema["enum"]:
            return f"{at} is not one of {schema['enum']}"
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                return f"{at} is below {schema['minimum']}"
            if "maximum" in schema and value > schema["maximum"]:
                return f"{at} is above {schema['maximum']}"
        for sub in schema.get("allOf", []):
            found = self.problem(sub, value, defs, at)
            if found:
                return found
        if "anyOf" in schema and all(self.problem(sub, value, defs, at) for sub in schema["anyOf"]):
            return f"{at} matches none of its alternatives"
        if isinstance(value, dict):
            for key in schema.get("required", []):
                if key not in value:
                    return f"{at} lacks the required member {key!r}"
            props = schema.get("properties", {})
            extra = schema.get("additionalProperties", True)
            for key, member in value.items():
                if key in props:
                    found = self.problem(props[key], member, defs, f"{at}.{key}")
                elif extra is False:
                    return f"{at} has the member {key!r}, which is not allowed"
                else:
                    found = self.problem(extra, member, defs, f"{at}.{key}") if isinstance(extra, dict) else None
                if found:
                    return found
        if isinstance(value, list):
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                return f"{at} has more than {schema['maxItems']} items"
            for i, item in enumerate(value):
                found = self.problem(schema.get("items"), item, defs, f"{at}[{i}]")
                if found:
                    return found
        return None


def json_type(value: Any, kind: str) -> bool:
    return {
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "null": value is None,
    }.get(kind, True)


SCHEMAS = Schemas()


class McpError(Exception):
    """A failed operation; str() is the text reported for the step."""


NOT_CONNECTED = "Transport not connected"
CLOSED = "Transport closed"


def id_key(value: Any) -> Any:
    """A JSON-RPC id as a dict key: 1 and "1" stay different (and True is not 1)."""
    if bug("id-type-confusion"):
        return str(value)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, str)):
        return (type(value).__name__, value)
    return None


class Pending:
    def __init__(self, rid: Any, method: str, timeout_ms: int | None):
        self.id = rid
        self.method = method
        self.timeout_ms = timeout_ms
        self.started = time.monotonic()
        self.done = threading.Event()
        self.result: Any = None
        self.error: str | None = None
        self.exchange: Any = None  # HTTP: the open exchange, closed on cancel / timeout

    def settle(self, result: Any = None, error: str | None = None) -> None:
        self.result, self.error = result, error
        self.done.set()


class Client:
    """The protocol layer: ids, pending requests, dispatch of inbound messages, the handshake."""

    def __init__(self, transport_name: str, settings: dict[str, Any], url: str | None, server_command: list[str]):
        self.lock = threading.Lock()
        self.pending: dict[Any, Pending] = {}
        self.next_id = 1
        self.string_ids = bool(settings.get("string_ids"))
        self.roots = list(settings.get("roots") or [])
        self.timeout_ms = connection_timeout(settings)
        self.max_message = settings.get("max_message_bytes") or DEFAULT_MAX_MESSAGE
        self.version: str | None = None
        self.server_capabilities: dict[str, Any] = {}
        self.server_command = server_command
        self.connected = False
        self.shut = False
        self.closed = threading.Event()
        self.notes = threading.Condition()
        self.notifications: list[str] = []
        if transport_name == "stdio":
            self.transport: Any = StdioTransport(self, server_command)
        elif transport_name == "http":
            self.transport = StreamableHttpTransport(self, url, settings)
        elif transport_name == "legacy-sse":
            self.transport = LegacySseTransport(self, url, settings)
        else:
            raise McpError(f"unknown transport {transport_name!r}")

    # -- outbound -------------------------------------------------------------------------

    def new_id(self) -> Any:
        if bug("reuses-ids"):
            return 1
        if bug("null-ids"):
            return None
        with self.lock:
            n = self.next_id
            self.next_id += 1
        return str(n) if self.string_ids else n

    def begin(self, method: str, params: Any, timeout_ms: int | None = None) -> Pending:
        if not self.connected:
            raise McpError(NOT_CONNECTED)
        self.check_negotiated(method)
        if method != "initialize" and getattr(self.transport, "session_expired", False):
            # A 404 on the session: MUST start a new session (a new initialize without the
            # old id) before anything else goes out.
            self.transport.session_expired = False
            self.handshake()
        rid = self.new_id()
        timeout = self.timeout_ms if timeout_ms is None else timeout_ms
        p = Pending(rid, method, timeout)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        with self.lock:
            self.pending[id_key(rid)] = p
        self.transport.send_request(message, p)
        return p

    def finish(self, p: Pending) -> Any:
        """Waits for a request's outcome within its timeout (counted from the send)."""
        if p.timeout_ms and not bug("no-request-timeout"):
            left = p.timeout_ms / 1000 - (time.monotonic() - p.started)
            if not p.done.wait(max(0.0, left)):
                if self.abandon(p, f"Request timeout after {p.timeout_ms}ms"):
                    # The lifecycle page: the initialize request MUST NOT be cancelled.
                    if p.method != "initialize" or bug("cancels-initialize"):
                        self.send_cancelled(p, "request timed out")
        else:
            p.done.wait()
        if p.error is not None:
            raise McpError(p.error)
        version = self.version or (p.result.get("protocolVersion") if isinstance(p.result, dict) else None)
        if STRICT and version in SUPPORTED_VERSIONS:
            problem = SCHEMAS.result_problem(str(version), p.method, p.result)
            if problem:
                raise McpError(f"invalid {p.method} result for {version}: {problem}")
        return p.result

    def abandon(self, p: Pending, error: str) -> bool:
        """Rejects a pending request and forgets it, so a late response is dropped."""
        with self.lock:
            if self.pending.get(id_key(p.id)) is not p:
                return False
            del self.pending[id_key(p.id)]
        p.settle(error=error)
        self.transport.abort(p)
        return True

    def cancel(self, p: Pending) -> None:
        if self.abandon(p, "Request cancelled"):
            self.send_cancelled(p, "cancelled by the plan")

    def send_cancelled(self, p: Pending, reason: str) -> None:
        if bug("no-cancel-notification") or not self.connected:
            return
        message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": p.id, "reason": reason}}
        try:
            # Never waits behind a write blocked on a server that stopped reading.
            self.transport.send_other(message, wait=False)
        except McpError as e:
            report(f"could not send notifications/cancelled for request {p.id}: {e}")

    def request(self, method: str, params: Any, timeout_ms: int | None = None) -> Any:
        return self.finish(self.begin(method, params, timeout_ms))

    def check_negotiated(self, method: str) -> None:
        """Strict mode: refuses, without sending it, a request for a capability the server
        did not advertise (2024-11-05's completion/complete has no capability)."""
        if not STRICT or self.version is None:
            return
        for prefix, capability in NEEDS_CAPABILITY.items():
            if not method.startswith(prefix) or (capability == "completions" and self.version == LEGACY_VERSION):
                continue
            if not isinstance(self.server_capabilities.get(capability), dict):
                raise McpError(f"the server did not advertise the {capability} capability, so {method} is not sent")

    def notify(self, method: str, params: Any) -> None:
        if not self.connected:
            raise McpError(NOT_CONNECTED)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.transport.send_other(message)

    # -- lifecycle ------------------------------------------------------------------------

    def connect(self, handshake: bool) -> None:
        if STRICT and isinstance(self.transport, StdioTransport):
            probe_copy(self.server_command)
        self.transport.start()
        self.connected = True
        if STRICT and handshake and isinstance(self.transport, StreamableHttpTransport):
            self.probe_discover()
        if handshake:
            self.handshake()

    def probe_discover(self) -> None:
        """Strict mode over Streamable HTTP: `server/discover` first (the 2026-07-28 probe; a
        MAY on HTTP). Any answer but a 2026-07-28 result means an older server, and this
        client speaks the stateful revisions either way: the answer is only logged."""
        try:
            result = self.request("server/discover", dict(DISCOVER_PARAMS))
            report(f"discover answered: {cmd_contract.shorten(result)}")
        except McpError as e:
            if str(e).startswith("Authorization failed:"):
                # No answer about versions at all: the server is not reachable without the
                # authorization that just failed, so the connection fails with it.
                self.close()
                raise
            report(f"discover refused ({e}): an older server, so the initialize handshake")

    def handshake(self) -> None:
        try:
            asked = LEGACY_VERSION if isinstance(self.transport, LegacySseTransport) else SUPPORTED_VERSIONS[0]
            result = self.request(
                "initialize",
                {
                    "protocolVersion": asked,
                    "capabilities": {"roots": {"listChanged": True}},
                    "clientInfo": {"name": "mcp-harness-reference", "version": "1.0.0"},
                },
            )
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            if version not in SUPPORTED_VERSIONS:
                raise McpError(f"Unsupported protocol version from the server: {version!r} (this client speaks {', '.join(SUPPORTED_VERSIONS)})")
            self.version = version
            capabilities = result.get("capabilities") if isinstance(result, dict) else None
            self.server_capabilities = capabilities if isinstance(capabilities, dict) else {}
            if not bug("no-initialized"):
                self.notify("notifications/initialized", None)
            self.transport.initialized()
        except McpError:
            self.close()
            raise

    def on_closed(self, error: str = CLOSED) -> None:
        """The connection ended (server exit, stream end, close()): fail everything pending."""
        with self.lock:
            self.connected = False
            pending, self.pending = list(self.pending.values()), {}
        for p in pending:
            p.settle(error=error)
        self.closed.set()

    def close(self) -> None:
        """Idempotent: the plan's close and the implicit one after the plan."""
        self.on_closed()
        with self.lock:
            done, self.shut = self.shut, True
        if not done:
            self.transport.close()

    # -- inbound --------------------------------------------------------------------------

    def batches_allowed(self) -> bool:
        return (self.version or SUPPORTED_VERSIONS[0]) in BATCH_VERSIONS

    def dispatch(self, message: Any, answer_request: Pending | None = None) -> None:
        """One parsed inbound JSON value (a batch array is unpacked where the revision allows)."""
        if isinstance(message, list):
            if not self.batches_allowed():
                report(f"protocol violation: a JSON-RPC batch (array), removed in {self.version or 'this revision'}; dropped")
                return
            for m in message:
                self.dispatch(m)
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            report(f"protocol violation: not a JSON-RPC 2.0 message: {json.dumps(message)[:200]}")
            return
        if "method" in message:
            if "id" in message:
                if id_key(message["id"]) is None:
                    report(f"protocol violation: a request with an invalid id: {json.dumps(message)[:200]}")
                    return
                self.answer_server_request(message)
            else:
                self.deliver_notification(message)
            return
        if "id" in message and ("result" in message or "error" in message):
            key = id_key(message["id"])
            with self.lock:
                if bug("answers-first-line") and self.pending:
                    p = self.pending.pop(next(iter(self.pending)))  # the oldest, whatever the id
                else:
                    p = self.pending.pop(key, None) if key is not None else None
            if p is None:
                report(f"dropped a response for an unknown or finished request id {json.dumps(message['id'])}")
                return
            if "error" in message:
                err = message["error"] if isinstance(message["error"], dict) else {}
                p.settle(error=f"MCP error {err.get('code')}: {err.get('message')}")
            else:
                p.settle(result=message["result"])
            return
        report(f"protocol violation: neither request, notification nor response: {json.dumps(message)[:200]}")

    def deliver_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        emit({"notification": {"method": method, "params": message.get("params", {})}})
        with self.notes:
            self.notifications.append(method)
            self.notes.notify_all()

    def answer_server_request(self, message: dict[str, Any]) -> None:
        method = message["method"]
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if method == "ping" and not bug("ping-method-not-found"):
            reply["result"] = {"pong": True} if bug("ping-not-empty") else {}
        elif method == "roots/list":
            reply["result"] = {"roots": self.roots}
        else:
            reply["error"] = {"code": -32601, "message": f"Method not found: {method}"}
        # Not on the reader's thread: an HTTP answer is a POST of its own.
        threading.Thread(target=self.send_answer, args=(reply,), daemon=True).start()

    def send_answer(self, reply: dict[str, Any]) -> None:
        try:
            self.transport.send_other(reply)
        except McpError as e:
            report(f"could not answer server request {reply['id']}: {e}")

    def parse_and_dispatch(self, data: bytes | str) -> None:
        try:
            text = data.decode("utf-8") if isinstance(data, bytes) else data
        except UnicodeDecodeError:
            report("protocol violation: a message that is not UTF-8; dropped")
            return
        try:
            message = json.loads(text)
        except json.JSONDecodeError as e:
            if bug("dies-on-malformed-line"):
                raise
            report(f"protocol violation: a message that is not JSON ({e}); dropped")
            return
        self.dispatch(message)


def connection_timeout(settings: dict[str, Any]) -> int | None:
    """The connection's request timeout in ms (None: disabled). MCP_TIMEOUT_MS in the
    plan's client environment, when a non-negative integer, overrides `timeout_ms`."""
    timeout = settings.get("timeout_ms")
    timeout = DEFAULT_TIMEOUT_MS if timeout is None else timeout
    env = (settings.get("env") or {}).get("MCP_TIMEOUT_MS")
    if env is not None:
        if env.strip().isdigit():
            timeout = int(env)
        else:
            print(f"reference client: ignoring invalid MCP_TIMEOUT_MS={env!r}", file=sys.stderr)
    return timeout or None


# ---------------------------------------------------------------------------------------
# stdio
# ---------------------------------------------------------------------------------------


def probe_copy(command: list[str]) -> None:
    """Strict mode: a throwaway copy of the server answers `server/discover` (a 2026-07-28
    server with its versions, an older one with an error), then is ended as the stdio
    shutdown asks: stdin closed, a wait, SIGTERM, SIGKILL. What it said is only logged: this
    client speaks the stateful revisions either way."""
    if not command:
        return
    try:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError as e:
        report(f"probe copy: could not start the server: {e}")
        return
    assert proc.stdin is not None and proc.stdout is not None
    answer: list[bytes] = []
    reader = threading.Thread(target=lambda: answer.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    try:
        probe = {
            "jsonrpc": "2.0",
            "id": "probe-1",
            "method": "server/discover",
            "params": DISCOVER_PARAMS,
        }
        proc.stdin.write((json.dumps(probe) + "\n").encode())
        proc.stdin.flush()
        reader.start()
        reader.join(PROBE_S)
        report(f"probe copy answered: {answer[0][:200]!r}" if answer else "probe copy: no answer")
        proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(GRACE_S)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.wait(GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class StdioTransport:
    """The server as a child process: newline-delimited JSON on its stdin / stdout; its
    stderr is its log (inherited, so the harness keeps it)."""

    def __init__(self, client: Client, command: list[str]):
        self.client = client
        self.command = command
        self.proc: subprocess.Popen[bytes] | None = None
        self.writes: queue.Queue[Any] = queue.Queue()
        self.stdin_open = False

    def start(self) -> None:
        if not self.command:
            raise McpError("MCP_HARNESS_SERVER_COMMAND is missing or empty")
        try:
            # stderr is captured and forwarded (the spec lets a client capture, forward or
            # ignore it): read all along, so a chatty server never blocks on it.
            self.proc = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
            )
        except OSError as e:
            raise McpError(f"could not start the server: {e}") from None
        assert self.proc.stdin is not None
        self.stdin_file = self.proc.stdin
        self.stdin_open = True
        self.stdin_lock = threading.Lock()
        threading.Thread(target=self.read_loop, daemon=True).start()
        threading.Thread(target=self.forward_stderr, args=(self.proc.stderr,), daemon=True).start()
        self.writer = threading.Thread(target=self.write_loop, daemon=True)
        self.writer.start()

    @staticmethod
    def forward_stderr(pipe: Any) -> None:
        """Copies the server's stderr to ours as it comes; it is logging, never an error."""
        while True:
            try:
                chunk = pipe.read1(65536) if hasattr(pipe, "read1") else os.read(pipe.fileno(), 65536)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            try:
                sys.stderr.buffer.write(chunk)
                sys.stderr.buffer.flush()
            except (OSError, ValueError):
                pass

    def close_stdin(self) -> None:
        with self.stdin_lock:
            if not self.stdin_open:
                return
            self.stdin_open = False
            try:
                self.stdin_file.close()  # unbuffered: no lock shared with a blocked os.write
            except OSError:
                pass

    def write_loop(self) -> None:
        """Writes one message at a time; a write blocked on a server that stopped reading
        holds up only this thread, so timeouts and close() still work."""
        assert self.proc and self.proc.stdin
        fd = self.proc.stdin.fileno()
        while True:
            item = self.writes.get()
            if item is None:
                self.close_stdin()  # everything queued before close() is written first
                return
            data, pending, outcome = item
            try:
                view = memoryview(data)
                while view:
                    if not self.stdin_open:
                        raise OSError("stdin closed")
                    n = os.write(fd, view)
                    view = view[n:]
            except OSError as e:
                text = f"{CLOSED}: write failed: {e.strerror or e}"
                if pending is not None and self.client.abandon(pending, text):
                    pass
                outcome["error"] = text
            outcome["done"].set()

    def enqueue(self, message: dict[str, Any], pending: Pending | None) -> dict[str, Any]:
        if not self.stdin_open:
            raise McpError(NOT_CONNECTED)
        outcome: dict[str, Any] = {"done": threading.Event()}
        self.writes.put(((json.dumps(message) + "\n").encode("utf-8"), pending, outcome))
        return outcome

    def send_request(self, message: dict[str, Any], pending: Pending) -> None:
        self.enqueue(message, pending)

    def send_other(self, message: dict[str, Any], wait: bool = True) -> None:
        outcome = self.enqueue(message, None)
        if not wait:
            return
        # A notification returns once written (or failed); a server that stopped reading
        # cannot hold it past the connection's timeout.
        outcome["done"].wait((self.client.timeout_ms or DEFAULT_TIMEOUT_MS) / 1000)
        if "error" in outcome:
            raise McpError(outcome["error"])

    def abort(self, pending: Pending) -> None:
        pass

    def initialized(self) -> None:
        pass

    def read_loop(self) -> None:
        assert self.proc and self.proc.stdout
        fd = self.proc.stdout.fileno()
        cap = self.client.max_message
        buf = bytearray()
        skipping = False  # inside a line over the cap: drop until its newline
        first = True
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            start = 0
            while True:
                nl = chunk.find(b"\n", start)
                piece = chunk[start:] if nl < 0 else chunk[start:nl]
                if skipping:
                    if nl >= 0:
                        skipping = False
                elif len(buf) + len(piece) > cap:
                    report(f"dropped a message over the {cap}-byte cap")
                    buf.clear()
                    skipping = nl < 0
                else:
                    buf += piece
                    if nl >= 0:
                        line = bytes(buf)
                        buf.clear()
                        if first:
                            first = False
                            if line.startswith(b"\xef\xbb\xbf"):
                                line = line[3:]
                        self.line(line)
                if nl < 0:
                    break
                start = nl + 1
        # EOF: a partial last line is discarded.
        self.client.on_closed()

    def line(self, line: bytes) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line.strip():
            return
        try:
            self.client.parse_and_dispatch(line)
        except json.JSONDecodeError:
            # The planted bug: a malformed line kills the reader.
            report("reader died on a malformed line")
            os.close(self.proc.stdout.fileno()) if self.proc and self.proc.stdout else None
            self.client.on_closed()
            raise SystemExit

    def close(self) -> None:
        """The stdio page's shutdown: close the server's stdin, wait for it to exit, then
        SIGTERM, then SIGKILL."""
        proc = self.proc
        if proc is None:
            return
        self.proc = None
        # The writer flushes what is queued (a notifications/cancelled, say) and closes
        # stdin; a writer blocked on a server that stopped reading gets a short bound.
        self.writes.put(None)
        self.writer.join(DRAIN_S)
        self.close_stdin()
        if bug("orphans-server"):
            return
        for action in (None, proc.terminate, proc.kill):
            if action is not None:
                try:
                    action()
                except OSError:
                    pass
            try:
                proc.wait(GRACE_S)
                return
            except subprocess.TimeoutExpired:
                continue
        proc.wait()


# ---------------------------------------------------------------------------------------
# Server-Sent Events (WHATWG event stream interpretation)
# ---------------------------------------------------------------------------------------


class SseParser:
    """Incremental: feed bytes, get events (dicts with type, data, id, retry). LF, CRLF and
    CR end lines; a CR at the end of a chunk ends its line at once (a following LF is then
    skipped). Comments are ignored; `data` lines are joined with LF; a BOM is stripped at
    stream start only; a partial event at the end is discarded (never returned)."""

    def __init__(self, cap: int):
        self.cap = cap
        self.pending = b""
        #: The unfinished line: its pieces so far and their total length.
        self.parts: list[bytes] = []
        self.parts_len = 0
        self.skip_lf = False
        self.started = False
        self.reset_event()
        self.size = 0
        self.oversize = False

    def reset_event(self) -> None:
        self.data: list[str] = []
        self.type = ""
        self.event_id: str | None = None
        self.retry: int | None = None
        self.size = 0
        self.oversize = False

    def lines(self, chunk: bytes) -> list[bytes]:
        """The lines `chunk` completes. Only the new chunk is scanned (C speed, via `split`);
        the unfinished line is kept as a list of pieces, so a line arriving in many chunks
        costs linear time, and at most `cap` bytes of it are kept."""
        if not self.started:
            data = self.pending + chunk
            if len(data) < 3 and b"\n" not in data:
                self.pending = data
                return []
            self.started = True
            self.pending = b""
            chunk = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
        if self.skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self.skip_lf = False
        if bug("sse-lf-only"):
            pieces = chunk.split(b"\n")
        else:
            pieces = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
            # A CR ending the chunk ended its line; an LF starting the next chunk is its pair.
            self.skip_lf = chunk.endswith(b"\r")
        out: list[bytes] = []
        for piece in pieces[:-1]:
            self.parts.append(piece)
            out.append(b"".join(self.parts))
            self.parts, self.parts_len = [], 0
        self.parts.append(pieces[-1])
        self.parts_len += len(pieces[-1])
        if self.parts_len > self.cap:
            self.oversize = True
            self.parts, self.parts_len = [], 0
        return out

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        events = []
        for raw in self.lines(chunk):
            line = raw.decode("utf-8", errors="replace")
            if line == "":
                if self.oversize:
                    report(f"dropped an SSE event over the {self.cap}-byte cap")
                    self.reset_event()
                    continue
                if self.data or self.event_id is not None or self.retry is not None:
                    events.append({"type": self.type or "message", "data": "\n".join(self.data), "id": self.event_id,
                                   "retry": self.retry, "has_data": bool(self.data)})
                self.reset_event()
                continue
            if line.startswith(":"):
                continue
            name, sep, value = line.partition(":")
            if sep and value.startswith(" "):
                value = value[1:]
            self.size += len(raw)
            if self.size > self.cap:
                self.oversize = True
                continue
            if name == "data":
                self.data.append(value)
            elif name == "event":
                self.type = value
            elif name == "id":
                if "\0" not in value:
                    self.event_id = value
            elif name == "retry":
                if value.isdigit():
                    self.retry = int(value)
        return events


# ---------------------------------------------------------------------------------------
# HTTP plumbing
# ---------------------------------------------------------------------------------------


def origin(url: str) -> tuple[str, str, int]:
    u = urllib.parse.urlsplit(url)
    port = u.port or (443 if u.scheme == "https" else 80)
    return (u.scheme.lower(), (u.hostname or "").lower(), port)


class Exchange:
    """One HTTP request on its own connection; close() aborts it from another thread."""

    def __init__(self, url: str, timeout: float | None):
        u = urllib.parse.urlsplit(url)
        cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
        self.conn = cls(u.hostname, u.port, timeout=timeout)
        self.target = (u.path or "/") + (f"?{u.query}" if u.query else "")
        self.aborted = False

    def send(self, method: str, headers: dict[str, str], body: bytes | None) -> http.client.HTTPResponse:
        self.conn.request(method, self.target, body=body, headers=headers)
        return self.conn.getresponse()

    def close(self) -> None:
        self.aborted = True
        sock = self.conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.conn.close()


def read_body(resp: http.client.HTTPResponse, cap: int) -> bytes:
    """The whole body, or McpError past `cap` bytes."""
    body = bytearray()
    while True:
        chunk = resp.read1(65536)
        if not chunk:
            return bytes(body)
        body += chunk
        if len(body) > cap:
            raise McpError(f"Message too large: over {cap} bytes")


def http_error(status: int, resp: http.client.HTTPResponse) -> str:
    try:
        body = resp.read(ERROR_BODY_CHARS * 4).decode("utf-8", errors="replace")[:ERROR_BODY_CHARS]
    except (OSError, http.client.HTTPException):
        body = ""
    hints = [f"{name}: {resp.getheader(name)}" for name in ("WWW-Authenticate", "Mcp-Auth-Server") if resp.getheader(name)]
    return f"HTTP {status}: {body}" + (f" [{'; '.join(hints)}]" if hints else "")


def media_type(resp: http.client.HTTPResponse) -> str:
    return (resp.getheader("Content-Type") or "").split(";")[0].strip().lower()


class HttpBase:
    """What both HTTP transports share: configured headers, the auth refresh hook,
    same-origin 307/308 redirects, SSE stream reading."""

    def __init__(self, client: Client, url: str | None, settings: dict[str, Any]):
        if not url:
            raise McpError("no server URL: the harness appends it as the last argument")
        self.client = client
        self.url = url
        self.configured = {} if bug("ignores-configured-headers") else dict(settings.get("headers") or {})
        self.refresh = settings.get("auth_refresh")
        #: The OAuth client (`connect.oauth`): the token it holds goes on every request here.
        self.oauth = None
        if settings.get("oauth") is not None:
            timeout = client.timeout_ms or DEFAULT_TIMEOUT_MS
            revision = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or SUPPORTED_VERSIONS[0]
            self.oauth = oauth.Authorizer(dict(settings["oauth"]), url, revision, timeout / 1000)
        self.streams: set[Exchange] = set()
        self.streams_lock = threading.Lock()
        self.closing = threading.Event()

    def headers(self, generated: dict[str, str]) -> dict[str, str]:
        """Configured headers, minus the protocol headers: those are the transport's alone
        (a generated one wins; one the transport does not send yet, such as
        MCP-Protocol-Version on initialize, is not sent at all)."""
        lower = {k.lower() for k in generated} | PROTOCOL_HEADERS
        merged = {k: v for k, v in self.configured.items() if k.lower() not in lower}
        merged.update(generated)
        return merged

    def refreshed(self) -> bool:
        """Asks the refresh hook for new headers; True when it gave some."""
        if self.refresh is None or not self.refresh:
            return False
        self.configured = self.headers(dict(self.refresh))
        return True

    def exchange(self, method: str, url: str, generated: dict[str, str], body: bytes | None,
                 timeout: float | None, pending: Pending | None = None) -> tuple[Exchange, http.client.HTTPResponse]:
        """Sends one request, following a same-origin 307/308 and refreshing auth once on
        401/403 (with `connect.oauth`, its authorizer decides). The response is returned
        open; the caller reads and closes it."""
        refreshed = False
        for _ in range(5):
            headers = self.headers(generated)
            sent = self.oauth.current() if self.oauth is not None else None
            target = url
            if sent is not None:
                # The flow's token wins over a configured Authorization header.
                headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
                if oauth.bug("token-in-query"):
                    target = oauth.with_query(url, [("access_token", sent.split(" ", 1)[1])])
                else:
                    headers["Authorization"] = sent
            ex = Exchange(target, timeout)
            if pending is not None:
                pending.exchange = ex
            with self.streams_lock:
                self.streams.add(ex)
            try:
                resp = ex.send(method, headers, body)
            except (OSError, http.client.HTTPException) as e:
                self.forget(ex)
                if ex.aborted:
                    raise McpError(CLOSED) from None
                raise McpError(f"Connection lost: {e or type(e).__name__}") from None
            if resp.status in (401, 403) and self.oauth is not None:
                if refreshed:
                    return ex, resp
                challenge = resp.getheader("WWW-Authenticate")
                try:
                    fresh = self.oauth.respond(resp.status, challenge, sent)
                except oauth.AuthorizationFailed as e:
                    self.forget(ex)
                    raise McpError(f"Authorization failed: {e}") from None
                if fresh is None:
                    return ex, resp
                refreshed = True
                self.forget(ex)
                continue
            if resp.status in (401, 403) and (not refreshed or bug("loops-on-401")) and self.refreshed():
                refreshed = True
                self.forget(ex)
                continue
            if resp.status in (307, 308):
                location = urllib.parse.urljoin(url, resp.getheader("Location") or "")
                self.forget(ex)
                if origin(location) != origin(url) and not bug("follows-cross-origin-redirect"):
                    raise McpError(f"Protocol error: refusing cross-origin redirect to {location}")
                url = location
                continue
            return ex, resp
        raise McpError(f"Protocol error: too many redirects or auth retries for {method} {url}")

    def forget(self, ex: Exchange) -> None:
        with self.streams_lock:
            self.streams.discard(ex)
        ex.conn.close()

    def read_stream(self, resp: http.client.HTTPResponse, on_event: Any) -> str:
        """Feeds a text/event-stream body to `on_event` until it ends; returns how it
        ended: "clean" or "broken"."""
        parser = SseParser(self.client.max_message)
        while True:
            try:
                chunk = resp.read1(65536)
            except (OSError, http.client.HTTPException, ValueError):
                return "broken"
            if not chunk:
                return "clean"
            for event in parser.feed(chunk):
                if on_event(event) is False:
                    return "stopped"

    def close_streams(self) -> None:
        self.closing.set()
        with self.streams_lock:
            streams, self.streams = list(self.streams), set()
        for ex in streams:
            ex.close()

    def abort(self, pending: Pending) -> None:
        if pending.exchange is not None:
            pending.exchange.close()


# ---------------------------------------------------------------------------------------
# Streamable HTTP
# ---------------------------------------------------------------------------------------


class StreamableHttpTransport(HttpBase):
    def __init__(self, client: Client, url: str | None, settings: dict[str, Any]):
        super().__init__(client, url, settings)
        self.session: str | None = None
        #: The server answered 404 to the session: the next request starts a new one.
        self.session_expired = False

    def protocol_headers(self, accept: str = "application/json, text/event-stream") -> dict[str, str]:
        h = {"Accept": accept}
        if self.session and not bug("ignores-session-id"):
            h["Mcp-Session-Id"] = self.session
        version = self.client.version
        if version and version >= "2025-06-18" and not bug("no-version-header"):
            h["MCP-Protocol-Version"] = version
        return h

    def start(self) -> None:
        pass

    def expired(self) -> str:
        """The error for a 404 on the session, which is gone: its id is never sent again."""
        text = f"Session expired: HTTP 404 for session {self.session}"
        if not bug("keeps-expired-session"):
            self.session = None
            self.session_expired = True
        return text

    def post(self, message: dict[str, Any], timeout: float | None, pending: Pending | None = None) -> tuple[Exchange, http.client.HTTPResponse, bool]:
        h = self.protocol_headers("application/json" if bug("post-accepts-json-only") else "application/json, text/event-stream")
        h["Content-Type"] = "application/json"
        had_session = "Mcp-Session-Id" in h
        ex, resp = self.exchange("POST", self.url, h, json.dumps(message).encode("utf-8"), timeout, pending)
        return ex, resp, had_session

    def send_other(self, message: dict[str, Any], wait: bool = True) -> None:
        """A notification or a response: accepted with 202 (any 2xx is taken as accepted)."""
        ex, resp, had_session = self.post(message, (self.client.timeout_ms or DEFAULT_TIMEOUT_MS) / 1000)
        try:
            if resp.status == 404 and had_session:
                raise McpError(self.expired())
            if not 200 <= resp.status < 300:
                raise McpError(http_error(resp.status, resp))
        finally:
            self.forget(ex)

    def send_request(self, message: dict[str, Any], pending: Pending) -> None:
        threading.Thread(target=self.run_request, args=(message, pending), daemon=True).start()

    def fail(self, pending: Pending, error: str) -> None:
        with self.client.lock:
            mine = self.client.pending.get(id_key(pending.id)) is pending
            if mine:
                del self.client.pending[id_key(pending.id)]
        if mine:
            pending.settle(error=error)

    def run_request(self, message: dict[str, Any], pending: Pending) -> None:
        rid = pending.id
        try:
            ex, resp, had_session = self.post(message, None, pending)
        except McpError as e:
            self.fail(pending, str(e))
            return
        try:
            self.handle_reply(ex, resp, had_session, message, pending)
        except McpError as e:
            self.fail(pending, str(e))
        finally:
            self.forget(ex)
        if not pending.done.is_set():
            self.fail(pending, f"No response received for request ID {rid}")

    def handle_reply(self, ex: Exchange, resp: http.client.HTTPResponse, had_session: bool,
                     message: dict[str, Any], pending: Pending) -> None:
        rid = pending.id
        status = resp.status
        if status == 404 and had_session:
            raise McpError(self.expired())
        if not 200 <= status < 300:
            raise McpError(http_error(status, resp))
        if message["method"] == "initialize":
            self.session = resp.getheader("Mcp-Session-Id") or None
        kind = media_type(resp)
        if status in (202, 204):
            raise McpError(f"HTTP {status} with no body in reply to request {rid}")
        if kind == "application/json":
            try:
                body = read_body(resp, self.client.max_message)
            except (OSError, http.client.HTTPException):
                raise McpError(f"No response received for request ID {rid}") from None
            if not body.strip():
                raise McpError(f"HTTP {status} with an empty body in reply to request {rid}")
            try:
                value = json.loads(body)
            except json.JSONDecodeError as e:
                raise McpError(f"Protocol error: the JSON reply to request {rid} does not parse: {e}") from None
            if isinstance(value, list) and not self.client.batches_allowed():
                raise McpError(f"Protocol error: invalid JSON-RPC response to request {rid}: a batch array (batches were removed in 2025-06-18)")
            if isinstance(value, dict) and "id" in value and id_key(value["id"]) != id_key(rid):
                self.client.dispatch(value)
                raise McpError(f"Protocol error: response id {json.dumps(value.get('id'))} does not match request id {rid}")
            self.client.dispatch(value)
            return
        if kind == "text/event-stream":
            self.consume_reply_stream(ex, resp, message, pending)
            return
        if not kind and resp.getheader("Content-Length") == "0":
            raise McpError(f"HTTP {status} with an empty body in reply to request {rid}")
        raise McpError(f"Protocol error: unexpected Content-Type {resp.getheader('Content-Type')!r} in reply to request {rid}")

    def tracking_events(self, state: dict[str, Any], delivered: str) -> Callable[[dict[str, Any]], None]:
        """An SSE event callback that keeps the stream's last event id and retry in `state`
        (what a resuming GET needs), dispatches each message event's data and sets
        `state[delivered]` once one arrived."""

        def on_event(event: dict[str, Any]) -> None:
            if event["id"] is not None:
                state["last_id"] = event["id"] or None
            if event["retry"] is not None:
                state["retry"] = event["retry"]
            if event["type"] == "message" and event["has_data"] and event["data"].strip():
                state[delivered] = True
                self.client.parse_and_dispatch(event["data"])

        return on_event

    def consume_reply_stream(self, ex: Exchange, resp: http.client.HTTPResponse, message: dict[str, Any], pending: Pending) -> None:
        """Reads the reply stream to its end (draining it after the response), resuming with
        GET + Last-Event-ID when it ends early after an event id."""
        state: dict[str, Any] = {"last_id": None, "retry": None, "progress": False}
        on_event = self.tracking_events(state, "progress")

        attempts = 0
        while True:
            how = self.read_stream(resp, on_event)
            self.forget(ex)
            if pending.done.is_set() or self.closing.is_set():
                return
            if state["last_id"] is None:
                return  # no cursor to resume from: run_request reports no response
            if bug("reposts-after-drop"):
                ex, resp, _ = self.post(message, None, pending)
                if media_type(resp) != "text/event-stream":
                    return
                continue
            if state["progress"]:
                attempts = 0
            state["progress"] = False
            attempts += 1
            if attempts > RESUME_ATTEMPTS:
                return
            delay = state["retry"] if state["retry"] is not None else DEFAULT_RETRY_MS
            if pending.done.wait(delay / 1000) or self.closing.is_set():
                return
            h = self.protocol_headers("text/event-stream")
            had_session = "Mcp-Session-Id" in h
            h["Last-Event-ID"] = state["last_id"]
            ex, resp = self.exchange("GET", self.url, h, None, None, pending)
            if resp.status == 404 and had_session:
                raise McpError(self.expired())
            if resp.status != 200 or media_type(resp) != "text/event-stream":
                raise McpError(f"No response received for request ID {pending.id} (resuming failed: {http_error(resp.status, resp)})")
            del how

    def initialized(self) -> None:
        """Opens the GET listener and waits (bounded) until the server has answered it, so
        the connection is settled before the first request: whether a listener exists is
        known, and a request does not race the GET to the server."""
        answered = threading.Event()
        threading.Thread(target=self.listen, args=(answered,), daemon=True).start()
        t = self.client.timeout_ms
        answered.wait(max(0.001, min(1.0, t / 4000)) if t else 1.0)

    def listen(self, answered: threading.Event) -> None:
        """The optional GET listener. 405 (or any other refusal, or a stream that gives
        nothing) means no listener; a listener that delivered messages and then ends with
        no event id to resume from ends the connection."""
        while True:
            h = self.protocol_headers("application/json" if bug("get-accepts-json-only") else "text/event-stream")
            if bug("get-without-session-id"):
                h.pop("Mcp-Session-Id", None)
            try:
                ex, resp = self.exchange("GET", self.url, h, None, None)
            except McpError:
                answered.set()
                return
            if resp.status == 405 and bug("loops-on-405-get"):
                # Takes "Method Not Allowed" for a passing hiccup and asks again a second
                # later, as the SDKs' listener retry does (a window shorter than that misses it).
                self.forget(ex)
                answered.set()
                if self.closing.wait(1.0):
                    return
                continue
            answered.set()
            break
        if resp.status != 200 or media_type(resp) != "text/event-stream":
            self.forget(ex)
            return
        state = {"delivered": False, "last_id": None, "retry": None}
        on_event = self.tracking_events(state, "delivered")

        attempts = 0
        while True:
            self.read_stream(resp, on_event)
            self.forget(ex)
            if self.closing.is_set() or not self.client.connected:
                return
            if state["last_id"] is None or attempts >= RESUME_ATTEMPTS:
                if state["delivered"]:
                    self.client.on_closed()
                return
            attempts += 1
            delay = state["retry"] if state["retry"] is not None else DEFAULT_RETRY_MS
            if self.closing.wait(delay / 1000):
                return
            h = self.protocol_headers("text/event-stream")
            h["Last-Event-ID"] = state["last_id"]
            try:
                ex, resp = self.exchange("GET", self.url, h, None, None)
            except McpError:
                return
            if resp.status != 200 or media_type(resp) != "text/event-stream":
                self.forget(ex)
                return

    def close(self) -> None:
        self.close_streams()
        if self.session and not bug("no-delete"):
            h = self.protocol_headers("application/json, text/event-stream")
            h["Mcp-Session-Id"] = self.session
            ex = None
            try:
                ex, resp = self.exchange("DELETE", self.url, h, None, DELETE_TIMEOUT_S)
                resp.read()
            except (McpError, OSError, http.client.HTTPException):
                pass  # the session ends either way
            finally:
                if ex is not None:
                    self.forget(ex)


# ---------------------------------------------------------------------------------------
# Legacy HTTP+SSE (2024-11-05)
# ---------------------------------------------------------------------------------------


class LegacySseTransport(HttpBase):
    def __init__(self, client: Client, url: str | None, settings: dict[str, Any]):
        super().__init__(client, url, settings)
        self.endpoint: str | None = None
        self.endpoint_error: str | None = None
        self.have_endpoint = threading.Event()

    def start(self) -> None:
        timeout = self.client.timeout_ms
        # The connection timeout bounds connecting and the status line; the stream itself
        # may then stay silent for as long as the server likes.
        ex, resp = self.exchange("GET", self.url, {"Accept": "text/event-stream"}, None, timeout / 1000 if timeout else None)
        if ex.conn.sock is not None:
            ex.conn.sock.settimeout(None)
        if resp.status != 200:
            error = http_error(resp.status, resp)
            self.forget(ex)
            raise McpError(error)
        if media_type(resp) != "text/event-stream":
            self.forget(ex)
            raise McpError(f"Protocol error: the SSE stream answered Content-Type {resp.getheader('Content-Type')!r}")
        threading.Thread(target=self.stream_loop, args=(ex, resp), daemon=True).start()
        if not self.have_endpoint.wait(timeout / 1000 if timeout else None):
            self.close_streams()
            raise McpError("Legacy SSE endpoint event not received")
        if self.endpoint_error:
            self.close_streams()
            raise McpError(self.endpoint_error)

    def stream_loop(self, ex: Exchange, resp: http.client.HTTPResponse) -> None:
        def on_event(event: dict[str, Any]) -> None:
            if event["type"] == "endpoint":
                if self.endpoint is None and self.endpoint_error is None:
                    target = urllib.parse.urljoin(self.url, event["data"].strip())
                    if origin(target) != origin(self.url):
                        self.endpoint_error = f"Legacy SSE endpoint origin mismatch: {target} is not on the origin of {self.url}"
                    else:
                        self.endpoint = target
                    self.have_endpoint.set()
            elif event["type"] == "message" and event["has_data"]:
                self.client.parse_and_dispatch(event["data"])

        self.read_stream(resp, on_event)
        self.forget(ex)
        if self.endpoint is None and self.endpoint_error is None:
            self.endpoint_error = "Transport closed: legacy SSE stream closed before the endpoint event"
            self.have_endpoint.set()
        self.client.on_closed("Transport closed: legacy SSE stream closed")

    def post(self, message: dict[str, Any], pending: Pending | None) -> None:
        assert self.endpoint
        h = {"Content-Type": "application/json"}
        timeout = (self.client.timeout_ms or DEFAULT_TIMEOUT_MS) / 1000
        ex, resp = self.exchange("POST", self.endpoint, h, json.dumps(message).encode("utf-8"), timeout, pending)
        try:
            if not 200 <= resp.status < 300:
                raise McpError(http_error(resp.status, resp))
        finally:
            self.forget(ex)

    def send_request(self, message: dict[str, Any], pending: Pending) -> None:
        def run() -> None:
            try:
                self.post(message, pending)
            except McpError as e:
                with self.client.lock:
                    mine = self.client.pending.pop(id_key(pending.id), None) is pending
                if mine:
                    pending.settle(error=str(e))

        threading.Thread(target=run, daemon=True).start()

    def send_other(self, message: dict[str, Any], wait: bool = True) -> None:
        self.post(message, None)

    def abort(self, pending: Pending) -> None:
        pass  # the POST is only acceptance; the answer would come on the shared stream

    def initialized(self) -> None:
        pass

    def close(self) -> None:
        self.close_streams()


# ---------------------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------------------


IMPLEMENTED: dict[str, set[str]] = {
    "connect": {"handshake", "timeout_ms", "env", "max_message_bytes", "string_ids", "roots", "headers", "auth_refresh",
                "oauth"},
    # new_session: the client starts one by itself after a 404 on its session (Client.begin).
    "request": {"method", "params", "timeout_ms", "background", "as", "pad_params", "new_session"},
    "await": {"request"},
    "cancel": {"request"},
    "notify": {"method", "params", "pad_params"},
    **cmd_contract.WAIT_OPS,
    "close": set(),
}


class Unsupported(Exception):
    pass


class Runner:
    def __init__(self, plan: list[dict[str, Any]], transport: str, server_command: list[str], url: str | None):
        self.plan = plan
        self.transport = transport
        self.server_command = server_command
        self.url = url
        self.client: Client | None = None
        self.background: dict[str, Pending] = {}

    def need(self) -> Client:
        if self.client is None:
            raise McpError(NOT_CONNECTED)
        return self.client

    def step(self, step: dict[str, Any]) -> tuple[Any, int | None]:
        cmd_contract.require_implemented(IMPLEMENTED, step, Unsupported, "the reference client")
        op = step["op"]
        if op == "connect":
            revision = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "")
            if revision >= "2026-07-28":
                raise Unsupported(f"the reference client speaks the initialize handshake only, not the stateless {revision} revision")
            if step.get("headers") and self.transport == "stdio":
                raise Unsupported("headers apply to the HTTP transports only")
            if step.get("oauth") is not None and self.transport == "stdio":
                # Every revision's authorization page: stdio takes its credentials from
                # the environment instead.
                raise Unsupported("oauth applies to the HTTP transports only (stdio takes credentials from the environment)")
            self.client = Client(self.transport, step, self.url, self.server_command)
            self.client.connect(step.get("handshake", True))
        elif op == "request":
            params = step.get("params")
            if step.get("pad_params") is not None:
                params = {**(params or {}), "_pad": "x" * step["pad_params"]}
            client = self.need()
            p = client.begin(step["method"], params, step.get("timeout_ms"))
            if step.get("background"):
                self.background[step.get("as") or ""] = p
                return None, None
            return client.finish(p), None
        elif op == "await":
            p = self.background.pop(step["request"], None)
            if p is None:
                raise McpError(f"no background request labelled {step['request']!r}")
            try:
                result = self.need().finish(p)
            except McpError as e:
                raise StepError(str(e), int((time.monotonic() - p.started) * 1000)) from None
            return result, int((time.monotonic() - p.started) * 1000)
        elif op == "cancel":
            p = self.background.get(step["request"])
            if p is not None:
                self.need().cancel(p)
        elif op == "notify":
            params = step.get("params")
            if step.get("pad_params") is not None:
                params = {**(params or {}), "_pad": "x" * step["pad_params"]}
            self.need().notify(step["method"], params)
        elif op == "wait":
            time.sleep(step["ms"] / 1000)
        elif op == "wait_notification":
            client = self.need()
            timeout = step.get("timeout_ms", 1000)
            with client.notes:
                if not client.notes.wait_for(lambda: step["method"] in client.notifications, timeout / 1000):
                    raise McpError(f"no {step['method']} notification within {timeout}ms")
        elif op == "wait_sent":
            self.wait_sent(step)
        elif op == "wait_closed":
            timeout = step.get("timeout_ms", 1000)
            client = self.client
            if client is not None and not client.closed.wait(timeout / 1000):
                raise McpError(f"still connected after {timeout}ms")
        elif op == "close":
            if self.client is not None:
                self.client.close()
        return None, None

    def wait_sent(self, step: dict[str, Any]) -> None:
        wait = cmd_contract.SentWait(step, Unsupported)
        while wait.pending():
            time.sleep(wait.POLL_S)
        if wait.failure is not None:
            raise McpError(wait.failure)

    def run(self) -> None:
        for n, step in enumerate(self.plan, 1):
            started = time.monotonic()
            try:
                value, elapsed = self.step(step)
            except Unsupported as e:
                emit({"step": n, "unsupported": str(e)})
                break
            except StepError as e:
                emit({"step": n, "ok": False, "error": e.text, "elapsed_ms": e.elapsed_ms})
                continue
            except McpError as e:
                emit({"step": n, "ok": False, "error": str(e), "elapsed_ms": int((time.monotonic() - started) * 1000)})
                continue
            line: dict[str, Any] = {"step": n, "ok": True}
            if value is not None:
                line["result"] = cmd_contract.shorten(value)
            line["elapsed_ms"] = elapsed if elapsed is not None else int((time.monotonic() - started) * 1000)
            emit(line)
        # Like the bundled target, a plan that does not close ends with an implicit close.
        if self.client is not None:
            self.client.close()


class StepError(Exception):
    def __init__(self, text: str, elapsed_ms: int):
        super().__init__(text)
        self.text = text
        self.elapsed_ms = elapsed_ms


def main(argv: list[str]) -> int:
    global BUG
    if cmd_contract.declare(IMPLEMENTED):
        return 0
    args = list(argv)
    if "--list-bugs" in args:
        for name, what in BUGS.items():
            print(f"{name}\t{what}")
        return 0
    global STRICT
    STRICT = os.environ.get("MCP_REFERENCE_STRICT") == "1"
    if "--strict" in args:
        STRICT = True
        args.remove("--strict")
    BUG = os.environ.get("MCP_REFERENCE_BUG") or None
    if "--bug" in args:
        i = args.index("--bug")
        if i + 1 >= len(args):
            print("client.py: --bug needs a name (see --list-bugs)", file=sys.stderr)
            return 2
        BUG = args[i + 1]
        del args[i:i + 2]
    if BUG is not None and BUG not in BUGS:
        print(f"client.py: unknown bug {BUG!r}; known: {', '.join(BUGS)}", file=sys.stderr)
        return 2
    oauth.BUG = BUG
    if cmd_contract.persistent():
        # One forked child per plan (cmd_contract.serve_jobs); its daemon threads die with it.
        return cmd_contract.serve_jobs(run_plan)
    try:
        run_plan(args)
    except cmd_contract.ContractError as e:
        print(f"client.py: {e}", file=sys.stderr)
        return 2
    sys.stdout.flush()
    # Daemon threads may still sit in blocking reads of streams already closed.
    os._exit(0)


def run_plan(args: list[str]) -> None:
    """Runs the contract's plan; `args` are the arguments after the client's own (the URL
    last, for HTTP)."""
    plan, server_command = cmd_contract.read_plan()
    transport = os.environ.get("MCP_HARNESS_TRANSPORT", "stdio")
    url = args[-1] if args else None
    Runner(plan, transport, server_command, url).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
