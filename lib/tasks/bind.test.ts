/**
 * Binding a recorded intent to its task (bindTask), as creation does after submitting and reconciliation does
 * after a crash: exactly once, whoever comes first, with the task's creation in the trail; and reconciliation
 * leaves an intent younger than its minimum age alone (another process may still be creating that task), and
 * re-submits a chained generation only while its task still waits in phase "submitting" for that generation.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { principal, resetDb } from "../../tests/support/db";
import { MIN, SEC, T0, at, freshOrder } from "../../tests/support/proof";
import { bindBackendApart, chainedSubmissionAnswerLost, interruptedChainedSubmission, loseAnswerAfterSubmit } from "../../tests/support/submissions";
import { bindApprovalBackend, inboxBackend } from "../approvals/inbox-backend";
import { db } from "../db/client";
import { bindTask } from "./create";
import { callTool } from "./call";
import { reconcileIntents } from "./reconcile";

beforeEach(resetDb);
afterEach(() => vi.restoreAllMocks());

/** A call whose request reached the backend but whose creator never heard back: an open intent, no task. */
async function orphanedIntent() {
  const order = await freshOrder("O-7301", 30_000);
  const agent = await principal();
  loseAnswerAfterSubmit();
  await expect(callTool(agent, "issue_refund", { order_id: order }, { tasks: true }, T0)).rejects.toThrow("connection lost");
  const intent = await db().submissionIntent.findFirstOrThrow({ where: { state: "open" } });
  const found = await inboxBackend.find(intent.idempotencyKey);
  expect(found).not.toBeNull();
  expect(await db().task.count()).toBe(0);
  return { intent, found: found!, agent };
}

describe("bindTask", () => {
  it("creates the task once: a second bind of the same intent returns null and creates nothing", async () => {
    const { intent, found, agent } = await orphanedIntent();
    const task = await bindTask(intent.idempotencyKey, found, at(MIN));
    expect(task).toMatchObject({ id: intent.taskId, status: "working", phase: "awaiting_approval", handle: found.handle, generation: 1 });
    expect(await bindTask(intent.idempotencyKey, found, at(2 * MIN))).toBeNull();
    expect(await db().task.count()).toBe(1);
    expect(await db().submissionIntent.findUniqueOrThrow({ where: { id: intent.id } })).toMatchObject({ state: "bound", handle: found.handle });
    // The task's creation is in the trail once: who asked, for which request, what was called under which rule.
    const events = await db().auditEvent.findMany({ where: { taskId: intent.taskId, type: "task.created" } });
    expect(events.map((e) => ({ actor: e.actor, requestId: e.requestId, at: e.at }))).toEqual([{ actor: `agent:${agent.agentId}`, requestId: found.handle, at: at(MIN) }]);
    expect(events[0].data).toMatchObject({ tool: "issue_refund", argumentsDigest: task!.argumentsDigest, generation: 1, rule: { ruleKey: task!.policyRuleKey } });
  });

  it("a creator whose intent another process bound first answers with that task", async () => {
    const order = await freshOrder("O-7302", 30_000);
    const agent = await principal();
    // The request reaches the backend; before its creator hears back, reconciliation (another process) binds it.
    let submitted!: () => void;
    const reached = new Promise<void>((r) => (submitted = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const real = inboxBackend.submit.bind(inboxBackend);
    vi.spyOn(bindBackendApart(), "submit").mockImplementationOnce(async (key, body, now) => {
      const answer = await real(key, body, now);
      submitted();
      await gate;
      return answer;
    });
    const call = callTool(agent, "issue_refund", { order_id: order }, { tasks: true }, T0);
    await reached;
    expect(await reconcileIntents(at(MIN), 0)).toEqual({ recovered: 1, closed: 0 });
    release();
    const outcome = await call;
    const task = await db().task.findFirstOrThrow();
    expect(outcome).toMatchObject({ kind: "task", task: { taskId: task.id, status: "working" } });
    expect(await db().task.count()).toBe(1);
  });

  it("never binds an intent reconciliation closed", async () => {
    const { intent, found } = await orphanedIntent();
    await db().submissionIntent.update({ where: { id: intent.id }, data: { state: "cancelled" } });
    expect(await bindTask(intent.idempotencyKey, found, at(MIN))).toBeNull();
    expect(await db().task.count()).toBe(0);
  });
});

describe("reconcileIntents", () => {
  it("leaves an intent younger than the minimum age alone, and recovers it once it is old enough", async () => {
    const { intent } = await orphanedIntent();
    const created = intent.createdAt.getTime();
    expect(await reconcileIntents(new Date(created + 29 * SEC), 30 * SEC)).toEqual({ recovered: 0, closed: 0 });
    expect(await db().submissionIntent.findUniqueOrThrow({ where: { id: intent.id } })).toMatchObject({ state: "open" });
    expect(await reconcileIntents(new Date(created + 30 * SEC), 30 * SEC)).toEqual({ recovered: 1, closed: 0 });
    expect(await db().task.findUniqueOrThrow({ where: { id: intent.taskId } })).toMatchObject({ status: "working", phase: "awaiting_approval" });
  });

  it("closes only the intent that never reached the backend: its slot and record go, a younger call's stay", async () => {
    const agent = await principal();
    const neverSent = () => vi.spyOn(bindBackendApart(), "submit").mockRejectedValueOnce(new Error("backend unreachable"));
    // Two calls whose requests never reached the backend, the second a minute after the first.
    neverSent();
    await expect(callTool(agent, "issue_refund", { order_id: await freshOrder("O-7303", 30_000) }, { tasks: true }, T0)).rejects.toThrow("backend unreachable");
    neverSent();
    await expect(callTool(agent, "issue_refund", { order_id: await freshOrder("O-7304", 30_000) }, { tasks: true }, at(MIN))).rejects.toThrow("backend unreachable");
    const [old, young] = await db().submissionIntent.findMany({ orderBy: { createdAt: "asc" } });
    expect([old.state, young.state]).toEqual(["open", "open"]);
    const records = async (taskId: string) => (await db().callRecord.findMany({ where: { taskId }, select: { status: true } })).map((r) => r.status);
    expect([await records(old.taskId), await records(young.taskId)]).toEqual([["pending"], ["pending"]]);

    // Reconciled when only the first is older than the minimum age.
    expect(await reconcileIntents(at(MIN + 30 * SEC), MIN)).toEqual({ recovered: 0, closed: 1 });
    expect((await db().submissionIntent.findUniqueOrThrow({ where: { id: old.id } })).state).toBe("cancelled");
    expect((await db().submissionIntent.findUniqueOrThrow({ where: { id: young.id } })).state).toBe("open");
    expect((await db().dedupSlot.findMany({ select: { taskId: true } })).map((d) => d.taskId)).toEqual([young.taskId]);
    expect([await records(old.taskId), await records(young.taskId)]).toEqual([["void"], ["pending"]]);
    const closed = await db().auditEvent.findMany({ where: { type: "intent.closed" } });
    expect(closed.map((e) => ({ actor: e.actor, taskId: e.taskId, data: e.data, at: e.at }))).toEqual([
      { actor: "system", taskId: old.taskId, data: { reason: "never reached the backend" }, at: at(MIN + 30 * SEC) },
    ]);
    expect(await db().task.count()).toBe(0);
  });
});

describe("reconcileIntents, a chained generation", () => {
  const moved: [string, Record<string, unknown>][] = [
    ["its task moved on to another phase of the same generation", { phase: "awaiting_approval" }],
    ["its task moved on to a later generation", { generation: 3 }],
  ];
  it.each(moved)("is closed, not submitted, when %s", async (_, change) => {
    const { taskId, intent } = await interruptedChainedSubmission("O-2289");
    await db().task.update({ where: { id: taskId }, data: change });
    expect(await reconcileIntents(at(3 * SEC), 0)).toEqual({ recovered: 0, closed: 1 });
    expect(await db().approvalRequest.count({ where: { idempotencyKey: intent.idempotencyKey } })).toBe(0);
    expect(await db().submissionIntent.findUniqueOrThrow({ where: { id: intent.id } })).toMatchObject({ state: "cancelled", handle: null });
    const closed = await db().auditEvent.findMany({ where: { taskId, type: "intent.closed" } });
    expect(closed.map((e) => ({ actor: e.actor, requestId: e.requestId, data: e.data }))).toEqual([
      { actor: "system", requestId: null, data: { reason: "task no longer waits for this generation", generation: 2 } },
    ]);
    // Reconciling again finds nothing open and writes nothing more.
    expect(await reconcileIntents(at(4 * SEC), 0)).toEqual({ recovered: 0, closed: 0 });
    expect(await db().auditEvent.count({ where: { taskId, type: "intent.closed" } })).toBe(1);
  });

  it("whose request reached the backend is cancelled there and closed with its handle when its task moved on", async () => {
    const { taskId, intent } = await chainedSubmissionAnswerLost(await freshOrder("O-7305", 30_000));
    const request = await db().approvalRequest.findFirstOrThrow({ where: { idempotencyKey: intent.idempotencyKey } });
    expect(request.status).toBe("pending");
    await db().task.update({ where: { id: taskId }, data: { generation: 3 } });

    expect(await reconcileIntents(at(3 * SEC), 0)).toEqual({ recovered: 0, closed: 1 });
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: request.id } })).status).toBe("cancelled");
    expect(await db().submissionIntent.findUniqueOrThrow({ where: { id: intent.id } })).toMatchObject({ state: "cancelled", handle: request.id });
    const closed = await db().auditEvent.findMany({ where: { taskId, type: "intent.closed" } });
    expect(closed.map((e) => ({ actor: e.actor, requestId: e.requestId, data: e.data }))).toEqual([
      { actor: "system", requestId: request.id, data: { reason: "task no longer waits for this generation", generation: 2 } },
    ]);
  });

  it("whose backend cannot cancel is still closed, its request left to the backend", async () => {
    const apart = bindBackendApart();
    const { taskId, intent } = await chainedSubmissionAnswerLost(await freshOrder("O-7306", 30_000), apart);
    await db().task.update({ where: { id: taskId }, data: { generation: 3 } });
    bindApprovalBackend({ ...apart, cancel: undefined });
    expect(await reconcileIntents(at(3 * SEC), 0)).toEqual({ recovered: 0, closed: 1 });
    expect((await db().submissionIntent.findUniqueOrThrow({ where: { id: intent.id } })).state).toBe("cancelled");
    expect((await db().approvalRequest.findFirstOrThrow({ where: { idempotencyKey: intent.idempotencyKey } })).status).toBe("pending");
  });

  it("is submitted under its recorded key while its task waits for it", async () => {
    const { taskId, intent } = await interruptedChainedSubmission("O-2289");
    expect(await reconcileIntents(at(3 * SEC), 0)).toEqual({ recovered: 1, closed: 0 });
    const request = await db().approvalRequest.findFirstOrThrow({ where: { idempotencyKey: intent.idempotencyKey } });
    expect(await db().task.findUniqueOrThrow({ where: { id: taskId } })).toMatchObject({ phase: "awaiting_approval", generation: 2, handle: request.id });
  });
});
