/**
 * The fences of advancing a task that mutation testing found no test holding: a task waiting for the requester's
 * answer is not re-evaluated or executed; a scheduled retry moves only its own task, only while it still works,
 * and says so in the audit trail; its next attempt lands inside the approval's validity at the exact bounds; a
 * chained request is opened once per consumed generation, with its own deadline and retention even when the
 * backend is down; an orphaned chained request's intent is closed; a claim keeps the task past its execution
 * deadline plus retention.
 */
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { config } from "../config";
import { db } from "../db/client";
import type { ApprovalBackend } from "../approvals/backend";
import { bindApprovalBackend, inboxBackend } from "../approvals/inbox-backend";
import { askRequester } from "../tasks/ask";
import { cancelTask } from "../tasks/cancel";
import { updateTask } from "../tasks/update";
import { issueRefund } from "../tools/issue-refund";
import { ToolBusyError } from "../tools/types";
import { advanceTask, nextAttemptAt } from "./advance";
import { sweep } from "./sweep";
import { principal, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { crashingAt } from "../../tests/support/inprocess-crash";
import { DAY, EXECUTION_DEADLINE_MS, HOUR, LEADS, MIN, RESULT_RETENTION_MS, SEC, T0, approveOnly, at, auditCount, editRule, freshOrder, gatedRefund, sideEffects, taskRow } from "../../tests/support/proof";

vi.mock("../faults", () => import("../../tests/support/inprocess-crash"));

beforeEach(resetDb);
afterEach(() => {
  vi.restoreAllMocks();
});

/** Raises the refund rule's approvals so that re-evaluating an approved refund opens a chained request. */
const requireTwoApprovals = (now: Date) => editRule("refund-over-limit", { approvalsRequired: 2 }, now);

describe("a task waiting for the requester's answer", () => {
  it("an approval granted while it waits is neither re-evaluated nor executed until the answer comes; then it runs once", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    const asked = await askRequester({ requestId: await requestIdOf(taskId), reviewerId: await userId(LEADS[0]), question: "Which ticket?" }, at(MIN));
    if (!asked.ok) throw new Error(asked.error);
    await approveOnly(taskId, LEADS[1], at(2 * MIN));
    const resource = vi.spyOn(issueRefund, "resource");
    const run = vi.spyOn(issueRefund, "run");

    // Advanced directly and by the sweeper: the decided request is seen, but nothing of the call is touched.
    await advanceTask(taskId, at(3 * MIN));
    await sweep(at(4 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "input_required", phase: "awaiting_approval" });
    expect(resource).not.toHaveBeenCalled();
    expect(run).not.toHaveBeenCalled();

    const answered = await updateTask(agent, taskId, { [asked.key]: { action: "accept", content: { answer: "TICKET-7" } } }, at(5 * MIN));
    expect(answered).toMatchObject({ ok: true, task: { status: "working" } });
    await sweep(at(6 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect(resource).toHaveBeenCalledTimes(1);
    expect(await sideEffects(taskId)).toBe(1);
  });
});

describe("a scheduled retry", () => {
  it("moves only its own task, records the attempt and its time in the audit trail", async () => {
    const busy = await gatedRefund("O-2289");
    const other = await gatedRefund(await freshOrder("O-7001"));
    await approveOnly(busy, LEADS[0], at(MIN));
    await approveOnly(other, LEADS[0], at(MIN));
    const otherBefore = await taskRow(other);
    vi.spyOn(issueRefund, "resource").mockRejectedValueOnce(new ToolBusyError("The order is locked.", 10 * MIN));

    await advanceTask(busy, at(2 * MIN));
    const t = await taskRow(busy);
    expect(t).toMatchObject({ status: "working", phase: "retry_wait", attempts: 1 });
    expect(await taskRow(other)).toEqual(otherBefore);
    const events = await db().auditEvent.findMany({ where: { type: "execution.retry-scheduled" } });
    expect(events.map((e) => [e.taskId, e.data])).toEqual([[busy, { attempt: 1, nextAttemptAt: t.nextAttemptAt!.toISOString() }]]);
  });

  it("is not scheduled for a task cancelled while it was being re-evaluated: the cancel stands and no retry is recorded", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    await approveOnly(taskId, LEADS[0], at(MIN));
    vi.spyOn(issueRefund, "resource").mockImplementationOnce(async () => {
      expect(await cancelTask(agent, taskId, at(2 * MIN))).toMatchObject({ ok: true, task: { status: "cancelled" } });
      throw new ToolBusyError("The order is locked.", 10 * MIN);
    });
    await advanceTask(taskId, at(2 * MIN));
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "cancelled", attempts: 0, nextAttemptAt: null });
    expect(t.phase).not.toBe("retry_wait");
    expect(await auditCount(taskId, "execution.retry-scheduled")).toBe(0);
  });

  it("is fenced on the task still working, not only on its phase: a task that left working in a waiting phase is left as it is", async () => {
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(MIN));
    vi.spyOn(issueRefund, "resource").mockImplementationOnce(async () => {
      // Another writer moves the task out of working while its phase still reads "awaiting_approval".
      await db().task.update({ where: { id: taskId }, data: { status: "input_required" } });
      throw new ToolBusyError("The order is locked.", 10 * MIN);
    });
    await advanceTask(taskId, at(2 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "input_required", phase: "awaiting_approval", attempts: 0, nextAttemptAt: null });
    expect(await auditCount(taskId, "execution.retry-scheduled")).toBe(0);
  });
});

describe("nextAttemptAt at its bounds", () => {
  const now = at(0);
  const expiresAt = at(10 * SEC);
  it.each([
    ["a wait shorter than the time left is kept", 9_999, at(9_999)],
    ["a wait equal to the time left is clamped to halfway", 10 * SEC, at(5 * SEC)],
    ["a wait beyond the time left is clamped to halfway", HOUR, at(5 * SEC)],
  ])("%s", (_, wait, expected) => {
    expect(nextAttemptAt(now, wait, expiresAt)).toEqual(expected);
  });

  it("exactly two seconds left still allows an attempt halfway; less than that waits for the expiry itself", () => {
    expect(nextAttemptAt(now, HOUR, at(2 * SEC))).toEqual(at(SEC));
    expect(nextAttemptAt(now, HOUR, at(2 * SEC - 1))).toEqual(at(2 * SEC - 1));
    expect(nextAttemptAt(now, 2 * SEC - 1, at(2 * SEC - 1))).toEqual(at(2 * SEC - 1));
  });
});

/**
 * An approved refund whose re-evaluation opens a chained request, advanced at 2 minutes; the agent cancels the task
 * while the chained request is being submitted to `backend`.
 */
async function chainWhileCancelled(backend: ApprovalBackend): Promise<string> {
  const agent = await principal();
  const taskId = await gatedRefund("O-2289", T0, agent);
  await approveOnly(taskId, LEADS[0], at(MIN));
  await requireTwoApprovals(at(90 * SEC));
  const realSubmit = inboxBackend.submit.bind(inboxBackend);
  vi.spyOn(backend, "submit").mockImplementationOnce(async (key, body, now) => {
    expect(await cancelTask(agent, taskId, now)).toMatchObject({ ok: true });
    return realSubmit(key, body, now);
  });
  await advanceTask(taskId, at(2 * MIN));
  return taskId;
}

/** The submission intent of the chained request (the task's second generation). */
function chainedIntent(taskId: string) {
  return db().submissionIntent.findUniqueOrThrow({ where: { taskId_generation: { taskId, generation: 2 } } });
}

describe("a chained request", () => {
  it("is opened once per consumed generation: an advance that lost the race to consume it submits nothing", async () => {
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(MIN));
    await requireTwoApprovals(at(90 * SEC));
    const submit = vi.spyOn(inboxBackend, "submit");
    const resolve = issueRefund.resource.bind(issueRefund);
    let nested = false;
    vi.spyOn(issueRefund, "resource").mockImplementation(async (args) => {
      if (!nested) {
        // While this advance re-evaluates, another one runs to the end: it consumes generation 1 and opens 2.
        nested = true;
        await advanceTask(taskId, at(2 * MIN));
      }
      return resolve(args);
    });
    await advanceTask(taskId, at(2 * MIN));

    expect(submit).toHaveBeenCalledTimes(1);
    const requests = await db().approvalRequest.findMany({ where: { taskId }, orderBy: { createdAt: "asc" } });
    expect(requests.map((r) => r.status)).toEqual(["approved", "pending"]);
    expect(await taskRow(taskId)).toMatchObject({ status: "working", phase: "awaiting_approval", generation: 2, handle: requests[1].id });
    expect(await auditCount(taskId, "request.superseded")).toBe(1);
  });

  it("keeps its own deadline and retention while the backend cannot be reached to submit it", async () => {
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(MIN));
    await requireTwoApprovals(at(90 * SEC));
    // Older retention than the chained request needs, so only the chain's own retention can extend it.
    await db().task.update({ where: { id: taskId }, data: { retainUntil: at(HOUR) } });
    vi.spyOn(inboxBackend, "submit").mockRejectedValueOnce(new Error("backend down"));
    await expect(advanceTask(taskId, at(2 * MIN))).rejects.toThrow("backend down");

    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "working", phase: "submitting", generation: 2 });
    expect(t.requestDeadline).toEqual(at(2 * MIN + DAY));
    expect(t.retainUntil).toEqual(at(2 * MIN + DAY + RESULT_RETENTION_MS));
    // Not ended as expired while it waits to be submitted.
    await sweep(at(3 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "working", generation: 2 });
  });

  it("made for a task that stopped waiting is cancelled in the backend and its intent closed as cancelled", async () => {
    const cancel = vi.spyOn(inboxBackend, "cancel");
    const taskId = await chainWhileCancelled(inboxBackend);
    const intent = await chainedIntent(taskId);
    const chained = await db().approvalRequest.findFirstOrThrow({ where: { idempotencyKey: intent.idempotencyKey } });
    expect(intent).toMatchObject({ state: "cancelled", handle: chained.id });
    expect(chained.status).toBe("cancelled");
    expect(cancel).toHaveBeenCalledWith(chained.id, at(2 * MIN));
    // Not reopened: the trail says the request was superseded, nothing more.
    expect(await auditCount(taskId, "request.reopened")).toBe(0);
  });

  it("made for a task that stopped waiting, with a backend that cannot cancel, is left to the backend's own expiry", async () => {
    const noCancel = { ...inboxBackend, cancel: undefined };
    bindApprovalBackend(noCancel);
    onTestFinished(() => bindApprovalBackend(null));
    const taskId = await chainWhileCancelled(noCancel);
    const intent = await chainedIntent(taskId);
    expect(intent.state).toBe("cancelled");
    expect(await taskRow(taskId)).toMatchObject({ status: "cancelled" });
  });

  it("carries the policy that asked for it, to reviewers and to the requester's context, and is told in the audit trail", async () => {
    const taskId = await gatedRefund("O-2289");
    const first = (await taskRow(taskId)).handle;
    await approveOnly(taskId, LEADS[0], at(MIN));
    const version = await requireTwoApprovals(at(90 * SEC));
    await advanceTask(taskId, at(2 * MIN));

    const t = await taskRow(taskId);
    expect(t).toMatchObject({ generation: 2, phase: "awaiting_approval", policyRuleKey: "refund-over-limit", policyVersion: version });
    const intent = await chainedIntent(taskId);
    const policy = { ruleKey: "refund-over-limit", version, reason: expect.stringMatching(/\S/) };
    const body = intent.body as { policy: object; requirements: object; generation: number };
    expect(body).toMatchObject({ generation: 2, policy, requirements: { approvalsRequired: 2 } });
    const requester = intent.requester as { rule: object; reason: string; requirements: object };
    expect(requester).toMatchObject({ rule: { ruleKey: "refund-over-limit", version }, reason: (body.policy as { reason: string }).reason, requirements: { approvalsRequired: 2 } });

    const events = await db().auditEvent.findMany({ where: { taskId, type: { in: ["request.superseded", "request.reopened"] } }, orderBy: { seq: "asc" } });
    expect(events).toMatchObject([
      { type: "request.superseded", actor: "system", requestId: first, data: { generation: 1, next: 2 }, at: at(2 * MIN) },
      { type: "request.reopened", actor: "system", requestId: t.handle, data: { generation: 2 }, at: at(2 * MIN) },
    ]);
  });
});

describe("the claim", () => {
  it("keeps the task for its execution deadline plus retention, past the pending window's and the approval's retention", async () => {
    // An approval valid for a minute, granted 30 s before the claim: its retention ends before the claim's.
    await editRule("refund-over-limit", { approvalValiditySec: 60 }, at(-MIN));
    const taskId = await gatedRefund("O-2289");
    const { requestDeadline, retainUntil } = await taskRow(taskId);
    expect(retainUntil).toEqual(at(DAY + RESULT_RETENTION_MS));
    // Approved and claimed just before the request deadline: the claim's deadline reaches past it.
    const claimAt = new Date(requestDeadline.getTime() - 10 * SEC);
    await approveOnly(taskId, LEADS[0], new Date(claimAt.getTime() - 30 * SEC));
    expect(await crashingAt("after-claim", () => advanceTask(taskId, claimAt))).toBe("crashed");
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ phase: "claimed", executionDeadline: new Date(claimAt.getTime() + EXECUTION_DEADLINE_MS) });
    expect(t.retainUntil).toEqual(new Date(claimAt.getTime() + EXECUTION_DEADLINE_MS + RESULT_RETENTION_MS));
    expect(config.executionDeadlineMs).toBe(EXECUTION_DEADLINE_MS);
  });
});
