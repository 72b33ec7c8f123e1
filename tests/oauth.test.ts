/**
 * The MCP endpoint as an OAuth 2.1 resource server, against a real authorization server: oidc-provider on a
 * loopback port issuing JWT access tokens by the client-credentials grant, bound by a resource indicator (RFC 8707)
 * to Countersign's /mcp, which runs in process behind a real HTTP server. The official SDK client gets its token by
 * itself (401, the resource metadata, the issuer's metadata, the token endpoint) and drives a gated call to
 * approved-executed; refused tokens get the right status and challenge, and nothing runs. An interactive client
 * does the authorization code flow with PKCE (S256) and the resource parameter, the person's sign-in and consent
 * driven through the provider's interaction API. An authorization server that cannot be reached is a 503.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, type RawClientDispatch } from "@modelcontextprotocol/ext-tasks/client";
import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import Provider, { errors as oidcErrors, type ClientMetadata } from "oidc-provider";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { enableAgent, revokeAgent } from "../lib/admin/agents";
import { forgetKeySets } from "../lib/auth/oauth";
import { requireAgent } from "../lib/mcp/auth";
import { countStatements } from "../scripts/bench-support";
import { db } from "../lib/db/client";
import { decide } from "../lib/tasks/decide";
import { REVISION, SUPPORT_BOT, serveRoute } from "../lib/mcp/testing";
import { buildRpcRequest, parseRpcBody } from "../lib/mcp/raw-request";
import { refundsFor, requestIdOf, resetDb, rowsWritten, userId } from "./support/db";
import { freeLoopbackPort } from "../lib/net/free-port";

/** The authorization server's port, free when the suite starts and kept for its restarts (a key rotation keeps the issuer). */
let PORT = 0;
let ISSUER = "";
const OTHER_RESOURCE = "https://elsewhere.example.com/mcp";
const SECRET = "a-client-secret-of-the-test-authorization-server";
const CLIENTS = ["ci-agent", "mapped-agent", "new-agent", "brief-agent", "unscoped-agent"] as const;
/** An interactive MCP client (a desktop app): a public client of the authorization code flow with PKCE. */
const DESK_CLIENT = "desk-agent";
const DESK_REDIRECT = "http://127.0.0.1:3313/callback";
/** The account the person signs in as at the authorization server (the access token's subject). */
const DESK_ACCOUNT = "otto-at-the-organisation";
const DISPOSITION = "io.modelcontextprotocol/tool-approval-disposition";
const CLIENT_INFO = { name: "countersign-oauth-test", version: "1.0.0" };
const TASKS_CAPABILITIES = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const GATED = { order_id: "O-2289" };
const ENV = [
  "COUNTERSIGN_OAUTH_ISSUERS",
  "COUNTERSIGN_OAUTH_AUDIENCE",
  "COUNTERSIGN_OAUTH_SCOPES",
  "COUNTERSIGN_OAUTH_CLOCK_SKEW_S",
  "COUNTERSIGN_OAUTH_JWKS_COOLDOWN_MS",
  "COUNTERSIGN_OAUTH_CLIENTS",
  "COUNTERSIGN_POLL_INTERVAL_MS",
];

type Key = { privateJwk: JWK; kid: string };

async function newKey(kid: string): Promise<Key> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  return { privateJwk: { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" }, kid };
}

let mcp: Awaited<ReturnType<typeof serveRoute>>;
let audience: string;
let authServer: Server | null = null;
const closers: (() => Promise<unknown>)[] = [];

/** oidc-provider on ISSUER signing with the first of `keys` (the others stay published, as in a rotation). */
async function startAuthorizationServer(keys: Key[]): Promise<void> {
  const provider = new Provider(ISSUER, {
    clients: CLIENTS.map((id): ClientMetadata => ({
      client_id: id,
      client_secret: SECRET,
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: "client_secret_basic",
      scope: "mcp",
    })).concat([
      {
        client_id: DESK_CLIENT,
        grant_types: ["authorization_code"],
        redirect_uris: [DESK_REDIRECT],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        scope: "mcp",
      },
    ]),
    jwks: { keys: keys.map((k) => k.privateJwk) },
    scopes: ["mcp"],
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string, client: { clientId: string }) => {
          if (resource !== audience && resource !== OTHER_RESOURCE) throw new oidcErrors.InvalidTarget();
          return { scope: "mcp", audience: resource, accessTokenFormat: "jwt", accessTokenTTL: client.clientId === "brief-agent" ? 1 : 300, jwt: { sign: { alg: "RS256" } } };
        },
      },
    },
  });
  const serve = provider.callback();
  // No kept-alive connections: a restarted server on the same port meets no stale socket.
  const server = createServer((req, res) => {
    res.shouldKeepAlive = false;
    if (req.url?.startsWith("/interaction/")) return void signInAndConsent(provider, req, res);
    serve(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(PORT, "127.0.0.1", () => resolve());
  });
  authServer = server;
}

/**
 * The organisation's sign-in and consent page, as its interaction API sees it: the person signs in as DESK_ACCOUNT
 * and grants the client the scope it asked for on the resource it named (RFC 8707), then goes back to the flow.
 */
async function signInAndConsent(provider: Provider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const details = await provider.interactionDetails(req, res);
    const params = details.params as { client_id: string; resource?: string; scope?: string };
    const grant = new provider.Grant({ accountId: DESK_ACCOUNT, clientId: params.client_id });
    interactions.push({ prompt: details.prompt.name, resource: params.resource, scope: params.scope });
    // The scope is both one the provider knows and one of the resource's (RFC 8707): granted as both.
    grant.addOIDCScope(params.scope ?? "mcp");
    if (params.resource) grant.addResourceScope(params.resource, params.scope ?? "mcp");
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: DESK_ACCOUNT }, consent: { grantId } }, { mergeWithLastSubmission: false });
  } catch (e) {
    res.writeHead(500).end(String(e));
  }
}

/** What the authorization server's interaction saw: the prompt, and the resource and scope asked for. */
const interactions: { prompt: string; resource?: string; scope?: string }[] = [];

async function stopAuthorizationServer(): Promise<void> {
  const server = authServer;
  authServer = null;
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A token straight from the token endpoint (client credentials, client_secret_basic). */
async function tokenFor(clientId: (typeof CLIENTS)[number], opts: { resource?: string; scope?: string | null } = {}): Promise<{ access_token: string; expires_in: number }> {
  const form = new URLSearchParams({ grant_type: "client_credentials", resource: opts.resource ?? audience });
  if (opts.scope !== null) form.set("scope", opts.scope ?? "mcp");
  const res = await fetch(`${ISSUER}/token`, {
    method: "POST",
    headers: { Authorization: `Basic ${Buffer.from(`${clientId}:${SECRET}`).toString("base64")}`, "Content-Type": "application/x-www-form-urlencoded" },
    body: form,
  });
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

async function callGated(token: string | null) {
  const { headers, body } = buildRpcRequest("tools/call", { name: "issue_refund", arguments: GATED }, { token, caps: TASKS_CAPABILITIES, clientName: CLIENT_INFO.name });
  const res = await fetch(mcp.url, { method: "POST", headers, body });
  const text = await res.text();
  return { status: res.status, challenge: res.headers.get("www-authenticate"), body: parseRpcBody(text, res.headers.get("content-type") ?? ""), text };
}

async function approve(taskId: string): Promise<void> {
  const r = await decide({ requestId: await requestIdOf(taskId), reviewerId: await userId("lena.lead@countersign.test"), decision: "approve" }, new Date());
  expect(r.ok).toBe(true);
}

/** The official SDK client with its client-credentials provider; the ext-tasks session reuses the token it got. */
async function sdkSession(clientId: (typeof CLIENTS)[number]) {
  return sdkSessionWith(new ClientCredentialsProvider({ clientId, clientSecret: SECRET, scope: "mcp", expectedIssuer: ISSUER }));
}

/** The official SDK client connected with `auth`; the ext-tasks session reuses the token it holds. */
async function sdkSessionWith<A extends OAuthClientProvider>(auth: A) {
  const client = new Client(CLIENT_INFO, { capabilities: TASKS_CAPABILITIES, versionNegotiation: { mode: { pin: REVISION } } });
  await client.connect(new StreamableHTTPClientTransport(mcp.url, { authProvider: auth }));
  closers.push(() => client.close());
  let id = 0;
  const rawDispatch: RawClientDispatch = async (request, options) => {
    const { method, params } = request as { method: string; params?: { name?: string; taskId?: string } };
    const res = await fetch(mcp.url, {
      method: "POST",
      signal: options?.signal,
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        Authorization: `Bearer ${(await auth.tokens())!.access_token}`,
        "MCP-Protocol-Version": REVISION,
        "Mcp-Method": method,
        "Mcp-Name": String(params?.name ?? params?.taskId ?? ""),
        ...options?.context?.headers,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: `oauth-${++id}`, ...(request as object) }),
    });
    const reply = parseRpcBody(await res.text(), res.headers.get("content-type") ?? "");
    return reply.error ? { kind: "error", error: reply.error } : { kind: "result", result: reply.result };
  };
  const session = createTaskSessionFromClient(client, {
    endpointId: "countersign-oauth-test",
    rawDispatch,
    v2RequestFraming: { protocolVersion: REVISION, clientInfo: CLIENT_INFO, clientCapabilities: {} },
  });
  closers.push(() => session.close());
  return { client, session, auth };
}

let signingKey: Key;

beforeAll(async () => {
  PORT = await freeLoopbackPort();
  ISSUER = `http://127.0.0.1:${PORT}`;
  mcp = await serveRoute();
  audience = mcp.url.href;
  Object.assign(process.env, {
    COUNTERSIGN_OAUTH_ISSUERS: ISSUER,
    COUNTERSIGN_OAUTH_AUDIENCE: audience,
    COUNTERSIGN_OAUTH_SCOPES: "mcp",
    COUNTERSIGN_OAUTH_CLOCK_SKEW_S: "0",
    // A token signed by a key not yet seen fetches the key set again at once (the default waits 30 s between fetches).
    COUNTERSIGN_OAUTH_JWKS_COOLDOWN_MS: "0",
    COUNTERSIGN_OAUTH_CLIENTS: JSON.stringify([
      { issuer: ISSUER, clientId: "ci-agent", user: "rita.requester@countersign.test" },
      { issuer: ISSUER, clientId: "mapped-agent", user: "rita.requester@countersign.test", subjects: { "mapped-agent": "otto.ops@countersign.test" } },
      { issuer: ISSUER, clientId: "brief-agent", user: "rita.requester@countersign.test" },
      { issuer: ISSUER, clientId: "unscoped-agent", user: "rita.requester@countersign.test" },
      // The interactive client acts for the person who signed in at the authorization server.
      { issuer: ISSUER, clientId: DESK_CLIENT, user: "rita.requester@countersign.test", subjects: { [DESK_ACCOUNT]: "otto.ops@countersign.test" } },
    ]),
    COUNTERSIGN_POLL_INTERVAL_MS: "20",
  });
  signingKey = await newKey("key-1");
  await startAuthorizationServer([signingKey]);
});

afterAll(async () => {
  for (const k of ENV) delete process.env[k];
  forgetKeySets();
  await stopAuthorizationServer();
  await mcp.close();
});

beforeEach(resetDb);
afterEach(async () => {
  while (closers.length) await closers.pop()!().catch(() => {});
});

/** A reviewer approves the task; the client's execution then settles approved-executed, and the refund ran once. */
async function approvedExecuted(execution: { settle(): Promise<{ outcome: { status: string; error?: { message: string } } }> }, taskId: string) {
  await approve(taskId);
  const { outcome } = await execution.settle();
  expect(outcome.status, outcome.status === "failed" ? outcome.error?.message : "").toBe("completed");
  expect((outcome as unknown as { result: { _meta: Record<string, unknown> } }).result._meta[DISPOSITION]).toBe("approved-executed");
  expect(await refundsFor("O-2289")).toHaveLength(1);
}

describe("protected resource metadata (RFC 9728) and the challenge", () => {
  it("both well-known forms serve the document; a request without a token gets 401 naming it, with no error code", async () => {
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const res = await fetch(new URL(path, mcp.url));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        resource: audience,
        authorization_servers: [ISSUER],
        scopes_supported: ["mcp"],
        bearer_methods_supported: ["header"],
        resource_name: "Countersign",
      });
    }
    const r = await callGated(null);
    expect(r.status).toBe(401);
    expect(r.challenge).toBe(`Bearer resource_metadata="${new URL("/.well-known/oauth-protected-resource/mcp", mcp.url).href}", scope="mcp"`);
  });
});

describe("an agent with an OAuth access token", () => {
  it("the SDK client gets a token by client credentials and a gated call ends approved-executed, as the client's configured user", async () => {
    const { session, auth } = await sdkSession("ci-agent");
    expect(auth.tokens()?.access_token).toMatch(/^ey/);
    const execution = await session.callTool("issue_refund", GATED);
    expect(execution.kind).toBe("task");
    const taskId = execution.handle!.taskId;
    const agent = await db().agent.findFirstOrThrow({ where: { oauthIssuer: ISSUER, oauthClientId: "ci-agent" }, include: { user: true } });
    expect(agent).toMatchObject({ name: "oauth-ci-agent", pendingSince: null, revokedAt: null, user: { email: "rita.requester@countersign.test" } });
    expect((await db().task.findUniqueOrThrow({ where: { id: taskId } })).agentId).toBe(agent.id);
    expect(await refundsFor("O-2289")).toHaveLength(0);
    await approvedExecuted(execution, taskId);
  });

  it("a client rule maps the token's subject to another user: the call is made for that user", async () => {
    const { access_token } = await tokenFor("mapped-agent");
    const r = await callGated(access_token);
    expect(r.status).toBe(200);
    const agent = await db().agent.findFirstOrThrow({ where: { oauthClientId: "mapped-agent" } });
    const task = await db().task.findFirstOrThrow({ where: { agentId: agent.id } });
    expect(task.principalUserId).toBe(await userId("otto.ops@countersign.test"));
  });

  it("an unknown client becomes a pending agent that authenticates nothing until an admin enables it (audited)", async () => {
    const { access_token } = await tokenFor("new-agent");
    const before = await rowsWritten();
    const refused = await callGated(access_token);
    expect(refused.status).toBe(401);
    expect(refused.challenge).toMatch(/^Bearer error="invalid_token", error_description="This client's agent awaits an admin's approval"/);
    expect(refused.challenge).toContain(`resource_metadata="${new URL("/.well-known/oauth-protected-resource/mcp", mcp.url).href}"`);
    const pending = await db().agent.findFirstOrThrow({ where: { oauthIssuer: ISSUER, oauthClientId: "new-agent" } });
    expect(pending.pendingSince).not.toBeNull();
    const after = await rowsWritten();
    expect({ ...after, audit: before.audit }).toEqual(before);
    expect(await db().auditEvent.count({ where: { type: "agent.created" } })).toBeGreaterThan(0);
    // A second refused use records nothing more.
    expect((await callGated(access_token)).status).toBe(401);
    expect(await db().agent.count({ where: { oauthClientId: "new-agent" } })).toBe(1);

    const admin = await userId("admin@countersign.test");
    expect(await enableAgent({ agentId: pending.id, userId: await userId("rita.requester@countersign.test") }, admin, new Date())).toBe(true);
    expect(await db().auditEvent.count({ where: { type: "agent.enabled", actor: `user:${admin}` } })).toBe(1);
    const accepted = await callGated(access_token);
    expect(accepted.status).toBe(200);
    expect(accepted.body.result.resultType).toBe("task");
  });
});

/**
 * An interactive MCP client's side of the authorization code flow: registered in advance as a public client (no
 * secret), it keeps its tokens and PKCE verifier in memory and records where it would send the person's browser.
 */
class DeskClientProvider implements OAuthClientProvider {
  saved: { tokens?: Awaited<ReturnType<OAuthClientProvider["tokens"]>>; verifier?: string } = {};
  authorizationUrl: URL | null = null;
  readonly sentState = `state-${Math.random().toString(36).slice(2)}`;
  get redirectUrl() {
    return DESK_REDIRECT;
  }
  get clientMetadata() {
    return { client_name: "Countersign desk test", redirect_uris: [DESK_REDIRECT], grant_types: ["authorization_code"], response_types: ["code"], token_endpoint_auth_method: "none", scope: "mcp" };
  }
  state() {
    return this.sentState;
  }
  clientInformation() {
    return { client_id: DESK_CLIENT };
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens(tokens: NonNullable<Awaited<ReturnType<OAuthClientProvider["tokens"]>>>) {
    this.saved.tokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.saved.verifier = verifier;
  }
  codeVerifier() {
    if (!this.saved.verifier) throw new Error("no code verifier saved");
    return this.saved.verifier;
  }
}

/**
 * The person's browser at the authorization server: from the authorization request, through the sign-in and
 * consent interaction, to the redirect back to the client; cookies kept as a browser keeps them. Returns the
 * callback URL with the code.
 */
async function browserThroughAuthorization(start: URL): Promise<URL> {
  const jar = new Map<string, string>();
  let url = start;
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(url, { redirect: "manual", headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") } });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = pair.indexOf("=");
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    await res.body?.cancel();
    const location = res.headers.get("location");
    expect([302, 303], `hop ${hop} to ${url.pathname}`).toContain(res.status);
    url = new URL(location!, url);
    if (url.href.startsWith(DESK_REDIRECT)) return url;
  }
  throw new Error("the authorization flow did not come back to the client");
}

describe("an interactive MCP client: the authorization code flow with PKCE", () => {
  it("the SDK client discovers the authorization server from the 401, the person signs in and consents, the code is exchanged; a gated call ends approved-executed for that person", async () => {
    interactions.length = 0;
    const desk = new DeskClientProvider();
    const first = new Client(CLIENT_INFO, { capabilities: TASKS_CAPABILITIES, versionNegotiation: { mode: { pin: REVISION } } });
    // What the client asks for, in order: the endpoint, the documents that lead it to the authorization server.
    const seen: { url: string; status: number; challenge: string | null }[] = [];
    const recording = async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(input, init);
      seen.push({ url: String(input instanceof Request ? input.url : input), status: res.status, challenge: res.headers.get("www-authenticate") });
      return res;
    };
    const transport = new StreamableHTTPClientTransport(mcp.url, { authProvider: desk, fetch: recording });
    // No token yet: the 401 names the resource metadata, which names the authorization server; the client sends the person there.
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const resourceMetadata = new URL("/.well-known/oauth-protected-resource/mcp", mcp.url).href;
    expect(seen[0]).toEqual({ url: mcp.url.href, status: 401, challenge: `Bearer resource_metadata="${resourceMetadata}", scope="mcp"` });
    // The resource metadata the challenge named, then the metadata of the authorization server it names (RFC 8414).
    expect(seen.slice(1).map((r) => `${r.status} ${r.url}`)).toEqual([`200 ${resourceMetadata}`, `200 ${ISSUER}/.well-known/oauth-authorization-server`]);
    const authorization = desk.authorizationUrl!;
    expect(authorization).not.toBeNull();
    expect(authorization.origin + authorization.pathname).toBe(`${ISSUER}/auth`);
    const q = authorization.searchParams;
    expect({ response_type: q.get("response_type"), client_id: q.get("client_id"), redirect_uri: q.get("redirect_uri"), method: q.get("code_challenge_method"), resource: q.get("resource"), scope: q.get("scope"), state: q.get("state") }).toEqual({
      response_type: "code",
      client_id: DESK_CLIENT,
      redirect_uri: DESK_REDIRECT,
      method: "S256",
      // RFC 8707: the token is asked for this resource, Countersign's /mcp.
      resource: audience,
      scope: "mcp",
      state: desk.sentState,
    });
    expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(desk.saved.verifier).toBeDefined();

    const callback = await browserThroughAuthorization(authorization);
    expect(interactions).toEqual([{ prompt: "login", resource: audience, scope: "mcp" }]);
    expect(callback.searchParams.get("state")).toBe(desk.sentState);
    expect(callback.searchParams.get("iss")).toBe(ISSUER);
    expect(callback.searchParams.get("code")).toBeTruthy();
    // The code exchange, with the PKCE verifier.
    await transport.finishAuth(callback.searchParams);
    const access = desk.saved.tokens!.access_token;
    const claims = JSON.parse(Buffer.from(access.split(".")[1], "base64url").toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: ISSUER, aud: audience, client_id: DESK_CLIENT, sub: DESK_ACCOUNT, scope: "mcp" });
    await first.close().catch(() => {});

    // Reconnected with the token: the gated call waits for a reviewer, as the person who signed in.
    const { session } = await sdkSessionWith(desk);
    const execution = await session.callTool("issue_refund", GATED);
    expect(execution.kind).toBe("task");
    const taskId = execution.handle!.taskId;
    const task = await db().task.findUniqueOrThrow({ where: { id: taskId } });
    expect(await db().agent.findUniqueOrThrow({ where: { id: task.agentId } })).toMatchObject({ oauthIssuer: ISSUER, oauthClientId: DESK_CLIENT, pendingSince: null });
    expect(task.principalUserId).toBe(await userId("otto.ops@countersign.test"));
    expect(await refundsFor("O-2289")).toHaveLength(0);
    await approvedExecuted(execution, taskId);
  });

  it("the authorization server refuses the code without the PKCE verifier, and a plain (non-S256) challenge", async () => {
    interactions.length = 0;
    const desk = new DeskClientProvider();
    const transport = new StreamableHTTPClientTransport(mcp.url, { authProvider: desk });
    const client = new Client(CLIENT_INFO, { capabilities: TASKS_CAPABILITIES, versionNegotiation: { mode: { pin: REVISION } } });
    await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const callback = await browserThroughAuthorization(desk.authorizationUrl!);
    const exchange = (verifier: string | null) => {
      const form = new URLSearchParams({ grant_type: "authorization_code", code: callback.searchParams.get("code")!, redirect_uri: DESK_REDIRECT, client_id: DESK_CLIENT, resource: audience });
      if (verifier) form.set("code_verifier", verifier);
      return fetch(`${ISSUER}/token`, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: form });
    };
    const without = await exchange(null);
    expect(without.status).toBe(400);
    expect(((await without.json()) as { error: string }).error).toBe("invalid_grant");
    const plain = new URL(desk.authorizationUrl!);
    plain.searchParams.set("code_challenge_method", "plain");
    const res = await fetch(plain, { redirect: "manual" });
    const refusedTo = new URL(res.headers.get("location") ?? "http://invalid/");
    expect(refusedTo.searchParams.get("error")).toBe("invalid_request");
    await client.close().catch(() => {});
  });
});

describe("refused tokens: the status, the challenge, and nothing runs", () => {
  async function expectRefused(token: string, status: number, challenge: RegExp) {
    const before = await rowsWritten();
    const r = await callGated(token);
    expect(r.status, r.text).toBe(status);
    expect(r.challenge).toMatch(challenge);
    expect(r.challenge).toContain(`resource_metadata="${new URL("/.well-known/oauth-protected-resource/mcp", mcp.url).href}"`);
    expect(await rowsWritten()).toEqual(before);
    expect(await refundsFor("O-2289")).toHaveLength(0);
  }

  it("a token for another resource (audience)", async () => {
    const { access_token } = await tokenFor("ci-agent", { resource: OTHER_RESOURCE });
    await expectRefused(access_token, 401, /^Bearer error="invalid_token", error_description="Token was not issued for this resource"/);
  });

  it("an expired token", async () => {
    const { access_token } = await tokenFor("brief-agent");
    const exp = JSON.parse(Buffer.from(access_token.split(".")[1], "base64url").toString()).exp as number;
    // Waits on the clock passing the token's own expiry (a one-second lifetime), bounded.
    for (let i = 0; i < 100 && Date.now() / 1000 <= exp; i++) await new Promise((r) => setTimeout(r, 50));
    expect(Date.now() / 1000).toBeGreaterThan(exp);
    await expectRefused(access_token, 401, /^Bearer error="invalid_token", error_description="Token has expired"/);
  });

  it("a token signed by a key the issuer never published", async () => {
    const rogue = await generateKeyPair("RS256");
    const now = Math.floor(Date.now() / 1000);
    const forged = await new SignJWT({ client_id: "ci-agent", scope: "mcp" })
      .setProtectedHeader({ alg: "RS256", kid: "rogue-key", typ: "at+jwt" })
      .setIssuer(ISSUER)
      .setAudience(audience)
      .setSubject("ci-agent")
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(rogue.privateKey);
    await expectRefused(forged, 401, /^Bearer error="invalid_token", error_description="Token is signed by an unknown key"/);
  });

  it("an unsigned token (alg none) and a token of an issuer that is not configured", async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = Buffer.from(JSON.stringify({ iss: ISSUER, aud: audience, client_id: "ci-agent", scope: "mcp", exp: now + 300 })).toString("base64url");
    await expectRefused(`${Buffer.from('{"alg":"none"}').toString("base64url")}.${claims}.`, 401, /^Bearer error="invalid_token"/);
    const rogue = await generateKeyPair("RS256");
    const foreign = await new SignJWT({ client_id: "ci-agent", scope: "mcp" }).setProtectedHeader({ alg: "RS256" }).setIssuer("https://evil.example.com").setAudience(audience).setExpirationTime(now + 300).sign(rogue.privateKey);
    await expectRefused(foreign, 401, /^Bearer error="invalid_token", error_description="Token issuer is not trusted here"/);
  });

  it("a token of a revoked agent is refused at once", async () => {
    const { access_token } = await tokenFor("ci-agent");
    expect((await callGated(access_token)).status).toBe(200);
    const agent = await db().agent.findFirstOrThrow({ where: { oauthClientId: "ci-agent" } });
    expect(await revokeAgent(agent.id, await userId("admin@countersign.test"), new Date())).toBe(true);
    await expectRefused(access_token, 401, /^Bearer error="invalid_token", error_description="This client's agent is revoked"/);
  });

  it("a token without the required scope gets 403 insufficient_scope naming the scope", async () => {
    const { access_token } = await tokenFor("unscoped-agent", { scope: null });
    await expectRefused(access_token, 403, /^Bearer error="insufficient_scope", error_description="Insufficient scope", scope="mcp"/);
  });

  it("a wrong static token is refused; the right one still works the old way", async () => {
    await expectRefused("cs_this-is-not-an-agent-token-of-this-server-000000", 401, /^Bearer error="invalid_token", error_description="Unknown or revoked agent token"/);
    const r = await callGated(SUPPORT_BOT);
    expect(r.status).toBe(200);
    expect(r.body.result.resultType).toBe("task");
  });
});

describe("the cost of authentication", () => {
  it("a known client's access token is one statement, like a static token", async () => {
    const { access_token } = await tokenFor("ci-agent");
    expect((await callGated(access_token)).status).toBe(200);
    const counter = await countStatements();
    try {
      for (const token of [access_token, SUPPORT_BOT]) {
        const m = await counter.measure(() => requireAgent(new Request(mcp.url, { method: "POST", headers: { authorization: `Bearer ${token}` } })));
        expect(m.value).not.toBeInstanceOf(Response);
        expect({ statements: m.statements, transactions: m.transactions }).toEqual({ statements: 1, transactions: 0 });
      }
    } finally {
      counter.restore();
    }
  });
});

describe("an authorization server that cannot be reached: 503 with Retry-After, and nothing runs", () => {
  async function expectUnavailable(token: string) {
    const before = await rowsWritten();
    const { headers, body } = buildRpcRequest("tools/call", { name: "issue_refund", arguments: GATED }, { token, caps: TASKS_CAPABILITIES, clientName: CLIENT_INFO.name });
    const res = await fetch(mcp.url, { method: "POST", headers, body });
    const reply = (await res.json()) as { jsonrpc: string; error?: { code: number; message: string } };
    expect(res.status).toBe(503);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(reply.jsonrpc).toBe("2.0");
    expect(reply.error?.code).toBe(-32603);
    expect(reply.error?.message).toMatch(/^The authorization server that issued the access token cannot be reached, so the token could not be verified\. This request was not processed: no tool ran and nothing was recorded\. Retry later\.$/);
    expect(await rowsWritten()).toEqual(before);
    expect(await refundsFor("O-2289")).toHaveLength(0);
  }

  it("its metadata cannot be fetched (the key set not yet known); once it is back, the same token works", async () => {
    const { access_token } = await tokenFor("ci-agent");
    forgetKeySets();
    await stopAuthorizationServer();
    try {
      await expectUnavailable(access_token);
    } finally {
      await startAuthorizationServer([signingKey]);
    }
    expect((await callGated(access_token)).status).toBe(200);
  });

  it("its key set cannot be fetched for a key not seen before", async () => {
    const { access_token } = await tokenFor("ci-agent");
    expect((await callGated(access_token)).status).toBe(200);
    const unseen = await newKey("key-unseen");
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ client_id: "ci-agent", scope: "mcp" })
      .setProtectedHeader({ alg: "RS256", kid: unseen.kid, typ: "at+jwt" })
      .setIssuer(ISSUER)
      .setAudience(audience)
      .setExpirationTime(now + 300)
      .sign(await importJWK(unseen.privateJwk, "RS256"));
    await stopAuthorizationServer();
    try {
      await expectUnavailable(token);
    } finally {
      await startAuthorizationServer([signingKey]);
    }
    // Back: the key is not published, so the token is refused as it should be.
    expect((await callGated(token)).status).toBe(401);
  });
});

describe("key rotation at the authorization server", () => {
  it("after the signing key is rotated, a new token (unknown kid) fetches the keys again and is accepted; the old token too while its key is published", async () => {
    const old = await tokenFor("ci-agent");
    expect((await callGated(old.access_token)).status).toBe(200);
    const rotated = await newKey("key-2");
    await stopAuthorizationServer();
    await startAuthorizationServer([rotated, signingKey]);
    const fresh = await tokenFor("ci-agent");
    expect(JSON.parse(Buffer.from(fresh.access_token.split(".")[0], "base64url").toString()).kid).toBe("key-2");
    expect((await callGated(fresh.access_token)).status).toBe(200);
    expect((await callGated(old.access_token)).status).toBe(200);
  });
});
