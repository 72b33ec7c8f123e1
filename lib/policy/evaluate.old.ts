import { describe, expect, it } from "vitest";
import { evaluate, type EvaluationRequest, type Rule } from "./evaluate";

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

function refund(cents: number, approval?: EvaluationRequest["context"]["approval"]): EvaluationRequest {
  return {
    subject: { type: "user", id: "u1", properties: { agentId: "a1" } },
    action: { name: "issue_refund" },
    resource: { type: "order", id: "O-2289", properties: { amount_cents: cents, currency: "EUR" } },
    context: { approval },
  };
}

describe("policy evaluate (AuthZEN-shaped request)", () => {
  it("allows a refund at or under EUR 150.00", () => {
    expect(evaluate(refund(15000), [refundRule], now)).toEqual({ decision: "allow", rule: null });
    expect(evaluate(refund(4250), [refundRule], now).decision).toBe("allow");
  });

  it("returns a requestable denial above EUR 150.00 with the requirements and the deciding rule version", () => {
    const d = evaluate(refund(18000), [refundRule], now);
    expect(d).toMatchObject({
      decision: "requestable",
      rule: { id: "r1", ruleKey: "refund-over-limit", version: 3 },
      requirements: { approverGroup: "support-leads", approvalsRequired: 1, requestDeadlineSec: 86400, approvalValiditySec: 3600 },
    });
  });

  it("allows with an unexpired approval from the required group, as re-evaluation input", () => {
    const approval = { approverGroup: "support-leads", approverIds: ["lead"], approvedAt: now, expiresAt: new Date(now.getTime() + 1000) };
    expect(evaluate(refund(18000, approval), [refundRule], now)).toMatchObject({
      decision: "allow",
      rule: { id: "r1" },
      requirements: { approverGroup: "support-leads", approvalsRequired: 1 },
    });
  });

  it("does not accept an expired approval, one from another group, or too few distinct approvers", () => {
    const base = { approverGroup: "support-leads", approverIds: ["lead"], approvedAt: now, expiresAt: new Date(now.getTime() + 1000) };
    expect(evaluate(refund(18000, { ...base, expiresAt: now }), [refundRule], now).decision).toBe("requestable");
    expect(evaluate(refund(18000, { ...base, approverGroup: "treasury" }), [refundRule], now).decision).toBe("requestable");
    const twoNeeded = { ...refundRule, approvalsRequired: 2 };
    expect(evaluate(refund(18000, { ...base, approverIds: ["lead", "lead"] }), [twoNeeded], now).decision).toBe("requestable");
    expect(evaluate(refund(18000, { ...base, approverIds: ["lead", "other"] }), [twoNeeded], now).decision).toBe("allow");
  });

  it("a plain deny rule wins over a requestable one and cannot be approved", () => {
    const hardLimit: Rule = { ...refundRule, id: "r2", ruleKey: "refund-hard-limit", value: "100000", effect: "deny", reason: "Too large." };
    const approval = { approverGroup: "support-leads", approverIds: ["lead"], approvedAt: now, expiresAt: new Date(now.getTime() + 1000) };
    expect(evaluate(refund(200000, approval), [refundRule, hardLimit], now)).toMatchObject({ decision: "deny", reason: "Too large." });
  });

  it("rules for other tools do not apply", () => {
    expect(evaluate({ ...refund(18000), action: { name: "deploy_service" } }, [refundRule], now).decision).toBe("allow");
  });

  it("a prefix that names a folder (ends in /) covers the folder itself and everything in it, not a sibling that shares the letters", () => {
    const prod: Rule = { ...refundRule, tool: "delete_path", field: "path", operator: "prefix", value: "prod/" };
    const del = (p: string): EvaluationRequest => ({ ...refund(0), action: { name: "delete_path" }, resource: { type: "path", id: p, properties: { path: p } } });
    for (const p of ["prod", "prod/logs", "prod/logs/app.log"]) expect(evaluate(del(p), [prod], now).decision).toBe("requestable");
    for (const p of ["production", "production/logs", "prodx", "staging/prod", "pro"]) expect(evaluate(del(p), [prod], now).decision).toBe("allow");
    // Without the trailing slash, a prefix is a plain string prefix.
    const plain = { ...prod, value: "prod" };
    for (const p of ["prod", "production"]) expect(evaluate(del(p), [plain], now).decision).toBe("requestable");
  });
});
