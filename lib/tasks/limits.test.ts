/**
 * enforceCallerLimits: the bound on an agent's open approval requests (tasks and intents together) and its
 * submissions per minute, each held exactly at its edge, with words that say which limit and that nothing ran.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { CallerLimitReached, enforceCallerLimits } from "./limits";

const load = (openTasks: number, openIntents: number, recent: number) => ({ joins: null, openTasks, openIntents, recent });
const refusal = (l: ReturnType<typeof load>) => {
  try {
    enforceCallerLimits(l);
  } catch (e) {
    expect(e).toBeInstanceOf(CallerLimitReached);
    return (e as Error).message;
  }
  return null;
};

afterEach(() => vi.unstubAllEnvs());

describe("enforceCallerLimits", () => {
  it("counts open tasks and open intents together against the pending limit, refused at the limit", () => {
    vi.stubEnv("COUNTERSIGN_MAX_PENDING_PER_AGENT", "5");
    vi.stubEnv("COUNTERSIGN_SUBMISSIONS_PER_MINUTE", "100");
    expect(refusal(load(4, 0, 0))).toBeNull();
    expect(refusal(load(2, 2, 0))).toBeNull();
    expect(refusal(load(0, 4, 0))).toBeNull();
    for (const [t, i] of [[5, 0], [0, 5], [3, 2], [6, 1]]) {
      const m = refusal(load(t, i, 0));
      expect(m).toContain(`already has ${t + i} approval requests pending (the limit is 5)`);
      expect(m).toContain("Nothing was submitted and the tool did not run.");
    }
  });

  it("refuses the submission that reaches the per-minute limit, not the one before", () => {
    vi.stubEnv("COUNTERSIGN_MAX_PENDING_PER_AGENT", "100");
    vi.stubEnv("COUNTERSIGN_SUBMISSIONS_PER_MINUTE", "3");
    expect(refusal(load(0, 0, 2))).toBeNull();
    const m = refusal(load(0, 0, 3));
    expect(m).toContain("submitted 3 approval requests in the last minute (the limit is 3)");
    expect(m).toContain("Nothing was submitted and the tool did not run.");
    expect(refusal(load(0, 0, 4))).toContain("submitted 4 approval requests");
  });

  it("names the pending limit first when both are reached", () => {
    vi.stubEnv("COUNTERSIGN_MAX_PENDING_PER_AGENT", "1");
    vi.stubEnv("COUNTERSIGN_SUBMISSIONS_PER_MINUTE", "1");
    expect(refusal(load(1, 0, 1))).toContain("pending (the limit is 1)");
  });

  it("uses 20 pending and 10 per minute when nothing is configured", () => {
    vi.stubEnv("COUNTERSIGN_MAX_PENDING_PER_AGENT", "");
    vi.stubEnv("COUNTERSIGN_SUBMISSIONS_PER_MINUTE", "");
    expect(refusal(load(19, 0, 9))).toBeNull();
    expect(refusal(load(20, 0, 0))).toContain("the limit is 20");
    expect(refusal(load(0, 0, 10))).toContain("the limit is 10");
  });
});
