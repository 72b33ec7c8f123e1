/**
 * A reviewer withdraws their approval of a request that is still waiting for others. Only while the request is
 * pending and before its deadline: once the quorum completed (or anyone denied), the approval stands as recorded.
 *
 * Like every review, the withdrawal first locks the request's row (FOR UPDATE), so it and the approval that would
 * complete the quorum happen one after the other: either the withdrawal commits first and that approval counts one
 * approval fewer (the request stays pending), or the approval commits first and the withdrawal finds the request
 * approved and changes nothing. The delete is itself conditional on the request still being pending, so an
 * executed request never has fewer approvals than its quorum.
 */
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import { isDatabaseUnavailable } from "../db/unavailable";
import { DECISION_NOT_RECORDED, DECISION_UNKNOWN } from "./review";

/** What the Awaiting others view's withdraw action answers with. */
export type WithdrawState = { status: "idle" } | { status: "error"; message: string } | { status: "done"; message: string };

export type WithdrawResult = { ok: true; taskId: string } | { ok: false; error: string };

type Locked = { id: string; taskId: string; status: string; deadline: Date };

class Refused extends Error {}

export async function withdrawApproval(input: { requestId: string; reviewerId: string }, now: Date): Promise<WithdrawResult> {
  let committing = false;
  try {
    return await db().$transaction(async (tx): Promise<WithdrawResult> => {
      const [req] = await tx.$queryRaw<Locked[]>`
        SELECT id, "taskId", status, deadline FROM "ApprovalRequest" WHERE id = ${input.requestId} FOR UPDATE`;
      if (!req) throw new Refused("No such request.");
      if (req.status !== "pending") throw new Refused(`This request is already ${req.status}; your approval stands.`);
      if (req.deadline.getTime() <= now.getTime()) throw new Refused("This request has expired.");
      const removed = await tx.$executeRaw`
        DELETE FROM "Review" v
        WHERE v."requestId" = ${req.id} AND v."reviewerId" = ${input.reviewerId} AND v.decision = 'approve'
          AND EXISTS (SELECT 1 FROM "ApprovalRequest" r WHERE r.id = v."requestId" AND r.status = 'pending')`;
      if (removed !== 1) throw new Refused("You have no approval of this request to withdraw.");
      const reviewer = await tx.user.findUnique({ where: { id: input.reviewerId }, select: { email: true } });
      await appendAudit(tx, {
        type: "review.withdrawn",
        actor: `user:${input.reviewerId}`,
        taskId: req.taskId,
        requestId: req.id,
        data: { reviewer: reviewer?.email ?? null },
        at: now,
      });
      committing = true;
      return { ok: true, taskId: req.taskId };
    });
  } catch (e) {
    if (e instanceof Refused) return { ok: false, error: e.message };
    if (isDatabaseUnavailable(e)) return { ok: false, error: committing ? DECISION_UNKNOWN : DECISION_NOT_RECORDED };
    throw e;
  }
}
