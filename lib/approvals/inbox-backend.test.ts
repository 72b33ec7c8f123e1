/**
 * Submitting to the built-in backend is idempotent by key: a repeat under a key returns the request already made
 * for it, a different body under the same key is refused, and so is a concurrent submit that loses the insert; any
 * other failure of the insert is let through. What a submission records (the request, its audit event and webhook),
 * finding a request by its key, a request's status (unknown, pending, expired at its deadline), cancelling one, and
 * which backend the deployment is bound to.
 */
import { afterEach, beforeEach, describe, expect, inject, it, onTestFinished, vi } from "vitest";
import { db } from "../db/client";
import { IdempotencyConflict, type ApprovalBackend, type SubmissionBody } from "./backend";
import { approvalBackend, bindApprovalBackend, inboxBackend } from "./inbox-backend";
import { createWebhook } from "../webhooks/admin";
import { resetDb, userId } from "../../tests/support/db";
import { SEC, T0, at, gatedRefund } from "../../tests/support/proof";
import { expectOtherFailuresLetThrough } from "../../tests/support/transaction-faults";

beforeEach(resetDb);
afterEach(() => {
  vi.restoreAllMocks();
});

/** The key and body a gated refund submitted under, and the request it made. */
async function submitted(): Promise<{ key: string; body: SubmissionBody; handle: string }> {
  const taskId = await gatedRefund("O-4410");
  const intent = await db().submissionIntent.findFirstOrThrow({ where: { taskId } });
  return { key: intent.idempotencyKey, body: intent.body as unknown as SubmissionBody, handle: intent.handle! };
}

describe(`submission idempotency (${inject("databaseKind")})`, () => {
  it("a repeat under a key returns its request; the same key with another body is refused; nothing is added", async () => {
    const { key, body, handle } = await submitted();
    const request = await db().approvalRequest.findUniqueOrThrow({ where: { id: handle } });
    expect(await inboxBackend.submit(key, body, at(SEC))).toEqual({ handle, deadline: request.deadline });
    await expect(inboxBackend.submit(key, { ...body, summary: `${body.summary} (changed)` }, at(SEC))).rejects.toBeInstanceOf(IdempotencyConflict);
    await expect(inboxBackend.submit(key, { ...body, summary: "other" }, at(SEC))).rejects.toThrow(/^A different request body was already submitted under this idempotency key\.$/);
    expect(await db().approvalRequest.count()).toBe(1);
    expect(await db().auditEvent.count({ where: { type: "request.created" } })).toBe(1);
  });

  it("a submit that loses the insert to a concurrent one under its key is the same repeat, or refused with another body", async () => {
    const { key, body, handle } = await submitted();
    const request = await db().approvalRequest.findUniqueOrThrow({ where: { id: handle } });
    // The concurrent winner is not visible yet when the loser looks, so the loser's insert meets the unique key.
    const look = vi.spyOn(db().approvalRequest, "findUnique");
    look.mockResolvedValueOnce(null);
    expect(await inboxBackend.submit(key, body, at(SEC))).toEqual({ handle, deadline: request.deadline });
    look.mockResolvedValueOnce(null);
    await expect(inboxBackend.submit(key, { ...body, summary: `${body.summary} (changed)` }, at(SEC))).rejects.toBeInstanceOf(IdempotencyConflict);
    expect(await db().approvalRequest.count()).toBe(1);
    expect(await db().auditEvent.count({ where: { type: "request.created" } })).toBe(1);
  });

  it("concurrent submits of one new key make one request and all answer with it", async () => {
    const { body } = await submitted();
    const key = "idem-test-concurrent";
    const next = { ...body, generation: body.generation + 1 };
    const answers = await Promise.all(Array.from({ length: 4 }, () => inboxBackend.submit(key, next, T0)));
    const made = await db().approvalRequest.findUniqueOrThrow({ where: { idempotencyKey: key } });
    expect(answers).toEqual(Array.from({ length: 4 }, () => ({ handle: made.id, deadline: made.deadline })));
    expect(await db().approvalRequest.count({ where: { idempotencyKey: key } })).toBe(1);
  });

  it("a submit whose insert fails for any reason but its key being taken fails with that error, and nothing is added", async () => {
    const { body } = await submitted();
    const next = { ...body, generation: body.generation + 1 };
    await expectOtherFailuresLetThrough(() => inboxBackend.submit("idem-test-failing", next, at(SEC)));
    expect(await db().approvalRequest.count({ where: { idempotencyKey: "idem-test-failing" } })).toBe(0);
  });
});

describe(`what a submission records (${inject("databaseKind")})`, () => {
  it("the request is audited as request.created in its agent's name and announced to webhooks with its tool, summary, group and quorum", async () => {
    await createWebhook({ url: "https://hooks.example/in", events: ["request.created"] }, await userId("admin@countersign.test"), T0);
    const { body, handle } = await submitted();
    const req = await db().approvalRequest.findUniqueOrThrow({ where: { id: handle } });
    const event = await db().auditEvent.findFirstOrThrow({ where: { type: "request.created", requestId: handle } });
    expect(event).toMatchObject({
      actor: `agent:${body.requester.agentId}`,
      taskId: body.taskId,
      data: { generation: body.generation, approverGroup: req.approverGroup, approvalsRequired: req.approvalsRequired },
    });
    const deliveries = await db().webhookDelivery.findMany({ where: { eventType: "request.created" }, select: { payload: true } });
    expect(deliveries.map((d) => d.payload)).toEqual([
      {
        type: "request.created",
        timestamp: T0.toISOString(),
        data: { taskId: body.taskId, requestId: handle, tool: body.tool, summary: body.summary, approverGroup: req.approverGroup, approvalsRequired: req.approvalsRequired },
      },
    ]);
  });

  it("a request requires a passkey only when its requirements say so, and not when they leave it unsaid", async () => {
    const { body } = await submitted();
    const { requirePasskey: _, ...unsaid } = body.requirements;
    const withPasskey = await inboxBackend.submit("idem-test-passkey", { ...body, generation: body.generation + 1, requirements: { ...unsaid, requirePasskey: true } }, at(SEC));
    const without = await inboxBackend.submit("idem-test-no-passkey", { ...body, generation: body.generation + 2, requirements: unsaid }, at(SEC));
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: withPasskey.handle } })).requirePasskey).toBe(true);
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: without.handle } })).requirePasskey).toBe(false);
  });

  it("a request is found by the key it was submitted under, with its deadline; a key never submitted finds nothing", async () => {
    const { key, handle } = await submitted();
    const request = await db().approvalRequest.findUniqueOrThrow({ where: { id: handle } });
    expect(await inboxBackend.find(key)).toEqual({ handle, deadline: request.deadline });
    expect(await inboxBackend.find("idem-test-never-submitted")).toBeNull();
  });
});

describe(`a pending request's status (${inject("databaseKind")})`, () => {
  it("warns when too few reviewers could approve it, counting every reviewer of its group but its requester", async () => {
    const { handle } = await submitted();
    const req = await db().approvalRequest.findUniqueOrThrow({ where: { id: handle } });
    const others = await db().user.findMany({ where: { id: { not: req.requesterUserId }, role: "reviewer", active: true, groups: { has: req.approverGroup } }, select: { id: true } });
    expect(others.length).toBeGreaterThanOrEqual(req.approvalsRequired);
    expect((await inboxBackend.status(handle, at(SEC))).note).toBeUndefined();
    // The requester becomes a reviewer of the group, and all but one fewer than needed of the others leave it.
    await db().user.update({ where: { id: req.requesterUserId }, data: { role: "reviewer", groups: [req.approverGroup] } });
    // Exactly as many as needed: enough, and no warning.
    await db().user.updateMany({ where: { id: { in: others.slice(req.approvalsRequired).map((u) => u.id) } }, data: { groups: [] } });
    expect((await inboxBackend.status(handle, at(SEC))).note).toBeUndefined();
    await db().user.updateMany({ where: { id: { in: others.slice(req.approvalsRequired - 1).map((u) => u.id) } }, data: { groups: [] } });
    expect(await inboxBackend.status(handle, at(SEC))).toEqual({
      state: "pending",
      deadline: req.deadline,
      note: "Not enough eligible reviewers exist to approve this request; unless reviewers are added it will expire at its deadline.",
    });
  });

  it("an unknown request is failed as of now, saying the backend does not know it", async () => {
    expect(await inboxBackend.status("no-such-request", at(SEC))).toEqual({ state: "failed", deadline: at(SEC), note: "The approval request is unknown to the backend." });
  });

  it("a pending request is still pending a moment before its deadline and expired at it, its row with it", async () => {
    const { handle } = await submitted();
    const { deadline } = await db().approvalRequest.findUniqueOrThrow({ where: { id: handle } });
    const justBefore = new Date(deadline.getTime() - 1);
    expect(await inboxBackend.status(handle, justBefore)).toMatchObject({ state: "pending", deadline });
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: handle } })).toMatchObject({ status: "pending", decidedAt: null });
    expect(await inboxBackend.status(handle, deadline)).toEqual({ state: "expired", deadline });
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: handle } })).toMatchObject({ status: "expired", decidedAt: deadline });
  });
});

describe(`cancelling a request (${inject("databaseKind")})`, () => {
  it("cancels a pending request once, audited in the system's name; a request no longer pending stays as it is", async () => {
    const { handle } = await submitted();
    const req = await db().approvalRequest.findUniqueOrThrow({ where: { id: handle } });
    await inboxBackend.cancel!(handle, at(SEC));
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: handle } })).toMatchObject({ status: "cancelled", decidedAt: at(SEC) });
    const cancelled = () => db().auditEvent.findMany({ where: { type: "request.cancelled" }, select: { actor: true, taskId: true, requestId: true, at: true } });
    expect(await cancelled()).toEqual([{ actor: "system", taskId: req.taskId, requestId: handle, at: at(SEC) }]);
    await inboxBackend.cancel!(handle, at(2 * SEC));
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: handle } })).toMatchObject({ status: "cancelled", decidedAt: at(SEC) });
    expect(await cancelled()).toHaveLength(1);
  });
});

describe(`the deployment's approval backend (${inject("databaseKind")})`, () => {
  it("is the built-in inbox until another is bound, that one while it is bound, and the inbox again once unbound", async () => {
    expect(approvalBackend()).toBe(inboxBackend);
    const elsewhere: ApprovalBackend = { ...inboxBackend, submitWithin: undefined };
    bindApprovalBackend(elsewhere);
    onTestFinished(() => bindApprovalBackend(null));
    expect(approvalBackend()).toBe(elsewhere);
    bindApprovalBackend(null);
    expect(approvalBackend()).toBe(inboxBackend);
  });
});
