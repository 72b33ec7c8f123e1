/**
 * The admin's all-pending view: every request still waiting for a decision, across groups, with whom it waits on
 * (its approver group, how many approvals are still needed, and the people who may give them). Read-only; the
 * caller checks the admin role.
 */
import { eligibleReviewerIds, offeredGroups, type Offer } from "../approvals/eligibility";
import { db } from "../db/client";
import { readBody, summaryOf } from "../inbox/body";
import type { RequestListItem } from "../inbox/inbox";
import { PRE_CLAIM_PHASES } from "../tasks/view";

export type Person = { id: string; name: string; email: string; role: string; groups: string[]; active: boolean };

export type WaitingOn = {
  approverGroup: string;
  /** Every group the request is offered to now: its approver group, and its fallback group once escalated. */
  offeredTo: string[];
  /** Approvals still needed before the call may run (never below 0). */
  stillNeeded: number;
  /** Who may give them now: eligible reviewers of the group who are not the requester and have not reviewed it. */
  eligible: { id: string; name: string; email: string }[];
  /** Fewer eligible people than approvals still needed: it cannot be approved as things stand. */
  stuck: boolean;
};

/**
 * Whom one pending request waits on. `eligibleIds` are the people the eligibility rule (lib/approvals/eligibility.ts:
 * groups, escalation, delegations, never the requester) admits now; `reviews` those who already reviewed it (an
 * approval counts towards the quorum; a reviewer never reviews twice).
 */
export function waitingOn(
  r: Offer & { approvalsRequired: number },
  reviews: { reviewerId: string; decision: string }[],
  people: Person[],
  eligibleIds: ReadonlySet<string>,
): WaitingOn {
  const approvals = reviews.filter((v) => v.decision === "approve").length;
  const reviewed = new Set(reviews.map((v) => v.reviewerId));
  const eligible = people
    .filter((p) => !reviewed.has(p.id) && eligibleIds.has(p.id))
    .map((p) => ({ id: p.id, name: p.name, email: p.email }))
    .sort((a, b) => a.name.localeCompare(b.name));
  const stillNeeded = Math.max(r.approvalsRequired - approvals, 0);
  return { approverGroup: r.approverGroup, offeredTo: offeredGroups(r), stillNeeded, eligible, stuck: eligible.length < stillNeeded };
}

export type PendingRow = RequestListItem & {
  createdAt: Date;
  deadline: Date;
  questionOpen: boolean;
  waitingOn: WaitingOn;
};

export const PENDING_LIMIT = 500;

/**
 * Every request still waiting for a decision at `now` (pending, before its deadline, and the request its task waits
 * on), soonest deadline first, at most PENDING_LIMIT.
 */
export async function pendingAcrossGroups(now: Date, limit = PENDING_LIMIT): Promise<{ rows: PendingRow[]; more: boolean }> {
  const requests = await db().approvalRequest.findMany({
    where: { status: "pending", deadline: { gt: now } },
    orderBy: [{ deadline: "asc" }, { id: "asc" }],
    take: limit + 1,
    select: {
      id: true, taskId: true, body: true, approverGroup: true, fallbackGroup: true, escalatedAt: true, approvalsRequired: true, requesterUserId: true, createdAt: true, deadline: true,
      reviews: { select: { reviewerId: true, decision: true } },
    },
  });
  const [tasks, people] = await Promise.all([
    db().task.findMany({ where: { id: { in: requests.map((r) => r.taskId) } }, select: { id: true, handle: true, status: true, phase: true } }),
    db().user.findMany({ where: { active: true, role: "reviewer" }, select: { id: true, name: true, email: true, role: true, groups: true, active: true } }),
  ]);
  const taskOf = new Map(tasks.map((t) => [t.id, t]));
  const waiting = requests.filter((r) => {
    const t = taskOf.get(r.taskId);
    return t && t.handle === r.id && ["working", "input_required"].includes(t.status) && PRE_CLAIM_PHASES.includes(t.phase);
  });
  // The rule itself judges who may review each request now (one indexed query per listed request, at most PENDING_LIMIT).
  const eligible = await Promise.all(waiting.map(async (r) => new Set(await eligibleReviewerIds(r, now))));
  const rows = waiting
    .map((r, i) => {
      const body = readBody(r.body);
      return {
        id: r.id,
        taskId: r.taskId,
        tool: body.tool ?? "unknown",
        summary: summaryOf(body),
        requesterName: body.requester?.userName ?? "unknown user",
        agentName: body.requester?.agentName ?? "unknown agent",
        approverGroup: r.approverGroup,
        approvals: r.reviews.filter((v) => v.decision === "approve").length,
        approvalsRequired: r.approvalsRequired,
        createdAt: r.createdAt,
        deadline: r.deadline,
        questionOpen: taskOf.get(r.taskId)?.status === "input_required",
        waitingOn: waitingOn(r, r.reviews, people, eligible[i]),
      };
    });
  return { rows: rows.slice(0, limit), more: requests.length > limit };
}
