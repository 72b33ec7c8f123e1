/**
 * What the admin console can save as a policy rule. A requestable rule is a promise that the call waits for
 * reviewers, so one that no reviewer could satisfy, or that no one would have time to review, is refused.
 */
import { describe, expect, it } from "vitest";
import { RuleInput } from "./save-rule";

const valid = {
  ruleKey: "refund-over-limit",
  tool: "issue_refund",
  description: "Large refunds",
  field: "amount_cents",
  operator: "gt",
  value: "15000",
  effect: "requestable",
  approverGroup: "support-leads",
  approvalsRequired: 1,
  requestDeadlineSec: 60,
  approvalValiditySec: 60,
  requireJustification: false,
  reason: "Refunds above EUR 150.00 need a support lead's approval.",
};

function issues(input: Record<string, unknown>): { path: string; message: string }[] {
  const r = RuleInput.safeParse(input);
  return r.success ? [] : r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
}

describe("a requestable rule must be one reviewers can satisfy in time", () => {
  it("the smallest valid requestable rule is accepted and active by default", () => {
    expect(issues(valid)).toEqual([]);
    expect(RuleInput.parse(valid).active).toBe(true);
  });

  it("needs an approver group", () => {
    expect(issues({ ...valid, approverGroup: null })).toEqual([{ path: "approverGroup", message: "a requestable rule needs an approver group" }]);
  });

  it("needs at least one approval", () => {
    expect(issues({ ...valid, approvalsRequired: 0 })).toEqual([{ path: "approvalsRequired", message: "at least one approval" }]);
  });

  it("needs at least 60 seconds to review and at least 60 seconds of validity", () => {
    expect(issues({ ...valid, requestDeadlineSec: 59 })).toEqual([{ path: "requestDeadlineSec", message: "at least 60 seconds" }]);
    expect(issues({ ...valid, approvalValiditySec: 59 })).toEqual([{ path: "approvalValiditySec", message: "at least 60 seconds" }]);
  });

  it("a deny rule needs none of these: it is never approved", () => {
    expect(issues({ ...valid, effect: "deny", approverGroup: null, approvalsRequired: 0, requestDeadlineSec: 0, approvalValiditySec: 0 })).toEqual([]);
  });
});

describe("a rule's comparison must be one the decision can make", () => {
  it("gt and gte need a number; eq and prefix take any text", () => {
    for (const operator of ["gt", "gte"]) {
      expect(issues({ ...valid, operator, value: "lots" })).toEqual([{ path: "value", message: "a number for gt/gte" }]);
      expect(issues({ ...valid, operator, value: "150.5" })).toEqual([]);
    }
    for (const operator of ["eq", "prefix"]) expect(issues({ ...valid, operator, value: "lots" })).toEqual([]);
  });

  it("an operator the decision does not know is refused", () => {
    expect(issues({ ...valid, operator: "regex" }).map((i) => i.path)).toEqual(["operator"]);
  });
});
