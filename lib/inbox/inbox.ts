/**
 * The reviewer's inbox: pending approval requests this reviewer may act on now — addressed to one of their groups,
 * not their own, not already reviewed by them, before the deadline, and still the request its task waits on.
 * Filters (tool, group, status), search, two sorts (newest first, soonest-expiring first) and keyset pagination,
 * so a page costs the same on page 1 and page 400, with 100,000 tasks in the database.
 *
 * Read-only: a decision goes through `lib/tasks/decide.ts`, which enforces the four-eyes rules again. The `WHERE`
 * here mirrors those rules only to decide what to list.
 *
 * The SQL is built by `inboxQuery` so that the benchmark (scripts/bench-inbox.ts) can time and EXPLAIN exactly
 * the query the page runs.
 */
import { db, Prisma } from "@/lib/db/client";
import { decodeCursor, encodeCursor, type Cursor } from "./cursor";
import type { InboxParams } from "./params";
import { containsPattern } from "./search";

export type Viewer = { id: string; role: string; groups: string[] };

export const INBOX_PAGE_SIZE = 25;
/** The count shown above the list stops here ("1000+"): counting further would cost more than it tells. */
export const COUNT_CAP = 1000;

export type InboxItem = {
  id: string;
  taskId: string;
  tool: string;
  summary: string;
  requesterName: string;
  agentName: string;
  approverGroup: string;
  approvals: number;
  approvalsRequired: number;
  /** working, or input_required while a question to the requester is open. */
  taskStatus: string;
  createdAt: string;
  deadline: string;
};

export type InboxPage = {
  now: string;
  items: InboxItem[];
  /** Cursor of the next (older / later-expiring) page, if there is one. */
  next: string | null;
  /** Cursor of the previous page, if this is not the first. */
  prev: string | null;
  /** Matching requests, counted up to COUNT_CAP. */
  total: number;
  totalCapped: boolean;
};

type Row = {
  id: string;
  taskId: string;
  tool: string | null;
  summary: string | null;
  requesterName: string | null;
  agentName: string | null;
  approverGroup: string;
  approvalsRequired: number;
  approvals: number;
  taskStatus: string;
  createdAt: Date;
  deadline: Date;
};

/** Whether this viewer has an inbox at all: reviewers with at least one approver group. */
export function hasInbox(viewer: Viewer): boolean {
  return viewer.role === "reviewer" && viewer.groups.length > 0;
}

/** The filter part shared by the page query and the count. */
function filters(viewer: Viewer, p: InboxParams, now: Date): Prisma.Sql {
  const groups = p.group ? viewer.groups.filter((g) => g === p.group) : viewer.groups;
  const parts: Prisma.Sql[] = [
    Prisma.sql`r.status = 'pending'`,
    Prisma.sql`r."approverGroup" = ANY(${groups}::text[])`,
    Prisma.sql`r."requesterUserId" <> ${viewer.id}`,
    Prisma.sql`r.deadline > ${now}`,
    Prisma.sql`t.handle = r.id`,
    Prisma.sql`t.status IN ('working', 'input_required')`,
    Prisma.sql`NOT EXISTS (SELECT 1 FROM "Review" mine WHERE mine."requestId" = r.id AND mine."reviewerId" = ${viewer.id})`,
  ];
  if (p.tool) parts.push(Prisma.sql`t.tool = ${p.tool}`);
  if (p.status === "question-open") parts.push(Prisma.sql`t.status = 'input_required'`);
  const approved = Prisma.sql`EXISTS (SELECT 1 FROM "Review" a WHERE a."requestId" = r.id AND a.decision = 'approve')`;
  if (p.status === "new") parts.push(Prisma.sql`t.status = 'working' AND NOT ${approved}`);
  if (p.status === "partly-approved") parts.push(approved);
  if (p.q) {
    const like = containsPattern(p.q);
    parts.push(Prisma.sql`(
      coalesce(r.body->>'summary', '') || ' ' || t.tool || ' ' || coalesce(r.body->'requester'->>'userName', '') || ' ' ||
      coalesce(r.body->'requester'->>'agentName', '') || ' ' || coalesce((r.body->'arguments')::text, '') || ' ' ||
      coalesce(r.body->'input'->>'ticket', '')
    ) ILIKE ${like}`);
  }
  return Prisma.join(parts, " AND ");
}

const SORT = {
  newest: { column: Prisma.raw(`r."createdAt"`), forward: "DESC", cmp: "<" },
  expiring: { column: Prisma.raw(`r.deadline`), forward: "ASC", cmp: ">" },
} as const;

/** The page query: exactly what `inboxPage` runs (the benchmark EXPLAINs it). Fetches one row more than a page. */
export function inboxQuery(viewer: Viewer, p: InboxParams, now: Date, size = INBOX_PAGE_SIZE): Prisma.Sql {
  const sort = SORT[p.sort];
  const backward = !p.after && !!p.before;
  const cursor: Cursor | null = decodeCursor(backward ? p.before : p.after);
  const flip = (dir: string) => (dir === "DESC" ? "ASC" : "DESC");
  const dir = backward ? flip(sort.forward) : sort.forward;
  const cmp = backward ? (sort.cmp === "<" ? ">" : "<") : sort.cmp;
  const keyset = cursor ? Prisma.sql`AND (${sort.column}, r.id) ${Prisma.raw(cmp)} (${cursor.at}, ${cursor.id})` : Prisma.empty;
  return Prisma.sql`
    SELECT r.id, r."taskId", t.tool, r.body->>'summary' AS summary,
      r.body->'requester'->>'userName' AS "requesterName", r.body->'requester'->>'agentName' AS "agentName",
      r."approverGroup", r."approvalsRequired", t.status AS "taskStatus", r."createdAt", r.deadline,
      (SELECT count(*)::int FROM "Review" v WHERE v."requestId" = r.id AND v.decision = 'approve') AS approvals
    FROM "ApprovalRequest" r
    JOIN "Task" t ON t.id = r."taskId"
    WHERE ${filters(viewer, p, now)} ${keyset}
    ORDER BY ${sort.column} ${Prisma.raw(dir)}, r.id ${Prisma.raw(dir)}
    LIMIT ${size + 1}`;
}

export function inboxCountQuery(viewer: Viewer, p: InboxParams, now: Date): Prisma.Sql {
  return Prisma.sql`
    SELECT count(*)::int AS n FROM (
      SELECT 1 FROM "ApprovalRequest" r JOIN "Task" t ON t.id = r."taskId"
      WHERE ${filters(viewer, p, now)}
      LIMIT ${COUNT_CAP + 1}
    ) capped`;
}

function toItem(r: Row): InboxItem {
  return {
    id: r.id,
    taskId: r.taskId,
    tool: r.tool ?? "unknown",
    summary: r.summary ?? `${r.tool ?? "tool"} call`,
    requesterName: r.requesterName ?? "unknown user",
    agentName: r.agentName ?? "unknown agent",
    approverGroup: r.approverGroup,
    approvals: r.approvals,
    approvalsRequired: r.approvalsRequired,
    taskStatus: r.taskStatus,
    createdAt: r.createdAt.toISOString(),
    deadline: r.deadline.toISOString(),
  };
}

/** One page of the inbox for `viewer`, as the page and /api/inbox show it. */
export async function inboxPage(viewer: Viewer, p: InboxParams, now: Date, size = INBOX_PAGE_SIZE): Promise<InboxPage> {
  const empty: InboxPage = { now: now.toISOString(), items: [], next: null, prev: null, total: 0, totalCapped: false };
  if (!hasInbox(viewer)) return empty;
  if (p.group && !viewer.groups.includes(p.group)) return empty;
  const [rows, count] = await Promise.all([
    db().$queryRaw<Row[]>(inboxQuery(viewer, p, now, size)),
    db().$queryRaw<{ n: number }[]>(inboxCountQuery(viewer, p, now)),
  ]);
  const backward = !p.after && !!p.before && !!decodeCursor(p.before);
  const forwardFromCursor = !!p.after && !!decodeCursor(p.after);
  const more = rows.length > size;
  const page = rows.slice(0, size);
  if (backward) page.reverse();
  const key = (r: Row) => (p.sort === "expiring" ? r.deadline : r.createdAt);
  const first = page[0];
  const last = page[page.length - 1];
  const next = last && (backward || more) ? encodeCursor({ at: key(last), id: last.id }) : null;
  const prev = first && (forwardFromCursor || (backward && more)) ? encodeCursor({ at: key(first), id: first.id }) : null;
  const n = count[0]?.n ?? 0;
  return { now: now.toISOString(), items: page.map(toItem), next, prev, total: Math.min(n, COUNT_CAP), totalCapped: n > COUNT_CAP };
}
