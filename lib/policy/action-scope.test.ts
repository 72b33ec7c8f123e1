/**
 * Each action is evaluated against only the policies whose action scope can name it (CompiledPolicy.preparedFor).
 * The restriction must never change a decision: a policy dropped for an action it could hold for would let a call
 * around a forbid, or lose the permit or requestable denial that decides it. Proved against the whole set, parsed
 * once more, over every demo tool and policies of every scope form.
 */
import { describe, expect, it } from "vitest";
import { DEMO_RULES } from "../db/seed";
import { policyTools } from "../tools/catalog";
import { actionScopeAdmits, policyJson, preparse } from "./cedar";
import { compilePolicy } from "./compile";
import { DEMO_DOCUMENT } from "./demo-policy";
import { PolicyDocument } from "./document";
import { evaluate, type CompiledPolicy, type ResourceView, type Rule, type Subject } from "./evaluate";
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
`;

const RULES: Rule[] = DEMO_RULES.map((r, i) => ({ ...r, id: `rule-${i}`, version: 1, currency: null, requireJustification: false }));

function compiled(): CompiledPolicy {
  const body = PolicyDocument.parse({ ...DEMO_DOCUMENT, policies: `${DEMO_DOCUMENT.policies}\n${EXTRA}`, tests: [] });
  const r = compilePolicy({ rules: RULES, document: { id: "doc-1", version: 1, body }, tools: policyTools() }, { strict: true });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.policy;
}

const subject = (agent: string, groups: string[] = []): Subject => ({
  agentId: `agent-${agent}`,
  agentName: agent,
  user: { id: `user-${agent}`, email: `${agent}@countersign.test`, name: agent, role: "requester", groups },
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
          const restricted = evaluate(req, policy, at);
          expect(restricted, `${who.agentName} ${call.tool} ${JSON.stringify(call.args)} ${at.toISOString()}`).toEqual(evaluate(req, unrestricted, at));
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
