"""A client that connects and then does nothing: the harness's self-test (DESIGN "A verdict is
earned"). It opens the connection the run's transport asks for, makes the revision's opening
exchange (the initialize handshake, or a `server/discover` on 2026-07-28), then either prints
no step line and waits to be killed at the run deadline (`idle`), or, with `--claim`, reports
every plan step ok without doing any of it and exits 0 (`claims`: a driver that ignores its
plan). It must pass no scenario: whatever the scenario's fault is, this client never handles it.

Python 3 standard library only, like the reference client.
"""

import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request

REVISION = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
STATELESS = REVISION >= "2026-07-28"
INFO = {"name": "selftest-idle", "version": "0"}


def opening():
    """The revision's first request: initialize, or a 2026-07-28 discover with its `_meta`."""
    if STATELESS:
        meta = {
            "io.modelcontextprotocol/protocolVersion": REVISION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": INFO,
        }
        return {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
    params = {"protocolVersion": REVISION, "capabilities": {}, "clientInfo": INFO}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}


CLAIM = "--claim" in sys.argv


def idle():
    """Does nothing until killed; with --claim, reports every plan step ok and exits 0."""
    if CLAIM:
        path = os.environ.get("MCP_HARNESS_PLAN_FILE")
        plan = json.load(open(path)) if path else json.loads(os.environ.get("MCP_HARNESS_PLAN", "[]"))
        for step in range(1, len(plan) + 1):
            print(json.dumps({"step": step, "ok": True}), flush=True)
        os._exit(0)
    while True:
        time.sleep(3600)


def stdio():
    command = json.loads(os.environ["MCP_HARNESS_SERVER_COMMAND"])
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    server.stdin.write((json.dumps(opening()) + "\n").encode())
    server.stdin.flush()
    server.stdout.readline()
    if not STATELESS:
        server.stdin.write((json.dumps(INITIALIZED) + "\n").encode())
        server.stdin.flush()
    idle()


def post(url, message, headers):
    request = urllib.request.Request(url, data=json.dumps(message).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    if STATELESS:
        request.add_header("MCP-Protocol-Version", REVISION)
        request.add_header("Mcp-Method", message["method"])
    for name, value in headers.items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
            return response.headers
    except OSError:
        return {}


def http(url):
    headers = post(url, opening(), {})
    if not STATELESS:
        session = headers.get("Mcp-Session-Id")
        extra = {"Mcp-Session-Id": session} if session else {}
        post(url, INITIALIZED, extra)
    idle()


def legacy_sse(url):
    stream = urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": "text/event-stream"}), timeout=30)
    event = None
    for raw in stream:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:") and event == "endpoint":
            endpoint = urllib.parse.urljoin(url, line[5:].strip())
            post(endpoint, opening(), {})
            post(endpoint, INITIALIZED, {})
            break
    idle()


def url():
    """The server URL: the last argument that is not this client's own flag."""
    return [a for a in sys.argv[1:] if a != "--claim"][-1]


def main():
    transport = os.environ.get("MCP_HARNESS_TRANSPORT", "stdio")
    if transport == "stdio":
        stdio()
    elif transport == "legacy-sse":
        legacy_sse(url())
    else:
        http(url())


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # noqa: BLE001 - idles whatever happened: it must never exit early
        print(f"idle: {error}", file=sys.stderr)
        idle()
