/**
 * The database goes away and comes back while agents call and reviewers decide (PostgreSQL only). The app reaches
 * PostgreSQL through a TCP proxy in this process that can cut every connection and refuse new ones, and restore;
 * a second phase terminates the test database's backends (pg_terminate_backend) from an admin connection
 * repeatedly during a burst. During the outage every request fails with a clear answer that says whether anything
 * ran or was recorded; nothing is half-written (every task has its request, no intent is left that reconcile does
 * not repair, the audit chain verifies); afterwards the same process serves calls again without a restart.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { closeDb, db } from "../lib/db/client";
import { verifyAuditChain } from "../lib/audit/verify";
import { decide } from "../lib/tasks/decide";
import { reconcileIntents } from "../lib/tasks/reconcile";
import { sweep } from "../lib/execution/sweep";
import { OPS_BOT, call, getTaskRpc, rpc, textOf } from "../lib/mcp/testing";
import { NOT_PROCESSED_MESSAGE } from "../lib/mcp/unavailable";
import { DECISION_NOT_RECORDED, DECISION_UNKNOWN } from "../lib/approvals/review";
import { requestIdOf, resetDb, userId } from "./support/db";
import { startProxy } from "./support/tcp-proxy";

const POSTGRES = inject("databaseKind") === "postgresql";
const LENA = "lena.lead@countersign.test";

/** Polls until `check` holds, at most `tries` times. */
async function until(what: string, check: () => Promise<boolean>, tries = 100): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not reached after ${tries} tries`);
}

/** What must hold after any outage: no open task without its request, no intent left open after reconcile, the chain. */
async function expectNothingHalfWritten() {
  await reconcileIntents(new Date(Date.now() + 3_600_000), 0);
  const [row] = await db().$queryRawUnsafe<{ orphans: number; intents: number }[]>(`
    SELECT (SELECT count(*)::int FROM "Task" t WHERE t.status IN ('working', 'input_required')
              AND NOT EXISTS (SELECT 1 FROM "ApprovalRequest" r WHERE r."taskId" = t.id)) AS orphans,
           (SELECT count(*)::int FROM "SubmissionIntent" WHERE state = 'open') AS intents`);
  expect(row).toEqual({ orphans: 0, intents: 0 });
  expect(await verifyAuditChain()).toMatchObject({ ok: true });
}

const SMALL_REFUND = { order_id: "O-1021", amount: 1 };
const GATED_REFUND = { order_id: "O-2289" };
const refunds = () => db().refund.count();

/** A tools/call answer during an outage: a 503 that says nothing ran, or a tool error that says what happened. */
function expectClearCallFailure(r: { status: number; body: any; text: string }) {
  if (r.status === 503) {
    expect(r.body.error.message).toBe(NOT_PROCESSED_MESSAGE);
    return "not-processed";
  }
  expect(r.status).toBe(200);
  expect(r.text).not.toMatch(/Internal error|\n\s+at |node_modules/);
  if (r.body.error) {
    expect(r.body.error.message).toMatch(/database is unavailable/);
    return "rpc-error";
  }
  const text = textOf(r.body.result);
  if (r.body.result.isError) {
    // Served, and refused by the tool itself (an order refunded in full by an earlier approval): clear as well.
    if (!/database/i.test(text) && /The tool did not run\.$/.test(text)) return "refused";
    expect(text).toMatch(/^The database is unavailable right now, so this call could not be completed\. (The tool did not run|Whether the tool ran is unknown|The tool ran, but)/);
    return /did not run/.test(text) ? "did-not-run" : "other";
  }
  return "served";
}

describe.skipIf(!POSTGRES)("the database goes away and comes back (PostgreSQL only: the embedded database runs in the test process and cannot be cut)", () => {
  const realUrl = inject("databaseUrl");
  let proxy: Awaited<ReturnType<typeof startProxy>>;

  beforeAll(async () => {
    await resetDb();
    await closeDb();
    proxy = await startProxy(new URL(realUrl));
    const viaProxy = new URL(realUrl);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    process.env.DATABASE_URL = viaProxy.toString();
  });

  afterAll(async () => {
    proxy?.restore();
    await closeDb();
    process.env.DATABASE_URL = realUrl;
    await proxy?.close();
  });

  it("with the connection cut: calls are a 503 that says nothing ran, an approval says it was not recorded; restored, the same process serves again", async () => {
    const taskId = (await call("issue_refund", GATED_REFUND)).body.result.taskId;
    const requestId = await requestIdOf(taskId);
    const lena = await userId(LENA);
    const before = await refunds();

    proxy.cut();
    for (const r of [await call("issue_refund", SMALL_REFUND), await call("issue_refund", GATED_REFUND), await getTaskRpc(taskId), await rpc("tools/list")]) {
      expect(r.status).toBe(503);
      expect(r.headers.get("retry-after")).toBe("5");
      expect(r.body.error.message).toBe(NOT_PROCESSED_MESSAGE);
    }
    expect(await decide({ requestId, reviewerId: lena, decision: "approve" }, new Date())).toEqual({ ok: false, error: DECISION_NOT_RECORDED });

    proxy.restore();
    // The pool replaces the dead connections on next use: no restart, no reconnect call.
    const small = await call("issue_refund", SMALL_REFUND);
    expect(small.body.result).toMatchObject({ isError: false });
    expect(await refunds()).toBe(before + 1);
    expect((await getTaskRpc(taskId)).body.result.status).toBe("working");
    expect(await db().review.count({ where: { requestId } })).toBe(0);
    expect(await decide({ requestId, reviewerId: lena, decision: "approve" }, new Date())).toMatchObject({ ok: true });
    expect((await getTaskRpc(taskId)).body.result.status).toBe("completed");
    await expectNothingHalfWritten();
  });

  it("backends terminated again and again during a burst of calls, reads and approvals: every answer is clear, nothing is half-written, then all is served", async () => {
    const lena = await userId(LENA);
    // Ten waiting tasks: one polled through the burst, and each round's request approved.
    const tasks: string[] = [];
    const pending: string[] = [];
    for (let i = 0; i < 10; i++) {
      tasks.push((await call("issue_refund", { order_id: "O-1145", amount: 200 + i })).body.result.taskId);
      pending.push(await requestIdOf(tasks[i]));
    }
    const admin = new pg.Client({ connectionString: realUrl });
    await admin.connect();
    const dbName = new URL(realUrl).pathname.slice(1);
    let terminated = 0;
    let stop = false;
    const killer = (async () => {
      for (let i = 0; i < 400 && !stop; i++) {
        const r = await admin.query("SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [dbName]);
        terminated += r.rows[0].n;
        // Spaced unevenly, so that requests are cut at every point: before authentication, between statements,
        // inside transactions, at commit.
        await new Promise((resolve) => setTimeout(resolve, 2 + Math.floor(Math.random() * 40)));
      }
    })();
    const outcomes = new Map<string, number>();
    const tally = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
    try {
      for (let round = 0; round < 10; round++) {
        const work: Promise<void>[] = [];
        for (let i = 0; i < 3; i++) work.push(call("issue_refund", SMALL_REFUND).then((r) => void tally(`allowed:${expectClearCallFailure(r)}`)));
        for (let i = 0; i < 2; i++) work.push(call("issue_refund", GATED_REFUND).then((r) => void tally(`gated:${expectClearCallFailure(r)}`)));
        work.push(getTaskRpc(tasks[0]).then((r) => void tally(`get:${r.status === 503 ? expectClearCallFailure(r) : r.body.error ? (expect(r.body.error.message).toMatch(/database is unavailable/), "rpc-error") : "served"}`)));
        const requestId = pending[round];
        work.push(
          decide({ requestId, reviewerId: lena, decision: "approve" }, new Date()).then((d) => {
            if (!d.ok) expect([DECISION_NOT_RECORDED, DECISION_UNKNOWN]).toContain(d.error);
            tally(`decide:${d.ok ? "recorded" : d.error === DECISION_NOT_RECORDED ? "not-recorded" : "unknown"}`);
          }),
        );
        await Promise.all(work);
      }
    } finally {
      stop = true;
      await killer;
      await admin.end();
    }
    console.log(`[outage] ${terminated} backends terminated;`, Object.fromEntries(outcomes));
    expect(terminated).toBeGreaterThan(0);
    expect([...outcomes.keys()].some((k) => !k.endsWith("served") && !k.endsWith("recorded"))).toBe(true);

    // Back: the same process serves, the sweeper finishes what approvals left, and nothing is half-written.
    await until("calls served again", async () => (await call("issue_refund", SMALL_REFUND)).body.result?.isError === false);
    await sweep(new Date(), { intentMinAgeMs: 0 });
    await expectNothingHalfWritten();
    // A gated call whose target no approval in the burst can have used up (a production deploy) opens a task again.
    const t = await call("deploy_service", { service: "checkout-api", environment: "production", version: "9.9.9" }, { token: OPS_BOT });
    expect(t.body.result.resultType, t.text).toBe("task");
  });
});
