// `connect.oauth` for the Node drivers (clients/typescript/driver.mjs and
// clients/typescript-v2/driver.mjs): the application's half of the TypeScript SDKs' OAuth
// client. Both SDKs run the flow themselves (discovery, registration, PKCE, the token and
// refresh requests, step-up) through an `OAuthClientProvider` the application hands the HTTP
// transports as `authProvider`; the provider only stores what the SDK gives it and performs the
// user-interaction step, `redirectToAuthorization(url)`. Here that step is headless: the
// authorization URL is fetched without following redirects and its `Location` is taken as the
// browser's landing on the redirect URI (the project's mock authorization server redirects at
// once). The SDK then expects the application to call `transport.finishAuth(…)` with what
// reached its redirect URI and to connect or send again; the drivers do that (see
// `retryAfterAuthorization` below).
//
// It imports no SDK package (each driver has its own node_modules): the provider is duck-typed
// and the same for both SDKs.

/** The redirect URI when the plan names none: a loopback one, as a native application's. */
export const DEFAULT_REDIRECT_URI = "http://127.0.0.1/callback";

/** How long the headless user step may take when the plan's connect sets no timeout. */
const DEFAULT_USER_STEP_MS = 10_000;

/** The `OAuth` fields of the contract (clients/CONTRACT.md) each Node driver maps. */
export const OAUTH_FIELDS = ["client_id", "client_secret", "client_metadata_url", "scopes", "redirect_uri"];

/**
 * Checks the plan's `connect.oauth` object: only the contract's fields, with their types. A
 * field this code does not know is refused rather than ignored.
 */
export function checkOAuthPlan(oauth, Unsupported) {
  if (oauth === null || typeof oauth !== "object" || Array.isArray(oauth)) {
    throw new Unsupported(`connect.oauth must be an object, not ${JSON.stringify(oauth)}`);
  }
  const unknown = Object.keys(oauth).filter((k) => !OAUTH_FIELDS.includes(k));
  if (unknown.length > 0) throw new Unsupported(`this driver does not apply connect.oauth field(s) ${unknown.join(", ")}`);
  if (oauth.scopes != null && !(Array.isArray(oauth.scopes) && oauth.scopes.every((s) => typeof s === "string"))) {
    throw new Unsupported("connect.oauth.scopes must be an array of strings");
  }
}

/** A fresh random `state` value (32 bytes, base64url). */
function freshState() {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return Buffer.from(bytes).toString("base64url");
}

/** `url` without query and fragment: what a redirect must land on to reach the redirect URI. */
function landing(url) {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

/**
 * An in-memory `OAuthClientProvider` for one plan. The plan's fields map onto the provider's
 * parts: `client_id`/`client_secret` → `clientInformation()` (pre-registered; the SDK then does
 * not register), `client_metadata_url` → `clientMetadataUrl` (the SDK uses it as the client id
 * where the authorization server supports Client ID Metadata Documents), `scopes` →
 * `clientMetadata.scope` (the SDK's fallback when neither the challenge nor the resource
 * metadata names scopes), `redirect_uri` → `redirectUrl` and the registered `redirect_uris`.
 */
export class HeadlessOAuthProvider {
  /**
   * @param oauth the plan's `connect.oauth`
   * @param fetchFn the fetch to use for the user step (the driver's tracking fetch, so the plan's
   *   end aborts it)
   * @param userStepMs the user step's deadline
   */
  constructor(oauth, { fetchFn = fetch, userStepMs } = {}) {
    this.oauth = oauth;
    this.fetchFn = fetchFn;
    this.userStepMs = userStepMs ?? DEFAULT_USER_STEP_MS;
    this.redirectUri = oauth.redirect_uri ?? DEFAULT_REDIRECT_URI;
    this.clientMetadataUrl = oauth.client_metadata_url ?? undefined;
    this.registered = oauth.client_id != null ? { client_id: oauth.client_id, ...(oauth.client_secret != null && { client_secret: oauth.client_secret }) } : undefined;
    this.savedTokens = undefined;
    this.verifier = undefined;
    this.discovery = undefined;
    /**
     * The `state` values of the flows started and not yet answered. The SDK may run several
     * flows at once (a POST and the GET listener both meeting a 401), each with its own state.
     */
    this.sentStates = new Set();
    /**
     * What reached the redirect URI and still waits for `finishAuth`: the query, and the PKCE
     * verifier of the flow it answers (the SDK keeps one verifier slot, which a concurrent flow
     * overwrites; the application restores the one its callback belongs to).
     */
    this.callback = undefined;
  }

  get redirectUrl() {
    return this.redirectUri;
  }

  get clientMetadata() {
    const scopes = this.oauth.scopes ?? [];
    return {
      client_name: "mcp-harness-driver",
      redirect_uris: [this.redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: this.oauth.client_secret != null ? "client_secret_post" : "none",
      ...(scopes.length > 0 && { scope: scopes.join(" ") }),
    };
  }

  state() {
    const state = freshState();
    this.sentStates.add(state);
    return state;
  }

  // The SDK's storage hooks: the client's registration, its tokens, the PKCE verifier and the
  // discovery results, kept in memory for the one plan.
  clientInformation() { return this.registered; }
  saveClientInformation(info) { this.registered = info; }
  tokens() { return this.savedTokens; }
  saveTokens(tokens) { this.savedTokens = tokens; }
  discoveryState() { return this.discovery; }
  saveDiscoveryState(discovery) { this.discovery = discovery; }
  saveCodeVerifier(verifier) { this.verifier = verifier; }

  codeVerifier() {
    if (this.verifier === undefined) throw new Error("no PKCE code verifier saved: no authorization was started");
    return this.verifier;
  }

  invalidateCredentials(scope) {
    if (scope === "all" || scope === "client") this.registered = this.oauth.client_id != null ? this.registered : undefined;
    if (scope === "all" || scope === "tokens") this.savedTokens = undefined;
    if (scope === "all" || scope === "verifier") this.verifier = undefined;
    if (scope === "all" || scope === "discovery") this.discovery = undefined;
  }

  /**
   * The user step, headless: GET the authorization URL without following redirects and take
   * the redirect's `Location` as the browser's landing. What lands on the redirect URI is
   * kept for `finishAuth`; a redirect elsewhere would never reach the application's redirect
   * URI, and an answer that is no redirect leaves the user on a page: both end the flow here
   * with the reason (the SDK reports it as the failure of the request that needed the flow).
   */
  async redirectToAuthorization(authorizationUrl) {
    const verifier = this.verifier;
    const url = new URL(authorizationUrl);
    let response;
    try {
      response = await this.fetchFn(url, { method: "GET", redirect: "manual", signal: AbortSignal.timeout(this.userStepMs) });
    } catch (e) {
      throw new Error(`the authorization endpoint could not be reached: ${e instanceof Error ? e.message : String(e)}`);
    }
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get("location");
    if (response.status < 300 || response.status > 399 || location === null) {
      throw new Error(`the authorization endpoint answered HTTP ${response.status} instead of redirecting`);
    }
    let target;
    try {
      target = new URL(location, url);
    } catch {
      throw new Error(`the authorization endpoint redirected to ${JSON.stringify(location)}, not a URL`);
    }
    if (landing(target) !== landing(this.redirectUri)) {
      throw new Error(`the authorization server redirected to ${landing(target)}, not to the redirect URI ${this.redirectUri}`);
    }
    const params = target.searchParams;
    const state = params.get("state");
    if (state === null || !this.sentStates.delete(state)) {
      throw new Error("the authorization response's state is not one this client sent");
    }
    this.callback = { params, verifier };
  }

  /**
   * Takes what reached the redirect URI (once) and makes its flow's PKCE verifier the one the
   * SDK reads next; undefined when no user step ran.
   */
  takeCallback() {
    const callback = this.callback;
    this.callback = undefined;
    if (callback === undefined) return undefined;
    this.verifier = callback.verifier;
    return callback.params;
  }
}

/**
 * Runs `attempt` (a connect or a request); when the SDK's flow stopped at the user step on the
 * way (it failed with the SDK's `UnauthorizedError` and `oauth`, the plan's provider, holds
 * what reached the redirect URI), hands that to `finish` (the driver's `transport.finishAuth`
 * call) and runs `retry` (by default `attempt` again), as an application does once its
 * redirect URI is reached. Any other failure is the attempt's own.
 */
export async function retryAfterAuthorization(oauth, UnauthorizedError, attempt, finish, retry = attempt) {
  try {
    return await attempt();
  } catch (e) {
    const callback = oauth && e instanceof UnauthorizedError ? oauth.takeCallback() : undefined;
    if (callback === undefined) throw e;
    await finish(callback);
    return await retry();
  }
}

/**
 * A plan's connect under `retryAfterAuthorization`: `connectOnce` connects a new client and
 * transport (a failed connect leaves its client discarded). After a retry has connected, the
 * plan whose state is `s` is not closed: the close that ended the first attempt belongs to the
 * discarded client.
 */
export function connectAfterAuthorization(s, oauth, UnauthorizedError, connectOnce, finish) {
  return retryAfterAuthorization(oauth, UnauthorizedError, connectOnce, finish, async () => {
    await connectOnce();
    s.closed = false;
  });
}

/**
 * Runs `transport.finishAuth(answer)` under `bound` ms: the SDKs put no timeout on its token
 * request, so the driver ends the step itself (`by: driver`) with the error `fail` makes,
 * never hanging on a stalled token endpoint.
 */
export async function finishAuthWithin(transport, answer, bound, fail) {
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(fail(`transport.finishAuth did not finish within ${bound}ms (the SDK puts no timeout on its token request)`)),
      bound,
    );
  });
  try {
    await Promise.race([transport.finishAuth(answer), expired]);
  } finally {
    clearTimeout(timer);
  }
}
