/**
 * The hang fault: COUNTERSIGN_FAULT=hang-<point> stops the call at that point for good while the process lives
 * on (the multi-replica test kills the process while it holds what the call took); unset or another point, the
 * call goes on. (The kill variant is proved by tests/crash.test.ts, in child processes.)
 */
import { afterEach, describe, expect, it } from "vitest";
import { faultPoint } from "./faults";
import { instanceTag } from "./execution/claim";

const settled = async (p: Promise<void> | void) => {
  let done = false;
  void Promise.resolve(p).then(() => (done = true));
  // A few turns of the event loop: a promise that settles at all has settled by then.
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
};

afterEach(() => {
  delete process.env.COUNTERSIGN_FAULT;
});

describe("fault points", () => {
  it("hang-<point> never lets the call past that point, while the process goes on", async () => {
    process.env.COUNTERSIGN_FAULT = "hang-after-claim";
    expect(await settled(faultPoint("after-claim"))).toBe(false);
    expect(await settled(faultPoint("after-submit"))).toBe(true);
  });

  it("unset, every point is a no-op", async () => {
    expect(await settled(faultPoint("after-claim"))).toBe(true);
  });
});

describe("claim tokens name the replica that claimed", () => {
  it("COUNTERSIGN_INSTANCE first, then a random part; a name that is not a plain identifier is left out", () => {
    expect(instanceTag("replica-a")).toMatch(/^replica-a\.[0-9a-f]{8}$/);
    expect(instanceTag("replica-a")).not.toBe(instanceTag("replica-a"));
    expect(instanceTag(undefined)).toMatch(/^[0-9a-f]{8}$/);
    expect(instanceTag("bad name;drop")).toMatch(/^[0-9a-f]{8}$/);
    // Up to 40 characters.
    expect(instanceTag("r".repeat(40))).toMatch(/^r{40}\.[0-9a-f]{8}$/);
    expect(instanceTag("r".repeat(41))).toMatch(/^[0-9a-f]{8}$/);
  });
});
