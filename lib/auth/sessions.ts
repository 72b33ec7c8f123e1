/**
 * Ending sessions. A session carries the user's session epoch from the moment it was signed in
 * (lib/auth/auth.ts); `currentUser` (lib/auth/session.ts) refuses a session whose epoch is not the user's epoch
 * now. Raising the epoch therefore ends every session of the user at its next request, in every browser and on
 * every replica: signing out everywhere, or an admin ending someone's sessions. Audited `user.sessions-ended`.
 */
import { appendAudit } from "../audit/append";
import { db } from "../db/client";
import { sessionLimits } from "./session-lifetime";

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

/**
 * Signing out of one browser ends that session by its id, server-side: deleting the cookie alone is not enough,
 * since a request in flight at the sign-out (a refresh, a prefetch) can be answered with the renewed cookie after
 * it. Kept until the session could no longer be used anyway (`until`: its absolute limit), then purged.
 */
export async function endSession(sid: string, signedInAtSec: number | null, now: Date): Promise<void> {
  const { maxSec, idleSec } = sessionLimits();
  const signedInMs = signedInAtSec === null ? now.getTime() : signedInAtSec * 1000;
  const until = new Date(Math.max(signedInMs + maxSec * 1000, now.getTime() + idleSec * 1000));
  await db().endedSession.upsert({ where: { sid }, create: { sid, until }, update: {} });
}

/** Whether the session with this id was signed out (a session without an id predates ids: never). */
export async function sessionEnded(sid: string | undefined): Promise<boolean> {
  if (!sid) return false;
  return (await db().endedSession.findUnique({ where: { sid }, select: { sid: true } })) !== null;
}

/** Forgets signed-out sessions past their absolute limit, a bounded batch at a time; how many were forgotten. */
export async function purgeEndedSessions(now: Date, batch = 500): Promise<number> {
  return db().$executeRaw`
    DELETE FROM "EndedSession" WHERE sid IN (SELECT sid FROM "EndedSession" WHERE until < ${now} ORDER BY until LIMIT ${batch})`;
}
