/**
 * Crash-injection points for the crash tests. When COUNTERSIGN_FAULT names a point, the process kills itself
 * there with SIGKILL (no cleanup, exactly like a power cut). Unset in normal operation: a no-op.
 */
export type FaultPoint = "after-intent" | "after-submit" | "in-creation-transaction" | "after-claim" | "after-notification-sent";

export function faultPoint(point: FaultPoint): void {
  if (process.env.COUNTERSIGN_FAULT === point) process.kill(process.pid, "SIGKILL");
}
