/**
 * One approval request as a reviewer (or an admin, read-only) sees it: the exact call, who asked and why policy
 * held it, the rule version, four-eyes progress, the clocks, questions to the requester and their answers, and the
 * task's timeline from the audit trail. Read-only; every decision goes through `lib/tasks/decide.ts`, which
 * enforces the four-eyes rules. `whyCannotAct` only decides whether the page offers the buttons, and mirrors them.
 */
import { isEligibleReviewer, offeredGroups, offeredGroupsWords, type Offer } from "@/lib/approvals/eligibility";
import { withDelegatedGroups } from "@/lib/approvals/delegation";
import { canonicalJson, digest } from "@/lib/canonical";
import { db } from "@/lib/db/client";
import { splitQualifiedName, upstreamStanding } from "@/lib/gateway/names";
import { readBody, summaryOf } from "./body";
import { consequenceOf, type Consequence } from "./consequence";
import { factsFor, type RequestFacts } from "./facts";
import { confirmationFor, type Confirmation } from "./high-risk";
import { denialDetailOf } from "@/lib/execution/denial-detail";
import type { Viewer } from "./inbox";
import { badgeStatus, describeOutcome, type Outcome } from "./outcome";
import { timelineFor, type TimelineEntry } from "./timeline";

export type { Viewer } from "./inbox";

export type ReviewView = { id: string; reviewerName: string; decision: string; comment: string | null; at: string };

export type ClarificationView = {
  id: string;
  question: string;
  askedBy: string;
  askedAt: string;
  /** The requester's answer as text, or null while unanswered. */
  answer: string | null;
  /** accept, decline or cancel once answered. */
  answerAction: string | null;
  answeredAt: string | null;
};

export type RuleView = {
  ruleKey: string;
  version: number;
  description: string;
  field: string;
  operator: string;
  value: string;
  approverGroup: string | null;
  approvalsRequired: number;
  requestDeadlineSec: number;
  approvalValiditySec: number;
  requireJustification: boolean;
  /** The rule key's active version now, when it is not this one (the rule changed since). */
  currentVersion: number | null;
};

export type RequestView = {
  id: string;
  taskId: string;
  status: string;
  tool: string;
  summary: string;
  arguments: unknown;
  canonicalArguments: string;
  argumentsDigest: string | null;
  /** Whether the digest recorded with the call matches the arguments shown here. */
  digestMatches: boolean | null;
  /** The arguments were deleted at the end of the task's retention. */
  redacted: boolean;
  bodyDigest: string;
  requesterName: string;
  agentName: string;
  /** Submission input given by the requester before submission (untrusted text). */
  input: { justification: string | null; ticket: string | null } | null;
  reason: string;
  ruleKey: string | null;
  ruleVersion: number | null;
  rule: RuleView | null;
  /** The rule version the task is (or was) decided under (differs from the request's after a re-approval). */
  taskRule: { ruleKey: string; version: number } | null;
  approverGroup: string;
  /** Escalation as the request's rule stated it: when, to whom, and when it happened (null: the rule does not escalate). */
  escalation: { fallbackGroup: string; escalateAt: string; escalatedAt: string | null } | null;
  approvals: number;
  approvalsRequired: number;
  /** Each approval must be confirmed with the reviewer's passkey. */
  requirePasskey: boolean;
  approvalValiditySec: number;
  createdAt: string;
  deadline: string;
  approvedAt: string | null;
  approvalExpiresAt: string | null;
  decidedAt: string | null;
  statusNote: string | null;
  reviews: ReviewView[];
  clarifications: ClarificationView[];
  timeline: TimelineEntry[];
  taskStatus: string | null;
  taskPhase: string | null;
  disposition: string | null;
  claimedAt: string | null;
  executionDeadline: string | null;
  resultText: string | null;
  outcome: Outcome;
  /** The status badge's word: "approved" only when the call ran (or is running). */
  badge: string;
  /** The resource as it is now and the other pending requests on it (null once redacted, or without a task). */
  facts: RequestFacts | null;
  /** For a reviewer who may act: what their approval does (final or not, and the Approve button's words). */
  consequence: Consequence | null;
  /** Who decided the request and how, once decided by a review. */
  decidedBy: { name: string; decision: "approve" | "deny"; at: string } | null;
  /** Nothing more will happen: the page stops refreshing itself. */
  settled: boolean;
  /** Null when this viewer may approve or deny now; otherwise why not, in words. */
  cannotAct: string | null;
  /** Whether this viewer may ask the requester a question now. */
  canAsk: boolean;
  /** A question to the requester is open (the task waits in input_required). */
  questionOpen: boolean;
  /** For a high-risk request: what the reviewer must type to approve. */
  confirmation: Confirmation | null;
  /** How the tool described itself when the call was made (untrusted text), when recorded. */
  toolInfo: { title: string; description: string } | null;
  /** For an upstream tool that would not run now: why (changed upstream, server disabled, no longer offered). */
  toolStanding: string | null;
};

export function whyCannotAct(
  r: Offer & { status: string; deadline: Date },
  reviewerIds: string[],
  viewer: Viewer,
  now: Date,
  /** Whether the viewer is an eligible reviewer of it now (lib/approvals/eligibility.ts). */
  eligible: boolean,
  decidedBy: { name: string; decision: "approve" | "deny" } | null = null,
): string | null {
  if (r.status === "expired" || (r.status === "pending" && r.deadline.getTime() <= now.getTime())) {
    return "This request expired: nobody decided it before its deadline, and the call will not run.";
  }
  if (r.status === "cancelled") return "The agent withdrew this request, so there is nothing left to decide.";
  if (r.status === "denied" && decidedBy) return `${decidedBy.name} denied this request.`;
  if (r.status === "approved" && decidedBy) return `${decidedBy.name} gave the approval that decided this request.`;
  if (r.status !== "pending") return "This request has already been decided.";
  if (r.requesterUserId === viewer.id) return "You asked for this call, so someone else must approve it.";
  if (reviewerIds.includes(viewer.id)) return "You have already reviewed this request; another approver must decide.";
  if (viewer.role === "admin") return "Admins can read requests but do not review them.";
  if (!eligible) {
    return `Only ${offeredGroupsWords(r)} reviewers may decide this request.`;
  }
  return null;
}

/** The review that decided a request: its denial, or the last approval of an approved one. */
export function decidingReview<T extends { decision: string }>(status: string, reviews: T[]): T | null {
  if (status === "denied") return reviews.find((v) => v.decision === "deny") ?? null;
  if (status === "approved") return reviews.filter((v) => v.decision === "approve").at(-1) ?? null;
  return null;
}

function resultTextOf(result: unknown): string | null {
  if (!result || typeof result !== "object") return null;
  const text = (result as { text?: unknown }).text;
  return typeof text === "string" ? text : null;
}

function answerText(answer: unknown): { text: string | null; action: string | null } {
  if (!answer || typeof answer !== "object") return { text: null, action: null };
  const a = answer as { action?: unknown; answer?: unknown; content?: unknown };
  const action = typeof a.action === "string" ? a.action : null;
  if (typeof a.answer === "string") return { text: a.answer, action };
  if (a.content && typeof a.content === "object") return { text: JSON.stringify(a.content), action };
  return { text: action === "decline" ? "(declined to answer)" : action === "cancel" ? "(cancelled)" : null, action };
}

/**
 * Whether a viewer may see a request at all: admins all; reviewers those offered to one of their groups (its
 * fallback group too once escalated; the groups a delegation lends them, see withDelegatedGroups).
 */
export function maySee(viewer: Viewer, r: Offer): boolean {
  return viewer.role === "admin" || (viewer.role === "reviewer" && offeredGroups(r).some((g) => viewer.groups.includes(g)));
}

/**
 * One request as this viewer sees it, or null when it does not exist or this viewer may not see it.
 */
export async function requestFor(id: string, signedIn: Viewer, now: Date): Promise<RequestView | null> {
  const viewer = await withDelegatedGroups(signedIn, now);
  const r = await db().approvalRequest.findUnique({
    where: { id },
    include: { reviews: { orderBy: { createdAt: "asc" }, include: { reviewer: { select: { name: true } } } } },
  });
  if (!r || !maySee(viewer, r)) return null;
  const body = readBody(r.body);
  const [task, clarifications, timeline, ruleRow, standing] = await Promise.all([
    db().task.findUnique({
      where: { id: r.taskId },
      select: {
        status: true, phase: true, handle: true, disposition: true, result: true, argumentsDigest: true, policyRuleKey: true,
        policyVersion: true, claimedAt: true, executionDeadline: true,
      },
    }),
    db().clarification.findMany({ where: { requestId: r.id }, orderBy: { askedAt: "asc" } }),
    timelineFor(r.taskId),
    body.policy?.ruleId ? db().policyRule.findUnique({ where: { id: body.policy.ruleId } }) : Promise.resolve(null),
    r.status === "pending" && body.tool && splitQualifiedName(body.tool) ? upstreamToolStanding(body.tool) : Promise.resolve(null),
  ]);
  const askers = await db().user.findMany({ where: { id: { in: [...new Set(clarifications.map((c) => c.askedBy))] } }, select: { id: true, name: true } });
  const current = ruleRow ? await db().policyRule.findFirst({ where: { ruleKey: ruleRow.ruleKey, active: true }, select: { version: true } }) : null;

  const args = body.arguments ?? null;
  const redacted = !!body.redacted;
  let canonical: string;
  let computed: string | null = null;
  try {
    canonical = canonicalJson(args);
    computed = redacted ? null : digest(args);
  } catch {
    canonical = JSON.stringify(args);
  }
  const recorded = task?.argumentsDigest ?? body.argumentsDigest ?? null;
  const approvals = r.reviews.filter((v) => v.decision === "approve").length;
  const tool = body.tool ?? "unknown";
  const resultText = resultTextOf(task?.result);
  const decider = decidingReview(r.status, r.reviews);
  const decidedBy = decider ? { name: decider.reviewer.name, decision: decider.decision as "approve" | "deny", at: (r.decidedAt ?? decider.createdAt).toISOString() } : null;
  const cannotAct = whyCannotAct(r, r.reviews.map((v) => v.reviewerId), viewer, now, await isEligibleReviewer(viewer.id, r, now), decidedBy);
  const [facts, denialDetail] = await Promise.all([
    redacted ? Promise.resolve(null) : factsFor(r.taskId, now),
    task?.disposition === "denied-not-executed" ? denialDetailOf(r.taskId) : Promise.resolve(null),
  ]);
  const waitsOnThis = task?.handle === r.id;
  const settled =
    !task ||
    ["completed", "failed", "cancelled"].includes(task.status) ||
    (r.status !== "pending" && r.status !== "approved") ||
    (r.status === "approved" && !waitsOnThis);
  const input = body.input && (body.input.justification || body.input.ticket)
    ? { justification: body.input.justification ?? null, ticket: body.input.ticket ?? null }
    : null;

  return {
    id: r.id,
    taskId: r.taskId,
    status: r.status,
    tool,
    summary: summaryOf(body),
    arguments: args,
    canonicalArguments: redacted ? "" : canonical,
    argumentsDigest: recorded,
    digestMatches: recorded && computed ? recorded === computed : null,
    redacted,
    bodyDigest: r.bodyDigest,
    requesterName: body.requester?.userName ?? "unknown user",
    agentName: body.requester?.agentName ?? "unknown agent",
    input,
    reason: body.policy?.reason ?? "",
    ruleKey: body.policy?.ruleKey ?? null,
    ruleVersion: body.policy?.version ?? null,
    rule: ruleRow
      ? {
          ruleKey: ruleRow.ruleKey,
          version: ruleRow.version,
          description: ruleRow.description,
          field: ruleRow.field,
          operator: ruleRow.operator,
          value: ruleRow.value,
          approverGroup: ruleRow.approverGroup,
          approvalsRequired: ruleRow.approvalsRequired,
          requestDeadlineSec: ruleRow.requestDeadlineSec,
          approvalValiditySec: ruleRow.approvalValiditySec,
          requireJustification: ruleRow.requireJustification,
          currentVersion: current && current.version !== ruleRow.version ? current.version : null,
        }
      : null,
    taskRule: task ? { ruleKey: task.policyRuleKey, version: task.policyVersion } : null,
    approverGroup: r.approverGroup,
    escalation:
      r.fallbackGroup && r.escalateAt
        ? { fallbackGroup: r.fallbackGroup, escalateAt: r.escalateAt.toISOString(), escalatedAt: r.escalatedAt?.toISOString() ?? null }
        : null,
    approvals,
    approvalsRequired: r.approvalsRequired,
    approvalValiditySec: r.approvalValiditySec,
    createdAt: r.createdAt.toISOString(),
    deadline: r.deadline.toISOString(),
    approvedAt: r.approvedAt?.toISOString() ?? null,
    approvalExpiresAt: r.approvalExpiresAt?.toISOString() ?? null,
    decidedAt: r.decidedAt?.toISOString() ?? null,
    statusNote: r.statusNote,
    reviews: r.reviews.map((v) => ({
      id: v.id,
      reviewerName: v.reviewer.name,
      decision: v.decision,
      comment: v.comment,
      at: v.createdAt.toISOString(),
    })),
    clarifications: clarifications.map((c) => {
      const a = answerText(c.answer);
      return {
        id: c.id,
        question: c.question,
        askedBy: askers.find((u) => u.id === c.askedBy)?.name ?? "a reviewer",
        askedAt: c.askedAt.toISOString(),
        answer: a.text,
        answerAction: a.action,
        answeredAt: c.answeredAt?.toISOString() ?? null,
      };
    }),
    timeline,
    taskStatus: task?.status ?? null,
    taskPhase: task?.phase ?? null,
    disposition: task?.disposition ?? null,
    claimedAt: task?.claimedAt?.toISOString() ?? null,
    executionDeadline: task?.executionDeadline?.toISOString() ?? null,
    resultText,
    outcome: describeOutcome({
      tool,
      requestStatus: r.status,
      taskStatus: task?.status,
      disposition: task?.disposition,
      approvals,
      approvalsRequired: r.approvalsRequired,
      resultText,
      denialDetail,
    }),
    badge: badgeStatus(r.status, task?.disposition),
    facts,
    consequence: cannotAct === null && facts ? consequenceOf({ approvals, approvalsRequired: r.approvalsRequired, effect: facts.effect, blocked: facts.blocked }) : null,
    decidedBy,
    settled,
    cannotAct,
    canAsk: cannotAct === null && waitsOnThis && task?.status === "working" && task?.phase === "awaiting_approval",
    questionOpen: waitsOnThis && task?.status === "input_required",
    requirePasskey: r.requirePasskey,
    confirmation: cannotAct === null ? confirmationFor({ tool, arguments: args, approvalsRequired: r.approvalsRequired, approvals }) : null,
    toolInfo: body.toolInfo ?? null,
    toolStanding: standing,
  };
}

/** upstreamStanding of the tool named `name` as it stands now, in one statement. */
async function upstreamToolStanding(name: string): Promise<string | null> {
  const split = splitQualifiedName(name)!;
  const row = await db().upstreamTool.findFirst({
    where: { name: split.tool, server: { name: split.server } },
    select: { status: true, server: { select: { enabled: true } } },
  });
  return upstreamStanding(row && { serverEnabled: row.server.enabled, status: row.status }, name);
}

/** The request a task currently waits on (or last waited on), if this viewer may see it: for links by task id. */
export async function requestIdForTask(taskId: string, signedIn: Viewer, now = new Date()): Promise<string | null> {
  const viewer = await withDelegatedGroups(signedIn, now);
  const t = await db().task.findUnique({ where: { id: taskId }, select: { handle: true } });
  const select = { id: true, approverGroup: true, fallbackGroup: true, escalatedAt: true, requesterUserId: true } as const;
  const r = t?.handle
    ? await db().approvalRequest.findUnique({ where: { id: t.handle }, select })
    : await db().approvalRequest.findFirst({ where: { taskId }, orderBy: { createdAt: "desc" }, select });
  return r && maySee(viewer, r) ? r.id : null;
}
