/**
 * Bearer-token authentication of the MCP endpoint: the SDK's `requireBearerAuth` in front, our agent tokens
 * behind it. The Principal rides in `authInfo.extra` to the server factory and the handlers.
 *
 * With OAuth configured (lib/auth/oauth-config.ts) the endpoint is also an OAuth 2.1 resource server: a JWT access
 * token from a configured issuer authenticates the agent its client maps to (lib/auth/oauth.ts), every challenge
 * names the Protected Resource Metadata document (RFC 9728), and a request with no token at all gets a challenge
 * without an error code (RFC 6750 section 3.1). Static `cs_` tokens keep working unchanged.
 */
import { OAuthError, OAuthErrorCode, requireBearerAuth, type AuthInfo, type OAuthTokenVerifier } from "@modelcontextprotocol/server";
import { agentCacheGeneration, cachedAgent, rememberAgent } from "../auth/agent-cache";
import { authenticateAgentWith, hashToken } from "../auth/agents";
import { POLICY_HEAD_COLUMNS, type PolicyHead } from "../policy/store";
import { TokenRefused, oauthPrincipal, verifyAccessTokenJwt } from "../auth/oauth";
import { oauthConfig, type OAuthConfig } from "../auth/oauth-config";
import type { Principal } from "../tasks/types";
import { noteUnavailable } from "./unavailable";

/**
 * Agent tokens do not expire; revocation is checked on every request (from memory while the process listens for
 * every change, lib/auth/agent-cache.ts; else in the database). The SDK refuses an AuthInfo without
 * `expiresAt`, so we state the horizon of this one verification: it is re-done on the next request anyway.
 */
const VERIFICATION_HORIZON_S = 300;

/** An unreachable database (or authorization server) is noted for the route's 503; the SDK answers any other throw with a 500. */
function noting<T>(p: Promise<T>): Promise<T> {
  return p.catch((err: unknown) => {
    noteUnavailable(err);
    throw err;
  });
}

type Authenticated = { principal: Principal; policyHead: PolicyHead };

/** The agent and the policy's head, from memory while no change was announced since they were read (lib/auth/agent-cache.ts). */
async function authenticated(token: string): Promise<Authenticated | null> {
  const key = hashToken(token);
  const known = cachedAgent<Authenticated>(key);
  // A copy: the principal a request carries is its own.
  if (known) return { principal: structuredClone(known.principal), policyHead: known.policyHead };
  const generation = agentCacheGeneration();
  // The policy's head rides on the authentication statement: the request's policy read costs no round trip.
  const found = await noting(authenticateAgentWith<PolicyHead>(token, POLICY_HEAD_COLUMNS));
  if (!found) return null;
  const read: Authenticated = { principal: found.principal, policyHead: { doc: found.also.doc, rules: found.also.rules, catalog: found.also.catalog } };
  if (generation !== null) rememberAgent(key, { principal: structuredClone(read.principal), policyHead: read.policyHead }, generation);
  return read;
}

async function staticAgent(token: string, scopes: string[]): Promise<AuthInfo> {
  const found = await authenticated(token);
  if (!found) throw new OAuthError(OAuthErrorCode.InvalidToken, "Unknown or revoked agent token");
  const { principal, policyHead } = found;
  return {
    token,
    clientId: principal.agentId,
    // A static agent token is not scoped: it holds whatever scopes the endpoint requires.
    scopes,
    expiresAt: Math.floor(Date.now() / 1000) + VERIFICATION_HORIZON_S,
    extra: { principal, policyHead },
  };
}

export const agentTokenVerifier: OAuthTokenVerifier = {
  verifyAccessToken: (token: string) => staticAgent(token, []),
};

type Enabled = Extract<OAuthConfig, { enabled: true }>;

/** Static `cs_` tokens the old way; anything else as a JWT access token of a configured issuer. */
export function oauthTokenVerifier(config: Enabled): OAuthTokenVerifier {
  return {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      if (token.startsWith("cs_")) return staticAgent(token, config.requiredScopes);
      try {
        const verified = await verifyAccessTokenJwt(token, config);
        // Before the agent is looked up: a token that cannot be used records no agent.
        if (!config.requiredScopes.every((s) => verified.scopes.includes(s))) throw new OAuthError(OAuthErrorCode.InsufficientScope, "Insufficient scope");
        const principal = await noting(oauthPrincipal(verified, config, new Date()));
        return { token, clientId: principal.agentId, scopes: verified.scopes, expiresAt: verified.expiresAt, resource: new URL(config.audience), extra: { principal } };
      } catch (e) {
        if (e instanceof TokenRefused) throw new OAuthError(OAuthErrorCode.InvalidToken, e.message);
        // The issuer's metadata or keys could not be fetched: marked for the route's 503 (the SDK answers a 500).
        noteUnavailable(e);
        throw e;
      }
    },
  };
}

const staticGate = requireBearerAuth({ verifier: agentTokenVerifier });
let oauthGate: { config: Enabled; gate: typeof staticGate } | null = null;

/** RFC 6750 3.1: a request without credentials learns where to get them, with no error code. */
function challengeWithoutToken(config: Enabled): Response {
  const scope = config.requiredScopes.length ? `, scope="${config.requiredScopes.join(" ")}"` : "";
  return Response.json(
    { error: "unauthorized", error_description: "This endpoint needs a bearer token; its resource metadata names the authorization servers." },
    { status: 401, headers: { "WWW-Authenticate": `Bearer resource_metadata="${config.resourceMetadataUrl}"${scope}` } },
  );
}

/** `(request) => AuthInfo | Response`: the Response is the SDK's 401 with `WWW-Authenticate: Bearer ...`. */
export async function requireAgent(request: Request): Promise<AuthInfo | Response> {
  const config = oauthConfig();
  if (!config.enabled) return staticGate(request);
  if (!request.headers.get("authorization")) return challengeWithoutToken(config);
  if (oauthGate?.config !== config) {
    oauthGate = {
      config,
      gate: requireBearerAuth({ verifier: oauthTokenVerifier(config), requiredScopes: config.requiredScopes, resourceMetadataUrl: config.resourceMetadataUrl }),
    };
  }
  return oauthGate.gate(request);
}

/** The policy head the request's authentication read with the agent, when it did (static tokens). */
export function policyHeadOf(authInfo: AuthInfo | undefined): PolicyHead | undefined {
  const h = authInfo?.extra?.policyHead as PolicyHead | undefined;
  return h && typeof h === "object" && "doc" in h && "rules" in h && "catalog" in h ? h : undefined;
}

export function principalOf(authInfo: AuthInfo | undefined): Principal | null {
  const p = authInfo?.extra?.principal as Partial<Principal> | undefined;
  if (!p || typeof p.agentId !== "string" || typeof p.userId !== "string") return null;
  return p as Principal;
}
