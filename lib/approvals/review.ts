/**
 * Four-eyes review in the built-in backend. A reviewer reviews a request once (unique constraint), never their
 * own request, only in their group; any recorded denial is terminal; N distinct eligible approvals approve it.
 *
 * A review and the request's decision are one transaction, and every review of a request first locks the
 * request's row (FOR UPDATE). So reviews of one request are recorded and decided one at a time, each seeing every
 * review recorded before it, at any isolation level (PostgreSQL's READ COMMITTED included): a denial and a final
 * approval can never both win, and a request that has a denial is never approved.
 */
import { db, Prisma } from "../db/client";
import { appendAudit, type Tx } from "../audit/append";
import { eligibleApproverIds, isEligibleReviewer, offeredGroupsWords, standingInFor } from "./eligibility";
import { enqueueNotifications } from "../notify/outbox";
import { isDatabaseUnavailable } from "../db/unavailable";
import { observeTimeToDecision } from "../metrics";
import { argumentDigestOf, consumeApprovalPasskey, PasskeyRefused, type PasskeyEvidence, type PasskeyProof } from "../passkeys/approval";

export type ReviewInput = {
  requestId: string;
  reviewerId: string;
  decision: "approve" | "deny";
  comment?: string;
  /** The reviewer's passkey confirmation, needed to approve a request whose rule requires a passkey. */
  passkey?: PasskeyProof;
  /**
   * For an approval: a check judged under the request's row lock with the other reviewers' approvals so far (the typed
   * confirmation of the approval that completes a high-risk quorum); a refusal in words, or null.
   */
  confirm?: (req: { body: unknown; approvalsRequired: number; approvals: number }) => string | null;
};

export type ReviewResult =
  | { ok: true; taskId: string; requestStatus: string }
  | { ok: false; error: string };

type LockedRequest = {
  id: string;
  taskId: string;
  requesterUserId: string;
  approverGroup: string;
  fallbackGroup: string | null;
  escalatedAt: Date | null;
  approvalsRequired: number;
  status: string;
  deadline: Date;
  approvalValiditySec: number;
  requirePasskey: boolean;
  createdAt: Date;
};

class Refused extends Error {}

/** The request's row, locked FOR UPDATE until the transaction ends: what a review decides on. */
export async function lockRequest(tx: Tx, requestId: string): Promise<LockedRequest | undefined> {
  const [req] = await tx.$queryRaw<LockedRequest[]>`
    SELECT id, "taskId", "requesterUserId", "approverGroup", "fallbackGroup", "escalatedAt", "approvalsRequired", status, deadline, "approvalValiditySec", "requirePasskey", "createdAt"
    FROM "ApprovalRequest" WHERE id = ${requestId}
    FOR UPDATE`;
  return req;
}

export async function reviewRequest(input: ReviewInput, now: Date): Promise<ReviewResult> {
  const comment = input.comment?.trim() || null;
  if (input.decision === "deny" && !comment) return { ok: false, error: "A denial needs a reason." };
  // Whether the transaction reached its commit: a lost connection before it means nothing was recorded.
  let committing = false;
  try {
    const reviewer = await db().user.findUnique({ where: { id: input.reviewerId } });
    if (!reviewer) return { ok: false, error: "No such request." };
    let createdAt: Date | undefined;
    const result = await db().$transaction(async (tx): Promise<ReviewResult> => {
      const req = await lockRequest(tx, input.requestId);
      if (!req) throw new Refused("No such request.");
      if (reviewer.id === req.requesterUserId) throw new Refused("You cannot review your own request.");
      if (!(await isEligibleReviewer(reviewer.id, req, now, tx))) {
        throw new Refused(`Only active ${offeredGroupsWords(req)} reviewers can review this request.`);
      }
      if (req.status !== "pending") throw new Refused(`This request is already ${req.status}.`);
      if (req.deadline.getTime() <= now.getTime()) throw new Refused("This request has expired.");
      // A second review by the same reviewer is refused by the (request, reviewer) unique key at the insert below
      // (P2002, answered as "already reviewed"), which also holds against a concurrent double submit.
      // An approval is given for what the reviewer was shown: a request whose sealed details fail their integrity
      // check cannot be approved (reading them throws SealedRecordError). A denial needs no details to be safe.
      let passkey: PasskeyEvidence | undefined;
      if (input.decision === "approve") {
        const { body } = await tx.approvalRequest.findUniqueOrThrow({ where: { id: req.id }, select: { body: true } });
        if (input.confirm) {
          // Others' approvals: a second review by this reviewer is refused as such at the insert below.
          const approvals = await tx.review.count({ where: { requestId: req.id, decision: "approve", reviewerId: { not: reviewer.id } } });
          const refusal = input.confirm({ body, approvalsRequired: req.approvalsRequired, approvals });
          if (refusal) throw new Refused(refusal);
        }
        // A passkey rule: the approval is recorded only with this reviewer's own assertion over this request and
        // these arguments. A denial needs none.
        if (req.requirePasskey) {
          passkey = await consumeApprovalPasskey(tx, { requestId: req.id, argumentDigest: argumentDigestOf(body), reviewerId: reviewer.id, proof: input.passkey }, now);
        }
      }
      await tx.review.create({ data: { requestId: req.id, reviewerId: reviewer.id, decision: input.decision, comment, createdAt: now } });
      // A delegate reviews as themselves; the trail also names whom they stand in for.
      const standingIn = await standingInFor(reviewer.id, req, now, tx);
      await appendAudit(tx, {
        type: input.decision === "approve" ? "review.approved" : "review.denied",
        actor: `user:${reviewer.id}`,
        taskId: req.taskId,
        requestId: req.id,
        data: { reviewer: reviewer.email, comment, ...(passkey ? { passkey } : {}), ...(standingIn.length ? { standingInFor: standingIn } : {}) },
        at: now,
      });
      createdAt = req.createdAt;
      const requestStatus = await settleRequest(tx, req, `user:${reviewer.id}`, now);
      committing = true;
      return { ok: true, taskId: req.taskId, requestStatus };
    });
    // This review decided the request (settleRequest says so only when its conditional update won), and committed.
    if (result.ok && createdAt && (result.requestStatus === "approved" || result.requestStatus === "denied")) {
      observeTimeToDecision(result.requestStatus, (now.getTime() - createdAt.getTime()) / 1000);
    }
    return result;
  } catch (e) {
    if (e instanceof Refused || e instanceof PasskeyRefused) return { ok: false, error: e.message };
    if (isDatabaseUnavailable(e)) return { ok: false, error: committing ? DECISION_UNKNOWN : DECISION_NOT_RECORDED };
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002") {
      return { ok: false, error: "You have already reviewed this request." };
    }
    throw e;
  }
}

export const DECISION_NOT_RECORDED = "The database is unavailable right now, so your decision was not recorded. Try again in a moment.";
export const DECISION_UNKNOWN =
  "The connection to the database was lost as your decision was being saved, so whether it was recorded is unknown. Reload the request to see.";

/**
 * The request's decision from every review recorded for it, inside the transaction that holds its row lock: any
 * denial denies it; otherwise enough distinct eligible approvals approve it; otherwise it stays pending. The
 * approval itself is conditional on no denial existing, so even a denial recorded by another path wins.
 */
export async function settleRequest(tx: Tx, req: LockedRequest, actor: string, now: Date): Promise<string> {
  const denials = await tx.review.count({ where: { requestId: req.id, decision: "deny" } });
  if (denials > 0) {
    const res = await tx.approvalRequest.updateMany({ where: { id: req.id, status: "pending" }, data: { status: "denied", decidedAt: now } });
    if (res.count === 1) {
      await appendAudit(tx, {
        type: "request.denied",
        actor,
        taskId: req.taskId,
        requestId: req.id,
        at: now,
        announce: { event: "request.decided", data: { decision: "denied" } },
      });
      await enqueueNotifications(tx, req.id, "outcome", now);
    }
    return res.count === 1 ? "denied" : req.status;
  }
  const approvers = await eligibleApproverIds(req.id, req, now, tx);
  if (approvers.length < req.approvalsRequired) return "pending";
  const expiresAt = new Date(now.getTime() + req.approvalValiditySec * 1000);
  const n = await tx.$executeRaw`
    UPDATE "ApprovalRequest" r SET status = 'approved', "approvedAt" = ${now}, "approvalExpiresAt" = ${expiresAt}, "decidedAt" = ${now},
      "updatedAt" = ${now}
    WHERE r.id = ${req.id} AND r.status = 'pending'
      AND NOT EXISTS (SELECT 1 FROM "Review" v WHERE v."requestId" = r.id AND v.decision = 'deny')`;
  if (n !== 1) return req.status;
  await appendAudit(tx, {
    type: "request.approved",
    actor,
    taskId: req.taskId,
    requestId: req.id,
    data: { approvals: approvers.length, expiresAt: expiresAt.toISOString() },
    at: now,
    announce: { event: "request.decided", data: { decision: "approved", approvalExpiresAt: expiresAt.toISOString() } },
  });
  await enqueueNotifications(tx, req.id, "outcome", now);
  return "approved";
}
