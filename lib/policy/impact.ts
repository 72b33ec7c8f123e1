/**
 * Preview against reality: what a draft (a form rule's next version, or a draft policy document) would have
 * decided for the calls of the last 30 days and for every pending request, beside what the current version
 * decides for the same calls. Nothing is saved and nothing runs.
 *
 * - Calls of the last 30 days are the call ledger's records (lib/policy/history.ts) that carry a snapshot of what
 *   policy evaluated (arguments, resource as the mapping read it then). Each is judged at the time it was made,
 *   with the history its windows had then (records before it in the window that were counted at that moment).
 * - Pending requests are the approval tasks still waiting (working or input_required): their sealed arguments,
 *   the resource re-read by the tool's mapping now, history measured now without the task's own record, exactly
 *   as re-evaluation at execution would.
 * - The subject is the agent as it is now (a revoked agent's calls are skipped: nothing it asks can run).
 * Bounded: at most `limit` calls (the most recent) and `limit` pending requests; the answer says when it cut.
 */
import { db, Prisma } from "../db/client";
import { currentSubject } from "../auth/agents";
import { getTool, policyTools, syncCatalog } from "../tools/catalog";
import { ToolError } from "../tools/types";
import type { PolicyProblem } from "./cedar";
import { compilePolicy, type StoredDocument } from "./compile";
import { PolicyDocument } from "./document";
import { evaluate, type CompiledPolicy, type Decision, type ResourceView, type Rule, type Subject } from "./evaluate";
import { historyCallOf, measureHistory, type HistoryDef, type HistoryValues } from "./history";
import { compileStored, currentDocument, currentRules } from "./store";

export const IMPACT_DAYS = 30;
export const IMPACT_LIMIT = 5000;
/** At most this many changed calls are listed (all are counted). */
export const IMPACT_LISTED = 200;

export type Draft = { kind: "rule"; rule: Omit<Rule, "id" | "version"> & { active: boolean } } | { kind: "document"; body: unknown };

export type Outcome = "allow" | "requestable" | "deny";

export type ImpactChange = {
  source: "call" | "pending";
  id: string;
  tool: string;
  summary: string;
  at: string;
  before: Outcome;
  after: Outcome;
  beforeText: string;
  afterText: string;
};

export type ImpactCounts = {
  /** Judged (had a snapshot, a known tool and a valid agent). */
  considered: number;
  /** Left out: no snapshot (older records), the tool is gone, the agent revoked, the resource unreadable now. */
  skipped: number;
  /** More than `limit` existed: only the most recent `limit` were judged. */
  truncated: boolean;
  changed: number;
  /** Did not need approval (ran at once or was refused); would with the draft. */
  toApproval: number;
  /** Needed approval; would run at once with the draft. */
  offApproval: number;
  /** Ran at once or needed approval; would be refused with the draft. */
  toDeny: number;
  /** Was refused; would run at once with the draft. */
  toAllow: number;
  /** Still needs approval, but different approval (group or number of approvers). */
  otherApproval: number;
};

export type Impact =
  | { ok: true; draftVersion: number; calls: ImpactCounts; pending: ImpactCounts; changes: ImpactChange[]; listedAll: boolean; sentence: string }
  | { ok: false; problems: PolicyProblem[] };

type Judged = { before: Decision; after: Decision };

function emptyCounts(truncated: boolean): ImpactCounts {
  return { considered: 0, skipped: 0, truncated, changed: 0, toApproval: 0, offApproval: 0, toAllow: 0, toDeny: 0, otherApproval: 0 };
}

/** Whether the draft decides differently: another outcome, or other approval requirements. */
function differs({ before, after }: Judged): boolean {
  if (before.decision === "requestable" && after.decision === "requestable") {
    return before.requirements.approverGroup !== after.requirements.approverGroup || before.requirements.approvalsRequired !== after.requirements.approvalsRequired;
  }
  return before.decision !== after.decision;
}

function count(c: ImpactCounts, j: Judged): void {
  c.considered++;
  if (!differs(j)) return;
  c.changed++;
  const from = j.before.decision;
  const to = j.after.decision;
  if (to === "requestable") {
    if (from === "requestable") c.otherApproval++;
    else c.toApproval++;
  } else if (to === "deny") c.toDeny++;
  else if (from === "requestable") c.offApproval++;
  else c.toAllow++;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The preview in one sentence, e.g. "7 calls would have needed approval; 3 pending requests would no longer need it (...)." */
export function impactSentence(calls: ImpactCounts, pending: ImpactCounts, limit = IMPACT_LIMIT): string {
  const parts: string[] = [];
  const c = (n: number, words: string) => n > 0 && parts.push(`${plural(n, "call", "calls")} ${words}`);
  c(calls.toApproval, "would have needed approval");
  c(calls.offApproval, "would no longer have needed approval");
  c(calls.toDeny, "would have been refused");
  c(calls.toAllow, "would have run at once instead of being refused");
  c(calls.otherApproval, "would have needed different approval");
  const p = (n: number, words: string) => n > 0 && parts.push(`${plural(n, "pending request", "pending requests")} ${words}`);
  p(pending.toApproval, "would need approval");
  p(pending.offApproval, "would no longer need it");
  p(pending.toDeny, "would be refused");
  p(pending.toAllow, "would run at once");
  p(pending.otherApproval, "would need different approval");
  const cut = calls.truncated || pending.truncated ? `; only the most recent ${limit.toLocaleString("en-US")} of each were checked` : "";
  const scope = `${plural(calls.considered, "call", "calls")} of the last ${IMPACT_DAYS} days and ${plural(pending.considered, "pending request", "pending requests")} checked${cut}`;
  if (parts.length === 0) return `No call of the last ${IMPACT_DAYS} days and no pending request would be decided differently (${scope}).`;
  return `${parts.join("; ")} (${scope}).`;
}

type PolicyPair = { current: CompiledPolicy; draft: CompiledPolicy; draftVersion: number };

/** The current policy and the draft's, compiled strictly (the draft is refused with its problems, as saving would). */
export async function draftPolicies(draft: Draft): Promise<{ ok: true; pair: PolicyPair } | { ok: false; problems: PolicyProblem[] }> {
  const [rules, document] = await Promise.all([currentRules(), currentDocument()]);
  await syncCatalog();
  const tools = policyTools();
  const current = compileStored(rules, document, tools);
  let draftRules = rules;
  let draftDocument: StoredDocument = document;
  let draftVersion: number;
  if (draft.kind === "rule") {
    const latest = await db().policyRule.findFirst({ where: { ruleKey: draft.rule.ruleKey }, orderBy: { version: "desc" }, select: { version: true } });
    draftVersion = (latest?.version ?? 0) + 1;
    const { active, ...rest } = draft.rule;
    const next: Rule = { ...rest, id: "draft", version: draftVersion };
    draftRules = [...rules.filter((r) => r.ruleKey !== draft.rule.ruleKey), ...(active ? [next] : [])];
  } else {
    const parsed = PolicyDocument.safeParse(draft.body);
    if (!parsed.success) return { ok: false, problems: parsed.error.issues.map((i) => ({ message: `${i.path.join(".") || "document"}: ${i.message}` })) };
    const last = await db().policyDocument.findFirst({ orderBy: { version: "desc" }, select: { version: true } });
    draftVersion = (last?.version ?? 0) + 1;
    draftDocument = { id: "draft", version: draftVersion, body: parsed.data };
  }
  const compiled = compilePolicy({ rules: draftRules, document: draftDocument, tools }, { strict: true });
  if (!compiled.ok) return { ok: false, problems: compiled.problems };
  return { ok: true, pair: { current, draft: compiled.policy, draftVersion } };
}

type CallRow = {
  id: string;
  tool: string;
  agentId: string;
  userId: string;
  resourceType: string;
  resourceId: string;
  amountMinor: bigint | null;
  currency: string | null;
  createdAt: Date;
  snapshot: unknown;
};

function groupJoin(per: HistoryDef["per"]): Prisma.Sql {
  switch (per) {
    case "resource":
      return Prisma.sql`h."resourceType" = c."resourceType" AND h."resourceId" = c."resourceId"`;
    case "agent":
      return Prisma.sql`h."agentId" = c."agentId"`;
    case "user":
      return Prisma.sql`h."userId" = c."userId"`;
    case "tool":
      return Prisma.sql`TRUE`;
  }
}

/**
 * Each call's history as its windows stood when it was made: the records of the window before it that counted at
 * that moment (reserved, pending or executed then: a record voided later still counted until it was settled).
 * One statement per window definition.
 */
async function historyAtTheTime(defs: HistoryDef[], calls: CallRow[]): Promise<Map<string, HistoryValues>> {
  const out = new Map<string, HistoryValues>(calls.map((c) => [c.id, {}]));
  for (const d of defs) {
    const ids = calls.filter((c) => c.tool === d.tool).map((c) => c.id);
    if (ids.length === 0) continue;
    const rows = await db().$queryRaw<{ id: string; total: string; count: number }[]>`
      SELECT c.id,
        (COALESCE(SUM(h."amountMinor") FILTER (WHERE h.currency = c.currency), 0))::text AS total,
        COUNT(h.id)::int AS count
      FROM "CallRecord" c
      LEFT JOIN "CallRecord" h ON h.tool = c.tool AND ${groupJoin(d.per)}
        AND h."createdAt" > c."createdAt" - make_interval(secs => ${d.windowSec}::double precision)
        AND h."createdAt" < c."createdAt"
        AND h.id <> c.id
        AND (h.status <> 'void' OR h."settledAt" IS NULL OR h."settledAt" > c."createdAt")
      WHERE c.id = ANY(${ids}::text[])
      GROUP BY c.id`;
    // A call without money has no currency either (lib/policy/history.ts records both or neither), so no record
    // matches its currency and its total is 0.
    for (const r of rows) out.get(r.id)![d.name] = { total: Number(r.total), count: Number(r.count) };
  }
  return out;
}

function snapshotOf(v: unknown): { args: unknown; resource: ResourceView } | null {
  if (!v || typeof v !== "object") return null;
  const s = v as { args?: unknown; resource?: { type?: unknown; id?: unknown; properties?: unknown } };
  const r = s.resource;
  if (!r || typeof r.type !== "string" || typeof r.id !== "string" || !r.properties || typeof r.properties !== "object") return null;
  return { args: s.args, resource: r as ResourceView };
}

function outcomeText(d: Decision): string {
  switch (d.decision) {
    case "allow":
      return "runs at once";
    case "deny":
      return "refused";
    case "requestable":
      return `needs ${d.requirements.approvalsRequired} approval${d.requirements.approvalsRequired === 1 ? "" : "s"} from ${d.requirements.approverGroup}`;
  }
}

function safeSummary(tool: NonNullable<ReturnType<typeof getTool>>, args: unknown, resource: ResourceView): string {
  try {
    return tool.summary(args as never, resource);
  } catch {
    return `${tool.name} on ${resource.type} ${resource.id}`;
  }
}

/** The preview of `draft` against the calls of the last 30 days and the pending requests, at `now`. */
export async function previewImpact(draft: Draft, now: Date, opts: { limit?: number } = {}): Promise<Impact> {
  const limit = opts.limit ?? IMPACT_LIMIT;
  const compiled = await draftPolicies(draft);
  if (!compiled.ok) return compiled;
  const { current, draft: next, draftVersion } = compiled.pair;

  const subjects = new Map<string, Subject | null>();
  const subjectFor = async (agentId: string) => {
    if (!subjects.has(agentId)) subjects.set(agentId, await currentSubject(agentId));
    return subjects.get(agentId)!;
  };
  const changes: ImpactChange[] = [];
  let changedTotal = 0;
  const note = (source: ImpactChange["source"], id: string, tool: string, summary: string, at: Date, j: Judged) => {
    if (!differs(j)) return;
    changedTotal++;
    if (changes.length >= IMPACT_LISTED) return;
    changes.push({ source, id, tool, summary, at: at.toISOString(), before: j.before.decision, after: j.after.decision, beforeText: outcomeText(j.before), afterText: outcomeText(j.after) });
  };

  // The calls of the last 30 days (not those of requests still pending: they are judged below, as they stand now).
  const since = new Date(now.getTime() - IMPACT_DAYS * 86400_000);
  const pendingTasks = await db().task.findMany({
    where: { status: { in: ["working", "input_required"] } },
    orderBy: { createdAt: "desc" },
    take: limit + 1,
  });
  const pendingIds = pendingTasks.map((t) => t.id);
  const rows = (await db().callRecord.findMany({
    where: { createdAt: { gt: since, lte: now }, OR: [{ taskId: null }, { taskId: { notIn: pendingIds } }] },
    orderBy: { createdAt: "desc" },
    take: limit + 1,
  })) as CallRow[];
  const calls = emptyCounts(rows.length > limit);
  const judgedRows = rows.slice(0, limit);
  const usable: { row: CallRow; snap: { args: unknown; resource: ResourceView }; tool: NonNullable<ReturnType<typeof getTool>>; subject: Subject }[] = [];
  for (const row of judgedRows) {
    const snap = snapshotOf(row.snapshot);
    const tool = getTool(row.tool);
    const subject = await subjectFor(row.agentId);
    if (!snap || !tool || !subject) {
      calls.skipped++;
      continue;
    }
    usable.push({ row, snap, tool, subject });
  }
  const usableRows = usable.map((u) => u.row);
  const [historyNow, historyNext] = await Promise.all([historyAtTheTime(current.document.history, usableRows), historyAtTheTime(next.document.history, usableRows)]);
  for (const { row, snap, tool, subject } of usable) {
    const parsed = tool.schema.safeParse(snap.args);
    if (!parsed.success) {
      calls.skipped++;
      continue;
    }
    const base = { subject, action: { name: tool.name }, resource: snap.resource };
    const j: Judged = {
      before: evaluate({ ...base, context: { args: parsed.data, history: historyNow.get(row.id)! } }, current, row.createdAt),
      after: evaluate({ ...base, context: { args: parsed.data, history: historyNext.get(row.id)! } }, next, row.createdAt),
    };
    count(calls, j);
    note("call", row.id, tool.name, safeSummary(tool, parsed.data, snap.resource), row.createdAt, j);
  }

  // Every pending request, as re-evaluation would judge it now (without an approval).
  const pending = emptyCounts(pendingTasks.length > limit);
  for (const task of pendingTasks.slice(0, limit)) {
    const tool = getTool(task.tool);
    const subject = await subjectFor(task.agentId);
    const parsed = tool?.schema.safeParse(task.arguments);
    if (!tool || !subject || !parsed?.success) {
      pending.skipped++;
      continue;
    }
    let resource: ResourceView;
    try {
      resource = await tool.resource(parsed.data);
    } catch (e) {
      if (e instanceof ToolError) {
        pending.skipped++;
        continue;
      }
      throw e;
    }
    const call = historyCallOf(tool, { agentId: task.agentId, userId: task.principalUserId }, resource);
    const [hNow, hNext] = await Promise.all([
      measureHistory(current.document.history, call, now, { excludeTaskId: task.id }),
      measureHistory(next.document.history, call, now, { excludeTaskId: task.id }),
    ]);
    const base = { subject, action: { name: tool.name }, resource };
    const j: Judged = {
      before: evaluate({ ...base, context: { args: parsed.data, history: hNow } }, current, now),
      after: evaluate({ ...base, context: { args: parsed.data, history: hNext } }, next, now),
    };
    count(pending, j);
    note("pending", task.id, tool.name, safeSummary(tool, parsed.data, resource), task.createdAt, j);
  }

  return { ok: true, draftVersion, calls, pending, changes, listedAll: changes.length === changedTotal, sentence: impactSentence(calls, pending, limit) };
}
