/**
 * Writes a new migration from the change between the newest migration's schema snapshot and prisma/schema.prisma:
 * prisma/migrations/<timestamp>_<name>/migration.sql plus the schema.prisma snapshot the next diff starts from.
 * Usage: npm run db:diff -- <name>
 */
import fs from "node:fs";
import path from "node:path";
import { diffMigration } from "../lib/db/migrate";

const name = (process.argv[2] ?? "change").replace(/[^a-z0-9_]+/gi, "_");
const { sql, current } = await diffMigration();
if (!sql.trim() || /^-- This is an empty migration/.test(sql.trim())) {
  console.log("The schema and the migrations agree: nothing to write.");
} else {
  const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
  const dir = path.join("prisma", "migrations", `${stamp}_${name}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "migration.sql"), sql);
  fs.writeFileSync(path.join(dir, "schema.prisma"), current);
  const lock = path.join("prisma", "migrations", "migration_lock.toml");
  if (!fs.existsSync(lock)) fs.writeFileSync(lock, 'provider = "postgresql"\n');
  console.log(`Wrote ${dir}/migration.sql`);
}
