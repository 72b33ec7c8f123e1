/**
 * Auth.js configuration for the reviewer-facing browser side: email + password (bcrypt) of an active User, kept
 * in a JWT session that carries the user's id, role and approver groups. The session is only a hint: every server
 * action and route handler re-reads the user through `lib/auth/session.ts` before it authorizes anything.
 *
 * Agents authenticate to /mcp with bearer tokens (lib/auth/agents.ts), never through this file.
 */
import NextAuth, { CredentialsSignin } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import { checkSignIn, credentialsSchema } from "./sign-in";
import { clientAddress } from "./throttle";
import { logFailure } from "@/lib/log";

export { credentialsSchema };

/** Sign-in refused because the account or the client address is locked out for `retryAfterMs` more. */
export class SignInThrottled extends CredentialsSignin {
  code = "throttled";
  constructor(readonly retryAfterMs: number) {
    super();
  }
}

/** The claims this app keeps in the session token, beside Auth.js's own. */
type AppClaims = { uid?: string; role?: string; groups?: string[] };

export const { auth, signIn, signOut, handlers } = NextAuth({
  session: { strategy: "jwt", maxAge: 8 * 60 * 60 },
  pages: { signIn: "/login" },
  logger: {
    // A wrong password is an expected event, not a server error: no stack trace in the log for it.
    error(error) {
      if (error.name === "CredentialsSignin" || (error as { type?: string }).type === "CredentialsSignin") return;
      logFailure("auth", error);
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
        const checked = await checkSignIn(raw, clientAddress(request.headers));
        if (checked.ok) return checked.user as { id: string; name: string; email: string };
        if (checked.reason === "throttled") throw new SignInThrottled(checked.retryAfterMs);
        return null;
      },
    }),
  ],
  callbacks: {
    jwt({ token, user }) {
      if (user) {
        const u = user as { id?: string; role?: string; groups?: string[] };
        const claims = token as typeof token & AppClaims;
        claims.uid = u.id;
        claims.role = u.role;
        claims.groups = u.groups ?? [];
      }
      return token;
    },
    session({ session, token }) {
      const claims = token as typeof token & AppClaims;
      if (session.user) {
        Object.assign(session.user, { id: claims.uid, role: claims.role, groups: claims.groups ?? [] });
      }
      return session;
    },
  },
});
