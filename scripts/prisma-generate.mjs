// Generates the Prisma client on install. Prisma's CLI looks for a native schema engine it could not download
// here; `prisma generate` does not use it, but refuses to start unless PRISMA_SCHEMA_ENGINE_BINARY names a file.
import { spawnSync } from "node:child_process";
import path from "node:path";

const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.resolve("package.json");
const bin = path.resolve("node_modules", ".bin", process.platform === "win32" ? "prisma.cmd" : "prisma");
const run = spawnSync(bin, ["generate"], { stdio: "inherit", env });
process.exit(run.status ?? 1);
