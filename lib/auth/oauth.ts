/**
 * OAuth 2.1 access tokens (JWT, RFC 9068) from the configured authorization servers: the signature against the
 * issuer's JWKS (fetched again when a token names an unknown key, so key rotation needs nothing here), `iss` one
 * of the configured issuers, `aud` this resource (RFC 8707), `exp`/`nbf` with a small tolerance, asymmetric
 * algorithms only. The token's issuer and client (`client_id`, else `azp`) name an Agent row; an unknown client
 * becomes a pending agent that an admin enables (or one enabled at once for the user a client rule names).
 */
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from "jose";
import { sha256Hex } from "../canonical";
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import type { Principal } from "../tasks/types";
import type { OAuthConfig } from "./oauth-config";

type Enabled = Extract<OAuthConfig, { enabled: true }>;

/** A refusal with the reason the client may read (never a claim's value). */
export class TokenRefused extends Error {
  override name = "TokenRefused";
}

/**
 * The issuer's metadata or key set could not be fetched (unreachable, an error status, a timeout, not JSON): the
 * token can be neither accepted nor refused now. Says nothing about the token; the request may be retried.
 */
export class AuthorizationServerUnavailable extends Error {
  override name = "AuthorizationServerUnavailable";
}

export type VerifiedToken = { issuer: string; clientId: string; subject: string | null; scopes: string[]; expiresAt: number };

const METADATA_TIMEOUT_MS = 5_000;

/** The JWKS URL of an issuer from its metadata (RFC 8414 first, then OpenID discovery), checked to be its own. */
export async function discoverJwksUrl(issuer: string, fetchImpl: typeof fetch = fetch): Promise<string> {
  const base = new URL(issuer);
  const path = base.pathname.replace(/\/+$/, "");
  const candidates = [
    new URL(`/.well-known/oauth-authorization-server${path}`, base),
    new URL(`${path}/.well-known/openid-configuration`, base),
  ];
  for (const url of candidates) {
    const res = await fetchImpl(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(METADATA_TIMEOUT_MS) }).catch(() => null);
    if (!res?.ok) continue;
    const meta = (await res.json().catch(() => null)) as { issuer?: unknown; jwks_uri?: unknown } | null;
    if (!meta || meta.issuer !== issuer) continue;
    if (typeof meta.jwks_uri !== "string") continue;
    return new URL(meta.jwks_uri).href;
  }
  throw new AuthorizationServerUnavailable(`No authorization server metadata with a jwks_uri for issuer ${issuer}`);
}

type KeySet = ReturnType<typeof createRemoteJWKSet>;
const keySets = new Map<string, Promise<KeySet>>();

/** Whether a key set lookup failed for want of the key set itself: its fetch failed, timed out, or was not a key set. */
function keySetFetchFailed(e: unknown): boolean {
  if (e instanceof errors.JWKSTimeout || e instanceof errors.JWKSInvalid) return true;
  // fetch's own failure (refused, reset, DNS): a TypeError; an error status or a body that is not JSON: a generic JOSEError.
  if (e instanceof TypeError) return true;
  return e instanceof errors.JOSEError && e.code === "ERR_JOSE_GENERIC";
}

/** The remote key set, with a failure to fetch it told apart from a token it does not verify. */
function reachableKeys(keys: KeySet): KeySet {
  const lookup = (async (header: Parameters<KeySet>[0], token: Parameters<KeySet>[1]) => {
    try {
      return await keys(header, token);
    } catch (e) {
      if (keySetFetchFailed(e)) throw new AuthorizationServerUnavailable("The authorization server's key set could not be fetched");
      throw e;
    }
  }) as KeySet;
  return lookup;
}

/** One remote key set per issuer, kept for the life of the process (jose caches and refetches the keys). */
function keySetFor(issuer: { issuer: string; jwksUrl: string | null }, cooldownMs: number): Promise<KeySet> {
  const key = `${issuer.issuer}\n${issuer.jwksUrl ?? ""}\n${cooldownMs}`;
  let set = keySets.get(key);
  if (!set) {
    set = (async () => {
      const url = issuer.jwksUrl ?? (await discoverJwksUrl(issuer.issuer));
      return reachableKeys(createRemoteJWKSet(new URL(url), { cooldownDuration: cooldownMs, timeoutDuration: METADATA_TIMEOUT_MS }));
    })();
    // A failed discovery is tried again on the next token, not remembered.
    set.catch(() => keySets.delete(key));
    keySets.set(key, set);
  }
  return set;
}

/** Forget the cached key sets (tests start authorization servers on the same issuer URL again). */
export function forgetKeySets(): void {
  keySets.clear();
}

function scopesOf(payload: JWTPayload): string[] {
  const out = new Set<string>();
  if (typeof payload.scope === "string") for (const s of payload.scope.split(" ")) if (s) out.add(s);
  const scp = payload.scp;
  if (typeof scp === "string") for (const s of scp.split(" ")) if (s) out.add(s);
  if (Array.isArray(scp)) for (const s of scp) if (typeof s === "string" && s) out.add(s);
  return [...out];
}

/** Whether a string is shaped like a compact JWS (three base64url parts). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

/**
 * Verifies a JWT access token against the configuration; throws TokenRefused with a short reason, or
 * AuthorizationServerUnavailable when the issuer's metadata or keys cannot be fetched.
 */
export async function verifyAccessTokenJwt(token: string, config: Enabled): Promise<VerifiedToken> {
  if (!looksLikeJwt(token)) throw new TokenRefused("Malformed access token");
  let iss: unknown;
  let alg: unknown;
  try {
    iss = decodeJwt(token).iss;
    alg = decodeProtectedHeader(token).alg;
  } catch {
    throw new TokenRefused("Malformed access token");
  }
  const issuer = config.issuers.find((i) => i.issuer === iss);
  if (!issuer) throw new TokenRefused("Token issuer is not trusted here");
  if (typeof alg !== "string" || !config.algorithms.includes(alg)) throw new TokenRefused("Token signature algorithm is not accepted");
  const keys = await keySetFor(issuer, config.jwksCooldownMs);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keys, {
      issuer: issuer.issuer,
      audience: config.audience,
      algorithms: config.algorithms,
      clockTolerance: config.clockToleranceSec,
      requiredClaims: ["exp"],
    }));
  } catch (e) {
    if (e instanceof AuthorizationServerUnavailable) throw e;
    throw new TokenRefused(refusalReason(e));
  }
  const clientId = typeof payload.client_id === "string" && payload.client_id ? payload.client_id : typeof payload.azp === "string" && payload.azp ? payload.azp : null;
  if (!clientId) throw new TokenRefused("Token names no client (client_id or azp)");
  return { issuer: issuer.issuer, clientId, subject: typeof payload.sub === "string" ? payload.sub : null, scopes: scopesOf(payload), expiresAt: payload.exp! };
}

function refusalReason(e: unknown): string {
  if (e instanceof errors.JWTExpired) return "Token has expired";
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === "aud") return "Token was not issued for this resource";
    if (e.claim === "nbf") return "Token is not valid yet";
    if (e.claim === "iss") return "Token issuer is not trusted here";
    return `Token claim ${e.claim} is not acceptable`;
  }
  if (e instanceof errors.JWKSNoMatchingKey) return "Token is signed by an unknown key";
  if (e instanceof errors.JWSSignatureVerificationFailed) return "Token signature is not valid";
  if (e instanceof errors.JOSEAlgNotAllowed) return "Token signature algorithm is not accepted";
  if (e instanceof errors.JWKSTimeout || e instanceof errors.JOSEError) return "Token could not be verified";
  throw e;
}

type OAuthAgentRow = {
  id: string;
  name: string;
  revokedAt: Date | null;
  pendingSince: Date | null;
  userId: string | null;
  userName: string | null;
  userEmail: string | null;
  userRole: string | null;
  userGroups: string[] | null;
  userActive: boolean | null;
};

/**
 * The agent of an issuer and client with the user it acts for, in one statement: the user the client rule maps
 * the token's subject to, else the agent's own user.
 */
async function oauthAgent(issuer: string, clientId: string, subjectUser: string | null): Promise<OAuthAgentRow | null> {
  const rows = await db().$queryRaw<OAuthAgentRow[]>`
    SELECT a.id, a.name, a."revokedAt", a."pendingSince", u.id AS "userId", u.name AS "userName", u.email AS "userEmail",
           u.role::text AS "userRole", u.groups AS "userGroups", u.active AS "userActive"
    FROM "Agent" a
    LEFT JOIN "User" u ON (CASE WHEN ${subjectUser}::text IS NULL THEN u.id = a."userId" ELSE u.email = ${subjectUser}::text END)
    WHERE a."oauthIssuer" = ${issuer} AND a."oauthClientId" = ${clientId}`;
  return rows[0] ?? null;
}

/** An agent name from a client id: lowercase letters, digits and dashes, prefixed so it never passes for a token agent. */
export function oauthAgentName(clientId: string): string {
  const slug = clientId.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 34);
  return `oauth-${slug || sha256Hex(clientId).slice(0, 8)}`;
}

/**
 * Records an agent for a client seen for the first time: enabled for the rule's user when a client rule names
 * one, else pending (held by the first admin until an admin enables it for a user). Concurrent first uses
 * create one row.
 */
async function registerOAuthAgent(issuer: string, clientId: string, ruleUser: string | null, now: Date): Promise<void> {
  await db().$transaction(async (tx) => {
    const owner = ruleUser
      ? await tx.user.findFirst({ where: { email: ruleUser, active: true }, select: { id: true } })
      : await tx.user.findFirst({ where: { role: "admin", active: true }, orderBy: { createdAt: "asc" }, select: { id: true } });
    if (!owner) throw new TokenRefused(ruleUser ? "The user this client acts for is not active" : "No admin can enable this client");
    const name = oauthAgentName(clientId);
    // Never a usable bearer token: not of the cs_ form, and no token's hash equals it.
    const tokenHash = sha256Hex(`oauth\n${issuer}\n${clientId}`);
    const pending = ruleUser ? null : now;
    const inserted = await tx.$queryRaw<{ id: string }[]>`
      INSERT INTO "Agent" (id, name, "tokenHash", "tokenPrefix", "userId", "createdAt", "oauthIssuer", "oauthClientId", "pendingSince")
      VALUES (gen_random_uuid()::text, ${name}, ${tokenHash}, 'oauth', ${owner.id}, ${now}, ${issuer}, ${clientId}, ${pending})
      ON CONFLICT DO NOTHING
      RETURNING id`;
    if (inserted[0]) {
      await appendAudit(tx, {
        type: "agent.created",
        actor: "system",
        data: { agentId: inserted[0].id, name, userId: owner.id, oauthIssuer: issuer, oauthClientId: clientId, pending: pending !== null },
        at: now,
      });
    }
  });
}

/**
 * The principal behind a verified token, or a refusal: revoked, pending, or its user inactive. One statement for
 * a known client; a client's first use records it (pending unless a client rule names its user).
 */
export async function oauthPrincipal(token: VerifiedToken, config: Enabled, now: Date): Promise<Principal> {
  const rule = config.clients.find((c) => c.issuer === token.issuer && c.clientId === token.clientId) ?? null;
  const subjectUser = (token.subject !== null && rule?.subjects[token.subject]) || null;
  let row = await oauthAgent(token.issuer, token.clientId, subjectUser);
  if (!row) {
    await registerOAuthAgent(token.issuer, token.clientId, rule?.user ?? null, now);
    row = await oauthAgent(token.issuer, token.clientId, subjectUser);
    if (!row) throw new TokenRefused("Unknown client");
  }
  if (row.revokedAt) throw new TokenRefused("This client's agent is revoked");
  if (row.pendingSince) throw new TokenRefused("This client's agent awaits an admin's approval");
  if (!row.userId || !row.userActive) throw new TokenRefused("The user this agent acts for is not active");
  return {
    agentId: row.id,
    agentName: row.name,
    userId: row.userId,
    userName: row.userName!,
    userEmail: row.userEmail!,
    userRole: row.userRole!,
    userGroups: row.userGroups ?? [],
  };
}
