/**
 * What a withdrawal records, and what a lost database means for it: the withdrawn approval's audit event names the
 * reviewer (by id as its actor, by email in its data); a database lost before the commit means the approval was
 * not withdrawn, lost as the commit goes out that it may have been; any other failure is let through.
 */
import { beforeEach, describe, expect, inject, it } from "vitest";
import { db } from "../db/client";
import { DECISION_NOT_RECORDED, DECISION_UNKNOWN, reviewRequest } from "./review";
import { withdrawApproval } from "./withdraw";
import { principal, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { MIN, TREASURY, at, gatedCall } from "../../tests/support/proof";
import { expectOtherFailuresLetThrough, withLostDatabase } from "../../tests/support/transaction-faults";

beforeEach(resetDb);

const approvalsOf = (requestId: string) => db().review.count({ where: { requestId, decision: "approve" } });

/** A transfer that needs two treasury approvals, requested at `at(0)` and approved once by Tara at `at(MIN)`. */
async function approvedOnce(): Promise<{ taskId: string; requestId: string; tara: string }> {
  const taskId = await gatedCall(await principal("ops-bot"), "wire_transfer", { to: "acct-992", amount: 50_000 }, at(0));
  const requestId = await requestIdOf(taskId);
  const tara = await userId(TREASURY[0]);
  expect(await reviewRequest({ requestId, reviewerId: tara, decision: "approve" }, at(MIN))).toMatchObject({ ok: true, requestStatus: "pending" });
  return { taskId, requestId, tara };
}

describe(`what a withdrawal records (${inject("databaseKind")})`, () => {
  it("the withdrawal is audited as review.withdrawn in the reviewer's name, with their email", async () => {
    const { taskId, requestId, tara } = await approvedOnce();
    expect(await withdrawApproval({ requestId, reviewerId: tara }, at(2 * MIN))).toEqual({ ok: true, taskId });
    const events = await db().auditEvent.findMany({ where: { type: "review.withdrawn", requestId } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: `user:${tara}`, taskId, at: at(2 * MIN), data: { reviewer: TREASURY[0] } });
    expect(await approvalsOf(requestId)).toBe(0);
  });
});

describe(`a withdrawal and a lost database (${inject("databaseKind")})`, () => {
  it("a database lost before the commit means the approval was not withdrawn; lost as the commit goes out, that it may have been", async () => {
    const { requestId, tara } = await approvedOnce();
    await withLostDatabase(async (lose) => {
      lose.beforeSending();
      expect(await withdrawApproval({ requestId, reviewerId: tara }, at(2 * MIN))).toEqual({ ok: false, error: DECISION_NOT_RECORDED });
      expect(await approvalsOf(requestId)).toBe(1);
      lose.asCommitGoesOut();
      expect(await withdrawApproval({ requestId, reviewerId: tara }, at(2 * MIN))).toEqual({ ok: false, error: DECISION_UNKNOWN });
      expect(await approvalsOf(requestId)).toBe(0);
    });
  });

  it("any other failure is let through, and the approval stays", async () => {
    const { requestId, tara } = await approvedOnce();
    await expectOtherFailuresLetThrough(() => withdrawApproval({ requestId, reviewerId: tara }, at(2 * MIN)));
    expect(await approvalsOf(requestId)).toBe(1);
  });
});
