/**
 * Ending sessions. A session carries the user's session epoch from the moment it was signed in
 * (lib/auth/auth.ts); `currentUser` (lib/auth/session.ts) refuses a session whose epoch is not the user's epoch
 * now. Raising the epoch therefore ends every session of the user at its next request, in every browser and on
 * every replica: signing out everywhere, or an admin ending someone's sessions. Audited `user.sessions-ended`.
 */
import { appendAudit } from "../audit/append";
import { db } from "../db/client";

/** Whether a session signed in under `tokenEpoch` is still valid for a user whose epoch is `userEpoch` (a session from before epochs is epoch 0). */
export function sessionStillValid(tokenEpoch: unknown, userEpoch: number): boolean {
  return (typeof tokenEpoch === "number" && Number.isInteger(tokenEpoch) ? tokenEpoch : 0) === userEpoch;
}

/** The epoch a session signed in now carries. */
export async function sessionEpochOf(userId: string): Promise<number> {
  const u = await db().user.findUnique({ where: { id: userId }, select: { sessionEpoch: true } });
  return u?.sessionEpoch ?? 0;
}

/** Ends every session of `userId` (false when there is no such user); `actor` is who did it, for the audit trail. */
export async function endSessions(userId: string, actor: string, now: Date): Promise<boolean> {
  return db().$transaction(async (tx) => {
    const n = await tx.user.updateMany({ where: { id: userId }, data: { sessionEpoch: { increment: 1 } } });
    if (n.count === 0) return false;
    await appendAudit(tx, { type: "user.sessions-ended", actor, data: { userId }, at: now });
    return true;
  });
}
