/**
 * Rediscovery without an admin: the sweeper lists the tools of each enabled upstream again every
 * COUNTERSIGN_UPSTREAM_REDISCOVER_MS (default 5 minutes), a few servers per sweep, so a tool that changed upstream
 * (a rug pull) is held for review even when no one presses "Discover tools". An upstream that announces
 * `notifications/tools/list_changed` is rediscovered at once (lib/gateway/connections.ts calls
 * `rediscoverNow`). Discovery records each change once whoever runs it (lib/gateway/discover.ts).
 */
import { db, Prisma } from "../db/client";
import { logFailure } from "../log";
import { discoverServer } from "./discover";

export const REDISCOVER_EVERY_MS = Number(process.env.COUNTERSIGN_UPSTREAM_REDISCOVER_MS ?? 5 * 60_000);
/** At most this many servers are rediscovered by one sweep: the rest wait for the next sweeps. */
export const REDISCOVER_PER_SWEEP = 2;

export type RediscoveryReport = { servers: string[]; changed: number; removed: number; failed: string[] };

/**
 * Claims the enabled servers whose last rediscovery is older than `everyMs` (oldest first, at most `max`, skipping
 * rows another sweeper holds) by stamping them with `now`, then lists each one's tools. A server that cannot be
 * reached is reported and tried again a period later (its health says why).
 */
export async function rediscoverDue(now: Date, opts: { everyMs?: number; max?: number } = {}): Promise<RediscoveryReport> {
  const everyMs = opts.everyMs ?? REDISCOVER_EVERY_MS;
  const max = opts.max ?? REDISCOVER_PER_SWEEP;
  const report: RediscoveryReport = { servers: [], changed: 0, removed: 0, failed: [] };
  if (!(everyMs > 0) || max <= 0) return report;
  const before = new Date(now.getTime() - everyMs);
  const claimed = await db().$queryRaw<{ name: string }[]>(Prisma.sql`
    UPDATE "UpstreamServer" SET "discoveredAt" = ${now}
    WHERE id IN (
      SELECT id FROM "UpstreamServer"
      WHERE enabled AND ("discoveredAt" IS NULL OR "discoveredAt" <= ${before})
      ORDER BY "discoveredAt" ASC NULLS FIRST, name ASC
      LIMIT ${max}
      FOR UPDATE SKIP LOCKED)
    RETURNING name`);
  for (const { name } of claimed.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    report.servers.push(name);
    try {
      const r = await discoverServer(name, now);
      report.changed += r.changed.length;
      report.removed += r.removed.length;
    } catch (e) {
      report.failed.push(name);
      logFailure(`rediscovery of ${name}`, e);
    }
  }
  return report;
}

const inFlight = new Map<string, Promise<void>>();
const again = new Set<string>();

/**
 * Rediscovers one server now (an upstream said its tool list changed). Notifications that arrive while one runs
 * make exactly one more run after it, so the last list is always the one recorded.
 */
export function rediscoverNow(serverName: string): Promise<void> {
  const running = inFlight.get(serverName);
  if (running) {
    again.add(serverName);
    return running;
  }
  const run = (async () => {
    do {
      again.delete(serverName);
      try {
        await discoverServer(serverName, new Date());
        await db().upstreamServer.updateMany({ where: { name: serverName }, data: { discoveredAt: new Date() } });
      } catch (e) {
        logFailure(`rediscovery of ${serverName}`, e);
      }
    } while (again.has(serverName));
  })().finally(() => inFlight.delete(serverName));
  inFlight.set(serverName, run);
  return run;
}
