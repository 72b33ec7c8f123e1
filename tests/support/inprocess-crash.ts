/**
 * An in-process stand-in for lib/faults.ts, for tests that mock that module: inside `crashingAt(point, fn)` the
 * fault point throws instead of SIGKILLing the process, so that one call stops dead at that point (nothing after
 * it runs: no result stored, no cleanup) while concurrent calls elsewhere in the process are unaffected. The
 * claim's transaction has committed by then, exactly as in a real crash. tests/crash.test.ts uses real SIGKILL.
 *
 *   vi.mock("../lib/faults", () => import("./support/inprocess-crash"));
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { FaultPoint } from "../../lib/faults";

export class SimulatedCrash extends Error {
  constructor(readonly point: FaultPoint) {
    super(`simulated crash at ${point}`);
  }
}

const armed = new AsyncLocalStorage<FaultPoint>();

export function faultPoint(point: FaultPoint): void {
  if (armed.getStore() === point) throw new SimulatedCrash(point);
}

/** Runs `fn` with `point` armed; "crashed" when it died there, else its value. */
export async function crashingAt<T>(point: FaultPoint, fn: () => Promise<T>): Promise<T | "crashed"> {
  try {
    return await armed.run(point, fn);
  } catch (e) {
    if (e instanceof SimulatedCrash) return "crashed";
    throw e;
  }
}
