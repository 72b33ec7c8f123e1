/**
 * The refusals of a review and of a withdrawal that come before anything is recorded: an unknown reviewer or
 * request, and a request past its deadline (reviewed at the instant of the deadline or later). Nothing is written.
 */
import { beforeEach, describe, expect, inject, it } from "vitest";
import { db } from "../db/client";
import { reviewRequest } from "./review";
import { withdrawApproval } from "./withdraw";
import { principal, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { MIN, SRES, TREASURY, at, gatedCall, gatedDeploy } from "../../tests/support/proof";

beforeEach(resetDb);

const written = async () => ({ reviews: await db().review.count(), events: await db().auditEvent.count() });

describe(`refused before anything is recorded (${inject("databaseKind")})`, () => {
  it("an unknown reviewer or request is 'No such request.' for a review and for a withdrawal", async () => {
    const requestId = await requestIdOf(await gatedDeploy());
    const sasha = await userId(SRES[0]);
    const before = await written();
    expect(await reviewRequest({ requestId, reviewerId: "no-such-user", decision: "approve" }, at(MIN))).toEqual({ ok: false, error: "No such request." });
    expect(await reviewRequest({ requestId: "no-such-request", reviewerId: sasha, decision: "approve" }, at(MIN))).toEqual({ ok: false, error: "No such request." });
    expect(await withdrawApproval({ requestId: "no-such-request", reviewerId: sasha }, at(MIN))).toEqual({ ok: false, error: "No such request." });
    expect(await written()).toEqual(before);
  });

  it("a request at or past its deadline can be neither approved, denied, nor have an approval withdrawn", async () => {
    // A two-approver transfer: the first approval is recorded before the deadline, so there is one to withdraw.
    const taskId = await gatedCall(await principal("ops-bot"), "wire_transfer", { to: "acct-991", amount: 50_000 }, at(0));
    const requestId = await requestIdOf(taskId);
    const { deadline } = await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    const [tara, theo] = [await userId(TREASURY[0]), await userId(TREASURY[1])];
    const justBefore = new Date(deadline.getTime() - 1);
    expect(await reviewRequest({ requestId, reviewerId: tara, decision: "approve" }, justBefore)).toMatchObject({ ok: true, requestStatus: "pending" });
    const before = await written();
    for (const now of [deadline, new Date(deadline.getTime() + MIN)]) {
      expect(await reviewRequest({ requestId, reviewerId: theo, decision: "approve" }, now)).toEqual({ ok: false, error: "This request has expired." });
      expect(await reviewRequest({ requestId, reviewerId: theo, decision: "deny", comment: "too late" }, now)).toEqual({ ok: false, error: "This request has expired." });
      expect(await withdrawApproval({ requestId, reviewerId: tara }, now)).toEqual({ ok: false, error: "This request has expired." });
    }
    expect(await written()).toEqual(before);
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).toMatchObject({ status: "pending" });
    // Until then the approval could still be withdrawn.
    expect(await withdrawApproval({ requestId, reviewerId: tara }, justBefore)).toMatchObject({ ok: true });
  });

  it("a user in the request's group who is not a reviewer (an admin, a requester) can neither approve nor deny it", async () => {
    const requestId = await requestIdOf(await gatedDeploy());
    const { approverGroup } = await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    for (const email of ["admin@countersign.test", "rita.requester@countersign.test"]) {
      await db().user.update({ where: { email }, data: { groups: [approverGroup] } });
      const id = await userId(email);
      const before = await written();
      for (const decision of ["approve", "deny"] as const) {
        expect(await reviewRequest({ requestId, reviewerId: id, decision, comment: "not mine to decide" }, at(MIN))).toEqual({
          ok: false,
          error: `Only active ${approverGroup} reviewers can review this request.`,
        });
      }
      expect(await written()).toEqual(before);
    }
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).toMatchObject({ status: "pending" });
  });
});
