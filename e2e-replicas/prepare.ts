/**
 * Child process of the multi-replica tests' global setup (run with tsx, DATABASE_URL set): migrates the fresh
 * database, loads the demo data once (without the business-hours rule, as every test server), makes the
 * wire-over-25k rule ask for a justification (MRTR) before it submits, and gives Otto Ops a few more agents, so
 * several agents call at once. Prints nothing secret.
 */
import { closeDb, createDb } from "../lib/db/client";
import { applyMigrations } from "../lib/db/migrate";
import { seedDemo } from "../lib/db/seed";
import { hashToken } from "../lib/auth/agents";
import { BURST_AGENTS } from "./tokens";

const url = process.env.DATABASE_URL!;
await applyMigrations(url);
const client = createDb(url, 2);
await seedDemo(client, { steadyClock: true });
await client.policyRule.updateMany({ where: { ruleKey: "wire-over-25k" }, data: { requireJustification: true } });
const otto = await client.user.findUniqueOrThrow({ where: { email: "otto.ops@countersign.test" } });
for (const a of BURST_AGENTS) {
  await client.agent.create({ data: { name: a.name, userId: otto.id, tokenHash: hashToken(a.token), tokenPrefix: a.token.slice(0, 10) } });
}
await client.$disconnect();
await closeDb();
console.log("[replicas] database migrated and seeded");
