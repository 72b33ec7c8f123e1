/**
 * Policy benchmark: `npm run bench:policy`. Prints figures; it is not a test.
 *
 * In one run, on a scratch database (in-memory embedded PGlite by default, or a fresh database on the PostgreSQL
 * server named by DATABASE_URL, created and dropped here), with medians over many repetitions:
 *   - one Cedar evaluation with the seeded demo policy, and with a policy of 500 rules;
 *   - the tools/list visibility of one principal (partial evaluation, uncached);
 *   - the history measure policy reads before a wire transfer, at 100,000 executed calls (indexed, analyzed);
 *   - the whole decision of a gated and of an allowed tools/call (lib/tasks/call.ts, in process);
 * each beside the baseline measured in the same run: one `SELECT 1` round trip through the same driver.
 *
 *   RECORDS=100000 N=400 npx tsx scripts/bench-policy.ts
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx scripts/bench-policy.ts
 */
import { scratchDatabase } from "./bench-db";
import { timeEach } from "./bench-support";
import { applyMigrations } from "../lib/db/migrate";

const RECORDS = Number(process.env.RECORDS ?? 100_000);
const N = Number(process.env.N ?? 400);
process.env.COUNTERSIGN_MAX_PENDING_PER_AGENT ??= "100000";
process.env.COUNTERSIGN_SUBMISSIONS_PER_MINUTE ??= "100000";

const db0 = await scratchDatabase();
process.env.DATABASE_URL = db0.url;
await applyMigrations(db0.url);

const { db, closeDb } = await import("../lib/db/client");
const { seedDemo } = await import("../lib/db/seed");
const { compileStored, currentPolicy, currentDocument, currentRules } = await import("../lib/policy/store");
const { evaluate, visibleTools } = await import("../lib/policy/evaluate");
const { measureHistory } = await import("../lib/policy/history");
const { PolicyDocument } = await import("../lib/policy/document");
const { callTool } = await import("../lib/tasks/call");
const { authenticateAgent, subjectOf } = await import("../lib/auth/agents");
const { DEMO_AGENTS } = await import("../lib/db/seed");

await seedDemo(db(), { steadyClock: true });
const ops = (await authenticateAgent(DEMO_AGENTS[1].token))!;
const subject = await subjectOf(ops);
const at = new Date("2100-11-30T10:00:00Z");

const select1 = () => timeEach(N, () => db().$queryRaw`SELECT 1`);
const baseline = await select1();

// One evaluation, demo policy.
const demo = await currentPolicy();
const refund = {
  subject,
  action: { name: "issue_refund" },
  resource: { type: "order", id: "O-4410", properties: { amount_cents: 18000, currency: "EUR", refundable_cents: 52000, total_cents: 52000 } },
  context: { args: { order_id: "O-4410", amount: 180 }, history: { refunds_per_order: { total: 0, count: 0 } } },
};
for (let i = 0; i < 50; i++) evaluate(refund, demo, at);
const evalDemo = await timeEach(N * 5, () => evaluate(refund, demo, at));

// 500 rules: the demo document plus 495 generated forbids over arguments, principal and resource.
const document = await currentDocument();
const extra: string[] = [];
for (let i = 0; i < 495; i++) {
  const tool = ["issue_refund", "wire_transfer", "delete_path", "deploy_service"][i % 4];
  const cond =
    tool === "issue_refund"
      ? `resource.amount.minor > ${100000 + i} && principal.user.role == "requester"`
      : tool === "wire_transfer"
        ? `resource.amount.minor > ${5000000 + i} && resource.amount.currency == "USD"`
        : tool === "delete_path"
          ? `resource.path like "generated-${i}/*"`
          : `resource.environment == "env-${i}" && principal.name != "bot-${i}"`;
  const requestable = i % 3 === 0;
  extra.push(
    `@id("generated-${i}")\n@reason("Generated policy ${i}.")\n${requestable ? `@approvers("sre")\n@quorum("1")\n` : ""}forbid (principal, action == Action::"${tool}", resource)\nwhen { ${cond} };`,
  );
}
const big = compileStored(await currentRules(), { id: "bench", version: 0, body: PolicyDocument.parse({ ...document.body, policies: `${document.body.policies}\n\n${extra.join("\n\n")}`, tests: [] }) });
const ruleCount = big.meta.size;
for (let i = 0; i < 50; i++) evaluate(refund, big, at);
const evalBig = await timeEach(N * 5, () => evaluate(refund, big, at));

// Visibility (tools/list) for one principal, uncached.
const visibility = await timeEach(Math.max(20, N / 10), () => {
  demo.visibility.clear();
  return visibleTools(demo, subject);
});

// History at RECORDS executed calls: half to one account in the window, the rest spread over other accounts and tools.
await db().$executeRawUnsafe(`
  INSERT INTO "CallRecord" (id, tool, "agentId", "userId", "resourceType", "resourceId", "amountMinor", currency, status, "createdAt")
  SELECT gen_random_uuid()::text,
         (ARRAY['wire_transfer','issue_refund','deploy_service','delete_path'])[1 + (g % 4)],
         '${ops.agentId}', '${ops.userId}',
         CASE WHEN g % 4 = 0 THEN 'account' ELSE 'other' END,
         CASE WHEN g % 8 = 0 THEN 'acct-hot' ELSE 'acct-' || (g % 5000)::text END,
         100 + (g % 1000), 'USD', 'executed',
         TIMESTAMP '2100-11-30 10:00:00' - ((g % 2880) || ' minutes')::interval
  FROM generate_series(1, ${RECORDS}) g`);
await db().$executeRawUnsafe(`ANALYZE "CallRecord"`);
const wire = { tool: "wire_transfer", agentId: ops.agentId, userId: ops.userId, resourceType: "account", resourceId: "acct-hot", money: { minor: 2500000, currency: "USD" } };
const historyCost = await timeEach(N, () => measureHistory(demo.document.history, wire, at));

// Whole decision of a tools/call, in process: an allowed staging deploy and a gated production deploy.
let v = 0;
const allowed = await timeEach(N / 2, () => callTool(ops, "deploy_service", { service: "checkout-api", environment: "staging", version: `9.${v++}.0` }, { tasks: true }, at));
const gated = await timeEach(N / 2, () => callTool(ops, "deploy_service", { service: "checkout-api", environment: "production", version: `8.${v++}.0` }, { tasks: true }, at));
const baselineAfter = await select1();
const base = (baseline + baselineAfter) / 2;

const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
const ratio = (ms: number) => `${(ms / base).toFixed(2)}x`;
console.log(`Policy benchmark on ${db0.kind}; medians; baseline one SELECT 1 round trip = ${us(base)} (${us(baseline)} before, ${us(baselineAfter)} after)`);
console.log(`| figure | median | / SELECT 1 |`);
console.log(`|---|---|---|`);
console.log(`| one evaluation, demo policy (${demo.meta.size} policies) | ${us(evalDemo)} | ${ratio(evalDemo)} |`);
console.log(`| one evaluation, ${ruleCount} policies | ${us(evalBig)} | ${ratio(evalBig)} |`);
console.log(`| tools/list visibility of one principal (uncached) | ${us(visibility)} | ${ratio(visibility)} |`);
console.log(`| history measure at ${RECORDS.toLocaleString("en-US")} executed calls | ${us(historyCost)} | ${ratio(historyCost)} |`);
console.log(`| allowed tools/call, whole decision and tool | ${us(allowed)} | ${ratio(allowed)} |`);
console.log(`| gated tools/call, whole decision and task | ${us(gated)} | ${ratio(gated)} |`);
await closeDb();
await db0.drop();
