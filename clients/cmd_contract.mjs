// The `cmd:` contract's plumbing, shared by the Node drivers (clients/typescript/driver.mjs and
// clients/typescript-v2/driver.mjs), as clients/cmd_contract.py is by the Python ones: the plan
// and the mock's command line, the step lines, the IMPLEMENTED-table check and the declaration
// line, the plan loop with its settling and implicit close, `wait_sent` over the mock's records,
// the waits, and the persistent mode's loop. See clients/README.md for the contract itself.
//
// It imports no SDK package (each driver has its own node_modules): a driver hands
// `runDriver` its SDK mapping (connect, request, the texts of its refusals) and the shared
// code calls into it. What the SDK client object is asked for here (`notification`, `close`,
// the transport's `terminateSession`) is duck-typed, and the same in both TypeScript SDKs.

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

/** Strings in results longer than this are shortened, so a large reply cannot flood stdout. */
const MAX_STRING = 4096;
/** "Disabled" timeouts (`timeout_ms: 0`) become the largest timer Node accepts. */
const NO_TIMEOUT = 2 ** 31 - 1;

/** The driver contract version the Node drivers here are written against (clients/CONTRACT.md). */
export const CONTRACT = "2026-12-05.2";

export function emit(obj) {
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

export function errorText(e) {
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

/**
 * The contract's inputs of the plan being run (one per process, or one per job when
 * persistent). Exported as live bindings: a driver reads the current plan's values.
 */
export let plan;
export let transportName;
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

/** The mock's command line for a stdio transport: `{command, args}`. */
export function stdioCommand() {
  if (!Array.isArray(serverCommand) || serverCommand.length === 0) {
    throw new Error("MCP_HARNESS_SERVER_COMMAND is missing or empty");
  }
  const [command, ...args] = serverCommand;
  return { command, args };
}

/** The mock's URL for an HTTP transport. */
export function serverUrl() {
  if (!url) throw new Error("no server URL: the harness appends it as the last argument");
  return new URL(url);
}

/**
 * A plan that has the client send notifications/roots/list_changed asks for a client
 * whose roots change: the SDK sends it only with roots.listChanged declared, as the spec
 * has it (client/roots), so declare it then (answering roots/list with the plan's roots).
 */
export function planChangesRoots() {
  return plan.some((s) => s.op === "notify" && s.method === "notifications/roots/list_changed");
}

export class Unsupported extends Error {}

/** A step the driver ends itself, never the SDK (reported with `"by": "driver"`). */
export class DriverError extends Error {}

/** Refuses a step whose op, or one of whose fields, the driver's IMPLEMENTED table lacks. */
function requireImplemented(implemented, step) {
  const known = implemented[step.op];
  if (!known) throw new Unsupported(`plan op ${JSON.stringify(step.op)} is unknown to this driver`);
  const unknown = Object.keys(step).filter((k) => k !== "op" && !known.includes(k));
  if (unknown.length > 0) {
    throw new Unsupported(`this driver does not apply ${step.op} field(s) ${unknown.join(", ")}`);
  }
}

/**
 * The fields of the ops this module performs itself (`runStep`: the waits, `await`, `cancel`,
 * `notify`, `close`, and `abandon` refused with the driver's text), for the end of a driver's
 * IMPLEMENTED table: the code that applies a field is the code that declares it.
 */
export const PLAN_LOOP_OPS = {
  await: ["request"],
  cancel: ["request"],
  abandon: ["request"],
  notify: ["method", "params", "pad_params"],
  wait: ["ms"],
  wait_notification: ["method", "timeout_ms"],
  wait_sent: ["method", "http_method", "count", "timeout_ms"],
  wait_closed: ["timeout_ms"],
  close: [],
};

/** The declaration line: every op the driver handles, with the fields of it that it handles. */
function declaration(implemented) {
  return { contract: CONTRACT, performs: Object.fromEntries(Object.entries(implemented).map(([op, fields]) => [op, [...fields]])) };
}

/** One plan's state; a fresh one per plan, so nothing of a plan reaches the next. */
const freshState = (extra) => ({
  client: null,
  transport: null,
  timeoutMs: undefined,
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
  /** The driver's own fields (its `extraState()`). */
  ...extra,
});
/** The current plan's state (a live binding; a fresh object per plan). */
export let state = freshState({});

/** Prints a line on behalf of the plan whose state is `s`, unless that plan is over. */
export function emitFor(s, obj) {
  if (!s.over) emit(obj);
}

/** The plan whose state is `s` received a notification: print it and wake its waiters. */
export function noteNotification(s, method, params) {
  emitFor(s, { notification: { method, params } });
  s.notifications.push(method);
  wake(s.notificationWaiters);
}

/** The connection of the plan whose state is `s` closed: wake its `wait_closed`. */
export function noteClosed(s) {
  s.closed = true;
  wake(s.closeWaiters);
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
export function trackingFetch(s) {
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

/**
 * The SDK's HTTP transport for the plan's transport name (`http`: its
 * `StreamableHTTPClientTransport`, `legacy-sse`: its `SSEClientTransport`; both SDKs name the
 * classes alike and take the same options): the tracking fetch, the plan's headers (the SDKs
 * add `requestInit`'s headers to their POSTs and to the event-stream GET) and, when the plan
 * authorizes, the `authProvider`. Any other name is unsupported.
 */
export function httpTransport({ StreamableHTTPClientTransport, SSEClientTransport }, authProvider) {
  const options = {
    fetch: trackingFetch(state),
    requestInit: { headers: state.headers },
    ...(authProvider && { authProvider }),
  };
  switch (transportName) {
    case "http":
      return new StreamableHTTPClientTransport(serverUrl(), options);
    case "legacy-sse":
      return new SSEClientTransport(serverUrl(), options);
    default:
      throw new Unsupported(`unknown transport ${JSON.stringify(transportName)}`);
  }
}

/**
 * `options` (the SDK's request options) with a plan request's progress fields: `onprogress`
 * when `issueToken` (the SDKs issue a progress token only through it, and progress then reaches
 * the plan as notifications), and the SDK's own `resetTimeoutOnProgress` / `maxTotalTimeout`
 * for `reset_timeout_on_progress` / `max_total_timeout_ms`.
 */
export function withProgressOptions(step, options, issueToken) {
  if (issueToken) {
    const s = state;
    options.onprogress = (progress) => noteNotification(s, "notifications/progress", progress ?? {});
  }
  if (step.reset_timeout_on_progress) options.resetTimeoutOnProgress = true;
  if (step.max_total_timeout_ms !== undefined) options.maxTotalTimeout = step.max_total_timeout_ms;
  return options;
}

/**
 * Routes what a new SDK `Client` reports on its own into the plan whose state is `s`: its
 * notifications no handler took, its close, and its errors (but not the aborts of the driver's
 * own close). The SDK calls these after the plan may be over: they keep to that plan's state.
 */
export function watchClient(client, s) {
  client.fallbackNotificationHandler = async (notification) => noteNotification(s, notification.method, notification.params ?? {});
  client.onclose = () => noteClosed(s);
  client.onerror = (error) => {
    if (!isOwnAbort(s, error)) emitFor(s, { report: errorText(error) });
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
export function isOwnAbort(s, error) {
  if (!s.closing) return false;
  const text = `${error?.name ?? ""} ${error?.message ?? error}`;
  return /AbortError|operation was aborted/.test(text);
}

/** The SDK's request options for a step's timeout (else the connect's) and an abort signal. */
export function requestOptions(timeoutMs, signal) {
  const t = timeoutMs ?? state.timeoutMs;
  const options = {};
  if (t !== undefined) options.timeout = t === 0 ? NO_TIMEOUT : t;
  if (signal) options.signal = signal;
  return options;
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

export function requireClient() {
  if (!state.client) throw new DriverError("not connected (the plan has no successful connect before this step)");
  return state.client;
}

function withPad(params, pad) {
  if (pad === undefined || pad === null) return params;
  return { ...(params ?? {}), _pad: "x".repeat(pad) };
}

/** One step: the driver's `connect` and `prepareRequest` for the SDK, the rest shared. */
async function runStep(driver, step) {
  requireImplemented(driver.implemented, step);
  switch (step.op) {
    case "connect":
      return driver.connect(step);
    case "request": {
      if (step.new_session) throw new Unsupported(driver.refusals.new_session);
      requireClient();
      const params = withPad(step.params, step.pad_params);
      // Everything that makes the step unsupported is raised by prepareRequest, before
      // anything is sent; the call it returns sends the request.
      if (step.background) {
        const controller = new AbortController();
        const call = driver.prepareRequest(step, params, controller.signal);
        const started = Date.now();
        const settled = call().then(
          (result) => ({ ok: true, result, started }),
          (error) => ({ ok: false, error, started }),
        );
        state.background.set(step.as ?? "", { controller, settled });
        return undefined;
      }
      return driver.prepareRequest(step, params, undefined)();
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
      throw new Unsupported(driver.refusals.abandon);
    case "notify": {
      const params = withPad(step.params, step.pad_params);
      await requireClient().notification(params === undefined ? { method: step.method } : { method: step.method, params });
      return undefined;
    }
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
async function runPlan(driver) {
  state = freshState(driver.extraState?.() ?? {});
  emit({ sdk: driver.sdk });
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
      const value = await runStep(driver, step);
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
  if (driver.beforeImplicitClose) await driver.beforeImplicitClose(state);
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
async function servePersistent(driver) {
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
    await runPlan(driver);
    emit({ done: job.run });
  }
  exitWhenWritten(0);
}

async function main(driver) {
  // The contract declaration: one line, nothing run.
  if (process.env.MCP_HARNESS_DECLARE === "1") {
    emit(declaration(driver.implemented));
    return exitWhenWritten(0);
  }
  if (process.env.MCP_HARNESS_PERSISTENT === "1") return servePersistent(driver);
  loadContract(process.argv.slice(2));
  await runPlan(driver);
  exitWhenWritten(0);
}

/**
 * Runs a driver under the contract: the declaration (MCP_HARNESS_DECLARE=1), the persistent
 * mode (MCP_HARNESS_PERSISTENT=1) or one plan. `driver` is the SDK mapping:
 * - `implemented`: the plan fields it handles, per op (a step with any other is `unsupported`;
 *   the declaration is printed from it);
 * - `sdk`: `{name, version}`, the first line of each plan;
 * - `connect(step)`: the connect op, which sets `state.client` and `state.transport`;
 * - `prepareRequest(step, params, signal)`: throws Unsupported for what the SDK cannot send,
 *   else returns the call that sends the request (params already padded);
 * - `refusals`: the `unsupported` texts for `request.new_session` and `abandon`;
 * - `extraState()` (optional): its own fields of a plan's state;
 * - `beforeImplicitClose(state)` (optional): what to end before a plan's implicit close.
 */
export function runDriver(driver) {
  main(driver).catch((e) => fail(`driver bug: ${e?.stack ?? e}`));
}
