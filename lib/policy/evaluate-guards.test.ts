/**
 * The guards of the pure decision that the SEP's MUSTs rest on: a denial that cannot be approved stays a denial, a
 * requestable denial never executes without an approval that meets the strictest matching rule, and an approval is
 * honoured only while valid, from the required group, with enough distinct approvers.
 */
import { describe, expect, it } from "vitest";
import { compiledFormRules } from "../../tests/support/form-rules";
import { policyTools } from "../tools/catalog";
import { compilePolicy } from "./compile";
import { DEMO_DOCUMENT } from "./demo-policy";
import { PolicyDocument } from "./document";
import { errorDetail, evaluate, strictness, visibleTools, type ApprovalInput, type EvaluationRequest, type Rule } from "./evaluate";

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

const compiled = compiledFormRules;

const decide = (req: EvaluationRequest, rules: Rule[]) => evaluate(req, compiled(rules), now);

/** A policy document (with the form's `rules` beside it), compiled strictly as version 1 of `doc-1`. */
function compiledDocument(body: Record<string, unknown>, rules: Rule[] = []) {
  const r = compilePolicy({ rules, document: { id: "doc-1", version: 1, body: PolicyDocument.parse(body) }, tools: policyTools() }, { strict: true });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.policy;
}

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

describe("ties between requestable denials", () => {
  it("between rules alike in approvals and validity, the shorter request deadline decides, in either order", () => {
    const long = rule({ id: "long", ruleKey: "a-long", requestDeadlineSec: 7200 });
    const short = rule({ id: "short", ruleKey: "z-short", requestDeadlineSec: 3600 });
    for (const rules of [[long, short], [short, long]]) {
      expect(decide(call({ environment: "production" }), rules)).toMatchObject({ rule: { id: "short" }, requirements: { requestDeadlineSec: 3600 } });
    }
    const needs = (requestDeadlineSec: number) => ({ approverGroup: "sre", approvalsRequired: 1, approvalValiditySec: 1800, requestDeadlineSec, requireJustification: false });
    expect(strictness(needs(7200), needs(3600))).toBeGreaterThan(0);
    expect(strictness(needs(3600), needs(7200))).toBeLessThan(0);
  });

  it("between a form rule and a policy of the document as strict, the form rule decides (its words are the admin's for that tool)", () => {
    const policies = `
@id("a-doc")
@approvers("sre")
@quorum("1")
@deadline("1h")
@validity("30m")
@reason("The document's words.")
forbid (principal, action == Action::"deploy_service", resource) when { resource.environment == "production" };`;
    expect(evaluate(call({ environment: "production" }), compiledDocument({ defaults: { posture: "allow" }, policies }, [rule({})]), now)).toMatchObject({
      decision: "requestable",
      rule: { id: "r1", ruleKey: "deploy-production" },
      reason: "Production deploys need an SRE's approval.",
    });
  });
});

describe("ties between the document's own policies", () => {
  it("between policies as strict, the first written decides, whatever their names", () => {
    const requestable = (id: string) => `
@id("${id}")
@approvers("sre")
@deadline("1h")
@validity("30m")
@reason("Said by ${id}.")
forbid (principal, action == Action::"deploy_service", resource) when { resource.environment == "production" };`;
    for (const [first, second] of [["z-first", "a-second"], ["a-first", "z-second"]]) {
      const policies = requestable(first) + requestable(second);
      expect(evaluate(call({ environment: "production" }), compiledDocument({ defaults: { posture: "allow" }, policies }), now)).toMatchObject({ decision: "requestable", rule: { ruleKey: first }, reason: `Said by ${first}.` });
    }
  });
});

describe("a permit and a requestable forbid under a denying default", () => {
  const PERMIT = `@id("staging-deploys") permit (principal, action == Action::"deploy_service", resource) when { resource.environment != "qa" };`;
  const REQUESTABLE = `
@id("production-deploys")
@approvers("sre")
@deadline("1h")
@validity("30m")
@reason("Production deploys need an SRE's approval.")
forbid (principal, action == Action::"deploy_service", resource) when { resource.environment == "production" };`;
  const sre = { approverGroup: "sre", approvalsRequired: 1, requestDeadlineSec: 3600, approvalValiditySec: 1800 };
  const denying = (policies: string) => compiledDocument({ defaults: { posture: "deny" }, policies });

  it("a requestable forbid alone does not open a tool the default denies: no approval turns it into an allow", () => {
    const policy = denying(REQUESTABLE);
    for (const a of [undefined, approval()]) {
      const d = evaluate(call({ environment: "production" }, a), policy, now);
      expect(d).toMatchObject({ decision: "deny", reason: "No policy permits ops-bot to call deploy_service." });
      expect(d).not.toHaveProperty("requirements");
    }
  });

  it("a permit that holds allows the call, names itself, and asks for nothing", () => {
    const d = evaluate(call({ environment: "staging" }), denying(PERMIT), now);
    expect(d).toStrictEqual({ decision: "allow", rule: { id: "doc-1", ruleKey: "staging-deploys", version: 1 } });
  });

  it("with both holding, the call is a requestable denial of the forbid, cleared only by an approval that meets it", () => {
    const policy = denying(PERMIT + REQUESTABLE);
    expect(evaluate(call({ environment: "production" }), policy, now)).toMatchObject({
      decision: "requestable",
      rule: { ruleKey: "production-deploys" },
      reason: "Production deploys need an SRE's approval.",
      requirements: sre,
    });
    expect(evaluate(call({ environment: "production" }, approval()), policy, now)).toMatchObject({ decision: "allow", rule: { ruleKey: "production-deploys" }, requirements: sre });
    expect(evaluate(call({ environment: "production" }, approval({ approverGroup: "leads" })), policy, now)).toMatchObject({ decision: "requestable" });
  });
});

describe("what evaluation says when it cannot decide", () => {
  it("denies a tool the policy was not compiled for, naming the tool", () => {
    expect(decide({ ...call({ environment: "staging" }), action: { name: "no_such_tool" } }, [])).toMatchObject({
      decision: "deny",
      rule: { ruleKey: "evaluation-error" },
      evaluationError: "the tool no_such_tool is not in the policy's catalog",
    });
  });

  it("lets an unexpected error through rather than calling it a policy's denial", () => {
    const broken = { ...call({ environment: "staging" }), resource: { type: "service", id: "checkout-api", properties: null as never } };
    expect(() => decide(broken, [])).toThrow(TypeError);
  });

  it("names who may not call what when no policy permits it and the default posture denies", () => {
    expect(evaluate(call({ environment: "staging" }), compiledDocument({ defaults: { posture: "deny" } }), now)).toMatchObject({ decision: "deny", reason: "No policy permits ops-bot to call deploy_service." });
  });

  it("keeps names in an error for the audit trail and hides every value, joined and bounded", () => {
    expect(errorDetail(["for policy `p-1`, `User::\"u1\"` has no attribute `context.args.amount`", "value `4000.5` or `two words` or `1abc`"])).toBe(
      "for policy `p-1`, `User::\"u1\"` has no attribute `context.args.amount`; value `…` or `…` or `…`",
    );
    expect(errorDetail(["`a b`c`"])).toBe("`…`c`");
    expect(errorDetail(["x".repeat(400)])).toHaveLength(300);
  });
});

describe("visibleTools", () => {
  const everyTool = () => new Set(compiled([]).tools.keys());
  it("remembers a principal's answer and forgets all of them past 500 principals", () => {
    const policy = compiled([]);
    const first = visibleTools(policy, subject);
    expect(visibleTools(policy, subject)).toBe(first);
    for (let i = 0; i < 500; i++) visibleTools(policy, { ...subject, agentId: `a-${i}` });
    expect(policy.visibility.size).toBe(501);
    visibleTools(policy, { ...subject, agentId: "a-500" });
    expect(policy.visibility.size).toBe(1);
  });

  const listed = (policies: string, posture: "allow" | "deny") => {
    return [...visibleTools(compiledDocument({ ...DEMO_DOCUMENT, policies, tests: [], defaults: { posture } }), subject)].sort();
  };

  it("hides a tool a plain forbid denies every call of; shows one whose forbid depends on the call's arguments, history or time", () => {
    const policies = `
@id("no-deletes") forbid (principal, action == Action::"delete_path", resource);
@id("big-refunds") forbid (principal, action == Action::"issue_refund", resource) when { context.args has amount && context.args.amount.greaterThan(decimal("1000.0")) };
@id("repeat-wires") forbid (principal, action == Action::"wire_transfer", resource) when { context.history.wire_to_account_24h.count > 3 };
@id("future-deploys") forbid (principal, action == Action::"deploy_service", resource) when { context.time.now > datetime("2100-01-01T00:00:00Z") };`;
    expect(listed(policies, "allow")).toEqual(["deploy_service", "issue_refund", "wire_transfer"]);
  });

  it("shows a tool every call of which is a requestable denial: an approval can clear it", () => {
    const policies = `@id("deletes-reviewed") @approvers("sre") @reason("Every delete is reviewed.") forbid (principal, action == Action::"delete_path", resource);`;
    expect(listed(policies, "allow")).toEqual(["delete_path", "deploy_service", "issue_refund", "wire_transfer"]);
  });

  it("with a denying default, shows only the tools a permit may hold for, on any condition", () => {
    const policies = `
@id("small-refunds") permit (principal, action == Action::"issue_refund", resource) when { context.args has amount && context.args.amount.lessThan(decimal("10.0")) };
@id("quiet-wires") permit (principal, action == Action::"wire_transfer", resource) when { context.history.wire_to_account_24h.count == 0 };
@id("later-deploys") permit (principal, action == Action::"deploy_service", resource) when { context.time.now > datetime("2100-01-01T00:00:00Z") };`;
    expect(listed(policies, "deny")).toEqual(["deploy_service", "issue_refund", "wire_transfer"]);
    expect(listed(`${policies}\n@id("any-delete") permit (principal, action == Action::"delete_path", resource);`, "deny")).toEqual(["delete_path", "deploy_service", "issue_refund", "wire_transfer"]);
  });

  it("shows a tool when partial evaluation fails: listing is a courtesy, every call is still evaluated", () => {
    const policy = { ...compiled([]), evaluated: { broken: "forbid (principal, action, resource) when { ?? };" }, visibility: new Map(), settled: new Map() };
    expect(visibleTools(policy, subject)).toEqual(everyTool());
  });
});
