/** A reviewer's decision in the inbox, then the task moves on at once (re-evaluation and execution on approval). */
import { db } from "../db/client";
import { reviewRequest, type ReviewInput } from "../approvals/review";
import { advanceTask } from "../execution/advance";
import { isDatabaseUnavailable } from "../db/unavailable";

export type DecideResult =
  | { ok: true; requestStatus: string; taskStatus: string; disposition?: string }
  | { ok: false; error: string };

export async function decide(input: ReviewInput, now: Date): Promise<DecideResult> {
  const r = await reviewRequest(input, now);
  if (!r.ok) return r;
  try {
    await advanceTask(r.taskId, now);
    const t = await db().task.findUnique({ where: { id: r.taskId }, select: { status: true, disposition: true } });
    return { ok: true, requestStatus: r.requestStatus, taskStatus: t?.status ?? "unknown", disposition: t?.disposition ?? undefined };
  } catch (e) {
    // The decision is recorded; the sweeper moves the task on once the database is back.
    if (isDatabaseUnavailable(e)) return { ok: true, requestStatus: r.requestStatus, taskStatus: "working" };
    throw e;
  }
}
