/**
 * A real OpenID Connect provider for the single sign-on tests: `oidc-provider` with one confidential client for the
 * authorization-code flow (PKCE required), its development login and consent pages (any login name is the account
 * id), and accounts whose claims come from an in-memory map the spec changes between sign-ins.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export const IDP_PORT = Number(process.env.SSO_IDP_PORT ?? 3352);
export const IDP_ISSUER = `http://127.0.0.1:${IDP_PORT}`;
export const IDP_CLIENT = { id: "countersign-e2e", secret: "e2e-client-secret-not-a-real-one" };
export const IDP_PROVIDER_ID = "testidp";
export const IDP_NAME = "Test IdP";

export type Claims = { email?: string; email_verified?: boolean; name?: string; groups?: string[] };

export type TestIdp = { claims: Map<string, Claims>; close: () => Promise<void> };

/** Starts the provider on IDP_PORT; `redirectBase` is Countersign's origin (the client's redirect URI lives there). */
export async function startIdp(redirectBase: string): Promise<TestIdp> {
  const claims = new Map<string, Claims>();
  const provider = new Provider(IDP_ISSUER, {
    clients: [
      {
        client_id: IDP_CLIENT.id,
        client_secret: IDP_CLIENT.secret,
        redirect_uris: [`${redirectBase}/api/auth/callback/${IDP_PROVIDER_ID}`],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    pkce: { required: () => true },
    scopes: ["openid", "email", "profile", "groups"],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
    // The scopes' claims go into the ID token itself (Countersign reads them from there).
    conformIdTokenClaims: false,
    findAccount: async (_ctx, id) => ({
      accountId: id,
      // Read at every token and userinfo request: a change in the map shows at the next sign-in.
      claims: async () => ({ sub: id, ...(claims.get(id) ?? {}) }),
    }),
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ["e2e-cookie-key-one-two-three-four"] },
  });
  // What the provider refused, in the test output (a sign-in that fails at the token endpoint shows why here).
  provider.on("server_error", (_ctx, err) => console.error(`[idp] server error: ${err.message}`));
  provider.on("grant.error", (ctx, err) =>
    console.error(`[idp] token request refused: ${err.message}: ${(err as { error_detail?: string }).error_detail ?? ""} (redirect_uri ${String(ctx.oidc.params?.redirect_uri ?? "none")})`),
  );
  provider.on("authorization.error", (_ctx, err) => console.error(`[idp] authorization refused: ${err.message}: ${(err as { error_detail?: string }).error_detail ?? (err as { error_description?: string }).error_description ?? ""}`));
  const server = http.createServer(provider.callback());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(IDP_PORT, "127.0.0.1", () => resolve());
  });
  if ((server.address() as AddressInfo).port !== IDP_PORT) throw new Error("the test provider did not listen on its port");
  return {
    claims,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
