/**
 * Escalation: a rule may name an escalation time and a fallback approver group. The request stores both when it is
 * created (as its rule stated them then); a request still pending at its escalation time is offered to the
 * fallback group too (lib/approvals/eligibility.ts), once, and the fallback group's newly eligible reviewers and
 * the admins are told through the notification outbox. The four-eyes rules do not change: the requester is never
 * eligible, approvers are distinct, and any denial stands.
 *
 * Run by the sweeper with the time passed in. Each request escalates in one conditional UPDATE (pending, due, not
 * yet escalated), so two sweepers, or two replicas, escalate it once: only the update that wins audits and notifies.
 */
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import { enqueueNotifications } from "../notify/outbox";
import type { Requirements } from "../policy/evaluate";

/** What a request stores of its rule's escalation at creation: when it escalates and to whom (both null: never). */
export function escalationOf(
  requirements: Pick<Requirements, "escalateAfterSec" | "fallbackGroup" | "approverGroup">,
  createdAt: Date,
): { escalateAt: Date | null; fallbackGroup: string | null } {
  const after = requirements.escalateAfterSec;
  const group = requirements.fallbackGroup;
  if (!group || group === requirements.approverGroup || !Number.isInteger(after) || after! <= 0) return { escalateAt: null, fallbackGroup: null };
  return { escalateAt: new Date(createdAt.getTime() + after! * 1000), fallbackGroup: group };
}

/**
 * Escalates one request if it is due at `now`, in one conditional UPDATE; audits (`request.escalated`) and
 * notifies only when this call's update won. Returns whether it did.
 */
export async function escalateRequest(requestId: string, now: Date): Promise<boolean> {
  return db().$transaction(async (tx) => {
    const n = await tx.$executeRaw`
      UPDATE "ApprovalRequest" SET "escalatedAt" = ${now}, "updatedAt" = ${now}
      WHERE id = ${requestId} AND status = 'pending' AND "escalatedAt" IS NULL AND "fallbackGroup" IS NOT NULL
        AND "escalateAt" IS NOT NULL AND "escalateAt" <= ${now} AND deadline > ${now}`;
    if (n !== 1) return false;
    const req = await tx.approvalRequest.findUniqueOrThrow({ where: { id: requestId }, select: { taskId: true, approverGroup: true, fallbackGroup: true, escalateAt: true } });
    await appendAudit(tx, {
      type: "request.escalated",
      actor: "system",
      taskId: req.taskId,
      requestId,
      data: { approverGroup: req.approverGroup, fallbackGroup: req.fallbackGroup, escalateAt: req.escalateAt!.toISOString() },
      at: now,
    });
    await enqueueNotifications(tx, requestId, "escalated", now);
    return true;
  });
}

/** The sweeper's pass: escalates every request due at `now` (a bounded batch). Returns how many this call escalated. */
export async function escalateDue(now: Date, batch = 200): Promise<number> {
  const due = await db().approvalRequest.findMany({
    where: { status: "pending", escalatedAt: null, fallbackGroup: { not: null }, escalateAt: { lte: now }, deadline: { gt: now } },
    select: { id: true },
    orderBy: { escalateAt: "asc" },
    take: batch,
  });
  let escalated = 0;
  for (const r of due) if (await escalateRequest(r.id, now)) escalated++;
  return escalated;
}
