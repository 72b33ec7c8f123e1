/**
 * Each action is evaluated against only the policies whose action scope can name it (CompiledPolicy.preparedFor).
 * The restriction must never change a decision: a policy dropped for an action it could hold for would let a call
 * around a forbid, or lose the permit or requestable denial that decides it. Proved against the whole set, parsed
 * once more, over every demo tool and policies of every scope form.
 *
 * A decision that does not depend on the call (settledAnswer: partial evaluation with the resource and the context
 * unknown) is taken without evaluating the call. That too must never change a decision: proved against the full
 * evaluation of every call, with policies that read the principal only, and others that read the call.
 */
import { describe, expect, it } from "vitest";
import { DEMO_RULES } from "../db/seed";
import { policyTools } from "../tools/catalog";
import { actionScopeAdmits, policyJson, preparse } from "./cedar";
import { compilePolicy } from "./compile";
import { DEMO_DOCUMENT } from "./demo-policy";
import { PolicyDocument } from "./document";
import { evaluate, settledAnswer, type CompiledPolicy, type ResourceView, type Rule, type Subject } from "./evaluate";
import { buildSchema } from "./schema";

const T0 = new Date("2100-11-30T10:00:00.000Z");
const NIGHT = new Date("2100-11-30T23:30:00.000Z");

describe("actionScopeAdmits", () => {
  const cases: [string, string, boolean][] = [
    ['permit (principal, action == Action::"wire_transfer", resource);', "wire_transfer", true],
    ['permit (principal, action == Action::"wire_transfer", resource);', "issue_refund", false],
    ['permit (principal, action in [Action::"a", Action::"wire_transfer"], resource);', "wire_transfer", true],
    ['permit (principal, action in [Action::"a", Action::"b"], resource);', "wire_transfer", false],
    ['permit (principal, action in Action::"wire_transfer", resource);', "wire_transfer", true],
    ['permit (principal, action in Action::"deploy_service", resource);', "wire_transfer", false],
    ["permit (principal, action, resource);", "wire_transfer", true],
    ['forbid (principal, action, resource) when { context.args has amount };', "anything", true],
  ];
  it.each(cases)("%s for %s: %s", (text, action, admits) => {
    expect(actionScopeAdmits(policyJson(text), action)).toBe(admits);
  });

  it("keeps a scope it cannot read", () => {
    expect(actionScopeAdmits({ effect: "permit", principal: { op: "All" }, action: { op: "==", slot: "?action" } as never, resource: { op: "All" }, conditions: [] }, "x")).toBe(true);
    expect(actionScopeAdmits({ effect: "permit", principal: { op: "All" }, action: { op: "in", entities: [null] } as never, resource: { op: "All" }, conditions: [] }, "x")).toBe(true);
  });

  it("keeps a scope when any one of the actions it names cannot be read, even beside actions that are not this one", () => {
    const scoped = (action: unknown) => ({ effect: "forbid", principal: { op: "All" }, action, resource: { op: "All" }, conditions: [] }) as never;
    const other = { type: "Action", id: "a" };
    for (const unreadable of [null, 42, "x", { type: "Action" }, { type: "Action", id: 7 }]) {
      expect(actionScopeAdmits(scoped({ op: "in", entities: [other, unreadable] }), "x")).toBe(true);
      expect(actionScopeAdmits(scoped({ op: "in", entities: [unreadable, other] }), "x")).toBe(true);
    }
    expect(actionScopeAdmits(scoped({ op: "in", entities: [other, { type: "Action", id: "b" }] }), "x")).toBe(false);
    // No action scope at all names no action.
    expect(actionScopeAdmits(scoped(undefined), "x")).toBe(true);
  });
});

// Policies of every scope form on top of the demo document: named, listed, unconstrained; permits, forbids and
// requestable forbids that each hold for some of the calls below.
const EXTRA = `
@id("listed-forbid")
forbid (principal, action in [Action::"deploy_service", Action::"wire_transfer"], resource)
when { context.args has version && context.args.version == "6.6.6" };

@id("listed-requestable")
@approvers("support-leads")
@quorum("2")
@reason("Large amounts need two leads.")
forbid (principal, action in [Action::"issue_refund", Action::"wire_transfer"], resource)
when { context.args has amount && context.args.amount.greaterThan(decimal("4000.0")) };

@id("any-forbid")
forbid (principal, action, resource) when { principal.name == "blocked-bot" };

@id("named-forbid")
forbid (principal, action == Action::"delete_path", resource) when { resource.path == "notes/a.txt" };

@id("frozen-group")
forbid (principal in Group::"frozen", action in [Action::"wire_transfer", Action::"shop__lookup"], resource);

@id("admins-delete")
permit (principal, action in [Action::"delete_path", Action::"shop__lookup"], resource) when { principal.user.role == "admin" };

@id("bulk-lookups")
permit (principal, action == Action::"shop__lookup", resource) when { principal.name == "bulk-bot" };

@id("overflows")
forbid (principal, action == Action::"shop__lookup", resource) when { principal.name == "overflow-bot" && 9223372036854775807 + 1 > 0 };

@id("lookup-reads-args")
@approvers("support-leads")
@reason("Looking up many orders needs a lead.")
forbid (principal, action == Action::"shop__lookup", resource) when { principal.name == "bulk-bot" && context.args.limit > 100 };

@id("owner-named")
@approvers("sre")
@reason("The release bot's deploys need an SRE.")
forbid (principal, action == Action::"deploy_service", resource) when { principal.name == "release-bot" };
`;

const RULES: Rule[] = DEMO_RULES.map((r, i) => ({ ...r, id: `rule-${i}`, version: 1, currency: null, requireJustification: false }));

/** A tool as the gateway describes an upstream's: its resource is the call itself. */
const LOOKUP = {
  name: "shop__lookup",
  inputSchema: { type: "object", properties: { order: { type: "string" }, limit: { type: "integer" } }, required: ["order", "limit"] },
  resourceEntity: "UpstreamShopLookup",
  resourceShape: { server: { type: "String" }, tool: { type: "String" }, argumentsDigest: { type: "String" } },
} as const;

function compiled(): CompiledPolicy {
  const body = PolicyDocument.parse({ ...DEMO_DOCUMENT, policies: `${DEMO_DOCUMENT.policies}\n${EXTRA}`, tests: [] });
  const r = compilePolicy({ rules: RULES, document: { id: "doc-1", version: 1, body }, tools: [...policyTools(), LOOKUP] }, { strict: true });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.policy;
}

const subject = (agent: string, groups: string[] = [], role = "requester"): Subject => ({
  agentId: `agent-${agent}`,
  agentName: agent,
  user: { id: `user-${agent}`, email: `${agent}@countersign.test`, name: agent, role, groups },
});

type Call = { tool: string; args: Record<string, unknown>; resource: ResourceView };
const calls: Call[] = [
  ...[10, 200, 5000].map((usd) => ({ tool: "wire_transfer", args: { to: "acct-991", amount: usd }, resource: { type: "account", id: "acct-991", properties: { amount_cents: usd * 100, currency: "USD" } } })),
  ...[40, 180, 4500].map((eur) => ({
    tool: "issue_refund",
    args: { order_id: "O-4410", amount: eur },
    resource: { type: "order", id: "O-4410", properties: { amount_cents: eur * 100, currency: "EUR", refundable_cents: 500_000, total_cents: 520_00 } },
  })),
  ...(["production", "staging"] as const).flatMap((environment) =>
    ["1.4.2", "6.6.6"].map((version) => ({
      tool: "deploy_service",
      args: { service: "checkout-api", environment, version },
      resource: { type: "service", id: "checkout-api", properties: { environment, version } },
    })),
  ),
  ...["notes/a.txt", "prod/db.sql"].map((path) => ({ tool: "delete_path", args: { path }, resource: { type: "path", id: path, properties: { path, kind: "file" } } })),
  ...[5, 500].map((limit) => ({
    tool: "shop__lookup",
    args: { order: "O-4410", limit },
    resource: { type: "UpstreamShopLookup", id: `shop__lookup:${limit}`, properties: { server: "shop", tool: "lookup", argumentsDigest: `sha256:${limit}` } },
  })),
];

describe("evaluation restricted to the policies an action's scope admits", () => {
  it("decides every call exactly as the whole set does", () => {
    const policy = compiled();
    const tools = [...policy.tools.values()];
    const whole = preparse(policy.evaluated, buildSchema(tools, policy.document.history, policy.document.zones));
    const unrestricted: CompiledPolicy = { ...policy, preparedFor: () => whole };
    const decisions = new Set<string>();
    for (const who of [subject("ops-bot"), subject("support-bot", ["support"]), subject("blocked-bot")]) {
      for (const call of calls) {
        for (const at of [T0, NIGHT]) {
          const history = Object.fromEntries(policy.document.history.filter((h) => h.tool === call.tool).map((h) => [h.name, { total: 0, count: 0 }]));
          const req = { subject: who, action: { name: call.tool }, resource: call.resource, context: { args: call.args, history } };
          const restricted = evaluate(req, policy, at, { full: true });
          expect(restricted, `${who.agentName} ${call.tool} ${JSON.stringify(call.args)} ${at.toISOString()}`).toEqual(evaluate(req, unrestricted, at, { full: true }));
          decisions.add(`${restricted.decision}:${restricted.rule?.ruleKey}`);
        }
      }
    }
    // The calls reach every kind of outcome and each of the added policies, so a dropped policy would show.
    for (const expected of ["allow", "deny:listed-forbid", "requestable:listed-requestable", "deny:any-forbid", "deny:named-forbid"]) {
      expect([...decisions].some((d) => d.startsWith(expected)), `${expected} in ${[...decisions].join(", ")}`).toBe(true);
    }
  });

  it("parses each action's set once and reuses it", () => {
    const policy = compiled();
    const first = policy.preparedFor("wire_transfer");
    expect(policy.preparedFor("wire_transfer")).toBe(first);
    expect(policy.preparedFor("issue_refund").setId).not.toBe(first.setId);
  });
});

describe("a decision settled without the resource and the context", () => {
  const subjects = [
    subject("ops-bot"),
    subject("support-bot", ["support"]),
    subject("blocked-bot"),
    subject("frozen-bot", ["frozen"]),
    subject("admin-bot", [], "admin"),
    subject("release-bot", ["sre"]),
    subject("bulk-bot"),
    subject("overflow-bot"),
  ];

  it("decides every call exactly as evaluating the call does, and is taken where nothing in the call matters", () => {
    const policy = compiled();
    const settled = new Set<string>();
    const unsettled = new Set<string>();
    const decisions = new Set<string>();
    for (const who of subjects) {
      for (const call of calls) {
        (settledAnswer(policy, who, call.tool) ? settled : unsettled).add(`${who.agentName} ${call.tool}`);
        for (const at of [T0, NIGHT]) {
          const history = Object.fromEntries(policy.document.history.filter((h) => h.tool === call.tool).map((h) => [h.name, { total: 0, count: 0 }]));
          for (const approval of [undefined, { approverGroup: "sre", approverIds: ["u-1"], approvedAt: T0, expiresAt: new Date(T0.getTime() + 3_600_000) }]) {
            const req = { subject: who, action: { name: call.tool }, resource: call.resource, context: { args: call.args, history, ...(approval ? { approval } : {}) } };
            const decided = evaluate(req, policy, at);
            expect(decided, `${who.agentName} ${call.tool} ${JSON.stringify(call.args)} ${at.toISOString()} ${approval ? "approved" : ""}`).toEqual(evaluate(req, policy, at, { full: true }));
            decisions.add(`${decided.decision}:${decided.rule?.ruleKey}`);
          }
        }
      }
    }
    // Settled: the principal alone decides (by name, group or role) and no policy that could hold reads the call.
    expect([...settled].sort()).toEqual(["admin-bot shop__lookup", "blocked-bot shop__lookup", "frozen-bot shop__lookup", "ops-bot shop__lookup", "release-bot shop__lookup", "support-bot shop__lookup"]);
    // Not settled: a policy that may hold reads the arguments, the resource or the time.
    // Nor when a policy errors for the principal: the call is then denied as an evaluation error.
    for (const expected of ["overflow-bot shop__lookup", "bulk-bot shop__lookup", "ops-bot deploy_service", "ops-bot wire_transfer", "admin-bot delete_path"]) {
      expect(unsettled, expected).toContain(expected);
    }
    for (const expected of ["deny:frozen-group", "deny:any-forbid", "requestable:owner-named", "allow:owner-named", "deny:named-forbid", "allow:admins-delete", "requestable:lookup-reads-args", "allow:bulk-lookups", "deny:evaluation-error"]) {
      expect([...decisions].some((d) => d.startsWith(expected)), `${expected} in ${[...decisions].join(", ")}`).toBe(true);
    }
  });

  it("is worked out once per policy, subject and tool", () => {
    const policy = compiled();
    const first = settledAnswer(policy, subject("frozen-bot", ["frozen"]), "shop__lookup");
    expect(first).toEqual({ ok: true, decision: "deny", determining: ["frozen-group"], errors: [] });
    expect(settledAnswer(policy, subject("frozen-bot", ["frozen"]), "shop__lookup")).toBe(first);
    // Another group or role is another subject: outside the group nothing holds; as an admin the permit holds.
    expect(settledAnswer(policy, subject("frozen-bot"), "shop__lookup")).toEqual({ ok: true, decision: "deny", determining: [], errors: [] });
    expect(settledAnswer(policy, subject("frozen-bot", [], "admin"), "shop__lookup")).toEqual({ ok: true, decision: "allow", determining: ["admins-delete"], errors: [] });
  });

  it("remembers a bounded number of subjects and tools per policy, forgetting the oldest first", () => {
    const policy = compiled();
    const LIMIT = 3;
    const agentOf = (key: string) => JSON.parse(JSON.parse(key)[1])[0];
    const remember = (n: number) => settledAnswer(policy, subject(`bot-${n}`), "shop__lookup", LIMIT);
    const first = remember(0);
    const second = remember(1);
    remember(2);
    // Full: every subject is still remembered, the first as it was.
    expect(policy.settled.size).toBe(LIMIT);
    expect(remember(0)).toBe(first);
    // One more forgets the oldest (bot-0) and only it.
    remember(3);
    expect([...policy.settled.keys()].map(agentOf)).toEqual(["agent-bot-1", "agent-bot-2", "agent-bot-3"]);
    expect(remember(1)).toBe(second);
  });
});
