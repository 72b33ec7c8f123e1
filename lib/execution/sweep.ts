/**
 * The sweeper: advances tasks whose clocks ran out or whose approval was decided, completes claimed tasks whose
 * execution deadline passed as outcome-unknown, reconciles stale submission intents, delivers due webhooks, writes due reminders and delivers notifications, and
 * purges expired tasks and policy-history records in bounded batches, and rediscovers the tools of a few upstream
 * servers whose period came (lib/gateway/rediscover.ts), so a tool changed upstream is held without an admin, and
 * refreshes the planner statistics of one hot table that changed enough (lib/db/statistics.ts). Safe to run in several processes at once:
 * every transition it makes is a conditional update.
 */
import { db } from "../db/client";
import { purgeCallRecords } from "../policy/history";
import { purgeEndedSessions } from "../auth/sessions";
import { pruneRequestStates } from "../tasks/request-state";
import { reconcileIntents } from "../tasks/reconcile";
import { purgeExpiredTasks } from "../tasks/retention";
import { deliverDue } from "../webhooks/deliver";
import { deliverNotifications, type NotifyReport } from "../notify/deliver";
import { enqueueDueReminders } from "../notify/reminders";
import { escalateDue } from "../approvals/escalate";
import { rediscoverDue, type RediscoveryReport } from "../gateway/rediscover";
import { refreshStatistics } from "../db/statistics";
import { sweepFailed, sweepSucceeded } from "../metrics";
import { advanceTask } from "./advance";

export type SweepReport = {
  advanced: number;
  recovered: number;
  closed: number;
  purged: number;
  /** Policy-history records past their retention, deleted this sweep (bounded). */
  historyPurged: number;
  webhooks: { delivered: number; retried: number; failed: number };
  /** Pending requests this sweep offered to their fallback group (lib/approvals/escalate.ts). */
  escalated: number;
  /** Reminders written to the notification outbox this sweep, and what the outbox delivered. */
  reminders: number;
  notifications: NotifyReport;
  /** Upstream servers whose tools were listed again this sweep (bounded), and what changed. */
  rediscovery: RediscoveryReport;
  /** The hot table whose planner statistics this sweep refreshed, if one had changed enough (lib/db/statistics.ts). */
  analyzed: string | null;
};

type SweepOptions = { batch?: number; intentMinAgeMs?: number; rediscoverEveryMs?: number; analyzeEveryMs?: number };

/** One pass; its duration and success are recorded in the metrics (by the process clock, not `now`). */
export async function sweep(now: Date, opts: SweepOptions = {}): Promise<SweepReport> {
  const started = performance.now();
  try {
    const report = await sweepPass(now, opts);
    sweepSucceeded((performance.now() - started) / 1000);
    return report;
  } catch (e) {
    sweepFailed();
    throw e;
  }
}

async function sweepPass(now: Date, opts: SweepOptions): Promise<SweepReport> {
  const batch = opts.batch ?? 200;
  // A task waiting for the requester's answer (input_required) keeps its clocks: past the request deadline or
  // the approval's validity, or once its request is decided, it is advanced like a working one.
  const open = { in: ["working", "input_required"] };
  const due = await db().task.findMany({
    where: {
      OR: [
        { status: "working", phase: "claimed", executionDeadline: { lte: now } },
        { status: open, phase: { in: ["awaiting_approval", "retry_wait"] }, requestDeadline: { lte: now }, approvalExpiresAt: null },
        { status: open, phase: { in: ["awaiting_approval", "retry_wait"] }, approvalExpiresAt: { lte: now } },
        { status: "working", phase: "retry_wait", nextAttemptAt: { lte: now } },
        { status: open, phase: "awaiting_approval", handle: { in: await decidedHandles(batch) } },
      ],
    },
    select: { id: true },
    take: batch,
  });
  for (const t of due) await advanceTask(t.id, now);
  const r = await reconcileIntents(now, opts.intentMinAgeMs);
  const webhooks = await deliverDue(now);
  const escalated = await escalateDue(now, batch);
  const reminders = await enqueueDueReminders(now);
  const notifications = await deliverNotifications(now);
  await pruneRequestStates(now);
  const purged = await purgeExpiredTasks(now);
  const historyPurged = await purgeCallRecords(now);
  // Signed-out browser sessions past their absolute limit (a bounded batch).
  await purgeEndedSessions(now);
  const rediscovery = await rediscoverDue(now, { everyMs: opts.rediscoverEveryMs });
  const analyzed = await refreshStatistics(db(), now, opts.analyzeEveryMs);
  return { advanced: due.length, ...r, purged, historyPurged, webhooks, escalated, reminders, notifications, rediscovery, analyzed };
}

/**
 * Handles whose request the built-in backend has decided but whose task has not moved yet. A task waiting for its
 * requester's answer moves on a decided request once: a denial ends it, an approval records its validity (after
 * which the approval-expiry clause above finds it).
 */
async function decidedHandles(limit: number): Promise<string[]> {
  const rows = await db().$queryRaw<{ id: string }[]>`
    SELECT r.id FROM "ApprovalRequest" r JOIN "Task" t ON t.handle = r.id
    WHERE r.status <> 'pending' AND t.phase = 'awaiting_approval'
      AND (t.status = 'working' OR (t.status = 'input_required' AND t."approvalExpiresAt" IS NULL))
    LIMIT ${limit}`;
  return rows.map((r) => r.id);
}
