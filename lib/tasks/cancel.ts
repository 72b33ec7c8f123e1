/**
 * tasks/cancel: the same kind of atomic transition as the execution claim, from a pre-claim phase to cancelled.
 * If the claim already won, the cancel is a no-op and the task completes with its execution disposition; a
 * terminal task is refused. A winning cancel also cancels the backend request; the local fence is what guarantees
 * the tool does not run.
 */
import { db } from "../db/client";
import { approvalBackend } from "../approvals/inbox-backend";
import { terminalize } from "../execution/terminalize";
import { PRE_CLAIM_PHASES, isTerminal, toView } from "./view";
import type { Principal, TaskView } from "./types";

export type CancelResult = { ok: true; task: TaskView } | { ok: false; reason: "not-found" | "terminal" };

export async function cancelTask(principal: Principal, taskId: string, now: Date): Promise<CancelResult> {
  const t = await db().task.findFirst({ where: { id: taskId, agentId: principal.agentId } });
  if (!t) return { ok: false, reason: "not-found" };
  if (isTerminal(t)) return { ok: false, reason: "terminal" };
  const won = await terminalize({
    taskId,
    fromPhases: PRE_CLAIM_PHASES,
    to: { status: "cancelled" },
    audit: { type: "task.cancelled", actor: `agent:${principal.agentId}` },
    now,
  });
  if (won && t.handle) await approvalBackend().cancel?.(t.handle, now);
  const after = await db().task.findUniqueOrThrow({ where: { id: taskId } });
  if (!won && isTerminal(after) && after.status !== "completed") return { ok: false, reason: "terminal" };
  return { ok: true, task: toView(after) };
}
