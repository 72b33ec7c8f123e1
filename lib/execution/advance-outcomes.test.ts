/**
 * What advancing a task does with each answer the approval backend and the tool can give, beyond approve and deny
 * (tests/lifecycle.test.ts): a request the backend cancelled or lost ends the task without running the tool, and
 * says so; a tool that reports an error with no words still says it failed; a result that arrives after the claim
 * was taken away is not stored, and the late arrival is audited; arguments the tool no longer accepts are a
 * binding failure, denied and never run.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../db/client";
import { getTool } from "../tools/catalog";
import { saveRuleVersion, type RuleInput } from "../policy/save-rule";
import { DEMO_DOCUMENT, withoutPolicy } from "../policy/demo-policy";
import { saveDocument } from "../policy/store";
import { advanceTask } from "./advance";
import { claim } from "./claim";
import { metricValue } from "../metrics";
import { requestIdOf, resetDb, userId } from "../../tests/support/db";
import { approveOnly, at, auditCount, freshOrder, gatedDeploy, gatedRefund, LEADS, MIN, review, sideEffects, SRES, taskRow } from "../../tests/support/proof";

async function auditOf(taskId: string, type: string) {
  return db().auditEvent.findFirstOrThrow({ where: { taskId, type } });
}

beforeEach(async () => {
  await resetDb();
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("advancing a task on the backend's other answers", () => {
  it("a request the backend cancelled ends the task cancelled, audited as the backend's doing; the tool does not run", async () => {
    const taskId = await gatedDeploy();
    await db().approvalRequest.update({ where: { id: await requestIdOf(taskId) }, data: { status: "cancelled", decidedAt: at(MIN) } });
    expect(await advanceTask(taskId, at(2 * MIN))).toEqual({ moved: true });
    expect(await taskRow(taskId)).toMatchObject({ status: "cancelled" });
    expect(await auditOf(taskId, "task.cancelled")).toMatchObject({ actor: "backend" });
    expect(await sideEffects(taskId)).toBe(0);
  });

  it("a request the backend no longer knows fails the task with words that say the tool did not run", async () => {
    const taskId = await gatedDeploy();
    // The task's handle names a request the backend has no record of (lost on its side).
    await db().task.update({ where: { id: taskId }, data: { handle: "request-the-backend-lost" } });
    expect(await advanceTask(taskId, at(2 * MIN))).toEqual({ moved: true });
    const t = await taskRow(taskId);
    expect(t.status).toBe("failed");
    expect(JSON.stringify(t.error)).toContain("The approval backend failed before execution; the tool did not run.");
    expect(await auditOf(taskId, "task.failed")).toMatchObject({ actor: "backend" });
    expect(await sideEffects(taskId)).toBe(0);
  });
});

describe("the approved tool's answers", () => {
  it("a tool that reports an error without words completes execution-error saying the tool reported an error", async () => {
    const taskId = await gatedDeploy();
    await approveOnly(taskId, SRES[0], at(MIN));
    vi.spyOn(getTool("deploy_service")!, "run").mockResolvedValue({ text: "", isError: true });
    await advanceTask(taskId, at(2 * MIN));
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "completed", disposition: "execution-error" });
    expect(JSON.stringify(t.result)).toContain("the tool reported an error.");
  });

  it("the approved tool runs with the claim's execution deadline, so a tool that calls out (an upstream) is bounded by it", async () => {
    const taskId = await gatedDeploy();
    await approveOnly(taskId, SRES[0], at(MIN));
    const run = vi.spyOn(getTool("deploy_service")!, "run");
    await advanceTask(taskId, at(2 * MIN));
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect(t.executionDeadline).toBeInstanceOf(Date);
    expect(run).toHaveBeenCalledTimes(1);
    expect(run.mock.calls[0][1]).toMatchObject({ taskId, deadline: t.executionDeadline });
  });

  it("a result that arrives after the claim was taken away is not stored; its late arrival is audited with its disposition", async () => {
    const taskId = await gatedDeploy();
    await approveOnly(taskId, SRES[0], at(MIN));
    vi.spyOn(getTool("deploy_service")!, "run").mockImplementation(async () => {
      // While the tool runs, the claim passes to someone else (its execution deadline was judged passed elsewhere).
      await db().task.update({ where: { id: taskId }, data: { claimedBy: "someone-else" } });
      return { text: "deployed" };
    });
    await advanceTask(taskId, at(2 * MIN));
    const t = await taskRow(taskId);
    expect(t.status).toBe("working");
    expect(t.result).toBeNull();
    expect(await auditCount(taskId, "execution.completed")).toBe(0);
    // Said by the system, at the advance's own time, not by the tool or the agent.
    const late = await auditOf(taskId, "execution.result-late");
    expect(late).toMatchObject({ actor: "system", data: { disposition: "approved-executed" } });
    expect(late.at).toEqual(at(2 * MIN));
  });

  it("a claim refused because the approver lost eligibility after re-evaluation neither runs nor denies: the next advance asks again", async () => {
    const taskId = await gatedDeploy();
    await approveOnly(taskId, SRES[0], at(MIN));
    const tool = getTool("deploy_service")!;
    const resource = tool.resource.bind(tool);
    const run = vi.spyOn(tool, "run");
    // Re-evaluation maps the resource; the approver is deactivated right after it, before the claim recounts.
    vi.spyOn(tool, "resource").mockImplementationOnce(async (args) => {
      const r = await resource(args);
      await db().user.update({ where: { email: SRES[0] }, data: { active: false } });
      return r;
    });
    await advanceTask(taskId, at(2 * MIN));
    expect(run).not.toHaveBeenCalled();
    expect(await taskRow(taskId)).toMatchObject({ status: "working", disposition: null });
    expect(await auditCount(taskId, "task.denied")).toBe(0);
    // The next advance re-evaluates with the approvals that still count (none): the task waits on a new request.
    await advanceTask(taskId, at(3 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "working", phase: "awaiting_approval" });
    expect(run).not.toHaveBeenCalled();
  });

  it("an unexpected failure while re-evaluation maps the resource is not a denial: the advance fails, the task keeps waiting, and the next advance runs it", async () => {
    const taskId = await gatedDeploy();
    await approveOnly(taskId, SRES[0], at(MIN));
    const tool = getTool("deploy_service")!;
    vi.spyOn(tool, "resource").mockRejectedValueOnce(new Error("connection reset while reading the service"));
    await expect(advanceTask(taskId, at(2 * MIN))).rejects.toThrow("connection reset");
    expect(await taskRow(taskId)).toMatchObject({ status: "working", disposition: null });
    expect(await auditCount(taskId, "task.denied")).toBe(0);
    await advanceTask(taskId, at(3 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "approved-executed" });
  });

  it("a policy that now denies the approved call ends it with the policy's own reason; a plain denial is no evaluation error", async () => {
    const taskId = await gatedDeploy();
    await approveOnly(taskId, SRES[0], at(MIN));
    const cur = await db().policyRule.findFirstOrThrow({ where: { ruleKey: "deploy-production", active: true } });
    const frozen: RuleInput = {
      ruleKey: cur.ruleKey, tool: cur.tool, description: cur.description, field: cur.field, operator: cur.operator as RuleInput["operator"],
      value: cur.value, currency: cur.currency, effect: "deny", approverGroup: null, approvalsRequired: 0, requestDeadlineSec: cur.requestDeadlineSec,
      approvalValiditySec: cur.approvalValiditySec, requireJustification: false, reason: "Production deploys are frozen for the release", active: true,
    };
    await saveRuleVersion(frozen, await userId("admin@countersign.test"), at(MIN));
    await advanceTask(taskId, at(2 * MIN));
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    expect(JSON.stringify(t.result)).toContain("Production deploys are frozen for the release. The tool did not run");
    expect((await auditOf(taskId, "task.denied")).data).toMatchObject({ cause: "policy", detail: "Production deploys are frozen for the release" });
    expect(await auditCount(taskId, "policy.evaluation-error")).toBe(0);
    expect(await sideEffects(taskId)).toBe(0);
  });

  it("a policy that can no longer be evaluated for the approved call denies it, audited as an evaluation error at execution", async () => {
    const taskId = await gatedRefund(await freshOrder("O-7801", 30_000));
    await approveOnly(taskId, LEADS[0], at(MIN));
    // Overflows for every refund: the approved call cannot be evaluated any more.
    const overflow = `\n@id("overflow")\n@reason("Never meant to hold.")\nforbid (principal, action == Action::"issue_refund", resource)\nwhen { resource.amount.minor * 9223372036854775807 < 0 };\n`;
    const steady = withoutPolicy(DEMO_DOCUMENT, "deploy-production-after-hours");
    const saved = await saveDocument({ ...steady, policies: steady.policies + overflow, tests: [] }, "admin@countersign.test", at(MIN));
    if (!saved.ok) throw new Error(JSON.stringify(saved.problems));
    await advanceTask(taskId, at(2 * MIN));
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    expect(JSON.stringify(t.result)).toContain("The policy could not be evaluated for this call, so it is denied.");
    expect((await auditOf(taskId, "task.denied")).data).toMatchObject({ cause: "policy" });
    const events = await db().auditEvent.findMany({ where: { type: "policy.evaluation-error" }, select: { actor: true, taskId: true, at: true, data: true } });
    expect(events).toEqual([
      {
        actor: "system",
        taskId,
        at: at(2 * MIN),
        data: {
          tool: "issue_refund",
          argumentsDigest: t.argumentsDigest,
          rule: { id: expect.any(String), ruleKey: "evaluation-error", version: saved.version },
          error: expect.stringContaining("overflow"),
          at: "execution",
        },
      },
    ]);
    expect(await sideEffects(taskId)).toBe(0);
  });

  it("a tool the catalog no longer has at re-evaluation is a binding failure: denied, never run", async () => {
    const taskId = await gatedDeploy();
    await approveOnly(taskId, SRES[0], at(MIN));
    // As if the tool had left the catalog since the call (its server removed, say).
    await db().task.update({ where: { id: taskId }, data: { tool: "retired_tool" } });
    await advanceTask(taskId, at(2 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    expect((await auditOf(taskId, "task.denied")).data).toMatchObject({ cause: "binding" });
    expect(await sideEffects(taskId)).toBe(0);
  });

  it("arguments the tool no longer accepts at re-evaluation are a binding failure: denied, never run", async () => {
    const taskId = await gatedDeploy();
    await approveOnly(taskId, SRES[0], at(MIN));
    const tool = getTool("deploy_service")!;
    const run = vi.spyOn(tool, "run");
    vi.spyOn(tool.schema, "safeParse").mockReturnValue({ success: false } as never);
    await advanceTask(taskId, at(2 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    expect((await auditOf(taskId, "task.denied")).data).toMatchObject({ cause: "binding" });
    expect(run).not.toHaveBeenCalled();
    expect(await sideEffects(taskId)).toBe(0);
  });
});

describe("the claim's bookkeeping", () => {
  it("the claim counts its own call as executed in policy history, and only its own: another request's pending call is voided when it is denied", async () => {
    const a = await gatedRefund(await freshOrder("O-7701"));
    const b = await gatedRefund(await freshOrder("O-7702"));
    await approveOnly(a, LEADS[0], at(MIN));
    await advanceTask(a, at(2 * MIN));
    expect(await taskRow(a)).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect((await auditOf(a, "execution.claimed")).actor).toBe("system");
    expect(await db().callRecord.findFirstOrThrow({ where: { taskId: a } })).toMatchObject({ status: "executed" });
    expect(await db().callRecord.findFirstOrThrow({ where: { taskId: b } })).toMatchObject({ status: "pending" });
    const denied = await review(b, LEADS[0], "deny", at(3 * MIN));
    expect(denied.ok).toBe(true);
    await advanceTask(b, at(4 * MIN));
    expect(await taskRow(b)).toMatchObject({ disposition: "denied-not-executed" });
    // Not counted in any window from now on.
    expect(await db().callRecord.findFirstOrThrow({ where: { taskId: b } })).toMatchObject({ status: "void" });
  });

  it("a claim that does not win is counted as lost; one that wins is not", async () => {
    const taskId = await gatedRefund(await freshOrder("O-7703"));
    await approveOnly(taskId, LEADS[0], at(MIN));
    const lost = () => metricValue("countersign_claims_lost_total", {});
    const before = await lost();
    await advanceTask(taskId, at(2 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect(await lost()).toBe(before);
    // The task has run: a claim of the same generation finds it no longer waiting, and loses.
    expect(await claim(taskId, (await taskRow(taskId)).generation, at(3 * MIN))).toBeNull();
    expect(await lost()).toBe(before + 1);
  });
});
