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

/** isEligibleReviewer as SQL, over a user aliased `u` in the enclosing statement. */
function eligibleUser(approverGroup: Prisma.Sql, requesterUserId: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`u.active AND u.role = 'reviewer' AND ${approverGroup} = ANY(u.groups) AND u.id <> ${requesterUserId}`;
}

/**
 * The number of eligible reviewers of the approval request aliased `r` in the enclosing statement, as SQL, so a
 * request's status reads it in the statement that reads the request.
 */
export const ELIGIBLE_REVIEWERS_OF_REQUEST = Prisma.sql`(SELECT count(*)::int FROM "User" u
  WHERE ${eligibleUser(Prisma.raw(`r."approverGroup"`), Prisma.raw(`r."requesterUserId"`))})`;

export async function eligibleReviewerCount(approverGroup: string, requesterUserId: string): Promise<number> {
  return db().user.count({
    where: { active: true, role: "reviewer", groups: { has: approverGroup }, id: { not: requesterUserId } },
  });
}

/** Distinct approvers of a request who are still eligible now (never the requester, whatever their groups), in one statement. */
export async function eligibleApproverIds(requestId: string, approverGroup: string, requesterUserId: string, client: Tx = db()): Promise<string[]> {
  // One review per reviewer and request (unique), so each approver appears once, in the order they approved.
  const rows = await client.$queryRaw<{ id: string }[]>`
    SELECT u.id FROM "Review" v JOIN "User" u ON u.id = v."reviewerId"
    WHERE v."requestId" = ${requestId} AND v.decision = 'approve' AND ${eligibleUser(Prisma.sql`${approverGroup}`, Prisma.sql`${requesterUserId}`)}
    ORDER BY v."createdAt", v.id`;
  return rows.map((r) => r.id);
}

/**
 * Of `approverIds`, those still eligible now, with their user rows locked FOR SHARE until the enclosing transaction
 * ends: a concurrent deactivation or group change waits for it (the claim reads this inside its transaction).
 */
export async function lockEligibleApprovers(tx: Tx, approverIds: string[], approverGroup: string, requesterUserId: string): Promise<string[]> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT u.id FROM "User" u
    WHERE u.id = ANY(${approverIds}) AND ${eligibleUser(Prisma.sql`${approverGroup}`, Prisma.sql`${requesterUserId}`)}
    FOR SHARE`;
  return rows.map((r) => r.id);
}
