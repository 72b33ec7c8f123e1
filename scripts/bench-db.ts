/**
 * The scratch database of the benchmark scripts: an in-memory embedded PGlite, or a fresh database created on the
 * PostgreSQL server named by `base` (DATABASE_URL); the database in that URL itself is never touched. `drop()`
 * stops the embedded server or drops the scratch database.
 */
import pg from "pg";
import { startEmbedded } from "../lib/db/embedded";

export type ScratchDatabase = { url: string; kind: string; drop(): Promise<void> };

export async function scratchDatabase(base = process.env.DATABASE_URL): Promise<ScratchDatabase> {
  if (!base) {
    const server = await startEmbedded({ dataDir: null });
    return { url: server.url, kind: "embedded PGlite (in memory)", drop: () => server.stop() };
  }
  const name = `countersign_bench_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const version = (await admin.query("SHOW server_version")).rows[0].server_version;
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    kind: `PostgreSQL ${version} (scratch database ${name})`,
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * A scratch database with the migrations applied and the demo data (steady clock), the app's client pointed at it
 * (DATABASE_URL). A failure on the way drops the database again.
 */
export async function seededScratch() {
  const scratch = await scratchDatabase();
  process.env.DATABASE_URL = scratch.url;
  try {
    const { applyMigrations } = await import("../lib/db/migrate");
    await applyMigrations(scratch.url);
    const { db, closeDb } = await import("../lib/db/client");
    const { seedDemo } = await import("../lib/db/seed");
    await seedDemo(db(), { steadyClock: true });
    return { scratch, db, closeDb };
  } catch (e) {
    await scratch.drop();
    throw e;
  }
}
