/**
 * Recent history as policy context: windowed sums and counts over a durable ledger of calls (CallRecord), so a
 * call split into parts (twelve transfers of USD 25,000 to one account, refunds of 150 + 150 + 20 on one order)
 * is judged on what the parts add up to.
 *
 * A record is written for every call that is allowed (`reserved`, the tool about to run) or opens an approval task
 * (`pending`). It becomes `executed` once the tool may have run (the direct run, or the task's execution claim)
 * and `void` once the call ends without running. Reserved, pending and executed records count; void ones do not.
 *
 * Splitting by concurrency: `withHistory` measures and records in one short transaction that first takes a
 * transaction-scoped advisory lock on every group the call is counted in. Two calls of the same group therefore
 * take turns: the second measures after the first's record is committed (READ COMMITTED takes a fresh snapshot
 * per statement, and the lock is taken by a statement of its own before the measuring one).
 */
import { createHash, randomUUID } from "node:crypto";
import { db, Prisma } from "../db/client";
import { aadFor } from "../db/sealed";
import { seal } from "../crypto/seal";
import type { AuditedWrite } from "../audit/append";
import { callMoney, type ResourceAttr } from "./schema";
import type { ResourceView } from "./evaluate";

export type HistoryDef = { name: string; tool: string; windowSec: number; per: "resource" | "agent" | "user" | "tool" };
export type HistoryCall = {
  tool: string;
  agentId: string;
  userId: string;
  resourceType: string;
  resourceId: string;
  money: { minor: number; currency: string } | null;
  /**
   * What policy evaluated for this call (arguments and the resource's properties), kept sealed so that a draft
   * policy can be previewed against the calls of the last 30 days. Optional: not every record has one.
   */
  snapshot?: { args: unknown; resource: { type: string; id: string; properties: ResourceView["properties"] } };
};
/** The call as history counts it: a tool's call by an agent for a user, on the resource its mapping read. */
export function historyCallOf(
  tool: { name: string; policyResource: { shape: Record<string, ResourceAttr> } },
  by: { agentId: string; userId: string },
  resource: { type: string; id: string; properties: ResourceView["properties"] },
): HistoryCall {
  return {
    tool: tool.name,
    agentId: by.agentId,
    userId: by.userId,
    resourceType: resource.type,
    resourceId: resource.id,
    money: callMoney(tool.policyResource.shape, resource.properties),
  };
}

/** total: sum of amountMinor of counted calls in the call's currency (0 when the call has no money); count: number of counted calls. */
export type HistoryValues = Record<string, { total: number; count: number }>;

export type RecordStatus = "reserved" | "pending" | "executed" | "void";
/** The statuses a window counts: everything that ran, may have run, is about to run or waits for approval. */
export const COUNTED_STATUSES: readonly RecordStatus[] = ["reserved", "pending", "executed"];
/** Records are kept this long (the sweeper purges older ones); no window may reach further back. */
export const HISTORY_RETENTION_DAYS = 400;
/** A record's snapshot outlives the policy preview's 30 days by one day, then it is cleared. */
export const SNAPSHOT_RETENTION_DAYS = 31;
export const MAX_WINDOW_SEC = HISTORY_RETENTION_DAYS * 24 * 60 * 60;

const PER = new Set<HistoryDef["per"]>(["resource", "agent", "user", "tool"]);

type Tx = Prisma.TransactionClient;

/** A definition or call this module cannot count correctly: refused rather than counted wrong. */
export class HistoryInputError extends Error {}

function checkDefs(defs: HistoryDef[], tool: string): HistoryDef[] {
  const applicable = defs.filter((d) => d.tool === tool);
  const names = new Set<string>();
  for (const d of applicable) {
    if (!PER.has(d.per)) throw new HistoryInputError(`history ${d.name}: per must be resource, agent, user or tool`);
    if (!(Number.isFinite(d.windowSec) && d.windowSec > 0 && d.windowSec <= MAX_WINDOW_SEC)) {
      throw new HistoryInputError(`history ${d.name}: the window must be more than 0 and at most ${HISTORY_RETENTION_DAYS} days`);
    }
    if (names.has(d.name)) throw new HistoryInputError(`history ${d.name}: two definitions of one tool share a name`);
    names.add(d.name);
  }
  return applicable;
}

function checkCall(call: HistoryCall): void {
  if (call.money === null) return;
  const { minor, currency } = call.money;
  if (!Number.isSafeInteger(minor) || minor < 0) throw new HistoryInputError("history: money must be a non-negative integer of minor units");
  if (typeof currency !== "string" || currency === "") throw new HistoryInputError("history: money needs its currency");
}

/** What a call is grouped by under `per`; the same for every definition of the tool with that `per`. */
function groupOf(per: HistoryDef["per"], call: HistoryCall): string[] {
  switch (per) {
    case "resource":
      return [call.resourceType, call.resourceId];
    case "agent":
      return [call.agentId];
    case "user":
      return [call.userId];
    case "tool":
      return [];
  }
}

/** A stable signed 64-bit key for pg_advisory_xact_lock: the group (tool, per, key), not the definition. */
export function groupLockKey(tool: string, per: HistoryDef["per"], call: HistoryCall): bigint {
  const h = createHash("sha256").update(JSON.stringify(["countersign:call-history", tool, per, ...groupOf(per, call)])).digest();
  return h.readBigInt64BE(0);
}

function groupCondition(per: HistoryDef["per"], call: HistoryCall): Prisma.Sql {
  switch (per) {
    case "resource":
      return Prisma.sql`"resourceType" = ${call.resourceType} AND "resourceId" = ${call.resourceId}`;
    case "agent":
      return Prisma.sql`"agentId" = ${call.agentId}`;
    case "user":
      return Prisma.sql`"userId" = ${call.userId}`;
    case "tool":
      return Prisma.sql`TRUE`;
  }
}

/** One statement for all applicable definitions: a UNION ALL of one indexed aggregate per definition. */
async function measure(
  client: Tx | ReturnType<typeof db>,
  applicable: HistoryDef[],
  call: HistoryCall,
  now: Date,
  excludeTaskId?: string,
): Promise<HistoryValues> {
  if (applicable.length === 0) return {};
  const currency = call.money?.currency ?? null;
  const exclude = excludeTaskId ? Prisma.sql`AND "taskId" IS DISTINCT FROM ${excludeTaskId}` : Prisma.empty;
  const branches = applicable.map((d, i) => {
    const since = new Date(now.getTime() - Math.round(d.windowSec * 1000));
    return Prisma.sql`
      SELECT ${i}::int AS i,
        (COALESCE(SUM("amountMinor") FILTER (WHERE currency = ${currency}::text), 0))::text AS total,
        COUNT(*)::int AS count
      FROM "CallRecord"
      WHERE tool = ${call.tool} AND ${groupCondition(d.per, call)} AND "createdAt" > ${since}::timestamp
        AND status IN ('reserved', 'pending', 'executed') ${exclude}`;
  });
  const rows = await client.$queryRaw<{ i: number; total: string; count: number }[]>(Prisma.join(branches, " UNION ALL "));
  const values: HistoryValues = {};
  for (const r of rows) values[applicable[r.i].name] = { total: call.money ? Number(r.total) : 0, count: Number(r.count) };
  return values;
}

/** Whether any window reads calls of `tool`: only then must a call be counted before it runs. */
export function windowsApply(defs: HistoryDef[], tool: string): boolean {
  return defs.some((d) => d.tool === tool);
}

/**
 * The record of an allowed call, as a write for appendAuditWith (the record and the call's audit event in one
 * statement): for a tool no window reads, nothing waits on the record, so it is written once, as `executed`, while
 * the tool runs (voidRecord takes it back when the tool did not run). `id` is the record's, for that. The snapshot
 * is sealed here, as the client extension would seal it (the statement bypasses it).
 */
export function executedRecordWrite(call: HistoryCall, now: Date, id: string = randomUUID()): AuditedWrite {
  checkCall(call);
  const d = recordData(call, "reserved", now);
  const snapshot = call.snapshot ? JSON.stringify(seal(call.snapshot, aadFor("CallRecord", "snapshot", { id }))) : null;
  return {
    sql: `INSERT INTO "CallRecord" ("id", "tool", "agentId", "userId", "resourceType", "resourceId", "amountMinor", "currency", "status", "snapshot", "createdAt", "settledAt")
          VALUES ($1, $2, $3, $4, $5, $6, $7::bigint, $8, 'executed', $9::jsonb, $10::timestamp(3), $10::timestamp(3))`,
    params: [id, d.tool, d.agentId, d.userId, d.resourceType, d.resourceId, d.amountMinor === null ? null : d.amountMinor.toString(), d.currency, snapshot, now],
  };
}

/**
 * Records a call that opens approval task `taskId` as pending, bound to that task, in the transaction that records
 * the submission: for a call no window counted (withHistory said `recordWithTask`), so nothing waited for it.
 */
export async function recordPendingForTask(tx: Tx, call: HistoryCall, taskId: string, now: Date): Promise<void> {
  checkCall(call);
  await tx.callRecord.create({ data: { ...recordData(call, "pending", now), taskId }, select: { id: true } });
}

function recordData(call: HistoryCall, status: "reserved" | "pending", now: Date) {
  return {
    tool: call.tool,
    agentId: call.agentId,
    userId: call.userId,
    resourceType: call.resourceType,
    resourceId: call.resourceId,
    amountMinor: call.money ? BigInt(call.money.minor) : null,
    currency: call.money?.currency ?? null,
    status,
    // Sealed at rest (lib/db/sealed.ts), like a task's arguments.
    ...(call.snapshot ? { snapshot: call.snapshot as object } : {}),
    createdAt: now,
  };
}

/**
 * Measures the call's history and records the call, as one decision: `decide` gets the values of the definitions
 * that apply to `call.tool` (others are absent) and says whether to record the call (`reserved` for an allowed
 * call about to run, `pending` for one that opens an approval task, null for one that is refused or asks first).
 * Concurrent calls of a group the call is counted in wait for each other, so none decides on a total that misses
 * another's record. `decide` runs inside the transaction and must not wait on anything.
 *
 * When no definition applies to the tool, there is nothing to measure or to wait for, and a `pending` call is not
 * written here: `recordWithTask` tells the caller to record it with the task it opens (recordPendingForTask), in
 * the same transaction, so an approval request costs no statement of its own. The record is still kept, for
 * definitions added later.
 */
export async function withHistory<T>(
  defs: HistoryDef[],
  call: HistoryCall,
  now: Date,
  decide: (values: HistoryValues) => { result: T; record: "reserved" | "pending" | null },
): Promise<{ result: T; recordId: string | null; recordWithTask?: true }> {
  checkCall(call);
  const applicable = checkDefs(defs, call.tool);
  if (applicable.length === 0) {
    const { result, record } = decide({});
    if (!record) return { result, recordId: null };
    if (record === "pending") return { result, recordId: null, recordWithTask: true };
    const row = await db().callRecord.create({ data: recordData(call, record, now), select: { id: true } });
    return { result, recordId: row.id };
  }
  const keys = [...new Set(applicable.map((d) => groupLockKey(call.tool, d.per, call)))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return db().$transaction(async (tx) => {
    // Sorted, so two calls sharing several groups always lock them in the same order (no deadlock).
    await tx.$queryRaw`SELECT pg_advisory_xact_lock(k)::text FROM unnest(${keys.map(String)}::bigint[]) WITH ORDINALITY AS g(k, n) ORDER BY n`;
    const values = await measure(tx, applicable, call, now);
    const { result, record } = decide(values);
    if (!record) return { result, recordId: null };
    const row = await tx.callRecord.create({ data: recordData(call, record, now), select: { id: true } });
    return { result, recordId: row.id };
  });
}

/**
 * The same values without recording anything, for re-evaluation at execution: `excludeTaskId` leaves out the
 * task's own record (it is the call being judged). No lock: every call this one could be split from already has
 * its record (pending or executed) before it is counted against.
 */
export async function measureHistory(
  defs: HistoryDef[],
  call: HistoryCall,
  now: Date,
  opts: { excludeTaskId?: string } = {},
): Promise<HistoryValues> {
  checkCall(call);
  return measure(db(), checkDefs(defs, call.tool), call, now, opts.excludeTaskId);
}

/** Binds a pending record to the approval task its call opened (in the transaction that records the submission). */
export async function linkRecordToTask(recordId: string, taskId: string, tx?: Tx): Promise<void> {
  const client = tx ?? db();
  const n = await client.callRecord.updateMany({
    where: { id: recordId, taskId: null, status: { in: ["reserved", "pending"] } },
    data: { taskId, status: "pending" },
  });
  if (n.count === 1) return;
  const row = await client.callRecord.findUnique({ where: { id: recordId }, select: { taskId: true } });
  if (row?.taskId === taskId) return;
  throw new Error(row ? "the call record is settled or belongs to another task" : "the call record does not exist");
}

/**
 * Settles a record once: `executed` (the tool ran or may have run) or `void` (it never ran). A settled record is
 * never changed again. Returns whether this call settled it.
 */
export async function settleRecord(
  where: { id: string } | { taskId: string },
  status: "executed" | "void",
  now: Date,
  tx?: Tx,
): Promise<boolean> {
  const n = await (tx ?? db()).callRecord.updateMany({
    where: { ...where, status: { in: ["reserved", "pending"] } },
    data: { status, settledAt: now },
  });
  return n.count === 1;
}

/**
 * Takes back an allowed call's record written as the call went to its tool, when the tool did not run or did not
 * complete: it no longer counts in any window.
 */
export async function voidRecord(id: string, now: Date, tx?: Tx): Promise<boolean> {
  const n = await (tx ?? db()).callRecord.updateMany({ where: { id, taskId: null, status: { in: ["reserved", "executed"] } }, data: { status: "void", settledAt: now } });
  return n.count === 1;
}

/**
 * Settles the record of a task that just became terminal, from what the task did: claimed means the tool may have
 * run (executed, which the claim already recorded); never claimed means it did not run (void). `task` is the
 * terminal transition's RETURNING (at most one row with the task's `id` and `claimedAt`), so the settle is a
 * data-modifying CTE of that very statement, costs no round trip, and finds the record by its unique task key.
 */
export function settleTaskRecordSql(task: Prisma.Sql, now: Date): Prisma.Sql {
  return Prisma.sql`UPDATE "CallRecord" c
    SET status = CASE WHEN (SELECT "claimedAt" FROM ${task}) IS NULL THEN 'void' ELSE 'executed' END, "settledAt" = ${now}
    WHERE c."taskId" = (SELECT id FROM ${task}) AND c.status IN ('reserved', 'pending')`;
}

/**
 * Retention: records created more than HISTORY_RETENTION_DAYS before `now` are deleted, oldest first, in small
 * batches (each its own short statement), at most `maxBatches` per sweep.
 */
export async function purgeCallRecords(now: Date, opts: { batch?: number; maxBatches?: number } = {}): Promise<number> {
  const batch = opts.batch ?? 500;
  const maxBatches = opts.maxBatches ?? 4;
  const cutoff = new Date(now.getTime() - MAX_WINDOW_SEC * 1000);
  let purged = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await db().$executeRaw`
      DELETE FROM "CallRecord" WHERE id IN (
        SELECT id FROM "CallRecord" WHERE "createdAt" < ${cutoff}::timestamp ORDER BY "createdAt" LIMIT ${batch})`;
    purged += n;
    if (n < batch) break;
  }
  // What policy evaluated (the sealed snapshot, derived from the arguments) is kept only as long as the preview
  // reads it; the record itself stays for its windows.
  const snapshotCutoff = new Date(now.getTime() - SNAPSHOT_RETENTION_DAYS * 86_400_000);
  for (let i = 0; i < maxBatches; i++) {
    const n = await db().$executeRaw`
      UPDATE "CallRecord" SET snapshot = NULL WHERE id IN (
        SELECT id FROM "CallRecord" WHERE snapshot IS NOT NULL AND "createdAt" < ${snapshotCutoff}::timestamp ORDER BY "createdAt" LIMIT ${batch})`;
    if (n < batch) break;
  }
  return purged;
}
