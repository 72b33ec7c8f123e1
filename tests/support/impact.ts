/** The impact preview's tests: a draft of the demo's refund rule, a refund by a demo agent, the demo document without its clock-dependent rule. */
import { DEMO_DOCUMENT, withoutPolicy } from "../../lib/policy/demo-policy";
import { PolicyDocument } from "../../lib/policy/document";
import { previewImpact, type Draft, type Impact } from "../../lib/policy/impact";
import { callTool } from "../../lib/tasks/call";
import type { Principal } from "../../lib/tasks/types";
import { activeRuleFields, principal } from "./db";

type RuleDraft = Extract<Draft, { kind: "rule" }>["rule"];

/** The current refund-over-limit rule as a draft, with `over` applied. */
export async function refundRuleDraft(over: Partial<RuleDraft> = {}): Promise<Draft> {
  return { kind: "rule", rule: { ...(await activeRuleFields("refund-over-limit")), ...over } };
}

/** A refund through the call path, by the support bot unless another agent is given. */
export async function refund(orderId: string, amount: number, when: Date, agent?: Principal) {
  return callTool(agent ?? (await principal()), "issue_refund", { order_id: orderId, amount }, { tasks: true }, when);
}

export const steadyDocument = () => PolicyDocument.parse(withoutPolicy(DEMO_DOCUMENT, "deploy-production-after-hours"));

/** The steady document with one more window over refunds and a forbid that reads it. */
export function withWindow(window: { per: "agent" | "user" | "resource" | "tool"; length: string }, condition: string): Draft {
  const body = steadyDocument();
  return {
    kind: "document",
    body: {
      ...body,
      history: [...body.history, { name: "recent_refunds", tool: "issue_refund", window: window.length, per: window.per }],
      policies: `${body.policies}

@id("recent-refunds")
@reason("Refunds in a row need a lead.")
@approvers("support-leads")
@quorum("1")
@deadline("24h")
@validity("1h")
forbid (principal, action == Action::"issue_refund", resource)
when { ${condition} };
`,
    },
  };
}

/** The preview of `draft` at `now`; a refused draft fails the test with its problems. */
export async function preview(draft: Draft, now: Date, limit?: number): Promise<Extract<Impact, { ok: true }>> {
  const impact = await previewImpact(draft, now, limit === undefined ? {} : { limit });
  if (!impact.ok) throw new Error(JSON.stringify(impact.problems));
  return impact;
}
