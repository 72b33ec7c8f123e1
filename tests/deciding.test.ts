/**
 * Deciding well on the request page (lib/inbox/facts, consequence, high-risk): the facts that decide (the resource
 * as it is now through the tool catalog, other pending requests on it, a request that can no longer run as asked
 * flagged), the consequence of the click (the final approver is told what approving does, the first of two that one
 * more is needed), the typed confirmation only for the approval that completes a high-risk quorum (checked again
 * under the request's lock), the real reason after a re-check refused an approved call, and who decided or that it
 * expired.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { completesQuorum, consequenceOf } from "../lib/inbox/consequence";
import { factsFor, factLines } from "../lib/inbox/facts";
import { checkConfirmation, confirmationFor, confirmationRefusal, confirms } from "../lib/inbox/high-risk";
import { inboxPage } from "../lib/inbox/inbox";
import { describeOutcome, badgeStatus } from "../lib/inbox/outcome";
import { parseInboxParams } from "../lib/inbox/params";
import { requestFor, whyCannotAct } from "../lib/inbox/queries";
import { decide } from "../lib/tasks/decide";
import { gated, principal, resetDb, userId, viewer } from "./support/db";
import { T0 } from "./support/proof";

const at = (sec: number) => new Date(T0.getTime() + sec * 1000);
/** Amounts are asserted by the words around them; the figure may or may not carry thousands separators. */
const USD_30000 = "USD 30,?000\\.00";

const refund = async (amount: number, now: Date) => gated(await principal("support-bot"), "issue_refund", { order_id: "O-4410", amount }, now);
const wire = async (to: string, amount: number, now: Date) => gated(await principal("ops-bot"), "wire_transfer", { to, amount }, now);

beforeEach(resetDb);

describe("the facts that decide: the order as it is now", () => {
  it("total, what is left, refunds issued and other pending refunds; flagged once it can no longer run as asked", async () => {
    const a = await refund(300, at(0));
    const b = await refund(250, at(1));
    const lena = await viewer("lena.lead@countersign.test");

    const before = (await factsFor(b.taskId, at(2)))!;
    expect(before.facts).toEqual([
      { label: "Order total", value: "EUR 520.00" },
      { label: "Left to refund", value: "EUR 520.00" },
      { label: "Refunds issued", value: "none" },
      { label: "Other pending refund requests", value: "1 request, EUR 300.00" },
    ]);
    expect(before.related.map((r) => r.requestId)).toEqual([a.requestId]);
    expect(before.related[0]!.summary).toBe("EUR 300.00 refund on order O-4410");
    expect(before.blocked).toBeNull();
    expect(before.caution).toMatch(/add up to EUR 550\.00, more than the EUR 520\.00 left: not all of them can run/);
    expect(before.effect).toEqual({ does: "refunds EUR 250.00 on order O-4410", button: "refund EUR 250.00" });

    // A runs: B no longer fits what is left.
    expect(await decide({ requestId: a.requestId, reviewerId: lena.id, decision: "approve" }, at(3))).toMatchObject({ disposition: "approved-executed" });
    const after = (await factsFor(b.taskId, at(4)))!;
    expect(after.facts).toContainEqual({ label: "Left to refund", value: "EUR 220.00" });
    expect(after.facts).toContainEqual({ label: "Refunds issued", value: "1 refund, EUR 300.00" });
    expect(after.facts).toContainEqual({ label: "Other pending refund requests", value: "none" });
    expect(after.related).toEqual([]);
    expect(after.blocked).toBe("Order O-4410 has EUR 220.00 left to refund; this refund is EUR 250.00.");

    // The page and the inbox row say so.
    const view = (await requestFor(b.requestId, lena, at(4)))!;
    expect(view.facts?.blocked).toBe(after.blocked);
    expect(view.consequence).toMatchObject({ final: true, approveLabel: "Approve" });
    expect(view.consequence!.message).toMatch(/cannot run as asked: Order O-4410 has EUR 220\.00 left to refund.* Approving would not run it\./);
    const row = (await inboxPage(lena, parseInboxParams({}), at(4))).items.find((i) => i.id === b.requestId)!;
    expect(row.facts).toBe("Cannot run as asked: Order O-4410 has EUR 220.00 left to refund; this refund is EUR 250.00.");
  });

  it("after an approval whose re-check refused it, the real reason is stored and shown, never as a plain approval", async () => {
    const a = await refund(300, at(0));
    const b = await refund(250, at(1));
    const lena = await userId("lena.lead@countersign.test");
    await decide({ requestId: a.requestId, reviewerId: lena, decision: "approve" }, at(2));
    const r = await decide({ requestId: b.requestId, reviewerId: lena, decision: "approve" }, at(3));
    expect(r).toMatchObject({ ok: true, requestStatus: "approved", disposition: "denied-not-executed" });
    if (!r.ok) return;
    expect(r.denialDetail).toBe("Order O-4410 has EUR 220.00 left to refund; EUR 250.00 is more than that.");
    expect(r.resultText).toContain("EUR 220.00 left to refund");
    expect(await db().refund.count({ where: { orderId: "O-4410" } })).toBe(1);

    const view = (await requestFor(b.requestId, await viewer("sam.lead@countersign.test"), at(4)))!;
    expect(view.outcome).toMatchObject({ tone: "warning", title: "Approved, but it did not run: Order O-4410 has EUR 220.00 left to refund; EUR 250.00 is more than that." });
    expect(view.badge).toBe("not run");
    expect(view.timeline.map((e) => e.title).join("\n")).toContain("EUR 220.00 left to refund");
    expect(badgeStatus("approved", "approved-executed")).toBe("approved");
    expect(describeOutcome({ tool: "issue_refund", requestStatus: "approved", disposition: "denied-not-executed", approvals: 1, approvalsRequired: 1 }).tone).not.toBe("success");
  });
});

describe("the facts that decide: what was sent to the account", () => {
  it("transfers to the account in the last 30 days and the other pending transfers to it", async () => {
    const old = new Date(at(0).getTime() - 31 * 86_400_000);
    await db().transfer.createMany({
      data: [
        { toAccount: "acct-991", amountCents: 1_200_000n, currency: "USD", createdAt: at(-3600) },
        { toAccount: "acct-991", amountCents: 50_000n, currency: "USD", createdAt: at(-7200) },
        { toAccount: "acct-991", amountCents: 9_900_000n, currency: "USD", createdAt: old },
        { toAccount: "acct-other", amountCents: 7_700_000n, currency: "USD", createdAt: at(-60) },
      ],
    });
    const first = await wire("acct-991", 30_000, at(0));
    const second = await wire("acct-991", 26_000, at(1));
    const f = (await factsFor(second.taskId, at(2)))!;
    expect(f.facts[0]!.label).toBe("Sent to acct-991 in the last 30 days");
    expect(f.facts[0]!.value).toMatch(/^USD 12,?500\.00 in 2 transfers$/);
    expect(f.facts[1]!.value).toMatch(new RegExp(`^1 request, ${USD_30000}$`));
    expect(f.related.map((r) => r.requestId)).toEqual([first.requestId]);
    expect(f.blocked).toBeNull();
    const lines = await factLines([second.taskId], ["wire_transfer"], at(2));
    expect(lines.get(second.taskId)).toMatch(/^30 days to acct-991: USD 12,?500\.00 in 2 transfers; 1 other pending/);
  });

  it("a tool without a facts hook (a gateway tool) shows none and costs no statement for the inbox", async () => {
    expect((await factLines(["00000000-0000-4000-8000-000000000000"], ["everything__echo"], at(0))).size).toBe(0);
  });
});

describe("the consequence of the click", () => {
  it("the first of two is told one more is needed; the final approver what approving does, on the button too", async () => {
    const w = await wire("acct-991", 30_000, at(0));
    const tara = await viewer("tara.treasury@countersign.test");
    const theo = await viewer("theo.treasury@countersign.test");
    const first = (await requestFor(w.requestId, tara, at(1)))!;
    expect(first.consequence).toEqual({ final: false, message: "One more approval is needed after yours; nothing runs until then.", approveLabel: "Approve" });
    expect(first.confirmation).toBeNull();

    await decide({ requestId: w.requestId, reviewerId: tara.id, decision: "approve" }, at(2));
    const last = (await requestFor(w.requestId, theo, at(3)))!;
    expect(last.consequence!.final).toBe(true);
    expect(last.consequence!.message).toMatch(new RegExp(`^You are the final approver: approving sends ${USD_30000} to acct-991 now\\.$`));
    expect(last.consequence!.approveLabel).toMatch(new RegExp(`^Approve and send ${USD_30000}$`));
    expect(last.confirmation).toMatchObject({ what: "amount", expected: "30000.00", words: "the amount" });
  });

  it("wording for three approvals, and a tool that says nothing of its effect", () => {
    const effect = { does: "runs x with the arguments shown", button: "run it" };
    expect(consequenceOf({ approvals: 0, approvalsRequired: 3, effect }).message).toBe("2 more approvals are needed after yours; nothing runs until then.");
    expect(consequenceOf({ approvals: 2, approvalsRequired: 3, effect })).toEqual({
      final: true,
      message: "You are the final approver: approving runs x with the arguments shown now.",
      approveLabel: "Approve and run it",
    });
    expect(completesQuorum(0, 1)).toBe(true);
    expect(completesQuorum(0, 2)).toBe(false);
  });
});

describe("typed confirmation only for the approval that completes a high-risk quorum", () => {
  it("asks for a short meaningful part: the amount, the account, the last part of the path", () => {
    const last = { approvalsRequired: 2, approvals: 1 };
    expect(confirmationFor({ tool: "wire_transfer", arguments: { to: "acct-1", amount: 30000 }, ...last })).toMatchObject({ what: "amount", expected: "30000.00" });
    expect(confirmationFor({ tool: "x", arguments: { to: "acct-9" }, ...last })).toMatchObject({ what: "account", expected: "acct-9" });
    const path = confirmationFor({ tool: "delete_path", arguments: { path: "prod/logs/2026/" }, ...last })!;
    expect(path).toEqual({ what: "segment", expected: "2026", words: "the last part of the path" });
    expect(confirms(path, "2026")).toBe(true);
    expect(confirms(path, "prod/logs/2026")).toBe(false);
    // Not for the first of two, nor for a request that is not high-risk.
    expect(confirmationFor({ tool: "wire_transfer", arguments: { to: "acct-1", amount: 30000 }, approvalsRequired: 2, approvals: 0 })).toBeNull();
    expect(confirmationFor({ tool: "issue_refund", arguments: { order_id: "O-1", amount: 200 }, approvalsRequired: 1, approvals: 0 })).toBeNull();
  });

  it("the server checks it only for the final approval, and again under the lock when another approval landed first", async () => {
    const w = await wire("acct-991", 30_000, at(0));
    const tara = await userId("tara.treasury@countersign.test");
    const theo = await userId("theo.treasury@countersign.test");
    // Theo's page (and the pre-check) saw no approval yet: no confirmation asked.
    expect(await checkConfirmation(w.requestId, theo, null)).toEqual({ ok: true });
    // Tara approves meanwhile; Theo's approval now completes the quorum and is refused without the amount.
    await decide({ requestId: w.requestId, reviewerId: tara, decision: "approve", confirm: (r) => confirmationRefusal(r, null) }, at(1));
    expect(await db().review.count({ where: { requestId: w.requestId } })).toBe(1);
    // Tara again (another tab): her own approval does not make hers the final one; she is refused as having reviewed.
    expect(await checkConfirmation(w.requestId, tara, null)).toEqual({ ok: true });
    expect(await decide({ requestId: w.requestId, reviewerId: tara, decision: "approve", confirm: (r) => confirmationRefusal(r, null) }, at(1))).toEqual({
      ok: false,
      error: "You have already reviewed this request.",
    });
    const refused = await decide({ requestId: w.requestId, reviewerId: theo, decision: "approve", confirm: (r) => confirmationRefusal(r, null) }, at(2));
    expect(refused).toEqual({ ok: false, error: "This is a high-risk request and your approval runs it: type the amount (30000.00) exactly to confirm." });
    expect(await checkConfirmation(w.requestId, theo, "3000")).toMatchObject({ ok: false });
    expect(await db().review.count({ where: { requestId: w.requestId } })).toBe(1);
    const ok = await decide({ requestId: w.requestId, reviewerId: theo, decision: "approve", confirm: (r) => confirmationRefusal(r, "30,000.00") }, at(3));
    expect(ok).toMatchObject({ ok: true, requestStatus: "approved", disposition: "approved-executed" });
  });
});

describe("races and edges: who decided and when; an expired request says it expired", () => {
  it("a reviewer whose colleague decided meanwhile is told who and when", async () => {
    const w = await wire("acct-991", 30_000, at(0));
    const tara = await userId("tara.treasury@countersign.test");
    await decide({ requestId: w.requestId, reviewerId: tara, decision: "deny", comment: "Unknown payee." }, at(5));
    const view = (await requestFor(w.requestId, await viewer("theo.treasury@countersign.test"), at(6)))!;
    expect(view.cannotAct).toBe("Tara Treasury denied this request.");
    expect(view.decidedBy).toEqual({ name: "Tara Treasury", decision: "deny", at: at(5).toISOString() });
    expect(view.consequence).toBeNull();
  });

  it("past its deadline, or marked expired, a request says it expired, not that it was decided", async () => {
    const w = await wire("acct-991", 30_000, at(0));
    const theo = await viewer("theo.treasury@countersign.test");
    const later = (await requestFor(w.requestId, theo, at(30 * 86_400)))!;
    expect(later.cannotAct).toMatch(/^This request expired: nobody decided it before its deadline/);
    const r = { status: "expired", approverGroup: "treasury", requesterUserId: "someone", deadline: at(10) };
    expect(whyCannotAct(r, [], theo, at(20), true)).toMatch(/expired/);
    expect(whyCannotAct(r, [], theo, at(20), true)).not.toMatch(/already/);
  });
});
