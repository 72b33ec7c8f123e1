/**
 * The authorization decision, in the shape of an OpenID AuthZEN Authorization API 1.0 evaluation request:
 * subject, action, resource, context. Pure: rules and `now` are passed in, so every outcome is testable exactly.
 *
 * A call matching no rule is allowed. A matching `deny` rule wins. A matching `requestable` rule denies for now
 * but can be approved; when the context carries an approval that meets the rule's requirements (group, number of
 * distinct approvers, not expired), the same rule allows.
 */

export type Rule = {
  id: string;
  ruleKey: string;
  version: number;
  tool: string;
  field: string;
  operator: string;
  value: string;
  effect: string;
  approverGroup: string | null;
  approvalsRequired: number;
  requestDeadlineSec: number;
  approvalValiditySec: number;
  requireJustification: boolean;
  reason: string;
};

export type RuleRef = { id: string; ruleKey: string; version: number };

export type Requirements = {
  approverGroup: string;
  approvalsRequired: number;
  requestDeadlineSec: number;
  approvalValiditySec: number;
  requireJustification: boolean;
};

/** What an approval contributes to re-evaluation: who approved (still eligible now), in which group, until when. */
export type ApprovalInput = {
  approverGroup: string;
  approverIds: string[];
  approvedAt: Date;
  expiresAt: Date;
};

export type EvaluationRequest = {
  subject: { type: "user"; id: string; properties: { agentId: string } };
  action: { name: string };
  resource: { type: string; id: string; properties: Record<string, string | number | boolean | null> };
  context: { approval?: ApprovalInput };
};

export type Decision =
  /** `requirements` is set when a requestable rule matched and the approval in the context satisfied it. */
  | { decision: "allow"; rule: RuleRef | null; requirements?: Requirements }
  | { decision: "deny"; rule: RuleRef; reason: string }
  | { decision: "requestable"; rule: RuleRef; reason: string; requirements: Requirements };

function ref(r: Rule): RuleRef {
  return { id: r.id, ruleKey: r.ruleKey, version: r.version };
}

export function matches(rule: Rule, properties: EvaluationRequest["resource"]["properties"]): boolean {
  const actual = properties[rule.field];
  if (actual === undefined || actual === null) return false;
  switch (rule.operator) {
    case "gt":
      return Number(actual) > Number(rule.value);
    case "gte":
      return Number(actual) >= Number(rule.value);
    case "eq":
      return String(actual) === rule.value;
    case "prefix": {
      // A value ending in "/" names a folder: it covers the folder itself as well as everything in it, so
      // "prod/" matches "prod" and "prod/logs" but not "production". Resources are canonical (see ToolDef.resource).
      const s = String(actual);
      return s.startsWith(rule.value) || (rule.value.endsWith("/") && s === rule.value.slice(0, -1));
    }
    default:
      // An operator this server does not understand must not silently allow: treat it as matching.
      return true;
  }
}

function satisfies(rule: Rule, approval: ApprovalInput | undefined, now: Date): boolean {
  if (!approval) return false;
  if (approval.approverGroup !== rule.approverGroup) return false;
  if (approval.expiresAt.getTime() <= now.getTime()) return false;
  return new Set(approval.approverIds).size >= rule.approvalsRequired;
}

export function evaluate(req: EvaluationRequest, rules: Rule[], now: Date): Decision {
  const applicable = rules.filter((r) => r.tool === req.action.name && matches(r, req.resource.properties));
  const deny = applicable.find((r) => r.effect !== "requestable");
  if (deny) return { decision: "deny", rule: ref(deny), reason: deny.reason };
  // The strictest requestable rule decides (most approvals needed, then shortest validity).
  const requestable = applicable
    .filter((r) => r.effect === "requestable" && r.approverGroup)
    .sort((a, b) => b.approvalsRequired - a.approvalsRequired || a.approvalValiditySec - b.approvalValiditySec)[0];
  if (!requestable) return { decision: "allow", rule: null };
  const requirements: Requirements = {
    approverGroup: requestable.approverGroup!,
    approvalsRequired: requestable.approvalsRequired,
    requestDeadlineSec: requestable.requestDeadlineSec,
    approvalValiditySec: requestable.approvalValiditySec,
    requireJustification: requestable.requireJustification,
  };
  if (satisfies(requestable, req.context.approval, now)) return { decision: "allow", rule: ref(requestable), requirements };
  return { decision: "requestable", rule: ref(requestable), reason: requestable.reason, requirements };
}
