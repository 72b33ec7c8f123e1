/**
 * Reminders before a request's deadline: at each configured fraction of its pending window (COUNTERSIGN_REMINDERS,
 * default 50% and 90%), a pending request's reviewers who have not reviewed it yet are reminded once. Only the
 * latest fraction that has passed is sent (a sweeper that was down past 50% and 90% sends the 90% one only). Run by
 * the sweeper with the time passed in; the outbox's uniqueness makes a repeat, or two sweepers, harmless.
 */
import { db } from "../db/client";
import { enabledChannels } from "./channels";
import { enqueueNotifications } from "./outbox";
import { logFailure } from "../log";
import { reminderFractions, reminderKind } from "./settings";

/** The reminder kind due for a request at `now`, if any: the latest fraction of its window that has passed. */
export function dueReminder(createdAt: Date, deadline: Date, now: Date, fractions: number[]): `reminder-${string}` | null {
  const span = deadline.getTime() - createdAt.getTime();
  if (span <= 0 || now.getTime() >= deadline.getTime()) return null;
  let due: number | null = null;
  for (const f of fractions) if (createdAt.getTime() + span * f <= now.getTime()) due = f;
  return due === null ? null : reminderKind(due);
}

export async function enqueueDueReminders(now: Date, opts: { batch?: number; fractions?: number[] } = {}): Promise<number> {
  let fractions: number[];
  try {
    fractions = opts.fractions ?? reminderFractions();
  } catch (e) {
    // A wrong COUNTERSIGN_REMINDERS (start-up refuses it) skips reminders; deliveries and the rest of the sweep go on.
    logFailure("reading COUNTERSIGN_REMINDERS", e);
    return 0;
  }
  const channels = enabledChannels();
  if (fractions.length === 0 || channels.length === 0) return 0;
  const batch = opts.batch ?? 200;
  let written = 0;
  for (const [i, f] of fractions.entries()) {
    const next = fractions[i + 1];
    const kind = reminderKind(f);
    // Pending requests past this fraction of their window and not yet past the next one, not yet reminded at it.
    const rows = await db().$queryRaw<{ id: string; createdAt: Date; deadline: Date }[]>`
      SELECT r.id, r."createdAt", r.deadline FROM "ApprovalRequest" r
      WHERE r.status = 'pending' AND r.deadline > ${now}
        AND r."createdAt" + (r.deadline - r."createdAt") * ${f}::float8 <= ${now}
        AND (${next ?? null}::float8 IS NULL OR r."createdAt" + (r.deadline - r."createdAt") * ${next ?? null}::float8 > ${now})
        AND NOT EXISTS (SELECT 1 FROM "Notification" n WHERE n."requestId" = r.id AND n.kind = ${kind})
      ORDER BY r.deadline
      LIMIT ${batch}`;
    for (const r of rows) {
      // The query above is this rule's prefilter; the rule itself decides.
      if (dueReminder(new Date(r.createdAt), new Date(r.deadline), now, fractions) !== kind) continue;
      written += await db().$transaction((tx) => enqueueNotifications(tx, r.id, kind, now, channels));
    }
  }
  return written;
}
