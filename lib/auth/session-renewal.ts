/**
 * The Auth.js session settings both Auth.js instances share, and the instance the proxy wraps pages in.
 *
 * A session is a JWT whose lifetime is the idle limit (lib/auth/session-lifetime.ts): each time Auth.js reads it in
 * a place that can set cookies, it re-issues the token and its cookie with a fresh expiry, through the `jwt`
 * callback, which refuses a session over either limit (Auth.js then deletes the cookie). Those places are the
 * session endpoint (/api/auth/session) and the `auth` wrapper around the proxy; `auth()` in a server component
 * reads the token but cannot set a cookie. So a page visit renews the session; a server action (which may sign in or out itself) and a JSON route
 * read does not.
 *
 * This instance has no providers and no database: it only renews. Who is signed in, and whether they may do
 * anything, is still decided by `currentUser` (lib/auth/session.ts) in every page, action and handler.
 */
import NextAuth from "next-auth";
import { renewSession, sessionLimits, type SessionTimes } from "./session-lifetime";

/** Auth.js's session options: a JWT that lives as long as the idle limit, from its last re-issue. */
export function sessionOptions(): { strategy: "jwt"; maxAge: number } {
  return { strategy: "jwt", maxAge: sessionLimits().idleSec };
}

/** The `jwt` callback for a session read (not a sign-in): renewed, or null when it is over. */
export function renewedToken<T extends SessionTimes>(token: T, now: Date): T | null {
  return renewSession(token, now, sessionLimits());
}

export const { auth: withSessionRenewal } = NextAuth({
  session: sessionOptions(),
  providers: [],
  logger: {
    // A token that cannot be read (another secret, a damaged cookie) is dropped; the page then asks for a sign-in.
    error(error) {
      if (error.name === "JWTSessionError" || (error as { type?: string }).type === "JWTSessionError") return;
      console.error(`[auth] ${error.name}`);
    },
  },
  callbacks: {
    jwt: ({ token }) => renewedToken(token as typeof token & SessionTimes, new Date()),
  },
});
