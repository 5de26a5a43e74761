#!/usr/bin/env node
// mcp-harness driver for the TypeScript MCP SDK (@modelcontextprotocol/sdk, pinned in
// package.json). Runs the client plan from MCP_HARNESS_PLAN and prints one JSON line per
// step on stdout, as clients/README.md specifies. Plain ESM JavaScript so there is no build
// step: `npm ci` is the whole install.
//
// The driver translates plan ops into what an application would call (Client.listTools,
// Client.callTool, Client.request, AbortSignal for cancellation, …) and reports the SDK's own
// error text. It never works around the SDK: an op the SDK cannot express is reported
// `unsupported` with the reason, and the plan stops there.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import {
  ListRootsRequestSchema,
  ResultSchema,
  EmptyResultSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ReadResourceResultSchema,
  ListPromptsResultSchema,
  GetPromptResultSchema,
  CompleteResultSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  LATEST_PROTOCOL_VERSION,
} from "@modelcontextprotocol/sdk/types.js";
import { createRequire } from "node:module";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

const SDK_VERSION = createRequire(import.meta.url)("@modelcontextprotocol/sdk/package.json").version;
/**
 * The installed SDK's version, read from its own package.json. (SDK_VERSION above resolves
 * through the package's exports to a nested package.json without a version, so clientInfo
 * has carried no version; kept as it is so the committed transcripts stay comparable.)
 */
const INSTALLED_SDK_VERSION = JSON.parse(
  readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url), "utf8"),
).version;
/** Strings in results longer than this are shortened, so a large reply cannot flood stdout. */
const MAX_STRING = 4096;
/** "Disabled" timeouts (`timeout_ms: 0`) become the largest timer Node accepts. */
const NO_TIMEOUT = 2 ** 31 - 1;

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

/**
 * Exits once everything emitted is out. A write larger than the pipe's buffer (a step
 * whose error quotes a 1 MiB body) finishes asynchronously, and `process.exit` drops what
 * is still queued: the harness saw 256 KiB of the line and then "exited 0 before
 * reporting this step".
 */
function exitWhenWritten(code) {
  process.stdout.write("", () => process.exit(code));
}

function shorten(value) {
  if (typeof value === "string") {
    return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…(${value.length} chars)` : value;
  }
  if (Array.isArray(value)) return value.map(shorten);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shorten(v)]));
  }
  return value;
}

function errorText(e) {
  if (e instanceof Error) return e.message;
  return String(e);
}

function fail(message) {
  process.stderr.write(`driver.mjs: ${message}\n`);
  process.exit(2);
}

function parseJsonEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined) return fallback;
  try {
    return JSON.parse(raw);
  } catch (e) {
    fail(`${name} is not valid JSON (${errorText(e)}); run me through mcp-harness --target cmd:…`);
  }
}

/** The plan: from MCP_HARNESS_PLAN_FILE (always written), else inline MCP_HARNESS_PLAN. */
function readPlan() {
  const file = process.env.MCP_HARNESS_PLAN_FILE;
  if (file === undefined) return parseJsonEnv("MCP_HARNESS_PLAN", null);
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    fail(`MCP_HARNESS_PLAN_FILE ${file} cannot be read as JSON (${errorText(e)})`);
  }
}

/** The contract's inputs of the plan being run (one per process, or one per job when persistent). */
let plan;
let transportName;
let serverCommand;
let url;

/** Reads the contract's inputs from the environment and `args` (the arguments after the driver's own). */
function loadContract(args) {
  plan = readPlan();
  if (!Array.isArray(plan)) fail("MCP_HARNESS_PLAN_FILE / MCP_HARNESS_PLAN is missing; run me through mcp-harness --target cmd:…");
  transportName = process.env.MCP_HARNESS_TRANSPORT ?? "stdio";
  serverCommand = parseJsonEnv("MCP_HARNESS_SERVER_COMMAND", []);
  url = args.length > 0 ? args[args.length - 1] : undefined;
}

/** Result schemas by method, as the SDK's own convenience methods use them. */
const RESULT_SCHEMAS = {
  ping: EmptyResultSchema,
  "resources/list": ListResourcesResultSchema,
  "resources/templates/list": ListResourceTemplatesResultSchema,
  "resources/read": ReadResourceResultSchema,
  "resources/subscribe": EmptyResultSchema,
  "resources/unsubscribe": EmptyResultSchema,
  "prompts/list": ListPromptsResultSchema,
  "prompts/get": GetPromptResultSchema,
  "completion/complete": CompleteResultSchema,
  "logging/setLevel": EmptyResultSchema,
};

class Unsupported extends Error {}

/** A step the driver ends itself, never the SDK (reported with `"by": "driver"`). */
class DriverError extends Error {}

/**
 * The plan fields this driver applies, per op. A step carrying any other field is
 * `unsupported` (never silently run without it): a field added to the plan later reaches
 * this driver as an unknown key until someone maps it onto the SDK.
 */
const IMPLEMENTED = {
  // Fields listed here but refused below with their own reason: auth_refresh, managed,
  // protocol_version, legacy_fallback, new_session; max_message_bytes on HTTP.
  connect: ["handshake", "timeout_ms", "env", "max_message_bytes", "string_ids", "roots", "headers", "auth_refresh", "managed", "protocol_version", "legacy_fallback"],
  request: ["method", "params", "timeout_ms", "background", "as", "pad_params", "reset_timeout_on_progress", "max_total_timeout_ms", "new_session"],
  await: ["request"],
  cancel: ["request"],
  abandon: ["request"],
  notify: ["method", "params"],
  wait: ["ms"],
  wait_notification: ["method", "timeout_ms"],
  wait_sent: ["method", "http_method", "count", "timeout_ms"],
  wait_closed: ["timeout_ms"],
  close: [],
};

function requireImplemented(step) {
  const known = IMPLEMENTED[step.op];
  if (!known) throw new Unsupported(`plan op ${JSON.stringify(step.op)} is unknown to this driver`);
  const unknown = Object.keys(step).filter((k) => k !== "op" && !known.includes(k));
  if (unknown.length > 0) {
    throw new Unsupported(`this driver does not apply ${step.op} field(s) ${unknown.join(", ")}`);
  }
}

/** One plan's state; a fresh one per plan, so nothing of a plan reaches the next. */
const freshState = () => ({
  client: null,
  transport: null,
  timeoutMs: undefined,
  /** `connect.max_message_bytes` → StdioClientTransport's maxBufferSize. */
  maxBufferSize: undefined,
  closed: false,
  closeWaiters: [],
  notifications: [],
  notificationWaiters: [],
  background: new Map(),
  /** Headers the plan's connect configured (HTTP transports). */
  headers: {},
  /** Set once the driver itself closes the client: aborts that follow are its own doing. */
  closing: false,
  /** The SDK's GETs and notification POSTs whose response head has not arrived yet. */
  pendingBackground: new Set(),
  /** The notification POSTs among them (the SDK sends `notifications/cancelled` unawaited). */
  pendingNotifications: new Set(),
  /** Set when the plan is over: the SDK's late callbacks print nothing into the next plan. */
  over: false,
  /**
   * Aborted when the plan is over: every request and response body the SDK left open (an
   * event stream it refused but never cancelled, say) ends then, as a process exit would
   * end it, rather than when a persistent driver's pool gets round to it. The mock waits
   * a moment for streams a client is closing, so `done` need not wait for the sockets.
   */
  fetches: new AbortController(),
});
let state = freshState();

/** Prints a line on behalf of the plan whose state is `s`, unless that plan is over. */
function emitFor(s, obj) {
  if (!s.over) emit(obj);
}

/**
 * How long a close waits for the SDK's own background traffic to be answered: the GET
 * listener it opens after `notifications/initialized`, and notifications it POSTs on its own
 * (`notifications/cancelled` after a timeout). Without the wait, whether they reach the server
 * (and show in the transcript) depends on how fast the plan ran, and a real application does
 * not close within microseconds of a failed call. Each step after the first waits the same
 * way for those notification POSTs (not the GET), for the same reason.
 */
const SETTLE_MS = 300;

/** A GET, or a POST carrying only notifications (messages without an `id`). */
function isBackground(init) {
  const method = (init?.method ?? "GET").toUpperCase();
  if (method === "GET") return true;
  if (method !== "POST" || typeof init?.body !== "string") return false;
  try {
    const body = JSON.parse(init.body);
    const messages = Array.isArray(body) ? body : [body];
    return messages.every((m) => m && typeof m === "object" && !("id" in m));
  } catch {
    return false;
  }
}

/** A signal aborted when `a` or `b` is (`AbortSignal.any` is Node 18.17+; package.json says 18). */
function eitherSignal(a, b) {
  if (typeof AbortSignal.any === "function") return AbortSignal.any([a, b]);
  const either = new AbortController();
  for (const s of [a, b]) {
    if (s.aborted) either.abort(s.reason);
    else s.addEventListener("abort", () => either.abort(s.reason), { once: true });
  }
  return either.signal;
}

/** `fetch` for the SDK's HTTP transports that remembers background requests still unanswered. */
function trackingFetch(s) {
  return (input, init) => {
    const own = s.fetches.signal;
    const response = fetch(input, { ...init, signal: init?.signal ? eitherSignal(init.signal, own) : own });
    if (isBackground(init)) {
      const settled = response.then(
        () => undefined,
        () => undefined,
      );
      const sets = [s.pendingBackground];
      if ((init?.method ?? "GET").toUpperCase() === "POST") sets.push(s.pendingNotifications);
      for (const set of sets) {
        set.add(settled);
        settled.then(() => set.delete(settled));
      }
    }
    return response;
  };
}

/** Waits (at most SETTLE_MS) until `pending` is answered, once the SDK has started it. */
async function settle(pending) {
  // The SDK issues its background requests a few microtasks after deciding to; let them start.
  await new Promise((resolve) => setImmediate(resolve));
  if (pending.size > 0) {
    let timer;
    const bound = new Promise((resolve) => (timer = setTimeout(resolve, SETTLE_MS)));
    await Promise.race([Promise.all([...pending]), bound]);
    clearTimeout(timer);
  }
}

/** Close the client the way a plan does, once its background requests have their answers. */
async function closeClient() {
  await settle(state.pendingBackground);
  state.closing = true;
  // The SDK ends a Streamable HTTP session only when asked (`terminateSession`: the DELETE of
  // the spec's Session Management SHOULD); an application that is leaving asks, so a plan's
  // close does too. A failed DELETE (405 included) is the SDK's to report, not the plan's.
  if (typeof state.transport?.terminateSession === "function") {
    await state.transport.terminateSession().catch(() => undefined);
  }
  await state.client.close();
}

/** The SDK reports aborting its own in-flight requests when the driver closes it. */
function isOwnAbort(s, error) {
  if (!s.closing) return false;
  const text = `${error?.name ?? ""} ${error?.message ?? error}`;
  return /AbortError|operation was aborted/.test(text);
}

function makeTransport() {
  switch (transportName) {
    case "stdio": {
      if (!Array.isArray(serverCommand) || serverCommand.length === 0) {
        throw new Error("MCP_HARNESS_SERVER_COMMAND is missing or empty");
      }
      const [command, ...args] = serverCommand;
      // `maxBufferSize`: the SDK's cap on its stdio read buffer (default 10 MB); past it the
      // transport reports an error and closes.
      return new StdioClientTransport({ command, args, ...(state.maxBufferSize !== undefined ? { maxBufferSize: state.maxBufferSize } : {}) });
    }
    case "http":
      if (!url) throw new Error("no server URL: the harness appends it as the last argument");
      return new StreamableHTTPClientTransport(new URL(url), { fetch: trackingFetch(state), requestInit: { headers: state.headers } });
    case "legacy-sse":
      if (!url) throw new Error("no server URL: the harness appends it as the last argument");
      // The SDK adds requestInit's headers to its event-stream GET and its POSTs alike.
      return new SSEClientTransport(new URL(url), { fetch: trackingFetch(state), requestInit: { headers: state.headers } });
    default:
      throw new Unsupported(`unknown transport ${JSON.stringify(transportName)}`);
  }
}

function requestOptions(timeoutMs, signal) {
  const t = timeoutMs ?? state.timeoutMs;
  const options = {};
  if (t !== undefined) options.timeout = t === 0 ? NO_TIMEOUT : t;
  if (signal) options.signal = signal;
  return options;
}

/**
 * A plan request whose params carry `_meta.progressToken` asks the client to issue a
 * progress token. The SDK issues one only through `onprogress`, and then it chooses the
 * token itself (the request id), replacing the plan's value: the spec leaves the value to
 * the sender, and the mock answers with whatever token the request carried. Progress then
 * reaches the driver (else the SDK reports "unknown token"), and the SDK's own
 * resetTimeoutOnProgress / maxTotalTimeout serve the plan's fields.
 */
function progressOptions(step, options) {
  const asksProgress = step.params?._meta?.progressToken !== undefined;
  if (!asksProgress) {
    // The SDK takes both options without `onprogress` too; it then issues no progress token,
    // so only the timeout and the total bound remain (it checks the total when progress comes).
    if (step.reset_timeout_on_progress) options.resetTimeoutOnProgress = true;
    if (step.max_total_timeout_ms !== undefined) options.maxTotalTimeout = step.max_total_timeout_ms;
    return options;
  }
  const s = state;
  options.onprogress = (progress) => {
    emitFor(s, { notification: { method: "notifications/progress", params: progress ?? {} } });
    s.notifications.push("notifications/progress");
    wake(s.notificationWaiters);
  };
  if (step.reset_timeout_on_progress) options.resetTimeoutOnProgress = true;
  if (step.max_total_timeout_ms !== undefined) options.maxTotalTimeout = step.max_total_timeout_ms;
  return options;
}

function sendRequest(method, params, options) {
  const client = state.client;
  switch (method) {
    case "tools/list":
      return client.listTools(params, options);
    case "tools/call":
      return client.callTool(params, undefined, options);
    default:
      return client.request(params === undefined ? { method } : { method, params }, RESULT_SCHEMAS[method] ?? ResultSchema, options);
  }
}

/**
 * How many client messages the mock has recorded that match a `wait_sent` step: its records
 * (`conn-<n>.jsonl` in MCP_HARNESS_RUN_DIR, one wire event per line) are the only place
 * the client's own background traffic (a DELETE after close, a GET listener) is visible.
 */
function countSent(step) {
  const dir = process.env.MCP_HARNESS_RUN_DIR;
  if (!dir) throw new Unsupported("MCP_HARNESS_RUN_DIR is not set (an older harness?)");
  let count = 0;
  for (const name of readdirSync(dir)) {
    if (!/^conn-\d+\.jsonl$/.test(name)) continue;
    for (const line of readFileSync(join(dir, name), "utf8").split("\n")) {
      let e;
      try {
        e = JSON.parse(line);
      } catch {
        continue; // a line the mock is still writing
      }
      if (e.event !== "from_client" && e.event !== "http_request") continue;
      if (step.http_method !== undefined && e.http_method !== step.http_method) continue;
      if (step.method !== undefined && e.json?.method !== step.method) continue;
      count++;
    }
  }
  return count;
}

async function waitSent(step) {
  const timeout = step.timeout_ms ?? 1000;
  const want = step.count ?? 1;
  const deadline = Date.now() + timeout;
  // Another process writes the records, so there is no in-process event to wait on.
  while (countSent(step) < want) {
    if (Date.now() >= deadline) throw new Error(`the mock saw fewer than ${want} such message(s) within ${timeout}ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function waitFor(predicate, waiters, timeoutMs) {
  if (predicate()) return Promise.resolve(true);
  return new Promise((resolve) => {
    const waiter = () => {
      if (predicate()) {
        clearTimeout(timer);
        resolve(true);
        return true;
      }
      return false;
    };
    const timer = setTimeout(() => {
      const i = waiters.indexOf(waiter);
      if (i >= 0) waiters.splice(i, 1);
      resolve(false);
    }, timeoutMs);
    waiters.push(waiter);
  });
}

function wake(waiters) {
  for (const w of [...waiters]) {
    if (w()) waiters.splice(waiters.indexOf(w), 1);
  }
}

async function connect(step) {
  const revision = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
  if (revision && !SUPPORTED_PROTOCOL_VERSIONS.includes(revision)) {
    throw new Unsupported(
      `SDK ${INSTALLED_SDK_VERSION} does not speak ${revision} (its versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
    );
  }
  if (step.env && Object.keys(step.env).length > 0) {
    throw new Unsupported(`the SDK reads no transport settings from the environment (plan sets ${Object.keys(step.env).join(", ")})`);
  }
  if (step.max_message_bytes !== undefined && transportName !== "stdio") {
    throw new Unsupported(
      "the SDK's only inbound size setting is StdioClientTransport's maxBufferSize; StreamableHTTPClientTransport and SSEClientTransport have none",
    );
  }
  if (step.legacy_fallback !== undefined && step.legacy_fallback !== null) {
    throw new Unsupported(`SDK ${INSTALLED_SDK_VERSION} has only the initialize handshake: no modern version to fall back from`);
  }
  if (step.protocol_version !== undefined && step.protocol_version !== null) {
    throw new Unsupported(
      `Client.connect always offers LATEST_PROTOCOL_VERSION (${LATEST_PROTOCOL_VERSION}) in initialize; it has no setting to offer ${step.protocol_version}`,
    );
  }
  if (step.string_ids) {
    throw new Unsupported("the SDK always uses numeric request ids (Protocol.request numbers them from its _requestMessageId counter) and has no option for string ids");
  }
  if (step.auth_refresh !== undefined) {
    throw new Unsupported("the SDK's only auth hook is the transports' authProvider (an OAuthClientProvider): on a 401/403 it runs the SDK's OAuth flow (auth()); there is no refresh hook that returns headers");
  }
  if (step.headers && Object.keys(step.headers).length > 0 && transportName === "stdio") {
    throw new Unsupported("headers apply to the HTTP transports only");
  }
  state.headers = step.headers ?? {};
  if (step.managed !== undefined) {
    throw new Unsupported("the SDK's Client has no reconnecting connection manager: a closed Client stays closed (no reconnect with backoff, no storm breaker), a 404 on the session is an error (no new session) and there is no tool-call replay rule; StreamableHTTPClientTransport's reconnectionOptions only resume its SSE streams");
  }
  if (step.handshake === false) {
    throw new Unsupported(
      transportName === "http"
        ? "Client.connect skips the initialize handshake only when the transport already has a session id (StreamableHTTPClientTransport's sessionId option, resuming a session); it has no connect without handshake and without a session"
        : "Client.connect always runs the initialize handshake unless the transport already has a session id, which only StreamableHTTPClientTransport has; the SDK has no connect-without-handshake here",
    );
  }
  state.timeoutMs = step.timeout_ms;
  state.maxBufferSize = step.max_message_bytes ?? undefined;
  const roots = step.roots ?? [];
  // A plan that has the client send notifications/roots/list_changed asks for a client
  // whose roots change: the SDK sends it only with roots.listChanged declared, as the spec
  // has it (client/roots), so declare it then (answering roots/list with the plan's roots).
  const rootsChange = plan.some((s) => s.op === "notify" && s.method === "notifications/roots/list_changed");
  const client = new Client(
    { name: "mcp-harness-driver-typescript", version: SDK_VERSION },
    { capabilities: roots.length > 0 || rootsChange ? { roots: { listChanged: true } } : {} },
  );
  if (roots.length > 0 || rootsChange) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots }));
  }
  // The SDK calls these after the plan may be over: they keep to the plan's own state.
  const s = state;
  client.fallbackNotificationHandler = async (notification) => {
    s.notifications.push(notification.method);
    emitFor(s, { notification: { method: notification.method, params: notification.params ?? {} } });
    wake(s.notificationWaiters);
  };
  client.onclose = () => {
    s.closed = true;
    wake(s.closeWaiters);
  };
  client.onerror = (error) => {
    if (!isOwnAbort(s, error)) emitFor(s, { report: errorText(error) });
  };
  const transport = makeTransport();
  state.client = client;
  state.transport = transport;
  await client.connect(transport, requestOptions(undefined));
  return undefined;
}

function requireClient() {
  if (!state.client) throw new DriverError("not connected (the plan has no successful connect before this step)");
  return state.client;
}

function withPad(params, pad) {
  if (pad === undefined || pad === null) return params;
  return { ...(params ?? {}), _pad: "x".repeat(pad) };
}

async function runStep(step) {
  requireImplemented(step);
  switch (step.op) {
    case "connect":
      return connect(step);
    case "request": {
      if (step.new_session) {
        throw new Unsupported("the SDK's StreamableHTTPClientTransport reports a 404 on the session as an HTTP error and keeps the session id: starting a new session is left to the application");
      }
      requireClient();
      const params = withPad(step.params, step.pad_params);
      if (step.background) {
        const controller = new AbortController();
        const started = Date.now();
        const settled = sendRequest(step.method, params, progressOptions(step, requestOptions(step.timeout_ms, controller.signal))).then(
          (result) => ({ ok: true, result, started }),
          (error) => ({ ok: false, error, started }),
        );
        state.background.set(step.as ?? "", { controller, settled });
        return undefined;
      }
      return sendRequest(step.method, params, progressOptions(step, requestOptions(step.timeout_ms)));
    }
    case "await": {
      const entry = state.background.get(step.request);
      if (!entry) throw new Error(`no background request labelled ${JSON.stringify(step.request)}`);
      state.background.delete(step.request);
      const outcome = await entry.settled;
      const elapsed_ms = Date.now() - outcome.started;
      if (outcome.ok) return { result: outcome.result, elapsed_ms };
      const e = new Error(errorText(outcome.error));
      e.elapsed_ms = elapsed_ms;
      throw e;
    }
    case "cancel": {
      const entry = state.background.get(step.request);
      if (entry) entry.controller.abort("cancelled by the plan");
      return undefined;
    }
    case "abandon":
      throw new Unsupported("a JavaScript caller cannot drop a pending request: the SDK stops one only through its AbortSignal, which is the `cancel` op");
    case "notify":
      await requireClient().notification(step.params === undefined ? { method: step.method } : { method: step.method, params: step.params });
      return undefined;
    case "wait":
      await new Promise((r) => setTimeout(r, step.ms));
      return undefined;
    case "wait_notification": {
      const timeout = step.timeout_ms ?? 1000;
      const seen = await waitFor(() => state.notifications.includes(step.method), state.notificationWaiters, timeout);
      if (!seen) throw new Error(`no ${step.method} notification within ${timeout}ms`);
      return undefined;
    }
    case "wait_sent":
      await waitSent(step);
      return undefined;
    case "wait_closed": {
      const timeout = step.timeout_ms ?? 1000;
      const closed = await waitFor(() => state.closed, state.closeWaiters, timeout);
      if (!closed) throw new Error(`still connected after ${timeout}ms`);
      return undefined;
    }
    case "close":
      if (state.client) await closeClient();
      return undefined;
    default:
      throw new Unsupported(`plan op ${JSON.stringify(step.op)} is unknown to this driver`);
  }
}

/** Runs the loaded plan with a fresh client, closing it at the end like the bundled target. */
async function runPlan() {
  state = freshState();
  emit({ sdk: { name: "@modelcontextprotocol/sdk", version: INSTALLED_SDK_VERSION } });
  for (let i = 0; i < plan.length; i++) {
    const step = plan[i];
    const n = i + 1;
    // A notification the SDK POSTs on its own (`notifications/cancelled` after a cancel or a
    // timeout) gets its answer before the next step sends anything, as it would in an
    // application that does not fire its next call within microseconds: otherwise which of
    // the two the server received first was up to the scheduler (make soak: 6 scenarios'
    // transcripts differed in 4-19 of 19 repetitions).
    if (i > 0) await settle(state.pendingNotifications);
    const started = Date.now();
    try {
      const value = await runStep(step);
      const line = { step: n, ok: true };
      let result = value;
      let elapsed = Date.now() - started;
      if (step.op === "await" && value) {
        result = value.result;
        elapsed = value.elapsed_ms;
      }
      if (result !== undefined) line.result = shorten(result);
      line.elapsed_ms = elapsed;
      emit(line);
    } catch (e) {
      if (e instanceof Unsupported) {
        emit({ step: n, unsupported: e.message });
        break;
      }
      const line = { step: n, ok: false, error: errorText(e), elapsed_ms: e.elapsed_ms ?? Date.now() - started };
      if (e instanceof DriverError) line.by = "driver";
      emit(line);
    }
  }
  // Like the bundled target, a plan that does not close ends with an implicit close.
  for (const { controller } of state.background.values()) controller.abort("plan ended");
  if (state.client && !state.closed) {
    try {
      await closeClient();
    } catch (e) {
      emit({ report: `close after the plan failed: ${errorText(e)}` });
    }
  }
  state.over = true;
  state.fetches.abort("plan ended");
}

/**
 * The persistent mode (clients/README.md, "Persistent drivers"): announce it, then serve one
 * job line at a time from stdin, each with its own environment, arguments and fresh client;
 * `{"done":N}` ends job N. stdin's end ends the driver.
 */
async function servePersistent() {
  const baseEnv = { ...process.env };
  const baseCwd = process.cwd();
  emit({ persistent: 1 });
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (line.trim() === "") continue;
    let job;
    try {
      job = JSON.parse(line);
    } catch (e) {
      fail(`a job line is not JSON (${errorText(e)}): ${line.slice(0, 200)}`);
    }
    if (!job || typeof job.run !== "number" || typeof job.env !== "object" || !Array.isArray(job.args ?? [])) {
      fail(`a job line is not {"run":N,"env":{…},"args":[…]}: ${line.slice(0, 200)}`);
    }
    // The job's environment replaces the last one's entirely; the directory is the start-up one.
    for (const k of Object.keys(process.env)) if (!(k in baseEnv)) delete process.env[k];
    Object.assign(process.env, baseEnv, job.env);
    process.chdir(baseCwd);
    loadContract(job.args ?? []);
    await runPlan();
    emit({ done: job.run });
  }
  exitWhenWritten(0);
}

/** The driver contract version this driver is written against (clients/CONTRACT.md). */
const CONTRACT = "2026-12-05";

async function main() {
  if (process.env.MCP_HARNESS_DECLARE === "1") {
    // Each op it handles and that op's fields: the table that also refuses unknown fields.
    process.stdout.write(`${JSON.stringify({ contract: CONTRACT, performs: IMPLEMENTED })}\n`);
    return exitWhenWritten(0);
  }
  if (process.env.MCP_HARNESS_PERSISTENT === "1") return servePersistent();
  loadContract(process.argv.slice(2));
  await runPlan();
  exitWhenWritten(0);
}

main().catch((e) => fail(`driver bug: ${e?.stack ?? e}`));
