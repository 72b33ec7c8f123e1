/**
 * The demo's policy document (the form rules are in lib/db/seed.ts): which agents may call which demo tools, and
 * the conditions no single-threshold rule can say: totals over a window (splitting a transfer or a refund into
 * small calls does not walk around the threshold), the support bot's scope, and business hours.
 */
import type { PolicyDocument } from "./document";

export const DEMO_POLICIES = `@id("demo-tools")
@description("Agents may call the demo shop's, the sandbox's and the deploy tools; the forbids decide which calls need approval.")
permit (
  principal,
  action in [Action::"issue_refund", Action::"wire_transfer", Action::"delete_path", Action::"deploy_service"],
  resource
);

@id("support-bot-refunds-only")
@reason("The support bot may only issue refunds.")
forbid (principal, action, resource)
when { principal.name == "support-bot" }
unless { action == Action::"issue_refund" };

@id("wire-account-24h")
@reason("Transfers to one account above USD 25,000.00 in total within 24 hours require two treasury approvals.")
@approvers("treasury")
@quorum("2")
@deadline("2d")
@validity("4h")
forbid (principal, action == Action::"wire_transfer", resource)
when {
  context.history.wire_to_account_24h.count > 0 &&
  context.history.wire_to_account_24h.total + resource.amount.minor > 2500000
};

@id("refund-order-total")
@reason("Refunds on one order above 150.00 in total need a support lead's approval.")
@approvers("support-leads")
@quorum("1")
@deadline("24h")
@validity("1h")
forbid (principal, action == Action::"issue_refund", resource)
when {
  context.history.refunds_per_order.count > 0 &&
  context.history.refunds_per_order.total + resource.amount.minor > 15000
};

@id("deploy-production-after-hours")
@reason("Production deploys outside 08:00-18:00 Europe/Berlin require two SRE approvals.")
@approvers("sre")
@quorum("2")
@deadline("8h")
@validity("2h")
forbid (principal, action == Action::"deploy_service", resource)
when {
  resource.environment == "production" &&
  (context.time.zones["Europe/Berlin"].hour < 8 || context.time.zones["Europe/Berlin"].hour >= 18)
};
`;

export const DEMO_DOCUMENT = {
  policies: DEMO_POLICIES,
  defaults: { posture: "deny", tools: {}, agents: {} },
  history: [
    { name: "wire_to_account_24h", tool: "wire_transfer", window: "24h", per: "resource" },
    { name: "refunds_per_order", tool: "issue_refund", window: "400d", per: "resource" },
  ],
  timeZones: ["Europe/Berlin"],
  tests: [
    {
      name: "a refund within the limit runs at once",
      call: { tool: "issue_refund", arguments: { order_id: "O-1021", amount: 20 } },
      principal: { agent: "support-bot", user: "rita.requester@countersign.test", role: "requester", groups: [] },
      resource: { type: "order", id: "O-1021", properties: { amount_cents: 2000, currency: "EUR", refundable_cents: 4250, total_cents: 4250 } },
      history: { refunds_per_order: { total: 0, count: 0 } },
      expect: "allow",
    },
    {
      name: "a second refund that takes the order's total above 150.00 needs a lead",
      call: { tool: "issue_refund", arguments: { order_id: "O-4410", amount: 150 } },
      principal: { agent: "support-bot", user: "rita.requester@countersign.test", role: "requester", groups: [] },
      resource: { type: "order", id: "O-4410", properties: { amount_cents: 15000, currency: "EUR", refundable_cents: 37000, total_cents: 52000 } },
      history: { refunds_per_order: { total: 15000, count: 1 } },
      expect: "requestable",
      by: "refund-order-total",
    },
    {
      name: "the support bot cannot wire money",
      call: { tool: "wire_transfer", arguments: { to: "acct-991", amount: 10 } },
      principal: { agent: "support-bot", user: "rita.requester@countersign.test", role: "requester", groups: [] },
      resource: { type: "account", id: "acct-991", properties: { amount_cents: 1000, currency: "USD" } },
      history: { wire_to_account_24h: { total: 0, count: 0 } },
      expect: "deny",
      by: "support-bot-refunds-only",
    },
    {
      name: "a second USD 25,000 transfer to one account within 24 hours needs treasury",
      call: { tool: "wire_transfer", arguments: { to: "acct-991", amount: 25000 } },
      principal: { agent: "ops-bot", user: "otto.ops@countersign.test", role: "requester", groups: [] },
      resource: { type: "account", id: "acct-991", properties: { amount_cents: 2500000, currency: "USD" } },
      history: { wire_to_account_24h: { total: 2500000, count: 1 } },
      expect: "requestable",
      by: "wire-account-24h",
    },
    {
      name: "a production deploy at 20:00 in Berlin needs two SREs",
      call: { tool: "deploy_service", arguments: { service: "checkout-api", environment: "production", version: "1.4.2" } },
      principal: { agent: "ops-bot", user: "otto.ops@countersign.test", role: "requester", groups: [] },
      resource: { type: "service", id: "checkout-api", properties: { environment: "production", version: "1.4.2" } },
      at: "2026-12-01T19:00:00Z",
      expect: "requestable",
      by: "deploy-production-after-hours",
    },
    {
      name: "a staging deploy at night runs at once",
      call: { tool: "deploy_service", arguments: { service: "checkout-api", environment: "staging", version: "1.4.2" } },
      principal: { agent: "ops-bot", user: "otto.ops@countersign.test", role: "requester", groups: [] },
      resource: { type: "service", id: "checkout-api", properties: { environment: "staging", version: "1.4.2" } },
      at: "2026-12-01T23:00:00Z",
      expect: "allow",
    },
  ],
} satisfies Record<string, unknown> as unknown as PolicyDocument;

/** The document without the policy of the given @id (its whole paragraph in the text). */
export function withoutPolicy(doc: PolicyDocument, id: string): PolicyDocument {
  const paragraphs = doc.policies.split(/\n\s*\n/);
  const kept = paragraphs.filter((p) => !p.includes(`@id("${id}")`));
  return { ...doc, policies: kept.join("\n\n"), tests: doc.tests.filter((t) => t.by !== id) };
}
