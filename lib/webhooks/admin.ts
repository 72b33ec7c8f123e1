/** Registering and retiring webhook endpoints (admins only; the caller checks the role). */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import { WEBHOOK_EVENTS } from "./outbox";

export const WebhookInput = z.object({
  url: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u), "http or https URL"),
  events: z.array(z.enum(WEBHOOK_EVENTS)).min(1, "choose at least one event"),
});

/** Creates the endpoint; the returned secret is shown once and used by the receiver to verify signatures. */
export async function createWebhook(input: z.infer<typeof WebhookInput>, actorUserId: string, now: Date) {
  const { url, events } = WebhookInput.parse(input);
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  return db().$transaction(async (tx) => {
    const hook = await tx.webhook.create({ data: { url, events, secret, createdBy: actorUserId, createdAt: now } });
    await appendAudit(tx, { type: "webhook.created", actor: `user:${actorUserId}`, data: { webhookId: hook.id, url, events }, at: now });
    return { webhook: { id: hook.id, url, events, active: true, createdAt: hook.createdAt }, secret };
  });
}

export async function deactivateWebhook(webhookId: string, actorUserId: string, now: Date): Promise<boolean> {
  return db().$transaction(async (tx) => {
    const n = await tx.webhook.updateMany({ where: { id: webhookId, active: true }, data: { active: false } });
    if (n.count === 1) await appendAudit(tx, { type: "webhook.deactivated", actor: `user:${actorUserId}`, data: { webhookId }, at: now });
    return n.count === 1;
  });
}
