/**
 * When a principal stops being valid (agent revoked, user deactivated), its tasks that have not been claimed can
 * never execute: re-evaluation and the claim both require a valid principal. Rather than leave them in the
 * reviewers' inbox until someone decides them, they are completed at once as denials and their backend requests
 * withdrawn. A task already claimed carries on (authorization was enforced at the claim).
 */
import { db } from "../db/client";
import { approvalBackend } from "../approvals/inbox-backend";
import { PRE_CLAIM_PHASES } from "../tasks/view";
import { deniedNotExecuted } from "./outcomes";
import { terminalize } from "./terminalize";

/** The tasks of these agents that withdrawing would end: not yet claimed, still open. */
export function withdrawableTasks(agentIds: string[]) {
  return { agentId: { in: agentIds }, status: { in: ["working", "input_required"] }, phase: { in: PRE_CLAIM_PHASES } };
}

export async function withdrawTasksOf(agentIds: string[], now: Date): Promise<number> {
  if (agentIds.length === 0) return 0;
  const open = await db().task.findMany({ where: withdrawableTasks(agentIds), select: { id: true, handle: true } });
  let withdrawn = 0;
  for (const t of open) {
    const won = await terminalize({
      taskId: t.id,
      fromPhases: PRE_CLAIM_PHASES,
      to: { status: "completed", outcome: deniedNotExecuted("principal") },
      audit: { type: "task.denied", actor: "system", data: { cause: "principal" } },
      now,
    });
    if (!won) continue;
    withdrawn++;
    if (t.handle) await approvalBackend().cancel?.(t.handle, now);
  }
  return withdrawn;
}
