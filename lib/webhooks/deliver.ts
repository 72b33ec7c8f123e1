/**
 * Delivers due webhook events, signed per the Standard Webhooks specification (webhook-id, webhook-timestamp,
 * webhook-signature). A delivery is leased with a conditional update before it is sent, so several sweepers never
 * send one attempt twice; failures retry with growing delays and end as failed after the last attempt.
 */
import { Webhook } from "standardwebhooks";
import { SealedRecordError } from "../crypto/seal";
import { db } from "../db/client";
import { countDeliveryFailure } from "../metrics";

/** Delay before attempt n+1 (after n failures); after the last entry the delivery is marked failed. */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000];
const LEASE_MS = 30_000;
const TIMEOUT_MS = 10_000;

export type DeliveryReport = { delivered: number; retried: number; failed: number };

export async function deliverDue(now: Date, opts: { limit?: number; fetch?: typeof fetch } = {}): Promise<DeliveryReport> {
  const send = opts.fetch ?? fetch;
  const report: DeliveryReport = { delivered: 0, retried: 0, failed: 0 };
  // The payload is read per delivery: one that fails its integrity check ends as failed, the rest still go.
  const due = await db().webhookDelivery.findMany({
    where: { status: "pending", nextAttemptAt: { lte: now } },
    select: { id: true, nextAttemptAt: true, attempts: true, webhook: true },
    orderBy: { nextAttemptAt: "asc" },
    take: opts.limit ?? 50,
  });
  for (const d of due) {
    const lease = await db().webhookDelivery.updateMany({
      where: { id: d.id, status: "pending", nextAttemptAt: d.nextAttemptAt },
      data: { nextAttemptAt: new Date(now.getTime() + LEASE_MS) },
    });
    if (lease.count !== 1) continue;
    let payload: unknown;
    try {
      payload = (await db().webhookDelivery.findUniqueOrThrow({ where: { id: d.id }, select: { payload: true } })).payload;
    } catch (e) {
      if (!(e instanceof SealedRecordError)) throw e;
      await db().webhookDelivery.updateMany({ where: { id: d.id }, data: { status: "failed", lastError: "stored payload failed its integrity check" } });
      countDeliveryFailure("webhook", "failed");
      report.failed++;
      continue;
    }
    const body = JSON.stringify(payload);
    const sentAt = new Date();
    let status: number | null = null;
    let error: string | null = null;
    try {
      const signature = new Webhook(d.webhook.secret).sign(d.id, sentAt, body);
      const res = await send(d.webhook.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": d.id,
          "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
          "webhook-signature": signature,
          "user-agent": "Countersign-Webhooks/1",
        },
        body,
        signal: AbortSignal.timeout(TIMEOUT_MS),
        redirect: "manual",
      });
      status = res.status;
      if (res.status < 200 || res.status >= 300) error = `HTTP ${res.status}`;
    } catch (e) {
      error = (e as Error).name === "TimeoutError" ? "timed out" : "could not connect";
    }
    const attempts = d.attempts + 1;
    if (!error) {
      await db().webhookDelivery.update({ where: { id: d.id }, data: { status: "delivered", attempts, lastStatus: status, lastError: null, deliveredAt: sentAt } });
      report.delivered++;
    } else if (attempts > RETRY_DELAYS_MS.length) {
      await db().webhookDelivery.update({ where: { id: d.id }, data: { status: "failed", attempts, lastStatus: status, lastError: error } });
      countDeliveryFailure("webhook", "failed");
      report.failed++;
    } else {
      const next = new Date(now.getTime() + RETRY_DELAYS_MS[attempts - 1]);
      await db().webhookDelivery.update({ where: { id: d.id }, data: { attempts, lastStatus: status, lastError: error, nextAttemptAt: next } });
      countDeliveryFailure("webhook", "retry");
      report.retried++;
    }
  }
  return report;
}
