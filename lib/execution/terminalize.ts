/**
 * The one way a task becomes terminal: a single conditional UPDATE from an expected phase. A terminal task never
 * changes again (the WHERE requires a non-terminal status), retention is extended to cover terminalizedAt plus
 * resultRetention, the dedup slot is freed, the task's call record is settled in policy history (void when it was
 * never claimed, so the tool never ran), and the audit event is written in the same transaction.
 */
import { db, Prisma } from "../db/client";
import { countDisposition } from "../metrics";
import { appendAudit } from "../audit/append";
import { config } from "../config";
import { settleTaskRecordSql } from "../policy/history";
import type { Disposition, TaskStatus, ToolOutcome } from "../tasks/types";

export type Terminal =
  | { status: "completed"; outcome: ToolOutcome & { disposition: Disposition } }
  | { status: "cancelled" }
  | { status: "failed"; error: { code: number; message: string } };

export type TerminalizeOpts = {
  taskId: string;
  /** Phases the task must be in for this transition to win. */
  fromPhases: string[];
  /** For completing a claimed task: only the claim holder may store its result. */
  claimedBy?: string;
  /** When set, only this approval generation may terminalize the task (a superseded one never acts). */
  generation?: number;
  to: Terminal;
  audit: { type: string; actor: string; data?: Record<string, unknown> };
  now: Date;
};

export async function terminalize(o: TerminalizeOpts): Promise<boolean> {
  const status: TaskStatus = o.to.status;
  const result = o.to.status === "completed" ? JSON.stringify(o.to.outcome) : null;
  const error = o.to.status === "failed" ? JSON.stringify(o.to.error) : null;
  const disposition = o.to.status === "completed" ? o.to.outcome.disposition : null;
  const retainFloor = new Date(o.now.getTime() + config.resultRetentionMs);
  const won = await db().$transaction(async (tx) => {
    // One statement: the transition, and with it (only when it won) the dedup slot freed and the call record settled.
    const [row] = await tx.$queryRaw<{ n: number }[]>`
      WITH won AS (UPDATE "Task" SET
        status = ${status},
        phase = 'done',
        disposition = ${disposition},
        result = ${result}::jsonb,
        error = ${error}::jsonb,
        "terminalizedAt" = ${o.now},
        "lastUpdatedAt" = ${o.now},
        "retainUntil" = GREATEST(COALESCE("retainUntil", ${retainFloor}), ${retainFloor})
      WHERE id = ${o.taskId}
        AND status IN ('working', 'input_required')
        AND phase = ANY(${o.fromPhases})
        AND (${o.claimedBy ?? null}::text IS NULL OR "claimedBy" = ${o.claimedBy ?? null})
        AND (${o.generation ?? null}::int IS NULL OR generation = ${o.generation ?? null})
      RETURNING id, "claimedAt"),
      freed AS (DELETE FROM "DedupSlot" WHERE "taskId" IN (SELECT id FROM won)),
      settled AS (${settleTaskRecordSql(Prisma.sql`won`, o.now)})
      SELECT count(*)::int AS n FROM won`;
    if (row?.n !== 1) return false;
    await appendAudit(tx, {
      type: o.audit.type,
      actor: o.audit.actor,
      taskId: o.taskId,
      data: { status, disposition, ...(o.audit.data ?? {}) },
      at: o.now,
      announce: { event: "task.completed", data: { status, disposition } },
    });
    return true;
  });
  if (won && disposition) countDisposition(disposition);
  return won;
}
