/**
 * The Cedar policy's decisions, pure (no database): the seeded demo policy compiled with the demo form rules and
 * the real tool catalog, evaluated by `evaluate` with a fixed `now`. What the policy must express (conditions on
 * arguments, the principal, the resource now, history and time; default posture; requestable denials), what strict
 * compilation refuses with a line and column, and how evaluation errors and stale stored policies deny.
 */
import { describe, expect, it } from "vitest";
import { DEMO_RULES } from "../db/seed";
import { policyTools } from "../tools/catalog";
import { compilePolicy, type CompileResult } from "./compile";
import { DEMO_DOCUMENT, withoutPolicy } from "./demo-policy";
import { PolicyDocument, type PolicyTest } from "./document";
import { evaluate, visibleTools, type CompiledPolicy, type Decision, type ResourceView, type Rule, type Subject } from "./evaluate";
import type { PolicyTool } from "./schema";

const T0 = new Date("2100-11-30T10:00:00.000Z");

const DEMO_FORM_RULES: Rule[] = DEMO_RULES.map((r, i) => ({ ...r, id: `rule-${i}`, version: 1, currency: null, requireJustification: false }));

function compileDoc(body: unknown, opts: { strict: boolean; rules?: Rule[]; tools?: PolicyTool[] } = { strict: true }): CompileResult {
  return compilePolicy(
    { rules: opts.rules ?? DEMO_FORM_RULES, document: { id: "doc-1", version: 1, body: PolicyDocument.parse(body) }, tools: opts.tools ?? policyTools() },
    { strict: opts.strict },
  );
}

function compiled(body: unknown = DEMO_DOCUMENT, opts: { strict?: boolean; rules?: Rule[]; tools?: PolicyTool[] } = {}): CompiledPolicy {
  const r = compileDoc(body, { strict: opts.strict ?? true, rules: opts.rules, tools: opts.tools });
  if (!r.ok) throw new Error(`does not compile: ${JSON.stringify(r.problems)}`);
  return r.policy;
}

const withPolicies = (policies: string, more: Record<string, unknown> = {}) => ({ ...DEMO_DOCUMENT, policies, tests: [], ...more });

type Who = { agent?: string; email?: string; role?: string; groups?: string[] };

function subject(who: Who = {}): Subject {
  const agent = who.agent ?? "ops-bot";
  return {
    agentId: `agent-${agent}`,
    agentName: agent,
    user: { id: `user-${agent}`, email: who.email ?? `${agent}@countersign.test`, name: agent, role: who.role ?? "requester", groups: who.groups ?? [] },
  };
}

/** One call: zero history for every window of the tool unless given. */
function decide(
  policy: CompiledPolicy,
  call: { tool: string; args: unknown; resource: ResourceView; history?: Record<string, { total: number; count: number }>; who?: Who; at?: Date },
): Decision {
  const history = Object.fromEntries(policy.document.history.filter((h) => h.tool === call.tool).map((h) => [h.name, call.history?.[h.name] ?? { total: 0, count: 0 }]));
  return evaluate({ subject: subject(call.who), action: { name: call.tool }, resource: call.resource, context: { args: call.args, history } }, policy, call.at ?? T0);
}

const wire = (usd: number, to = "acct-991"): { tool: string; args: unknown; resource: ResourceView } => ({
  tool: "wire_transfer",
  args: { to, amount: usd },
  resource: { type: "account", id: to, properties: { amount_cents: Math.round(usd * 100), currency: "USD" } },
});

const refund = (eur: number, refundableEur = 320, totalEur = 520) => ({
  tool: "issue_refund",
  args: { order_id: "O-4410", amount: eur },
  resource: {
    type: "order",
    id: "O-4410",
    properties: { amount_cents: Math.round(eur * 100), currency: "EUR", refundable_cents: refundableEur * 100, total_cents: totalEur * 100 },
  },
});

const deploy = (environment: "production" | "staging", at: Date) => ({
  tool: "deploy_service",
  args: { service: "checkout-api", environment, version: "1.4.2" },
  resource: { type: "service", id: "checkout-api", properties: { environment, version: "1.4.2" } },
  at,
});

const del = (path: string) => ({ tool: "delete_path", args: { path }, resource: { type: "path", id: path, properties: { path, kind: "file" } } });

/** A policy test case of a document, evaluated as the file says (its resource, history and time). */
function runCase(policy: CompiledPolicy, t: PolicyTest): Decision {
  return decide(policy, {
    tool: t.call.tool,
    args: t.call.arguments,
    resource: t.resource!,
    history: t.history,
    who: { agent: t.principal.agent, email: t.principal.user, role: t.principal.role, groups: t.principal.groups },
    at: t.at ? new Date(t.at) : T0,
  });
}

function expectRequestable(d: Decision, ruleKey: string, approvals: number, group?: string) {
  expect(d).toMatchObject({ decision: "requestable", rule: { ruleKey }, requirements: { approvalsRequired: approvals } });
  if (group && d.decision === "requestable") expect(d.requirements.approverGroup).toBe(group);
}

describe("the seeded demo policy", () => {
  it("compiles strictly with zero problems, with and without the business-hours policy, and leniently with none", () => {
    for (const body of [DEMO_DOCUMENT, withoutPolicy(DEMO_DOCUMENT, "deploy-production-after-hours")]) {
      const strict = compileDoc(body, { strict: true });
      expect(strict.ok ? [] : strict.problems).toEqual([]);
      const lenient = compileDoc(body, { strict: false });
      expect(lenient.ok && lenient.policy.problems).toEqual([]);
    }
  });

  it("holds every test case the demo document ships (its resource, history and time)", () => {
    const policy = compiled();
    const doc = PolicyDocument.parse(DEMO_DOCUMENT);
    expect(doc.tests.length).toBeGreaterThanOrEqual(6);
    for (const t of doc.tests) {
      const d = runCase(policy, t);
      expect({ name: t.name, decision: d.decision }).toEqual({ name: t.name, decision: t.expect });
      if (t.by) expect({ name: t.name, by: d.decision === "allow" ? d.rule?.ruleKey : d.rule.ruleKey }).toEqual({ name: t.name, by: t.by });
    }
  });
});

describe("splitting: history totals decide", () => {
  const policy = compiled();

  it("a first USD 25,000 transfer to an account runs; a second within 24 hours needs two treasury approvals", () => {
    expect(decide(policy, wire(25_000))).toMatchObject({ decision: "allow" });
    expectRequestable(decide(policy, { ...wire(25_000), history: { wire_to_account_24h: { total: 2_500_000, count: 1 } } }), "wire-account-24h", 2, "treasury");
    // Eleven earlier transfers (whatever their state) still count.
    expectRequestable(decide(policy, { ...wire(1), history: { wire_to_account_24h: { total: 27_500_000, count: 11 } } }), "wire-account-24h", 2, "treasury");
  });

  it("refunds of 150, 150 and 20 on one order: the first runs, the second and the third need a lead", () => {
    expect(decide(policy, refund(150))).toMatchObject({ decision: "allow" });
    expectRequestable(decide(policy, { ...refund(150, 170), history: { refunds_per_order: { total: 15_000, count: 1 } } }), "refund-order-total", 1, "support-leads");
    expectRequestable(decide(policy, { ...refund(20, 20), history: { refunds_per_order: { total: 30_000, count: 2 } } }), "refund-order-total", 1, "support-leads");
  });

  it("one refund of EUR 320 needs a lead by the form rule", () => {
    expectRequestable(decide(policy, refund(320)), "refund-over-limit", 1, "support-leads");
  });

  it("an approval from the required group with enough distinct approvers clears the requestable denial; one short does not", () => {
    const call = { ...wire(25_000), history: { wire_to_account_24h: { total: 2_500_000, count: 1 } } };
    const approval = (ids: string[], group = "treasury") => ({ approverGroup: group, approverIds: ids, approvedAt: T0, expiresAt: new Date(T0.getTime() + 3600_000) });
    const ok = evaluate({ subject: subject(), action: { name: "wire_transfer" }, resource: call.resource, context: { args: call.args, history: call.history, approval: approval(["a", "b"]) } }, policy, T0);
    expect(ok).toMatchObject({ decision: "allow", requirements: { approvalsRequired: 2 } });
    for (const a of [approval(["a", "a"]), approval(["a", "b"], "support-leads")]) {
      const short = evaluate({ subject: subject(), action: { name: "wire_transfer" }, resource: call.resource, context: { args: call.args, history: call.history, approval: a } }, policy, T0);
      expect(short.decision).toBe("requestable");
    }
  });

  it("history that was not measured is an evaluation error, not a zero", () => {
    const d = evaluate({ subject: subject(), action: { name: "wire_transfer" }, resource: wire(25_000).resource, context: { args: wire(25_000).args, history: {} } }, policy, T0);
    expect(d).toMatchObject({ decision: "deny", evaluationError: expect.stringContaining("wire_to_account_24h") });
  });
});

describe("per-agent scoping", () => {
  const policy = compiled();

  it("the support bot's wire transfer is a plain denial that no approval can clear; its refund runs", () => {
    const d = decide(policy, { ...wire(10), who: { agent: "support-bot" } });
    expect(d).toMatchObject({ decision: "deny", rule: { ruleKey: "support-bot-refunds-only" } });
    expect(d).not.toHaveProperty("evaluationError");
    const approved = evaluate(
      {
        subject: subject({ agent: "support-bot" }),
        action: { name: "wire_transfer" },
        resource: wire(10).resource,
        context: { args: wire(10).args, history: { wire_to_account_24h: { total: 0, count: 0 } }, approval: { approverGroup: "treasury", approverIds: ["a", "b", "c"], approvedAt: T0, expiresAt: new Date(T0.getTime() + 3600_000) } },
      },
      policy,
      T0,
    );
    expect(approved.decision).toBe("deny");
    expect(decide(policy, { ...refund(20), who: { agent: "support-bot" } })).toMatchObject({ decision: "allow" });
  });

  it("tools policy can never permit are hidden: the support bot sees only issue_refund, the ops bot every demo tool", () => {
    expect([...visibleTools(policy, subject({ agent: "support-bot" }))].sort()).toEqual(["issue_refund"]);
    expect([...visibleTools(policy, subject({ agent: "ops-bot" }))].sort()).toEqual(["delete_path", "deploy_service", "issue_refund", "wire_transfer"]);
  });
});

describe("time: business hours in Europe/Berlin", () => {
  const policy = compiled();

  it("a production deploy at 10:00 Berlin needs one SRE (the form rule); at 19:00 Berlin two SREs", () => {
    expectRequestable(decide(policy, deploy("production", new Date("2100-11-30T09:00:00Z"))), "deploy-production", 1, "sre");
    expectRequestable(decide(policy, deploy("production", new Date("2100-11-30T18:00:00Z"))), "deploy-production-after-hours", 2, "sre");
    expect(decide(policy, deploy("staging", new Date("2100-11-30T18:00:00Z")))).toMatchObject({ decision: "allow" });
  });

  it("the boundaries are 08:00 and 18:00 local: 07:59 and 18:00 are after hours, 08:00 and 17:59 are not", () => {
    const at = (utc: string) => decide(policy, deploy("production", new Date(utc)));
    expectRequestable(at("2100-11-30T06:59:00Z"), "deploy-production-after-hours", 2); // 07:59 CET
    expectRequestable(at("2100-11-30T07:00:00Z"), "deploy-production", 1); // 08:00 CET
    expectRequestable(at("2100-11-30T16:59:00Z"), "deploy-production", 1); // 17:59 CET
    expectRequestable(at("2100-11-30T17:00:00Z"), "deploy-production-after-hours", 2); // 18:00 CET
  });

  it("summer and winter time: the same UTC instant is within hours in winter (CET) and after hours in summer (CEST)", () => {
    // 16:30 UTC is 17:30 CET in January and 18:30 CEST in July.
    expectRequestable(decide(policy, deploy("production", new Date("2100-01-15T16:30:00Z"))), "deploy-production", 1);
    expectRequestable(decide(policy, deploy("production", new Date("2100-07-15T16:30:00Z"))), "deploy-production-after-hours", 2);
    // 06:30 UTC is 07:30 CET (after hours) and 08:30 CEST (within hours).
    expectRequestable(decide(policy, deploy("production", new Date("2100-01-15T06:30:00Z"))), "deploy-production-after-hours", 2);
    expectRequestable(decide(policy, deploy("production", new Date("2100-07-15T06:30:00Z"))), "deploy-production", 1);
  });

  it("on the night the clocks change (last Sunday of March 2100, 01:00 UTC), local hours follow the offset", () => {
    // 2100-03-28: 06:30 UTC is 08:30 CEST (the change was at 01:00 UTC), the day before 06:30 UTC is 07:30 CET.
    expectRequestable(decide(policy, deploy("production", new Date("2100-03-27T06:30:00Z"))), "deploy-production-after-hours", 2);
    expectRequestable(decide(policy, deploy("production", new Date("2100-03-28T06:30:00Z"))), "deploy-production", 1);
  });
});

describe("default posture", () => {
  const onlyRefunds = `@id("refunds") permit (principal, action == Action::"issue_refund", resource);`;
  const REQ = { requestable: { approvers: "sre", quorum: 2, deadline: "8h", validity: "1h", reason: "Needs two SREs by default." } };
  const REQ1 = { requestable: { approvers: "sre", quorum: 1, deadline: "8h", validity: "1h", reason: "Needs one SRE by default." } };

  it("a tool that no policy permits is denied by the default deny, and hidden from tools/list", () => {
    const policy = compiled(withPolicies(onlyRefunds), { rules: [] });
    expect(decide(policy, del("tmp/x"))).toMatchObject({ decision: "deny", rule: { ruleKey: "default" } });
    expect(decide(policy, refund(20))).toMatchObject({ decision: "allow", rule: { ruleKey: "refunds" } });
    expect([...visibleTools(policy, subject())]).toEqual(["issue_refund"]);
  });

  it("an empty document denies every call", () => {
    const policy = compiled({}, { rules: [] });
    for (const c of [del("tmp/x"), refund(20), wire(1)]) expect(decide(policy, c)).toMatchObject({ decision: "deny", rule: { ruleKey: "default" } });
    expect(visibleTools(policy, subject()).size).toBe(0);
  });

  it("posture per tool: allow runs, requestable asks with its requirements", () => {
    const policy = compiled(withPolicies(onlyRefunds, { defaults: { posture: "deny", tools: { delete_path: "allow", deploy_service: REQ }, agents: {} } }), { rules: [] });
    expect(decide(policy, del("tmp/x"))).toMatchObject({ decision: "allow", rule: { ruleKey: "default:tool:delete_path" } });
    expect(decide(policy, deploy("staging", T0))).toMatchObject({
      decision: "requestable",
      rule: { ruleKey: "default:tool:deploy_service" },
      reason: "Needs two SREs by default.",
      requirements: { approverGroup: "sre", approvalsRequired: 2, requestDeadlineSec: 8 * 3600, approvalValiditySec: 3600 },
    });
    expect(decide(policy, wire(1))).toMatchObject({ decision: "deny", rule: { ruleKey: "default" } });
    expect([...visibleTools(policy, subject())].sort()).toEqual(["delete_path", "deploy_service", "issue_refund"]);
  });

  it("posture per agent and per tool: the strictest of both wins", () => {
    const defaults = { posture: "allow", tools: { delete_path: "allow", deploy_service: REQ1, wire_transfer: REQ1 }, agents: { "ops-bot": "deny", "support-bot": REQ } };
    const policy = compiled(withPolicies(onlyRefunds, { defaults }), { rules: [] });
    // ops-bot: agent deny beats tool allow and tool requestable.
    expect(decide(policy, del("tmp/x"))).toMatchObject({ decision: "deny", rule: { ruleKey: "default:agent:ops-bot" } });
    expect(decide(policy, deploy("staging", T0))).toMatchObject({ decision: "deny", rule: { ruleKey: "default:agent:ops-bot" } });
    // support-bot: agent requestable (2) beats tool allow, and beats the tool's requestable (1).
    expectRequestable(decide(policy, { ...del("tmp/x"), who: { agent: "support-bot" } }), "default:agent:support-bot", 2);
    expectRequestable(decide(policy, { ...deploy("staging", T0), who: { agent: "support-bot" } }), "default:agent:support-bot", 2);
    // another agent: the tool's posture.
    expectRequestable(decide(policy, { ...deploy("staging", T0), who: { agent: "other-bot" } }), "default:tool:deploy_service", 1);
    // A permit decides before any posture.
    expect(decide(policy, refund(20))).toMatchObject({ decision: "allow", rule: { ruleKey: "refunds" } });
    expect([...visibleTools(policy, subject({ agent: "ops-bot" }))]).toEqual(["issue_refund"]);
  });
});

describe("conditions on arguments, the principal and the resource now", () => {
  const SHIP: PolicyTool = {
    name: "ship_parcel",
    inputSchema: {
      type: "object",
      properties: {
        destination: { type: "object", properties: { country: { type: "string" }, zip: { type: "string" } }, required: ["country"] },
        weight_grams: { type: "integer" },
        value: { type: "number" },
        tags: { type: "array", items: { type: "string" } },
      },
      required: ["destination", "weight_grams", "value"],
    },
    resourceEntity: "Parcel",
    resourceShape: { carrier: { type: "String" } },
  };
  const tools = [...policyTools(), SHIP];
  const text = `@id("ship")
permit (principal, action == Action::"ship_parcel", resource);

@id("ship-heavy-abroad")
@reason("Heavy parcels abroad need logistics.")
@approvers("logistics")
forbid (principal, action == Action::"ship_parcel", resource)
when { context.args.destination.country != "DE" && context.args.weight_grams > 20000 };

@id("ship-valuable")
@reason("Valuable parcels need two from logistics.")
@approvers("logistics")
@quorum("2")
forbid (principal, action == Action::"ship_parcel", resource)
when { context.args.value.greaterThan(decimal("1000.50")) };

@id("ship-hazmat")
@reason("No hazardous goods by parcel.")
forbid (principal, action == Action::"ship_parcel", resource)
when { context.args has tags && context.args.tags.contains("hazmat") };

@id("ship-express-vip")
@reason("Express is for VIP users only.")
forbid (principal, action == Action::"ship_parcel", resource)
when { context.args has tags && context.args.tags.containsAny(["express", "overnight"]) && !(principal in Group::"vip") };

@id("ship-carrier-admin")
@reason("Only admins' agents ship with the courier.")
forbid (principal, action == Action::"ship_parcel", resource)
when { resource.carrier == "courier" && principal.user.role != "admin" };

@id("refund-most-of-remainder")
@reason("A refund of more than half of what is left needs a lead.")
@approvers("support-leads")
forbid (principal, action == Action::"issue_refund", resource)
when { resource.amount.minor * 2 > resource.refundable.minor && resource.amount.currency == "EUR" };
`;
  const policy = compiled(withPolicies(text, { history: [], timeZones: [] }), { rules: [], tools });
  const ship = (args: Record<string, unknown>, who?: Who, carrier = "post") =>
    decide(policy, { tool: "ship_parcel", args, resource: { type: "parcel", id: "p1", properties: { carrier } }, who });
  const base = { destination: { country: "DE" }, weight_grams: 1000, value: 10 };

  it("nested and typed arguments: a string in a nested object and an integer combine", () => {
    expect(ship(base)).toMatchObject({ decision: "allow", rule: { ruleKey: "ship" } });
    expect(ship({ ...base, weight_grams: 25000 })).toMatchObject({ decision: "allow" });
    expectRequestable(ship({ ...base, destination: { country: "FR", zip: "75001" }, weight_grams: 25000 }), "ship-heavy-abroad", 1, "logistics");
    expect(ship({ ...base, destination: { country: "FR" }, weight_grams: 20000 })).toMatchObject({ decision: "allow" });
  });

  it("a decimal argument is compared exactly, up to four places", () => {
    expect(ship({ ...base, value: 1000.5 })).toMatchObject({ decision: "allow" });
    expectRequestable(ship({ ...base, value: 1000.5001 }), "ship-valuable", 2);
    // Both hold: the strictest (two approvals) decides.
    expectRequestable(ship({ ...base, destination: { country: "FR" }, weight_grams: 25000, value: 5000 }), "ship-valuable", 2);
  });

  it("sets: contains and containsAny over a list argument; the principal's group lifts a condition", () => {
    expect(ship({ ...base, tags: ["fragile", "hazmat"] })).toMatchObject({ decision: "deny", rule: { ruleKey: "ship-hazmat" } });
    expect(ship({ ...base, tags: ["overnight"] })).toMatchObject({ decision: "deny", rule: { ruleKey: "ship-express-vip" } });
    expect(ship({ ...base, tags: ["overnight"] }, { groups: ["vip"] })).toMatchObject({ decision: "allow" });
    expect(ship({ ...base, tags: [] })).toMatchObject({ decision: "allow" });
  });

  it("the principal's user role and the resource as it is now", () => {
    expect(ship(base, {}, "courier")).toMatchObject({ decision: "deny", rule: { ruleKey: "ship-carrier-admin" } });
    expect(ship(base, { role: "admin" }, "courier")).toMatchObject({ decision: "allow" });
  });

  it("money on the resource: the refund against the order's refundable remainder now", () => {
    const r = (eur: number, left: number) => decide(policy, { ...refund(eur, left), who: { agent: "support-bot" } });
    // No permit covers refunds in this document: the default deny decides even though the forbid holds.
    expect(r(100, 320)).toMatchObject({ decision: "deny", rule: { ruleKey: "default" } });
    const withPermit = compiled(withPolicies(`@id("refunds") permit (principal, action == Action::"issue_refund", resource);\n` + text, { history: [], timeZones: [] }), { rules: [], tools });
    const rp = (eur: number, left: number) => decide(withPermit, refund(eur, left));
    expect(rp(100, 320)).toMatchObject({ decision: "allow" });
    expectRequestable(rp(100, 150), "refund-most-of-remainder", 1, "support-leads");
  });
});

describe("bad input: strict compilation refuses with line and column", () => {
  const head = `@id("a")\npermit (principal, action, resource);\n\n@id("b")\nforbid (principal, action == Action::"wire_transfer", resource)\n`;
  const problemsOf = (text: string) => {
    const r = compileDoc(withPolicies(text), { strict: true });
    expect(r.ok).toBe(false);
    return r.ok ? [] : r.problems;
  };

  it("a parse error gives its line and column", () => {
    const [p] = problemsOf(`${head}when { context.args.amount > };`);
    expect(p).toMatchObject({ line: 6, column: 30 });
  });

  it("a condition on an argument that does not exist gives its line and column", () => {
    const [p] = problemsOf(`${head}when {   context.args.beneficiary == "x" };`);
    expect(p).toMatchObject({ policyId: "b", line: 6, column: 10 });
    expect(p.message).toMatch(/beneficiary/);
  });

  it("a condition of the wrong type gives its line and column", () => {
    const [p] = problemsOf(`${head}when { context.args.to > 5 };`);
    expect(p).toMatchObject({ policyId: "b", line: 6, column: 8 });
    expect(p.message).toMatch(/Long|String/);
    // A decimal compared as a whole number is a type error too.
    expect(problemsOf(`${head}when { context.args.amount > 5 };`)[0]).toMatchObject({ policyId: "b", line: 6 });
  });

  it("a policy without @id, or with an @id that is not a name, is refused at its line", () => {
    expect(problemsOf(`@id("a")\npermit (principal, action, resource);\n\npermit (principal, action, resource);`)[0]).toMatchObject({ message: expect.stringMatching(/@id/), line: 4, column: 1 });
    expect(problemsOf(`@id("rule:x")\npermit (principal, action, resource);`)[0].message).toMatch(/@id/);
    expect(problemsOf(`@id("a")\npermit (principal, action, resource);\n@id("a")\npermit (principal, action, resource);`)[0].message).toMatch(/two policies/);
  });

  it.each([
    ["@quorum is not a number", `@quorum("x")`, /@quorum/],
    ["@quorum above ten", `@quorum("11")`, /@quorum/],
    ["@deadline is not a duration", `@deadline("forever")`, /@deadline/],
    ["@validity too short", `@validity("10s")`, /@validity/],
    ["@justification neither required nor optional", `@justification("maybe")`, /@justification/],
    ["@approvers not a group name", `@approvers("Tre Asury")`, /@approvers/],
  ])("a bad annotation value is refused: %s", (_label, annotation, words) => {
    const approvers = annotation.startsWith("@approvers") ? "" : `@approvers("treasury")\n`;
    const problems = problemsOf(`@id("a")\npermit (principal, action, resource);\n\n@id("b")\n${approvers}@reason("Some words for reviewers.")\n${annotation}\nforbid (principal, action == Action::"wire_transfer", resource);`);
    // At the annotation's own line (the sixth or seventh line of the text).
    expect(problems[0]).toMatchObject({ policyId: "b", line: annotation.startsWith("@approvers") ? 6 : 7, column: 1 });
    expect(problems[0].message).toMatch(words);
  });

  it("requirements on a permit, or requirements without @approvers or @reason, are refused", () => {
    expect(problemsOf(`@id("b")\n@approvers("treasury")\n@reason("Some words.")\npermit (principal, action, resource);`)[0].message).toMatch(/forbid/);
    expect(problemsOf(`@id("b")\n@quorum("2")\nforbid (principal, action, resource);`)[0].message).toMatch(/@approvers/);
    expect(problemsOf(`@id("b")\n@approvers("treasury")\nforbid (principal, action, resource);`)[0].message).toMatch(/@reason/);
  });

  it("a history window on a tool that does not exist is refused", () => {
    const r = compileDoc(withPolicies(`@id("a") permit (principal, action, resource);`, { history: [{ name: "x", tool: "no_such_tool", window: "1h", per: "tool" }] }), { strict: true });
    expect(r.ok ? [] : r.problems.map((p) => p.message)).toEqual([expect.stringMatching(/no_such_tool/)]);
  });
});

describe("evaluation errors deny, never allow", () => {
  it("a decimal argument with more than four places is an evaluation error (also in exponent form), not a rounded value", () => {
    const policy = compiled();
    for (const amount of [1.23456, 1e-7, 0.1 + 0.2]) {
      const d = decide(policy, { ...wire(1), args: { to: "acct-991", amount } });
      expect(d).toMatchObject({ decision: "deny", rule: { ruleKey: "evaluation-error" }, evaluationError: expect.stringMatching(/four digits/) });
      expect(JSON.stringify(d)).not.toContain(String(amount));
    }
  });

  it("a policy that errors at run time (an overflow) denies with evaluationError, though a permit holds", () => {
    const text = `${DEMO_DOCUMENT.policies}\n@id("overflow")\n@reason("Never meant to hold.")\nforbid (principal, action == Action::"issue_refund", resource)\nwhen { resource.amount.minor * 9223372036854775807 < 0 };\n`;
    const policy = compiled(withPolicies(text));
    expect(decide(policy, refund(20))).toMatchObject({ decision: "deny", evaluationError: expect.stringContaining("overflow") });
    // A call the erroring policy does not apply to is decided as usual.
    expect(decide(policy, wire(1))).toMatchObject({ decision: "allow" });
  });

  it("a resource the mapping could not fully read denies with evaluationError", () => {
    const policy = compiled();
    const d = decide(policy, { ...refund(20), resource: { type: "order", id: "O-1", properties: { amount_cents: 2000, currency: "EUR" } } });
    expect(d).toMatchObject({ decision: "deny", evaluationError: expect.any(String) });
  });
});

describe("lenient compilation of stored versions that no longer validate", () => {
  // A stored version, valid when saved, meets a catalog in which wire_transfer's `to` became a number.
  const changedCatalog = policyTools().map((t) =>
    t.name === "wire_transfer" ? { ...t, inputSchema: { ...t.inputSchema, properties: { ...(t.inputSchema.properties as object), to: { type: "integer" } } } } : t,
  );
  const staleForbid = `${DEMO_DOCUMENT.policies}\n@id("to-check")\n@reason("No transfers to these accounts.")\nforbid (principal, action == Action::"wire_transfer", resource)\nwhen { context.args.to like "acct-666*" };\n`;
  const stalePermit = `@id("refunds") permit (principal, action == Action::"issue_refund", resource);\n\n@id("to-permit")\npermit (principal, action == Action::"wire_transfer", resource)\nwhen { context.args.to like "acct-9*" };\n`;

  it("the stored text compiled strictly: valid against the catalog it was saved with, refused against the new one", () => {
    expect(compileDoc(withPolicies(staleForbid), { strict: true }).ok).toBe(true);
    expect(compileDoc(withPolicies(staleForbid), { strict: true, tools: changedCatalog }).ok).toBe(false);
  });

  it("a stale forbid denies every call of its tool as an evaluation error; other tools are decided as usual", () => {
    const policy = compiled(withPolicies(staleForbid), { strict: false, tools: changedCatalog });
    expect(policy.problems).toEqual([expect.stringMatching(/to-check/)]);
    const d = decide(policy, { ...wire(1), args: { to: 991, amount: 1 } });
    expect(d).toMatchObject({ decision: "deny", rule: { ruleKey: "to-check" }, evaluationError: expect.stringMatching(/no longer compiles/) });
    expect(decide(policy, refund(20))).toMatchObject({ decision: "allow" });
  });

  it("a stale permit is dropped: what it alone permitted falls to the default deny", () => {
    const policy = compiled(withPolicies(stalePermit), { strict: false, tools: changedCatalog, rules: [] });
    expect(policy.problems).toEqual([expect.stringMatching(/to-permit/)]);
    expect(decide(policy, { ...wire(1), args: { to: 991, amount: 1 } })).toMatchObject({ decision: "deny", rule: { ruleKey: "default" } });
    expect(decide(policy, refund(20))).toMatchObject({ decision: "allow" });
  });

  it("a stored text that no longer parses denies every call as an evaluation error", () => {
    const policy = compiled(withPolicies(`@id("a") permit (principal, action, resource);\n@id("b") forbid (principal, action, resource) when { ;`), { strict: false, rules: [] });
    for (const c of [wire(1), refund(20), del("tmp/x")]) expect(decide(policy, c)).toMatchObject({ decision: "deny", evaluationError: expect.any(String) });
  });

  it("a stored forbid whose annotations are no longer valid denies its tool; a form rule that no longer fits its tool denies its tool", () => {
    const badAnnotation = `${DEMO_DOCUMENT.policies}\n@id("bad-quorum")\n@approvers("treasury")\n@reason("Some words for reviewers.")\n@quorum("99")\nforbid (principal, action == Action::"delete_path", resource);\n`;
    const p1 = compiled(withPolicies(badAnnotation), { strict: false });
    expect(decide(p1, del("tmp/x"))).toMatchObject({ decision: "deny", evaluationError: expect.any(String) });
    expect(decide(p1, wire(1)).decision).toBe("allow");
    const staleRule: Rule = { ...DEMO_FORM_RULES[0], ruleKey: "refund-by-field", field: "no_such_field" };
    const p2 = compiled(DEMO_DOCUMENT, { strict: false, rules: [...DEMO_FORM_RULES, staleRule] });
    expect(decide(p2, refund(20))).toMatchObject({ decision: "deny", rule: { ruleKey: "refund-by-field" }, evaluationError: expect.any(String) });
    expect(decide(p2, wire(1)).decision).toBe("allow");
  });
});
