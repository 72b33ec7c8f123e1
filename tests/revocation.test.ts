/** A revoked agent (or a deactivated user) can execute nothing more: its unclaimed tasks end as denials at once. */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { authenticateAgent } from "../lib/auth/agents";
import { revokeAgent } from "../lib/admin/agents";
import { updateUser } from "../lib/admin/people";
import { DEMO_AGENTS } from "../lib/db/seed";
import { callTool } from "../lib/tasks/call";
import { decide } from "../lib/tasks/decide";
import { getTask } from "../lib/tasks/get";
import { principal, refundsFor, requestIdOf, resetDb, userId } from "./support/db";

import { T0 } from "./support/proof";
const later = (ms: number) => new Date(T0.getTime() + ms);
beforeEach(resetDb);

async function pending() {
  const agent = await principal();
  const out = await callTool(agent, "issue_refund", { order_id: "O-2289" }, { tasks: true }, T0);
  if (out.kind !== "task") throw new Error("expected a task");
  return { agent, taskId: out.task.taskId };
}

describe("revocation", () => {
  it("revoking the agent refuses its token, completes its pending task denied-not-executed and withdraws the request", async () => {
    const { agent, taskId } = await pending();
    expect(await revokeAgent(agent.agentId, await userId("admin@countersign.test"), later(1000))).toBe(true);
    expect(await authenticateAgent(DEMO_AGENTS[0].token)).toBeNull();
    const t = await db().task.findUniqueOrThrow({ where: { id: taskId } });
    expect(t).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    expect((t.result as { text: string }).text).toMatch(/no longer authorized.*did not run/);
    const requestId = await requestIdOf(taskId);
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).status).toBe("cancelled");
    expect(await decide({ requestId, reviewerId: await userId("lena.lead@countersign.test"), decision: "approve" }, later(2000))).toMatchObject({ ok: false });
    expect(await refundsFor("O-2289")).toHaveLength(0);
    // A second revocation is a no-op.
    expect(await revokeAgent(agent.agentId, await userId("admin@countersign.test"), later(3000))).toBe(false);
  });

  it("deactivating the requesting user ends the tasks of all their agents", async () => {
    const { agent, taskId } = await pending();
    const rita = await db().user.findUniqueOrThrow({ where: { id: agent.userId } });
    await updateUser({ userId: rita.id, role: rita.role, groups: rita.groups, active: false }, await userId("admin@countersign.test"), later(1000));
    expect(await getTask(agent, taskId, later(2000))).toMatchObject({ status: "completed", result: { disposition: "denied-not-executed" } });
  });
});
