#!/usr/bin/env node
// mcp-harness driver for the TypeScript MCP SDK v2 client (@modelcontextprotocol/client, pinned
// in package.json). Runs the client plan from MCP_HARNESS_PLAN_FILE and prints one JSON line per
// step on stdout, as ../README.md specifies; README.md here maps each plan op onto the SDK.
// Plain ESM JavaScript so there is no build step: `npm ci` is the whole install.
//
// The driver translates plan ops into what an application would call (Client.listTools,
// Client.callTool, Client.request, Client.listen, AbortSignal for cancellation, …) and reports
// the SDK's own error text. It never works around the SDK: an op the SDK cannot express is
// reported `unsupported` with the reason, and the plan stops there. The contract's plumbing (the
// plan, the step lines, the plan loop, the persistent mode) is ../cmd_contract.mjs; this file is
// the mapping onto the SDK.
//
// Revisions from 2026-07-28 on use the SDK's opt-in version negotiation
// (`versionNegotiation: {mode: "auto"}`: a `server/discover` probe, the initialize handshake
// only as its fallback); older ones its default, the plain initialize handshake.

import {
  Client,
  StreamableHTTPClientTransport,
  SSEClientTransport,
  SUPPORTED_PROTOCOL_VERSIONS,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { readFileSync } from "node:fs";
import { DriverError, PLAN_LOOP_OPS, Unsupported, httpTransport, noteClosed, noteNotification, planChangesRoots, requestOptions, requireClient, runDriver, state, stdioCommand, trackingFetch, transportName, watchClient, withProgressOptions } from "../cmd_contract.mjs";
import { HeadlessOAuthProvider, checkOAuthPlan, connectAfterAuthorization, finishAuthWithin, retryAfterAuthorization } from "../headless_oauth.mjs";

/** The installed SDK's version, read from its own package.json (its exports map does not list it). */
const SDK_VERSION = JSON.parse(
  readFileSync(new URL("./node_modules/@modelcontextprotocol/client/package.json", import.meta.url), "utf8"),
).version;
/**
 * The first revision of the modern era, the one the SDK's `server/discover` negotiation speaks
 * (its SUPPORTED_MODERN_PROTOCOL_VERSIONS, which the package does not export). The SDK
 * compares versions as date strings: every version from this one on is modern.
 */
const MODERN_REVISION = "2026-07-28";
const isModern = (version) => typeof version === "string" && version >= MODERN_REVISION;

/**
 * The result schema for methods outside the spec (vendor methods): `Client.request` resolves a
 * spec method's schema itself and asks the caller for one otherwise. An application that wants
 * the result as the server sent it passes a Standard Schema that accepts any value.
 */
const ANY_RESULT = {
  "~standard": { version: 1, vendor: "mcp-harness-driver", validate: (value) => ({ value }) },
};

/**
 * The plan fields this driver handles, per op: it applies each, or reports the step
 * `unsupported` with a reason for the values the SDK cannot do. A step carrying any other field
 * is `unsupported` (never silently run without it): a field added to the plan later reaches
 * this driver as an unknown key until someone maps it onto the SDK. The contract declaration
 * (`MCP_HARNESS_DECLARE=1`) is printed from this same table.
 */
const IMPLEMENTED = {
  // Refused below with their own reason: handshake false, env, max_message_bytes over HTTP,
  // string_ids, auth_refresh other than a bearer token, managed, new_session, and
  // reset_timeout_on_progress / max_total_timeout_ms without a progress token; oauth on stdio
  // or beside auth_refresh.
  connect: [
    "handshake",
    "timeout_ms",
    "env",
    "max_message_bytes",
    "string_ids",
    "roots",
    "headers",
    "auth_refresh",
    "managed",
    "protocol_version",
    "legacy_fallback",
    "oauth",
  ],
  request: ["method", "params", "timeout_ms", "background", "as", "pad_params", "reset_timeout_on_progress", "max_total_timeout_ms", "new_session"],
  ...PLAN_LOOP_OPS,
};

function makeTransport(maxMessageBytes, authProvider) {
  if (transportName !== "stdio") return httpTransport({ StreamableHTTPClientTransport, SSEClientTransport }, authProvider);
  const { command, args } = stdioCommand();
  return new StdioClientTransport({ command, args, ...(maxMessageBytes !== undefined && { maxBufferSize: maxMessageBytes }) });
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
  if (!asksProgress && (step.reset_timeout_on_progress || step.max_total_timeout_ms !== undefined)) {
    throw new Unsupported("the SDK resets timeouts only on progress for a token it issues (the plan's params carry no _meta.progressToken)");
  }
  return withProgressOptions(step, options, asksProgress);
}

/** The `Client` method of the SDK's convenience call for a request method, where it has one. */
const CONVENIENCE_CALLS = {
  "tools/list": "listTools",
  "tools/call": "callTool",
  "prompts/list": "listPrompts",
  "prompts/get": "getPrompt",
  "resources/list": "listResources",
  "resources/templates/list": "listResourceTemplates",
  "resources/read": "readResource",
  "completion/complete": "complete",
};

/** The SDK's convenience call for a method, where it has one; else `Client.request`. */
function sendRequest(method, params, options) {
  const client = state.client;
  const convenience = CONVENIENCE_CALLS[method];
  if (convenience !== undefined) return client[convenience](params, options);
  const request = params === undefined ? { method } : { method, params };
  // Spec methods: the SDK resolves the result schema (and refuses a method the negotiated
  // era does not have). Vendor methods need one from the caller: the SDK says so with a
  // TypeError before it sends anything.
  try {
    return client.request(request, options);
  } catch (e) {
    if (!(e instanceof TypeError && /is not a spec method/.test(e.message))) throw e;
    return client.request(request, ANY_RESULT, options);
  }
}

/**
 * A plan request → the call that sends it. Everything that makes the step unsupported is
 * raised here, before anything is sent.
 */
function prepareRequest(step, params, signal) {
  const options = progressOptions(step, requestOptions(step.timeout_ms, signal));
  if (step.method === "subscriptions/listen") return listenCall(step, params, options);
  // A refusal the SDK throws synchronously (a method outside the negotiated era) becomes
  // the request's outcome, as a rejection would.
  return () => sendAuthorized(step.method, params, options);
}

/**
 * Sends a plan request; when the SDK's flow stops at the user step on the way (a 401 it could
 * not answer with a refresh, or a 403 `insufficient_scope` step-up), hands it what reached the
 * redirect URI and sends the request once more, as an application does.
 */
async function sendAuthorized(method, params, options) {
  const s = state;
  // A refusal the SDK throws synchronously (a method outside the negotiated era) becomes
  // the request's outcome, as a rejection would.
  const send = () => new Promise((resolve) => resolve(sendRequest(method, params, options)));
  return retryAfterAuthorization(s.oauth, UnauthorizedError, send, (callback) => finishAuthorization(s, s.transport, callback));
}

/**
 * `transport.finishAuth(params)`: the SDK takes the redirect's whole query, so it checks `iss`
 * (RFC 9207) and reports an `error` response itself before exchanging the code. The SDK bounds
 * none of its OAuth requests, so the driver waits at most the connect's timeout (else the SDK's
 * default request timeout, 60 s) and then ends the step itself (`by: driver`), never hanging on
 * a stalled token endpoint.
 */
async function finishAuthorization(s, transport, callback) {
  await finishAuthWithin(transport, callback, s.timeoutMs || 60_000, (m) => new DriverError(m));
}

/**
 * `subscriptions/listen` → `Client.listen(filter)`: it resolves on the server's
 * acknowledgment, which the SDK consumes (the driver reports it as the notification it was),
 * and the change notifications on the stream reach the client's notification handlers. The
 * request's outcome is how the subscription ended (`McpSubscription.closed`): `graceful` (the
 * server's result; the SDK hands no result to the caller) is ok, anything else an error.
 */
function listenCall(step, params, options) {
  const extra = Object.keys(params ?? {}).filter((k) => k !== "notifications");
  if (extra.length > 0) {
    throw new Unsupported(`Client.listen takes only the notifications filter, not params field(s) ${extra.join(", ")}`);
  }
  if (options.onprogress || options.resetTimeoutOnProgress || options.maxTotalTimeout !== undefined) {
    throw new Unsupported("Client.listen reports no progress");
  }
  const s = state;
  const client = requireClient();
  return async () => {
    const subscription = await client.listen(params?.notifications ?? {}, options);
    noteNotification(s, "notifications/subscriptions/acknowledged", { notifications: subscription.honoredFilter });
    s.subscriptions.add(subscription);
    const cause = await subscription.closed;
    s.subscriptions.delete(subscription);
    if (cause === "graceful") return undefined;
    throw new Error(`subscription ended: ${cause}`);
  };
}

/**
 * The SDK's version options for the plan's connect: `supportedProtocolVersions` and, for a
 * modern version, `versionNegotiation`. Throws Unsupported for what the SDK cannot be.
 */
function versionOptions(step, revision) {
  const wanted = step.protocol_version ?? revision;
  const fallback = step.legacy_fallback;
  if (!isModern(wanted)) {
    if (fallback !== undefined) {
      throw new Unsupported(`legacy_fallback applies to a modern protocol_version; ${wanted} is legacy, so the SDK runs its plain initialize handshake`);
    }
    if (!SUPPORTED_PROTOCOL_VERSIONS.includes(wanted)) {
      throw new Unsupported(`SDK ${SDK_VERSION} does not speak ${wanted} (its versions: ${MODERN_REVISION}, ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`);
    }
    // The SDK's default posture (`versionNegotiation` mode "legacy"): initialize offers the
    // first entry of supportedProtocolVersions, so a plan's version goes first.
    if (step.protocol_version === undefined) return {};
    return { supportedProtocolVersions: [wanted, ...SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v !== wanted)] };
  }
  // Mode "auto": the probe proposes the first modern entry of supportedProtocolVersions (a
  // server's -32022 answer makes it continue with a mutual version); whether it may fall back
  // to initialize is whether the list holds any legacy version ("a list without any legacy
  // version makes this a modern-only client"). Without legacy_fallback the SDK's own auto
  // default, which falls back.
  const modern = [...new Set([wanted, MODERN_REVISION])];
  const legacy = fallback === false ? [] : SUPPORTED_PROTOCOL_VERSIONS;
  return { versionNegotiation: { mode: "auto" }, supportedProtocolVersions: [...modern, ...legacy] };
}

/**
 * `auth_refresh` → the transports' `authProvider`: `token()` answers nothing until the first
 * 401 (so the plan's own `Authorization` header goes out), `onUnauthorized()` is the hook the
 * SDK calls on a 401 before it retries once; it adopts the plan's new bearer token.
 */
function authProviderFor(refresh) {
  if (refresh === undefined) return undefined;
  const keys = Object.keys(refresh);
  const other = keys.filter((k) => k.toLowerCase() !== "authorization");
  if (other.length > 0) {
    throw new Unsupported(`the SDK's AuthProvider supplies only a bearer token, not header(s) ${other.join(", ")}`);
  }
  let fresh;
  if (keys.length > 0) {
    const value = refresh[keys[0]];
    const m = /^Bearer (.+)$/i.exec(value);
    if (!m) throw new Unsupported("the SDK's AuthProvider supplies only a bearer token (`Authorization: Bearer …`)");
    fresh = m[1];
  }
  let token;
  return {
    token: async () => token,
    onUnauthorized: async () => {
      if (fresh !== undefined) token = fresh;
    },
  };
}

async function connect(step) {
  const revision = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? SUPPORTED_PROTOCOL_VERSIONS[0];
  if (!isModern(revision) && !SUPPORTED_PROTOCOL_VERSIONS.includes(revision)) {
    throw new Unsupported(`SDK ${SDK_VERSION} does not speak ${revision} (its versions: ${MODERN_REVISION}, ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`);
  }
  if (isModern(revision) && revision !== MODERN_REVISION) {
    throw new Unsupported(`SDK ${SDK_VERSION} negotiates only ${MODERN_REVISION} in the modern era, not ${revision}`);
  }
  const versions = versionOptions(step, revision);
  if (step.env && Object.keys(step.env).length > 0) {
    throw new Unsupported(`the SDK reads no transport settings from the environment (plan sets ${Object.keys(step.env).join(", ")})`);
  }
  if (step.max_message_bytes !== undefined && transportName !== "stdio") {
    throw new Unsupported("the SDK's HTTP transports have no inbound message size cap setting (StdioClientTransport's maxBufferSize is stdio only)");
  }
  if (step.string_ids) {
    throw new Unsupported("the SDK numbers its requests from a counter (Protocol._requestMessageId) and has no option for string ids");
  }
  if (step.headers && Object.keys(step.headers).length > 0 && transportName === "stdio") {
    throw new Unsupported("headers apply to the HTTP transports only");
  }
  if (step.auth_refresh !== undefined && transportName === "stdio") {
    throw new Unsupported("auth_refresh applies to the HTTP transports only");
  }
  if (step.oauth != null && transportName === "stdio") {
    throw new Unsupported("oauth applies to the HTTP transports only (the SDK's authProvider is an option of StreamableHTTPClientTransport and SSEClientTransport; StdioClientTransport has none)");
  }
  if (step.oauth != null && step.auth_refresh !== undefined) {
    throw new Unsupported("the SDK's transports take one authProvider: an OAuthClientProvider (oauth) or a token AuthProvider (auth_refresh), not both");
  }
  if (step.oauth != null) checkOAuthPlan(step.oauth, Unsupported);
  state.headers = step.headers ?? {};
  if (step.managed !== undefined) {
    throw new Unsupported("the SDK's Client has no reconnecting connection manager (reconnect with backoff, new session after a 404, tool-call replay rule)");
  }
  if (step.handshake === false) {
    throw new Unsupported(
      versions.versionNegotiation
        ? "Client.connect without a round trip needs a prior DiscoverResult (connect({prior: {kind: 'modern', discover}})), which the plan does not supply"
        : "Client.connect always runs the initialize handshake on a fresh connection (it skips it only for a transport resuming a known session id)",
    );
  }
  state.timeoutMs = step.timeout_ms;
  const s = state;
  const oauth =
    step.oauth != null ? new HeadlessOAuthProvider(step.oauth, { fetchFn: trackingFetch(s), userStepMs: step.timeout_ms || undefined }) : undefined;
  state.oauth = oauth;
  const authProvider = oauth ?? authProviderFor(step.auth_refresh);
  // Where the SDK's flow stops at the user step (auth() answered 'REDIRECT'), the application
  // hands it what reached the redirect URI and connects again, as the SDK's OAuth example does.
  await connectAfterAuthorization(s, oauth, UnauthorizedError, () => connectClient(step, versions, authProvider), (callback) =>
    finishAuthorization(s, s.transport, callback),
  );
  return undefined;
}

/** A new Client and transport, connected (the handshake bounded by the connect's timeout). */
async function connectClient(step, versions, authProvider) {
  const roots = step.roots ?? [];
  const rootsChange = planChangesRoots();
  const client = new Client(
    { name: "mcp-harness-driver-typescript-v2", version: SDK_VERSION },
    { capabilities: roots.length > 0 || rootsChange ? { roots: { listChanged: true } } : {}, ...versions },
  );
  if (roots.length > 0 || rootsChange) {
    client.setRequestHandler("roots/list", async () => ({ roots }));
  }
  const s = state;
  watchClient(client, s);
  const transport = makeTransport(step.max_message_bytes, authProvider);
  state.client = client;
  state.transport = transport;
  try {
    await client.connect(transport, requestOptions(undefined));
  } catch (e) {
    // A failed connect leaves no connection to use or close (the SDK closed the transport).
    state.client = null;
    noteClosed(s);
    throw e;
  }
}

runDriver({
  implemented: IMPLEMENTED,
  sdk: { name: "@modelcontextprotocol/client", version: SDK_VERSION },
  connect,
  prepareRequest,
  refusals: {
    new_session: "the SDK's StreamableHTTPClientTransport reports a 404 on the session as an HTTP error and keeps the session id: starting a new session is left to the application",
    abandon: "a JavaScript caller cannot drop a pending request: the SDK stops one only through its AbortSignal, which is the `cancel` op",
  },
  /** Open `Client.listen` subscriptions, closed at the plan's end like any request; `connect.oauth`'s provider. */
  extraState: () => ({ subscriptions: new Set(), oauth: undefined }),
  beforeImplicitClose: async (s) => {
    for (const subscription of s.subscriptions) await subscription.close().catch(() => undefined);
  },
});
