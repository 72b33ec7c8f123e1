/**
 * Auth.js configuration for the reviewer-facing browser side: email + password (bcrypt) of an active User, and
 * single sign-on through the OpenID Connect providers of COUNTERSIGN_OIDC_PROVIDERS (lib/auth/sso-config.ts; none
 * configured: password only, as before), kept in a JWT session that carries the user's id, role and approver groups,
 * the session epoch and when it was signed in and last used (short and renewable: lib/auth/session-renewal.ts).
 * A provider sign-in sets the User row's role and groups from the claims (lib/auth/sso-sign-in.ts) before the
 * session is issued; COUNTERSIGN_PASSWORD_SIGN_IN=off makes the Credentials provider refuse every attempt. The session is only a hint: every server
 * action and route handler re-reads the user through `lib/auth/session.ts` before it authorizes anything.
 *
 * Agents authenticate to /mcp with bearer tokens (lib/auth/agents.ts), never through this file.
 */
import { randomUUID } from "node:crypto";
import NextAuth, { CredentialsSignin } from "next-auth";
import type { OIDCConfig } from "next-auth/providers";
import Credentials from "next-auth/providers/credentials";
import { newSessionTimes } from "./session-lifetime";
import { renewedToken, sessionOptions } from "./session-renewal";
import { sessionEpochOf } from "./sessions";
import { checkSignIn, credentialsSchema } from "./sign-in";
import { ssoConfig, type OidcProviderConfig } from "./sso-config";
import { signInWithIdentity } from "./sso-sign-in";
import { clientAddress } from "./throttle";
import { logFailure, logInfo, logWarn } from "@/lib/log";

/** Auth.js's generic OpenID Connect provider for one configured provider: authorization code with PKCE and state. */
function oidcProvider(p: OidcProviderConfig): OIDCConfig<Record<string, unknown>> {
  return {
    id: p.id,
    name: p.name,
    type: "oidc",
    issuer: p.issuer,
    clientId: p.clientId,
    clientSecret: p.clientSecret,
    authorization: { params: { scope: p.scopes.join(" ") } },
    checks: ["pkce", "state"],
    // false: the claims are the userinfo endpoint's answer instead of the ID token's (Auth.js still validates the ID token).
    idToken: p.claimsFrom === "id_token",
    profile(claims) {
      return { id: String(claims.sub ?? ""), name: typeof claims.name === "string" ? claims.name : null, email: typeof claims.email === "string" ? claims.email : null };
    },
  };
}

const sso = ssoConfig();

export { credentialsSchema };

/** Sign-in refused because the account or the client address is locked out for `retryAfterMs` more. */
export class SignInThrottled extends CredentialsSignin {
  code = "throttled";
  constructor(readonly retryAfterMs: number) {
    super();
  }
}

/** The claims this app keeps in the session token, beside Auth.js's own. */
type AppClaims = { uid?: string; role?: string; groups?: string[]; epoch?: number; sid?: string; signedInAt?: number; seenAt?: number };

export const { auth, signIn, signOut, handlers } = NextAuth({
  // Short and renewable: the idle limit from the last use, and an absolute limit from the sign-in (lib/auth/session-renewal.ts).
  session: sessionOptions(),
  // A refused single sign-on (AccessDenied) comes back to the sign-in page too, with ?error=AccessDenied.
  pages: { signIn: "/login", error: "/login" },
  logger: {
    // A wrong password is an expected event, not a server error: no stack trace in the log for it.
    error(error) {
      const type = (error as { type?: string }).type;
      if (error.name === "CredentialsSignin" || type === "CredentialsSignin") return;
      // A refused single sign-on was logged with its reason by the signIn callback below.
      if (type === "AccessDenied") return;
      logFailure("auth", error);
      if (type && /^[A-Za-z]{1,40}$/.test(type)) {
        // The provider's OAuth error code (invalid_grant, invalid_client, ...) when it refused the token request:
        // a registered word, never a message, so nothing the provider or the user sent reaches the log.
        const code = (error.cause as { err?: { error?: unknown } } | undefined)?.err?.error;
        logWarn("sign-in failed", { type, oauthError: typeof code === "string" && /^[a-z_]{1,40}$/.test(code) ? code : null });
      }
    },
  },
  providers: [
    Credentials({
      name: "Email and password",
      credentials: {
        email: { label: "Email", type: "email" },
        password: { label: "Password", type: "password" },
      },
      async authorize(raw, request) {
        if (!sso.passwordSignIn) return null;
        const checked = await checkSignIn(raw, clientAddress(request.headers));
        if (checked.ok) return checked.user as { id: string; name: string; email: string };
        if (checked.reason === "throttled") throw new SignInThrottled(checked.retryAfterMs);
        return null;
      },
    }),
    ...sso.providers.map(oidcProvider),
  ],
  callbacks: {
    /**
     * A provider sign-in: find or create the user by (issuer, subject) and set role and groups from the claims, at
     * every sign-in; the session then names that user. Refused (back to /login) when the mapping or the account says no.
     */
    async signIn({ user, account, profile }) {
      if (account?.type !== "oidc") return true;
      const provider = sso.providers.find((p) => p.id === account.provider);
      if (!provider || !profile) return false;
      const result = await signInWithIdentity(provider, profile as Record<string, unknown>).catch((e: unknown) => {
        logFailure("single sign-on", e);
        return { ok: false as const, reason: "the user could not be stored" };
      });
      if (!result.ok) {
        logInfo("single sign-on refused", { provider: provider.id, reason: result.reason });
        return false;
      }
      if (result.created || result.linked) logInfo(result.created ? "single sign-on created a user" : "single sign-on linked a user", { provider: provider.id, userId: result.user.id });
      Object.assign(user, result.user);
      return true;
    },
    async jwt({ token, user }) {
      if (user) {
        const u = user as { id?: string; role?: string; groups?: string[] };
        const claims = token as typeof token & AppClaims;
        claims.uid = u.id;
        claims.role = u.role;
        claims.groups = u.groups ?? [];
        // The session belongs to the user's sessions of now: ending them (lib/auth/sessions.ts) refuses it.
        claims.epoch = u.id ? await sessionEpochOf(u.id) : 0;
        // This session's own id, so signing out of this browser ends it server-side (lib/auth/sessions.ts).
        claims.sid = randomUUID();
        Object.assign(claims, newSessionTimes(new Date()));
        return token;
      }
      // A session read: renewed by this use, or over (null: Auth.js deletes the cookie).
      return renewedToken(token as typeof token & AppClaims, new Date());
    },
    session({ session, token }) {
      const claims = token as typeof token & AppClaims;
      if (session.user) {
        Object.assign(session.user, { id: claims.uid, role: claims.role, groups: claims.groups ?? [], epoch: claims.epoch ?? 0, sid: claims.sid, signedInAt: claims.signedInAt, seenAt: claims.seenAt });
      }
      return session;
    },
  },
});
