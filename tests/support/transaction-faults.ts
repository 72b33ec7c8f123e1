/**
 * Faults of the next `db().$transaction` for tests of code that writes in one transaction: the database lost
 * before the transaction reaches the server or as its commit goes out, and failures that are neither.
 */
import { expect, vi } from "vitest";
import { db, Prisma } from "../../lib/db/client";

const lostConnection = () => Object.assign(new Error("Can't reach database server at 127.0.0.1"), { code: "P1001" });

/**
 * Runs `body` with `beforeSending()` (the next transaction fails with a lost connection and writes nothing) and
 * `asCommitGoesOut()` (the next transaction commits, then the connection drops before its answer arrives).
 */
export async function withLostDatabase(body: (lose: { beforeSending(): void; asCommitGoesOut(): void }) => Promise<void>): Promise<void> {
  const client = db();
  const real = client.$transaction.bind(client);
  const spy = vi.spyOn(client, "$transaction");
  try {
    await body({
      beforeSending: () => void spy.mockImplementationOnce((() => Promise.reject(lostConnection())) as never),
      asCommitGoesOut: () =>
        void spy.mockImplementationOnce((async (fn: never) => {
          await (real as (f: never) => Promise<unknown>)(fn);
          throw lostConnection();
        }) as never),
    });
  } finally {
    spy.mockRestore();
  }
}

type Failable = { mockImplementationOnce(fn: never): unknown; mockRestore(): void };

/**
 * `attempt` lets through what its transaction (or the database call `failing` spies on) throws when that is neither
 * a lost database nor its own case: a plain error, and a database error (a record not found).
 */
export async function expectOtherFailuresLetThrough(attempt: () => Promise<unknown>, failing: () => Failable = () => vi.spyOn(db(), "$transaction")): Promise<void> {
  const spy = failing();
  try {
    const notFound = new Prisma.PrismaClientKnownRequestError("Record to update not found.", { code: "P2025", clientVersion: "7" });
    for (const failure of [new Error("bug"), notFound]) {
      spy.mockImplementationOnce((() => Promise.reject(failure)) as never);
      await expect(attempt()).rejects.toBe(failure);
    }
  } finally {
    spy.mockRestore();
  }
}
