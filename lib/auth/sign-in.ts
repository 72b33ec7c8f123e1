/**
 * Checking a reviewer's email and password, throttled: a locked-out account or client address is refused before
 * the password is compared; a wrong password (or an inactive or unknown account) counts against both; the right
 * one resets the account's counter. Auth.js's Credentials provider (lib/auth/auth.ts) calls this and nothing else,
 * so the sign-in form and Auth.js's own callback endpoint are throttled alike.
 */
import bcrypt from "bcryptjs";
import { z } from "zod";
import { db } from "../db/client";
import { recordFailure, recordSuccess, throttledForMs } from "./throttle";

/** The sign-in form's fields. */
export const credentialsSchema = z.object({
  email: z.string().trim().toLowerCase().email().max(320),
  password: z.string().min(1).max(200),
});

/** Compared against when the email is unknown, so a miss costs the same as a wrong password. */
const DUMMY_HASH = "$2b$10$0zx3n35Qovg/5HaCOoQIZuUbdlof2cDTPUjxBKb/RYdjxUWyE2/VG";

export type SignedInUser = { id: string; name: string; email: string; role: string; groups: string[] };

export type SignInCheck =
  | { ok: true; user: SignedInUser }
  | { ok: false; reason: "invalid" }
  | { ok: false; reason: "throttled"; retryAfterMs: number };

export async function checkSignIn(raw: unknown, address: string, now: Date = new Date()): Promise<SignInCheck> {
  const parsed = credentialsSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, reason: "invalid" };
  const { email, password } = parsed.data;
  const keys = { account: email, address };

  const lockedMs = await throttledForMs(keys, now);
  if (lockedMs > 0) return { ok: false, reason: "throttled", retryAfterMs: lockedMs };

  const user = await db().user.findUnique({ where: { email } });
  // A user created by single sign-on has no password (an empty hash): compared against the dummy, never a match.
  const hash = user?.passwordHash || DUMMY_HASH;
  const matches = (await bcrypt.compare(password, hash)) && hash !== DUMMY_HASH;
  if (!user || !user.active || !matches) {
    const nowLockedMs = await recordFailure(keys, now, user && matches ? "inactive" : "invalid-credentials");
    return nowLockedMs > 0 ? { ok: false, reason: "throttled", retryAfterMs: nowLockedMs } : { ok: false, reason: "invalid" };
  }
  await recordSuccess(keys, now);
  return { ok: true, user: { id: user.id, name: user.name, email: user.email, role: user.role, groups: user.groups } };
}
