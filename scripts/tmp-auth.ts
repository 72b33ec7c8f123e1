import { scratchDatabase } from "./bench-db";
import { applyMigrations } from "../lib/db/migrate";
const server = await scratchDatabase();
process.env.DATABASE_URL = server.url;
process.env.COUNTERSIGN_DATA_KEYS ??= `bench:${Buffer.alloc(32, 7).toString("base64")}`;
await applyMigrations(server.url);
const { db, closeDb, Prisma } = await import("../lib/db/client");
const { seedDemo, DEMO_AGENTS } = await import("../lib/db/seed");
await seedDemo(db(), { steadyClock: true });
const { POLICY_HEAD_COLUMNS } = await import("../lib/policy/store");
const { authenticateAgentWith } = await import("../lib/auth/agents");
const tok = DEMO_AGENTS[1].token;
async function time(label: string, f: () => Promise<unknown>) {
  for (let i = 0; i < 50; i++) await f();
  const xs: number[] = [];
  for (let i = 0; i < 400; i++) { const t = performance.now(); await f(); xs.push(performance.now() - t); }
  xs.sort((a, b) => a - b); console.log(label, xs[200].toFixed(3));
}
for (let k = 0; k < 2; k++) {
await time("auth+head", () => authenticateAgentWith(tok, POLICY_HEAD_COLUMNS));
await time("auth only", () => authenticateAgentWith(tok, Prisma.sql`1 AS one`));
await time("head only", () => db().$queryRaw`SELECT ${POLICY_HEAD_COLUMNS}`);
await time("select 1", () => db().$queryRaw`SELECT 1`);
}
await closeDb(); await server.drop(); process.exit(0);
