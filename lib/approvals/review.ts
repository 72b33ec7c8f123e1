/**
 * Four-eyes review in the built-in backend. A reviewer reviews a request once (unique constraint), never their
 * own request, only in their group; any denial is terminal; N distinct eligible approvals approve it.
 *
 * The review row is committed before the count, so of two parallel approvals the later count sees both.
 */
import { db, Prisma } from "../db/client";
import { appendAudit } from "../audit/append";
import { eligibleApproverIds, isEligibleReviewer } from "./eligibility";

export type ReviewInput = { requestId: string; reviewerId: string; decision: "approve" | "deny"; comment?: string };

export type ReviewResult =
  | { ok: true; taskId: string; requestStatus: string }
  | { ok: false; error: string };

export async function reviewRequest(input: ReviewInput, now: Date): Promise<ReviewResult> {
  const comment = input.comment?.trim() || null;
  if (input.decision === "deny" && !comment) return { ok: false, error: "A denial needs a reason." };
  const [req, reviewer] = await Promise.all([
    db().approvalRequest.findUnique({ where: { id: input.requestId } }),
    db().user.findUnique({ where: { id: input.reviewerId } }),
  ]);
  if (!req || !reviewer) return { ok: false, error: "No such request." };
  if (reviewer.id === req.requesterUserId) return { ok: false, error: "You cannot review your own request." };
  if (!isEligibleReviewer(reviewer, req.approverGroup, req.requesterUserId)) {
    return { ok: false, error: `Only active ${req.approverGroup} reviewers can review this request.` };
  }
  if (req.status !== "pending") return { ok: false, error: `This request is already ${req.status}.` };
  if (req.deadline.getTime() <= now.getTime()) return { ok: false, error: "This request has expired." };

  try {
    await db().$transaction(async (tx) => {
      await tx.review.create({ data: { requestId: req.id, reviewerId: reviewer.id, decision: input.decision, comment, createdAt: now } });
      await appendAudit(tx, {
        type: input.decision === "approve" ? "review.approved" : "review.denied",
        actor: `user:${reviewer.id}`,
        taskId: req.taskId,
        requestId: req.id,
        data: { reviewer: reviewer.email, comment },
        at: now,
      });
    });
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002") {
      return { ok: false, error: "You have already reviewed this request." };
    }
    throw e;
  }

  if (input.decision === "deny") {
    await db().$transaction(async (tx) => {
      const res = await tx.approvalRequest.updateMany({ where: { id: req.id, status: "pending" }, data: { status: "denied", decidedAt: now } });
      if (res.count === 1) {
        await appendAudit(tx, {
          type: "request.denied",
          actor: `user:${reviewer.id}`,
          taskId: req.taskId,
          requestId: req.id,
          at: now,
          announce: { event: "request.decided", data: { decision: "denied" } },
        });
      }
    });
  } else {
    const approvers = await eligibleApproverIds(req.id, req.approverGroup, req.requesterUserId);
    if (approvers.length >= req.approvalsRequired) {
      const expiresAt = new Date(now.getTime() + req.approvalValiditySec * 1000);
      await db().$transaction(async (tx) => {
        const res = await tx.approvalRequest.updateMany({
          where: { id: req.id, status: "pending" },
          data: { status: "approved", approvedAt: now, approvalExpiresAt: expiresAt, decidedAt: now },
        });
        if (res.count === 1) {
          await appendAudit(tx, {
            type: "request.approved",
            actor: `user:${reviewer.id}`,
            taskId: req.taskId,
            requestId: req.id,
            data: { approvals: approvers.length, expiresAt: expiresAt.toISOString() },
            at: now,
            announce: { event: "request.decided", data: { decision: "approved", approvalExpiresAt: expiresAt.toISOString() } },
          });
        }
      });
    }
  }
  const after = await db().approvalRequest.findUniqueOrThrow({ where: { id: req.id }, select: { status: true } });
  return { ok: true, taskId: req.taskId, requestStatus: after.status };
}
