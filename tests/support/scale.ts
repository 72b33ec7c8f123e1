/**
 * A grown database for the scale tests: tens of thousands of terminal tasks with what they leave behind (approval
 * requests, intents, audit events, history records, notifications, webhook deliveries), written with a few bulk
 * INSERT ... SELECT generate_series statements; and a recorder of every statement the pg driver runs, with its
 * duration, so a test can time and EXPLAIN exactly what a verb issued.
 */
import pg from "pg";
import { db } from "../../lib/db/client";

/** Bulk rows: `n` terminal tasks created over the 10 days before `now`, 1 % past their retention at `now`. */
export async function growTerminalTasks(n: number, now: Date): Promise<void> {
  const agent = await db().agent.findFirstOrThrow({ where: { name: "ops-bot" } });
  const t0 = now.toISOString();
  const created = `(${sql(t0)}::timestamp - (g % 14400) * interval '1 minute')`;
  const run = (q: string) => db().$executeRawUnsafe(q);
  await run(`INSERT INTO "Task"(id, "agentId", "principalUserId", tool, "toolVersion", arguments, "argumentsDigest",
      "resourceType", "resourceId", "dedupKey", "policyRuleId", "policyRuleKey", "policyVersion", reason, status, phase,
      handle, "requestDeadline", "approvalExpiresAt", "retainUntil", disposition, "terminalizedAt", "createdAt", "lastUpdatedAt")
    SELECT 'bulk-' || g, ${sql(agent.id)}, ${sql(agent.userId)}, 'wire_transfer', 'v1', '{}', 'digest-' || g,
      'account', 'acct-bulk-' || g, 'dedup-bulk-' || g, 'rule', 'wire-over-25k', 1, 'bulk',
      CASE WHEN g % 7 = 0 THEN 'cancelled' ELSE 'completed' END, 'done', 'req-bulk-' || g,
      ${created} + interval '2 days', ${created} + interval '4 hours',
      CASE WHEN g % 100 = 0 THEN ${sql(t0)}::timestamp - interval '1 day' ELSE ${created} + interval '30 days' END,
      'approved-executed', ${created} + interval '1 hour', ${created}, ${created}
    FROM generate_series(1, ${n}) g`);
  await run(`INSERT INTO "ApprovalRequest"(id, "idempotencyKey", "bodyDigest", body, "taskId", "requesterUserId", "approverGroup",
      "approvalsRequired", status, deadline, "approvalValiditySec", "approvedAt", "approvalExpiresAt", "decidedAt", "createdAt", "updatedAt")
    SELECT 'req-bulk-' || g, 'key-bulk-' || g, 'd', '{}', 'bulk-' || g, ${sql(agent.userId)}, 'treasury', 2,
      CASE WHEN g % 7 = 0 THEN 'cancelled' ELSE 'approved' END, ${created} + interval '2 days', 14400,
      ${created} + interval '1 hour', ${created} + interval '5 hours', ${created} + interval '1 hour', ${created}, ${created}
    FROM generate_series(1, ${n}) g`);
  await run(`INSERT INTO "SubmissionIntent"(id, "idempotencyKey", "taskId", "agentId", generation, body, requester, state, handle, "createdAt", "updatedAt")
    SELECT 'intent-bulk-' || g, 'key-bulk-' || g, 'bulk-' || g, ${sql(agent.id)}, 1, '{}', '{}', 'bound', 'req-bulk-' || g, ${created}, ${created}
    FROM generate_series(1, ${n}) g`);
  await run(`INSERT INTO "CallRecord"(id, tool, "agentId", "userId", "resourceType", "resourceId", "amountMinor", currency, status, "taskId", "createdAt", "settledAt")
    SELECT 'call-bulk-' || g, 'wire_transfer', ${sql(agent.id)}, ${sql(agent.userId)}, 'account', 'acct-bulk-' || g, 3000000, 'USD',
      'executed', 'bulk-' || g, ${created}, ${created} + interval '1 hour'
    FROM generate_series(1, ${n}) g`);
  await run(`INSERT INTO "Notification"(id, "requestId", "taskId", kind, channel, "recipientUserId", status, attempts, "nextAttemptAt", "sentAt", "createdAt")
    SELECT 'note-bulk-' || g, 'req-bulk-' || g, 'bulk-' || g, 'created', 'email', ${sql(agent.userId)}, 'sent', 1, ${created}, ${created}, ${created}
    FROM generate_series(1, ${n}) g`);
  const hook = await db().webhook.create({ data: { url: "http://127.0.0.1:9/hook", secret: "whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3Q=", events: ["task.completed"], createdBy: "test", active: false } });
  await run(`INSERT INTO "WebhookDelivery"(id, "webhookId", "eventType", "taskId", payload, status, attempts, "nextAttemptAt", "lastStatus", "deliveredAt", "createdAt")
    SELECT 'msg-bulk-' || g, ${sql(hook.id)}, 'task.completed', 'bulk-' || g, '{}', 'delivered', 1, ${created}, 200, ${created}, ${created}
    FROM generate_series(1, ${n}) g`);
  const last = await db().auditEvent.findFirst({ orderBy: { seq: "desc" }, select: { hash: true } });
  await run(`INSERT INTO "AuditEvent"(at, type, "taskId", "requestId", actor, data, "prevHash", hash)
    SELECT ${created}, 'execution.completed', 'bulk-' || g, 'req-bulk-' || g, 'system', '{}', 'bulk', 'bulk'
    FROM generate_series(1, ${n}) g ORDER BY g DESC`);
  // The chain goes on from the last real event, so appends after the bulk rows link to a real hash.
  if (last) await run(`INSERT INTO "AuditEvent"(at, type, actor, data, "prevHash", hash) VALUES (${sql(t0)}::timestamp - interval '1 second', 'bulk.end', 'system', '{}', ${sql(last.hash)}, ${sql(last.hash)})`);
}

const sql = (s: string) => `'${s.replace(/'/g, "''")}'`;

export type Statement = { text: string; values: unknown[]; ms: number };

type QueryFn = (...args: unknown[]) => unknown;

/** Runs `fn` and returns every statement the pg driver sent meanwhile, with its duration (ms, round trip). */
export async function recordStatements<T>(fn: () => Promise<T>): Promise<{ result: T; statements: Statement[] }> {
  const proto = pg.Client.prototype as unknown as { query: QueryFn };
  const original = proto.query;
  const statements: Statement[] = [];
  proto.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string; values?: unknown[] };
    const text = typeof first === "string" ? first : (first?.text ?? "");
    const values = (typeof first === "string" ? (args[1] as unknown[]) : first?.values) ?? [];
    const start = performance.now();
    const done = () => statements.push({ text, values: Array.isArray(values) ? values : [], ms: performance.now() - start });
    const cbAt = args.findIndex((a) => typeof a === "function");
    if (cbAt >= 0) {
      const cb = args[cbAt] as (...r: unknown[]) => void;
      args[cbAt] = (...r: unknown[]) => {
        done();
        cb(...r);
      };
      return original.apply(this, args);
    }
    const out = original.apply(this, args) as Promise<unknown> | unknown;
    if (out && typeof (out as Promise<unknown>).then === "function") (out as Promise<unknown>).then(done, done);
    return out;
  };
  try {
    const result = await fn();
    return { result, statements };
  } finally {
    proto.query = original;
  }
}

/** The plan of one recorded statement (EXPLAIN, not run), on a connection of its own. */
export async function explain(url: string, s: Pick<Statement, "text" | "values">): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query({ text: `EXPLAIN ${s.text}`, values: s.values as unknown[] });
    return r.rows.map((row: Record<string, string>) => row["QUERY PLAN"]).join("\n");
  } finally {
    await client.end();
  }
}

export type Work = { plan: string; rowsTouched: number; ms: number };

/**
 * What one recorded statement does, measured by running it under EXPLAIN ANALYZE inside a transaction that is
 * rolled back: its plan, the rows its scans returned or filtered out (a figure the machine's load does not change),
 * and the database's own execution time.
 */
export async function measure(url: string, s: Pick<Statement, "text" | "values">): Promise<Work> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("BEGIN");
    const r = await client.query({ text: `EXPLAIN ANALYZE ${s.text}`, values: s.values as unknown[] });
    const lines = r.rows.map((row: Record<string, string>) => row["QUERY PLAN"]);
    let rowsTouched = 0;
    let loops = 1;
    for (const line of lines) {
      const node = /Scan.*actual time=[\d.]+\.\.[\d.]+ rows=([\d.]+) loops=(\d+)/.exec(line);
      if (node) {
        loops = Number(node[2]);
        rowsTouched += Number(node[1]) * loops;
      }
      const removed = /Rows Removed by (?:Filter|Join Filter|Index Recheck): (\d+)/.exec(line);
      if (removed) rowsTouched += Number(removed[1]) * loops;
    }
    const ms = Number(/Execution Time: ([\d.]+) ms/.exec(lines.join("\n"))?.[1] ?? NaN);
    return { plan: lines.join("\n"), rowsTouched, ms };
  } finally {
    await client.query("ROLLBACK").catch(() => {});
    await client.end();
  }
}

/** Statements worth a plan: the data reads and writes, not BEGIN/COMMIT, locks, settings or ANALYZE. */
export function isDataStatement(text: string): boolean {
  return /^\s*(SELECT|UPDATE|DELETE|INSERT|WITH)\b/i.test(text) && /"(Task|ApprovalRequest|SubmissionIntent|DedupSlot|AuditEvent|CallRecord|Notification|WebhookDelivery|Review|Clarification|ConsumedRequestState)"/.test(text);
}
