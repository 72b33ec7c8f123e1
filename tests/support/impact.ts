/** The impact preview's tests: a draft of the demo's refund rule, a refund by a demo agent, the demo document without its clock-dependent rule. */
import { db } from "../../lib/db/client";
import { DEMO_DOCUMENT, withoutPolicy } from "../../lib/policy/demo-policy";
import { PolicyDocument } from "../../lib/policy/document";
import type { Draft } from "../../lib/policy/impact";
import { callTool } from "../../lib/tasks/call";
import type { Principal } from "../../lib/tasks/types";
import { principal } from "./db";

type RuleDraft = Extract<Draft, { kind: "rule" }>["rule"];

/** The current refund-over-limit rule as a draft, with `over` applied. */
export async function refundRuleDraft(over: Partial<RuleDraft> = {}): Promise<Draft> {
  const { id, version, createdAt, createdBy, ...rest } = await db().policyRule.findFirstOrThrow({ where: { ruleKey: "refund-over-limit", active: true } });
  void id, version, createdAt, createdBy;
  return { kind: "rule", rule: { ...rest, ...over } };
}

/** A refund through the call path, by the support bot unless another agent is given. */
export async function refund(orderId: string, amount: number, when: Date, agent?: Principal) {
  return callTool(agent ?? (await principal()), "issue_refund", { order_id: orderId, amount }, { tasks: true }, when);
}

export const steadyDocument = () => PolicyDocument.parse(withoutPolicy(DEMO_DOCUMENT, "deploy-production-after-hours"));
