/**
 * The audit trail: append-only events linking request -> reviews -> claim -> result. Each event carries the hash
 * of the previous one, so any edit or deletion breaks the chain (see verify.ts); the trail's head (AuditHead) holds
 * the newest hash, so a trail cut short at its end breaks it too. An append is one statement, written in the same
 * transaction as the state change it records: it moves the head forward (its row lock orders concurrent appends
 * until the transaction ends, so sequence order is chain order) and inserts the event linked to the head it found.
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

export const GENESIS = "sha256:genesis";

export function eventHash(prevHash: string, e: { at: Date; type: string; actor: string; taskId: string | null; requestId: string | null; data: unknown }): string {
  return `sha256:${sha256Hex(`${prevHash}\n${eventBody(e)}`)}`;
}

/** The chain's step in SQL, the same as eventHash: `sha256:` + hex SHA-256 of `<prev>\n<canonical body>` (UTF-8). */
const STEP = (prev: string, body: string) => `'sha256:' || encode(sha256(convert_to(${prev} || E'\\n' || ${body}, 'UTF8')), 'hex')`;

/** The canonical body eventHash hashes (everything but the links). */
function eventBody(e: { at: Date; type: string; actor: string; taskId: string | null; requestId: string | null; data: unknown }): string {
  return canonicalJson({ at: e.at.toISOString(), type: e.type, actor: e.actor, taskId: e.taskId, requestId: e.requestId, data: e.data });
}

/**
 * A write that commits with an audit event in one statement, so the pair costs one round trip and no transaction:
 * `sql` is a data-modifying statement (an INSERT or UPDATE) with its own parameters numbered from $1.
 */
export type AuditedWrite = { sql: string; params: unknown[] };

export async function appendAudit(tx: Tx, input: AuditInput): Promise<void> {
  return appendAuditWith(tx, input, null);
}

/**
 * appendAudit with `write` as a data-modifying CTE of the same statement: both commit or neither does, the event's
 * place in the chain is taken by the same row lock. For a state change and its event where nothing else must be in
 * the transaction (an allowed call's record and `call.executed`). A write that affects no row fails the append.
 */
export async function appendAuditWith(tx: Tx | { $executeRawUnsafe(text: string, ...values: unknown[]): Promise<number> }, input: AuditInput, write: AuditedWrite | null): Promise<void> {
  if (write && input.announce) throw new Error("an audited write cannot announce a webhook: append it in a transaction");
  const e = {
    at: input.at,
    type: input.type,
    actor: input.actor,
    taskId: input.taskId ?? null,
    requestId: input.requestId ?? null,
    data: input.data ?? {},
  };
  const body = eventBody(e);
  // Insert-or-advance the head (a trail with no head yet starts from genesis), then the event it links to.
  // The write's parameters follow the event's eight.
  const prelude = write ? `written AS (${write.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + 8}`)} RETURNING 1), ` : "";
  const inserted = await tx.$executeRawUnsafe(
    `WITH ${prelude}head AS (
       INSERT INTO "AuditHead" AS h ("id", "prevHash", "hash")
       SELECT 1, $1::text, ${STEP("$1::text", "$2::text")}${write ? " WHERE EXISTS (SELECT 1 FROM written)" : ""}
       ON CONFLICT ("id") DO UPDATE SET "prevHash" = h."hash", "hash" = ${STEP("h.\"hash\"", "$2::text")}
       RETURNING "prevHash", "hash")
     INSERT INTO "AuditEvent" ("at", "type", "taskId", "requestId", "actor", "data", "prevHash", "hash")
     SELECT $3::timestamp(3), $4, $5, $6, $7, $8::jsonb, head."prevHash", head."hash" FROM head`,
    GENESIS,
    body,
    e.at,
    e.type,
    e.taskId,
    e.requestId,
    e.actor,
    JSON.stringify(e.data),
    ...(write?.params ?? []),
  );
  if (inserted !== 1) throw new Error(write ? "the audited write changed nothing, so neither it nor its event was written" : "the audit event was not appended");
  if (input.announce) {
    await enqueueWebhooks(tx as Tx, input.announce.event, { taskId: e.taskId, requestId: e.requestId, ...input.announce.data }, input.at);
  }
}
