/**
 * The guards of the pure decision that the SEP's MUSTs rest on: a denial that cannot be approved stays a denial, a
 * requestable denial never executes without an approval that meets the strictest matching rule, and an approval is
 * honoured only while valid, from the required group, with enough distinct approvers.
 */
import { describe, expect, it } from "vitest";
import { policyTools } from "../tools/catalog";
import { compilePolicy } from "./compile";
import { PolicyDocument } from "./document";
import { evaluate, type ApprovalInput, type CompiledPolicy, type EvaluationRequest, type Rule } from "./evaluate";

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

/** The form rules over a document whose default posture allows: a call no rule matches runs. */
function compiled(rules: Rule[]): CompiledPolicy {
  const r = compilePolicy(
    { rules, document: { id: "doc-1", version: 1, body: PolicyDocument.parse({ defaults: { posture: "allow" } }) }, tools: policyTools() },
    { strict: false },
  );
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join("; "));
  return r.policy;
}

const decide = (req: EvaluationRequest, rules: Rule[]) => evaluate(req, compiled(rules), now);

const subject: EvaluationRequest["subject"] = {
  agentId: "a1",
  agentName: "ops-bot",
  user: { id: "u1", email: "otto.ops@countersign.test", name: "Otto", role: "requester", groups: [] },
};

type DeployProps = { environment?: string | null; version?: string | null };

function call(properties: DeployProps, approval?: ApprovalInput): EvaluationRequest {
  const props = { version: "1.4.2", ...properties };
  return {
    subject,
    action: { name: "deploy_service" },
    resource: { type: "service", id: "checkout-api", properties: props },
    context: { args: { service: "checkout-api", environment: props.environment ?? "staging", version: "1.4.2" }, history: {}, ...(approval ? { approval } : {}) },
  };
}

function refund(cents: number): EvaluationRequest {
  return {
    subject,
    action: { name: "issue_refund" },
    resource: { type: "order", id: "O-2289", properties: { amount_cents: cents, currency: "EUR", refundable_cents: 100000, total_cents: 100000 } },
    context: { args: { order_id: "O-2289", amount: cents / 100 }, history: {} },
  };
}

function del(path: string): EvaluationRequest {
  return {
    subject,
    action: { name: "delete_path" },
    resource: { type: "path", id: path, properties: { path, kind: "file" } },
    context: { args: { path }, history: {} },
  };
}

const approval = (over: Partial<ApprovalInput> = {}): ApprovalInput => ({
  approverGroup: "sre",
  approverIds: ["sre-1"],
  approvedAt: now,
  expiresAt: new Date(now.getTime() + 60_000),
  ...over,
});

const matched = (req: EvaluationRequest, r: Rule) => decide(req, [r]).decision !== "allow";

describe("which rules match a call", () => {
  it("eq matches the exact value only", () => {
    const r = rule({});
    expect(matched(call({ environment: "production" }), r)).toBe(true);
    expect(matched(call({ environment: "staging" }), r)).toBe(false);
    expect(matched(call({ environment: "production" }), rule({ value: "prod" }))).toBe(false);
    // On a whole-number attribute, eq compares the number.
    const cents = rule({ tool: "issue_refund", field: "amount_cents", value: "15000" });
    expect([14999, 15000, 15001].map((v) => matched(refund(v), cents))).toEqual([false, true, false]);
  });

  it("gte matches at the threshold and above, gt only above it", () => {
    const gte = rule({ tool: "issue_refund", field: "amount_cents", operator: "gte", value: "15000" });
    const gt = rule({ tool: "issue_refund", field: "amount_cents", operator: "gt", value: "15000" });
    expect([14999, 15000, 15001].map((v) => matched(refund(v), gte))).toEqual([false, true, true]);
    expect([14999, 15000, 15001].map((v) => matched(refund(v), gt))).toEqual([false, false, true]);
  });

  it("prefix matches a value that starts with the rule's text, not one that only contains it", () => {
    const r = rule({ tool: "delete_path", field: "path", operator: "prefix", value: "prod/" });
    expect(matched(del("prod/db.sqlite"), r)).toBe(true);
    expect(matched(del("archive/prod/db.sqlite"), r)).toBe(false);
  });

  // The policy language changed this on purpose: a rule that reads an attribute the resource does not carry no
  // longer quietly fails to match (which let the call run); the policy cannot be evaluated, and that denies.
  it("a rule on a property the resource does not carry cannot be evaluated, and that denies: it never lets the call run", () => {
    const missing = decide(call({ environment: null }), [rule({ value: "null" })]);
    expect(missing).toMatchObject({ decision: "deny", rule: { ruleKey: "evaluation-error" } });
    expect((missing as { evaluationError?: string }).evaluationError).toMatch(/environment/);
    expect(decide(call({ environment: undefined }), [rule({ value: "undefined" })])).toMatchObject({ decision: "deny", rule: { ruleKey: "evaluation-error" } });
    // Even with an approval that would meet the rule.
    expect(decide(call({ environment: null }, approval()), [rule({ operator: "prefix", value: "nu" })]).decision).toBe("deny");
    // A rule on an attribute the tool has no such property for denies every call of the tool, naming the rule.
    for (const r of [rule({ field: "replicas", value: "3" }), rule({ field: "environment", operator: "gte", value: "0" })]) {
      const d = decide(call({ environment: "staging" }, approval()), [r]);
      expect(d).toMatchObject({
        decision: "deny",
        rule: { id: "r1", ruleKey: "deploy-production" },
        reason: "The policy could not be evaluated for this call, so it is denied.",
      });
      expect((d as { evaluationError?: string }).evaluationError).toMatch(/deploy-production/);
    }
    // Other tools are not affected.
    expect(decide(refund(100), [rule({ field: "replicas", value: "3" })]).decision).toBe("allow");
  });

  it("an operator the server does not understand matches, so it can never silently allow", () => {
    const r = rule({ operator: "regex", value: "^prod", effect: "deny", reason: "Unknown operators fail closed." });
    expect(matched(call({ environment: "staging" }), r)).toBe(true);
    expect(decide(call({ environment: "staging" }), [r])).toMatchObject({ decision: "deny", reason: "Unknown operators fail closed." });
    // A requestable rule with an unknown operator needs its approval for every call of the tool.
    expect(decide(call({ environment: "staging" }), [rule({ operator: "regex", value: "^prod" })]).decision).toBe("requestable");
  });
});

describe("a denial that cannot be approved stays a denial", () => {
  it("any matching rule that is not requestable denies, whatever its effect is called, and no approval turns it into an allow", () => {
    for (const effect of ["deny", "forbid"]) {
      const d = decide(call({ environment: "production" }, approval()), [rule({ id: "r2", effect, reason: "Frozen." })]);
      expect(d).toEqual({ decision: "deny", rule: { id: "r2", ruleKey: "deploy-production", version: 1 }, reason: "Frozen." });
    }
    // A "requestable" rule without an approver group cannot be approved by anyone: a plain denial.
    expect(decide(call({ environment: "production" }, approval()), [rule({ approverGroup: null })]).decision).toBe("deny");
  });

  it("a deny rule wins even when it comes after a requestable rule that the approval satisfies", () => {
    const rules = [rule({}), rule({ id: "r2", ruleKey: "freeze", effect: "deny", reason: "Change freeze." })];
    for (const order of [rules, [...rules].reverse()]) {
      expect(decide(call({ environment: "production" }, approval()), order)).toMatchObject({ decision: "deny", rule: { id: "r2" } });
    }
  });
});

describe("the strictest matching requestable rule decides", () => {
  const one = rule({ id: "one", ruleKey: "one", approvalsRequired: 1, approvalValiditySec: 1800 });
  const two = rule({ id: "two", ruleKey: "two", approvalsRequired: 2, approvalValiditySec: 3600 });
  const shortValidity = rule({ id: "short", ruleKey: "short", approvalsRequired: 2, approvalValiditySec: 600 });

  it("the rule that needs the most approvals sets the requirements, in either order", () => {
    for (const rules of [[one, two], [two, one]]) {
      expect(decide(call({ environment: "production" }), rules)).toMatchObject({
        decision: "requestable",
        rule: { id: "two" },
        requirements: { approvalsRequired: 2, approvalValiditySec: 3600 },
      });
    }
  });

  it("between rules that need as many approvals, the shorter validity decides, in either order", () => {
    for (const rules of [[two, shortValidity], [shortValidity, two]]) {
      expect(decide(call({ environment: "production" }), rules)).toMatchObject({ rule: { id: "short" }, requirements: { approvalValiditySec: 600 } });
    }
  });

  it("an approval that satisfies the weaker rule does not satisfy the stricter one", () => {
    expect(decide(call({ environment: "production" }, approval()), [one, two])).toMatchObject({ decision: "requestable", rule: { id: "two" } });
    const both = approval({ approverIds: ["sre-1", "sre-2"] });
    expect(decide(call({ environment: "production" }, both), [one, two])).toMatchObject({ decision: "allow", rule: { id: "two" } });
  });

  it("the requestable denial carries every requirement of the deciding rule and its reason", () => {
    const r = rule({ requireJustification: true, requestDeadlineSec: 7200, approvalsRequired: 2 });
    expect(decide(call({ environment: "production" }), [r])).toEqual({
      decision: "requestable",
      rule: { id: "r1", ruleKey: "deploy-production", version: 1 },
      reason: "Production deploys need an SRE's approval.",
      requirements: { approverGroup: "sre", approvalsRequired: 2, requestDeadlineSec: 7200, approvalValiditySec: 1800, requireJustification: true },
    });
  });

  // The allow of a call that no rule matches now names what decided it: the document's default posture.
  it("a call that no rule matches is allowed by the default posture, without a rule's requirements", () => {
    expect(decide(call({ environment: "staging" }), [rule({})])).toEqual({ decision: "allow", rule: { id: "doc-1", ruleKey: "default", version: 1 } });
  });
});

describe("an approval is honoured only while valid, from the required group, with enough distinct approvers", () => {
  it("valid until the instant before its expiry, not at it or after it", () => {
    const expiresAt = new Date(now.getTime() + 1);
    expect(decide(call({ environment: "production" }, approval({ expiresAt })), [rule({})]).decision).toBe("allow");
    expect(decide(call({ environment: "production" }, approval({ expiresAt: now })), [rule({})]).decision).toBe("requestable");
    expect(decide(call({ environment: "production" }, approval({ expiresAt: new Date(now.getTime() - 1) })), [rule({})]).decision).toBe("requestable");
  });

  it("exactly the required number of distinct approvers suffices; one fewer, or the same approver twice, does not", () => {
    const r = rule({ approvalsRequired: 3 });
    expect(decide(call({ environment: "production" }, approval({ approverIds: ["a", "b", "c"] })), [r]).decision).toBe("allow");
    expect(decide(call({ environment: "production" }, approval({ approverIds: ["a", "b"] })), [r]).decision).toBe("requestable");
    expect(decide(call({ environment: "production" }, approval({ approverIds: ["a", "b", "b"] })), [r]).decision).toBe("requestable");
  });

  it("an approval from another group does not count, and the allow names the rule and requirements it met", () => {
    expect(decide(call({ environment: "production" }, approval({ approverGroup: "support-leads" })), [rule({})]).decision).toBe("requestable");
    expect(decide(call({ environment: "production" }, approval()), [rule({})])).toEqual({
      decision: "allow",
      rule: { id: "r1", ruleKey: "deploy-production", version: 1 },
      requirements: { approverGroup: "sre", approvalsRequired: 1, requestDeadlineSec: 3600, approvalValiditySec: 1800, requireJustification: false },
    });
  });
});
