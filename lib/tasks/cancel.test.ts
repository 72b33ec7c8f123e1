/**
 * tasks/cancel by the task's creator: a waiting task ends cancelled with its request withdrawn and one audit event
 * by the agent; another agent is told the task is unknown; a cancelled task cannot be cancelled again; a task whose
 * approval already ran completes as it did.
 */
import { beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { principal, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { LEADS, MIN, at, auditCount, gatedRefund, sideEffects, taskRow } from "../../tests/support/proof";
import { bindApprovalBackend, inboxBackend } from "../approvals/inbox-backend";
import { db } from "../db/client";
import { cancelTask } from "./cancel";
import { decide } from "./decide";

beforeEach(resetDb);

describe("cancelTask", () => {
  it("cancels a waiting task once, withdraws its request, and audits it as the agent's", async () => {
    const taskId = await gatedRefund("O-2289");
    const requestId = await requestIdOf(taskId);
    const agent = await principal();
    expect(await cancelTask(await principal("ops-bot"), taskId, at(MIN))).toEqual({ ok: false, reason: "not-found" });
    expect(await taskRow(taskId)).toMatchObject({ status: "working" });

    const r = await cancelTask(agent, taskId, at(MIN));
    expect(r).toMatchObject({ ok: true, task: { status: "cancelled", statusMessage: "Cancelled. The tool did not run." } });
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).status).toBe("cancelled");
    const events = await db().auditEvent.findMany({ where: { taskId, type: "task.cancelled" } });
    expect(events).toHaveLength(1);
    expect(events[0].actor).toBe(`agent:${agent.agentId}`);

    expect(await cancelTask(agent, taskId, at(2 * MIN))).toEqual({ ok: false, reason: "terminal" });
    expect(await auditCount(taskId, "task.cancelled")).toBe(1);
    expect(await sideEffects(taskId)).toBe(0);
  });

  it("leaves a task whose approved call already ran as it completed", async () => {
    const taskId = await gatedRefund("O-2289");
    await decide({ requestId: await requestIdOf(taskId), reviewerId: await userId(LEADS[0]), decision: "approve" }, at(MIN));
    expect(await cancelTask(await principal(), taskId, at(2 * MIN))).toEqual({ ok: false, reason: "terminal" });
    expect(await taskRow(taskId)).toMatchObject({ status: "completed" });
    expect(await auditCount(taskId, "task.cancelled")).toBe(0);
    expect(await sideEffects(taskId)).toBe(1);
  });

  it("with a backend that cannot withdraw a request: the task is cancelled all the same, and the request is left to the backend", async () => {
    const taskId = await gatedRefund("O-2289");
    const requestId = await requestIdOf(taskId);
    bindApprovalBackend({ ...inboxBackend, cancel: undefined });
    onTestFinished(() => bindApprovalBackend(null));
    expect(await cancelTask(await principal(), taskId, at(MIN))).toMatchObject({ ok: true, task: { status: "cancelled" } });
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).status).toBe("pending");
    expect(await auditCount(taskId, "task.cancelled")).toBe(1);
    expect(await sideEffects(taskId)).toBe(0);
  });
});
