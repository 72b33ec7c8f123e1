/**
 * tasks/update: the agent answers the task's outstanding questions. Authorized against the task's creator (it
 * carries no tool or arguments). Per the tasks extension (SEP-2663 "Task Update Requests"):
 *  - answers for keys that are not outstanding right now (never asked, already answered, or the task is not
 *    waiting for input at all) are ignored;
 *  - a subset of the outstanding keys may be answered: the answered keys leave inputRequests, and the task stays
 *    input_required until every outstanding question has an answer, then returns to working;
 *  - an accepted answer must fit the schema of the question it answers, or the whole update is refused and
 *    nothing is recorded.
 * The reviewers see each answer (Clarification rows). The tool has not run meanwhile.
 */
import { db, Prisma } from "../db/client";
import { appendAudit } from "../audit/append";
import { argumentsProblem } from "../tools/check-arguments";
import { checkAnswer } from "./answers";
import { toView } from "./view";
import type { InputQuestion, Principal, TaskView } from "./types";

export type UpdateResult =
  /** `applied`: the outstanding keys this update answered (empty when it matched none, which is not an error). */
  | { ok: true; task: TaskView; applied: string[] }
  | { ok: false; reason: "not-found" | "invalid-input"; message: string };

/** One elicitation answer as it arrives in inputResponses. */
type Answer = { action?: unknown; content?: unknown };
type Recorded = { action: "accept" | "decline" | "cancel"; content?: Record<string, string | number | boolean>; answer?: string };

const ATTEMPTS = 5;

export async function updateTask(principal: Principal, taskId: string, inputResponses: Record<string, unknown>, now: Date): Promise<UpdateResult> {
  const problem = argumentsProblem(inputResponses ?? {}, "inputResponses");
  if (problem) return { ok: false, reason: "invalid-input", message: `${problem}. Nothing was recorded.` };
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const t = await db().task.findFirst({ where: { id: taskId, agentId: principal.agentId } });
    if (!t) return { ok: false, reason: "not-found", message: "Unknown taskId" };
    const outstanding = (t.status === "input_required" && t.inputRequests ? t.inputRequests : {}) as Record<string, InputQuestion>;
    const keys = Object.keys(inputResponses ?? {}).filter((k) => Object.hasOwn(outstanding, k));
    if (keys.length === 0) return { ok: true, task: toView(t), applied: [] };

    const answers: Record<string, Recorded> = {};
    for (const key of keys) {
      const a = inputResponses[key] as Answer | null;
      const action = typeof a?.action === "string" ? a.action : "";
      if (action !== "accept" && action !== "decline" && action !== "cancel") {
        return { ok: false, reason: "invalid-input", message: `inputResponses.${key}: action must be accept, decline or cancel.` };
      }
      if (action !== "accept") {
        answers[key] = { action };
        continue;
      }
      const checked = checkAnswer(outstanding[key], a?.content);
      if (!checked.ok) return { ok: false, reason: "invalid-input", message: `inputResponses.${key}: ${checked.message}.` };
      answers[key] = { action, content: checked.content, ...(typeof checked.content.answer === "string" ? { answer: checked.content.answer } : {}) };
    }

    const remaining = Object.fromEntries(Object.entries(outstanding).filter(([k]) => !keys.includes(k)));
    const done = Object.keys(remaining).length === 0;
    const applied = await db().$transaction(async (tx) => {
      // Conditional on the exact outstanding set read above, so two concurrent partial answers cannot both
      // remove "their" key from a stale copy.
      const n = await tx.task.updateMany({
        where: { id: taskId, status: "input_required", inputRequests: { equals: outstanding as unknown as Prisma.InputJsonValue } },
        data: done
          ? { status: "working", inputRequests: Prisma.DbNull, lastUpdatedAt: now }
          : { inputRequests: remaining as unknown as Prisma.InputJsonValue, lastUpdatedAt: now },
      });
      if (n.count !== 1) return false;
      for (const [key, a] of Object.entries(answers)) {
        await tx.clarification.updateMany({ where: { taskId, key }, data: { answer: a as Prisma.InputJsonValue, answeredAt: now } });
      }
      await appendAudit(tx, {
        type: "task.input-received",
        actor: `agent:${principal.agentId}`,
        taskId,
        requestId: t.handle,
        data: { keys, remaining: Object.keys(remaining) },
        at: now,
      });
      return true;
    });
    if (applied) return { ok: true, task: toView(await db().task.findUniqueOrThrow({ where: { id: taskId } })), applied: keys };
    // Someone else changed the outstanding set (another answer, a cancel): read again and re-apply.
  }
  return { ok: false, reason: "invalid-input", message: "The task changed while the answers were being recorded; send them again." };
}
