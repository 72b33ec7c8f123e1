/**
 * History: decided approval requests and what came of them — executed, denied, expired, cancelled, error, outcome
 * unknown (or still in progress after an approval). Reviewers see their groups' requests; admins see all.
 * Keyset-paginated on (decidedAt, id), newest first.
 */
import { db, Prisma } from "@/lib/db/client";
import { decodeCursor, encodeCursor } from "./cursor";
import type { RequestListItem, Viewer } from "./inbox";
import type { HistoryParams, Outcome } from "./params";
import { containsPattern } from "./search";
import { listSummary } from "./body";

export const HISTORY_PAGE_SIZE = 25;

export type HistoryItem = RequestListItem & {
  requestStatus: string;
  taskStatus: string | null;
  disposition: string | null;
  outcome: Outcome;
  ruleKey: string | null;
  ruleVersion: number | null;
  decidedAt: string;
};

/** The URL's parameters plus what the admin filters resolved: a reviewer (a user id) and a range of decision days. */
export type HistoryFilters = HistoryParams & { reviewerId?: string; from?: Date; to?: Date };

export type HistoryPage = { items: HistoryItem[]; next: string | null; prev: string | null };

/**
 * The outcome of a decided request, in SQL so it can be filtered on. The task's disposition wins (it says whether
 * the tool ran); the request's status explains a denial that never reached execution.
 */
const OUTCOME = Prisma.sql`(CASE
  WHEN t.disposition = 'approved-executed' THEN 'executed'
  WHEN t.disposition = 'execution-error' OR t.status = 'failed' OR r.status = 'failed' THEN 'error'
  WHEN t.disposition = 'outcome-unknown' THEN 'unknown'
  WHEN r.status = 'cancelled' OR t.status = 'cancelled' THEN 'cancelled'
  WHEN r.status = 'expired' THEN 'expired'
  WHEN r.status = 'denied' THEN 'denied'
  WHEN t.disposition = 'denied-not-executed' THEN 'denied'
  WHEN t.id IS NULL THEN 'unknown'
  ELSE 'in-progress'
END)`;

/** Conditions on the request (and, for the outcome filter only, its task `t`), without the group. */
function filters(p: HistoryFilters): Prisma.Sql[] {
  const parts: Prisma.Sql[] = [Prisma.sql`r."decidedAt" IS NOT NULL`, Prisma.sql`r.status <> 'pending'`];
  if (p.tool) parts.push(Prisma.sql`r.body->>'tool' = ${p.tool}`);
  if (p.outcome) parts.push(Prisma.sql`${OUTCOME} = ${p.outcome}`);
  if (p.reviewerId) parts.push(Prisma.sql`EXISTS (SELECT 1 FROM "Review" rv WHERE rv."requestId" = r.id AND rv."reviewerId" = ${p.reviewerId})`);
  if (p.from) parts.push(Prisma.sql`r."decidedAt" >= ${p.from}`);
  if (p.to) parts.push(Prisma.sql`r."decidedAt" <= ${p.to}`);
  if (p.q) {
    // Over what stays readable at rest: the summary, the tool and the people (the arguments are sealed); people
    // also by the name or email of the requester or of a reviewer.
    const like = containsPattern(p.q);
    parts.push(Prisma.sql`((
      coalesce(r.body->>'summary', '') || ' ' || coalesce(r.body->>'tool', '') || ' ' ||
      coalesce(r.body->'requester'->>'userName', '') || ' ' || coalesce(r.body->'requester'->>'agentName', '')
    ) ILIKE ${like} OR EXISTS (
      SELECT 1 FROM "User" p
      WHERE (p.id = r."requesterUserId" OR p.id IN (SELECT rv."reviewerId" FROM "Review" rv WHERE rv."requestId" = r.id))
        AND (p.name ILIKE ${like} OR p.email ILIKE ${like})))`);
  }
  return parts;
}

/**
 * One branch per group the viewer may read (admins: one branch over all), each ordered and limited on its own
 * (an index on (approverGroup, decidedAt), or on decidedAt for admins, serves it), merged, then joined to the task
 * for those rows only.
 */
export function historyQuery(viewer: Viewer, p: HistoryFilters, size = HISTORY_PAGE_SIZE): Prisma.Sql {
  const backward = !p.after && !!p.before;
  const cursor = decodeCursor(backward ? p.before : p.after);
  const keyset = cursor ? [Prisma.sql`(r."decidedAt", r.id) ${Prisma.raw(backward ? ">" : "<")} (${cursor.at}, ${cursor.id})`] : [];
  const dir = Prisma.raw(backward ? "ASC" : "DESC");
  const common = [...filters(p), ...keyset];
  const groups: (string | null)[] =
    viewer.role === "admin" ? [p.group ?? null] : p.group ? viewer.groups.filter((g) => g === p.group) : viewer.groups;
  const outcomeJoin = p.outcome ? Prisma.sql`LEFT JOIN "Task" t ON t.id = r."taskId"` : Prisma.empty;
  const branches = (groups.length ? groups : ["-"]).map(
    (g) => Prisma.sql`(
      SELECT r.id, r."taskId", r.body, r."approverGroup", r.status, r."approvalsRequired", r."decidedAt"
      FROM "ApprovalRequest" r ${outcomeJoin}
      WHERE ${g === null ? Prisma.sql`TRUE` : Prisma.sql`r."approverGroup" = ${g}`} AND ${Prisma.join(common, " AND ")}
      ORDER BY r."decidedAt" ${dir}, r.id ${dir}
      LIMIT ${size + 1})`,
  );
  return Prisma.sql`
    SELECT r.id, r."taskId", r.body->>'tool' AS tool, r.body->>'summary' AS summary,
      r.body->'requester'->>'userName' AS "requesterName", r.body->'requester'->>'agentName' AS "agentName",
      r."approverGroup", r.status AS "requestStatus", t.status AS "taskStatus", t.disposition,
      ${OUTCOME} AS outcome, r.body->'policy'->>'ruleKey' AS "ruleKey", (r.body->'policy'->>'version')::int AS "ruleVersion",
      r."approvalsRequired", r."decidedAt",
      (SELECT count(*)::int FROM "Review" v WHERE v."requestId" = r.id AND v.decision = 'approve') AS approvals
    FROM (${Prisma.join(branches, " UNION ALL ")}) r
    LEFT JOIN "Task" t ON t.id = r."taskId"
    ORDER BY r."decidedAt" ${dir}, r.id ${dir}
    LIMIT ${size + 1}`;
}

type Row = Omit<HistoryItem, "decidedAt" | "tool" | "summary" | "requesterName" | "agentName"> & {
  tool: string | null;
  summary: string | null;
  requesterName: string | null;
  agentName: string | null;
  decidedAt: Date;
};

export async function historyPage(viewer: Viewer, p: HistoryFilters, size = HISTORY_PAGE_SIZE): Promise<HistoryPage> {
  if (viewer.role !== "admin" && viewer.role !== "reviewer") return { items: [], next: null, prev: null };
  const rows = await db().$queryRaw<Row[]>(historyQuery(viewer, p, size));
  const backward = !p.after && !!p.before && !!decodeCursor(p.before);
  const more = rows.length > size;
  const page = rows.slice(0, size);
  if (backward) page.reverse();
  const first = page[0];
  const last = page[page.length - 1];
  return {
    items: page.map((r) => ({
      ...r,
      tool: r.tool ?? "unknown",
      summary: listSummary(r.summary, r.tool),
      requesterName: r.requesterName ?? "unknown user",
      agentName: r.agentName ?? "unknown agent",
      decidedAt: r.decidedAt.toISOString(),
    })),
    next: last && (backward || more) ? encodeCursor({ at: last.decidedAt, id: last.id }) : null,
    prev: first && ((!!p.after && !!decodeCursor(p.after)) || (backward && more)) ? encodeCursor({ at: first.decidedAt, id: first.id }) : null,
  };
}
