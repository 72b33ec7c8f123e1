/**
 * The guards of the pure decision that the SEP's MUSTs rest on: a denial that cannot be approved stays a denial, a
 * requestable denial never executes without an approval that meets the strictest matching rule, and an approval is
 * honoured only while valid, from the required group, with enough distinct approvers.
 */
import { describe, expect, it } from "vitest";
import { evaluate, matches, type ApprovalInput, type EvaluationRequest, type Rule } from "./evaluate";

const now = new Date("2026-11-30T10:00:00Z");

const rule = (over: Partial<Rule>): Rule => ({
  id: "r1",
  ruleKey: "deploy-production",
  version: 1,
  tool: "deploy_service",
  field: "environment",
  operator: "eq",
  value: "production",
  effect: "requestable",
  approverGroup: "sre",
  approvalsRequired: 1,
  requestDeadlineSec: 3600,
  approvalValiditySec: 1800,
  requireJustification: false,
  reason: "Production deploys need an SRE's approval.",
  ...over,
});

function call(properties: EvaluationRequest["resource"]["properties"], approval?: ApprovalInput): EvaluationRequest {
  return {
    subject: { type: "user", id: "u1", properties: { agentId: "a1" } },
    action: { name: "deploy_service" },
    resource: { type: "service", id: "checkout-api", properties },
    context: approval ? { approval } : {},
  };
}

const approval = (over: Partial<ApprovalInput> = {}): ApprovalInput => ({
  approverGroup: "sre",
  approverIds: ["sre-1"],
  approvedAt: now,
  expiresAt: new Date(now.getTime() + 60_000),
  ...over,
});

describe("which rules match a call", () => {
  it("eq matches the exact value only, compared as text", () => {
    const r = rule({});
    expect(matches(r, { environment: "production" })).toBe(true);
    expect(matches(r, { environment: "staging" })).toBe(false);
    expect(matches(rule({ value: "prod" }), { environment: "production" })).toBe(false);
    expect(matches(rule({ field: "replicas", value: "3" }), { replicas: 3 })).toBe(true);
  });

  it("gte matches at the threshold and above, gt only above it", () => {
    const gte = rule({ field: "amount_cents", operator: "gte", value: "15000" });
    const gt = rule({ field: "amount_cents", operator: "gt", value: "15000" });
    expect([14999, 15000, 15001].map((v) => matches(gte, { amount_cents: v }))).toEqual([false, true, true]);
    expect([14999, 15000, 15001].map((v) => matches(gt, { amount_cents: v }))).toEqual([false, false, true]);
  });

  it("prefix matches a value that starts with the rule's text, not one that only contains it", () => {
    const r = rule({ field: "path", operator: "prefix", value: "prod/" });
    expect(matches(r, { path: "prod/db.sqlite" })).toBe(true);
    expect(matches(r, { path: "archive/prod/db.sqlite" })).toBe(false);
  });

  it("a rule on a property the resource does not carry does not match it, whatever the rule's text", () => {
    expect(matches(rule({ value: "null" }), { environment: null })).toBe(false);
    expect(matches(rule({ value: "undefined" }), {})).toBe(false);
    expect(matches(rule({ operator: "prefix", value: "nu" }), { environment: null })).toBe(false);
    expect(matches(rule({ operator: "gte", value: "0" }), { environment: null })).toBe(false);
  });

  it("an operator the server does not understand matches, so it can never silently allow", () => {
    const r = rule({ operator: "regex", value: "^prod", effect: "deny", reason: "Unknown operators fail closed." });
    expect(matches(r, { environment: "staging" })).toBe(true);
    expect(evaluate(call({ environment: "staging" }), [r], now)).toMatchObject({ decision: "deny", reason: "Unknown operators fail closed." });
  });
});

describe("a denial that cannot be approved stays a denial", () => {
  it("any matching rule that is not requestable denies, whatever its effect is called, and no approval turns it into an allow", () => {
    for (const effect of ["deny", "forbid"]) {
      const d = evaluate(call({ environment: "production" }, approval()), [rule({ id: "r2", effect, reason: "Frozen." })], now);
      expect(d).toEqual({ decision: "deny", rule: { id: "r2", ruleKey: "deploy-production", version: 1 }, reason: "Frozen." });
    }
  });

  it("a deny rule wins even when it comes after a requestable rule that the approval satisfies", () => {
    const rules = [rule({}), rule({ id: "r2", ruleKey: "freeze", effect: "deny", reason: "Change freeze." })];
    expect(evaluate(call({ environment: "production" }, approval()), rules, now)).toMatchObject({ decision: "deny", rule: { id: "r2" } });
  });
});

describe("the strictest matching requestable rule decides", () => {
  const one = rule({ id: "one", ruleKey: "one", approvalsRequired: 1, approvalValiditySec: 1800 });
  const two = rule({ id: "two", ruleKey: "two", approvalsRequired: 2, approvalValiditySec: 3600 });
  const shortValidity = rule({ id: "short", ruleKey: "short", approvalsRequired: 2, approvalValiditySec: 600 });

  it("the rule that needs the most approvals sets the requirements, in either order", () => {
    for (const rules of [[one, two], [two, one]]) {
      expect(evaluate(call({ environment: "production" }), rules, now)).toMatchObject({
        decision: "requestable",
        rule: { id: "two" },
        requirements: { approvalsRequired: 2, approvalValiditySec: 3600 },
      });
    }
  });

  it("between rules that need as many approvals, the shorter validity decides, in either order", () => {
    for (const rules of [[two, shortValidity], [shortValidity, two]]) {
      expect(evaluate(call({ environment: "production" }), rules, now)).toMatchObject({ rule: { id: "short" }, requirements: { approvalValiditySec: 600 } });
    }
  });

  it("an approval that satisfies the weaker rule does not satisfy the stricter one", () => {
    expect(evaluate(call({ environment: "production" }, approval()), [one, two], now)).toMatchObject({ decision: "requestable", rule: { id: "two" } });
    const both = approval({ approverIds: ["sre-1", "sre-2"] });
    expect(evaluate(call({ environment: "production" }, both), [one, two], now)).toMatchObject({ decision: "allow", rule: { id: "two" } });
  });

  it("the requestable denial carries every requirement of the deciding rule and its reason", () => {
    const r = rule({ requireJustification: true, requestDeadlineSec: 7200, approvalsRequired: 2 });
    expect(evaluate(call({ environment: "production" }), [r], now)).toEqual({
      decision: "requestable",
      rule: { id: "r1", ruleKey: "deploy-production", version: 1 },
      reason: "Production deploys need an SRE's approval.",
      requirements: { approverGroup: "sre", approvalsRequired: 2, requestDeadlineSec: 7200, approvalValiditySec: 1800, requireJustification: true },
    });
  });

  it("a call that no rule matches is allowed without a rule", () => {
    expect(evaluate(call({ environment: "staging" }), [rule({})], now)).toEqual({ decision: "allow", rule: null });
  });
});

describe("an approval is honoured only while valid, from the required group, with enough distinct approvers", () => {
  it("valid until the instant before its expiry, not at it or after it", () => {
    const expiresAt = new Date(now.getTime() + 1);
    expect(evaluate(call({ environment: "production" }, approval({ expiresAt })), [rule({})], now).decision).toBe("allow");
    expect(evaluate(call({ environment: "production" }, approval({ expiresAt: now })), [rule({})], now).decision).toBe("requestable");
    expect(evaluate(call({ environment: "production" }, approval({ expiresAt: new Date(now.getTime() - 1) })), [rule({})], now).decision).toBe("requestable");
  });

  it("exactly the required number of distinct approvers suffices; one fewer, or the same approver twice, does not", () => {
    const r = rule({ approvalsRequired: 3 });
    expect(evaluate(call({ environment: "production" }, approval({ approverIds: ["a", "b", "c"] })), [r], now).decision).toBe("allow");
    expect(evaluate(call({ environment: "production" }, approval({ approverIds: ["a", "b"] })), [r], now).decision).toBe("requestable");
    expect(evaluate(call({ environment: "production" }, approval({ approverIds: ["a", "b", "b"] })), [r], now).decision).toBe("requestable");
  });

  it("an approval from another group does not count, and the allow names the rule and requirements it met", () => {
    expect(evaluate(call({ environment: "production" }, approval({ approverGroup: "support-leads" })), [rule({})], now).decision).toBe("requestable");
    expect(evaluate(call({ environment: "production" }, approval()), [rule({})], now)).toEqual({
      decision: "allow",
      rule: { id: "r1", ruleKey: "deploy-production", version: 1 },
      requirements: { approverGroup: "sre", approvalsRequired: 1, requestDeadlineSec: 3600, approvalValiditySec: 1800, requireJustification: false },
    });
  });
});
