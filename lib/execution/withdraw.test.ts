/**
 * Withdrawing a revoked principal's tasks: every task of those agents not yet claimed (one waiting for the
 * requester's answer too) ends at once as a denial for the principal, audited, and its request is withdrawn from
 * reviewers; a task already claimed carries on, and no other agent's task is touched.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../db/client";
import { advanceTask } from "./advance";
import { askRequester } from "../tasks/ask";
import { withdrawableTasks, withdrawTasksOf } from "./withdraw";
import { principal, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { crashingAt } from "../../tests/support/inprocess-crash";
import { approveOnly, at, gatedCall, gatedDeploy, MIN, SRES, T0, taskRow } from "../../tests/support/proof";

vi.mock("../faults", () => import("../../tests/support/inprocess-crash"));

beforeEach(async () => {
  await resetDb();
});

describe("withdrawTasksOf", () => {
  it("ends the agent's unclaimed tasks as principal denials and withdraws their requests; its claimed task and other agents' tasks carry on", async () => {
    const ops = await principal("ops-bot");
    const waiting = await gatedDeploy("3.0.1");
    const claimed = await gatedDeploy("3.0.2");
    await approveOnly(claimed, SRES[0], at(MIN));
    expect(await crashingAt("after-claim", () => advanceTask(claimed, at(2 * MIN)))).toBe("crashed");
    // One waiting for the requester's answer is withdrawn as well.
    const asking = await gatedDeploy("3.0.3");
    expect(await askRequester({ requestId: await requestIdOf(asking), reviewerId: await userId(SRES[1]), question: "Which change ticket?" }, at(MIN))).toMatchObject({ ok: true });
    expect(await taskRow(asking)).toMatchObject({ status: "input_required" });
    const otherAgent = await gatedCall(await principal("support-bot"), "issue_refund", { order_id: "O-4410", amount: 300 }, T0);

    expect(await withdrawTasksOf([], at(3 * MIN))).toBe(0);
    // What the console announces before a revocation is what the revocation ends.
    expect(await db().task.count({ where: withdrawableTasks([ops.agentId]) })).toBe(2);
    expect(await withdrawTasksOf([ops.agentId], at(3 * MIN))).toBe(2);

    for (const id of [waiting, asking]) expect(await taskRow(id)).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: await requestIdOf(asking) } })).toMatchObject({ status: "cancelled" });
    const denial = await db().auditEvent.findFirstOrThrow({ where: { taskId: waiting, type: "task.denied" } });
    expect(denial).toMatchObject({ actor: "system", data: { cause: "principal" } });
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: await requestIdOf(waiting) } })).toMatchObject({ status: "cancelled" });

    expect(await taskRow(claimed)).toMatchObject({ status: "working", phase: "claimed" });
    expect(await taskRow(otherAgent)).toMatchObject({ status: "working", phase: "awaiting_approval" });
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: await requestIdOf(otherAgent) } })).toMatchObject({ status: "pending" });
    // Withdrawing again finds nothing left to end.
    expect(await withdrawTasksOf([ops.agentId], at(4 * MIN))).toBe(0);
  });
});
