/** One scrape of /metrics: the kept (or freshly read) state snapshot, then the exposition text. */
import { logFailure } from "../log";
import { renderMetrics } from "../metrics";
import { stateSnapshot } from "./state";

export async function scrapeMetrics(nowMs = Date.now()): Promise<string> {
  const state = await stateSnapshot(nowMs).catch((e) => {
    logFailure("metrics state read", e);
    return null;
  });
  return renderMetrics(state);
}
