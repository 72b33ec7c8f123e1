/**
 * Who may review a request, at a given time: an active reviewer who is not the requester and who holds one of the
 * groups the request is offered to, either as their own group or through a delegation active at that time.
 *
 *  - A request is offered to its approver group and, once escalated (escalatedAt set), to its fallback group too.
 *  - A delegation (lib/approvals/delegation.ts) active at the time grants its delegate the approver groups of its
 *    delegator, as long as the delegator is still an active reviewer and is not the request's requester (a
 *    requester's delegate never approves on the requester's behalf).
 *  - The reviewer acts as themselves: one review row per reviewer and request, so a delegate counts once however
 *    many people they stand in for, and the delegator stays eligible on their own account.
 *
 * One rule, stated once as SQL (`eligibleUser`) and used by every check: the review itself, the recount at the
 * execution claim (at the claim's time), the status note, the inbox, and the notification outbox.
 */
import { db, Prisma } from "../db/client";
import type { Tx } from "../audit/append";

/** The groups a request is offered to and who asked for it: what eligibility is judged against. */
export type Offer = { approverGroup: string; fallbackGroup?: string | null; escalatedAt?: Date | null; requesterUserId: string };

/** The groups a request is offered to now: its approver group, and its fallback group once it has escalated. */
export function offeredGroups(offer: Offer): string[] {
  return offer.escalatedAt && offer.fallbackGroup && offer.fallbackGroup !== offer.approverGroup
    ? [offer.approverGroup, offer.fallbackGroup]
    : [offer.approverGroup];
}

/** The SQL of `offeredGroups` over a request aliased `r` in the enclosing statement. */
const OFFERED_GROUPS_OF_REQUEST = Prisma.sql`(CASE WHEN r."escalatedAt" IS NOT NULL AND r."fallbackGroup" IS NOT NULL
  THEN ARRAY[r."approverGroup", r."fallbackGroup"] ELSE ARRAY[r."approverGroup"] END)`;

/** An active delegation at `at` to the user aliased `u`, from an active reviewer (not the requester) holding one of `groups`. */
function delegatedTo(groups: Prisma.Sql, requesterUserId: Prisma.Sql, at: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`EXISTS (SELECT 1 FROM "Delegation" d JOIN "User" o ON o.id = d."delegatorId"
    WHERE d."delegateId" = u.id AND d."endedAt" IS NULL AND d."startsAt" <= ${at} AND d."endsAt" > ${at}
      AND o.active AND o.role = 'reviewer' AND o.id <> ${requesterUserId} AND o.groups && ${groups})`;
}

/** The eligibility rule as SQL, over a user aliased `u` in the enclosing statement. */
function eligibleUser(groups: Prisma.Sql, requesterUserId: Prisma.Sql, at: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`u.active AND u.role = 'reviewer' AND u.id <> ${requesterUserId}
    AND (u.groups && ${groups} OR ${delegatedTo(groups, requesterUserId, at)})`;
}

function offerSql(offer: Offer, at: Date): [Prisma.Sql, Prisma.Sql, Prisma.Sql] {
  return [Prisma.sql`${offeredGroups(offer)}::text[]`, Prisma.sql`${offer.requesterUserId}`, Prisma.sql`${at}::timestamp`];
}

/**
 * The number of eligible reviewers at `at` of the approval request aliased `r` in the enclosing statement, as SQL, so
 * a request's status reads it in the statement that reads the request.
 */
export function eligibleReviewersOfRequest(at: Date): Prisma.Sql {
  return Prisma.sql`(SELECT count(*)::int FROM "User" u
    WHERE ${eligibleUser(OFFERED_GROUPS_OF_REQUEST, Prisma.raw(`r."requesterUserId"`), Prisma.sql`${at}::timestamp`)})`;
}

/**
 * Whether the user `userId` is eligible at `at` for the approval request aliased `r` in the enclosing statement, as
 * SQL: what an inbox adds when a delegation lends its viewer groups (a request of the delegator's own is offered to
 * the groups the viewer holds then, yet the viewer may not review it).
 */
export function eligibleForRequest(userId: string, at: Date): Prisma.Sql {
  return Prisma.sql`EXISTS (SELECT 1 FROM "User" u WHERE u.id = ${userId}
    AND ${eligibleUser(OFFERED_GROUPS_OF_REQUEST, Prisma.raw(`r."requesterUserId"`), Prisma.sql`${at}::timestamp`)})`;
}

/** Whether this user may review a request with this offer at `at` (the rule above, for one user). */
export async function isEligibleReviewer(userId: string, offer: Offer, at: Date, client: Tx = db()): Promise<boolean> {
  const rows = await client.$queryRaw<{ id: string }[]>`
    SELECT u.id FROM "User" u WHERE u.id = ${userId} AND ${eligibleUser(...offerSql(offer, at))}`;
  return rows.length === 1;
}

/** The eligible reviewers of a request at `at`, as user ids ordered by email. */
export async function eligibleReviewerIds(offer: Offer, at: Date, client: Tx = db()): Promise<string[]> {
  const rows = await client.$queryRaw<{ id: string }[]>`
    SELECT u.id FROM "User" u WHERE ${eligibleUser(...offerSql(offer, at))} ORDER BY u.email`;
  return rows.map((r) => r.id);
}

/** Distinct approvers of a request who are still eligible at `at` (never the requester, whatever their groups), in one statement. */
export async function eligibleApproverIds(requestId: string, offer: Offer, at: Date, client: Tx = db()): Promise<string[]> {
  // One review per reviewer and request (unique), so each approver appears once, in the order they approved.
  const rows = await client.$queryRaw<{ id: string }[]>`
    SELECT u.id FROM "Review" v JOIN "User" u ON u.id = v."reviewerId"
    WHERE v."requestId" = ${requestId} AND v.decision = 'approve' AND ${eligibleUser(...offerSql(offer, at))}
    ORDER BY v."createdAt", v.id`;
  return rows.map((r) => r.id);
}

/**
 * Of `approverIds`, those still eligible at `at`, with their user rows and the delegations that make them eligible
 * locked FOR SHARE until the enclosing transaction ends: a concurrent deactivation, group change or end of a
 * delegation waits for it (the claim reads this inside its transaction).
 */
export async function lockEligibleApprovers(tx: Tx, approverIds: string[], offer: Offer, at: Date): Promise<string[]> {
  const [groups, requester, when] = offerSql(offer, at);
  await tx.$queryRaw`
    SELECT d.id FROM "Delegation" d
    WHERE d."delegateId" = ANY(${approverIds}) AND d."endedAt" IS NULL AND d."startsAt" <= ${when} AND d."endsAt" > ${when}
    FOR SHARE`;
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT u.id FROM "User" u
    WHERE u.id = ANY(${approverIds}) AND ${eligibleUser(groups, requester, when)}
    FOR SHARE`;
  return rows.map((r) => r.id);
}

/**
 * The approver groups `userId` holds through delegations active at `at` (the delegators' groups), beside their own:
 * what the inbox lists and what the request page lets them see. The requester exclusion is per request, above.
 */
export async function delegatedGroups(userId: string, at: Date, client: Tx = db()): Promise<string[]> {
  const rows = await client.$queryRaw<{ g: string }[]>`
    SELECT DISTINCT unnest(o.groups) AS g FROM "Delegation" d JOIN "User" o ON o.id = d."delegatorId"
    WHERE d."delegateId" = ${userId} AND d."endedAt" IS NULL AND d."startsAt" <= ${at}::timestamp AND d."endsAt" > ${at}::timestamp
      AND o.active AND o.role = 'reviewer'
    ORDER BY g`;
  return rows.map((r) => r.g);
}

/** The groups a request is offered to, in words ("treasury", or "treasury or sre" once escalated). */
export function offeredGroupsWords(offer: Offer): string {
  return offeredGroups(offer).join(" or ");
}

/**
 * For an eligible reviewer who holds none of the offered groups themselves: the people (active delegations at `at`)
 * they stand in for, by email, so the audit trail says so. Empty when their own groups make them eligible.
 */
export async function standingInFor(userId: string, offer: Offer, at: Date, client: Tx = db()): Promise<string[]> {
  const [groups, requester, when] = offerSql(offer, at);
  const rows = await client.$queryRaw<{ email: string }[]>`
    SELECT o.email FROM "User" u JOIN "Delegation" d ON d."delegateId" = u.id JOIN "User" o ON o.id = d."delegatorId"
    WHERE u.id = ${userId} AND NOT (u.groups && ${groups})
      AND d."endedAt" IS NULL AND d."startsAt" <= ${when} AND d."endsAt" > ${when}
      AND o.active AND o.role = 'reviewer' AND o.id <> ${requester} AND o.groups && ${groups}
    ORDER BY o.email`;
  return rows.map((r) => r.email);
}
