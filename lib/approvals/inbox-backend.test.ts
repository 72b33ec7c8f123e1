/**
 * Submitting to the built-in backend is idempotent by key: a repeat under a key returns the request already made
 * for it, a different body under the same key is refused, and so is a concurrent submit that loses the insert.
 */
import { afterEach, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { db } from "../db/client";
import { IdempotencyConflict, type SubmissionBody } from "./backend";
import { inboxBackend } from "./inbox-backend";
import { resetDb } from "../../tests/support/db";
import { SEC, T0, at, gatedRefund } from "../../tests/support/proof";

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
    await db().user.updateMany({ where: { id: { in: others.slice(req.approvalsRequired - 1).map((u) => u.id) } }, data: { groups: [] } });
    expect(await inboxBackend.status(handle, at(SEC))).toEqual({
      state: "pending",
      deadline: req.deadline,
      note: "Not enough eligible reviewers exist to approve this request; unless reviewers are added it will expire at its deadline.",
    });
  });
});
