import { describe, expect, it } from "vitest";
import { OAuthConfigError, describeOAuthSettings, parseOAuthConfig } from "./oauth-config";

const ISSUER = "https://auth.example.com";

describe("parseOAuthConfig", () => {
  it("is off when no issuer is named, and says so when other OAuth variables are set without one", () => {
    expect(parseOAuthConfig({})).toEqual({ enabled: false });
    expect(parseOAuthConfig({ COUNTERSIGN_OAUTH_ISSUERS: " , " })).toEqual({ enabled: false });
    expect(() => parseOAuthConfig({ COUNTERSIGN_OAUTH_SCOPES: "mcp" })).toThrow(/COUNTERSIGN_OAUTH_SCOPES set but COUNTERSIGN_OAUTH_ISSUERS is empty/);
  });

  it("defaults: audience is the public /mcp URL, its metadata URL is path-suffixed, asymmetric algorithms, 30 s skew", () => {
    const c = parseOAuthConfig({ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_PUBLIC_URL: "https://cs.example.com/" });
    expect(c).toEqual({
      enabled: true,
      issuers: [{ issuer: ISSUER, jwksUrl: null }],
      audience: "https://cs.example.com/mcp",
      resourceMetadataUrl: "https://cs.example.com/.well-known/oauth-protected-resource/mcp",
      requiredScopes: [],
      algorithms: ["RS256", "PS256", "ES256", "EdDSA"],
      clockToleranceSec: 30,
      jwksCooldownMs: 30_000,
      clients: [],
    });
    expect(parseOAuthConfig({ COUNTERSIGN_OAUTH_ISSUERS: ISSUER }).enabled && parseOAuthConfig({ COUNTERSIGN_OAUTH_ISSUERS: ISSUER })).toMatchObject({ audience: "http://localhost:3000/mcp" });
  });

  it("reads several issuers, an explicit JWKS for one, scopes, algorithms, skew and client rules", () => {
    const c = parseOAuthConfig({
      COUNTERSIGN_OAUTH_ISSUERS: `${ISSUER}, http://127.0.0.1:3300/oidc`,
      COUNTERSIGN_OAUTH_AUDIENCE: "https://cs.example.com/mcp",
      COUNTERSIGN_OAUTH_SCOPES: "mcp:tools,mcp:tasks",
      COUNTERSIGN_OAUTH_ALGORITHMS: "ES256 EdDSA",
      COUNTERSIGN_OAUTH_CLOCK_SKEW_S: "5",
      COUNTERSIGN_OAUTH_CLIENTS: JSON.stringify([{ issuer: ISSUER, clientId: "ci", user: "lena.lead@countersign.test", subjects: { "u-1": "sam.lead@countersign.test" } }]),
    });
    expect(c).toMatchObject({
      issuers: [{ issuer: ISSUER }, { issuer: "http://127.0.0.1:3300/oidc" }],
      requiredScopes: ["mcp:tools", "mcp:tasks"],
      algorithms: ["ES256", "EdDSA"],
      clockToleranceSec: 5,
      clients: [{ issuer: ISSUER, clientId: "ci", user: "lena.lead@countersign.test", subjects: { "u-1": "sam.lead@countersign.test" } }],
    });
    expect(parseOAuthConfig({ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_JWKS_URL: "https://auth.example.com/keys" })).toMatchObject({ issuers: [{ issuer: ISSUER, jwksUrl: "https://auth.example.com/keys" }] });
  });

  it.each([
    [{ COUNTERSIGN_OAUTH_ISSUERS: "auth.example.com" }, /COUNTERSIGN_OAUTH_ISSUERS: "auth.example.com" is not a URL/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: "http://auth.example.com" }, /must use https/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: "https://auth.example.com/?tenant=1" }, /must not have a query or a fragment/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: `${ISSUER} ${ISSUER}` }, /names an issuer twice/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: `${ISSUER} https://b.example.com`, COUNTERSIGN_OAUTH_JWKS_URL: "https://b.example.com/jwks" }, /exactly one issuer/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_JWKS_URL: "http://keys.example.com/jwks" }, /COUNTERSIGN_OAUTH_JWKS_URL: .* must use https/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_AUDIENCE: "countersign" }, /COUNTERSIGN_OAUTH_AUDIENCE: "countersign" is not a URL/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_AUDIENCE: "https://cs.example.com/mcp#x" }, /without query or fragment/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_SCOPES: 'mcp "x"' }, /is not a scope token/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_ALGORITHMS: "HS256" }, /"HS256" is not accepted; use asymmetric/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_ALGORITHMS: "none" }, /"none" is not accepted/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_CLOCK_SKEW_S: "3600" }, /COUNTERSIGN_OAUTH_CLOCK_SKEW_S: "3600" must be a whole number from 0 to 300/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_CLOCK_SKEW_S: "1.5" }, /whole number/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_CLIENTS: "[{" }, /COUNTERSIGN_OAUTH_CLIENTS is not JSON/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_CLIENTS: JSON.stringify([{ issuer: ISSUER, clientId: "ci", user: "not-an-email" }]) }, /COUNTERSIGN_OAUTH_CLIENTS: 0.user/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_CLIENTS: JSON.stringify([{ issuer: ISSUER, clientId: "ci", user: "a@b.test", role: "admin" }]) }, /COUNTERSIGN_OAUTH_CLIENTS/],
    [{ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_CLIENTS: JSON.stringify([{ issuer: "https://other.example.com", clientId: "ci", user: "a@b.test" }]) }, /is not in COUNTERSIGN_OAUTH_ISSUERS/],
    [
      { COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_CLIENTS: JSON.stringify([{ issuer: ISSUER, clientId: "ci", user: "a@b.test" }, { issuer: ISSUER, clientId: "ci", user: "c@b.test" }]) },
      /names a client twice/,
    ],
  ])("refuses %j with a clear error", (env, message) => {
    expect(() => parseOAuthConfig(env)).toThrow(OAuthConfigError);
    expect(() => parseOAuthConfig(env)).toThrow(message);
  });
});

describe("describeOAuthSettings", () => {
  it("says whether OAuth is on, from which issuers, for which resource", () => {
    expect(describeOAuthSettings({})).toMatch(/^OAuth access tokens off/);
    expect(describeOAuthSettings({ COUNTERSIGN_OAUTH_ISSUERS: ISSUER, COUNTERSIGN_OAUTH_SCOPES: "mcp" })).toBe(
      "OAuth access tokens from https://auth.example.com for http://localhost:3000/mcp (scopes mcp required; metadata at http://localhost:3000/.well-known/oauth-protected-resource/mcp); static tokens still accepted",
    );
    expect(() => describeOAuthSettings({ COUNTERSIGN_OAUTH_ISSUERS: "nope" })).toThrow(OAuthConfigError);
  });
});
