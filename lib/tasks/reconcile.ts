/**
 * Start-up reconciliation (SEP "Crash-consistent creation"): every submission intent that never got its handle
 * persisted is either recovered (the backend holds a request under its key: bind it) or, when the backend never
 * received it, closed and its dedup slot freed, so nothing is orphaned and nothing is submitted twice.
 */
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import { approvalBackend } from "../approvals/inbox-backend";
import { attachGeneration } from "../execution/advance";
import { settleRecord } from "../policy/history";
import { bindTask } from "./create";

export type ReconcileReport = { recovered: number; closed: number };

/** Intents older than `minAgeMs` (so an in-flight creation in another process is left alone). */
export async function reconcileIntents(now: Date, minAgeMs = 30_000): Promise<ReconcileReport> {
  const report: ReconcileReport = { recovered: 0, closed: 0 };
  const intents = await db().submissionIntent.findMany({
    where: { state: "open", createdAt: { lte: new Date(now.getTime() - minAgeMs) } },
    orderBy: { createdAt: "asc" },
    take: 500,
  });
  for (const intent of intents) {
    const found = await approvalBackend().find(intent.idempotencyKey);
    if (intent.generation === 1) {
      if (found) {
        await bindTask(intent.idempotencyKey, found, now);
        report.recovered++;
      } else {
        await db().$transaction(async (tx) => {
          const n = await tx.submissionIntent.updateMany({ where: { id: intent.id, state: "open" }, data: { state: "cancelled" } });
          if (n.count !== 1) return;
          await tx.dedupSlot.deleteMany({ where: { taskId: intent.taskId } });
          // The call never became a task, so it never runs: policy history stops counting it.
          await settleRecord({ taskId: intent.taskId }, "void", now, tx);
          await appendAudit(tx, { type: "intent.closed", actor: "system", taskId: intent.taskId, data: { reason: "never reached the backend" }, at: now });
        });
        report.closed++;
      }
    } else {
      // A chained generation: the task exists and waits in phase "submitting". Recover the handle, or submit the
      // recorded body under the same key (the backend treats a repeat as the same request). If the task moved on
      // meanwhile (cancelled, expired), the generation is dead: cancel any request made under it and close it.
      const task = await db().task.findUnique({ where: { id: intent.taskId } });
      const live = task && task.status === "working" && task.phase === "submitting" && task.generation === intent.generation;
      if (live) {
        const submitted = found ?? (await approvalBackend().submit(intent.idempotencyKey, intent.body as never, now));
        await attachGeneration(intent.taskId, intent.generation, intent.idempotencyKey, submitted, now);
        report.recovered++;
      } else {
        if (found) await approvalBackend().cancel?.(found.handle, now);
        await db().$transaction(async (tx) => {
          const n = await tx.submissionIntent.updateMany({ where: { id: intent.id, state: "open" }, data: { state: "cancelled", handle: found?.handle ?? null } });
          if (n.count === 1) {
            await appendAudit(tx, { type: "intent.closed", actor: "system", taskId: intent.taskId, requestId: found?.handle ?? null, data: { reason: "task no longer waits for this generation", generation: intent.generation }, at: now });
          }
        });
        report.closed++;
      }
    }
  }
  return report;
}
