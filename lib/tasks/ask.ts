/**
 * In-task input (SEP "Collecting submission input", during the workflow): a reviewer who needs more information
 * asks the requester a question. The task moves working -> input_required with the question outstanding; the
 * agent answers with tasks/update (update.ts) and the task returns to working. The tool has not run meanwhile.
 * A reviewer's free-text question is one case of askQuestions (ask-questions.ts), which holds the rule.
 */
import { argumentsProblem } from "../tools/check-arguments";
import { askQuestions } from "./ask-questions";
import type { InputQuestion } from "./types";

export type AskInput = { requestId: string; reviewerId: string; question: string };
export type AskResult = { ok: true; taskId: string; key: string } | { ok: false; error: string };

export function clarificationQuestion(question: string): InputQuestion {
  return {
    message: `A reviewer needs more information before deciding: ${question}`,
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
  const problem = argumentsProblem(question, "question");
  if (problem) return { ok: false, error: `The question cannot be sent: ${problem}.` };
  const key = `clarification_${now.getTime().toString(36)}`;
  const r = await askQuestions({ requestId: input.requestId, reviewerId: input.reviewerId, questions: { [key]: { ...clarificationQuestion(question), asked: question } } }, now);
  return r.ok ? { ok: true, taskId: r.taskId, key } : r;
}
