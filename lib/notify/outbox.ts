/**
 * The notification outbox. A row is written in the same transaction as the change that causes it (a request
 * created, decided, expired, withdrawn), so a committed change is announced and an uncommitted one never is, and it
 * is unique per (request, kind, channel, recipient): writing it again is a no-op. Who is told:
 *  - created and reminders: the eligible reviewers of the request's group (active reviewers in that group, never
 *    the requester); a reminder skips whoever has already reviewed it;
 *  - the outcome: the reviewers who were asked (told it was created, or reviewed it) and the requester's user;
 *  - an escalation: the reviewers it newly reaches (eligible through the fallback group, and not before), as for a
 *    new request, and the active admins.
 * Each channel that is on takes the recipients who accept it (email: their preference); a per-request channel
 * (Slack) takes one row per (request, kind) it takes, under CHANNEL_RECIPIENT. With no channel on, nothing is written.
 */
import type { Tx } from "../audit/append";
import { eligibleReviewerIds } from "../approvals/eligibility";
import { CHANNEL_RECIPIENT, enabledChannels, type NotificationChannel, type Recipient } from "./channels";

export type OutboxKind = "created" | "outcome" | "escalated" | `reminder-${string}`;

const RECIPIENT = { id: true, name: true, email: true, emailNotifications: true } as const;

type RequestRow = { id: string; taskId: string; approverGroup: string; fallbackGroup: string | null; escalatedAt: Date | null; requesterUserId: string };

/** The eligible reviewers of a request at `now` (the rule of lib/approvals/eligibility.ts). */
async function eligibleReviewers(tx: Tx, req: RequestRow, now: Date, except: string[] = []): Promise<Recipient[]> {
  const ids = (await eligibleReviewerIds(req, now, tx)).filter((id) => !except.includes(id));
  return tx.user.findMany({ where: { id: { in: ids } }, select: RECIPIENT, orderBy: { email: "asc" } });
}

export async function recipientsFor(tx: Tx, req: RequestRow, kind: OutboxKind, now: Date): Promise<Recipient[]> {
  if (kind === "created") return eligibleReviewers(tx, req, now);
  if (kind === "escalated") {
    const before = await eligibleReviewerIds({ ...req, escalatedAt: null }, now, tx);
    const admins = await tx.user.findMany({ where: { active: true, role: "admin" }, select: RECIPIENT, orderBy: { email: "asc" } });
    return [...(await eligibleReviewers(tx, req, now, before)), ...admins];
  }
  if (kind === "outcome") {
    const [asked, reviewed] = await Promise.all([
      tx.notification.findMany({ where: { requestId: req.id, kind: "created" }, select: { recipientUserId: true }, distinct: ["recipientUserId"] }),
      tx.review.findMany({ where: { requestId: req.id }, select: { reviewerId: true } }),
    ]);
    const ids = new Set([...asked.map((a) => a.recipientUserId), ...reviewed.map((r) => r.reviewerId), req.requesterUserId]);
    return tx.user.findMany({ where: { id: { in: [...ids] }, active: true }, select: RECIPIENT, orderBy: { email: "asc" } });
  }
  const reviewed = new Set((await tx.review.findMany({ where: { requestId: req.id }, select: { reviewerId: true } })).map((r) => r.reviewerId));
  return (await eligibleReviewers(tx, req, now)).filter((u) => !reviewed.has(u.id));
}

/** Writes the notifications a change to a request causes, inside that change's transaction. Returns the rows written. */
export async function enqueueNotifications(
  tx: Tx,
  requestId: string,
  kind: OutboxKind,
  now: Date,
  channels: NotificationChannel[] = enabledChannels(),
): Promise<number> {
  if (channels.length === 0) return 0;
  const req = await tx.approvalRequest.findUnique({
    where: { id: requestId },
    select: { id: true, taskId: true, approverGroup: true, fallbackGroup: true, escalatedAt: true, requesterUserId: true },
  });
  if (!req) return 0;
  const recipients = await recipientsFor(tx, req, kind, now);
  const row = (c: NotificationChannel, recipientUserId: string) => ({ requestId, taskId: req.taskId, kind, channel: c.name, recipientUserId, nextAttemptAt: now, createdAt: now });
  const data = channels.flatMap((c) =>
    c.perRequest
      ? c.perRequest.takes(kind) ? [row(c, CHANNEL_RECIPIENT)] : []
      : recipients.filter((r) => c.accepts(r)).map((r) => row(c, r.id)),
  );
  if (data.length === 0) return 0;
  const n = await tx.notification.createMany({ data, skipDuplicates: true });
  return n.count;
}
