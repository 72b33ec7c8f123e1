/**
 * Withdrawing a revoked principal's tasks: every task of those agents not yet claimed ends at once as a denial for
 * the principal, audited, and its request is withdrawn from reviewers; a task already claimed carries on, and no
 * other agent's task is touched.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../db/client";
import { advanceTask } from "./advance";
import { withdrawTasksOf } from "./withdraw";
import { principal, requestIdOf, resetDb } from "../../tests/support/db";
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
    const otherAgent = await gatedCall(await principal("support-bot"), "issue_refund", { order_id: "O-4410", amount: 300 }, T0);

    expect(await withdrawTasksOf([], at(3 * MIN))).toBe(0);
    expect(await withdrawTasksOf([ops.agentId], at(3 * MIN))).toBe(1);

    expect(await taskRow(waiting)).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
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
