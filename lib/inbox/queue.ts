/**
 * The reviewer's queue beyond one page: which request comes next in their inbox, and the requests they approved
 * that still wait for others (where they may withdraw their approval). Read-only, like the inbox: decisions and
 * withdrawals go through lib/tasks/decide.ts and lib/approvals/withdraw.ts, which check everything again.
 */
import { db } from "@/lib/db/client";
import { encodeCursor } from "./cursor";
import { hasInbox, inboxPage, type RequestListItem, type Viewer } from "./inbox";
import { parseInboxParams } from "./params";
import { readableAmounts } from "../tools/money";

/** Enough rows to step over the few an inbox page hides (a task that ended a moment ago). */
const LOOKAHEAD = 5;

/**
 * The request after (or before) `fromId` in the viewer's inbox, newest first, that they may decide now; past the
 * end it wraps to the top. Null when nothing else waits for them. `fromId` itself is never the answer, decided or not.
 */
export async function adjacentRequest(viewer: Viewer, fromId: string, direction: "next" | "previous", now: Date): Promise<string | null> {
  if (!hasInbox(viewer)) return null;
  const params = parseInboxParams({});
  const from = await db().approvalRequest.findUnique({ where: { id: fromId }, select: { createdAt: true } });
  if (from) {
    const cursor = encodeCursor({ at: from.createdAt, id: fromId });
    const page = await inboxPage(viewer, { ...params, [direction === "next" ? "after" : "before"]: cursor }, now, LOOKAHEAD);
    const items = page.items.filter((i) => i.id !== fromId);
    const pick = direction === "next" ? items[0] : items[items.length - 1];
    if (pick) return pick.id;
  }
  const top = await inboxPage(viewer, params, now, LOOKAHEAD);
  return top.items.find((i) => i.id !== fromId)?.id ?? null;
}

export type AwaitingItem = RequestListItem & { deadline: string; approvedAt: string };

type AwaitingRow = Omit<AwaitingItem, "deadline" | "approvedAt"> & { deadline: Date; approvedAt: Date };

/**
 * "Awaiting others": pending requests, before their deadline, that this viewer approved and that still need more
 * approvals, soonest deadline first.
 */
export async function awaitingOthers(viewer: Viewer, now: Date, limit = 100): Promise<AwaitingItem[]> {
  if (!hasInbox(viewer)) return [];
  const rows = await db().$queryRaw<AwaitingRow[]>`
    SELECT r.id, r."taskId", coalesce(r.body->>'tool', 'unknown') AS tool, coalesce(r.body->>'summary', r.body->>'tool', 'tool call') AS summary,
      coalesce(r.body->'requester'->>'userName', 'unknown user') AS "requesterName",
      coalesce(r.body->'requester'->>'agentName', 'unknown agent') AS "agentName",
      r."approverGroup", r."approvalsRequired", r.deadline, mine."createdAt" AS "approvedAt",
      (SELECT count(*)::int FROM "Review" v WHERE v."requestId" = r.id AND v.decision = 'approve') AS approvals
    FROM "Review" mine JOIN "ApprovalRequest" r ON r.id = mine."requestId"
    WHERE mine."reviewerId" = ${viewer.id} AND mine.decision = 'approve' AND r.status = 'pending' AND r.deadline > ${now}
    ORDER BY r.deadline ASC, r.id ASC
    LIMIT ${limit}`;
  return rows.map((r) => ({ ...r, summary: readableAmounts(r.summary), deadline: r.deadline.toISOString(), approvedAt: r.approvedAt.toISOString() }));
}
