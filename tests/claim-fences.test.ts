/**
 * SEP "Completion": the execution claim is the irrevocable authorization-enforcement point. All validity checks
 * (the task still working in the expected generation, the approval not expired, the approvals still counting,
 * the principal still valid) MUST hold at the moment of the claim. Each fence is exercised on its own, directly
 * against claim(), so removing any one of them fails a test here; plus the neighbouring fences of the same
 * promise: the request deadline at advance time and the claim holder when the result is stored.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAgent } from "../lib/admin/agents";
import { inboxBackend } from "../lib/approvals/inbox-backend";
import { eligibleApproverIds } from "../lib/approvals/eligibility";
import { authenticateAgent } from "../lib/auth/agents";
import { db } from "../lib/db/client";
import { advanceTask } from "../lib/execution/advance";
import { claim } from "../lib/execution/claim";
import { terminalize } from "../lib/execution/terminalize";
import { executed } from "../lib/execution/outcomes";
import { askRequester } from "../lib/tasks/ask";
import { issueRefund } from "../lib/tools/issue-refund";
import { principal, requestIdOf, resetDb, userId } from "./support/db";
import {
  HOUR,
  LEADS,
  MIN,
  SEC,
  T0,
  TREASURY,
  approveOnly,
  at,
  auditCount,
  expectDenied,
  gatedCall,
  gatedRefund,
  sideEffects,
  taskRow,
} from "./support/proof";

beforeEach(resetDb);
afterEach(() => {
  vi.restoreAllMocks();
});

/** A refund task approved by a support lead, its approval validity recorded on the task (as advancing does). */
async function approvedRefund(orderId = "O-2289"): Promise<{ taskId: string; expiresAt: Date }> {
  const taskId = await gatedRefund(orderId);
  await approveOnly(taskId, LEADS[0], at(MIN));
  const expiresAt = (await db().approvalRequest.findUniqueOrThrow({ where: { id: await requestIdOf(taskId) } })).approvalExpiresAt!;
  await db().task.update({ where: { id: taskId }, data: { approvalExpiresAt: expiresAt } });
  return { taskId, expiresAt };
}

async function leadApproval(requesterUserId: string) {
  return { approverGroup: "support-leads", approverIds: [await userId(LEADS[0])], approvalsRequired: 1, requesterUserId };
}

async function expectUnclaimed(taskId: string): Promise<void> {
  expect(await taskRow(taskId)).toMatchObject({ phase: "awaiting_approval", claimedBy: null });
  expect(await auditCount(taskId, "execution.claimed")).toBe(0);
}

describe("the claim is the enforcement point: every validity check holds at the moment of the claim", () => {
  it("an approval that expires while re-evaluation is slow: the tool does not run and the task completes denied-not-executed", async () => {
    // Real time: the claim reads the clock when it happens, not the time the advance began.
    const start = new Date();
    const taskId = await gatedRefund("O-2289", start);
    await approveOnly(taskId, LEADS[0], start);
    // The advance begins while the approval is valid; it expires 50 ms later, during re-evaluation.
    const now = new Date();
    const expiresAt = new Date(now.getTime() + 50);
    await db().approvalRequest.update({ where: { id: await requestIdOf(taskId) }, data: { approvalExpiresAt: expiresAt } });
    const original = issueRefund.resource.bind(issueRefund);
    vi.spyOn(issueRefund, "resource").mockImplementation(async (args) => {
      // Re-evaluation is slow: it returns only once the approval has expired (bounded wait on the clock).
      for (let i = 0; i < 400 && Date.now() <= expiresAt.getTime() + 20; i++) await new Promise((r) => setTimeout(r, 25));
      expect(Date.now()).toBeGreaterThan(expiresAt.getTime());
      return original(args);
    });
    const run = vi.spyOn(issueRefund, "run");
    await advanceTask(taskId, now);

    expect(run).not.toHaveBeenCalled();
    await expectDenied(taskId, /approval expired before the call could be executed/);
  });

  it("the claim refuses a task that is not working: one waiting for the requester's answer (input_required) is never claimed, even in a claimable phase", async () => {
    const taskId = await gatedRefund("O-2289");
    const asked = await askRequester({ requestId: await requestIdOf(taskId), reviewerId: await userId(LEADS[0]), question: "Which ticket is this for?" }, at(30 * SEC));
    expect(asked.ok).toBe(true);
    await db().task.update({ where: { id: taskId }, data: { approvalExpiresAt: at(HOUR) } });
    expect(await taskRow(taskId)).toMatchObject({ status: "input_required", phase: "awaiting_approval" });
    const t = await taskRow(taskId);
    expect(await claim(taskId, t.generation, at(2 * MIN), await leadApproval(t.principalUserId))).toBeNull();
    expect(await claim(taskId, t.generation, at(2 * MIN))).toBeNull();
    await expectUnclaimed(taskId);
  });

  it("the claim refuses at and after the approval's expiry and when no expiry is recorded; just before the expiry it claims", async () => {
    const { taskId, expiresAt } = await approvedRefund("O-2289");
    const t = await taskRow(taskId);
    expect(await claim(taskId, t.generation, expiresAt)).toBeNull();
    expect(await claim(taskId, t.generation, at(HOUR, expiresAt))).toBeNull();
    await expectUnclaimed(taskId);

    const unrecorded = await gatedRefund("O-4410");
    await approveOnly(unrecorded, LEADS[0], at(MIN));
    expect(await claim(unrecorded, 1, at(2 * MIN))).toBeNull();
    await expectUnclaimed(unrecorded);

    expect(await claim(taskId, t.generation, new Date(expiresAt.getTime() - 1))).toMatch(/^[0-9a-f]{8}:/);
    expect(await taskRow(taskId)).toMatchObject({ status: "working", phase: "claimed" });
  });

  it("the claim refuses a consumed generation: a claim for the superseded generation never wins", async () => {
    const { taskId } = await approvedRefund("O-2289");
    // The generation moved on (re-evaluation said "request" and a new request was opened).
    await db().task.update({ where: { id: taskId }, data: { generation: 2 } });
    expect(await claim(taskId, 1, at(2 * MIN))).toBeNull();
    await expectUnclaimed(taskId);
    expect(await claim(taskId, 2, at(2 * MIN))).not.toBeNull();
  });

  it("the requester never counts as an approver, even when they are in the approver group: not among the eligible approvers, not in the claim's recount", async () => {
    const tara = await userId(TREASURY[0]);
    const theo = await userId(TREASURY[1]);
    const { token } = await createAgent({ name: "tara-own-bot", userId: tara }, await userId("admin@countersign.test"), T0);
    const own = (await authenticateAgent(token))!;
    // USD 50,000: two treasury approvals. Tara's own agent asks; a review row in her name must not count.
    const taskId = await gatedCall(own, "wire_transfer", { to: "acct-own", amount: 50_000 }, T0);
    const requestId = await requestIdOf(taskId);
    await db().review.create({ data: { requestId, reviewerId: tara, decision: "approve", createdAt: at(MIN) } });
    await approveOnly(taskId, TREASURY[1], at(MIN));
    expect(await eligibleApproverIds(requestId, { approverGroup: "treasury", requesterUserId: tara }, at(MIN))).toEqual([theo]);
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).status).toBe("pending");

    await db().task.update({ where: { id: taskId }, data: { approvalExpiresAt: at(HOUR) } });
    const recount = { approverGroup: "treasury", approverIds: [tara, theo], approvalsRequired: 2, requesterUserId: tara };
    expect(await claim(taskId, 1, at(2 * MIN), recount)).toBeNull();
    await expectUnclaimed(taskId);
    expect(await sideEffects(taskId)).toBe(0);
  });

  it("advance ends a pending request past its request deadline as a denial even when the backend still says pending", async () => {
    const taskId = await gatedRefund("O-2289");
    const t = await taskRow(taskId);
    // A backend that does not expire requests itself.
    vi.spyOn(inboxBackend, "status").mockResolvedValue({ state: "pending", deadline: t.requestDeadline });
    const cancel = vi.spyOn(inboxBackend, "cancel");
    await advanceTask(taskId, new Date(t.requestDeadline.getTime() - 1));
    expect(await taskRow(taskId)).toMatchObject({ status: "working" });
    await advanceTask(taskId, t.requestDeadline);
    const after = await taskRow(taskId);
    expect(after).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    expect((after.result as { text: string }).text).toMatch(/expired before anyone decided/);
    expect(cancel).toHaveBeenCalledWith(t.handle, t.requestDeadline);
  });

  it("only the claim holder may store its result: a result stored under another claim token is refused", async () => {
    const { taskId } = await approvedRefund("O-2289");
    const token = await claim(taskId, 1, at(2 * MIN));
    expect(token).not.toBeNull();
    const store = (claimedBy: string) =>
      terminalize({
        taskId,
        fromPhases: ["claimed"],
        claimedBy,
        to: { status: "completed", outcome: executed("done") },
        audit: { type: "execution.completed", actor: "system" },
        now: at(3 * MIN),
      });
    expect(await store(`${token!.split(":")[0]}:another-claim`)).toBe(false);
    expect(await taskRow(taskId)).toMatchObject({ status: "working", phase: "claimed", result: null });
    expect(await store(token!)).toBe(true);
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "approved-executed" });
  });
});
