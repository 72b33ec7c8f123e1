/**
 * Per-caller limits against approval fatigue (SEP "Approval-request amplification"): a bound on open approval
 * tasks per agent and a submission rate limit. Checked inside the transaction that records the submission
 * intent, under a per-agent advisory lock, so concurrent calls cannot slip past the bound together.
 *
 * The agent's load is read in one statement after the lock (a statement begun before the lock was granted would
 * count from an older snapshot), from indexes bounded by the limits themselves: the open tasks and intents of one
 * agent (Task, SubmissionIntent by agent and state) and its submissions of the last minute (SubmissionIntent by
 * agent and creation time). So the check costs the same on an empty database and on one with years of tasks.
 */
import type { Tx } from "../audit/append";
import { config } from "../config";

export class CallerLimitReached extends Error {}

/** What the submission found under the agent's lock: an identical call's open task, and the agent's load. */
export type CallerLoad = { joins: string | null; openTasks: number; openIntents: number; recent: number };

/** Takes the agent's submission lock (until the transaction ends) and reads its load and the dedup slot. */
export async function lockCallerLoad(tx: Tx, agentId: string, dedupKey: string, now: Date): Promise<CallerLoad> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(7240002, hashtext(${agentId}))`;
  const since = new Date(now.getTime() - 60_000);
  const [row] = await tx.$queryRaw<CallerLoad[]>`
    SELECT (SELECT "taskId" FROM "DedupSlot" WHERE "dedupKey" = ${dedupKey}) AS joins,
      (SELECT count(*)::int FROM "Task" WHERE "agentId" = ${agentId} AND status IN ('working', 'input_required')) AS "openTasks",
      (SELECT count(*)::int FROM "SubmissionIntent" WHERE "agentId" = ${agentId} AND state = 'open') AS "openIntents",
      (SELECT count(*)::int FROM "SubmissionIntent" WHERE "agentId" = ${agentId} AND "createdAt" > ${since}) AS recent`;
  return row;
}

export function enforceCallerLimits(load: CallerLoad): void {
  const { openTasks, openIntents, recent } = load;
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
