/** Consumed request states are answerable once, and forgotten in bounded batches once their seal has expired. */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { resetDb } from "../../tests/support/db";
import { db } from "../db/client";
import { expectOtherFailuresLetThrough } from "../../tests/support/transaction-faults";
import { consumeRequestState, pruneRequestStates } from "./request-state";

const NOW = new Date("2100-01-01T12:00:00Z");

describe("consuming a request state", () => {
  beforeEach(resetDb);

  it("answers a state once, and never at or after the instant its seal expires", async () => {
    expect(await consumeRequestState("at-expiry", NOW, NOW)).toBe(false);
    expect(await consumeRequestState("past-expiry", new Date(NOW.getTime() - 1), NOW)).toBe(false);
    // Refused for expiry, nothing was recorded: the count of consumed states is unchanged.
    expect(await db().consumedRequestState.count()).toBe(0);
    const later = new Date(NOW.getTime() + 1);
    expect(await consumeRequestState("fresh", later, NOW)).toBe(true);
    expect(await consumeRequestState("fresh", later, NOW)).toBe(false);
    expect(await db().consumedRequestState.findMany({ select: { nonce: true, expiresAt: true, createdAt: true } })).toEqual([
      { nonce: "fresh", expiresAt: later, createdAt: NOW },
    ]);
  });

  it("a failure that is not a second consumer is thrown, never read as a replay", async () => {
    const exp = new Date(NOW.getTime() + 60_000);
    await expectOtherFailuresLetThrough(
      () => consumeRequestState("unlucky", exp, NOW),
      () => vi.spyOn(db().consumedRequestState, "create"),
    );
    // Nothing was consumed: the state is still answerable once.
    expect(await consumeRequestState("unlucky", exp, NOW)).toBe(true);
  });

  it("lets exactly one of concurrent consumers of one state win", async () => {
    const exp = new Date(NOW.getTime() + 60_000);
    const wins = await Promise.all(Array.from({ length: 6 }, () => consumeRequestState("raced", exp, NOW)));
    expect(wins.filter(Boolean)).toHaveLength(1);
  });
});

describe("pruning consumed request states", () => {
  beforeEach(resetDb);

  it("deletes only expired states, oldest first, at most batch x maxBatches rows per call", async () => {
    await db().$executeRaw`
      INSERT INTO "ConsumedRequestState"(nonce, "expiresAt", "createdAt")
      SELECT 'n' || g, ${NOW}::timestamp - g * interval '1 second', ${NOW}::timestamp FROM generate_series(1, 1200) g`;
    expect(await consumeRequestState("live", new Date(NOW.getTime() + 60_000), NOW)).toBe(true);

    // Batches of 500 unless told otherwise.
    expect(await pruneRequestStates(NOW, { maxBatches: 1 })).toBe(500);
    // The oldest went first.
    expect(await db().consumedRequestState.count({ where: { nonce: "n1200" } })).toBe(0);
    expect(await db().consumedRequestState.count({ where: { nonce: "n701" } })).toBe(0);
    expect(await db().consumedRequestState.count({ where: { nonce: "n700" } })).toBe(1);
    expect(await db().consumedRequestState.count({ where: { nonce: "n1" } })).toBe(1);
    // At most four batches a call: 4 x 150 of the 700 left, then the rest.
    expect(await pruneRequestStates(NOW, { batch: 150 })).toBe(600);
    expect(await pruneRequestStates(NOW, { batch: 150 })).toBe(100);
    expect(await pruneRequestStates(NOW)).toBe(0);
    expect((await db().consumedRequestState.findMany()).map((s) => s.nonce)).toEqual(["live"]);
    // A pruned state whose seal has expired stays refused.
    expect(await consumeRequestState("n1", new Date(NOW.getTime() - 1), NOW)).toBe(false);
  });
});
