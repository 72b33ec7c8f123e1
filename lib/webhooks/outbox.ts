/**
 * Webhook events are written to an outbox in the same transaction as the audit event that announces them, so an
 * event is delivered if and only if the state change it reports was committed.
 */
import { randomUUID } from "node:crypto";
import type { Prisma } from "../db/generated/client";

export const WEBHOOK_EVENTS = ["request.created", "request.decided", "task.completed"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

type Tx = Prisma.TransactionClient;

export async function enqueueWebhooks(
  tx: Tx,
  event: WebhookEvent,
  data: { taskId: string | null; requestId: string | null; [k: string]: unknown },
  at: Date,
): Promise<void> {
  const hooks = await tx.webhook.findMany({ where: { active: true, events: { has: event } }, select: { id: true } });
  if (hooks.length === 0) return;
  const payload = { type: event, timestamp: at.toISOString(), data } as Prisma.InputJsonValue;
  await tx.webhookDelivery.createMany({
    data: hooks.map((h) => ({ id: `msg_${randomUUID().replace(/-/g, "")}`, webhookId: h.id, eventType: event, taskId: data.taskId, payload, nextAttemptAt: at, createdAt: at })),
  });
}
