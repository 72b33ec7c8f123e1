/**
 * The walking skeleton end to end in lib/: a gated refund becomes a task and does not run; a lead approves; the
 * server re-evaluates, claims once and issues the refund; the creator (only) reads the result.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { callTool } from "../lib/tasks/call";
import { cancelTask } from "../lib/tasks/cancel";
import { decide } from "../lib/tasks/decide";
import { getTask } from "../lib/tasks/get";
import { advanceTask } from "../lib/execution/advance";
import { principal, refundsFor, requestIdOf, resetDb, userId } from "./support/db";

import { T0 } from "./support/proof";
const later = (ms: number) => new Date(T0.getTime() + ms);

beforeEach(resetDb);

async function gatedRefund() {
  const agent = await principal();
  const out = await callTool(agent, "issue_refund", { order_id: "O-2289" }, { tasks: true }, T0);
  if (out.kind !== "task") throw new Error(`expected a task, got ${out.kind}`);
  return { agent, task: out.task };
}

describe("a requestable denial returns a task without executing the tool", () => {
  it("refund above EUR 150.00 from a tasks client: working task, no refund issued", async () => {
    const { task } = await gatedRefund();
    expect(task).toMatchObject({ status: "working", pending: true });
    expect(task.taskId).toMatch(/^[0-9a-f-]{36}$/);
    expect(task.statusMessage).toContain("Refunds above EUR 150.00 need a support lead's approval.");
    expect(task.ttlMs).toBeGreaterThanOrEqual(24 * 3600_000);
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });

  it("refund under the limit executes at once with an ordinary result and no disposition", async () => {
    const out = await callTool(await principal(), "issue_refund", { order_id: "O-1021" }, { tasks: true }, T0);
    expect(out.kind).toBe("result");
    if (out.kind !== "result") return;
    expect(out.outcome.isError).toBe(false);
    expect(out.outcome.disposition).toBeUndefined();
    expect(out.outcome.text).toMatch(/EUR 42\.50 issued on order O-1021/);
    expect(await refundsFor("O-1021")).toHaveLength(1);
  });

  it("a client without the tasks extension gets the degraded isError result and nothing is submitted", async () => {
    const out = await callTool(await principal(), "issue_refund", { order_id: "O-2289" }, { tasks: false }, T0);
    expect(out.kind).toBe("approval-required");
    if (out.kind !== "approval-required") return;
    expect(out.outcome.isError).toBe(true);
    // Why nothing was submitted, and what the agent can do about it.
    expect(out.outcome.text).toMatch(/^Approval required: .+ The tool did not run\. /);
    expect(out.outcome.text).toContain("to clients that declare the io.modelcontextprotocol/tasks extension; this client did not, so nothing was submitted for approval.");
    expect(out.outcome.text).toMatch(/Ask the user to have the call approved, or retry from a tasks-capable client\.$/);
    expect(await db().approvalRequest.count()).toBe(0);
  });

  it("bad input is refused as a tool error that says the tool did not run", async () => {
    const agent = await principal();
    for (const args of [{ order_id: 12 }, { order_id: "O-9999" }, { order_id: "O-2289", amount: -5 }, { order_id: "O-2289", extra: 1 }]) {
      const out = await callTool(agent, "issue_refund", args, { tasks: true }, T0);
      expect(out.kind).toBe("result");
      if (out.kind === "result") expect(out.outcome).toMatchObject({ isError: true, text: expect.stringMatching(/did not run/) });
    }
    expect(await db().refund.count()).toBe(0);
  });

  it("a repeated identical call while the task is open returns the same task (dedup)", async () => {
    const { agent, task } = await gatedRefund();
    const again = await callTool(agent, "issue_refund", { order_id: "O-2289" }, { tasks: true }, later(1000));
    expect(again.kind === "task" && again.task.taskId).toBe(task.taskId);
    expect(await db().approvalRequest.count()).toBe(1);
  });
});

describe("approval resumes execution at most once", () => {
  it("a support lead approves: re-evaluated, claimed, refund issued once, result inline with approved-executed", async () => {
    const { agent, task } = await gatedRefund();
    const lead = await userId("lena.lead@countersign.test");
    const r = await decide({ requestId: await requestIdOf(task.taskId), reviewerId: lead, decision: "approve" }, later(60_000));
    expect(r).toMatchObject({ ok: true, requestStatus: "approved", taskStatus: "completed", disposition: "approved-executed" });
    const view = await getTask(agent, task.taskId, later(61_000));
    expect(view).toMatchObject({ status: "completed", pending: false, result: { isError: false, disposition: "approved-executed" } });
    expect(view!.result!.text).toMatch(/executed once: Refund .* of EUR 180\.00 issued on order O-2289/);
    const refunds = await refundsFor("O-2289");
    expect(refunds).toHaveLength(1);
    expect(refunds[0].taskId).toBe(task.taskId);
    // Polling again, or advancing again, never runs it twice.
    await advanceTask(task.taskId, later(62_000));
    await getTask(agent, task.taskId, later(63_000));
    expect(await refundsFor("O-2289")).toHaveLength(1);
  });

  it("racing advances after approval claim once: exactly one refund", async () => {
    const { task } = await gatedRefund();
    const requestId = await requestIdOf(task.taskId);
    await db().approvalRequest.update({
      where: { id: requestId },
      data: { status: "approved", approvedAt: later(1000), approvalExpiresAt: later(3_600_000) },
    });
    await db().review.create({ data: { requestId, reviewerId: await userId("lena.lead@countersign.test"), decision: "approve", createdAt: later(1000) } });
    await Promise.all(Array.from({ length: 12 }, () => advanceTask(task.taskId, later(2000))));
    expect(await refundsFor("O-2289")).toHaveLength(1);
    expect(await db().auditEvent.count({ where: { taskId: task.taskId, type: "execution.claimed" } })).toBe(1);
  });
});

describe("a terminal denial is a completed task whose body marks it denied-not-executed", () => {
  it("a lead denies: completed, isError, denied-not-executed, the body says the tool did not run", async () => {
    const { agent, task } = await gatedRefund();
    const lead = await userId("sam.lead@countersign.test");
    const r = await decide({ requestId: await requestIdOf(task.taskId), reviewerId: lead, decision: "deny", comment: "Customer already got a voucher" }, later(1000));
    expect(r).toMatchObject({ ok: true, requestStatus: "denied", taskStatus: "completed", disposition: "denied-not-executed" });
    const view = await getTask(agent, task.taskId, later(2000));
    expect(view!.result).toMatchObject({ isError: true, disposition: "denied-not-executed" });
    expect(view!.result!.text).toMatch(/did not run/);
    // No reviewer identity or comment leaks into what the agent reads.
    expect(JSON.stringify(view)).not.toMatch(/voucher|Sam|sam\.lead/);
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });

  it("a denial needs a reason", async () => {
    const { task } = await gatedRefund();
    const r = await decide({ requestId: await requestIdOf(task.taskId), reviewerId: await userId("sam.lead@countersign.test"), decision: "deny" }, later(1000));
    expect(r).toEqual({ ok: false, error: "A denial needs a reason." });
  });
});

describe("four-eyes rules in the built-in backend", () => {
  it("a reviewer outside the required group cannot approve", async () => {
    const { task } = await gatedRefund();
    const r = await decide({ requestId: await requestIdOf(task.taskId), reviewerId: await userId("tara.treasury@countersign.test"), decision: "approve" }, later(1000));
    expect(r.ok).toBe(false);
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });

  it("the requester can never review their own request", async () => {
    // Lena's own agent asks for the refund; Lena is a support lead but the requester.
    const lena = await db().user.findUniqueOrThrow({ where: { email: "lena.lead@countersign.test" } });
    const agent = await db().agent.create({ data: { name: "lena-bot", userId: lena.id, tokenHash: "x".repeat(64), tokenPrefix: "cs_x" } });
    const out = await callTool({ agentId: agent.id, agentName: agent.name, userId: lena.id, userName: lena.name }, "issue_refund", { order_id: "O-2289" }, { tasks: true }, T0);
    if (out.kind !== "task") throw new Error("expected task");
    const r = await decide({ requestId: await requestIdOf(out.task.taskId), reviewerId: lena.id, decision: "approve" }, later(1000));
    expect(r).toEqual({ ok: false, error: "You cannot review your own request." });
  });

  it("a reviewer reviews a request once", async () => {
    const { task } = await gatedRefund();
    await db().policyRule.updateMany({ data: { approvalsRequired: 2 } });
    const requestId = await requestIdOf(task.taskId);
    const lead = await userId("lena.lead@countersign.test");
    // The request was created under approvalsRequired 1; make it need two for this check.
    await db().approvalRequest.update({ where: { id: requestId }, data: { approvalsRequired: 2 } });
    expect(await decide({ requestId, reviewerId: lead, decision: "approve" }, later(1000))).toMatchObject({ ok: true, requestStatus: "pending" });
    expect(await decide({ requestId, reviewerId: lead, decision: "approve" }, later(2000))).toEqual({ ok: false, error: "You have already reviewed this request." });
  });
});

describe("tasks/get and tasks/cancel answer only the principal that created the task", () => {
  it("another agent gets the same answer as for an unknown task", async () => {
    const { task } = await gatedRefund();
    const other = await principal("ops-bot");
    expect(await getTask(other, task.taskId, later(1000))).toBeNull();
    expect(await getTask(other, "00000000-0000-4000-8000-000000000000", later(1000))).toBeNull();
    expect(await cancelTask(other, task.taskId, later(1000))).toEqual({ ok: false, reason: "not-found" });
  });
});

describe("a cancelled or expired task cannot later execute", () => {
  it("cancel wins before approval; a later approval is refused and nothing runs", async () => {
    const { agent, task } = await gatedRefund();
    const c = await cancelTask(agent, task.taskId, later(1000));
    expect(c).toMatchObject({ ok: true, task: { status: "cancelled" } });
    const r = await decide({ requestId: await requestIdOf(task.taskId), reviewerId: await userId("lena.lead@countersign.test"), decision: "approve" }, later(2000));
    expect(r.ok).toBe(false);
    expect(await cancelTask(agent, task.taskId, later(3000))).toEqual({ ok: false, reason: "terminal" });
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });

  it("past the request deadline the task completes as a denial noting expiry", async () => {
    const { agent, task } = await gatedRefund();
    const view = await getTask(agent, task.taskId, later(24 * 3600_000 + 1));
    expect(view).toMatchObject({ status: "completed", result: { isError: true, disposition: "denied-not-executed" } });
    expect(view!.result!.text).toMatch(/expired/);
    expect(view!.ttlMs).toBeGreaterThanOrEqual(24 * 3600_000 + 7 * 24 * 3600_000);
  });
});
