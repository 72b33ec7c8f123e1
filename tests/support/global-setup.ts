/**
 * The database for the test run: the PostgreSQL at DATABASE_URL when set (CI points it at a fresh database),
 * else an in-memory embedded PGlite server. Migrations are applied either way.
 */
import type { TestProject } from "vitest/node";
import { startEmbedded, type EmbeddedServer } from "../../lib/db/embedded";
import { applyMigrations } from "../../lib/db/migrate";

let server: EmbeddedServer | null = null;

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    databaseKind: "postgresql" | "embedded";
  }
}

export async function setup(project: TestProject) {
  let url = process.env.DATABASE_URL;
  if (!url) {
    server = await startEmbedded({ dataDir: null });
    url = server.url;
  }
  await applyMigrations(url);
  project.provide("databaseUrl", url);
  project.provide("databaseKind", server ? "embedded" : "postgresql");
  console.log(`[tests] database: ${server ? "embedded PGlite (in memory)" : "PostgreSQL from DATABASE_URL"}`);
}

export async function teardown() {
  await server?.stop();
}
