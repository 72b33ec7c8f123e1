/** Who may review: an active reviewer in the required group who is not the requester. Checked again at claim time. */
import { db, Prisma } from "../db/client";
import type { Tx } from "../audit/append";

export function isEligibleReviewer(
  user: { id: string; role: string; groups: string[]; active: boolean },
  approverGroup: string,
  requesterUserId: string,
): boolean {
  return user.active && user.role === "reviewer" && user.groups.includes(approverGroup) && user.id !== requesterUserId;
}

/**
 * The number of eligible reviewers of the approval request aliased `r` in the enclosing statement, as SQL: the
 * same rule as isEligibleReviewer, so a request's status reads it in the statement that reads the request.
 */
export const ELIGIBLE_REVIEWERS_OF_REQUEST = Prisma.sql`(SELECT count(*)::int FROM "User" u
  WHERE u.active AND u.role = 'reviewer' AND r."approverGroup" = ANY(u.groups) AND u.id <> r."requesterUserId")`;

export async function eligibleReviewerCount(approverGroup: string, requesterUserId: string): Promise<number> {
  return db().user.count({
    where: { active: true, role: "reviewer", groups: { has: approverGroup }, id: { not: requesterUserId } },
  });
}

/** Distinct approvers of a request who are still eligible now (never the requester, whatever their groups). */
export async function eligibleApproverIds(requestId: string, approverGroup: string, requesterUserId: string, client: Tx = db()): Promise<string[]> {
  const approvals = await client.review.findMany({ where: { requestId, decision: "approve" }, include: { reviewer: true } });
  return [...new Set(approvals.filter((r) => isEligibleReviewer(r.reviewer, approverGroup, requesterUserId)).map((r) => r.reviewerId))];
}
