/**
 * In-task input (SEP "Collecting submission input", during the workflow): a reviewer who needs more information
 * asks the requester a question. The task moves working -> input_required with the question outstanding; the
 * agent answers with tasks/update (update.ts) and the task returns to working. The tool has not run meanwhile.
 */
import { db, Prisma } from "../db/client";
import { appendAudit } from "../audit/append";
import { isEligibleReviewer } from "../approvals/eligibility";
import { sanitizeForModel } from "../sanitize";
import type { InputQuestion } from "./types";

export type AskInput = { requestId: string; reviewerId: string; question: string };
export type AskResult = { ok: true; taskId: string; key: string } | { ok: false; error: string };

export function clarificationQuestion(question: string): InputQuestion {
  return {
    message: `A reviewer needs more information before deciding: ${sanitizeForModel(question, 300)}`,
    requestedSchema: {
      type: "object",
      properties: { answer: { type: "string", title: "Answer", maxLength: 1000 } },
      required: ["answer"],
    },
  };
}

export async function askRequester(input: AskInput, now: Date): Promise<AskResult> {
  const question = input.question.trim();
  if (question.length < 5 || question.length > 500) return { ok: false, error: "A question needs 5 to 500 characters." };
  const [req, reviewer] = await Promise.all([
    db().approvalRequest.findUnique({ where: { id: input.requestId } }),
    db().user.findUnique({ where: { id: input.reviewerId } }),
  ]);
  if (!req || !reviewer) return { ok: false, error: "No such request." };
  if (!isEligibleReviewer(reviewer, req.approverGroup, req.requesterUserId)) {
    return { ok: false, error: `Only active ${req.approverGroup} reviewers other than the requester can ask about this request.` };
  }
  if (req.status !== "pending") return { ok: false, error: `This request is already ${req.status}.` };
  const key = `clarification_${Date.now().toString(36)}`;
  const requests = { [key]: clarificationQuestion(question) };
  return db().$transaction(async (tx): Promise<AskResult> => {
    const n = await tx.task.updateMany({
      where: { id: req.taskId, handle: req.id, status: "working", phase: "awaiting_approval" },
      data: { status: "input_required", inputRequests: requests as unknown as Prisma.InputJsonValue, lastUpdatedAt: now },
    });
    if (n.count !== 1) return { ok: false, error: "The task is not waiting for approval right now (it may already have a question outstanding)." };
    await tx.clarification.create({ data: { taskId: req.taskId, requestId: req.id, key, question, askedBy: reviewer.id, askedAt: now } });
    await appendAudit(tx, { type: "task.input-requested", actor: `user:${reviewer.id}`, taskId: req.taskId, requestId: req.id, data: { key, question }, at: now });
    return { ok: true, taskId: req.taskId, key };
  });
}
