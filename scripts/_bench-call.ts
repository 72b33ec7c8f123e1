// Ad-hoc: medians of allowed and gated callTool (in process, embedded in-memory DB), for old-vs-new comparison.
import { startEmbedded } from "../lib/db/embedded";
import { applyMigrations } from "../lib/db/migrate";
process.env.COUNTERSIGN_MAX_PENDING_PER_AGENT = "100000";
process.env.COUNTERSIGN_SUBMISSIONS_PER_MINUTE = "100000";
const N = Number(process.env.N ?? 300);
const server = await startEmbedded({ dataDir: null });
process.env.DATABASE_URL = server.url;
await applyMigrations(server.url);
const { db, closeDb } = await import("../lib/db/client");
const { seedDemo, DEMO_AGENTS } = await import("../lib/db/seed");
const { callTool } = await import("../lib/tasks/call");
const { authenticateAgent } = await import("../lib/auth/agents");
await (seedDemo as any)(db(), { steadyClock: true });
const ops = (await authenticateAgent(DEMO_AGENTS[1].token))!;
const at = new Date("2100-11-30T10:00:00Z");
const med = (x: number[]) => [...x].sort((a, b) => a - b)[Math.floor(x.length / 2)];
let v = 0;
async function t(env: string) { const xs: number[] = []; for (let i = 0; i < N; i++) { const s = performance.now(); await callTool(ops, "deploy_service", { service: "checkout-api", environment: env, version: `${env === "staging" ? 9 : 8}.${v++}.0` }, { tasks: true }, at); xs.push(performance.now() - s); } return med(xs); }
for (let i = 0; i < 30; i++) await t("staging");
const sel: number[] = []; for (let i = 0; i < N; i++) { const s = performance.now(); await db().$queryRaw`SELECT 1`; sel.push(performance.now() - s); }
const allowed = await t("staging"); const gated = await t("production");
console.log(JSON.stringify({ select1: med(sel), allowed, gated }));
await closeDb(); await server.stop();
