/**
 * Per-caller limits against approval fatigue (SEP "Approval-request amplification"): a bound on open approval
 * tasks per agent and a submission rate limit. Checked inside the transaction that records the submission
 * intent, under a per-agent advisory lock, so concurrent calls cannot slip past the bound together.
 */
import type { Tx } from "../audit/append";
import { config } from "../config";

export class CallerLimitReached extends Error {}

export async function enforceCallerLimits(tx: Tx, agentId: string, now: Date): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(7240002, hashtext(${agentId}))`;
  const [openTasks, openIntents, recent] = await Promise.all([
    tx.task.count({ where: { agentId, status: { in: ["working", "input_required"] } } }),
    tx.submissionIntent.count({ where: { agentId, state: "open" } }),
    tx.submissionIntent.count({ where: { agentId, createdAt: { gt: new Date(now.getTime() - 60_000) } } }),
  ]);
  if (openTasks + openIntents >= config.maxPendingPerAgent) {
    throw new CallerLimitReached(
      `This agent already has ${openTasks + openIntents} approval requests pending (the limit is ${config.maxPendingPerAgent}). ` +
        "Nothing was submitted and the tool did not run. Wait for pending requests to be decided before asking for more; do not retry in a loop.",
    );
  }
  if (recent >= config.submissionsPerMinute) {
    throw new CallerLimitReached(
      `This agent submitted ${recent} approval requests in the last minute (the limit is ${config.submissionsPerMinute}). ` +
        "Nothing was submitted and the tool did not run. Do not retry in a loop; try again in a minute if the request is still needed.",
    );
  }
}
