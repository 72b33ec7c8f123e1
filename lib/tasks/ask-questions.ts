/**
 * In-task input with questions of the resolver's own shape: like askRequester (ask.ts), but the caller names each
 * question's key and form schema, and may ask several at once (SEP-2663 lets a task wait on several inputs; the
 * agent may answer them one at a time). Used by automatic resolvers, for example the conformance-mode resolver in
 * lib/mcp/conformance. The question text reaches the model, so it is sanitized here like a reviewer's question.
 */
import { db, Prisma } from "../db/client";
import { appendAudit } from "../audit/append";
import { isEligibleReviewer, offeredGroupsWords } from "../approvals/eligibility";
import { sanitizeForModel } from "../sanitize";
import type { InputQuestion } from "./types";

/** `asked`: the words as the asker wrote them, kept for reviewers (the message may wrap them). */
export type AskQuestionsInput = { requestId: string; reviewerId: string; questions: Record<string, InputQuestion & { asked?: string }> };
export type AskQuestionsResult = { ok: true; taskId: string; keys: string[] } | { ok: false; error: string };

const KEY = /^[A-Za-z0-9_.-]{1,64}$/;

export async function askQuestions(input: AskQuestionsInput, now: Date): Promise<AskQuestionsResult> {
  const keys = Object.keys(input.questions);
  if (keys.length === 0 || keys.length > 10 || !keys.every((k) => KEY.test(k))) return { ok: false, error: "Ask 1 to 10 questions with simple keys." };
  const [req, reviewer] = await Promise.all([
    db().approvalRequest.findUnique({ where: { id: input.requestId } }),
    db().user.findUnique({ where: { id: input.reviewerId } }),
  ]);
  if (!req || !reviewer) return { ok: false, error: "No such request." };
  if (!(await isEligibleReviewer(reviewer.id, req, now))) {
    return { ok: false, error: `Only active ${offeredGroupsWords(req)} reviewers other than the requester can ask about this request.` };
  }
  if (req.status !== "pending") return { ok: false, error: `This request is already ${req.status}.` };
  const requests: Record<string, InputQuestion> = Object.fromEntries(
    keys.map((k) => [k, { message: sanitizeForModel(input.questions[k].message, 300), requestedSchema: input.questions[k].requestedSchema }]),
  );
  try {
    return await db().$transaction(async (tx): Promise<AskQuestionsResult> => {
      const n = await tx.task.updateMany({
        where: { id: req.taskId, handle: req.id, status: "working", phase: "awaiting_approval" },
        data: { status: "input_required", inputRequests: requests as unknown as Prisma.InputJsonValue, lastUpdatedAt: now },
      });
      if (n.count !== 1) throw new NotWaiting();
      for (const k of keys) {
        await tx.clarification.create({ data: { taskId: req.taskId, requestId: req.id, key: k, question: input.questions[k].asked ?? requests[k].message, askedBy: reviewer.id, askedAt: now } });
      }
      await appendAudit(tx, { type: "task.input-requested", actor: `user:${reviewer.id}`, taskId: req.taskId, requestId: req.id, data: { keys }, at: now });
      return { ok: true, taskId: req.taskId, keys };
    });
  } catch (e) {
    if (e instanceof NotWaiting) return { ok: false, error: "The task is not waiting for approval right now (it may already have a question outstanding)." };
    // A key asked before on this task: keys are unique over a task's lifetime (SEP-2663).
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002") return { ok: false, error: "A question with this key was already asked on this task." };
    throw e;
  }
}

class NotWaiting extends Error {}
