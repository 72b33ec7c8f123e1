/**
 * SEP "Crash-consistent creation" and "Completion" (execution fencing), with real process death: a child process
 * runs the call with COUNTERSIGN_FAULT set and kills itself with SIGKILL at that point (no cleanup, no finally
 * blocks, connections dropped). The test process then plays the restarted server: it reconciles intents and
 * sweeps, and checks that nothing was submitted twice, nothing is orphaned, and nothing ran twice.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../lib/db/client";
import { verifyAuditChain } from "../lib/audit/verify";
import { inboxBackend } from "../lib/approvals/inbox-backend";
import { advanceTask } from "../lib/execution/advance";
import { sweep } from "../lib/execution/sweep";
import { callTool } from "../lib/tasks/call";
import { cancelTask } from "../lib/tasks/cancel";
import { SubmissionInProgress } from "../lib/tasks/create";
import { decide } from "../lib/tasks/decide";
import { getTask } from "../lib/tasks/get";
import { reconcileIntents } from "../lib/tasks/reconcile";
import { principal, refundsFor, requestIdOf, resetDb, userId } from "./support/db";
import { interruptedChainedSubmission } from "./support/submissions";
import {
  EXECUTION_DEADLINE_MS,
  HOUR,
  LEADS,
  MIN,
  SEC,
  T0,
  approveOnly,
  at,
  auditCount,
  expectBodyAgrees,
  gatedRefund,
  sideEffects,
  startWorker,
  taskRow,
} from "./support/proof";

beforeEach(resetDb);

const REFUND = { order_id: "O-2289" };

/** Runs the crash worker and requires that it died by SIGKILL (at the fault point, not of some other error). */
async function crashAt(fault: "after-intent" | "after-submit" | "in-creation-transaction" | "after-claim", args: string[]): Promise<void> {
  // The faults between the steps of creation exist only where the backend is apart from Countersign's database.
  const apart: Record<string, string> = fault === "after-intent" || fault === "after-submit" ? { APPROVAL_BACKEND: "apart" } : {};
  const w = startWorker("crash-worker.ts", args, { COUNTERSIGN_FAULT: fault, ...apart });
  const end = await w.exited;
  expect(end, `worker should die by SIGKILL at ${fault}; stderr:\n${w.stderr()}`).toEqual({ code: null, signal: "SIGKILL" });
}

/**
 * Two restarted processes reconciling at once: both have read the open intents and asked the backend about each
 * (they are held together at the backend's look-up) before either acts on what it found.
 */
async function reconcileTogether(now: Date) {
  const findOnce = inboxBackend.find.bind(inboxBackend);
  let arrived = 0;
  let release!: () => void;
  const together = new Promise<void>((r) => (release = r));
  const find = vi.spyOn(inboxBackend, "find").mockImplementation(async (key: string) => {
    if (++arrived === 2) release();
    await together;
    return findOnce(key);
  });
  try {
    return await Promise.all([reconcileIntents(now, 0), reconcileIntents(now, 0)]);
  } finally {
    find.mockRestore();
    expect(arrived).toBe(2);
  }
}

/** Invariants that hold after any crash and reconciliation: no double submission and no orphan. */
async function expectNoDoubleSubmissionNoOrphan(): Promise<void> {
  const intents = await db().submissionIntent.findMany();
  const requests = await db().approvalRequest.findMany();
  // At most one approval request per intent key, and every request belongs to a recorded intent.
  for (const i of intents) expect(requests.filter((r) => r.idempotencyKey === i.idempotencyKey).length).toBeLessThanOrEqual(1);
  for (const r of requests) expect(intents.map((i) => i.idempotencyKey)).toContain(r.idempotencyKey);
  // Every intent is bound (to a task holding its handle) or closed; none is left open.
  for (const i of intents) {
    expect(["bound", "cancelled"]).toContain(i.state);
    if (i.state === "bound") {
      const task = await db().task.findUnique({ where: { id: i.taskId } });
      expect(task, `bound intent ${i.id} has a task`).not.toBeNull();
      expect(requests.find((r) => r.id === i.handle)?.idempotencyKey).toBe(i.idempotencyKey);
    } else {
      // A closed intent reached the backend never, or only to have its request cancelled.
      for (const r of requests.filter((x) => x.idempotencyKey === i.idempotencyKey)) expect(r.status).toBe("cancelled");
    }
  }
  // Every backend request has its task, and no request is left pending for a task that is not waiting on it.
  for (const r of requests) {
    const task = await db().task.findUnique({ where: { id: r.taskId } });
    expect(task, `request ${r.id} has a task`).not.toBeNull();
    if (r.status === "pending") expect({ status: task!.status, handle: task!.handle }).toEqual({ status: "working", handle: r.id });
  }
  // Every dedup slot points at a live task.
  for (const s of await db().dedupSlot.findMany()) {
    const task = await db().task.findUnique({ where: { id: s.taskId } });
    expect(task?.status).toBe("working");
  }
}

describe("crash-consistent creation", () => {
  it("with the built-in backend, SIGKILL inside the one creation transaction leaves nothing: no intent, request, task, dedup slot, audit event or history record; a retry opens one request", async () => {
    // A production deploy: gated, and no history window reads it, so its record is written in the same transaction.
    const DEPLOY = { service: "checkout-api", environment: "production", version: "8.1.0" };
    const before = { audit: await db().auditEvent.count(), records: await db().callRecord.count() };
    await crashAt("in-creation-transaction", ["call", "ops-bot", "deploy_service", JSON.stringify(DEPLOY), T0.toISOString()]);
    expect(await db().submissionIntent.count()).toBe(0);
    expect(await db().approvalRequest.count()).toBe(0);
    expect(await db().task.count()).toBe(0);
    expect(await db().dedupSlot.count()).toBe(0);
    expect(await db().auditEvent.count()).toBe(before.audit);
    expect(await db().callRecord.count()).toBe(before.records);
    expect(await verifyAuditChain()).toMatchObject({ ok: true });
    // Nothing for reconciliation to repair, and the same call again submits once, end to end.
    expect(await reconcileIntents(at(SEC), 0)).toEqual({ recovered: 0, closed: 0 });
    const out = await callTool(await principal("ops-bot"), "deploy_service", DEPLOY, { tasks: true }, at(2 * SEC));
    expect(out.kind).toBe("task");
    expect(await db().approvalRequest.count()).toBe(1);
    expect(await db().submissionIntent.findFirstOrThrow()).toMatchObject({ state: "bound" });
    expect(await db().callRecord.count()).toBe(before.records + 1);
    await expectNoDoubleSubmissionNoOrphan();
    expect(await db().deployment.count()).toBe(0);
  });

  it("SIGKILL after writing the intent and before submitting: reconciliation closes the intent, nothing was submitted, a retry opens one fresh request", async () => {
    await crashAt("after-intent", ["call", "support-bot", "issue_refund", JSON.stringify(REFUND), T0.toISOString()]);
    const [intent] = await db().submissionIntent.findMany();
    expect(intent).toMatchObject({ state: "open", generation: 1 });
    expect(await db().approvalRequest.count()).toBe(0);
    expect(await db().task.count()).toBe(0);
    expect(await db().dedupSlot.count()).toBe(1);

    // Before reconciliation an identical retry sees the in-progress intent and does not submit a second request.
    const agent = await principal();
    expect(await callTool(agent, "issue_refund", REFUND, { tasks: true }, at(SEC))).toEqual({
      kind: "result",
      outcome: { isError: true, text: new SubmissionInProgress().message },
    });
    expect(await db().approvalRequest.count()).toBe(0);

    // "After restart". The default minimum age leaves an in-flight creation of another process alone.
    expect(await reconcileIntents(at(2 * SEC))).toEqual({ recovered: 0, closed: 0 });
    expect(await db().callRecord.findMany({ where: { taskId: intent.taskId }, select: { status: true } })).toEqual([{ status: "pending" }]);
    // Two restarted processes reconcile at once; it is closed once.
    const both = await reconcileTogether(at(2 * SEC));
    expect(both.map((r) => r.recovered)).toEqual([0, 0]);
    expect(await db().submissionIntent.findUniqueOrThrow({ where: { id: intent.id } })).toMatchObject({ state: "cancelled", handle: null });
    expect(await db().dedupSlot.count()).toBe(0);
    expect(await db().auditEvent.count({ where: { type: "intent.closed", taskId: intent.taskId } })).toBe(1);
    // The call never became a task: its history record stops counting against the agent's windows.
    expect(await db().callRecord.findMany({ where: { taskId: intent.taskId }, select: { status: true } })).toEqual([{ status: "void" }]);
    // Reconciling again changes nothing.
    expect(await reconcileIntents(at(3 * SEC), 0)).toEqual({ recovered: 0, closed: 0 });
    await expectNoDoubleSubmissionNoOrphan();

    // The retry is a fresh intent: one new request under a new key, and it works end to end.
    const out = await callTool(agent, "issue_refund", REFUND, { tasks: true }, at(4 * SEC));
    expect(out.kind).toBe("task");
    if (out.kind !== "task") return;
    expect(out.task.taskId).not.toBe(intent.taskId);
    const requests = await db().approvalRequest.findMany();
    expect(requests).toHaveLength(1);
    expect(requests[0].idempotencyKey).not.toBe(intent.idempotencyKey);
    await expectNoDoubleSubmissionNoOrphan();
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });

  it("SIGKILL after submitting and before creating the task: reconciliation recovers the handle under its key, and a retry of the same call dedups to the recovered task", async () => {
    await crashAt("after-submit", ["call", "support-bot", "issue_refund", JSON.stringify(REFUND), T0.toISOString()]);
    const [intent] = await db().submissionIntent.findMany();
    expect(intent).toMatchObject({ state: "open", generation: 1 });
    const [request] = await db().approvalRequest.findMany();
    expect(request).toMatchObject({ idempotencyKey: intent.idempotencyKey, taskId: intent.taskId, status: "pending" });
    expect(await db().task.count()).toBe(0);

    // Two restarted processes find the request at once: the task is created once, and neither fails.
    expect(await reconcileTogether(at(SEC))).toEqual([{ recovered: 1, closed: 0 }, { recovered: 1, closed: 0 }]);
    expect(await db().task.count()).toBe(1);
    expect(await auditCount(intent.taskId, "task.created")).toBe(1);
    expect(await reconcileIntents(at(2 * SEC), 0)).toEqual({ recovered: 0, closed: 0 });
    const task = await taskRow(intent.taskId);
    expect(task).toMatchObject({ status: "working", phase: "awaiting_approval", handle: request.id, generation: 1 });
    // The task is as creation would have made it: created at the intent's time, deadline from the rule.
    expect(task.createdAt).toEqual(T0);
    expect(task.requestDeadline).toEqual(at(24 * HOUR));
    expect(await db().submissionIntent.findUniqueOrThrow({ where: { id: intent.id } })).toMatchObject({ state: "bound", handle: request.id });
    expect(await db().approvalRequest.count()).toBe(1);
    await expectNoDoubleSubmissionNoOrphan();

    // The same call again is recognized as a retry of the recovered task; still one request.
    const agent = await principal();
    const again = await callTool(agent, "issue_refund", REFUND, { tasks: true }, at(3 * SEC));
    expect(again.kind === "task" && again.task.taskId).toBe(intent.taskId);
    expect(await db().approvalRequest.count()).toBe(1);

    // A re-submission under the recorded key is recognized by the backend as the same request.
    expect(await inboxBackend.submit(intent.idempotencyKey, intent.body as never, at(4 * SEC))).toEqual({ handle: request.id, deadline: request.deadline });
    expect(await db().approvalRequest.count()).toBe(1);

    // The recovered task is live: approval executes it once.
    const r = await decide({ requestId: request.id, reviewerId: await userId(LEADS[0]), decision: "approve" }, at(MIN));
    expect(r).toMatchObject({ ok: true, taskStatus: "completed", disposition: "approved-executed" });
    expect(await refundsFor("O-2289")).toHaveLength(1);
  });

  it("a sweep also reconciles: the after-submit orphan is recovered by the periodic sweeper once it is old enough", async () => {
    await crashAt("after-submit", ["call", "support-bot", "issue_refund", JSON.stringify(REFUND), T0.toISOString()]);
    expect(await sweep(at(10 * SEC))).toMatchObject({ recovered: 0, closed: 0 });
    expect(await sweep(at(31 * SEC))).toMatchObject({ recovered: 1, closed: 0 });
    await expectNoDoubleSubmissionNoOrphan();
    expect(await db().task.count()).toBe(1);
  });

  it("a chained request whose submission was interrupted is re-submitted under the same key on reconciliation", async () => {
    // Policy now wants two leads: re-evaluation says "request"; the backend is unreachable when the server submits.
    const { taskId, intent: gen2 } = await interruptedChainedSubmission("O-2289");
    expect(await taskRow(taskId)).toMatchObject({ status: "working", phase: "submitting", generation: 2, handle: null });

    expect(await reconcileIntents(at(3 * SEC), 0)).toEqual({ recovered: 1, closed: 0 });
    expect(await reconcileIntents(at(4 * SEC), 0)).toEqual({ recovered: 0, closed: 0 });
    const t = await taskRow(taskId);
    const req2 = await db().approvalRequest.findUniqueOrThrow({ where: { idempotencyKey: gen2.idempotencyKey } });
    expect(t).toMatchObject({ status: "working", phase: "awaiting_approval", generation: 2, handle: req2.id });
    expect(req2.approvalsRequired).toBe(2);
    expect(await db().approvalRequest.count()).toBe(2);
    await expectNoDoubleSubmissionNoOrphan();
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });

  it("no orphan: a chained request re-submitted late by reconciliation never outlives its task's pending deadline", async () => {
    const { taskId } = await interruptedChainedSubmission("O-2289");
    // The server restarts two hours later and re-submits generation 2 under its recorded key.
    expect(await reconcileIntents(at(2 * HOUR), 0)).toEqual({ recovered: 1, closed: 0 });
    const t = await taskRow(taskId);
    const req2 = await db().approvalRequest.findUniqueOrThrow({ where: { id: t.handle! } });
    // One pending deadline: what the task waits for is what the backend holds open, and retention covers it.
    expect(req2.deadline).toEqual(t.requestDeadline);
    expect(t.retainUntil!.getTime()).toBeGreaterThanOrEqual(req2.deadline.getTime() + 7 * 24 * HOUR);
    // At the task's deadline nothing may stay pending for reviewers.
    await sweep(t.requestDeadline, { intentMinAgeMs: 0 });
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    await expectNoDoubleSubmissionNoOrphan();
  });

  it("no orphan: a chained intent whose task was cancelled before reconciliation does not leave a pending request in the inbox", async () => {
    const agent = await principal();
    const { taskId, intent: chained } = await interruptedChainedSubmission("O-2289");
    // The agent gives up while the task waits in "submitting": the cancel wins (a pre-claim phase).
    expect(await cancelTask(agent, taskId, at(3 * SEC))).toMatchObject({ ok: true, task: { status: "cancelled" } });
    await reconcileIntents(at(4 * SEC), 0);
    expect(await taskRow(taskId)).toMatchObject({ status: "cancelled" });
    // The task no longer waits for that generation, so nothing is submitted for it (not even to be cancelled).
    expect(await db().approvalRequest.count({ where: { idempotencyKey: chained.idempotencyKey } })).toBe(0);
    expect(await db().submissionIntent.findUniqueOrThrow({ where: { id: chained.id } })).toMatchObject({ state: "cancelled", handle: null });
    // Nothing may be left open for reviewers to act on: the intent is closed and no request is pending for it.
    await expectNoDoubleSubmissionNoOrphan();
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });

  it("no orphan: a chained request the backend accepted just before the connection was lost, for a task cancelled since, is cancelled on reconciliation", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(SEC));
    await db().policyRule.updateMany({ where: { ruleKey: "refund-over-limit" }, data: { approvalsRequired: 2 } });
    // The backend records the chained request, then the answer is lost: the handle never reaches the task.
    const submitOnce = inboxBackend.submit.bind(inboxBackend);
    const submit = vi.spyOn(inboxBackend, "submit").mockImplementationOnce(async (...a: Parameters<typeof inboxBackend.submit>) => {
      await submitOnce(...a);
      throw new Error("connection lost after submitting");
    });
    await expect(advanceTask(taskId, at(2 * SEC))).rejects.toThrow("connection lost after submitting");
    submit.mockRestore();
    const chained = await db().submissionIntent.findFirstOrThrow({ where: { taskId, generation: 2 } });
    expect(chained.state).toBe("open");
    expect(await db().approvalRequest.findFirstOrThrow({ where: { idempotencyKey: chained.idempotencyKey } })).toMatchObject({ status: "pending" });
    expect(await cancelTask(agent, taskId, at(3 * SEC))).toMatchObject({ ok: true, task: { status: "cancelled" } });

    await reconcileIntents(at(4 * SEC), 0);
    // The request made under the dead generation is withdrawn from reviewers, and the intent closed with its handle.
    const request = await db().approvalRequest.findFirstOrThrow({ where: { idempotencyKey: chained.idempotencyKey } });
    expect(request.status).toBe("cancelled");
    expect(await db().submissionIntent.findUniqueOrThrow({ where: { id: chained.id } })).toMatchObject({ state: "cancelled", handle: request.id });
    await expectNoDoubleSubmissionNoOrphan();
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });
});

describe("execution is fenced so a crash cannot double-execute a side effect", () => {
  it("SIGKILL after claiming and before storing the result: the sweeper completes it outcome-unknown and the tool is never re-invoked", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(SEC));
    const claimAt = at(2 * SEC);
    await crashAt("after-claim", ["advance", taskId, claimAt.toISOString()]);

    const claimed = await taskRow(taskId);
    expect(claimed).toMatchObject({ status: "working", phase: "claimed", claimedAt: claimAt });
    expect(claimed.executionDeadline).toEqual(at(EXECUTION_DEADLINE_MS, claimAt));
    expect(await auditCount(taskId, "execution.claimed")).toBe(1);
    const refundsBefore = (await refundsFor("O-2289")).length;
    expect(refundsBefore).toBe(0);
    // An execution-claimed task is retained at least through its execution deadline plus resultRetention.
    expect(claimed.retainUntil!.getTime()).toBeGreaterThanOrEqual(claimed.executionDeadline!.getTime() + 7 * 24 * HOUR);

    // "After restart", before the execution deadline: polls, advances, sweeps and a second reviewer change nothing.
    const before = at(EXECUTION_DEADLINE_MS - 1, claimAt);
    await advanceTask(taskId, before);
    expect((await sweep(before, { intentMinAgeMs: 0 })).advanced).toBe(0);
    expect((await getTask(agent, taskId, before))?.status).toBe("working");
    const second = await decide({ requestId: await requestIdOf(taskId), reviewerId: await userId(LEADS[1]), decision: "approve" }, before);
    expect(second).toEqual({ ok: false, error: "This request is already approved." });
    expect(await cancelTask(agent, taskId, before)).toMatchObject({ ok: true, task: { status: "working" } });
    expect(await taskRow(taskId)).toMatchObject({ status: "working", phase: "claimed" });

    // At the execution deadline the sweeper terminalizes it as outcome-unknown.
    const deadline = claimed.executionDeadline!;
    expect((await sweep(deadline, { intentMinAgeMs: 0 })).advanced).toBe(1);
    const done = await taskRow(taskId);
    expect(done).toMatchObject({ status: "completed", disposition: "outcome-unknown", terminalizedAt: deadline });
    expectBodyAgrees(done.result as never);
    expect(await auditCount(taskId, "execution.outcome-unknown")).toBe(1);
    expect(done.retainUntil!.getTime()).toBeGreaterThanOrEqual(deadline.getTime() + 7 * 24 * HOUR);

    // Never re-invoked, whatever happens next.
    await advanceTask(taskId, at(HOUR, deadline));
    await sweep(at(2 * HOUR, deadline), { intentMinAgeMs: 0 });
    expect((await refundsFor("O-2289")).length).toBe(refundsBefore);
    expect(await sideEffects(taskId)).toBe(0);
    expect(await auditCount(taskId, "execution.claimed")).toBe(1);
    expect(await taskRow(taskId)).toEqual(done);
  });
});
