/**
 * The refusals of a review and of a withdrawal that come before anything is recorded: an unknown reviewer or
 * request, a request past its deadline (reviewed at the instant of the deadline or later), a member of the group who
 * is not a reviewer. Nothing is written. Then what a review records: its comment, one review per reviewer, the
 * request's decision in the deciding reviewer's name, the time to a decision, and what a lost database means.
 */
import { beforeEach, describe, expect, inject, it } from "vitest";
import { db } from "../db/client";
import { DECISION_NOT_RECORDED, DECISION_UNKNOWN, lockRequest, reviewRequest, settleRequest } from "./review";
import { NO_PASSKEY } from "../passkeys/approval";
import { metricValue } from "../metrics";
import { withdrawApproval } from "./withdraw";
import { principal, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { MIN, SRES, TREASURY, at, gatedCall, gatedDeploy } from "../../tests/support/proof";
import { expectOtherFailuresLetThrough, withLostDatabase } from "../../tests/support/transaction-faults";

beforeEach(resetDb);

const written = async () => ({ reviews: await db().review.count(), events: await db().auditEvent.count() });
/** A transfer that needs two treasury approvals, requested at `at(0)`: its request's id. */
const twoApproverTransfer = async () => requestIdOf(await gatedCall(await principal("ops-bot"), "wire_transfer", { to: "acct-991", amount: 50_000 }, at(0)));

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
    const requestId = await twoApproverTransfer();
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

const decided = (decision: string, le: string) => metricValue("countersign_time_to_decision_seconds", { decision, le });

describe(`what a review records (${inject("databaseKind")})`, () => {
  it("a denial whose reason is only blanks is refused; a comment is kept without its surrounding blanks", async () => {
    const requestId = await requestIdOf(await gatedDeploy());
    const sasha = await userId(SRES[0]);
    const before = await written();
    expect(await reviewRequest({ requestId, reviewerId: sasha, decision: "deny", comment: " \n\t " }, at(MIN))).toEqual({ ok: false, error: "A denial needs a reason." });
    expect(await written()).toEqual(before);
    expect(await reviewRequest({ requestId, reviewerId: sasha, decision: "deny", comment: "  not during the freeze \n" }, at(MIN))).toMatchObject({ ok: true, requestStatus: "denied" });
    expect(await db().review.findFirstOrThrow({ where: { requestId } })).toMatchObject({ decision: "deny", comment: "not during the freeze" });
    const event = await db().auditEvent.findFirstOrThrow({ where: { requestId, type: "review.denied" } });
    expect(event.data).toMatchObject({ comment: "not during the freeze" });
  });

  it("a second review by the same reviewer is refused as such, and the request's decision is recorded in the name of the reviewer who made it", async () => {
    const requestId = await twoApproverTransfer();
    const [tara, theo] = [await userId(TREASURY[0]), await userId(TREASURY[1])];
    expect(await reviewRequest({ requestId, reviewerId: tara, decision: "approve" }, at(MIN))).toMatchObject({ ok: true, requestStatus: "pending" });
    const before = await written();
    for (const decision of ["approve", "deny"] as const) {
      expect(await reviewRequest({ requestId, reviewerId: tara, decision, comment: "again" }, at(2 * MIN))).toEqual({ ok: false, error: "You have already reviewed this request." });
    }
    expect(await written()).toEqual(before);
    expect(await reviewRequest({ requestId, reviewerId: theo, decision: "approve" }, at(3 * MIN))).toMatchObject({ ok: true, requestStatus: "approved" });
    const settled = await db().auditEvent.findFirstOrThrow({ where: { requestId, type: "request.approved" } });
    expect(settled.actor).toBe(`user:${theo}`);
  });

  it("the time to a decision is observed once, by the review that decided, as the time since the request was made", async () => {
    const requestId = await twoApproverTransfer();
    const { createdAt } = await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    const [tara, theo] = [await userId(TREASURY[0]), await userId(TREASURY[1])];
    // Only a decision is observed: no other status ever appears as a label.
    const counts = async () => [await decided("approved", "+Inf"), await decided("approved", "60"), await decided("approved", "10"), await decided("denied", "+Inf"), await decided("pending", "+Inf")];
    const [all, upTo60, upTo10, denials] = await counts();
    // 45 seconds after the request: in the 60-second bucket, not in the 10-second one.
    const when = (s: number) => new Date(createdAt.getTime() + s * 1000);
    expect(await reviewRequest({ requestId, reviewerId: tara, decision: "approve" }, when(30))).toMatchObject({ ok: true, requestStatus: "pending" });
    expect(await counts()).toEqual([all, upTo60, upTo10, denials, 0]);
    expect(await reviewRequest({ requestId, reviewerId: theo, decision: "deny", comment: "no" }, when(45))).toMatchObject({ ok: true, requestStatus: "denied" });
    expect(await counts()).toEqual([all, upTo60, upTo10, denials + 1, 0]);
    // A refused review observes nothing.
    expect(await reviewRequest({ requestId, reviewerId: theo, decision: "approve" }, when(50))).toMatchObject({ ok: false });
    expect(await counts()).toEqual([all, upTo60, upTo10, denials + 1, 0]);

    const deploy = await requestIdOf(await gatedDeploy());
    const deployedAt = (await db().approvalRequest.findUniqueOrThrow({ where: { id: deploy } })).createdAt;
    expect(await reviewRequest({ requestId: deploy, reviewerId: await userId(SRES[0]), decision: "approve" }, new Date(deployedAt.getTime() + 45_000))).toMatchObject({
      ok: true,
      requestStatus: "approved",
    });
    expect(await counts()).toEqual([all + 1, upTo60 + 1, upTo10, denials + 1, 0]);
  });

  it("any other failure is let through, a database error other than a second review included", async () => {
    const requestId = await requestIdOf(await gatedDeploy());
    const sasha = await userId(SRES[0]);
    await expectOtherFailuresLetThrough(() => reviewRequest({ requestId, reviewerId: sasha, decision: "approve" }, at(MIN)));
  });

  it("a database lost before the commit means the decision was not recorded; lost as the commit goes out, that it may have been", async () => {
    const requestId = await requestIdOf(await gatedDeploy());
    const sasha = await userId(SRES[0]);
    await withLostDatabase(async (lose) => {
      lose.beforeSending();
      expect(await reviewRequest({ requestId, reviewerId: sasha, decision: "approve" }, at(MIN))).toEqual({ ok: false, error: DECISION_NOT_RECORDED });
      expect(await db().review.count({ where: { requestId } })).toBe(0);
      lose.asCommitGoesOut();
      expect(await reviewRequest({ requestId, reviewerId: sasha, decision: "approve" }, at(MIN))).toEqual({ ok: false, error: DECISION_UNKNOWN });
      expect(await db().review.count({ where: { requestId } })).toBe(1);
    });
  });
});

/** The request's row as reviewRequest locks it: what settleRequest is given. */
const lockedRow = async (requestId: string) => (await db().$transaction((tx) => lockRequest(tx, requestId)))!;
const deliveries = (requestId: string) =>
  db().webhookDelivery.findMany({ where: { eventType: "request.decided" }, select: { payload: true } }).then((ds) => ds.map((d) => d.payload as { data: Record<string, unknown> }).filter((p) => p.data.requestId === requestId).map((p) => p.data));

describe(`a review's approval checks and the request's decision (${inject("databaseKind")})`, () => {
  it("a request already decided is refused by its status, for an approval and a denial", async () => {
    const requestId = await requestIdOf(await gatedDeploy());
    const [sasha, sid] = [await userId(SRES[0]), await userId(SRES[1])];
    expect(await reviewRequest({ requestId, reviewerId: sasha, decision: "approve" }, at(MIN))).toMatchObject({ ok: true, requestStatus: "approved" });
    for (const decision of ["approve", "deny"] as const) {
      expect(await reviewRequest({ requestId, reviewerId: sid, decision, comment: "late" }, at(2 * MIN))).toEqual({ ok: false, error: "This request is already approved." });
    }
  });

  it("an approval's confirmation is judged with the request's body and the other reviewers' approvals; a denial is never asked", async () => {
    const requestId = await twoApproverTransfer();
    const [tara, theo] = [await userId(TREASURY[0]), await userId(TREASURY[1])];
    const seen: unknown[] = [];
    const confirm = (refusal: string | null) => (req: { body: unknown; approvalsRequired: number; approvals: number }) => (seen.push(req), refusal);
    const { body } = await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId }, select: { body: true } });
    expect(await reviewRequest({ requestId, reviewerId: tara, decision: "approve", confirm: confirm(null) }, at(MIN))).toMatchObject({ ok: true, requestStatus: "pending" });
    expect(seen).toEqual([{ body, approvalsRequired: 2, approvals: 0 }]);
    // Tara's own approval is not another's: asked again, she is judged with none, then refused as a second review.
    expect(await reviewRequest({ requestId, reviewerId: tara, decision: "approve", confirm: confirm(null) }, at(MIN))).toEqual({ ok: false, error: "You have already reviewed this request." });
    expect(seen[1]).toEqual({ body, approvalsRequired: 2, approvals: 0 });
    const before = await written();
    expect(await reviewRequest({ requestId, reviewerId: theo, decision: "approve", confirm: confirm("Type the amount to confirm.") }, at(2 * MIN))).toEqual({
      ok: false,
      error: "Type the amount to confirm.",
    });
    expect(seen[2]).toEqual({ body, approvalsRequired: 2, approvals: 1 });
    expect(await written()).toEqual(before);
    expect(await reviewRequest({ requestId, reviewerId: theo, decision: "deny", comment: "no", confirm: confirm("never asked") }, at(3 * MIN))).toMatchObject({ ok: true, requestStatus: "denied" });
    expect(seen).toHaveLength(3);
  });

  it("a request whose rule requires a passkey is not approved without one, and is denied without one", async () => {
    const requestId = await requestIdOf(await gatedDeploy());
    await db().approvalRequest.update({ where: { id: requestId }, data: { requirePasskey: true } });
    const sasha = await userId(SRES[0]);
    const before = await written();
    expect(await reviewRequest({ requestId, reviewerId: sasha, decision: "approve" }, at(MIN))).toEqual({ ok: false, error: NO_PASSKEY });
    expect(await written()).toEqual(before);
    expect(await reviewRequest({ requestId, reviewerId: sasha, decision: "deny", comment: "not now" }, at(MIN))).toMatchObject({ ok: true, requestStatus: "denied" });
  });

  it("the decision is announced once, with its approvals and the approval's expiry; a request decided meanwhile is left as it is", async () => {
    await db().webhook.create({ data: { url: "http://127.0.0.1:9/hook", secret: "whsec_test", events: ["request.decided"], createdBy: "test" } });
    const approved = await requestIdOf(await gatedDeploy());
    const stale = await lockedRow(approved);
    const sasha = await userId(SRES[0]);
    expect(await reviewRequest({ requestId: approved, reviewerId: sasha, decision: "approve" }, at(MIN))).toMatchObject({ ok: true, requestStatus: "approved" });
    const expiresAt = new Date(at(MIN).getTime() + stale.approvalValiditySec * 1000).toISOString();
    const event = await db().auditEvent.findFirstOrThrow({ where: { requestId: approved, type: "request.approved" } });
    expect(event.data).toEqual({ approvals: 1, expiresAt });
    expect(await deliveries(approved)).toEqual([{ taskId: stale.taskId, requestId: approved, decision: "approved", approvalExpiresAt: expiresAt }]);
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: approved }, select: { status: true, decidedAt: true, approvedAt: true, approvalExpiresAt: true } })).toEqual({
      status: "approved",
      decidedAt: at(MIN),
      approvedAt: at(MIN),
      approvalExpiresAt: new Date(expiresAt),
    });
    // Settled again from the row as it was read before: already approved, so nothing changes and nothing is announced.
    expect(await db().$transaction((tx) => settleRequest(tx, stale, "user:someone", at(2 * MIN)))).toBe("pending");
    expect(await db().auditEvent.count({ where: { requestId: approved, type: "request.approved" } })).toBe(1);
    expect(await deliveries(approved)).toHaveLength(1);

    const denied = await twoApproverTransfer();
    const staleDenied = await lockedRow(denied);
    expect(await reviewRequest({ requestId: denied, reviewerId: await userId(TREASURY[0]), decision: "deny", comment: "no" }, at(MIN))).toMatchObject({ ok: true, requestStatus: "denied" });
    expect(await deliveries(denied)).toEqual([{ taskId: staleDenied.taskId, requestId: denied, decision: "denied" }]);
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: denied }, select: { status: true, decidedAt: true, approvedAt: true } })).toEqual({
      status: "denied",
      decidedAt: at(MIN),
      approvedAt: null,
    });
    expect(await db().$transaction((tx) => settleRequest(tx, staleDenied, "user:someone", at(2 * MIN)))).toBe("pending");
    expect(await db().auditEvent.count({ where: { requestId: denied, type: "request.denied" } })).toBe(1);
    expect(await deliveries(denied)).toHaveLength(1);
  });
});
