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

/**
 * Forgets consumed states whose seal has expired anyway (they can no longer be presented), the oldest first in
 * batches of `batch`, at most `maxBatches` per call: each statement stays short however many expired at once.
 */
export async function pruneRequestStates(now: Date, opts: { batch?: number; maxBatches?: number } = {}): Promise<number> {
  const batch = opts.batch ?? 500;
  let pruned = 0;
  for (let i = 0; i < (opts.maxBatches ?? 4); i++) {
    const n = await db().$executeRaw`
      DELETE FROM "ConsumedRequestState" WHERE nonce IN (
        SELECT nonce FROM "ConsumedRequestState" WHERE "expiresAt" < ${now}::timestamp ORDER BY "expiresAt" LIMIT ${batch})`;
    pruned += n;
    if (n < batch) break;
  }
  return pruned;
}
