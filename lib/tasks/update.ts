/**
 * tasks/update: the agent answers the task's outstanding questions. Authorized against the task's creator (it
 * carries no tool or arguments); the answers must cover exactly the outstanding keys. The task returns to
 * working and the reviewers see the answer.
 */
import { db, Prisma } from "../db/client";
import { appendAudit } from "../audit/append";
import { toView } from "./view";
import type { Principal, TaskView } from "./types";

export type UpdateResult =
  | { ok: true; task: TaskView }
  | { ok: false; reason: "not-found" | "not-input-required" | "invalid-input"; message: string };

/** One elicitation answer as it arrives in inputResponses. */
type Answer = { action?: unknown; content?: unknown };

export async function updateTask(principal: Principal, taskId: string, inputResponses: Record<string, unknown>, now: Date): Promise<UpdateResult> {
  const t = await db().task.findFirst({ where: { id: taskId, agentId: principal.agentId } });
  if (!t) return { ok: false, reason: "not-found", message: "Unknown taskId" };
  if (t.status !== "input_required" || !t.inputRequests) {
    return { ok: false, reason: "not-input-required", message: "This task is not waiting for input." };
  }
  const outstanding = Object.keys(t.inputRequests as Record<string, unknown>);
  const given = Object.keys(inputResponses ?? {});
  const missing = outstanding.filter((k) => !given.includes(k));
  const unknown = given.filter((k) => !outstanding.includes(k));
  if (missing.length || unknown.length) {
    return {
      ok: false,
      reason: "invalid-input",
      message: `inputResponses must answer exactly the outstanding keys (${outstanding.join(", ")}).`,
    };
  }
  const answers: Record<string, { action: string; answer?: string }> = {};
  for (const key of outstanding) {
    const a = inputResponses[key] as Answer;
    const action = typeof a?.action === "string" ? a.action : "";
    if (!["accept", "decline", "cancel"].includes(action)) {
      return { ok: false, reason: "invalid-input", message: `${key}: action must be accept, decline or cancel.` };
    }
    const text = (a.content as { answer?: unknown } | undefined)?.answer;
    if (action === "accept" && (typeof text !== "string" || !text.trim() || text.length > 1000)) {
      return { ok: false, reason: "invalid-input", message: `${key}: an accepted answer needs content.answer, 1 to 1000 characters.` };
    }
    answers[key] = action === "accept" ? { action, answer: (text as string).trim() } : { action };
  }
  const done = await db().$transaction(async (tx) => {
    const n = await tx.task.updateMany({
      where: { id: taskId, status: "input_required" },
      data: { status: "working", inputRequests: Prisma.DbNull, lastUpdatedAt: now },
    });
    if (n.count !== 1) return false;
    for (const [key, a] of Object.entries(answers)) {
      await tx.clarification.updateMany({ where: { taskId, key }, data: { answer: a as Prisma.InputJsonValue, answeredAt: now } });
    }
    await appendAudit(tx, { type: "task.input-received", actor: `agent:${principal.agentId}`, taskId, requestId: t.handle, data: { keys: outstanding }, at: now });
    return true;
  });
  if (!done) return { ok: false, reason: "not-input-required", message: "This task is not waiting for input." };
  return { ok: true, task: toView(await db().task.findUniqueOrThrow({ where: { id: taskId } })) };
}
