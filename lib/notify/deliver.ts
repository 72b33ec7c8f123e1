/**
 * Delivers due notifications from the outbox, at least once: a row is leased with a conditional update before it
 * is sent (several sweepers never send one attempt twice), marked sent after its channel accepted it, and retried
 * with growing delays after a failure, ending as failed after the last attempt. A crash between the send and the
 * mark sends it again, under the same Message-ID. A row is skipped, not sent, when what it announces no longer
 * holds: its channel was turned off, the recipient was deactivated or opted out, or a created/reminder row's
 * request is no longer pending or the recipient no longer eligible or has already reviewed it.
 */
import { SealedRecordError } from "../crypto/seal";
import { db } from "../db/client";
import { faultPoint } from "../faults";
import { countDeliveryFailure } from "../metrics";
import { isEligibleReviewer } from "../approvals/eligibility";
import { readBody, summaryOf } from "../inbox/body";
import { enabledChannels, SendError, type NotificationChannel } from "./channels";
import { renderNotification, type NotificationKind, type RequestFacts } from "./render";
import { requestLink } from "./settings";

/** Delay before attempt n+1 (after n failures); after the last entry the notification is marked failed. */
export const NOTIFY_RETRY_DELAYS_MS = [30_000, 120_000, 600_000, 1_800_000, 3_600_000];
/** How long a leased row is held before another deliverer may send it again (after a crash). */
export const NOTIFY_LEASE_MS = 60_000;

export type NotifyReport = { sent: number; retried: number; failed: number; skipped: number };

export async function deliverNotifications(
  now: Date,
  opts: { limit?: number; channels?: NotificationChannel[] } = {},
): Promise<NotifyReport> {
  const report: NotifyReport = { sent: 0, retried: 0, failed: 0, skipped: 0 };
  const channels = new Map((opts.channels ?? enabledChannels()).map((c) => [c.name, c]));
  const due = await db().notification.findMany({
    where: { status: "pending", nextAttemptAt: { lte: now } },
    orderBy: { nextAttemptAt: "asc" },
    take: opts.limit ?? 50,
  });
  for (const n of due) {
    const lease = await db().notification.updateMany({
      where: { id: n.id, status: "pending", nextAttemptAt: n.nextAttemptAt },
      data: { nextAttemptAt: new Date(now.getTime() + NOTIFY_LEASE_MS) },
    });
    if (lease.count !== 1) continue;
    const end = (status: "skipped" | "failed", why: string) =>
      db().notification.updateMany({ where: { id: n.id, status: "pending" }, data: { status, lastError: why } });

    const channel = channels.get(n.channel);
    if (!channel) {
      await end("skipped", `the ${n.channel} channel is not configured`);
      report.skipped++;
      continue;
    }
    const attempts = n.attempts + 1;
    let error: string | null = null;
    if (channel.perRequest) {
      try {
        const outcome = await channel.perRequest.deliver(n, now);
        if (outcome) {
          await end("skipped", outcome.skip);
          report.skipped++;
          continue;
        }
        faultPoint("after-notification-sent");
      } catch (e) {
        error = e instanceof SendError ? e.message : "the message could not be sent";
      }
    } else {
      const prepared = await prepare(n, channel, now);
      if ("skip" in prepared) {
        await end(prepared.skip === "failed" ? "failed" : "skipped", prepared.why);
        if (prepared.skip === "failed") countDeliveryFailure("notification", "failed");
        report[prepared.skip === "failed" ? "failed" : "skipped"]++;
        continue;
      }
      try {
        await channel.send({ ...prepared.rendered, notificationId: n.id, requestId: n.requestId, kind: n.kind }, prepared.recipient);
        faultPoint("after-notification-sent");
      } catch (e) {
        error = e instanceof SendError ? e.message : "the message could not be sent";
      }
    }
    if (!error) {
      await db().notification.updateMany({ where: { id: n.id, status: "pending" }, data: { status: "sent", attempts, lastError: null, sentAt: now } });
      report.sent++;
    } else if (attempts > NOTIFY_RETRY_DELAYS_MS.length) {
      await db().notification.updateMany({ where: { id: n.id, status: "pending" }, data: { status: "failed", attempts, lastError: error } });
      countDeliveryFailure("notification", "failed");
      report.failed++;
    } else {
      const next = new Date(now.getTime() + NOTIFY_RETRY_DELAYS_MS[attempts - 1]);
      await db().notification.updateMany({ where: { id: n.id, status: "pending" }, data: { attempts, lastError: error, nextAttemptAt: next } });
      countDeliveryFailure("notification", "retry");
      report.retried++;
    }
  }
  return report;
}

type Row = { id: string; requestId: string; kind: string; recipientUserId: string };
type Prepared =
  | { rendered: ReturnType<typeof renderNotification>; recipient: Awaited<ReturnType<typeof recipientOf>> & object }
  | { skip: "skipped" | "failed"; why: string };

function recipientOf(id: string) {
  return db().user.findUnique({ where: { id }, select: { id: true, name: true, email: true, emailNotifications: true, active: true, role: true, groups: true } });
}

function kindOf(kind: string): NotificationKind {
  return kind === "created" || kind === "outcome" || kind === "escalated" ? kind : "reminder";
}

async function prepare(n: Row, channel: NotificationChannel, now: Date): Promise<Prepared> {
  const recipient = await recipientOf(n.recipientUserId);
  if (!recipient || !recipient.active) return { skip: "skipped", why: "the recipient is no longer active" };
  if (!channel.accepts(recipient)) return { skip: "skipped", why: `the recipient turned ${channel.name} notifications off` };
  const req = await db().approvalRequest.findUnique({
    where: { id: n.requestId },
    select: { id: true, status: true, deadline: true, approverGroup: true, fallbackGroup: true, escalatedAt: true, approvalsRequired: true, requesterUserId: true },
  });
  if (!req) return { skip: "skipped", why: "the request no longer exists" };
  const kind = kindOf(n.kind);
  const reviews = await db().review.findMany({ where: { requestId: req.id }, include: { reviewer: { select: { name: true } } }, orderBy: { createdAt: "asc" } });
  if (kind !== "outcome") {
    if (req.status !== "pending" || req.deadline.getTime() <= now.getTime()) return { skip: "skipped", why: `the request is no longer pending` };
    // An escalation tells the admins too; everyone else it tells must still be able to review the request.
    const admin = kind === "escalated" && recipient.role === "admin";
    if (!admin && !(await isEligibleReviewer(recipient.id, req, now))) return { skip: "skipped", why: "the recipient can no longer review the request" };
    if (kind === "reminder" && reviews.some((v) => v.reviewerId === recipient.id)) return { skip: "skipped", why: "the recipient has already reviewed the request" };
  }
  // Request pages are for reviewers and admins; the requester's user is told the outcome without a link.
  const facts = await requestFacts(req.id, recipient.role === "requester" ? null : requestLink(req.id));
  if (facts === "sealed") return { skip: "failed", why: SEALED };
  if (!facts) return { skip: "skipped", why: "the request no longer exists" };
  return { rendered: renderNotification(kind, facts, recipient, now), recipient };
}

const SEALED = "the request's stored details failed their integrity check";

/**
 * What a message says about a request, from the stored request: null when it is gone, "sealed" when its stored
 * details fail their integrity check (nothing is said of a record that may have been altered).
 */
export async function requestFacts(requestId: string, link: string | null): Promise<RequestFacts | "sealed" | null> {
  let req;
  try {
    req = await db().approvalRequest.findUnique({
      where: { id: requestId },
      select: { id: true, status: true, deadline: true, approverGroup: true, fallbackGroup: true, escalatedAt: true, approvalsRequired: true, requirePasskey: true, requesterUserId: true, body: true },
    });
  } catch (e) {
    if (!(e instanceof SealedRecordError)) throw e;
    return "sealed";
  }
  if (!req) return null;
  const reviews = await db().review.findMany({ where: { requestId: req.id }, include: { reviewer: { select: { name: true } } }, orderBy: { createdAt: "asc" } });
  const body = readBody(req.body);
  const requester = await db().user.findUnique({ where: { id: req.requesterUserId }, select: { name: true } });
  return {
    id: req.id,
    summary: summaryOf(body),
    tool: body.tool ?? "a tool",
    arguments: body.arguments,
    approverGroup: req.approverGroup,
    escalatedTo: req.escalatedAt ? req.fallbackGroup : null,
    approvalsRequired: req.approvalsRequired,
    requirePasskey: req.requirePasskey,
    approvals: reviews.filter((v) => v.decision === "approve").length,
    status: req.status,
    deadline: req.deadline,
    agentName: body.requester?.agentName ?? "An agent",
    requesterName: requester?.name ?? body.requester?.userName ?? "a user",
    reviews: reviews.map((v) => ({ name: v.reviewer.name, decision: v.decision, comment: v.comment })),
    link,
    requirements: body.requirements,
  };
}
