/**
 * Retention end (SEP "Retention" and "Durable sensitive state"): once a terminal task's retention (createdAt +
 * ttlMs) has passed, the task is deleted and the sensitive records behind it (complete arguments, submission
 * input, requester context) are redacted from its submission intents and approval requests. What stays is what
 * the audit trail needs: ids, statuses, the argument digest. A task that is not terminal is never purged here: a
 * working task lives at least until its pending deadline, and a claimed one until it terminalizes.
 */
import { db, Prisma } from "../db/client";
import { appendAudit } from "../audit/append";

const REDACTED = { redacted: "deleted at the end of the task's retention" };

export async function purgeExpiredTasks(now: Date, limit = 200): Promise<number> {
  const expired = await db().task.findMany({
    where: { status: { in: ["completed", "failed", "cancelled"] }, retainUntil: { lt: now } },
    select: { id: true, argumentsDigest: true },
    take: limit,
  });
  let purged = 0;
  for (const t of expired) {
    const done = await db().$transaction(async (tx) => {
      const n = await tx.task.deleteMany({ where: { id: t.id, status: { in: ["completed", "failed", "cancelled"] }, retainUntil: { lt: now } } });
      if (n.count !== 1) return false;
      await tx.submissionIntent.updateMany({
        where: { taskId: t.id },
        data: { body: REDACTED as Prisma.InputJsonValue, requester: REDACTED as Prisma.InputJsonValue },
      });
      const requests = await tx.approvalRequest.findMany({ where: { taskId: t.id }, select: { id: true, body: true } });
      for (const r of requests) {
        const b = r.body as Record<string, unknown>;
        const kept = { taskId: b.taskId, generation: b.generation, tool: b.tool, argumentsDigest: b.argumentsDigest, policy: b.policy, requirements: b.requirements };
        await tx.approvalRequest.update({ where: { id: r.id }, data: { body: { ...kept, ...REDACTED } as Prisma.InputJsonValue } });
      }
      await tx.clarification.updateMany({ where: { taskId: t.id }, data: { question: REDACTED.redacted, answer: Prisma.DbNull } });
      await appendAudit(tx, { type: "task.purged", actor: "system", taskId: t.id, data: { argumentsDigest: t.argumentsDigest }, at: now });
      return true;
    });
    if (done) purged++;
  }
  return purged;
}
