/**
 * The scope of deduplication (SEP "Deduplication"): an identical call is the same caller (agent and the user it acts
 * for), the same tool and the same arguments. Only such a call joins the open task; one that differs in any of the
 * three opens its own task, so a call is never answered with a task for another agent or another tool, which its
 * reviewers never saw. The keys are compared where the task is created, with everything else equal.
 */
import { beforeEach, describe, expect, inject, it } from "vitest";
import { createAgent } from "../admin/agents";
import { authenticateAgent } from "../auth/agents";
import { digest } from "../canonical";
import { db } from "../db/client";
import { getTool, toolVersion } from "../tools/catalog";
import { principal, resetDb } from "../../tests/support/db";
import { T0 } from "../../tests/support/proof";
import { createApprovalTask, dedupKeyOf } from "./create";
import type { Principal } from "./types";

beforeEach(resetDb);

const RULE = { id: "dedup-scope-rule", ruleKey: "refund-over-limit", version: 1 };
const REQUIREMENTS = { approverGroup: "support-leads", approvalsRequired: 1, requestDeadlineSec: 24 * 3600, approvalValiditySec: 3600, requireJustification: false };

/** A refund's approval task, opened as `tool` would open it, for `p`. */
async function open(p: Principal, tool = "issue_refund", orderId = "O-2289"): Promise<string> {
  const refund = getTool("issue_refund")!;
  const args = refund.schema.parse({ order_id: orderId });
  const resource = await refund.resource(args);
  const task = await createApprovalTask(
    {
      principal: p,
      tool,
      toolVersion: toolVersion(refund),
      args,
      argumentsDigest: digest(args),
      summary: refund.summary(args, resource),
      resource,
      rule: RULE,
      reason: "Refunds above EUR 150.00 need a support lead's approval.",
      requirements: REQUIREMENTS,
    },
    T0,
  );
  return task.taskId;
}

/** Another agent acting for the same user as the support bot. */
async function secondAgentOfSameUser(): Promise<Principal> {
  const support = await principal();
  const admin = await db().user.findFirstOrThrow({ where: { role: "admin" } });
  const { token } = await createAgent({ name: "support-bot-two", userId: support.userId }, admin.id, T0);
  const p = await authenticateAgent(token);
  if (!p) throw new Error("the second agent did not authenticate");
  expect(p.userId).toBe(support.userId);
  expect(p.agentId).not.toBe(support.agentId);
  return p;
}

describe(`the scope of deduplication (${inject("databaseKind")})`, () => {
  it("the same agent, tool and arguments join the open task", async () => {
    const support = await principal();
    const first = await open(support);
    expect(await open(support)).toBe(first);
    expect(await db().task.count()).toBe(1);
  });

  it("another agent acting for the same user opens its own task", async () => {
    const support = await principal();
    const first = await open(support);
    const other = await open(await secondAgentOfSameUser());
    expect(other).not.toBe(first);
    expect((await db().task.findUniqueOrThrow({ where: { id: other } })).agentId).not.toBe(support.agentId);
  });

  it("another tool called with the same arguments opens its own task", async () => {
    const support = await principal();
    const refund = await open(support, "issue_refund");
    const other = await open(support, "refund_again");
    expect(other).not.toBe(refund);
    expect((await db().task.findUniqueOrThrow({ where: { id: other } })).tool).toBe("refund_again");
  });

  it("the key names the agent, the user it acts for, the tool and the arguments' digest; each one changes it", () => {
    const p = { agentId: "a", userId: "u" } as Principal;
    const base = dedupKeyOf(p, "t", "sha256:x");
    expect(dedupKeyOf({ ...p }, "t", "sha256:x")).toBe(base);
    for (const k of [dedupKeyOf({ ...p, agentId: "b" }, "t", "sha256:x"), dedupKeyOf({ ...p, userId: "v" }, "t", "sha256:x"), dedupKeyOf(p, "t2", "sha256:x"), dedupKeyOf(p, "t", "sha256:y")]) {
      expect(k).not.toBe(base);
    }
  });
});
