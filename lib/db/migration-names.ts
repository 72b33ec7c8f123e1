/** The migrations this version ships (folders of prisma/migrations, in the order they apply). */
import fs from "node:fs";
import path from "node:path";

export function migrationsDir(root = process.cwd()): string {
  return path.join(root, "prisma", "migrations");
}

export function migrationNames(dir = migrationsDir()): string[] {
  return fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
}
