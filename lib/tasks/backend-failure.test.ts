/**
 * An approval backend's failure of a pending request (SEP "Lifecycle and task status"): recorded once, on a pending
 * request only, with a bounded note; the task then ends `failed` with a JSON-RPC error and the tool never runs.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { requestIdOf, resetDb, userId } from "../../tests/support/db";
import { LEADS, MIN, at, auditCount, emailOutboxOn, gatedRefund, sideEffects, taskRow } from "../../tests/support/proof";
import { db } from "../db/client";
import { reviewRequest } from "../approvals/review";
import { advanceTask } from "../execution/advance";
import { recordBackendFailure } from "./backend-failure";

beforeEach(resetDb);
afterEach(() => vi.unstubAllEnvs());

describe("recordBackendFailure", () => {
  it("tells those the request's outcome concerns, as a decision would (email on)", async () => {
    emailOutboxOn();
    const taskId = await gatedRefund("O-2289");
    const requestId = await requestIdOf(taskId);
    expect(await db().notification.count({ where: { requestId, kind: "outcome" } })).toBe(0);
    expect(await recordBackendFailure(requestId, "backend lost it", at(MIN))).toBe(true);
    const told = await db().notification.findMany({ where: { requestId, kind: "outcome" }, select: { channel: true, status: true } });
    expect(told.length).toBeGreaterThan(0);
    expect(told.every((n) => n.channel === "email" && n.status === "pending")).toBe(true);
  });

  it("fails a pending request once, with its note cut to 200 characters, and the task fails without running", async () => {
    const taskId = await gatedRefund("O-2289");
    const requestId = await requestIdOf(taskId);
    expect(await recordBackendFailure(requestId, `backend lost it ${"x".repeat(300)}`, at(MIN))).toBe(true);
    const req = await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    expect(req.status).toBe("failed");
    expect(req.statusNote).toHaveLength(200);
    expect(req.statusNote!.startsWith("backend lost it ")).toBe(true);
    expect(req.decidedAt).toEqual(at(MIN));
    const [event] = await db().auditEvent.findMany({ where: { requestId, type: "request.failed" } });
    expect(event).toMatchObject({ actor: "backend", taskId });
    expect((event.data as { note: string }).note).toHaveLength(200);

    // Once only: a second report changes nothing.
    expect(await recordBackendFailure(requestId, "again", at(2 * MIN))).toBe(false);
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).toMatchObject({ statusNote: req.statusNote, decidedAt: at(MIN) });
    expect(await auditCount(taskId, "request.failed")).toBe(1);

    await advanceTask(taskId, at(3 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "failed", error: { code: -32603 } });
    expect(await sideEffects(taskId)).toBe(0);
  });

  it("leaves a request that was already decided as it is", async () => {
    const taskId = await gatedRefund("O-2289");
    const requestId = await requestIdOf(taskId);
    expect((await reviewRequest({ requestId, reviewerId: await userId(LEADS[0]), decision: "deny", comment: "No" }, at(MIN))).ok).toBe(true);
    expect(await recordBackendFailure(requestId, "late failure", at(2 * MIN))).toBe(false);
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).toMatchObject({ status: "denied", statusNote: null });
    expect(await auditCount(taskId, "request.failed")).toBe(0);
  });
});
