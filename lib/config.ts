/** Server-configured durations. Environment variables override the defaults (milliseconds). */
function ms(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

export const config = {
  /** How often a client should poll tasks/get. */
  get pollIntervalMs() {
    return ms("COUNTERSIGN_POLL_INTERVAL_MS", 2_000);
  },
  /** How long a terminal result stays retrievable (resultRetention). */
  get resultRetentionMs() {
    return ms("COUNTERSIGN_RESULT_RETENTION_MS", 7 * 24 * 3600_000);
  },
  /** After a claim, how long execution may take before the task is completed outcome-unknown. */
  get executionDeadlineMs() {
    return ms("COUNTERSIGN_EXECUTION_DEADLINE_MS", 60_000);
  },
  /** Upper bound on a pending window the server accepts from a rule (request deadline or approval validity). */
  get maxPendingWindowMs() {
    return ms("COUNTERSIGN_MAX_PENDING_WINDOW_MS", 14 * 24 * 3600_000);
  },
  /** How many approval requests (generations) one task may chain before it ends as a denial. */
  maxGenerations: 3,
  /** Per-caller limits against approval fatigue: open approval tasks per agent. */
  get maxPendingPerAgent() {
    return ms("COUNTERSIGN_MAX_PENDING_PER_AGENT", 20);
  },
  /** Per-caller limits: new approval submissions per agent per minute. */
  get submissionsPerMinute() {
    return ms("COUNTERSIGN_SUBMISSIONS_PER_MINUTE", 10);
  },
  /** How long an MRTR requestState stays valid (seconds). */
  get requestStateTtlSec() {
    return ms("COUNTERSIGN_REQUEST_STATE_TTL_SEC", 600);
  },
};
