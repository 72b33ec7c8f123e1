/**
 * Form rules as Cedar (form-rules.ts): each rule compiled with the real engine against a tool with every kind of
 * resource attribute, and decided on resources, so what is tested is what a rule denies, not the text it writes.
 * A rule that cannot be written for its tool denies every call of it; an operator this server does not know
 * matches every call; a threshold in one currency matches calls in any other; the advanced editor's text reads
 * back as the same requirements the rule carries.
 */
import { describe, expect, it } from "vitest";
import { policyJson } from "./cedar";
import { compilePolicy, requirementsFromAnnotations } from "./compile";
import { PolicyDocument } from "./document";
import { compiledFormRules } from "../../tests/support/form-rules";
import { decideCall } from "../../tests/support/policy-call";
import type { Decision, Rule } from "./evaluate";
import { formCondition, formRuleToCedar, likePrefix } from "./form-rules";
import type { PolicyTool } from "./schema";

const TOOL: PolicyTool = {
  name: "act",
  inputSchema: { type: "object", properties: {} },
  resourceEntity: "Thing",
  resourceShape: {
    name: { type: "String" },
    size: { type: "Long" },
    label: { type: "String", optional: true },
    count: { type: "Long", optional: true },
    urgent: { type: "Boolean" },
    paths: { type: "StringSet", folders: "within" },
    within: { type: "StringSet" },
    tags: { type: "StringSet", optional: true },
    /** A set whose folders attribute the tool does not have. */
    loose: { type: "StringSet", optional: true, folders: "missing" },
    amount_cents: { type: "Long" },
    currency: { type: "String" },
    amount: { type: "Money", minor: "amount_cents", currency: "currency" },
    fee_cents: { type: "Long" },
    fee_currency: { type: "String" },
    fee: { type: "Money", minor: "fee_cents", currency: "fee_currency" },
  },
};

/** A tool whose only money is a minor amount and a `currency` beside it (no Money attribute). */
const PLAIN: PolicyTool = { ...TOOL, name: "plain", resourceEntity: "Plain", resourceShape: { amount_cents: { type: "Long" }, currency: { type: "String" } } };
/** A tool without any currency: a threshold's currency cannot be checked, the amount is compared as it is. */
const BARE: PolicyTool = { ...TOOL, name: "bare", resourceEntity: "Bare", resourceShape: { amount_cents: { type: "Long" } } };

const BASE = {
  name: "alpha",
  size: 100,
  urgent: false,
  paths: ["docs/a.txt"],
  within: ["docs", "docs/a.txt"],
  amount_cents: 100,
  currency: "EUR",
  fee_cents: 10,
  fee_currency: "EUR",
};

const rule = (over: Partial<Rule>): Rule => ({
  id: "r1",
  ruleKey: "r",
  version: 1,
  tool: "act",
  field: "name",
  operator: "eq",
  value: "x",
  currency: null,
  effect: "deny",
  approverGroup: null,
  approvalsRequired: 1,
  requestDeadlineSec: 86400,
  approvalValiditySec: 3600,
  requireJustification: false,
  reason: "Not this one.",
  ...over,
});

const ALLOW_ALL = PolicyDocument.parse({ defaults: { posture: "allow" } });

/** The decision on a call of the rule's tool whose resource has `props` over BASE (the tool's posture: allow). */
function decide(r: Rule, props: Record<string, unknown> = {}): Decision {
  const properties = Object.fromEntries(Object.entries({ ...BASE, ...props }).filter(([, v]) => v !== undefined)) as never;
  return decideCall(compiledFormRules([r], [TOOL, PLAIN, BARE]), { tool: r.tool, properties });
}

/** Whether the rule denies a call on this resource (a clean decision either way: no evaluation error). */
function denies(r: Rule, props: Record<string, unknown> = {}): boolean {
  const d = decide(r, props);
  expect(d).not.toHaveProperty("evaluationError");
  return d.decision === "deny";
}

/** Rules that cannot be written for their tool: refused when saved, and every call of the tool denied when stored. */
function unwritable(...overs: Partial<Rule>[]) {
  for (const over of overs) {
    const r = rule(over);
    expect(formRuleToCedar(r, TOOL).problem).toMatch(new RegExp(`rule r: act has no attribute ${r.field} that ${r.operator}`));
    expect(compilePolicy({ rules: [r], document: { id: "d", version: 1, body: ALLOW_ALL }, tools: [TOOL] }, { strict: true }).ok).toBe(false);
    expect(decide(r)).toMatchObject({ decision: "deny", rule: { ruleKey: "r" }, evaluationError: expect.stringMatching(/no longer compiles/) });
  }
}

describe("whole-number comparisons", () => {
  it("gt and gte compare the attribute with the number, at the boundary too", () => {
    const gt = rule({ field: "size", operator: "gt", value: "100" });
    expect([denies(gt, { size: 100 }), denies(gt, { size: 101 })]).toEqual([false, true]);
    const gte = rule({ field: "size", operator: "gte", value: "100" });
    expect([denies(gte, { size: 99 }), denies(gte, { size: 100 })]).toEqual([false, true]);
    // Negative numbers and surrounding spaces are whole numbers too.
    expect(denies(rule({ field: "size", operator: "gt", value: " -5 " }), { size: -4 })).toBe(true);
    expect(denies(rule({ field: "size", operator: "gt", value: " -5 " }), { size: -5 })).toBe(false);
  });

  it("eq on a number is equality of numbers", () => {
    const eq = rule({ field: "size", operator: "eq", value: "100" });
    expect([denies(eq, { size: 100 }), denies(eq, { size: 1000 }), denies(eq, { size: 10 })]).toEqual([true, false, false]);
  });

  it("a value that is not a whole number of at most fifteen digits cannot be compared with a number", () => {
    for (const value of ["1.5", "1e3", "abc", "", "1234567890123456"]) {
      unwritable(
        { field: "size", operator: "gt", value },
        { field: "size", operator: "eq", value },
      );
    }
    expect(denies(rule({ field: "size", operator: "gte", value: "123456789012345" }), { size: 123456789012345 })).toBe(true);
  });

  it("gt and gte compare numbers only, never text, money or a flag", () => {
    unwritable(
      { field: "name", operator: "gt", value: "5" },
      { field: "name", operator: "gte", value: "5" },
      { field: "amount", operator: "gt", value: "5" },
      { field: "amount", operator: "eq", value: "5" },
      { field: "amount", operator: "matches", value: "5" },
      { field: "urgent", operator: "eq", value: "true" },
      { field: "no_such", operator: "eq", value: "x" },
    );
  });
});

describe("text comparisons", () => {
  it("eq is the exact text, quotes and backslashes included", () => {
    const value = 'a "b" \\c';
    expect(denies(rule({ field: "name", value }), { name: value })).toBe(true);
    expect(denies(rule({ field: "name", value }), { name: 'a "b" c' })).toBe(false);
    expect(denies(rule({ field: "name", value: "alpha" }), { name: "Alpha" })).toBe(false);
  });

  it("a prefix ending in / names a folder: the folder itself and what lies in it, not a sibling that starts alike", () => {
    const prod = rule({ field: "name", operator: "prefix", value: "prod/" });
    expect(["prod", "prod/", "prod/logs/a", "production", "pro", "x/prod/a"].map((name) => denies(prod, { name }))).toEqual([true, true, true, false, false, false]);
  });

  it("a prefix without / is a prefix of the text; * in it is a literal star; the root / alone is not the empty name", () => {
    const pre = rule({ field: "name", operator: "prefix", value: "prod" });
    expect([denies(pre, { name: "production" }), denies(pre, { name: "pro" })]).toEqual([true, false]);
    const star = rule({ field: "name", operator: "prefix", value: 'a*"b' });
    expect([denies(star, { name: 'a*"bc' }), denies(star, { name: 'axx"bc' }), denies(star, { name: "a" })]).toEqual([true, false, false]);
    expect(likePrefix('a*"b')).toBe('"a\\*\\"b*"');
    const root = rule({ field: "name", operator: "prefix", value: "/" });
    expect([denies(root, { name: "/etc" }), denies(root, { name: "" })]).toEqual([true, false]);
  });

  it("a prefix compares text only", () => {
    unwritable({ field: "size", operator: "prefix", value: "1" });
  });
});

describe("attributes a resource may lack", () => {
  it("a rule over an optional attribute does not hold when the resource lacks it, and never errors", () => {
    const label = rule({ field: "label", value: "x" });
    expect([denies(label, { label: "x" }), denies(label, { label: "y" }), denies(label, {})]).toEqual([true, false, false]);
    const count = rule({ field: "count", operator: "gt", value: "3" });
    expect([denies(count, { count: 4 }), denies(count, {})]).toEqual([true, false]);
    const tags = rule({ field: "tags", operator: "eq", value: "pii" });
    expect([denies(tags, { tags: ["pii", "x"] }), denies(tags, { tags: ["x"] }), denies(tags, {})]).toEqual([true, false, false]);
  });

  it("a required attribute is compared without a presence test", () => {
    expect(formCondition({ field: "name", operator: "eq", value: "x" }, TOOL)).toBe('resource.name == "x"');
    expect(formCondition({ field: "label", operator: "eq", value: "x" }, TOOL)).toBe('resource has label && resource.label == "x"');
  });
});

describe("sets of paths", () => {
  it("eq holds when any path is the value; a folder prefix when any path is that folder or lies in it", () => {
    const eq = rule({ field: "paths", operator: "eq", value: "docs/a.txt" });
    expect([denies(eq, {}), denies(eq, { paths: ["docs/b.txt"], within: ["docs", "docs/b.txt"] })]).toEqual([true, false]);
    const folder = rule({ field: "paths", operator: "prefix", value: "docs/" });
    expect([denies(folder, {}), denies(folder, { paths: ["doc/a"], within: ["doc", "doc/a"] })]).toEqual([true, false]);    // The shortest folder there is: one character and its slash.
    const short = rule({ field: "paths", operator: "prefix", value: "d/" });
    expect(formCondition(short, TOOL)).toBe('resource.within.contains("d")');
  });

  it("a prefix that is not a folder, a set without its folders, and greater-than cannot be written", () => {
    unwritable(
      { field: "paths", operator: "prefix", value: "docs" },
      { field: "paths", operator: "prefix", value: "/" },
      { field: "tags", operator: "prefix", value: "docs/" },
      { field: "loose", operator: "prefix", value: "docs/" },
      { field: "paths", operator: "gt", value: "1" },
      { field: "paths", operator: "gte", value: "1" },
    );
  });
});

describe("an operator this server does not know", () => {
  it("matches every call of its tool, over text and over a set: an unknown rule never silently allows", () => {
    for (const field of ["name", "paths"]) {
      const r = rule({ field, operator: "matches", value: "zzz" });
      expect(formRuleToCedar(r, TOOL).problem).toBeNull();
      expect(denies(r)).toBe(true);
    }
  });
});

describe("money thresholds in a currency", () => {
  it("a call in the rule's currency is compared; one in any other currency matches whatever its amount", () => {
    const eur = rule({ field: "amount_cents", operator: "gt", value: "15000", currency: "EUR" });
    expect([denies(eur, { amount_cents: 15000 }), denies(eur, { amount_cents: 15001 })]).toEqual([false, true]);
    expect(denies(eur, { amount_cents: 1, currency: "USD" })).toBe(true);
  });

  it("the currency read is the one of the money the compared amount belongs to", () => {
    const fee = rule({ field: "fee_cents", operator: "gt", value: "50", currency: "EUR" });
    expect([denies(fee, { fee_cents: 10 }), denies(fee, { fee_cents: 60 })]).toEqual([false, true]);
    // The fee in dollars matches although the amount beside it is in euros.
    expect(denies(fee, { fee_cents: 10, fee_currency: "USD" })).toBe(true);
    expect(denies(fee, { fee_cents: 10, currency: "USD" })).toBe(false);
  });

  it("without a money attribute the resource's currency is read; without any currency the amount is compared as it is", () => {
    const plain = rule({ tool: "plain", field: "amount_cents", operator: "gt", value: "50", currency: "EUR" });
    expect([denies(plain, { amount_cents: 10 }), denies(plain, { amount_cents: 10, currency: "USD" })]).toEqual([false, true]);
    const bare = rule({ tool: "bare", field: "amount_cents", operator: "gt", value: "50", currency: "EUR" });
    expect([denies(bare, { amount_cents: 10 }), denies(bare, { amount_cents: 60 })]).toEqual([false, true]);
  });

  it("a rule without a currency compares the amount in whatever currency the call is", () => {
    const any = rule({ field: "amount_cents", operator: "gt", value: "50" });
    expect([denies(any, { amount_cents: 10, currency: "USD" }), denies(any, { amount_cents: 60, currency: "USD" })]).toEqual([false, true]);
  });
});

describe("requestable rules and the text the advanced editor shows", () => {
  const requestable = rule({ effect: "requestable", approverGroup: "treasury", approvalsRequired: 2, requestDeadlineSec: 7200, approvalValiditySec: 600, reason: "Two treasurers look first." });

  it("a requestable rule asks its approver group; without a group it is a plain denial", () => {
    expect(decide(requestable, { name: "x" })).toMatchObject({ decision: "requestable", rule: { ruleKey: "r" }, reason: "Two treasurers look first.", requirements: { approverGroup: "treasury", approvalsRequired: 2 } });
    expect(decide({ ...requestable, approverGroup: null }, { name: "x" })).toMatchObject({ decision: "deny", reason: "Two treasurers look first." });
    expect(formRuleToCedar({ ...requestable, approverGroup: null }, TOOL).text).not.toContain("@approvers");
    expect(formRuleToCedar({ ...requestable, effect: "deny" }, TOOL).text).not.toContain("@approvers");
  });

  it.each([
    ["plain", {}],
    ["with justification", { requireJustification: true }],
    ["with a passkey", { requirePasskey: true }],
    ["with escalation", { escalateAfterSec: 1800, fallbackGroup: "sre" }],
    ["everything", { requireJustification: true, requirePasskey: true, escalateAfterSec: 1800, fallbackGroup: "sre" }],
  ])("the written annotations read back as the requirements the rule carries: %s", (_label, over) => {
    const r = { ...requestable, ...over };
    const { text, problem } = formRuleToCedar(r, TOOL);
    expect(problem).toBeNull();
    const read = requirementsFromAnnotations(policyJson(text));
    const compiled = compilePolicy({ rules: [r], document: { id: "d", version: 1, body: ALLOW_ALL }, tools: [TOOL] }, { strict: true });
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.problems));
    expect(read).toEqual({ requirements: compiled.policy.meta.get("rule:r")!.requirements, reason: r.reason });
  });

  it("half an escalation (a time without a group) is not written", () => {
    expect(formRuleToCedar({ ...requestable, escalateAfterSec: 1800, fallbackGroup: null }, TOOL).text).not.toContain("@escalate");
    expect(formRuleToCedar({ ...requestable, escalateAfterSec: null, fallbackGroup: "sre" }, TOOL).text).not.toContain("@fallback");
  });

  it("a rule for a tool that does not exist says so, and its text denies every call of that tool", () => {
    const { text, problem } = formRuleToCedar(rule({ tool: "gone" }), undefined);
    expect(problem).toBe("rule r: there is no tool gone");
    expect(policyJson(text)).toMatchObject({ effect: "forbid", action: { op: "==", entity: { type: "Action", id: "gone" } }, conditions: [] });
    // The text the advanced editor shows for it: named after its rule, with the words of its denial.
    expect(text).toBe('@id("rule:r")\n@reason("The policy rule r could not be evaluated, so the call is denied.")\nforbid (principal, action == Action::"gone", resource);');
  });
});
