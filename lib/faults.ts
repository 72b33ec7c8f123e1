/**
 * Fault-injection points for the crash tests. Unset in normal operation: a no-op.
 *
 *   COUNTERSIGN_FAULT=<point>       the process kills itself there with SIGKILL (no cleanup, exactly like a power
 *                                   cut);
 *   COUNTERSIGN_FAULT=hang-<point>  the call stops there for good (its promise never settles) while the process
 *                                   goes on serving everything else: a process that is alive and holds what the
 *                                   call had taken (an execution claim, say) until something kills it. A test waits
 *                                   for that state in the database, then sends SIGKILL: no timing guess.
 */
export type FaultPoint = "after-intent" | "after-submit" | "in-creation-transaction" | "after-claim" | "after-notification-sent";

export function faultPoint(point: FaultPoint): Promise<void> | void {
  const fault = process.env.COUNTERSIGN_FAULT;
  if (fault === point) process.kill(process.pid, "SIGKILL");
  if (fault === `hang-${point}`) return new Promise<void>(() => {});
}
