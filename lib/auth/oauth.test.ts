/** The parts of OAuth token handling that need no authorization server: names, shapes, metadata discovery. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoverJwksUrl, looksLikeJwt, oauthAgentName } from "./oauth";

describe("oauthAgentName", () => {
  it("is a console-safe agent name, prefixed so no OAuth client passes for a token agent", () => {
    expect(oauthAgentName("ci-agent")).toBe("oauth-ci-agent");
    expect(oauthAgentName("Support-Bot")).toBe("oauth-support-bot");
    expect(oauthAgentName("0oa1b2c3d4/Prod Client")).toBe("oauth-0oa1b2c3d4-prod-client");
    expect(oauthAgentName("x".repeat(200))).toMatch(/^oauth-x{34}$/);
    expect(oauthAgentName("<script>")).toBe("oauth-script");
    expect(oauthAgentName("///")).toMatch(/^oauth-[0-9a-f]{8}$/);
    for (const id of ["ci-agent", "A B", "<x>", "é"]) expect(oauthAgentName(id)).toMatch(/^[a-z0-9][a-z0-9-]{1,40}$/);
  });
});

describe("looksLikeJwt", () => {
  it("accepts three base64url parts only", () => {
    expect(looksLikeJwt("eyJ.eyJ.sig")).toBe(true);
    expect(looksLikeJwt("eyJ.eyJ.")).toBe(false);
    expect(looksLikeJwt("cs_abc")).toBe(false);
    expect(looksLikeJwt("a.b.c.d")).toBe(false);
    expect(looksLikeJwt("a.b.c d")).toBe(false);
  });
});

describe("discoverJwksUrl", () => {
  // Each path answers as set here; anything else is a 404.
  const routes = new Map<string, unknown>();
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const body = routes.get(req.url ?? "");
      if (body === undefined) return void res.writeHead(404).end();
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("reads RFC 8414 metadata first (path-inserted), then OpenID discovery (path-appended)", async () => {
    routes.clear();
    routes.set("/.well-known/oauth-authorization-server/tenant", { issuer: `${base}/tenant`, jwks_uri: `${base}/tenant/keys-8414` });
    routes.set("/tenant/.well-known/openid-configuration", { issuer: `${base}/tenant`, jwks_uri: `${base}/tenant/keys-oidc` });
    expect(await discoverJwksUrl(`${base}/tenant`)).toBe(`${base}/tenant/keys-8414`);
    routes.delete("/.well-known/oauth-authorization-server/tenant");
    expect(await discoverJwksUrl(`${base}/tenant`)).toBe(`${base}/tenant/keys-oidc`);
  });

  it("refuses metadata that names another issuer, or no jwks_uri", async () => {
    routes.clear();
    routes.set("/.well-known/oauth-authorization-server", { issuer: "https://evil.example.com", jwks_uri: "https://evil.example.com/keys" });
    routes.set("/.well-known/openid-configuration", { issuer: base });
    await expect(discoverJwksUrl(base)).rejects.toThrow(/No authorization server metadata with a jwks_uri/);
  });
});
