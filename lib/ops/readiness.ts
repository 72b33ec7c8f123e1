/**
 * Readiness: the database answers, and the migrations it has applied are exactly the ones this version ships
 * (prisma/migrations). The reason for "not ready" is a short fixed sentence: no driver message, no stack.
 */
import { db, type Db } from "../db/client";
import { migrationNames } from "../db/migration-names";
import { logFailure } from "../log";

export type Readiness = { ready: true } | { ready: false; reason: string };

export const READINESS_TIMEOUT_MS = 3_000;

type Applied = { name: string; finished: boolean };

async function appliedMigrations(client: Db): Promise<Applied[] | "no-table"> {
  const [{ present }] = await client.$queryRaw<{ present: boolean }[]>`
    SELECT to_regclass('_prisma_migrations') IS NOT NULL AS present`;
  if (!present) return "no-table";
  const rows = await client.$queryRaw<{ name: string; finished: boolean }[]>`
    SELECT migration_name AS name, finished_at IS NOT NULL AS finished FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`;
  return rows;
}

/** Compares what the database applied with what this version ships. */
export function migrationsState(applied: Applied[] | "no-table", shipped: string[]): Readiness {
  if (applied === "no-table") return shipped.length ? { ready: false, reason: "database schema not migrated" } : { ready: true };
  if (applied.some((a) => !a.finished)) return { ready: false, reason: "a migration did not finish" };
  const done = new Set(applied.map((a) => a.name));
  const pending = shipped.filter((n) => !done.has(n)).length;
  if (pending) return { ready: false, reason: `${pending} migration${pending === 1 ? "" : "s"} not applied` };
  const known = new Set(shipped);
  const unknown = [...done].filter((n) => !known.has(n)).length;
  if (unknown) return { ready: false, reason: `database has ${unknown} migration${unknown === 1 ? "" : "s"} this version does not ship` };
  return { ready: true };
}

/** Readiness of `client` (the process's database by default). */
export async function readiness(client?: Db, shipped = migrationNames(), timeoutMs = READINESS_TIMEOUT_MS): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  try {
    const applied = await Promise.race([appliedMigrations(client ?? db()), timeout]);
    if (applied === "timeout") return { ready: false, reason: "database did not answer in time" };
    return migrationsState(applied, shipped);
  } catch (e) {
    logFailure("readiness check", e);
    return { ready: false, reason: "database unavailable" };
  } finally {
    clearTimeout(timer);
  }
}
