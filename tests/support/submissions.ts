/** Holding a call's submission in progress, for the tests of what an identical call meanwhile is told. */
import { expect, onTestFinished, vi } from "vitest";
import type { ApprovalBackend } from "../../lib/approvals/backend";
import { bindApprovalBackend, inboxBackend } from "../../lib/approvals/inbox-backend";
import { db } from "../../lib/db/client";
import { advanceTask } from "../../lib/execution/advance";
import { LEADS, SEC, approveOnly, at, gatedRefund } from "./proof";

/**
 * Holds every submission to the approval backend until released: a first call stays in progress. The inbox is
 * bound as a backend apart from Countersign's database would be (no submitWithin), since only there is a
 * submission a step of its own; with the built-in backend, creation is one transaction and an identical call
 * waits for it and joins its task. The binding ends when the test's mocks are restored.
 */
export function holdSubmissions(): () => void {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const real = inboxBackend.submit.bind(inboxBackend);
  vi.spyOn(bindBackendApart(), "submit").mockImplementation(async (key, body, now) => {
    await gate;
    return real(key, body, now);
  });
  return release;
}

/**
 * Binds the built-in inbox as a backend apart from Countersign's database (no submitWithin) for the rest of the
 * test, so creation records the intent, submits, then binds the task; returns it, to spy on its submit.
 */
export function bindBackendApart(): ApprovalBackend {
  const apart: ApprovalBackend = { ...inboxBackend, submitWithin: undefined };
  bindApprovalBackend(apart);
  onTestFinished(() => bindApprovalBackend(null));
  return apart;
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

/**
 * Binds the inbox as a backend apart (see bindBackendApart) whose next submission reaches it and is recorded
 * there, but whose answer is lost: the creator sees a failure after the request exists.
 */
export function loseAnswerAfterSubmit(): void {
  loseNextAnswer(bindBackendApart());
}

/** `backend`'s next submission reaches the inbox and is recorded there, but its answer is lost. */
export function loseNextAnswer(backend: ApprovalBackend): void {
  const real = inboxBackend.submit.bind(inboxBackend);
  vi.spyOn(backend, "submit").mockImplementationOnce(async (key, body, now) => {
    await real(key, body, now);
    throw new Error("connection lost after submitting");
  });
}

/** A refund approved by one lead, after which policy wants two: its next advance opens a chained request. */
async function approvedOnceThenTwoWanted(orderId: string): Promise<string> {
  const taskId = await gatedRefund(orderId);
  await approveOnly(taskId, LEADS[0], at(SEC));
  await db().policyRule.updateMany({ where: { ruleKey: "refund-over-limit" }, data: { approvalsRequired: 2 } });
  return taskId;
}

/**
 * A refund approved by one lead, after which policy wants two: re-evaluation opens a chained request (generation
 * 2) and the backend is unreachable when it is submitted. The task waits in phase "submitting" with an open
 * intent for generation 2 and no handle; returns that intent.
 */
export async function interruptedChainedSubmission(orderId: string): Promise<{ taskId: string; intent: { id: string; idempotencyKey: string } }> {
  const taskId = await approvedOnceThenTwoWanted(orderId);
  const submit = vi.spyOn(inboxBackend, "submit").mockRejectedValueOnce(new Error("backend unreachable"));
  await expect(advanceTask(taskId, at(2 * SEC))).rejects.toThrow("backend unreachable");
  submit.mockRestore();
  const intent = await db().submissionIntent.findUniqueOrThrow({ where: { taskId_generation: { taskId, generation: 2 } } });
  expect(intent.state).toBe("open");
  return { taskId, intent };
}

/**
 * As interruptedChainedSubmission, but the chained request reaches the backend (`backend`, the inbox by default)
 * and only its answer is lost: the intent for generation 2 stays open and the request waits in the inbox.
 */
export async function chainedSubmissionAnswerLost(orderId: string, backend: ApprovalBackend = inboxBackend): Promise<{ taskId: string; intent: { id: string; idempotencyKey: string } }> {
  const taskId = await approvedOnceThenTwoWanted(orderId);
  loseNextAnswer(backend);
  await expect(advanceTask(taskId, at(2 * SEC))).rejects.toThrow("connection lost");
  const intent = await db().submissionIntent.findUniqueOrThrow({ where: { taskId_generation: { taskId, generation: 2 } } });
  expect(intent.state).toBe("open");
  return { taskId, intent };
}
