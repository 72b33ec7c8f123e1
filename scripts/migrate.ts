/**
 * Applies prisma/migrations to the database: DATABASE_URL when set, else the embedded database in .data/
 * (joining the running Countersign if it owns the folder). Re-running is a no-op.
 */
import { startEmbedded } from "../lib/db/embedded";
import { applyMigrations } from "../lib/db/migrate";
import { dataDir } from "./paths";

const url = process.env.DATABASE_URL;
const server = url ? null : await startEmbedded({ dataDir: dataDir() });
try {
  const applied = await applyMigrations(url ?? server!.url);
  console.log(applied.length ? `Applied: ${applied.join(", ")}` : "Database is up to date.");
} finally {
  await server?.stop();
}
