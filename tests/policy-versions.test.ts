/** Rules are data, versioned: a change makes a new version; old tasks keep theirs; re-evaluation uses the current. */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { currentRules } from "../lib/policy/store";
import { saveRuleVersion } from "../lib/policy/save-rule";
import { callTool } from "../lib/tasks/call";
import { activeRuleFields, principal, resetDb, userId } from "./support/db";

import { T0 } from "./support/proof";
beforeEach(resetDb);

const refundRule = () => activeRuleFields("refund-over-limit");

describe("policy rules are versioned data", () => {
  it("saving makes a new version, retires the previous one, and the previous stays readable", async () => {
    const admin = await userId("admin@countersign.test");
    const saved = await saveRuleVersion({ ...(await refundRule()), value: "20000" }, admin, T0);
    expect(saved.version).toBe(2);
    const all = await db().policyRule.findMany({ where: { ruleKey: "refund-over-limit" }, orderBy: { version: "asc" } });
    expect(all.map((r) => [r.version, r.value, r.active])).toEqual([[1, "15000", false], [2, "20000", true]]);
    expect((await currentRules("issue_refund")).map((r) => r.version)).toEqual([2]);
    expect(await db().auditEvent.count({ where: { type: "policy.rule-saved" } })).toBe(1);
  });

  it("an admin raises the threshold and the next call for the same amount executes at once", async () => {
    const agent = await principal();
    const before = await callTool(agent, "issue_refund", { order_id: "O-2289", amount: 160 }, { tasks: true }, T0);
    expect(before.kind).toBe("task");
    if (before.kind === "task") {
      const t = await db().task.findUniqueOrThrow({ where: { id: before.task.taskId } });
      expect(t.policyVersion).toBe(1);
    }
    await saveRuleVersion({ ...(await refundRule()), value: "20000" }, await userId("admin@countersign.test"), T0);
    const after = await callTool(agent, "issue_refund", { order_id: "O-4410", amount: 160 }, { tasks: true }, T0);
    expect(after).toMatchObject({ kind: "result", outcome: { isError: false } });
  });

  it("rejects invalid rules with a clear message", async () => {
    const bad = { ...(await refundRule()), approverGroup: null };
    await expect(saveRuleVersion(bad, "x", T0)).rejects.toThrow(/approver group/);
    await expect(saveRuleVersion({ ...(await refundRule()), operator: "gt", value: "lots" }, "x", T0)).rejects.toThrow(/number/);
  });

  it("concurrent edits of one rule take distinct versions", async () => {
    const admin = await userId("admin@countersign.test");
    const base = await refundRule();
    const saved = await Promise.all([16000, 17000, 18000].map((v) => saveRuleVersion({ ...base, value: String(v) }, admin, T0)));
    expect(saved.map((r) => r.version).sort()).toEqual([2, 3, 4]);
    expect(await db().policyRule.count({ where: { ruleKey: "refund-over-limit", active: true } })).toBe(1);
  });
});
