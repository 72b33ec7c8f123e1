/**
 * A call's record in policy history follows its approval task: linked when the task's submission is recorded,
 * executed once the execution claim wins (the tool may run from then on, so an unknown outcome stays counted), and
 * void when the task ends without running (denied, expired, cancelled, withdrawn, denied on re-evaluation) or
 * when the call opens no task of its own. The sweeper purges records past their retention.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { digest } from "../lib/canonical";
import { db } from "../lib/db/client";
import { advanceTask, expireExecution } from "../lib/execution/advance";
import { claim } from "../lib/execution/claim";
import { sweep } from "../lib/execution/sweep";
import { withdrawTasksOf } from "../lib/execution/withdraw";
import { measureHistory, windowsApply, withHistory, type HistoryCall, type HistoryDef } from "../lib/policy/history";
import { callTool } from "../lib/tasks/call";
import { cancelTask } from "../lib/tasks/cancel";
import { createApprovalTask } from "../lib/tasks/create";
import { CallerLimitReached } from "../lib/tasks/limits";
import type { Principal } from "../lib/tasks/types";
import { getTool, toolVersion } from "../lib/tools/catalog";
import { issueRefund } from "../lib/tools/issue-refund";
import { principal, resetDb } from "./support/db";
import { bindBackendApart, loseAnswerAfterSubmit } from "./support/submissions";
import { DAY, EXECUTION_DEADLINE_MS, LEADS, MIN, SEC, T0, approveOnly, at, expectDenied, freshOrder, review, taskRow } from "./support/proof";

beforeEach(resetDb);
afterEach(() => {
  vi.restoreAllMocks();
});

const DEFS: HistoryDef[] = [{ name: "order_total", tool: "issue_refund", windowSec: 30 * 24 * 3600, per: "resource" }];
const RULE = { id: "history-test-rule", ruleKey: "refund-over-limit", version: 1 };
const REQUIREMENTS = { approverGroup: "support-leads", approvalsRequired: 1, requestDeadlineSec: 24 * 3600, approvalValiditySec: 3600, requireJustification: false };

/** What a gated refund does: measure and record it as pending, then open its approval task with that record. */
async function refundWithRecord(orderId: string, now: Date = T0, agent?: Principal): Promise<{ taskId: string; recordId: string }> {
  const p = agent ?? (await principal());
  const tool = getTool("issue_refund")!;
  const args = tool.schema.parse({ order_id: orderId });
  const resource = await tool.resource(args);
  const call: HistoryCall = {
    tool: tool.name,
    agentId: p.agentId,
    userId: p.userId,
    resourceType: resource.type,
    resourceId: resource.id,
    money: { minor: Number(resource.properties.amount_cents), currency: String(resource.properties.currency) },
  };
  const { recordId } = await withHistory(DEFS, call, now, () => ({ result: null, record: "pending" }));
  const task = await createApprovalTask(
    {
      principal: p,
      tool: tool.name,
      toolVersion: toolVersion(tool),
      args,
      argumentsDigest: digest(args),
      summary: tool.summary(args, resource),
      resource,
      rule: RULE,
      reason: "Refunds above EUR 150.00 need a support lead's approval.",
      requirements: REQUIREMENTS,
      historyRecordId: recordId,
    },
    now,
  );
  return { taskId: task.taskId, recordId: recordId! };
}

const record = (id: string) => db().callRecord.findUniqueOrThrow({ where: { id } });

/** The order's refund total as policy history counts it now. */
async function orderTotal(orderId: string, now: Date): Promise<{ total: number; count: number }> {
  const p = await principal();
  const values = await measureHistory(
    DEFS,
    { tool: "issue_refund", agentId: p.agentId, userId: p.userId, resourceType: "order", resourceId: orderId, money: { minor: 1, currency: "EUR" } },
    now,
  );
  return values.order_total;
}

describe("an approval task's call record", () => {
  it("is linked to the task the call opened and counts as pending while the task waits", async () => {
    const order = await freshOrder("O-7001", 30_000);
    const { taskId, recordId } = await refundWithRecord(order);
    expect(await record(recordId)).toMatchObject({ taskId, status: "pending", amountMinor: 30_000n, currency: "EUR", resourceType: "order", resourceId: order });
    expect(await orderTotal(order, at(SEC))).toEqual({ total: 30_000, count: 1 });
  });

  it("a denied task voids its record: the refund that never ran no longer counts", async () => {
    const order = await freshOrder("O-7002", 30_000);
    const { taskId, recordId } = await refundWithRecord(order);
    await review(taskId, LEADS[0], "deny", at(MIN));
    await advanceTask(taskId, at(2 * MIN));
    await expectDenied(taskId, /was denied/);
    expect(await record(recordId)).toMatchObject({ status: "void", settledAt: at(2 * MIN) });
    expect(await orderTotal(order, at(3 * MIN))).toEqual({ total: 0, count: 0 });
  });

  it("a request that expires before anyone decides it voids its record", async () => {
    const order = await freshOrder("O-7003", 30_000);
    const { taskId, recordId } = await refundWithRecord(order);
    const { requestDeadline } = await taskRow(taskId);
    await advanceTask(taskId, new Date(requestDeadline.getTime() - 1));
    expect(await record(recordId)).toMatchObject({ status: "pending" });
    await advanceTask(taskId, requestDeadline);
    await expectDenied(taskId, /expired before anyone decided/);
    expect(await record(recordId)).toMatchObject({ status: "void", settledAt: requestDeadline });
  });

  it("a cancelled task voids its record", async () => {
    const order = await freshOrder("O-7004", 30_000);
    const { taskId, recordId } = await refundWithRecord(order);
    const out = await cancelTask(await principal(), taskId, at(MIN));
    expect(out).toMatchObject({ ok: true, task: { status: "cancelled" } });
    expect(await record(recordId)).toMatchObject({ status: "void", settledAt: at(MIN) });
  });

  it("a task withdrawn because its agent is no longer authorized voids its record", async () => {
    const order = await freshOrder("O-7005", 30_000);
    const p = await principal();
    const { taskId, recordId } = await refundWithRecord(order, T0, p);
    expect(await withdrawTasksOf([p.agentId], at(MIN))).toBe(1);
    await expectDenied(taskId, /no longer authorized/);
    expect(await record(recordId)).toMatchObject({ status: "void" });
  });

  it("an approved task whose re-evaluation denies it (the order has nothing left to refund) voids its record", async () => {
    const order = await freshOrder("O-7006", 30_000);
    const { taskId, recordId } = await refundWithRecord(order);
    await approveOnly(taskId, LEADS[0], at(MIN));
    await db().order.update({ where: { id: order }, data: { refundedCents: 30_000 } });
    await advanceTask(taskId, at(2 * MIN));
    await expectDenied(taskId, /changed while the request was pending/);
    expect(await record(recordId)).toMatchObject({ status: "void" });
  });

  it("an approved and executed task's record is executed from the claim on, before the tool runs", async () => {
    const order = await freshOrder("O-7007", 30_000);
    const { taskId, recordId } = await refundWithRecord(order);
    await approveOnly(taskId, LEADS[0], at(MIN));
    const seen: string[] = [];
    const run = issueRefund.run.bind(issueRefund);
    vi.spyOn(issueRefund, "run").mockImplementation(async (args, ctx) => {
      seen.push((await record(recordId)).status);
      return run(args, ctx);
    });
    await advanceTask(taskId, at(2 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect(seen).toEqual(["executed"]);
    expect(await record(recordId)).toMatchObject({ status: "executed", settledAt: at(2 * MIN) });
    expect(await orderTotal(order, at(3 * MIN))).toEqual({ total: 30_000, count: 1 });
  });

  it("a claimed task whose outcome is unknown stays counted as executed: the tool may have run", async () => {
    const order = await freshOrder("O-7008", 30_000);
    const { taskId, recordId } = await refundWithRecord(order);
    await approveOnly(taskId, LEADS[0], at(MIN));
    const expiresAt = (await db().approvalRequest.findFirstOrThrow({ where: { taskId } })).approvalExpiresAt!;
    await db().task.update({ where: { id: taskId }, data: { approvalExpiresAt: expiresAt } });
    // Claimed, then the process died before running the tool or storing a result.
    expect(await claim(taskId, 1, at(2 * MIN))).not.toBeNull();
    expect(await record(recordId)).toMatchObject({ status: "executed", settledAt: at(2 * MIN) });
    expect(await expireExecution(await taskRow(taskId), at(2 * MIN + EXECUTION_DEADLINE_MS))).toBe(true);
    expect(await taskRow(taskId)).toMatchObject({ disposition: "outcome-unknown" });
    expect(await record(recordId)).toMatchObject({ status: "executed", settledAt: at(2 * MIN) });
  });
});

describe("a call that opens no approval task of its own voids its record", () => {
  it.each([
    ["the built-in backend (creation in one transaction)", false],
    ["a backend apart from the database (intent, submission, binding)", true],
  ])("an identical call joins the open task: its own record is void, the first call's record still counts, with %s", async (_, apart) => {
    if (apart) bindBackendApart();
    const order = await freshOrder("O-7011", 30_000);
    const first = await refundWithRecord(order);
    const second = await refundWithRecord(order, at(SEC));
    expect(second.taskId).toBe(first.taskId);
    expect(await record(first.recordId)).toMatchObject({ status: "pending", taskId: first.taskId });
    expect(await record(second.recordId)).toMatchObject({ status: "void", taskId: null });
    expect(await orderTotal(order, at(2 * SEC))).toEqual({ total: 30_000, count: 1 });
  });

  it.each([
    ["the built-in backend", false],
    ["a backend apart from the database (refused as the intent is recorded)", true],
  ])("a call refused by the per-agent limit on open requests: its record is void, with %s", async (_, apart) => {
    if (apart) bindBackendApart();
    const previous = process.env.COUNTERSIGN_MAX_PENDING_PER_AGENT;
    process.env.COUNTERSIGN_MAX_PENDING_PER_AGENT = "1";
    try {
      await refundWithRecord(await freshOrder("O-7012", 30_000));
      const order = await freshOrder("O-7013", 30_000);
      await expect(refundWithRecord(order, at(SEC))).rejects.toThrow(CallerLimitReached);
      const rows = await db().callRecord.findMany({ where: { resourceId: order } });
      expect(rows).toMatchObject([{ status: "void", taskId: null }]);
    } finally {
      process.env.COUNTERSIGN_MAX_PENDING_PER_AGENT = previous;
    }
  });

  it("a submission that never reached the backend: reconciliation closes it and voids its record", async () => {
    const order = await freshOrder("O-7014", 30_000);
    vi.spyOn(bindBackendApart(), "submit").mockRejectedValueOnce(new Error("backend unreachable"));
    await expect(refundWithRecord(order)).rejects.toThrow("backend unreachable");
    const [row] = await db().callRecord.findMany({ where: { resourceId: order } });
    // The intent is recorded, so the record follows it until reconciliation decides.
    expect(row).toMatchObject({ status: "pending" });
    expect(row.taskId).not.toBeNull();
    expect(await sweep(at(MIN), { intentMinAgeMs: 0 })).toMatchObject({ closed: 1 });
    expect(await record(row.id)).toMatchObject({ status: "void", settledAt: at(MIN) });
  });

  it("a submission the backend received before the creator failed: reconciliation binds the task and the record stays with it", async () => {
    const order = await freshOrder("O-7015", 30_000);
    loseAnswerAfterSubmit();
    await expect(refundWithRecord(order)).rejects.toThrow("connection lost");
    const [row] = await db().callRecord.findMany({ where: { resourceId: order } });
    expect(await sweep(at(MIN), { intentMinAgeMs: 0 })).toMatchObject({ recovered: 1 });
    expect(await taskRow(row.taskId!)).toMatchObject({ status: "working", phase: "awaiting_approval" });
    expect(await record(row.id)).toMatchObject({ status: "pending", taskId: row.taskId });
  });
});

describe("an allowed call of a tool no window reads", () => {
  it("is recorded once it ran, as executed, with what policy evaluated sealed; a window defined later counts it", async () => {
    expect(windowsApply(DEFS, "deploy_service")).toBe(false);
    expect(windowsApply(DEFS, "issue_refund")).toBe(true);
    const p = await principal("ops-bot");
    const out = await callTool(p, "deploy_service", { service: "checkout-api", environment: "staging", version: "1.4.2" }, { tasks: true }, T0);
    expect(out).toMatchObject({ kind: "result", outcome: { isError: false } });
    const rows = await db().callRecord.findMany({ where: { tool: "deploy_service" } });
    expect(rows).toMatchObject([
      {
        status: "executed",
        agentId: p.agentId,
        resourceType: "service",
        resourceId: "checkout-api",
        createdAt: T0,
        settledAt: T0,
        snapshot: { args: { service: "checkout-api", environment: "staging", version: "1.4.2" }, resource: { properties: { environment: "staging" } } },
      },
    ]);
    const [raw] = await db().$queryRaw<{ snapshot: string }[]>`SELECT snapshot::text AS snapshot FROM "CallRecord" WHERE tool = 'deploy_service'`;
    expect(raw.snapshot).not.toContain("checkout-api");
    const call = { tool: "deploy_service", agentId: p.agentId, userId: p.userId, resourceType: "service", resourceId: "checkout-api", money: null };
    expect(await measureHistory([{ name: "deploys", tool: "deploy_service", windowSec: 3600, per: "resource" }], call, at(SEC))).toEqual({ deploys: { total: 0, count: 1 } });
  });
});

describe("retention of call records", () => {
  it("the sweeper purges records older than 400 days and keeps the rest", async () => {
    const p = await principal();
    const base = { tool: "issue_refund", agentId: p.agentId, userId: p.userId, resourceType: "order", resourceId: "O-2289", status: "executed" };
    await db().callRecord.create({ data: { ...base, createdAt: at(-400 * DAY - 1) } });
    await db().callRecord.create({ data: { ...base, createdAt: at(-399 * DAY) } });
    expect(await sweep(T0)).toMatchObject({ historyPurged: 1 });
    expect(await db().callRecord.count()).toBe(1);
    expect(await sweep(T0)).toMatchObject({ historyPurged: 0 });
  });
});
