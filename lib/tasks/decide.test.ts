/**
 * decide: a reviewer's decision is recorded first, then the task moves on at once. When the database drops out
 * after the decision is recorded, the reviewer is told it was recorded (the task waits, the sweeper moves it on
 * later, and the tool has not run); any other failure is not hidden.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { requestIdOf, resetDb, userId } from "../../tests/support/db";
import { LEADS, MIN, at, gatedRefund, sideEffects, taskRow } from "../../tests/support/proof";
import { db } from "../db/client";

const advance = vi.hoisted(() => ({ fail: null as Error | null }));
vi.mock("../execution/advance", async (original) => {
  const real = await original<typeof import("../execution/advance")>();
  return {
    ...real,
    advanceTask: (...args: Parameters<typeof real.advanceTask>) => (advance.fail ? Promise.reject(advance.fail) : real.advanceTask(...args)),
  };
});
const { decide } = await import("./decide");

beforeEach(async () => {
  advance.fail = null;
  await resetDb();
});

describe("decide", () => {
  it("approves and runs at once, and says what happened", async () => {
    const taskId = await gatedRefund("O-2289");
    const r = await decide({ requestId: await requestIdOf(taskId), reviewerId: await userId(LEADS[0]), decision: "approve" }, at(MIN));
    expect(r).toMatchObject({ ok: true, requestStatus: "approved", taskStatus: "completed", disposition: "approved-executed" });
    expect(await sideEffects(taskId)).toBe(1);
  });

  it("keeps the decision when the database drops out while the task moves on: recorded, the task waits, nothing ran", async () => {
    const taskId = await gatedRefund("O-2289");
    const requestId = await requestIdOf(taskId);
    advance.fail = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const r = await decide({ requestId, reviewerId: await userId(LEADS[0]), decision: "approve" }, at(MIN));
    expect(r).toEqual({ ok: true, requestStatus: "approved", taskStatus: "working" });
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).status).toBe("approved");
    expect(await taskRow(taskId)).toMatchObject({ status: "working", phase: "awaiting_approval" });
    expect(await sideEffects(taskId)).toBe(0);
  });

  it("lets any other failure through", async () => {
    const taskId = await gatedRefund("O-2289");
    advance.fail = new Error("a bug");
    await expect(decide({ requestId: await requestIdOf(taskId), reviewerId: await userId(LEADS[0]), decision: "approve" }, at(MIN))).rejects.toThrow("a bug");
  });

  it("refuses without moving anything when the review is refused", async () => {
    const taskId = await gatedRefund("O-2289");
    const r = await decide({ requestId: await requestIdOf(taskId), reviewerId: "no-such-reviewer", decision: "approve" }, at(MIN));
    expect(r.ok).toBe(false);
    expect(await taskRow(taskId)).toMatchObject({ status: "working" });
  });
});
