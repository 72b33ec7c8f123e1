/**
 * Global setup of the multi-replica tests: a fresh PostgreSQL database on the server behind TEST_DATABASE_URL
 * (named cs_repl_*), migrated and seeded once, and three Countersign replicas (`next start` from the production
 * build) on it with one shared set of secrets. Returns the teardown, which stops every replica still running and
 * drops the database, whether the tests passed or not (also when this setup itself fails half-way).
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createDatabase, dropDatabase, sharedEnvironment, startReplica, stopReplica, waitReady, type Replica } from "./replicas";

export const REPLICA_NAMES = ["replica-a", "replica-b", "replica-c"] as const;

export default async function globalSetup(): Promise<() => Promise<void>> {
  const testDatabaseUrl = process.env.TEST_DATABASE_URL;
  if (!testDatabaseUrl) throw new Error("The multi-replica tests need TEST_DATABASE_URL (a PostgreSQL server they may create databases on).");
  if (!fs.existsSync(path.join(".next", "BUILD_ID"))) throw new Error("No production build in .next: run `npx next build` first.");
  const basePort = Number(process.env.REPLICAS_PORT ?? 3241);
  const name = `cs_repl_${Date.now().toString(36)}_${process.pid}`;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "cs-replicas-"));
  const logDir = path.resolve(process.env.REPLICAS_LOG_DIR ?? "test-results-replicas");
  const started: Replica[] = [];
  let dbCreated = false;

  const teardown = async () => {
    // (A replica a spec starts of its own, that spec stops.)
    await Promise.all(started.map((r) => stopReplica(r.child)));
    if (dbCreated) await dropDatabase(testDatabaseUrl, name).catch((e) => console.error(`[replicas] could not drop ${name}: ${(e as Error).message}`));
    fs.rmSync(scratch, { recursive: true, force: true });
  };

  const t0 = Date.now();
  const step = (what: string) => console.log(`[replicas] ${((Date.now() - t0) / 1000).toFixed(1)}s ${what}`);
  try {
    const databaseUrl = await createDatabase(testDatabaseUrl, name);
    dbCreated = true;
    const env = sharedEnvironment(databaseUrl, scratch);
    const prep = spawnSync(process.execPath, ["node_modules/tsx/dist/cli.mjs", "e2e-replicas/prepare.ts"], {
      env: { ...process.env, ...env },
      encoding: "utf8",
      timeout: 120_000,
    });
    if (prep.status !== 0) throw new Error(`migrating and seeding failed:\n${prep.stdout}\n${prep.stderr}`);
    step("database migrated and seeded");
    REPLICA_NAMES.forEach((n, i) => started.push(startReplica(n, basePort + i, env, logDir)));
    await Promise.all(started.map((r) => waitReady(r)));
    step("three replicas answer");
    process.env.REPLICAS = JSON.stringify(started.map((r) => ({ name: r.name, url: r.url, pid: r.child.pid })));
    process.env.REPLICAS_ENV = JSON.stringify(env);
    process.env.REPLICAS_NEXT_PORT = String(basePort + REPLICA_NAMES.length);
    process.env.REPLICAS_LOG_DIR = logDir;
  } catch (e) {
    await teardown();
    throw e;
  }
  return teardown;
}
