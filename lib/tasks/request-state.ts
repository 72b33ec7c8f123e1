/**
 * MRTR requestState is sealed (HMAC) by lib/mcp, which stops tampering but not replay: this record makes each
 * sealed state answerable once. The first consumer of a nonce wins; every later one is refused.
 */
import { db, Prisma } from "../db/client";

export async function consumeRequestState(nonce: string, expiresAt: Date, now: Date): Promise<boolean> {
  if (expiresAt.getTime() <= now.getTime()) return false;
  try {
    await db().consumedRequestState.create({ data: { nonce, expiresAt, createdAt: now } });
    return true;
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002") return false;
    throw e;
  }
}

/** Forgets consumed states whose seal has expired anyway (they can no longer be presented). */
export async function pruneRequestStates(now: Date): Promise<number> {
  const r = await db().consumedRequestState.deleteMany({ where: { expiresAt: { lt: now } } });
  return r.count;
}
