/**
 * The execution claim: one atomic compare-and-set from a pre-execution phase to `claimed`. It is the
 * enforcement point: the WHERE clause re-checks, at the instant of the claim, that the task is still working in
 * the expected generation, that the approval has not expired, and that the agent and its user are still valid.
 * It is mutually exclusive with cancellation and expiry, which need the same pre-execution phase.
 *
 * "At the instant of the claim" is the database's own clock when the UPDATE runs (clock_timestamp(), read again
 * if the statement waits for a row lock), never earlier than the `now` passed in: a slow re-evaluation between
 * the arrival of a request and its claim cannot carry an approval past its expiry.
 *
 * A winning claim also marks the task's call record executed in policy history (lib/policy/history.ts).
 */
import { randomUUID } from "node:crypto";
import { db, Prisma } from "../db/client";
import { appendAudit, type Tx } from "../audit/append";
import { lockEligibleApprovers } from "../approvals/eligibility";
import { config } from "../config";
import { countClaimLost } from "../metrics";
import { settleRecord } from "../policy/history";

/**
 * Identifies this process in claim tokens and in the audit trail's claim events: COUNTERSIGN_INSTANCE (a replica's
 * name: letters, digits, '-' and '_', up to 40) when set, then a random part, so two processes never share one.
 */
export function instanceTag(name = process.env.COUNTERSIGN_INSTANCE): string {
  const random = randomUUID().slice(0, 8);
  return name && /^[A-Za-z0-9_-]{1,40}$/.test(name) ? `${name}.${random}` : random;
}

const BOOT = instanceTag();

/** The instant of the claim, in SQL: the later of `now` and the database's clock at the moment it is evaluated. */
export function claimInstant(now: Date): Prisma.Sql {
  return Prisma.sql`GREATEST(${now}::timestamp, (clock_timestamp() AT TIME ZONE 'UTC'))`;
}

/** The instant of the claim as a time: the later of `now` and the database's clock. */
async function claimTime(tx: Tx, now: Date): Promise<Date> {
  const [row] = await tx.$queryRaw<{ at: Date }[]>`SELECT ${claimInstant(now)} AS at`;
  return new Date(row.at);
}

/** Whether the task's approval has expired by the claim's clock (why a claim was refused). */
export async function approvalExpiredAtClaim(taskId: string, now: Date): Promise<boolean> {
  const rows = await db().$queryRaw<{ expired: boolean }[]>`
    SELECT ("approvalExpiresAt" IS NOT NULL AND "approvalExpiresAt" <= ${claimInstant(now)}) AS expired FROM "Task" WHERE id = ${taskId}`;
  return rows[0]?.expired === true;
}

/**
 * The approvals the decision relied on, re-checked inside the claim: only reviewers still eligible at the claim
 * count. Their user rows are read FOR SHARE, so a concurrent deactivation or group change waits until the claim
 * has committed (and then no longer matters: authorization was enforced at the claim).
 */
export type ClaimApproval = {
  approverGroup: string;
  /** The fallback group the request had escalated to (its members' approvals count too). */
  escalatedTo?: string | null;
  approverIds: string[];
  approvalsRequired: number;
  requesterUserId: string;
};

/** The execution deadline a claim made at `claimedAt` sets: the tool's run is bounded by it, the sweeper judges it. */
export function executionDeadlineFrom(claimedAt: Date): Date {
  return new Date(claimedAt.getTime() + config.executionDeadlineMs);
}

export async function claim(taskId: string, generation: number, now: Date, approval?: ClaimApproval): Promise<string | null> {
  const token = `${BOOT}:${randomUUID()}`;
  const deadline = executionDeadlineFrom(now);
  const retain = new Date(deadline.getTime() + config.resultRetentionMs);
  const won = await db().$transaction(async (tx) => {
    if (approval) {
      // Eligibility at the claim's own time: a delegation that has ended by now no longer counts.
      const at = await claimTime(tx, now);
      const offer = { approverGroup: approval.approverGroup, fallbackGroup: approval.escalatedTo, escalatedAt: approval.escalatedTo ? at : null, requesterUserId: approval.requesterUserId };
      const eligible = await lockEligibleApprovers(tx, approval.approverIds, offer, at);
      if (eligible.length < approval.approvalsRequired) return null;
    }
    const n = await tx.$executeRaw`
      UPDATE "Task" t SET
        phase = 'claimed',
        "claimedAt" = ${now},
        "claimedBy" = ${token},
        "executionDeadline" = ${deadline},
        "retainUntil" = GREATEST(COALESCE(t."retainUntil", ${retain}), ${retain}),
        "lastUpdatedAt" = ${now}
      WHERE t.id = ${taskId}
        AND t.status = 'working'
        AND t.phase IN ('awaiting_approval', 'retry_wait')
        AND t.generation = ${generation}
        AND t."approvalExpiresAt" IS NOT NULL AND t."approvalExpiresAt" > ${claimInstant(now)}
        AND EXISTS (
          SELECT 1 FROM "Agent" a JOIN "User" u ON u.id = a."userId"
          WHERE a.id = t."agentId" AND a."revokedAt" IS NULL AND u.active
        )`;
    if (n !== 1) return null;
    // From here on the tool may run: the call counts as executed in policy history, whatever its outcome.
    await settleRecord({ taskId }, "executed", now, tx);
    await appendAudit(tx, { type: "execution.claimed", actor: "system", taskId, data: { generation, executionDeadline: deadline.toISOString(), instance: BOOT }, at: now });
    return token;
  });
  if (!won) countClaimLost();
  return won;
}
