/**
 * OAuth 2.1 resource-server settings of the MCP endpoint, from the environment. OAuth is off unless
 * COUNTERSIGN_OAUTH_ISSUERS names at least one authorization server; static agent tokens work either way.
 *
 *  - COUNTERSIGN_OAUTH_ISSUERS       issuer URLs, separated by commas or spaces (https, or http on a loopback host)
 *  - COUNTERSIGN_OAUTH_JWKS_URL      the JWKS of the one issuer, when its metadata should not be read
 *  - COUNTERSIGN_OAUTH_AUDIENCE      the resource identifier tokens must carry in `aud` (default: the public /mcp URL)
 *  - COUNTERSIGN_OAUTH_SCOPES        scopes every token must carry (space or comma separated; default none)
 *  - COUNTERSIGN_OAUTH_ALGORITHMS    accepted signature algorithms (default RS256 PS256 ES256 EdDSA; asymmetric only)
 *  - COUNTERSIGN_OAUTH_CLOCK_SKEW_S  tolerance on exp/nbf/iat in seconds (default 30, at most 300)
 *  - COUNTERSIGN_OAUTH_JWKS_COOLDOWN_MS  least time between two JWKS fetches for an unknown key (default 30000)
 *  - COUNTERSIGN_OAUTH_CLIENTS       JSON list of clients enabled on first use for a named user:
 *                                    [{"issuer": "...", "clientId": "...", "user": "email", "subjects": {"<sub>": "email"}}]
 */
import { getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/server";
import { z } from "zod";

export class OAuthConfigError extends Error {
  override name = "OAuthConfigError";
}

export type OAuthClientRule = { issuer: string; clientId: string; user: string; subjects: Record<string, string> };

export type OAuthConfig =
  | { enabled: false }
  | {
      enabled: true;
      issuers: { issuer: string; jwksUrl: string | null }[];
      audience: string;
      resourceMetadataUrl: string;
      requiredScopes: string[];
      algorithms: string[];
      clockToleranceSec: number;
      jwksCooldownMs: number;
      clients: OAuthClientRule[];
    };

const ASYMMETRIC = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];
const DEFAULT_ALGORITHMS = ["RS256", "PS256", "ES256", "EdDSA"];
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

type Env = Record<string, string | undefined>;

function list(raw: string | undefined): string[] {
  return (raw ?? "").split(/[\s,]+/).filter(Boolean);
}

/** An http(s) URL without query or fragment; plain http only on a loopback host. */
function serverUrl(name: string, raw: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OAuthConfigError(`${name}: "${raw}" is not a URL; expected ${what}, e.g. https://auth.example.com.`);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK.has(url.hostname))) {
    throw new OAuthConfigError(`${name}: "${raw}" must use https (plain http is accepted only on localhost).`);
  }
  if (url.search || url.hash) throw new OAuthConfigError(`${name}: "${raw}" must not have a query or a fragment.`);
  return url;
}

/** An issuer identifier is compared with `iss` exactly as configured (RFC 8414), so it is kept as written. */
function issuerOf(raw: string): string {
  serverUrl("COUNTERSIGN_OAUTH_ISSUERS", raw, "an authorization server's issuer URL");
  return raw;
}

const ClientRules = z.array(
  z
    .object({
      issuer: z.string().min(1),
      clientId: z.string().min(1).max(200),
      user: z.email(),
      subjects: z.record(z.string().min(1), z.email()).default({}),
    })
    .strict(),
);

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new OAuthConfigError(`${name}: "${raw}" must be a whole number from ${min} to ${max}.`);
  return n;
}

/** Reads and checks the OAuth settings; throws an OAuthConfigError naming the variable that is wrong. */
export function parseOAuthConfig(env: Env): OAuthConfig {
  const issuers = list(env.COUNTERSIGN_OAUTH_ISSUERS).map(issuerOf);
  const jwksRaw = env.COUNTERSIGN_OAUTH_JWKS_URL?.trim();
  if (issuers.length === 0) {
    const stray = Object.keys(env).filter((k) => k.startsWith("COUNTERSIGN_OAUTH_") && k !== "COUNTERSIGN_OAUTH_ISSUERS" && env[k]?.trim());
    if (stray.length) throw new OAuthConfigError(`${stray.sort().join(", ")} set but COUNTERSIGN_OAUTH_ISSUERS is empty: name the authorization server(s) to turn OAuth on.`);
    return { enabled: false };
  }
  if (new Set(issuers).size !== issuers.length) throw new OAuthConfigError("COUNTERSIGN_OAUTH_ISSUERS names an issuer twice.");
  let jwksUrl: string | null = null;
  if (jwksRaw) {
    if (issuers.length !== 1) throw new OAuthConfigError("COUNTERSIGN_OAUTH_JWKS_URL applies to exactly one issuer; with several, each issuer's metadata names its JWKS.");
    jwksUrl = serverUrl("COUNTERSIGN_OAUTH_JWKS_URL", jwksRaw, "the issuer's JWKS URL").href;
  }

  const publicUrl = (env.COUNTERSIGN_PUBLIC_URL?.trim() || "http://localhost:3000").replace(/\/+$/, "");
  const audienceRaw = env.COUNTERSIGN_OAUTH_AUDIENCE?.trim() || `${publicUrl}/mcp`;
  let audienceUrl: URL;
  try {
    audienceUrl = new URL(audienceRaw);
  } catch {
    throw new OAuthConfigError(`COUNTERSIGN_OAUTH_AUDIENCE: "${audienceRaw}" is not a URL; expected the public URL of /mcp, e.g. https://countersign.example.com/mcp.`);
  }
  if ((audienceUrl.protocol !== "https:" && audienceUrl.protocol !== "http:") || audienceUrl.hash || audienceUrl.search) {
    throw new OAuthConfigError(`COUNTERSIGN_OAUTH_AUDIENCE: "${audienceRaw}" must be an http(s) URL without query or fragment (RFC 8707).`);
  }

  const requiredScopes = list(env.COUNTERSIGN_OAUTH_SCOPES);
  const badScope = requiredScopes.find((s) => !SCOPE.test(s));
  if (badScope !== undefined) throw new OAuthConfigError(`COUNTERSIGN_OAUTH_SCOPES: "${badScope}" is not a scope token.`);

  const algorithms = env.COUNTERSIGN_OAUTH_ALGORITHMS?.trim() ? list(env.COUNTERSIGN_OAUTH_ALGORITHMS) : DEFAULT_ALGORITHMS;
  const badAlg = algorithms.find((a) => !ASYMMETRIC.includes(a));
  if (badAlg !== undefined) {
    throw new OAuthConfigError(`COUNTERSIGN_OAUTH_ALGORITHMS: "${badAlg}" is not accepted; use asymmetric algorithms only (${ASYMMETRIC.join(", ")}).`);
  }

  let clients: OAuthClientRule[] = [];
  const clientsRaw = env.COUNTERSIGN_OAUTH_CLIENTS?.trim();
  if (clientsRaw) {
    let json: unknown;
    try {
      json = JSON.parse(clientsRaw);
    } catch {
      throw new OAuthConfigError('COUNTERSIGN_OAUTH_CLIENTS is not JSON; expected [{"issuer": "...", "clientId": "...", "user": "email"}].');
    }
    const parsed = ClientRules.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new OAuthConfigError(`COUNTERSIGN_OAUTH_CLIENTS: ${issue?.path.join(".") || "value"}: ${issue?.message ?? "invalid"}; expected [{"issuer": "...", "clientId": "...", "user": "email"}].`);
    }
    clients = parsed.data;
    for (const c of clients) {
      if (!issuers.includes(c.issuer)) throw new OAuthConfigError(`COUNTERSIGN_OAUTH_CLIENTS: issuer "${c.issuer}" is not in COUNTERSIGN_OAUTH_ISSUERS.`);
    }
    const keys = clients.map((c) => `${c.issuer}\n${c.clientId}`);
    if (new Set(keys).size !== keys.length) throw new OAuthConfigError("COUNTERSIGN_OAUTH_CLIENTS names a client twice.");
  }

  return {
    enabled: true,
    issuers: issuers.map((issuer) => ({ issuer, jwksUrl })),
    audience: audienceRaw,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(audienceUrl),
    requiredScopes,
    algorithms,
    clockToleranceSec: integer(env, "COUNTERSIGN_OAUTH_CLOCK_SKEW_S", 30, 0, 300),
    jwksCooldownMs: integer(env, "COUNTERSIGN_OAUTH_JWKS_COOLDOWN_MS", 30_000, 0, 3_600_000),
    clients,
  };
}

let cached: { key: string; config: OAuthConfig } | null = null;

/** Every variable the settings read (a misspelt COUNTERSIGN_OAUTH_ one is caught at start, see describeOAuthSettings). */
const SETTINGS = [
  "COUNTERSIGN_OAUTH_ISSUERS",
  "COUNTERSIGN_OAUTH_JWKS_URL",
  "COUNTERSIGN_OAUTH_AUDIENCE",
  "COUNTERSIGN_OAUTH_SCOPES",
  "COUNTERSIGN_OAUTH_ALGORITHMS",
  "COUNTERSIGN_OAUTH_CLOCK_SKEW_S",
  "COUNTERSIGN_OAUTH_JWKS_COOLDOWN_MS",
  "COUNTERSIGN_OAUTH_CLIENTS",
  "COUNTERSIGN_PUBLIC_URL",
];

/**
 * The settings of the current environment, parsed once per distinct value. Keyed by the variables it reads, not
 * by listing the whole environment: that listing cost more than the rest of a request's authentication.
 */
export function oauthConfig(env: Env = process.env): OAuthConfig {
  const key = SETTINGS.map((k) => env[k] ?? "\u0000").join("\u0001");
  if (cached?.key !== key) cached = { key, config: parseOAuthConfig(env) };
  return cached.config;
}

/** What the OAuth settings turn on, for the start-up log (no secrets in them); throws an OAuthConfigError when wrong. */
export function describeOAuthSettings(env: Env = process.env): string {
  const c = parseOAuthConfig(env);
  if (!c.enabled) return "OAuth access tokens off (COUNTERSIGN_OAUTH_ISSUERS unset): agents use static tokens";
  const scopes = c.requiredScopes.length ? `scopes ${c.requiredScopes.join(" ")} required` : "no scope required";
  return `OAuth access tokens from ${c.issuers.map((i) => i.issuer).join(", ")} for ${c.audience} (${scopes}; metadata at ${c.resourceMetadataUrl}); static tokens still accepted`;
}
