/**
 * The audit trail: append-only events linking request -> reviews -> claim -> result. Each event carries the hash
 * of the previous one, so any edit or deletion breaks the chain (see verify.ts). Appends are serialized by a
 * transaction-scoped advisory lock and written in the same transaction as the state change they record.
 */
import type { Prisma } from "../db/generated/client";
import { canonicalJson, sha256Hex } from "../canonical";
import { enqueueWebhooks, type WebhookEvent } from "../webhooks/outbox";

export type Tx = Prisma.TransactionClient;

export type AuditInput = {
  type: string;
  actor: string;
  taskId?: string | null;
  requestId?: string | null;
  data?: Record<string, unknown>;
  at: Date;
  /** The webhook event this audit event announces, if any (delivered through the outbox, same transaction). */
  announce?: { event: WebhookEvent; data: Record<string, unknown> };
};

const AUDIT_LOCK = 7_240_001;
export const GENESIS = "sha256:genesis";

export function eventHash(prevHash: string, e: { at: Date; type: string; actor: string; taskId: string | null; requestId: string | null; data: unknown }): string {
  const body = canonicalJson({
    at: e.at.toISOString(),
    type: e.type,
    actor: e.actor,
    taskId: e.taskId,
    requestId: e.requestId,
    data: e.data,
  });
  return `sha256:${sha256Hex(`${prevHash}\n${body}`)}`;
}

export async function appendAudit(tx: Tx, input: AuditInput): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${AUDIT_LOCK})`;
  const last = await tx.auditEvent.findFirst({ orderBy: { seq: "desc" }, select: { hash: true } });
  const prevHash = last?.hash ?? GENESIS;
  const e = {
    at: input.at,
    type: input.type,
    actor: input.actor,
    taskId: input.taskId ?? null,
    requestId: input.requestId ?? null,
    data: (input.data ?? {}) as Prisma.InputJsonValue,
  };
  await tx.auditEvent.create({ data: { ...e, prevHash, hash: eventHash(prevHash, e) } });
  if (input.announce) {
    await enqueueWebhooks(tx, input.announce.event, { taskId: e.taskId, requestId: e.requestId, ...input.announce.data }, input.at);
  }
}
