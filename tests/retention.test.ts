/** Retention: a terminal task is retrievable for resultRetention, then deleted with its sensitive records. */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { config } from "../lib/config";
import { sweep } from "../lib/execution/sweep";
import { callTool } from "../lib/tasks/call";
import { decide } from "../lib/tasks/decide";
import { getTask } from "../lib/tasks/get";
import { principal, requestIdOf, resetDb, userId } from "./support/db";

import { T0 } from "./support/proof";
const later = (ms: number) => new Date(T0.getTime() + ms);
beforeEach(resetDb);

describe("retention ends with deletion of the task's sensitive state", () => {
  it("keeps a completed result until terminalizedAt + resultRetention, then deletes the task and redacts its arguments", async () => {
    const agent = await principal();
    const out = await callTool(agent, "issue_refund", { order_id: "O-2289", reason: "parcel lost, card ending 4242" }, { tasks: true }, T0);
    if (out.kind !== "task") throw new Error("expected a task");
    const id = out.task.taskId;
    await decide({ requestId: await requestIdOf(id), reviewerId: await userId("lena.lead@countersign.test"), decision: "approve" }, later(1000));
    const view = await getTask(agent, id, later(2000));
    expect(view!.createdAt.getTime() + view!.ttlMs!).toBeGreaterThanOrEqual(later(1000).getTime() + config.resultRetentionMs);

    await sweep(later(1000 + config.resultRetentionMs - 60_000));
    expect(await getTask(agent, id, later(1000 + config.resultRetentionMs - 60_000))).not.toBeNull();

    const r = await sweep(later(24 * 3600_000 + 1000 + config.resultRetentionMs + 60_000));
    expect(r.purged).toBe(1);
    expect(await db().task.findUnique({ where: { id } })).toBeNull();
    const leftovers = JSON.stringify([await db().submissionIntent.findMany({ where: { taskId: id } }), await db().approvalRequest.findMany({ where: { taskId: id } })]);
    expect(leftovers).not.toContain("4242");
    expect(leftovers).not.toContain("O-2289");
    expect(await db().auditEvent.count({ where: { taskId: id, type: "task.purged" } })).toBe(1);
  });

  it("never purges a working task, even long after its ttl", async () => {
    const agent = await principal();
    const out = await callTool(agent, "issue_refund", { order_id: "O-2289" }, { tasks: true }, T0);
    if (out.kind !== "task") throw new Error("expected a task");
    // Force an absurdly short retention on a task that is still working (claimed, say): it must stay.
    await db().task.update({ where: { id: out.task.taskId }, data: { phase: "claimed", claimedAt: T0, claimedBy: "x", executionDeadline: later(10 * 365 * 24 * 3600_000), retainUntil: later(1) } });
    const r = await sweep(later(3600_000));
    expect(r.purged).toBe(0);
    expect(await db().task.findUnique({ where: { id: out.task.taskId } })).not.toBeNull();
  });
});
