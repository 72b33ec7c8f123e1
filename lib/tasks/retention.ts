/**
 * Retention end (SEP "Retention" and "Durable sensitive state"): once a terminal task's retention (createdAt +
 * ttlMs) has passed, the task is deleted and so is everything derived from its arguments: its submission intents
 * (body, requester context), the sealed arguments, input and summary of its approval requests, the questions and
 * answers of its clarifications, its webhook deliveries (their payloads carry the summary) and its notifications. What stays is what
 * the audit trail and the history need: ids, statuses, tool, rule, the argument digest. A task that is not
 * terminal is never purged here: a working task lives at least until its pending deadline, and a claimed one
 * until it terminalizes. Nothing here has to open a sealed record, so a record that no longer opens is purged too.
 */
import { db, Prisma } from "../db/client";
import { appendAudit } from "../audit/append";

const REDACTED = "deleted at the end of the task's retention";

export async function purgeExpiredTasks(now: Date, limit = 200): Promise<number> {
  const expired = await db().task.findMany({
    where: { status: { in: ["completed", "failed", "cancelled"] }, retainUntil: { lt: now } },
    select: { id: true, argumentsDigest: true },
    // Oldest retention first, along the index on retainUntil: the batch never reads the tasks still kept.
    orderBy: { retainUntil: "asc" },
    take: limit,
  });
  let purged = 0;
  for (const t of expired) {
    const done = await db().$transaction(async (tx) => {
      const n = await tx.task.deleteMany({ where: { id: t.id, status: { in: ["completed", "failed", "cancelled"] }, retainUntil: { lt: now } } });
      if (n.count !== 1) return false;
      await tx.submissionIntent.deleteMany({ where: { taskId: t.id } });
      // Only members that carry no argument text are kept (sealed members, summary and requester go).
      await tx.$executeRaw`
        UPDATE "ApprovalRequest" SET body = jsonb_strip_nulls(jsonb_build_object(
          'taskId', body->'taskId', 'generation', body->'generation', 'tool', body->'tool',
          'argumentsDigest', body->'argumentsDigest', 'policy', body->'policy', 'requirements', body->'requirements',
          'redacted', ${REDACTED}::text))
        WHERE "taskId" = ${t.id}`;
      await tx.clarification.updateMany({ where: { taskId: t.id }, data: { question: REDACTED, answer: Prisma.DbNull } });
      await tx.webhookDelivery.deleteMany({ where: { taskId: t.id } });
      await tx.notification.deleteMany({ where: { taskId: t.id } });
      // The call's history record stays for its windows, without the snapshot of what policy evaluated.
      await tx.$executeRaw`UPDATE "CallRecord" SET snapshot = NULL WHERE "taskId" = ${t.id}`;
      await appendAudit(tx, { type: "task.purged", actor: "system", taskId: t.id, data: { argumentsDigest: t.argumentsDigest }, at: now });
      return true;
    });
    if (done) purged++;
  }
  return purged;
}
