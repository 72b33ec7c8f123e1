/**
 * Bearer-token authentication of the MCP endpoint: the SDK's `requireBearerAuth` in front, our agent tokens
 * behind it. The Principal rides in `authInfo.extra` to the server factory and the handlers.
 */
import { OAuthError, OAuthErrorCode, requireBearerAuth, type AuthInfo, type OAuthTokenVerifier } from "@modelcontextprotocol/server";
import { authenticateAgent } from "../auth/agents";
import type { Principal } from "../tasks/types";
import { noteUnavailable } from "./unavailable";

/**
 * Agent tokens do not expire; revocation is checked on every request. The SDK refuses an AuthInfo without
 * `expiresAt`, so we state the horizon of this one verification: it is re-done on the next request anyway.
 */
const VERIFICATION_HORIZON_S = 300;

export const agentTokenVerifier: OAuthTokenVerifier = {
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    // An unreachable database is noted for the route's 503; the SDK answers any other throw with a 500.
    const principal = await authenticateAgent(token).catch((err: unknown) => {
      noteUnavailable(err);
      throw err;
    });
    if (!principal) throw new OAuthError(OAuthErrorCode.InvalidToken, "Unknown or revoked agent token");
    return {
      token,
      clientId: principal.agentId,
      scopes: [],
      expiresAt: Math.floor(Date.now() / 1000) + VERIFICATION_HORIZON_S,
      extra: { principal },
    };
  },
};

/** `(request) => AuthInfo | Response`: the Response is the SDK's 401 with `WWW-Authenticate: Bearer ...`. */
export const requireAgent = requireBearerAuth({ verifier: agentTokenVerifier });

export function principalOf(authInfo: AuthInfo | undefined): Principal | null {
  const p = authInfo?.extra?.principal as Partial<Principal> | undefined;
  if (!p || typeof p.agentId !== "string" || typeof p.userId !== "string") return null;
  return p as Principal;
}
