/**
 * The stored state /metrics reports, read at scrape time: one grouped query for tasks by status, one for pending
 * approval requests by approver group and age bucket. The snapshot is kept a few seconds (and a scrape arriving
 * while one is read waits for that read), so scrapes, however frequent, cannot load the database.
 */
import { db, Prisma } from "../db/client";
import { PENDING_AGE_BUCKETS, type StateSnapshot } from "../metrics";

export const STATE_CACHE_MS = 5_000;

type Cached = { at: number; snapshot: Promise<StateSnapshot> };
const holder = globalThis as unknown as { __countersignStateCache?: Cached };

async function readState(now: Date): Promise<StateSnapshot> {
  const tasks = await db().$queryRaw<{ status: string; count: bigint }[]>`
    SELECT status, count(*) AS count FROM "Task" GROUP BY status`;
  const cases = PENDING_AGE_BUCKETS.filter((b) => Number.isFinite(b.maxSec)).map(
    (b) => Prisma.sql`WHEN "createdAt" > ${new Date(now.getTime() - b.maxSec * 1000)} THEN ${b.label}`,
  );
  const oldest = PENDING_AGE_BUCKETS[PENDING_AGE_BUCKETS.length - 1].label;
  const pending = await db().$queryRaw<{ group: string; age: string; count: bigint }[]>`
    SELECT "approverGroup" AS "group", CASE ${Prisma.join(cases, " ")} ELSE ${oldest} END AS age, count(*) AS count
    FROM "ApprovalRequest" WHERE status = 'pending' GROUP BY 1, 2`;
  return {
    tasksByStatus: tasks.map((t) => ({ status: t.status, count: Number(t.count) })),
    pendingByGroupAge: pending.map((p) => ({ group: p.group, age: p.age, count: Number(p.count) })),
  };
}

/** The snapshot, read again only when the kept one is older than STATE_CACHE_MS (by the process clock). */
export function stateSnapshot(nowMs = Date.now()): Promise<StateSnapshot> {
  const kept = holder.__countersignStateCache;
  if (kept && nowMs - kept.at < STATE_CACHE_MS && nowMs >= kept.at) return kept.snapshot;
  const snapshot = readState(new Date(nowMs));
  holder.__countersignStateCache = { at: nowMs, snapshot };
  // A failed read is not kept: the next scrape tries again.
  snapshot.catch(() => {
    if (holder.__countersignStateCache?.snapshot === snapshot) holder.__countersignStateCache = undefined;
  });
  return snapshot;
}

/** Forgets the kept snapshot (tests that change state between scrapes). */
export function forgetStateSnapshot(): void {
  holder.__countersignStateCache = undefined;
}
