/**
 * The reviewer's inbox: pending approval requests this reviewer may act on now — addressed to one of their groups
 * (their own, those an active delegation lends them, and a group a request has escalated to as its fallback),
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
import { factLines } from "./facts";
import { db, Prisma } from "@/lib/db/client";
import { decodeCursor, encodeCursor, type Cursor } from "./cursor";
import type { InboxParams } from "./params";
import { containsPattern } from "./search";
import { approvableInBulk } from "./bulk";
import { listSummary } from "./body";
import { withDelegatedGroups } from "@/lib/approvals/delegation";
import { eligibleForRequest } from "@/lib/approvals/eligibility";

export type Viewer = {
  id: string;
  role: string;
  groups: string[];
  /** Some of `groups` are lent by a delegation: each listed request is then checked against the eligibility rule. */
  standsIn?: boolean;
};

export const INBOX_PAGE_SIZE = 25;
/** The count shown above the list stops here ("1000+"): counting further would cost more than it tells. */
export const COUNT_CAP = 1000;

/** What every list of approval requests shows of one request (the inbox and the history). */
export type RequestListItem = {
  id: string;
  taskId: string;
  tool: string;
  summary: string;
  requesterName: string;
  agentName: string;
  approverGroup: string;
  approvals: number;
  approvalsRequired: number;
};

export type InboxItem = RequestListItem & {
  /** The fallback group the request has escalated to (it is offered to that group too), if it has. */
  escalatedTo: string | null;
  /** working, or input_required while a question to the requester is open. */
  taskStatus: string;
  createdAt: string;
  deadline: string;
  /** May be approved together with others from the inbox (approvableInBulk). */
  bulk: boolean;
  /** The digest of the arguments the reviewer is shown: a bulk approval is bound to it. */
  argumentsDigest: string;
  /** The deciding facts in one line (the resource as it is now), for tools that show facts. */
  facts?: string;
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
  fallbackGroup: string | null;
  escalatedAt: Date | null;
  approvalsRequired: number;
  requirePasskey: boolean;
  argumentsDigest: string | null;
  approvals: number;
  taskStatus: string | null;
  /** The task still waits on this request (false only in the moment between a task ending and its request being withdrawn). */
  taskWaits: boolean | null;
  createdAt: Date;
  deadline: Date;
};

/** Whether this viewer has an inbox at all: reviewers with at least one approver group. */
export function hasInbox(viewer: Viewer): boolean {
  return viewer.role === "reviewer" && viewer.groups.length > 0;
}

/**
 * Conditions on the request alone (never on a join), so that for one group the planner can walk the
 * (status, approverGroup, <sort key>) index in order and stop after a page. A join in the WHERE (to Task) makes
 * PostgreSQL misjudge how many rows match and sort every pending request instead; the task is read only for the
 * rows of the page (see `inboxQuery`).
 */
function requestFilters(viewer: Viewer, p: InboxParams, now: Date): Prisma.Sql[] {
  const parts: Prisma.Sql[] = [
    Prisma.sql`r.status = 'pending'`,
    Prisma.sql`r."requesterUserId" <> ${viewer.id}`,
    Prisma.sql`r.deadline > ${now}`,
    Prisma.sql`NOT EXISTS (SELECT 1 FROM "Review" mine WHERE mine."requestId" = r.id AND mine."reviewerId" = ${viewer.id})`,
  ];
  // A delegate never reviews the delegator's own request, though it is addressed to a group the delegate holds now.
  if (viewer.standsIn) parts.push(eligibleForRequest(viewer.id, now));
  if (p.tool) parts.push(Prisma.sql`r.body->>'tool' = ${p.tool}`);
  const approved = Prisma.sql`EXISTS (SELECT 1 FROM "Review" a WHERE a."requestId" = r.id AND a.decision = 'approve')`;
  const asking = Prisma.sql`EXISTS (SELECT 1 FROM "Task" q WHERE q.id = r."taskId" AND q.handle = r.id AND q.status = 'input_required')`;
  if (p.status === "question-open") parts.push(asking);
  if (p.status === "new") parts.push(Prisma.sql`NOT ${approved} AND NOT ${asking}`);
  if (p.status === "partly-approved") parts.push(approved);
  if (p.q) {
    const like = containsPattern(p.q);
    // The arguments and the requester's input are sealed at rest (lib/db/sealed.ts): search reads what stays
    // readable, the summary (which names the resource: account, order, service, path), the tool and the people.
    parts.push(Prisma.sql`(
      coalesce(r.body->>'summary', '') || ' ' || coalesce(r.body->>'tool', '') || ' ' || coalesce(r.body->'requester'->>'userName', '') || ' ' ||
      coalesce(r.body->'requester'->>'agentName', '')
    ) ILIKE ${like}`);
  }
  return parts;
}

/** The viewer's groups this query covers (one, when the group filter names one of theirs). */
function groupsOf(viewer: Viewer, p: InboxParams): string[] {
  return p.group ? viewer.groups.filter((g) => g === p.group) : viewer.groups;
}

const SORT = {
  newest: { column: "createdAt", forward: "DESC", cmp: "<" },
  expiring: { column: "deadline", forward: "ASC", cmp: ">" },
} as const;

/**
 * The page query: exactly what `inboxPage` runs (the benchmark EXPLAINs it). One branch per approver group, each
 * ordered and limited on its own index, merged; then the task and the approval count for those rows only. Fetches
 * one row more than a page, to know whether there is a next one.
 */
export function inboxQuery(viewer: Viewer, p: InboxParams, now: Date, size = INBOX_PAGE_SIZE): Prisma.Sql {
  const sort = SORT[p.sort];
  const backward = !p.after && !!p.before;
  const cursor: Cursor | null = decodeCursor(backward ? p.before : p.after);
  const dir = Prisma.raw(backward ? (sort.forward === "DESC" ? "ASC" : "DESC") : sort.forward);
  const cmp = Prisma.raw(backward ? (sort.cmp === "<" ? ">" : "<") : sort.cmp);
  const col = Prisma.raw(`"${sort.column}"`);
  const keyset = cursor ? [Prisma.sql`(r.${col}, r.id) ${cmp} (${cursor.at}, ${cursor.id})`] : [];
  const common = [...requestFilters(viewer, p, now), ...keyset];
  const groups = groupsOf(viewer, p);
  const branch = (where: Prisma.Sql) => Prisma.sql`(
      SELECT r.id, r."taskId", r.body, r."approverGroup", r."fallbackGroup", r."escalatedAt", r."approvalsRequired", r."requirePasskey", r."createdAt", r.deadline
      FROM "ApprovalRequest" r
      WHERE ${where} AND ${Prisma.join(common, " AND ")}
      ORDER BY r.${col} ${dir}, r.id ${dir}
      LIMIT ${size + 1})`;
  const branches = (groups.length ? groups : ["-"]).flatMap((g) => [
    branch(Prisma.sql`r."approverGroup" = ${g}`),
    // Escalated to this group, and not addressed to one of the viewer's groups (listed by that group's branch).
    branch(Prisma.sql`r."fallbackGroup" = ${g} AND r."escalatedAt" IS NOT NULL AND r."approverGroup" <> ALL(${groups}::text[])`),
  ]);
  return Prisma.sql`
    SELECT u.id, u."taskId", u.body->>'tool' AS tool, u.body->>'summary' AS summary,
      u.body->'requester'->>'userName' AS "requesterName", u.body->'requester'->>'agentName' AS "agentName",
      u."approverGroup", u."fallbackGroup", u."escalatedAt", u."approvalsRequired", u."requirePasskey", u.body->>'argumentsDigest' AS "argumentsDigest", u."createdAt", u.deadline,
      t.status AS "taskStatus", (t.handle = u.id) AS "taskWaits",
      (SELECT count(*)::int FROM "Review" v WHERE v."requestId" = u.id AND v.decision = 'approve') AS approvals
    FROM (${Prisma.join(branches, " UNION ALL ")}) u
    LEFT JOIN "Task" t ON t.id = u."taskId"
    ORDER BY u.${col} ${dir}, u.id ${dir}
    LIMIT ${size + 1}`;
}

export function inboxCountQuery(viewer: Viewer, p: InboxParams, now: Date): Prisma.Sql {
  return Prisma.sql`
    SELECT count(*)::int AS n FROM (
      SELECT 1 FROM "ApprovalRequest" r
      WHERE (r."approverGroup" = ANY(${groupsOf(viewer, p)}::text[]) OR (r."escalatedAt" IS NOT NULL AND r."fallbackGroup" = ANY(${groupsOf(viewer, p)}::text[])))
        AND ${Prisma.join(requestFilters(viewer, p, now), " AND ")}
      LIMIT ${COUNT_CAP + 1}
    ) capped`;
}

function toItem(r: Row): InboxItem {
  return {
    id: r.id,
    taskId: r.taskId,
    tool: r.tool ?? "unknown",
    summary: listSummary(r.summary, r.tool),
    requesterName: r.requesterName ?? "unknown user",
    agentName: r.agentName ?? "unknown agent",
    approverGroup: r.approverGroup,
    escalatedTo: r.escalatedAt ? r.fallbackGroup : null,
    approvals: r.approvals,
    approvalsRequired: r.approvalsRequired,
    taskStatus: r.taskStatus ?? "unknown",
    createdAt: r.createdAt.toISOString(),
    deadline: r.deadline.toISOString(),
    bulk: approvableInBulk(r),
    argumentsDigest: r.argumentsDigest ?? "",
  };
}

/** One page of the inbox for `viewer`, as the page and /api/inbox show it. */
export async function inboxPage(signedIn: Viewer, p: InboxParams, now: Date, size = INBOX_PAGE_SIZE): Promise<InboxPage> {
  const lent = await withDelegatedGroups(signedIn, now);
  const viewer = lent === signedIn ? signedIn : { ...lent, standsIn: true };
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
  const window = rows.slice(0, size);
  if (backward) window.reverse();
  const key = (r: Row) => (p.sort === "expiring" ? r.deadline : r.createdAt);
  // Cursors come from the page's window, so a row hidden below is never shown on the next page either.
  const first = window[0];
  const last = window[window.length - 1];
  const next = last && (backward || more) ? encodeCursor({ at: key(last), id: last.id }) : null;
  const prev = first && (forwardFromCursor || (backward && more)) ? encodeCursor({ at: key(first), id: first.id }) : null;
  // A request whose task no longer waits on it is about to be withdrawn: nothing to act on.
  const page = window.filter((r) => r.taskWaits !== false && (r.taskStatus === "working" || r.taskStatus === "input_required"));
  const n = count[0]?.n ?? 0;
  const lines = await factLines(page.map((r) => r.taskId), page.map((r) => r.tool ?? ""), now);
  const items = page.map((r) => {
    const line = lines.get(r.taskId);
    return line ? { ...toItem(r), facts: line } : toItem(r);
  });
  return { now: now.toISOString(), items, next, prev, total: Math.min(n, COUNT_CAP), totalCapped: n > COUNT_CAP };
}
