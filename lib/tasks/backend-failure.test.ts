/**
 * An approval backend's failure of a pending request (SEP "Lifecycle and task status"): recorded once, on a pending
 * request only, with a bounded note; the task then ends `failed` with a JSON-RPC error and the tool never runs.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { requestIdOf, resetDb, userId } from "../../tests/support/db";
import { LEADS, MIN, at, auditCount, gatedRefund, sideEffects, taskRow } from "../../tests/support/proof";
import { db } from "../db/client";
import { reviewRequest } from "../approvals/review";
import { advanceTask } from "../execution/advance";
import { recordBackendFailure } from "./backend-failure";

beforeEach(resetDb);

describe("recordBackendFailure", () => {
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
