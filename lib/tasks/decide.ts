/** A reviewer's decision in the inbox, then the task moves on at once (re-evaluation and execution on approval). */
import { db } from "../db/client";
import { reviewRequest, type ReviewInput } from "../approvals/review";
import { advanceTask } from "../execution/advance";
import { denialDetailOf } from "../execution/denial-detail";
import { isDatabaseUnavailable } from "../db/unavailable";

export type DecideResult =
  | { ok: true; requestStatus: string; taskStatus: string; disposition?: string; resultText?: string; denialDetail?: string }
  | { ok: false; error: string };

export async function decide(input: ReviewInput, now: Date): Promise<DecideResult> {
  const r = await reviewRequest(input, now);
  if (!r.ok) return r;
  try {
    await advanceTask(r.taskId, now);
    const t = await db().task.findUnique({ where: { id: r.taskId }, select: { status: true, disposition: true, result: true } });
    const text = (t?.result as { text?: unknown } | null)?.text;
    // An approval whose re-check refused the call: the real reason, as stored, for the reviewer who approved.
    const denialDetail = t?.disposition === "denied-not-executed" ? await denialDetailOf(r.taskId) : null;
    return {
      ok: true,
      requestStatus: r.requestStatus,
      taskStatus: t?.status ?? "unknown",
      disposition: t?.disposition ?? undefined,
      ...(typeof text === "string" ? { resultText: text } : {}),
      ...(denialDetail ? { denialDetail } : {}),
    };
  } catch (e) {
    // The decision is recorded; the sweeper moves the task on once the database is back.
    if (isDatabaseUnavailable(e)) return { ok: true, requestStatus: r.requestStatus, taskStatus: "working" };
    throw e;
  }
}
