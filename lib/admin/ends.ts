/**
 * What a destructive admin action ends, counted before the admin confirms it: revoking an agent or deactivating a
 * user withdraws the tasks that can no longer run (lib/execution/withdraw.ts), so the confirmation says how many.
 */
import { db } from "../db/client";
import { withdrawableTasks } from "../execution/withdraw";

/** How many pending requests revoking this agent would end. */
export async function pendingEndedByRevoking(agentId: string): Promise<number> {
  return db().task.count({ where: withdrawableTasks([agentId]) });
}

/**
 * How many pending requests deactivating this user would end (those of every agent acting for them), or null when
 * the user is not active now (saving them inactive again ends nothing new, so there is nothing to confirm).
 */
export async function pendingEndedByDeactivating(userId: string): Promise<number | null> {
  const user = await db().user.findUnique({ where: { id: userId }, select: { active: true, agents: { select: { id: true } } } });
  if (!user?.active) return null;
  return user.agents.length ? db().task.count({ where: withdrawableTasks(user.agents.map((a) => a.id)) }) : 0;
}

/** The sentence a confirmation shows: "This ends 4 pending requests." */
export function endsSentence(n: number): string {
  return n === 0 ? "This ends no pending request." : `This ends ${n} pending request${n === 1 ? "" : "s"}.`;
}
