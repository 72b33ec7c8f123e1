/**
 * Inbox benchmark: `npx tsx scripts/bench-inbox.ts`. Prints figures; it is not a test.
 *
 * Seeds 100,000 approval tasks (10,000 of them pending) into a scratch database — an in-memory embedded PGlite by
 * default, or a fresh database created on the PostgreSQL server named by DATABASE_URL (created and dropped here;
 * the database in the URL itself is not touched) — then times the inbox exactly as the page runs it: the server
 * time of `inboxPage` (lib/inbox/inbox.ts, the function /inbox and /api/inbox call), beside the raw SQL time of the
 * same statement (`inboxQuery`, timed with $queryRaw and with EXPLAIN ANALYZE), with the schema's indexes.
 *
 *   TASKS=100000 PENDING=10000 RUNS=7 npx tsx scripts/bench-inbox.ts
 *   DATABASE_URL=postgres://user@127.0.0.1:5432/postgres npx tsx scripts/bench-inbox.ts
 */
import { scratchDatabase } from "./bench-db";
import { applyMigrations } from "../lib/db/migrate";
import { seedDemo } from "../lib/db/seed";
import { median } from "./bench-support";

const TASKS = Number(process.env.TASKS ?? 100_000);
const PENDING = Number(process.env.PENDING ?? 10_000);
const RUNS = Number(process.env.RUNS ?? 7);

function log(line = "") {
  console.log(line);
}


const db0 = await scratchDatabase();
process.env.DATABASE_URL = db0.url;
process.env.DB_POOL_MAX ??= "4";

// Imported after DATABASE_URL is set (the client reads it when first used).
const { closeDb, createDb, db, Prisma } = await import("../lib/db/client");
const { inboxPage, inboxQuery } = await import("../lib/inbox/inbox");
const { historyPage, historyQuery } = await import("../lib/inbox/history");
const { parseInboxParams, parseHistoryParams } = await import("../lib/inbox/params");
const { encodeCursor } = await import("../lib/inbox/cursor");

async function seed(): Promise<void> {
  await applyMigrations(db0.url);
  const client = createDb(db0.url, 2);
  await seedDemo(client);
  await client.$disconnect();
  const users = await db().user.findMany();
  const agents = await db().agent.findMany();
  const rule = await db().policyRule.findFirstOrThrow({ where: { ruleKey: "wire-over-25k" } });
  const reviewers = Object.fromEntries(users.map((u) => [u.email.split("@")[0], u.id]));
  const t = performance.now();
  // One row per task: its ids, tool, group, status and clocks, from a generated series. Pending tasks are the
  // first PENDING; tools and groups rotate so each group holds about a quarter (refunds to support-leads,
  // transfers to treasury, deletions and deploys to sre).
  await db().$executeRawUnsafe(`
    CREATE TEMP TABLE bench AS
    SELECT i,
      gen_random_uuid()::text AS task_id,
      gen_random_uuid()::text AS req_id,
      (ARRAY['issue_refund','wire_transfer','delete_path','deploy_service'])[1 + i % 4] AS tool,
      (ARRAY['support-leads','treasury','sre','sre'])[1 + i % 4] AS grp,
      CASE WHEN i % 4 IN (1, 2) THEN 2 ELSE 1 END AS needed,
      (i <= ${PENDING}) AS pending,
      timestamp '2026-11-30 10:00:00' - (i * interval '25 seconds') AS created,
      (ARRAY['approved','approved','approved','denied','expired','cancelled'])[1 + i % 6] AS decided_status,
      (ARRAY['${agents[0].id}','${agents[1].id}'])[1 + i % 2] AS agent_id,
      (ARRAY['${agents[0].userId}','${agents[1].userId}'])[1 + i % 2] AS user_id,
      (ARRAY['Rita Requester','Otto Ops'])[1 + i % 2] AS user_name,
      (ARRAY['support-bot','ops-bot'])[1 + i % 2] AS agent_name
    FROM generate_series(1, ${TASKS}) AS i`);
  await db().$executeRawUnsafe(`
    INSERT INTO "Task" (id, "agentId", "principalUserId", tool, "toolVersion", arguments, "argumentsDigest", "resourceType", "resourceId",
      "dedupKey", "policyRuleId", "policyRuleKey", "policyVersion", reason, status, phase, handle, generation, "requestDeadline",
      disposition, "terminalizedAt", "createdAt", "lastUpdatedAt")
    SELECT task_id, agent_id, user_id, tool, 'bench', jsonb_build_object('to', 'acct-' || i, 'amount', 25000 + i),
      'sha256:' || md5(i::text), 'account', 'acct-' || i, 'bench-' || i, '${rule.id}', 'wire-over-25k', 1, 'bench',
      CASE WHEN pending THEN (CASE WHEN i % 20 IN (0, 2) THEN 'input_required' ELSE 'working' END)
           WHEN decided_status = 'cancelled' THEN 'cancelled' ELSE 'completed' END,
      CASE WHEN pending THEN 'awaiting_approval' ELSE 'done' END,
      req_id, 1,
      CASE WHEN pending THEN timestamp '2026-12-02 10:00:00' + (i * interval '7 seconds') ELSE created + interval '2 days' END,
      CASE WHEN pending OR decided_status = 'cancelled' THEN NULL
           WHEN decided_status = 'approved' THEN (CASE WHEN i % 50 = 0 THEN 'execution-error' ELSE 'approved-executed' END)
           ELSE 'denied-not-executed' END,
      CASE WHEN pending THEN NULL ELSE created + interval '1 hour' END,
      CASE WHEN pending THEN timestamp '2026-11-30 10:00:00' - (i * interval '3 seconds') ELSE created END,
      created
    FROM bench`);
  await db().$executeRawUnsafe(`
    INSERT INTO "ApprovalRequest" (id, "idempotencyKey", "bodyDigest", body, "taskId", "requesterUserId", "approverGroup", "approvalsRequired",
      status, deadline, "approvalValiditySec", "decidedAt", "createdAt", "updatedAt")
    SELECT req_id, 'bench-' || i, 'sha256:' || md5('b' || i),
      jsonb_build_object('taskId', task_id, 'generation', 1, 'tool', tool,
        'arguments', jsonb_build_object('to', 'acct-' || i, 'amount', 25000 + i),
        'summary', 'USD ' || (25000 + i) || '.00 wire transfer to acct-' || i,
        'requester', jsonb_build_object('userId', user_id, 'userName', user_name, 'agentId', agent_id, 'agentName', agent_name),
        'policy', jsonb_build_object('ruleId', '${rule.id}', 'ruleKey', 'wire-over-25k', 'version', 1, 'reason', 'bench')),
      task_id, user_id, grp, needed,
      CASE WHEN pending THEN 'pending' ELSE decided_status END,
      CASE WHEN pending THEN timestamp '2026-12-02 10:00:00' + (i * interval '7 seconds') ELSE created + interval '2 days' END,
      3600,
      CASE WHEN pending THEN NULL ELSE created + interval '1 hour' END,
      CASE WHEN pending THEN timestamp '2026-11-30 10:00:00' - (i * interval '3 seconds') ELSE created END,
      created
    FROM bench`);
  // Reviews: a first approval on a third of the pending two-approval requests (by the group's first reviewer),
  // and the decisions of every decided request.
  await db().$executeRawUnsafe(`
    INSERT INTO "Review" (id, "requestId", "reviewerId", decision, comment, "createdAt")
    SELECT gen_random_uuid()::text, req_id,
      CASE grp WHEN 'support-leads' THEN '${reviewers["lena.lead"]}' WHEN 'treasury' THEN '${reviewers["tara.treasury"]}' ELSE '${reviewers["sasha.sre"]}' END,
      CASE WHEN NOT pending AND decided_status = 'denied' THEN 'deny' ELSE 'approve' END,
      NULL, created + interval '30 minutes'
    FROM bench
    WHERE (pending AND needed = 2 AND i % 3 = 0) OR (NOT pending AND decided_status IN ('approved', 'denied'))`);
  await db().$executeRawUnsafe(`
    INSERT INTO "Review" (id, "requestId", "reviewerId", decision, comment, "createdAt")
    SELECT gen_random_uuid()::text, req_id,
      CASE grp WHEN 'treasury' THEN '${reviewers["theo.treasury"]}' ELSE '${reviewers["sid.sre"]}' END,
      'approve', NULL, created + interval '40 minutes'
    FROM bench WHERE NOT pending AND decided_status = 'approved' AND needed = 2`);
  await db().$executeRawUnsafe(`ANALYZE`);
  const [tasks, pending, reviews] = await Promise.all([
    db().task.count(),
    db().approvalRequest.count({ where: { status: "pending" } }),
    db().review.count(),
  ]);
  log(`seeded ${tasks} tasks (${pending} pending requests), ${reviews} reviews in ${Math.round(performance.now() - t)} ms`);
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  await fn(); // warm-up (plans, pool)
  const xs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    xs.push(performance.now() - t);
  }
  return median(xs);
}

async function explainMs(sql: import("../lib/db/client").Prisma.Sql): Promise<{ ms: number; plan: string[] }> {
  const rows = await db().$queryRaw<{ "QUERY PLAN": string }[]>(Prisma.sql`EXPLAIN (ANALYZE, BUFFERS) ${sql}`);
  const plan = rows.map((r) => r["QUERY PLAN"]);
  const ms = Number(plan.find((l) => l.startsWith("Execution Time"))?.match(/([\d.]+) ms/)?.[1] ?? NaN);
  return { ms, plan };
}

type Viewer = { id: string; role: string; groups: string[] };
type Case = { label: string; viewer: Viewer; raw: Record<string, string> };

const fmt = (ms: number) => `${ms.toFixed(1).padStart(7)} ms`;

async function runCases(cases: Case[], now: Date, showPlans: boolean): Promise<void> {
  log(`${"case".padEnd(58)} ${"inboxPage".padStart(10)} ${"$queryRaw".padStart(10)} ${"EXPLAIN".padStart(10)}  rows`);
  for (const c of cases) {
    const params = parseInboxParams(c.raw);
    const page = await inboxPage(c.viewer, params, now);
    const server = await timed(() => inboxPage(c.viewer, params, now));
    const raw = await timed(() => db().$queryRaw(inboxQuery(c.viewer, params, now)));
    const explain = await explainMs(inboxQuery(c.viewer, params, now));
    log(`${c.label.padEnd(58)} ${fmt(server)} ${fmt(raw)} ${fmt(explain.ms)}  ${page.items.length} of ${page.total}${page.totalCapped ? "+" : ""}`);
    if (showPlans && process.env.PLANS === "1") log(explain.plan.map((l) => `    ${l}`).join("\n"));
  }
}

async function runHistory(viewer: Viewer, label: string): Promise<void> {
  const params = parseHistoryParams({});
  const page = await historyPage(viewer, params);
  const server = await timed(() => historyPage(viewer, params));
  const raw = await timed(() => db().$queryRaw(historyQuery(viewer, params)));
  const explain = await explainMs(historyQuery(viewer, params));
  log(`${label.padEnd(58)} ${fmt(server)} ${fmt(raw)} ${fmt(explain.ms)}  ${page.items.length}`);
  const filtered = parseHistoryParams({ outcome: "denied", tool: "wire_transfer" });
  const fServer = await timed(() => historyPage(viewer, filtered));
  const fRaw = await timed(() => db().$queryRaw(historyQuery(viewer, filtered)));
  const fExplain = await explainMs(historyQuery(viewer, filtered));
  log(`${`${label}, outcome=denied tool=wire_transfer`.padEnd(58)} ${fmt(fServer)} ${fmt(fRaw)} ${fmt(fExplain.ms)}  ${(await historyPage(viewer, filtered)).items.length}`);
}

try {
  log(`database: ${db0.kind}`);
  await seed();
  const now = new Date("2026-11-30T10:00:00Z");
  const user = async (email: string) => {
    const u = await db().user.findUniqueOrThrow({ where: { email } });
    return { id: u.id, role: u.role, groups: u.groups };
  };
  const theo = await user("theo.treasury@countersign.test");
  const sid = await user("sid.sre@countersign.test");
  // A reviewer in every group sees all 10,000 pending requests: the largest inbox.
  const all = { ...(await user("sam.lead@countersign.test")), groups: ["support-leads", "treasury", "sre"] };
  // A cursor deep in the list (the 5,000th newest request of the all-groups reviewer).
  const deep = await db().$queryRaw<{ createdAt: Date; id: string }[]>`
    SELECT "createdAt", id FROM "ApprovalRequest" WHERE status = 'pending' ORDER BY "createdAt" DESC, id DESC OFFSET 5000 LIMIT 1`;
  const deepCursor = encodeCursor({ at: deep[0].createdAt, id: deep[0].id });

  const cases: Case[] = [
    { label: "treasury reviewer, first page, newest first", viewer: theo, raw: {} },
    { label: "treasury reviewer, first page, soonest deadline first", viewer: theo, raw: { sort: "expiring" } },
    { label: "sre reviewer, first page, newest first", viewer: sid, raw: {} },
    { label: "all-groups reviewer, first page, newest first", viewer: all, raw: {} },
    { label: "all-groups reviewer, first page, soonest deadline first", viewer: all, raw: { sort: "expiring" } },
    { label: "all-groups reviewer, page after the 5,000th request", viewer: all, raw: { after: deepCursor } },
    { label: "filtered: tool=wire_transfer, status=partly-approved", viewer: all, raw: { tool: "wire_transfer", status: "partly-approved" } },
    { label: "filtered: group=sre, status=question-open", viewer: all, raw: { group: "sre", status: "question-open" } },
    { label: "search: q=acct-4242", viewer: all, raw: { q: "acct-4242" } },
  ];

  log("");
  log(`-- inbox with the schema's indexes (median of ${RUNS} runs after a warm-up) --`);
  await runCases(cases, now, true);
  log("");
  log("-- history (decided requests, newest decision first) --");
  await runHistory(theo, "treasury reviewer history, first page");
  await runHistory({ ...theo, role: "admin", groups: [] }, "admin history, first page");

} finally {
  await closeDb();
  await db0.drop();
}
