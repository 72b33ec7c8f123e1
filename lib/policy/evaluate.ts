/**
 * The authorization decision, in the shape of an OpenID AuthZEN Authorization API 1.0 evaluation request
 * (subject, action, resource, context), decided by Cedar. Pure: the compiled policy and `now` are passed in.
 *
 * Cedar decides permit or forbid: it is default-deny and a forbid wins. Countersign reads three outcomes from it:
 *  - a satisfied `forbid` without requirements is a plain denial that no approval can clear;
 *  - a satisfied `forbid` with requirements (`@approvers`, `@quorum`, `@deadline`, `@validity`, `@justification`) is a
 *    requestable denial; when several are satisfied the strictest decides (most approvals, then shortest validity);
 *  - otherwise the call is allowed when a `permit` is satisfied, else the default posture of the tool and the agent
 *    decides (allow, deny, or requestable with its own requirements).
 * An approval in the context clears a requestable denial when it meets the strictest requirements. An evaluation
 * error (a value Cedar cannot represent, a missing attribute, a policy that errors) is a denial: never an allow.
 */
import { authorize, authorizePartial, type CedarAnswer, type CedarEntity, type CedarPolicyJson, type CedarUid, type CedarValue } from "./cedar";
import { cedarValueOf, ContextValueError, argsType, resourceAttributes, zoneFields, type PolicyTool } from "./schema";
import type { HistoryValues } from "./history-types";

export type Rule = {
  id: string;
  ruleKey: string;
  version: number;
  tool: string;
  field: string;
  operator: string;
  value: string;
  /** The currency of a money threshold (value in minor units); a call in another currency always matches. */
  currency?: string | null;
  effect: string;
  approverGroup: string | null;
  approvalsRequired: number;
  requestDeadlineSec: number;
  approvalValiditySec: number;
  requireJustification: boolean;
  /** Each approval needs a WebAuthn assertion from the reviewer's registered passkey. */
  requirePasskey?: boolean;
  /** Seconds without a decision after which a request is offered to fallbackGroup too (both absent: never). */
  escalateAfterSec?: number | null;
  fallbackGroup?: string | null;
  reason: string;
};

export type RuleRef = { id: string; ruleKey: string; version: number };

export type Requirements = {
  approverGroup: string;
  approvalsRequired: number;
  requestDeadlineSec: number;
  approvalValiditySec: number;
  requireJustification: boolean;
  /** Each approval is confirmed with the reviewer's passkey (absent: false). */
  requirePasskey?: boolean;
  /** After this many seconds without a decision the request is offered to `fallbackGroup` too (absent: never). */
  escalateAfterSec?: number | null;
  fallbackGroup?: string | null;
};

/** What an approval contributes to re-evaluation: who approved (still eligible now), in which group, until when. */
export type ApprovalInput = {
  approverGroup: string;
  approverIds: string[];
  /** The fallback group the request had escalated to, whose members' approvals count too (absent: none). */
  escalatedTo?: string | null;
  approvedAt: Date;
  expiresAt: Date;
};

/** The principal: the agent, the user it acts for, that user's role and groups (read now, never from the token). */
export type Subject = {
  agentId: string;
  agentName: string;
  user: { id: string; email: string; name: string; role: string; groups: string[] };
};

/** What the tool's mapping reads: canonical, current. */
export type ResourceView = { type: string; id: string; properties: Record<string, string | number | boolean | null | string[]> };

export type EvaluationRequest = {
  subject: Subject;
  action: { name: string };
  resource: ResourceView;
  context: {
    /** The call's arguments as validated by the tool's schema. */
    args: unknown;
    /** Recent history, measured by Countersign for the windows the policy declares on this tool. */
    history: HistoryValues;
    approval?: ApprovalInput;
  };
};

export type Decision =
  /** `requirements` is set when a requestable denial matched and the approval in the context satisfied it. */
  | { decision: "allow"; rule: RuleRef | null; requirements?: Requirements }
  /** `evaluationError` is set when the policy could not be evaluated for this call (audited; the words stay generic). */
  | { decision: "deny"; rule: RuleRef; reason: string; evaluationError?: string }
  | { decision: "requestable"; rule: RuleRef; reason: string; requirements: Requirements };

export type PolicyMeta = {
  ref: RuleRef;
  effect: "permit" | "forbid";
  /** Set for a requestable denial. */
  requirements: Requirements | null;
  reason: string;
  /**
   * Set when this is the denial that replaced a stored policy that no longer compiles (lenient compilation): the
   * problem, in words fit for the audit trail. A call it decides is denied as an evaluation error.
   */
  stale?: string;
};

export type Posture = { effect: "allow" } | { effect: "deny" } | { effect: "requestable"; requirements: Requirements; reason: string };

/** A policy ready to evaluate (see compile.ts): Cedar policies keyed by id, their meaning, the tools' shapes. */
export type CompiledPolicy = {
  /** The evaluated set (parsed once in the engine), restricted to the policies whose action scope admits `action` (same decisions, less work). */
  preparedFor(action: string): { setId: string; schemaId: string };
  /** As evaluated: requestable forbids are stored as permits, so that one evaluation reports which ones hold. */
  evaluated: Record<string, string | CedarPolicyJson>;
  meta: Map<string, PolicyMeta>;
  tools: Map<string, PolicyTool>;
  document: { ref: RuleRef; zones: string[]; history: { name: string; tool: string; windowSec: number; per: "resource" | "agent" | "user" | "tool" }[] };
  posture(agentName: string, tool: string): { posture: Posture; ref: RuleRef };
  /** Problems of stored policies that could not be compiled; each was replaced by a denial of what it covered. */
  problems: string[];
  visibility: Map<string, Set<string>>;
  /** Decisions settled without the resource and the context, per subject and action (settledAnswer). */
  settled: Map<string, CedarAnswer | null>;
};

export function strictness(a: Requirements, b: Requirements): number {
  return b.approvalsRequired - a.approvalsRequired || a.approvalValiditySec - b.approvalValiditySec || a.requestDeadlineSec - b.requestDeadlineSec;
}

export function satisfies(requirements: Requirements, approval: ApprovalInput | undefined, now: Date): boolean {
  if (!approval) return false;
  if (approval.approverGroup !== requirements.approverGroup) return false;
  if (approval.expiresAt.getTime() <= now.getTime()) return false;
  return new Set(approval.approverIds).size >= requirements.approvalsRequired;
}

export function subjectEntities(subject: Subject): { principal: CedarUid; entities: CedarEntity[] } {
  const user = { type: "User", id: subject.user.email };
  const principal = { type: "Agent", id: subject.agentId };
  return {
    principal,
    entities: [
      { uid: principal, attrs: { name: subject.agentName, user: { __entity: user } }, parents: [user] },
      {
        uid: user,
        attrs: { email: subject.user.email, name: subject.user.name, role: subject.user.role },
        parents: subject.user.groups.map((g) => ({ type: "Group", id: g })),
      },
      ...subject.user.groups.map((g) => ({ uid: { type: "Group", id: g }, attrs: {}, parents: [] })),
    ],
  };
}

const QUOTED = /`([^`]*)`/g;
/** What a quoted part may show: a name (a policy id, an attribute, an entity type), never a value. */
const NAME = /^[A-Za-z_][A-Za-z0-9_.:"-]*$/;

/** An evaluation error in words fit for the audit trail: which policy, what kind, never the values. */
export function errorDetail(errors: string[]): string {
  return errors
    .map((e) => e.replace(QUOTED, (q, inner: string) => (NAME.test(inner) ? q : "`…`")))
    .join("; ")
    .slice(0, 300);
}

/** What the agent and the reviewers read of any evaluation error; the detail goes to the audit trail only. */
export const EVALUATION_ERROR_REASON = "The policy could not be evaluated for this call, so it is denied.";

function evaluationDenied(policy: CompiledPolicy, detail: string): Decision {
  return {
    decision: "deny",
    rule: { ...policy.document.ref, ruleKey: "evaluation-error" },
    reason: EVALUATION_ERROR_REASON,
    evaluationError: detail,
  };
}

/** The partial evaluation's unknowns: the whole context, and the resource (see authorizePartial). */
const UNKNOWN_CONTEXT = ["args", "history", "time"];
/** Subjects and tools remembered per compiled policy (a few hundred bytes each). */
const SETTLED_LIMIT = 5000;

/** What of a subject its cached answers depend on: the agent, its name, and its user (role and groups). */
function subjectKey(subject: Subject): string {
  return JSON.stringify([subject.agentId, subject.agentName, subject.user]);
}

/**
 * What Cedar decides for this subject and action whatever the resource and the context are, when that is settled:
 * partial evaluation with both unknown, once per compiled policy, subject and action. Settled only when it reaches a
 * decision with no policy left whose outcome depends on the unknowns and none that errored; the policies that hold
 * are then the same for every call, and a call needs no evaluation of its own. Anything else (a condition on the
 * arguments, the resource, the history or the time; an error) is null, and each call is evaluated in full.
 * At most `limit` answers are kept per compiled policy, the oldest forgotten first.
 */
export function settledAnswer(policy: CompiledPolicy, subject: Subject, action: string, limit = SETTLED_LIMIT): CedarAnswer | null {
  const key = JSON.stringify([action, subjectKey(subject)]);
  const known = policy.settled.get(key);
  if (known !== undefined) return known;
  const { principal, entities } = subjectEntities(subject);
  const r = authorizePartial(policy.evaluated, principal, { type: "Action", id: action }, entities, UNKNOWN_CONTEXT);
  const answer: CedarAnswer | null =
    r.ok && r.decision !== null && r.nontrivialResiduals.length === 0 && r.errored.length === 0
      ? { ok: true, decision: r.decision, determining: r.mustBeDetermining, errors: [] }
      : null;
  // Oldest first, one at a time: a partial evaluation costs more than a full one, so the set must not thrash.
  if (policy.settled.size >= limit) policy.settled.delete(policy.settled.keys().next().value!);
  policy.settled.set(key, answer);
  return answer;
}

/**
 * The decision for one call. `full` evaluates the call in Cedar even when the subject's decision for the tool is
 * settled (settledAnswer): the two always agree, which the tests check.
 */
export function evaluate(req: EvaluationRequest, policy: CompiledPolicy, now: Date, options: { full?: boolean } = {}): Decision {
  const tool = policy.tools.get(req.action.name);
  if (!tool) return evaluationDenied(policy, `the tool ${req.action.name} is not in the policy's catalog`);
  let context: Record<string, CedarValue>;
  let resourceAttrs: Record<string, CedarValue>;
  try {
    const history: Record<string, CedarValue> = {};
    for (const h of policy.document.history.filter((d) => d.tool === tool.name)) {
      const v = req.context.history[h.name];
      if (!v) throw new ContextValueError(`the history ${h.name} was not measured`);
      history[h.name] = { total: v.total, count: v.count };
    }
    context = {
      args: cedarValueOf(req.context.args ?? {}, argsType(tool)),
      history,
      time: {
        now: { __extn: { fn: "datetime", arg: now.toISOString() } },
        zones: Object.fromEntries(policy.document.zones.map((z) => [z, zoneFields(now, z)])),
      },
    };
    resourceAttrs = resourceAttributes(tool.resourceShape, req.resource.properties);
  } catch (e) {
    if (e instanceof ContextValueError) return evaluationDenied(policy, e.message);
    throw e;
  }
  const answer = (!options.full && settledAnswer(policy, req.subject, tool.name)) || fullAnswer(req, policy, tool, context, resourceAttrs);
  if (!answer.ok) return evaluationDenied(policy, errorDetail(answer.errors));
  if (answer.errors.length > 0) return evaluationDenied(policy, errorDetail(answer.errors));

  // In the policy's own order (Cedar reports the ones that hold in no stable order): of two forbids that hold, the
  // first written is the one the call is told about, whichever policies the evaluated set held.
  const holding = new Set(answer.determining);
  const satisfied = [...policy.meta].filter(([id]) => holding.has(id)).map(([id, meta]) => ({ id, meta }));
  if (answer.decision === "deny") {
    // Only plain forbids remain forbids in the evaluated set.
    const forbid = satisfied.find((p) => p.meta.effect === "forbid" && !p.meta.requirements);
    if (forbid) {
      if (forbid.meta.stale) return { ...evaluationDenied(policy, forbid.meta.stale), rule: forbid.meta.ref };
      return { decision: "deny", rule: forbid.meta.ref, reason: forbid.meta.reason };
    }
  }
  const permits = satisfied.filter((p) => p.meta.effect === "permit");
  const requestables = satisfied.filter((p) => p.meta.effect === "forbid" && p.meta.requirements);

  let base: { effect: "allow"; ref: RuleRef | null } | { effect: "requestable"; ref: RuleRef; requirements: Requirements; reason: string };
  if (permits.length > 0) {
    base = { effect: "allow", ref: permits[0].meta.ref };
  } else {
    const { posture, ref } = policy.posture(req.subject.agentName, tool.name);
    if (posture.effect === "deny") {
      return { decision: "deny", rule: ref, reason: `No policy permits ${req.subject.agentName} to call ${tool.name}.` };
    }
    base = posture.effect === "allow" ? { effect: "allow", ref } : { effect: "requestable", ref, requirements: posture.requirements, reason: posture.reason };
  }

  const candidates = requestables.map((p) => ({ ref: p.meta.ref, requirements: p.meta.requirements!, reason: p.meta.reason }));
  if (base.effect === "requestable") candidates.push({ ref: base.ref, requirements: base.requirements, reason: base.reason });
  if (candidates.length === 0) return { decision: "allow", rule: base.ref };
  // Between equally strict ones the first written decides (the sort is stable, the candidates in the policy's own
  // order): a form rule before the document's policies (its words are the ones the admin wrote for that tool), the
  // document's policies in their order, the default posture last.
  const strictest = candidates.sort((a, b) => strictness(a.requirements, b.requirements))[0];
  if (satisfies(strictest.requirements, req.context.approval, now)) return { decision: "allow", rule: strictest.ref, requirements: strictest.requirements };
  return { decision: "requestable", rule: strictest.ref, reason: strictest.reason, requirements: strictest.requirements };
}

function fullAnswer(req: EvaluationRequest, policy: CompiledPolicy, tool: PolicyTool, context: Record<string, CedarValue>, resourceAttrs: Record<string, CedarValue>): CedarAnswer {
  const { principal, entities } = subjectEntities(req.subject);
  const resource = { type: tool.resourceEntity, id: req.resource.id };
  return authorize(policy.preparedFor(tool.name), {
    principal,
    action: { type: "Action", id: tool.name },
    resource,
    context,
    entities: [...entities, { uid: resource, attrs: resourceAttrs, parents: [] }],
  });
}

/**
 * The tools policy may ever permit (or let be requested by) this principal: Cedar's partial evaluation with the
 * resource and the context unknown. A tool is hidden when a plain forbid must hold for every call of it, or when no
 * permit can hold and the default posture denies. Listing is a courtesy: every call is still evaluated in full.
 */
export function visibleTools(policy: CompiledPolicy, subject: Subject): Set<string> {
  const cacheKey = subjectKey(subject);
  const hit = policy.visibility.get(cacheKey);
  if (hit) return hit;
  const { principal, entities } = subjectEntities(subject);
  const visible = new Set<string>();
  for (const tool of policy.tools.values()) {
    const answer = authorizePartial(policy.evaluated, principal, { type: "Action", id: tool.name }, entities, ["args", "history", "time"]);
    if (!answer.ok) {
      visible.add(tool.name);
      continue;
    }
    // A plain forbid that must hold for every call of the tool (requestable forbids are permits in the evaluated set,
    // so one that holds is a permit here and never hides its tool).
    const hardForbid = answer.mustBeDetermining.some((id) => {
      const m = policy.meta.get(id);
      return m?.effect === "forbid" && !m.requirements;
    });
    if (hardForbid) continue;
    const mayPermit = [...answer.mayBeDetermining, ...answer.mustBeDetermining].some((id) => policy.meta.get(id)?.effect === "permit");
    if (!mayPermit && policy.posture(subject.agentName, tool.name).posture.effect === "deny") continue;
    visible.add(tool.name);
  }
  if (policy.visibility.size > 500) policy.visibility.clear();
  policy.visibility.set(cacheKey, visible);
  return visible;
}
