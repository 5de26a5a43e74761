"""The `cmd:` contract's inputs, shared by the Python drivers (clients/python/driver.py and
clients/reference/client.py): the plan, the mock's command line, and the mock's wire records
that `wait_sent` counts. Standard library only, because the reference client runs with
`python -I -S`. See clients/README.md for the contract itself.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any


class ContractError(Exception):
    """The harness's environment is missing or malformed (the client was not run by it)."""


def read_plan() -> tuple[list[dict[str, Any]], list[str]]:
    """The plan (MCP_HARNESS_PLAN_FILE, always written; else inline MCP_HARNESS_PLAN) and the
    mock's command line (MCP_HARNESS_SERVER_COMMAND, stdio only)."""
    try:
        plan_file = os.environ.get("MCP_HARNESS_PLAN_FILE")
        if plan_file is not None:
            with open(plan_file, encoding="utf-8") as f:
                plan = json.load(f)
        else:
            plan = json.loads(os.environ["MCP_HARNESS_PLAN"])
        server_command = json.loads(os.environ.get("MCP_HARNESS_SERVER_COMMAND", "[]"))
    except (KeyError, OSError, json.JSONDecodeError) as e:
        raise ContractError(
            f"MCP_HARNESS_PLAN_FILE / MCP_HARNESS_PLAN missing or not JSON ({e}); run me through mcp-harness --target cmd:…"
        ) from None
    return plan, server_command


def count_sent(step: dict[str, Any]) -> int | None:
    """How many client messages the mock has recorded that match a `wait_sent` step; None when
    MCP_HARNESS_RUN_DIR is not set (an older harness).

    The mock's records (`conn-<n>.jsonl` in MCP_HARNESS_RUN_DIR, one wire event per line) are
    the only place the client's own background traffic is visible.
    """
    run_dir = os.environ.get("MCP_HARNESS_RUN_DIR")
    if not run_dir:
        return None
    count = 0
    for name in os.listdir(run_dir):
        if not (name.startswith("conn-") and name.endswith(".jsonl")):
            continue
        with open(os.path.join(run_dir, name), encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    e = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line the mock is still writing
                if e.get("event") not in ("from_client", "http_request"):
                    continue
                if "http_method" in step and e.get("http_method") != step["http_method"]:
                    continue
                body = e.get("json")
                if "method" in step and (not isinstance(body, dict) or body.get("method") != step["method"]):
                    continue
                count += 1
    return count


def require_implemented(performs: dict[str, set[str]], step: dict[str, Any], unsupported: type[Exception], who: str) -> None:
    """Raises `unsupported` for a step whose op, or one of whose fields, the driver's table
    (`performs`, its IMPLEMENTED) lacks: a field the driver does not know is refused, never
    silently run without. `who` names the driver in the reason."""
    op = step.get("op")
    known = performs.get(op)
    if known is None:
        raise unsupported(f"plan op {op!r} is unknown to {who}")
    unknown = sorted(k for k in step if k != "op" and k not in known)
    if unknown:
        raise unsupported(f"{who} does not apply {op} field(s) {', '.join(unknown)}")


#: Strings in results longer than this are shortened, so a large reply cannot flood stdout.
MAX_STRING = 4096


def shorten(value: Any) -> Any:
    """`value` with every string longer than MAX_STRING cut there and marked with its length."""
    if isinstance(value, str):
        return value if len(value) <= MAX_STRING else f"{value[:MAX_STRING]}…({len(value)} chars)"
    if isinstance(value, list):
        return [shorten(v) for v in value]
    if isinstance(value, dict):
        return {k: shorten(v) for k, v in value.items()}
    return value


#: The contract's wait ops with their fields, for a driver's IMPLEMENTED table: a Python driver
#: handles all four, `wait_sent` through SentWait (which reads each of its fields), the others
#: on its own event model.
WAIT_OPS: dict[str, set[str]] = {
    "wait": {"ms"},
    "wait_notification": {"method", "timeout_ms"},
    "wait_sent": {"method", "http_method", "count", "timeout_ms"},
    "wait_closed": {"timeout_ms"},
}


class SentWait:
    """A `wait_sent` step: until the mock has recorded `count` (1) matching client messages, at
    most `timeout_ms` (1000). Another process writes the records, so there is no in-process
    event to wait on: the driver polls `pending()` every POLL_S, with its own sleep (a thread's
    or an event loop's), and raises `failure` when the wait ended short."""

    POLL_S = 0.005

    def __init__(self, step: dict[str, Any], unsupported: type[Exception]):
        self.step = step
        self.unsupported = unsupported
        self.timeout_ms = step.get("timeout_ms", 1000)
        self.want = step.get("count", 1)
        self.deadline = time.monotonic() + self.timeout_ms / 1000
        self.failure: str | None = None

    def pending(self) -> bool:
        """Whether to poll again: False once enough are recorded, or (with `failure` set) once
        the time is up. Raises `unsupported` when the harness names no run directory."""
        count = count_sent(self.step)
        if count is None:
            raise self.unsupported("MCP_HARNESS_RUN_DIR is not set (an older harness?)")
        if count >= self.want:
            return False
        if time.monotonic() >= self.deadline:
            self.failure = f"the mock saw fewer than {self.want} such message(s) within {self.timeout_ms}ms"
            return False
        return True


#: The variable that asks a driver for the persistent mode (clients/README.md, "Persistent drivers").
PERSISTENT_ENV = "MCP_HARNESS_PERSISTENT"


#: The driver contract version the Python drivers here are written against (clients/CONTRACT.md).
CONTRACT = "2026-12-05.2"


def declare(performs: dict[str, set[str]]) -> bool:
    """With MCP_HARNESS_DECLARE=1: print the driver's declaration (each op it handles and that
    op's fields, from the table that also refuses unknown fields) and say so; the caller exits."""
    if os.environ.get("MCP_HARNESS_DECLARE") != "1":
        return False
    print(json.dumps({"contract": CONTRACT, "performs": {op: sorted(fields) for op, fields in performs.items()}}), flush=True)
    return True


def persistent() -> bool:
    """Whether the harness started this driver to serve many plans."""
    return os.environ.get(PERSISTENT_ENV) == "1"


def serve_jobs(run_plan: Callable[[list[str]], None]) -> int:
    """The persistent mode's loop: announce it, then serve one job line of stdin at a time.

    Each job runs in a child forked from this process, which has done the expensive part
    (the interpreter and the SDK imports) once: the child takes the job's environment, stdin
    from /dev/null and `run_plan(args)` (it reads the contract as a one-shot driver does and
    returns once its connection is closed), then exits. Nothing of a plan can reach the next
    (environment, directory, event loop, the SDK's globals, garbage still to be finalized),
    which an in-process loop would have to clean by hand. The child writes its lines straight
    to stdout; once it has exited 0 this process prints `{"done": N}`. A child that fails
    ends this process the same way (its exit code, or its signal), so the harness sees the
    crash exactly as it would a one-shot driver's. stdin's end ends the driver (exit 0); a job
    line that breaks the framing ends it with 2.
    """
    _emit({"persistent": 1})
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            job = json.loads(line)
            number, env, args = job["run"], job["env"], job.get("args", [])
            if not (isinstance(number, int) and isinstance(env, dict) and isinstance(args, list)):
                raise ValueError("wrong types")
        except (ValueError, KeyError, TypeError) as e:
            print(f'cmd_contract: a job line is not {{"run":N,"env":{{…}},"args":[…]}} ({e}): {line[:200]!r}', file=sys.stderr)
            return 2
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os._exit(_run_child(run_plan, env, args))
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            if os.WIFSIGNALED(status):
                signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
                os.kill(os.getpid(), os.WTERMSIG(status))
            return os.waitstatus_to_exitcode(status)
        _emit({"done": number})
    return 0


def _run_child(run_plan: Callable[[list[str]], None], env: dict[str, Any], args: list[Any]) -> int:
    """One job in the forked child: its exit code."""
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.environ.update({str(k): str(v) for k, v in env.items()})
        run_plan([str(a) for a in args])
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except ContractError as e:
        print(f"cmd_contract: {e}", file=sys.stderr)
        code = 2
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
