/**
 * The reviewer's queue: the next request after a decision, approving several single-approver requests at once
 * (each reviewed, bound and audited on its own), and withdrawing an approval while a request awaits others, raced
 * against the approval that would complete the quorum: an executed request never has fewer approvals than needed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { withdrawApproval, type WithdrawResult } from "../lib/approvals/withdraw";
import { decide, type DecideResult } from "../lib/tasks/decide";
import { approveMany } from "../lib/tasks/approve-many";
import { adjacentRequest, awaitingOthers } from "../lib/inbox/queue";
import { inboxPage } from "../lib/inbox/inbox";
import { parseInboxParams } from "../lib/inbox/params";
import { timelineFor } from "../lib/inbox/timeline";
import { principal, requestIdOf, resetDb, userId } from "./support/db";
import { LEADS, LONG, MIN, T0, TREASURY, approveOnly, at, auditCount, freshOrder, gatedCall, gatedRefund, sideEffects, taskRow } from "./support/proof";

const RACE_TRIALS = LONG ? 500 : 24;

async function viewer(email: string) {
  const u = await db().user.findUniqueOrThrow({ where: { email } });
  return { id: u.id, role: u.role, groups: u.groups };
}

/** A fresh USD 50,000 wire: two treasury approvals. */
async function bigWire(tag: string, now = T0): Promise<{ taskId: string; requestId: string }> {
  const taskId = await gatedCall(await principal("ops-bot"), "wire_transfer", { to: `acct-${tag}`, amount: 50_000 }, now);
  return { taskId, requestId: await requestIdOf(taskId) };
}

let orders = 0;

async function refund(_tag: string, now = T0): Promise<{ taskId: string; requestId: string }> {
  const taskId = await gatedRefund(await freshOrder(`O-${7000 + ++orders}`), now);
  return { taskId, requestId: await requestIdOf(taskId) };
}

const approvalsOf = (requestId: string) => db().review.count({ where: { requestId, decision: "approve" } });

beforeAll(async () => {
  await resetDb();
});

describe("withdrawing an approval while a request awaits others", () => {
  it("an approval given to a request that is still pending can be withdrawn, is audited review.withdrawn, and the request goes back to the reviewer's inbox", async () => {
    const { taskId, requestId } = await bigWire("withdraw-1");
    const tara = await viewer(TREASURY[0]);
    await approveOnly(taskId, TREASURY[0], at(MIN));
    expect((await awaitingOthers(tara, at(2 * MIN))).map((r) => r.id)).toContain(requestId);

    expect(await withdrawApproval({ requestId, reviewerId: tara.id }, at(2 * MIN))).toEqual({ ok: true, taskId });
    expect(await approvalsOf(requestId)).toBe(0);
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).status).toBe("pending");
    expect(await auditCount(taskId, "review.withdrawn")).toBe(1);
    expect((await timelineFor(taskId)).map((e) => e.title)).toContain("Tara Treasury withdrew their approval");
    expect((await awaitingOthers(tara, at(2 * MIN))).map((r) => r.id)).not.toContain(requestId);
    const inbox = await inboxPage(tara, parseInboxParams({}), at(2 * MIN));
    expect(inbox.items.map((i) => i.id)).toContain(requestId);

    // Nothing left to withdraw; and someone who never approved has nothing to withdraw either.
    expect(await withdrawApproval({ requestId, reviewerId: tara.id }, at(3 * MIN))).toEqual({ ok: false, error: "You have no approval of this request to withdraw." });
    expect(await withdrawApproval({ requestId, reviewerId: await userId(TREASURY[1]) }, at(3 * MIN))).toMatchObject({ ok: false });
    expect(await auditCount(taskId, "review.withdrawn")).toBe(1);
  });

  it("once the quorum completed the approval stands: withdrawing is refused and changes nothing", async () => {
    const { taskId, requestId } = await bigWire("withdraw-2");
    await approveOnly(taskId, TREASURY[0], at(MIN));
    const second = await decide({ requestId, reviewerId: await userId(TREASURY[1]), decision: "approve" }, at(2 * MIN));
    expect(second).toMatchObject({ ok: true, requestStatus: "approved" });
    const res = await withdrawApproval({ requestId, reviewerId: await userId(TREASURY[0]) }, at(3 * MIN));
    expect(res).toEqual({ ok: false, error: "This request is already approved; your approval stands." });
    expect(await approvalsOf(requestId)).toBe(2);
    expect(await auditCount(taskId, "review.withdrawn")).toBe(0);
    expect(await awaitingOthers(await viewer(TREASURY[0]), at(3 * MIN))).toEqual([]);
  });

  it("after the deadline nothing is withdrawn", async () => {
    const { taskId, requestId } = await bigWire("withdraw-3");
    await approveOnly(taskId, TREASURY[0], at(MIN));
    const res = await withdrawApproval({ requestId, reviewerId: await userId(TREASURY[0]) }, at(400 * 24 * 60 * MIN));
    expect(res).toEqual({ ok: false, error: "This request has expired." });
    expect(await approvalsOf(requestId)).toBe(1);
  });

  it(`a withdrawal racing the final approval never leaves an executed request with fewer approvals than required (${RACE_TRIALS} trials)`, async () => {
    const tara = await userId(TREASURY[0]);
    const theo = await userId(TREASURY[1]);
    const tally = { withdrawalFirst: 0, approvalFirst: 0 };
    for (let i = 0; i < RACE_TRIALS; i++) {
      const { taskId, requestId } = await bigWire(`race-${i}`);
      await approveOnly(taskId, TREASURY[0], at(MIN));
      const now = at(2 * MIN + i);
      // Alternate which side gets a head start of a few database round trips, so both orders are exercised.
      const headStart = async (n: number) => {
        for (let k = 0; k < n; k++) await db().user.findUnique({ where: { id: tara } });
      };
      const withdraw = async (): Promise<WithdrawResult> => (await headStart(i % 2 ? 3 : 0), withdrawApproval({ requestId, reviewerId: tara }, now));
      const approve = async (): Promise<DecideResult> => (await headStart(i % 2 ? 0 : 1), decide({ requestId, reviewerId: theo, decision: "approve" }, now));
      const [w, a] = await Promise.all([withdraw(), approve()]);
      const req = await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
      const approvals = await approvalsOf(requestId);
      const ran = await sideEffects(taskId);
      const why = JSON.stringify({ i, w, a, status: req.status, approvals, ran });
      // Theo's approval is always recorded; exactly one of the two orders happened.
      expect(a.ok, why).toBe(true);
      if (w.ok) {
        expect(req.status, why).toBe("pending");
        expect(approvals, why).toBe(1);
        expect(ran, why).toBe(0);
        expect(await auditCount(taskId, "execution.claimed"), why).toBe(0);
        tally.withdrawalFirst++;
      } else {
        expect(w, why).toEqual({ ok: false, error: "This request is already approved; your approval stands." });
        expect(req.status, why).toBe("approved");
        expect(approvals, why).toBe(2);
        expect((await taskRow(taskId)).disposition, why).toBe("approved-executed");
        expect(ran, why).toBe(1);
        tally.approvalFirst++;
      }
    }
    console.log("[proof] withdrawal vs final approval:", JSON.stringify({ trials: RACE_TRIALS, ...tally }));
    // Over every trial: no executed wire has fewer than two approvals.
    const executed = await db().approvalRequest.findMany({ where: { status: "approved" }, include: { reviews: true } });
    for (const r of executed) expect(r.reviews.filter((v) => v.decision === "approve").length, r.id).toBeGreaterThanOrEqual(r.approvalsRequired);
  }, 600_000);
});

describe("the next request after a decision", () => {
  it("is the inbox's next item the reviewer may decide, wrapping to the top, never the one just decided", async () => {
    await resetDb();
    const lena = await viewer(LEADS[0]);
    const a = await refund("next-a", T0);
    const b = await refund("next-b", at(MIN));
    const c = await refund("next-c", at(2 * MIN));
    const now = at(3 * MIN);
    // Newest first: c, b, a.
    expect(await adjacentRequest(lena, c.requestId, "next", now)).toBe(b.requestId);
    expect(await adjacentRequest(lena, b.requestId, "next", now)).toBe(a.requestId);
    expect(await adjacentRequest(lena, b.requestId, "previous", now)).toBe(c.requestId);
    expect(await adjacentRequest(lena, a.requestId, "next", now)).toBe(c.requestId);
    // After Lena decides b, the next is still a; after she decides a, the next wraps to c.
    expect(await decide({ requestId: b.requestId, reviewerId: lena.id, decision: "approve" }, now)).toMatchObject({ ok: true });
    expect(await adjacentRequest(lena, b.requestId, "next", now)).toBe(a.requestId);
    expect(await decide({ requestId: a.requestId, reviewerId: lena.id, decision: "deny", comment: "No" }, now)).toMatchObject({ ok: true });
    expect(await adjacentRequest(lena, a.requestId, "next", now)).toBe(c.requestId);
    // Another group's reviewer is never sent to these; with nothing left, there is no next.
    expect(await adjacentRequest(await viewer(TREASURY[0]), c.requestId, "next", now)).toBeNull();
    expect(await adjacentRequest(lena, c.requestId, "next", now)).toBeNull();
  });
});

describe("bulk approval from the inbox", () => {
  it("approves each single-approver request on its own, bound to its digest, audited one by one; refuses the rest, saying why", async () => {
    await resetDb();
    const lena = await viewer(LEADS[0]);
    const one = await refund("bulk-1");
    const two = await refund("bulk-2");
    const changed = await refund("bulk-3");
    const decided = await refund("bulk-4");
    const now = at(MIN);
    await decide({ requestId: decided.requestId, reviewerId: await userId(LEADS[1]), decision: "deny", comment: "Duplicate" }, now);
    const page = await inboxPage(lena, parseInboxParams({}), now);
    const shown = new Map(page.items.map((i) => [i.id, i]));
    expect(shown.get(one.requestId)).toMatchObject({ bulk: true });
    const digest = (id: string) => shown.get(id)?.argumentsDigest ?? "";

    const results = await approveMany(
      lena.id,
      [
        { requestId: one.requestId, argumentsDigest: digest(one.requestId) },
        { requestId: two.requestId, argumentsDigest: digest(two.requestId) },
        { requestId: changed.requestId, argumentsDigest: `${digest(changed.requestId).slice(0, -4)}0000` },
        { requestId: decided.requestId, argumentsDigest: digest(one.requestId) },
      ],
      now,
    );
    expect(results.map((r) => [r.requestId, r.ok])).toEqual([
      [one.requestId, true],
      [two.requestId, true],
      [changed.requestId, false],
      [decided.requestId, false],
    ]);
    expect(results[0].message).toBe("Approved — the refund was issued");
    expect(results[2].message).toBe("Its arguments are not the ones you were shown: open it to review it.");
    for (const r of [one, two]) {
      expect(await auditCount(r.taskId, "review.approved")).toBe(1);
      expect(await sideEffects(r.taskId)).toBe(1);
    }
    expect(await auditCount(changed.taskId, "review.approved")).toBe(0);
    expect(await sideEffects(changed.taskId)).toBe(0);
  });

  it("takes at most 50 requests and each one once; an unknown request, a missing digest and a reviewer the request does not offer are refused", async () => {
    const lena = await viewer(LEADS[0]);
    const now = at(MIN);
    const a = await refund("bulk-a");
    const b = await refund("bulk-b");
    const c = await refund("bulk-c");
    const shown = new Map((await inboxPage(lena, parseInboxParams({}), now)).items.map((i) => [i.id, i.argumentsDigest]));
    const item = (r: { requestId: string }) => ({ requestId: r.requestId, argumentsDigest: shown.get(r.requestId) ?? "" });

    // Fifty unknown requests fill the batch: the fifty-first, approvable, is not looked at.
    const unknown = Array.from({ length: 50 }, (_, i) => ({ requestId: `no-such-request-${i}`, argumentsDigest: "x" }));
    const capped = await approveMany(lena.id, [...unknown, item(a)], now);
    expect(capped).toHaveLength(50);
    expect(capped[0]).toEqual({ requestId: "no-such-request-0", summary: "unknown request", ok: false, message: "No such request." });
    expect(await approvalsOf(a.requestId)).toBe(0);

    // The same request twice is one review and one answer.
    const twice = await approveMany(lena.id, [item(a), item(a)], now);
    expect(twice.map((r) => [r.requestId, r.ok])).toEqual([[a.requestId, true]]);
    expect(await approvalsOf(a.requestId)).toBe(1);
    expect(await sideEffects(a.taskId)).toBe(1);

    const noDigest = await approveMany(lena.id, [{ requestId: b.requestId, argumentsDigest: "" }], now);
    expect(noDigest[0]).toMatchObject({ ok: false, message: "Its arguments are not the ones you were shown: open it to review it." });
    // A treasury reviewer is not offered a refund: the review itself refuses, in its own words.
    const tara = await viewer(TREASURY[0]);
    const notOffered = await approveMany(tara.id, [item(c)], now);
    expect(notOffered[0]).toMatchObject({ requestId: c.requestId, ok: false, message: expect.stringMatching(/support-leads/) });
    expect(notOffered[0].summary).not.toBe("unknown request");
    // A request that needs a passkey is approved on its own page only.
    await db().approvalRequest.update({ where: { id: b.requestId }, data: { requirePasskey: true } });
    const passkey = await approveMany(lena.id, [item(b)], now);
    expect(passkey[0]).toMatchObject({ ok: false, message: "This request needs more than one approval, a typed confirmation or a passkey: open it to approve it." });
    for (const r of [b, c]) {
      expect(await approvalsOf(r.requestId)).toBe(0);
      expect(await sideEffects(r.taskId)).toBe(0);
    }
  });

  it("a request that needs two approvals is never approved in bulk, even when asked for with its own digest", async () => {
    const tara = await viewer(TREASURY[0]);
    const wire = await bigWire("bulk-wire");
    const page = await inboxPage(tara, parseInboxParams({}), at(MIN));
    const item = page.items.find((i) => i.id === wire.requestId)!;
    expect(item.bulk).toBe(false);
    const [res] = await approveMany(tara.id, [{ requestId: wire.requestId, argumentsDigest: item.argumentsDigest }], at(MIN));
    expect(res).toMatchObject({ ok: false, message: expect.stringMatching(/open it to approve it/) });
    expect(await approvalsOf(wire.requestId)).toBe(0);
  });
});
