/** Holding a call's submission in progress, for the tests of what an identical call meanwhile is told. */
import { expect, vi } from "vitest";
import { inboxBackend } from "../../lib/approvals/inbox-backend";
import { db } from "../../lib/db/client";

/** Holds every submission to the approval backend until released: a first call stays in progress. */
export function holdSubmissions(): () => void {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const real = inboxBackend.submit.bind(inboxBackend);
  vi.spyOn(inboxBackend, "submit").mockImplementation(async (key, body, now) => {
    await gate;
    return real(key, body, now);
  });
  return release;
}

/** Waits (bounded) until a submission for this call is in progress: its dedup slot exists, its task does not. */
export async function untilSubmissionInProgress(): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const slot = await db().dedupSlot.findFirst();
    if (slot) {
      expect(await db().task.findUnique({ where: { id: slot.taskId } })).toBeNull();
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the first call's submission never started");
}
