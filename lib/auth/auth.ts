/**
 * Auth.js configuration for the reviewer-facing browser side: email + password (bcrypt) of an active User, kept
 * in a JWT session that carries the user's id, role and approver groups. The session is only a hint: every server
 * action and route handler re-reads the user through `lib/auth/session.ts` before it authorizes anything.
 *
 * Agents authenticate to /mcp with bearer tokens (lib/auth/agents.ts), never through this file.
 */
import NextAuth from "next-auth";
import Credentials from "next-auth/providers/credentials";
import bcrypt from "bcryptjs";
import { z } from "zod";
import { db } from "@/lib/db/client";
import { logFailure } from "@/lib/log";

/** The sign-in form's fields. */
export const credentialsSchema = z.object({
  email: z.string().trim().toLowerCase().email().max(320),
  password: z.string().min(1).max(200),
});

/** Compared against when the email is unknown, so a miss costs the same as a wrong password. */
const DUMMY_HASH = "$2b$10$0zx3n35Qovg/5HaCOoQIZuUbdlof2cDTPUjxBKb/RYdjxUWyE2/VG";

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
      async authorize(raw) {
        const parsed = credentialsSchema.safeParse(raw);
        if (!parsed.success) return null;
        const { email, password } = parsed.data;
        const user = await db().user.findUnique({ where: { email } });
        const ok = await bcrypt.compare(password, user?.passwordHash ?? DUMMY_HASH);
        if (!user || !user.active || !ok) return null;
        return { id: user.id, name: user.name, email: user.email, role: user.role, groups: user.groups } as {
          id: string;
          name: string;
          email: string;
        };
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
