/**
 * Migrations without Prisma's native schema engine: the WASM schema engine driven through the pg driver adapter.
 * `applyMigrations` applies prisma/migrations in order and records them in _prisma_migrations, so a re-run is a
 * no-op. `diffMigration` prints the SQL that takes the database (after all migrations) to the current schema.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PrismaPg } from "@prisma/adapter-pg";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import pg from "pg";
import { migrationNames, migrationsDir } from "./migration-names";

const ROOT = process.cwd();
const SCHEMA = path.join(ROOT, "prisma", "schema.prisma");
const MIGRATIONS = migrationsDir(ROOT);
const ROUTINES = path.join(ROOT, "prisma", "routines.sql");

type Bindings = typeof import("@prisma/schema-engine-wasm");
type Engine = Awaited<ReturnType<Bindings["SchemaEngine"]["new"]>>;

let bindings: Promise<Bindings> | undefined;

/** The package targets bundlers (it imports its .wasm as a module); Node needs the instantiation done by hand. */
function loadBindings(): Promise<Bindings> {
  bindings ??= (async () => {
    const require = createRequire(import.meta.url);
    const dir = path.dirname(require.resolve("@prisma/schema-engine-wasm/schema_engine_bg"));
    const bg = (await import(pathToFileURL(path.join(dir, "schema_engine_bg.js")).href)) as Bindings & {
      __wbg_set_wasm(exports: WebAssembly.Exports): void;
    };
    const bytes = fs.readFileSync(path.join(dir, "schema_engine_bg.wasm"));
    const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": bg as never });
    const panics = { message: "", set_message(m: string) { panics.message = m; } };
    (globalThis as Record<string, unknown>).PRISMA_WASM_PANIC_REGISTRY ??= panics;
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return bg;
  })();
  return bindings;
}

async function withEngine<T>(url: string, fn: (engine: Engine) => Promise<T>): Promise<T> {
  const { SchemaEngine } = await loadBindings();
  const adapter = bindMigrationAwareSqlAdapterFactory(new PrismaPg({ connectionString: url, max: 2 }));
  const logs: string[] = [];
  const engine = await SchemaEngine.new(
    { datamodels: [[SCHEMA, fs.readFileSync(SCHEMA, "utf8")]] },
    (msg: string) => logs.push(msg),
    adapter,
  );
  try {
    return await fn(engine);
  } catch (e) {
    const detail = logs.length ? `\n${logs.slice(-5).join("\n")}` : "";
    throw new Error(`${(e as Error).message ?? String(e)}${detail}`);
  } finally {
    engine.free();
  }
}

function migrationsList() {
  const dirs = migrationNames(MIGRATIONS);
  const lockPath = path.join(MIGRATIONS, "migration_lock.toml");
  return {
    baseDir: MIGRATIONS,
    lockfile: { path: "migration_lock.toml", content: fs.existsSync(lockPath) ? fs.readFileSync(lockPath, "utf8") : null },
    shadowDbInitScript: "",
    migrationDirectories: dirs.map((name) => ({
      path: name,
      migrationFile: {
        path: "migration.sql",
        content: { tag: "ok" as const, value: fs.readFileSync(path.join(MIGRATIONS, name, "migration.sql"), "utf8") },
      },
    })),
  };
}

/** The embedded server starts without a `public` schema in some states; migrations need it. */
async function ensurePublicSchema(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("CREATE SCHEMA IF NOT EXISTS public");
  } finally {
    await client.end();
  }
}

/**
 * prisma/routines.sql: the functions and triggers (their bodies hold semicolons, which the migration engine splits
 * scripts at), idempotent, in one transaction, after every migration run.
 */
async function applyRoutines(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Two processes starting at once replace them one after the other (concurrent replaces of one trigger fail).
    await client.query(`BEGIN; SELECT pg_advisory_xact_lock(72810931);\n${fs.readFileSync(ROUTINES, "utf8")}\nCOMMIT;`);
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    throw e;
  } finally {
    await client.end();
  }
}

export async function applyMigrations(url: string): Promise<string[]> {
  await ensurePublicSchema(url);
  return withEngine(url, async (engine) => {
    const out = await engine.applyMigrations({
      migrationsList: migrationsList() as never,
      filters: { externalTables: [], externalEnums: [] },
    });
    return out.appliedMigrationNames;
  }).then(async (applied) => {
    await applyRoutines(url);
    await sealStoredRecords(url);
    await refreshStatisticsAfterMigrating(url, applied.length > 0);
    return applied;
  });
}

/**
 * Part of migrating: planner statistics for the tables never analyzed (a first start on an existing data folder
 * too), or for every hot table after new migrations (lib/db/statistics.ts).
 */
export async function refreshStatisticsAfterMigrating(url: string, migrated: boolean): Promise<string[]> {
  const { analyzeAfterMigrations } = await import("./statistics");
  return withClient(url, (client) => analyzeAfterMigrations(client, migrated));
}

/**
 * Part of migrating: sensitive records an older version stored in plain text are sealed (lib/db/sealed-rows.ts),
 * so the app, whose reads refuse unsealed records, starts on an older data folder.
 */
export async function sealStoredRecords(url: string): Promise<void> {
  const { sealLegacyRows } = await import("./sealed-rows");
  await withClient(url, (client) => sealLegacyRows(client));
}

/** A short-lived Prisma client of two connections for one migration step. */
async function withClient<T>(url: string, fn: (client: import("./client").Db) => Promise<T>): Promise<T> {
  const { createDb } = await import("./client");
  const client = createDb(url, 2);
  try {
    return await fn(client);
  } finally {
    await client.$disconnect();
  }
}

/**
 * SQL that takes the schema as of the newest migration (the `schema.prisma` snapshot saved beside it; nothing for
 * the first) to prisma/schema.prisma. A datamodel-to-datamodel diff: no database and no shadow database needed.
 */
export async function diffMigration(): Promise<{ sql: string; current: string }> {
  const current = fs.readFileSync(SCHEMA, "utf8");
  const last = migrationsList().migrationDirectories.at(-1);
  const snapshot = last ? path.join(MIGRATIONS, last.path, "schema.prisma") : null;
  if (snapshot && !fs.existsSync(snapshot)) throw new Error(`${snapshot} is missing: cannot diff from the last migration.`);
  const { SchemaEngine } = await loadBindings();
  // The engine connects its adapter even for a datamodel-only diff: give it a throw-away in-memory database.
  const { startEmbedded } = await import("./embedded");
  const scratch = await startEmbedded({ dataDir: null });
  const adapter = bindMigrationAwareSqlAdapterFactory(new PrismaPg({ connectionString: scratch.url, max: 2 }));
  const engine = await SchemaEngine.new({ datamodels: [[SCHEMA, current]] }, () => {}, adapter);
  try {
    const from = snapshot
      ? { tag: "schemaDatamodel" as const, files: [{ path: snapshot, content: fs.readFileSync(snapshot, "utf8") }] }
      : { tag: "empty" as const };
    const result = await engine.diff({
      from,
      to: { tag: "schemaDatamodel", files: [{ path: SCHEMA, content: current }] },
      script: true,
      shadowDatabaseUrl: null,
      exitCode: null,
      filters: { externalTables: [], externalEnums: [] },
    } as never);
    return { sql: (result as unknown as { stdout?: string }).stdout ?? "", current };
  } finally {
    engine.free();
    await scratch.stop();
  }
}
