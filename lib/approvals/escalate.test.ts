/**
 * Escalation: a rule's escalation time and fallback group are stored on the request it opens; a request with no
 * decision at that time is offered to the fallback group too, once (one conditional update, so racing sweeps
 * escalate it once), audited and announced to the fallback group's reviewers and the admins. Four-eyes holds:
 * the requester is never eligible, even as a member of the fallback group.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { db } from "../db/client";
import { saveRuleVersion, type RuleInput } from "../policy/save-rule";
import { reviewRequest } from "./review";
import { escalateDue, escalateRequest, escalationOf } from "./escalate";
import { eligibleReviewerIds } from "./eligibility";
import { sweep } from "../execution/sweep";
import { inboxPage } from "../inbox/inbox";
import { parseInboxParams } from "../inbox/params";
import { requestFor } from "../inbox/queries";
import { activeRuleFields, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { HOUR, LEADS, MIN, T0, TREASURY, at, freshOrder, gatedRefund, sideEffects } from "../../tests/support/proof";

const ADMIN = "admin@countersign.test";
const REQUESTER = "rita.requester@countersign.test";

beforeEach(async () => {
  await resetDb();
  // Email on (nothing is delivered in these tests: the outbox rows are what they check).
  process.env.COUNTERSIGN_SMTP_URL = "smtp://127.0.0.1:9";
  await escalateRefunds();
});
afterEach(() => {
  delete process.env.COUNTERSIGN_SMTP_URL;
});

/** Refunds over the limit escalate to treasury after an hour without a decision. */
async function escalateRefunds(changes: Partial<RuleInput> = {}): Promise<void> {
  await saveRuleVersion({ ...(await activeRuleFields("refund-over-limit")), escalateAfterSec: 3600, fallbackGroup: "treasury", ...changes }, await userId(ADMIN), T0);
}

async function decide(requestId: string, email: string, now: Date, decision: "approve" | "deny" = "approve") {
  return reviewRequest({ requestId, reviewerId: await userId(email), decision, comment: decision === "deny" ? "Not justified" : undefined }, now);
}

const escalations = (requestId: string) => db().auditEvent.count({ where: { requestId, type: "request.escalated" } });

describe("escalation to a fallback group", () => {
  it("the request stores its rule's escalation at creation: when it escalates and to whom", async () => {
    const requestId = await requestIdOf(await gatedRefund("O-2289"));
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).toMatchObject({ escalateAt: at(HOUR), fallbackGroup: "treasury", escalatedAt: null });
  });

  it("escalation fires once after the time, not before; audited once, whatever the number of sweeps", async () => {
    const requestId = await requestIdOf(await gatedRefund("O-2289"));
    expect(await escalateDue(at(HOUR - 1))).toBe(0);
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).toMatchObject({ escalatedAt: null });
    expect(await escalations(requestId)).toBe(0);

    expect(await escalateDue(at(HOUR))).toBe(1);
    expect(await escalateDue(at(HOUR + MIN))).toBe(0);
    expect(await escalateRequest(requestId, at(2 * HOUR))).toBe(false);
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).toMatchObject({ escalatedAt: at(HOUR) });
    expect(await escalations(requestId)).toBe(1);
    const event = await db().auditEvent.findFirstOrThrow({ where: { requestId, type: "request.escalated" } });
    // The system escalates, not a person.
    expect(event).toMatchObject({ actor: "system", at: at(HOUR) });
    expect(event.data).toMatchObject({ approverGroup: "support-leads", fallbackGroup: "treasury" });
  });

  it("a pass escalates at most its batch, the earliest due first; the next pass takes the rest", async () => {
    // The first refund escalates after two hours; the rule is then shortened to one, so the second refund, asked a
    // minute later, is due first.
    await escalateRefunds({ escalateAfterSec: 2 * 3600 });
    const later = await requestIdOf(await gatedRefund("O-2289"));
    await escalateRefunds();
    const sooner = await requestIdOf(await gatedRefund(await freshOrder("O-7700", 30_000), at(MIN)));
    expect(await escalateDue(at(2 * HOUR), 1)).toBe(1);
    expect([await escalations(sooner), await escalations(later)]).toEqual([1, 0]);
    expect(await escalateDue(at(2 * HOUR), 1)).toBe(1);
    expect([await escalations(sooner), await escalations(later)]).toEqual([1, 1]);
  });

  it("a pass spends its batch only on requests it may escalate: not one already decided, nor one past its deadline", async () => {
    const decided = await requestIdOf(await gatedRefund("O-2289"));
    expect((await decide(decided, LEADS[0], at(MIN), "deny")).ok).toBe(true);
    const lapsed = await requestIdOf(await gatedRefund(await freshOrder("O-7700", 30_000), at(MIN)));
    const { deadline } = await db().approvalRequest.findUniqueOrThrow({ where: { id: lapsed } });
    // Asked half an hour before the lapsed request's deadline, so due half an hour after it; no sweep has expired
    // the lapsed request yet, and both it and the decided one were due before.
    const due = await requestIdOf(await gatedRefund(await freshOrder("O-7701", 30_000), at(-30 * MIN, deadline)));
    expect(await escalateDue(at(30 * MIN, deadline), 1)).toBe(1);
    expect([await escalations(decided), await escalations(lapsed), await escalations(due)]).toEqual([0, 0, 1]);
    expect(await db().approvalRequest.findUniqueOrThrow({ where: { id: lapsed } })).toMatchObject({ status: "pending", escalatedAt: null });
  });

  it("the sweeper escalates: a request still pending at its escalation time, not one already decided", async () => {
    const pending = await requestIdOf(await gatedRefund("O-2289"));
    const decided = await requestIdOf(await gatedRefund(await freshOrder("O-7700", 30_000)));
    expect((await decide(decided, LEADS[0], at(MIN), "deny")).ok).toBe(true);
    const report = await sweep(at(HOUR));
    expect(report.escalated).toBe(1);
    expect(await escalations(pending)).toBe(1);
    expect(await escalations(decided)).toBe(0);
  });

  it("a fallback group member can approve after escalation, not before; the approval counts and the refund runs", async () => {
    const taskId = await gatedRefund("O-2289");
    const requestId = await requestIdOf(taskId);
    const before = await decide(requestId, TREASURY[0], at(30 * MIN));
    expect(before).toEqual({ ok: false, error: "Only active support-leads reviewers can review this request." });

    await escalateDue(at(HOUR));
    expect(await decide(requestId, TREASURY[0], at(HOUR + MIN))).toMatchObject({ ok: true, requestStatus: "approved" });
    await sweep(at(HOUR + 2 * MIN));
    expect(await sideEffects(taskId)).toBe(1);
  });

  it("the fallback group sees it in its inbox and on the request page once escalated, not before", async () => {
    const requestId = await requestIdOf(await gatedRefund("O-2289"));
    const tara = { id: await userId(TREASURY[0]), role: "reviewer", groups: ["treasury"] };
    const listed = async (now: Date) => (await inboxPage(tara, parseInboxParams({}), now)).items.map((i) => [i.id, i.escalatedTo]);
    expect(await listed(at(30 * MIN))).toEqual([]);
    expect(await requestFor(requestId, tara, at(30 * MIN))).toBeNull();

    await escalateDue(at(HOUR));
    expect(await listed(at(HOUR + MIN))).toEqual([[requestId, "treasury"]]);
    const page = await requestFor(requestId, tara, at(HOUR + MIN));
    expect(page).toMatchObject({ cannotAct: null, escalation: { fallbackGroup: "treasury", escalatedAt: at(HOUR).toISOString() } });
    expect(page!.timeline.map((e) => e.title)).toContain("No decision in time: escalated to treasury, whose reviewers may decide it too");
  });

  it("any denial still stands after escalation, and approvers stay distinct", async () => {
    // Two approvals needed: a support lead and a treasury reviewer after escalation, then a denial wins nothing back.
    await escalateRefunds({ approvalsRequired: 2 });
    const requestId = await requestIdOf(await gatedRefund("O-2289"));
    await escalateDue(at(HOUR));
    expect(await decide(requestId, TREASURY[0], at(HOUR + MIN))).toMatchObject({ ok: true, requestStatus: "pending" });
    expect(await decide(requestId, TREASURY[0], at(HOUR + 2 * MIN))).toEqual({ ok: false, error: "You have already reviewed this request." });
    expect(await decide(requestId, LEADS[0], at(HOUR + 3 * MIN), "deny")).toMatchObject({ ok: true, requestStatus: "denied" });
    expect(await decide(requestId, TREASURY[1], at(HOUR + 4 * MIN))).toMatchObject({ ok: false });
  });

  it("the requester is still excluded even if they are in the fallback group", async () => {
    // Rita asks through the support bot; she is made a treasury reviewer, and the request escalates to treasury.
    const rita = await userId(REQUESTER);
    await db().user.update({ where: { id: rita }, data: { role: "reviewer", groups: ["treasury"] } });
    const requestId = await requestIdOf(await gatedRefund("O-2289"));
    await escalateDue(at(HOUR));
    const req = await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    expect(req.requesterUserId).toBe(rita);
    expect(await eligibleReviewerIds(req, at(HOUR))).toEqual(expect.arrayContaining([await userId(TREASURY[0])]));
    expect(await eligibleReviewerIds(req, at(HOUR))).not.toContain(rita);
    expect(await decide(requestId, REQUESTER, at(HOUR + MIN))).toEqual({ ok: false, error: "You cannot review your own request." });
    expect(await decide(requestId, TREASURY[1], at(HOUR + MIN))).toMatchObject({ ok: true, requestStatus: "approved" });
  });

  it("the fallback group's reviewers and the admins are told, once; the reviewers already asked are not told again", async () => {
    const requestId = await requestIdOf(await gatedRefund("O-2289"));
    await escalateDue(at(HOUR));
    await escalateDue(at(HOUR + MIN));
    const rows = await db().notification.findMany({ where: { requestId, kind: "escalated" }, select: { recipientUserId: true, channel: true } });
    const told = rows.map((r) => r.recipientUserId).sort();
    expect(told).toEqual([await userId(ADMIN), await userId(TREASURY[0]), await userId(TREASURY[1])].sort());
    expect(rows.every((r) => r.channel === "email")).toBe(true);
  });

  it("two sweeps racing escalate once: every request is escalated, audited and announced exactly once", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await requestIdOf(await gatedRefund(await freshOrder(`O-771${i}`, 30_000))));
    const won = await Promise.all([escalateDue(at(HOUR)), escalateDue(at(HOUR)), escalateDue(at(HOUR))]);
    expect(won.reduce((a, b) => a + b, 0)).toBe(ids.length);
    for (const id of ids) {
      expect(await escalations(id)).toBe(1);
      expect(await db().notification.count({ where: { requestId: id, kind: "escalated" } })).toBe(3);
    }
  });
});

describe("escalation settings of a rule", () => {
  it("an escalation needs both a time and a fallback group other than the approvers, and comes before the deadline", async () => {
    await expect(escalateRefunds({ fallbackGroup: null })).rejects.toThrow(/an escalation needs a fallback group/);
    await expect(escalateRefunds({ escalateAfterSec: null })).rejects.toThrow(/a fallback group needs an escalation time/);
    await expect(escalateRefunds({ fallbackGroup: "support-leads" })).rejects.toThrow(/must differ from the approver group/);
    await expect(escalateRefunds({ escalateAfterSec: 86_400 })).rejects.toThrow(/before the request deadline/);
  });
});

describe("escalationOf: what a request stores of its rule's escalation", () => {
  const rule = (escalateAfterSec: number | undefined, fallbackGroup: string | undefined) => ({ approverGroup: "treasury", escalateAfterSec, fallbackGroup });

  it("escalates after whole positive seconds to another group, and never otherwise", () => {
    expect(escalationOf(rule(7200, "support-leads"), T0)).toEqual({ escalateAt: at(2 * HOUR), fallbackGroup: "support-leads" });
    expect(escalationOf(rule(1, "support-leads"), T0)).toEqual({ escalateAt: at(1000), fallbackGroup: "support-leads" });
    const never = { escalateAt: null, fallbackGroup: null };
    expect(escalationOf(rule(7200, undefined), T0)).toEqual(never);
    expect(escalationOf(rule(7200, ""), T0)).toEqual(never);
    // Escalating to the group it is already offered to would add nobody.
    expect(escalationOf(rule(7200, "treasury"), T0)).toEqual(never);
    for (const after of [undefined, 0, -60, 1.5, Number.NaN]) expect(escalationOf(rule(after, "support-leads"), T0)).toEqual(never);
  });
});
