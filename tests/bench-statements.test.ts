/**
 * The benchmark's statement counter (scripts/bench-support.ts): what `npm run bench` reports as the statements and
 * transactions of a gated call and of a final approval is what the driver sent, BEGIN and COMMIT included.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { countStatements, median, percentile } from "../scripts/bench-support";
import { resetDb } from "./support/db";

describe("the benchmark's statement counter", () => {
  let counter: Awaited<ReturnType<typeof countStatements>>;
  beforeAll(async () => {
    await resetDb();
    counter = await countStatements();
  });
  afterAll(() => counter.restore());

  it("counts a statement outside a transaction as one statement and no transaction", async () => {
    const m = await counter.measure(() => db().user.count());
    expect(m.value).toBeGreaterThan(0);
    expect({ statements: m.statements, transactions: m.transactions }).toEqual({ statements: 1, transactions: 0 });
  });

  it("counts a transaction's BEGIN and COMMIT as statements, and the transaction once", async () => {
    const m = await counter.measure(() =>
      db().$transaction(async (tx) => {
        await tx.user.count();
        await tx.agent.count();
      }),
    );
    expect({ statements: m.statements, transactions: m.transactions }).toEqual({ statements: 4, transactions: 1 });
  });

  it("counts a rolled-back transaction's ROLLBACK too", async () => {
    const m = await counter.measure(() =>
      db()
        .$transaction(async (tx) => {
          await tx.user.count();
          throw new Error("roll back");
        })
        .catch(() => "rolled back"),
    );
    expect(m.value).toBe("rolled back");
    expect({ statements: m.statements, transactions: m.transactions }).toEqual({ statements: 3, transactions: 1 });
  });

  it("reports the database time as part of the wall time", async () => {
    const m = await counter.measure(() => db().$queryRaw`SELECT count(*)::int AS n FROM generate_series(1, 300000)`);
    expect(m.value).toEqual([{ n: 300000 }]);
    expect(m.dbMs).toBeGreaterThan(0);
    expect(m.ms).toBeGreaterThanOrEqual(m.dbMs);
  });
});

describe("the benchmark's statistics", () => {
  it("takes the middle of an odd count and the mean of the middle two of an even one", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it("takes percentiles by nearest rank", () => {
    const xs = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 95)).toBe(95);
    expect(percentile(xs, 100)).toBe(100);
    expect(percentile([7], 95)).toBe(7);
  });
});
