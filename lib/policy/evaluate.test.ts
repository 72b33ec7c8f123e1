import { describe, expect, it } from "vitest";
import { policyTools } from "../tools/catalog";
import { compilePolicy } from "./compile";
import { PolicyDocument } from "./document";
import { evaluate, type CompiledPolicy, type EvaluationRequest, type Rule } from "./evaluate";

const refundRule: Rule = {
  id: "r1",
  ruleKey: "refund-over-limit",
  version: 3,
  tool: "issue_refund",
  field: "amount_cents",
  operator: "gt",
  value: "15000",
  effect: "requestable",
  approverGroup: "support-leads",
  approvalsRequired: 1,
  requestDeadlineSec: 86400,
  approvalValiditySec: 3600,
  requireJustification: false,
  reason: "Refunds above EUR 150.00 need a support lead's approval.",
};
const now = new Date("2026-11-30T10:00:00Z");

/** The form rules over a document whose default posture allows: a call no rule matches runs, as before policy documents. */
function compiled(rules: Rule[]): CompiledPolicy {
  const r = compilePolicy(
    { rules, document: { id: "doc-1", version: 1, body: PolicyDocument.parse({ defaults: { posture: "allow" } }) }, tools: policyTools() },
    { strict: false },
  );
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join("; "));
  return r.policy;
}

const subject: EvaluationRequest["subject"] = {
  agentId: "a1",
  agentName: "support-bot",
  user: { id: "u1", email: "rita.requester@countersign.test", name: "Rita", role: "requester", groups: [] },
};

function refund(cents: number, approval?: EvaluationRequest["context"]["approval"]): EvaluationRequest {
  return {
    subject,
    action: { name: "issue_refund" },
    resource: { type: "order", id: "O-2289", properties: { amount_cents: cents, currency: "EUR", refundable_cents: 200000, total_cents: 200000 } },
    context: { args: { order_id: "O-2289", amount: cents / 100 }, history: {}, ...(approval ? { approval } : {}) },
  };
}

describe("policy evaluate (AuthZEN-shaped request)", () => {
  it("allows a refund at or under EUR 150.00", () => {
    const policy = compiled([refundRule]);
    expect(evaluate(refund(15000), policy, now)).toEqual({ decision: "allow", rule: { id: "doc-1", ruleKey: "default", version: 1 } });
    expect(evaluate(refund(4250), policy, now).decision).toBe("allow");
  });

  it("returns a requestable denial above EUR 150.00 with the requirements and the deciding rule version", () => {
    const d = evaluate(refund(18000), compiled([refundRule]), now);
    expect(d).toMatchObject({
      decision: "requestable",
      rule: { id: "r1", ruleKey: "refund-over-limit", version: 3 },
      requirements: { approverGroup: "support-leads", approvalsRequired: 1, requestDeadlineSec: 86400, approvalValiditySec: 3600 },
    });
  });

  it("allows with an unexpired approval from the required group, as re-evaluation input", () => {
    const approval = { approverGroup: "support-leads", approverIds: ["lead"], approvedAt: now, expiresAt: new Date(now.getTime() + 1000) };
    expect(evaluate(refund(18000, approval), compiled([refundRule]), now)).toMatchObject({
      decision: "allow",
      rule: { id: "r1" },
      requirements: { approverGroup: "support-leads", approvalsRequired: 1 },
    });
  });

  it("does not accept an expired approval, one from another group, or too few distinct approvers", () => {
    const policy = compiled([refundRule]);
    const base = { approverGroup: "support-leads", approverIds: ["lead"], approvedAt: now, expiresAt: new Date(now.getTime() + 1000) };
    expect(evaluate(refund(18000, { ...base, expiresAt: now }), policy, now).decision).toBe("requestable");
    expect(evaluate(refund(18000, { ...base, approverGroup: "treasury" }), policy, now).decision).toBe("requestable");
    const twoNeeded = compiled([{ ...refundRule, approvalsRequired: 2 }]);
    expect(evaluate(refund(18000, { ...base, approverIds: ["lead", "lead"] }), twoNeeded, now).decision).toBe("requestable");
    expect(evaluate(refund(18000, { ...base, approverIds: ["lead", "other"] }), twoNeeded, now).decision).toBe("allow");
  });

  it("a plain deny rule wins over a requestable one and cannot be approved", () => {
    const hardLimit: Rule = { ...refundRule, id: "r2", ruleKey: "refund-hard-limit", value: "100000", effect: "deny", reason: "Too large." };
    const approval = { approverGroup: "support-leads", approverIds: ["lead"], approvedAt: now, expiresAt: new Date(now.getTime() + 1000) };
    for (const rules of [[refundRule, hardLimit], [hardLimit, refundRule]]) {
      expect(evaluate(refund(200000, approval), compiled(rules), now)).toMatchObject({ decision: "deny", rule: { id: "r2" }, reason: "Too large." });
    }
  });

  it("rules for other tools do not apply", () => {
    const deploy: EvaluationRequest = {
      subject,
      action: { name: "deploy_service" },
      resource: { type: "service", id: "checkout-api", properties: { environment: "production", version: "1.4.2" } },
      context: { args: { service: "checkout-api", environment: "production", version: "1.4.2" }, history: {} },
    };
    expect(evaluate(deploy, compiled([refundRule]), now).decision).toBe("allow");
  });

  it("a prefix that names a folder (ends in /) covers the folder itself and everything in it, not a sibling that shares the letters", () => {
    const prod: Rule = { ...refundRule, tool: "delete_path", field: "path", operator: "prefix", value: "prod/" };
    const del = (p: string): EvaluationRequest => ({
      subject,
      action: { name: "delete_path" },
      resource: { type: "path", id: p, properties: { path: p, kind: "file" } },
      context: { args: { path: p }, history: {} },
    });
    const folder = compiled([prod]);
    for (const p of ["prod", "prod/logs", "prod/logs/app.log"]) expect(evaluate(del(p), folder, now).decision).toBe("requestable");
    for (const p of ["production", "production/logs", "prodx", "staging/prod", "pro"]) expect(evaluate(del(p), folder, now).decision).toBe("allow");
    // Without the trailing slash, a prefix is a plain string prefix.
    const plain = compiled([{ ...prod, value: "prod" }]);
    for (const p of ["prod", "production"]) expect(evaluate(del(p), plain, now).decision).toBe("requestable");
    // A `*` in the prefix is a literal character, not Cedar's wildcard.
    const star = compiled([{ ...prod, value: "pr*d/" }]);
    expect(evaluate(del("prod/logs"), star, now).decision).toBe("allow");
    expect(evaluate(del("pr*d/logs"), star, now).decision).toBe("requestable");
  });
});
