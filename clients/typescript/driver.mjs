#!/usr/bin/env node
// mcp-harness driver for the TypeScript MCP SDK (@modelcontextprotocol/sdk, pinned in
// package.json). Runs the client plan from MCP_HARNESS_PLAN and prints one JSON line per
// step on stdout, as clients/README.md specifies. Plain ESM JavaScript so there is no build
// step: `npm ci` is the whole install.
//
// The driver translates plan ops into what an application would call (Client.listTools,
// Client.callTool, Client.request, AbortSignal for cancellation, …) and reports the SDK's own
// error text. It never works around the SDK: an op the SDK cannot express is reported
// `unsupported` with the reason, and the plan stops there. The contract's plumbing (the plan,
// the step lines, the plan loop, the persistent mode) is ../cmd_contract.mjs; this file is the
// mapping onto the SDK.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
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
import { readFileSync } from "node:fs";
import { DriverError, PLAN_LOOP_OPS, Unsupported, httpTransport, planChangesRoots, requestOptions, runDriver, state, stdioCommand, trackingFetch, transportName, watchClient, withProgressOptions } from "../cmd_contract.mjs";
import { HeadlessOAuthProvider, checkOAuthPlan, connectAfterAuthorization, finishAuthWithin, retryAfterAuthorization } from "../headless_oauth.mjs";

const SDK_VERSION = createRequire(import.meta.url)("@modelcontextprotocol/sdk/package.json").version;
/**
 * The installed SDK's version, read from its own package.json. (SDK_VERSION above resolves
 * through the package's exports to a nested package.json without a version, so clientInfo
 * has carried no version; kept as it is so the committed transcripts stay comparable.)
 */
const INSTALLED_SDK_VERSION = JSON.parse(
  readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url), "utf8"),
).version;

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

/**
 * The plan fields this driver applies, per op. A step carrying any other field is
 * `unsupported` (never silently run without it): a field added to the plan later reaches
 * this driver as an unknown key until someone maps it onto the SDK. The contract declaration
 * (`MCP_HARNESS_DECLARE=1`) is printed from this same table.
 */
const IMPLEMENTED = {
  // Fields listed here but refused below with their own reason: auth_refresh, managed,
  // protocol_version, legacy_fallback, new_session; max_message_bytes on HTTP; oauth on stdio.
  connect: ["handshake", "timeout_ms", "env", "max_message_bytes", "string_ids", "roots", "headers", "auth_refresh", "managed", "protocol_version", "legacy_fallback", "oauth"],
  request: ["method", "params", "timeout_ms", "background", "as", "pad_params", "reset_timeout_on_progress", "max_total_timeout_ms", "new_session"],
  ...PLAN_LOOP_OPS,
};

function makeTransport(authProvider) {
  if (transportName !== "stdio") return httpTransport({ StreamableHTTPClientTransport, SSEClientTransport }, authProvider);
  const { command, args } = stdioCommand();
  // `maxBufferSize`: the SDK's cap on its stdio read buffer (default 10 MB); past it the
  // transport reports an error and closes.
  return new StdioClientTransport({ command, args, ...(state.maxBufferSize !== undefined ? { maxBufferSize: state.maxBufferSize } : {}) });
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
  // Without `onprogress` the SDK takes both options too; it then issues no progress token,
  // so only the timeout and the total bound remain (it checks the total when progress comes).
  return withProgressOptions(step, options, step.params?._meta?.progressToken !== undefined);
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
  if (step.oauth != null && transportName === "stdio") {
    throw new Unsupported("oauth applies to the HTTP transports only (the SDK's authProvider is an option of StreamableHTTPClientTransport and SSEClientTransport; StdioClientTransport has none)");
  }
  if (step.oauth != null) checkOAuthPlan(step.oauth, Unsupported);
  state.timeoutMs = step.timeout_ms;
  state.maxBufferSize = step.max_message_bytes ?? undefined;
  const s = state;
  const oauth =
    step.oauth != null ? new HeadlessOAuthProvider(step.oauth, { fetchFn: trackingFetch(s), userStepMs: step.timeout_ms || undefined }) : undefined;
  state.oauth = oauth;
  // Where the SDK's flow stops at the user step (auth() answered 'REDIRECT'), the application
  // hands it what reached the redirect URI and connects again, as the SDK's OAuth example does.
  await connectAfterAuthorization(s, oauth, UnauthorizedError, () => connectClient(step, oauth), (callback) =>
    finishAuthorization(s, s.transport, callback),
  );
  return undefined;
}

/** A new Client and transport, connected (the handshake bounded by the connect's timeout). */
async function connectClient(step, oauth) {
  const roots = step.roots ?? [];
  const rootsChange = planChangesRoots();
  const client = new Client(
    { name: "mcp-harness-driver-typescript", version: SDK_VERSION },
    { capabilities: roots.length > 0 || rootsChange ? { roots: { listChanged: true } } : {} },
  );
  if (roots.length > 0 || rootsChange) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots }));
  }
  watchClient(client, state);
  const transport = makeTransport(oauth);
  state.client = client;
  state.transport = transport;
  await client.connect(transport, requestOptions(undefined));
}

/**
 * `transport.finishAuth(code)`: the SDK exchanges the code for tokens. Version 1 takes the
 * code alone (no `iss`, no error response): a redirect carrying `error` instead of a code ends
 * the flow here with it. The SDK bounds none of its OAuth requests, so the driver waits at most
 * the connect's timeout (else the SDK's default request timeout, 60 s) and then ends the step
 * itself (`by: driver`), never hanging on a stalled token endpoint.
 */
async function finishAuthorization(s, transport, callback) {
  const code = callback.get("code");
  if (code === null) {
    const error = callback.get("error");
    throw new Error(`the authorization server redirected with ${error === null ? "no code" : `error ${error}`}`);
  }
  await finishAuthWithin(transport, code, s.timeoutMs || 60_000, (m) => new DriverError(m));
}

/**
 * Sends a plan request; when the SDK's flow stops at the user step on the way (a 401 or a
 * 403 `insufficient_scope` the SDK could not answer with a refresh), hands it the code and
 * sends the request once more, as an application does after its redirect URI is reached.
 */
async function sendAuthorized(method, params, options) {
  const s = state;
  return retryAfterAuthorization(s.oauth, UnauthorizedError, () => sendRequest(method, params, options), (callback) =>
    finishAuthorization(s, s.transport, callback),
  );
}

runDriver({
  implemented: IMPLEMENTED,
  sdk: { name: "@modelcontextprotocol/sdk", version: INSTALLED_SDK_VERSION },
  connect,
  prepareRequest: (step, params, signal) => {
    const options = progressOptions(step, requestOptions(step.timeout_ms, signal));
    return () => sendAuthorized(step.method, params, options);
  },
  refusals: {
    new_session: "the SDK's StreamableHTTPClientTransport reports a 404 on the session as an HTTP error and keeps the session id: starting a new session is left to the application",
    abandon: "a JavaScript caller cannot drop a pending request: the SDK stops one only through its AbortSignal, which is the `cancel` op",
  },
  /** `connect.max_message_bytes` → StdioClientTransport's maxBufferSize; `connect.oauth` → the provider. */
  extraState: () => ({ maxBufferSize: undefined, oauth: undefined }),
});
