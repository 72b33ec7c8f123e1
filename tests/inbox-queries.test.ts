/**
 * The reviewer inbox and history queries (lib/inbox), the high-risk confirmation rule, the policy preview and the
 * admin audit listing: who sees what, filters, search, both sorts, keyset pages forward and back, and the outcome
 * of each decided request.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { createAgent } from "../lib/admin/agents";
import { authenticateAgent } from "../lib/auth/agents";
import { listAuditEvents } from "../lib/audit/list-events";
import { db } from "../lib/db/client";
import { confirmationFor, confirms, checkConfirmation } from "../lib/inbox/high-risk";
import { historyPage } from "../lib/inbox/history";
import { inboxPage } from "../lib/inbox/inbox";
import { parseHistoryParams, parseInboxParams } from "../lib/inbox/params";
import { requestFor } from "../lib/inbox/queries";
import { previewRule } from "../lib/policy/preview";
import { askRequester } from "../lib/tasks/ask";
import { callTool } from "../lib/tasks/call";
import { cancelTask } from "../lib/tasks/cancel";
import { decide } from "../lib/tasks/decide";
import { activeRuleFields, gated, principal, requestIdOf, resetDb, userId, viewer } from "./support/db";

import { T0 } from "./support/proof";
const at = (sec: number) => new Date(T0.getTime() + sec * 1000);

/** Wire transfers are the ops-bot's (Otto's agent): the demo policy limits the support-bot to refunds. */
const wire = async (n: number, now: Date, amount = 30_000 + n) => gated(await principal("ops-bot"), "wire_transfer", { to: `acct-q${n}`, amount }, now);
const ids = (p: { items: { id: string }[] }) => p.items.map((i) => i.id);

beforeEach(resetDb);

describe("the inbox lists what this reviewer may act on now", () => {
  it("their group only, not their own request, not one they already reviewed; approvals so far / needed", async () => {
    const tara = await viewer("tara.treasury@countersign.test");
    const theo = await viewer("theo.treasury@countersign.test");
    const lena = await viewer("lena.lead@countersign.test");
    const a = await wire(1, at(0));
    const { token } = await createAgent({ name: "tara-bot", userId: tara.id }, await userId("admin@countersign.test"), at(1));
    const own = await gated((await authenticateAgent(token))!, "wire_transfer", { to: "acct-own", amount: 50_000 }, at(2));

    const p = parseInboxParams({});
    expect(ids(await inboxPage(tara, p, at(3)))).toEqual([a.requestId]);
    expect(ids(await inboxPage(theo, p, at(3)))).toEqual([own.requestId, a.requestId]);
    expect(ids(await inboxPage(lena, p, at(3)))).toEqual([]);

    await decide({ requestId: a.requestId, reviewerId: tara.id, decision: "approve" }, at(4));
    expect(ids(await inboxPage(tara, p, at(5)))).toEqual([]);
    const theos = await inboxPage(theo, p, at(5));
    expect(theos.items.find((i) => i.id === a.requestId)).toMatchObject({ approvals: 1, approvalsRequired: 2, tool: "wire_transfer", requesterName: "Otto Ops", agentName: "ops-bot" });
    expect(theos.total).toBe(2);
  });

  it("a request past its deadline, or decided, leaves the inbox", async () => {
    const theo = await viewer("theo.treasury@countersign.test");
    const a = await wire(1, at(0));
    const b = await wire(2, at(1));
    await decide({ requestId: b.requestId, reviewerId: await userId("tara.treasury@countersign.test"), decision: "deny", comment: "no" }, at(2));
    expect(ids(await inboxPage(theo, parseInboxParams({}), at(3)))).toEqual([a.requestId]);
    expect(ids(await inboxPage(theo, parseInboxParams({}), at(3 * 86400)))).toEqual([]);
  });

  it("keyset pages forward and back, newest first and soonest deadline first", async () => {
    const theo = await viewer("theo.treasury@countersign.test");
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await wire(i, at(i))).requestId);
    const newest = [...made].reverse();

    const p1 = await inboxPage(theo, parseInboxParams({}), at(100), 3);
    expect(ids(p1)).toEqual(newest.slice(0, 3));
    expect(p1.prev).toBeNull();
    const p2 = await inboxPage(theo, parseInboxParams({ after: p1.next! }), at(100), 3);
    expect(ids(p2)).toEqual(newest.slice(3, 6));
    const p3 = await inboxPage(theo, parseInboxParams({ after: p2.next! }), at(100), 3);
    expect(ids(p3)).toEqual(newest.slice(6));
    expect(p3.next).toBeNull();
    const back = await inboxPage(theo, parseInboxParams({ before: p3.prev! }), at(100), 3);
    expect(ids(back)).toEqual(newest.slice(3, 6));
    const first = await inboxPage(theo, parseInboxParams({ before: back.prev! }), at(100), 3);
    expect(ids(first)).toEqual(newest.slice(0, 3));
    expect(first.prev).toBeNull();

    // Same deadline window for each, so the soonest deadline is the oldest request.
    const e1 = await inboxPage(theo, parseInboxParams({ sort: "expiring" }), at(100), 4);
    expect(ids(e1)).toEqual(made.slice(0, 4));
    const e2 = await inboxPage(theo, parseInboxParams({ sort: "expiring", after: e1.next! }), at(100), 4);
    expect(ids(e2)).toEqual(made.slice(4));
    expect(p1.total).toBe(7);
  });

  it("a reviewer in several groups gets one merged order across them, page after page", async () => {
    const lenaId = await userId("lena.lead@countersign.test");
    await db().user.update({ where: { id: lenaId }, data: { groups: ["support-leads", "treasury", "sre"] } });
    const lena = await viewer("lena.lead@countersign.test");
    const made: string[] = [];
    for (let i = 0; i < 6; i++) {
      made.push((await wire(i, at(2 * i))).requestId);
      made.push((await gated(await principal("ops-bot"), "deploy_service", { service: `svc-${i}`, environment: "production", version: "1.0.0" }, at(2 * i + 1))).requestId);
    }
    const newest = [...made].reverse();
    const seen: string[] = [];
    let after: string | undefined;
    for (let n = 0; n < 5; n++) {
      const page = await inboxPage(lena, parseInboxParams(after ? { after } : {}), at(100), 5);
      seen.push(...ids(page));
      if (!page.next) break;
      after = page.next;
    }
    expect(seen).toEqual(newest);
    const expiring = await inboxPage(lena, parseInboxParams({ sort: "expiring" }), at(100), 20);
    const deadlines = expiring.items.map((i) => i.deadline);
    expect(deadlines).toEqual([...deadlines].sort());
    expect(new Set(ids(expiring))).toEqual(new Set(made));
  });

  it("filters by tool, group and status, and searches arguments and people", async () => {
    const lenaId = await userId("lena.lead@countersign.test");
    await db().user.update({ where: { id: lenaId }, data: { groups: ["support-leads", "treasury"] } });
    const lena = await viewer("lena.lead@countersign.test");
    const w = await wire(1, at(0));
    const w2 = await wire(2, at(1));
    const r = await gated(await principal("support-bot"), "issue_refund", { order_id: "O-2289" }, at(2));

    expect(ids(await inboxPage(lena, parseInboxParams({ tool: "issue_refund" }), at(5)))).toEqual([r.requestId]);
    expect(ids(await inboxPage(lena, parseInboxParams({ group: "treasury" }), at(5)))).toEqual([w2.requestId, w.requestId]);
    expect(ids(await inboxPage(lena, parseInboxParams({ q: "acct-q2" }), at(5)))).toEqual([w2.requestId]);
    expect(ids(await inboxPage(lena, parseInboxParams({ q: "o-2289" }), at(5)))).toEqual([r.requestId]);
    expect(ids(await inboxPage(lena, parseInboxParams({ q: "otto" }), at(5)))).toEqual([w2.requestId, w.requestId]);
    expect(ids(await inboxPage(lena, parseInboxParams({ q: "rita" }), at(5)))).toEqual([r.requestId]);
    expect(ids(await inboxPage(lena, parseInboxParams({ q: "100%_" }), at(5)))).toEqual([]);

    await decide({ requestId: w.requestId, reviewerId: await userId("tara.treasury@countersign.test"), decision: "approve" }, at(6));
    expect(ids(await inboxPage(lena, parseInboxParams({ status: "partly-approved" }), at(7)))).toEqual([w.requestId]);
    expect(ids(await inboxPage(lena, parseInboxParams({ status: "new" }), at(7)))).toEqual([r.requestId, w2.requestId]);
    await askRequester({ requestId: w2.requestId, reviewerId: await userId("theo.treasury@countersign.test"), question: "Which invoice is this?" }, at(8));
    const open = await inboxPage(lena, parseInboxParams({ status: "question-open" }), at(9));
    expect(ids(open)).toEqual([w2.requestId]);
    expect(open.items[0].taskStatus).toBe("input_required");
  });

  it("ignores parameters it cannot read instead of failing", () => {
    expect(parseInboxParams({ sort: "sideways", status: "maybe", tool: "DROP TABLE", after: "%%%" })).toMatchObject({ sort: "newest", status: "all", tool: undefined });
  });
});

describe("history shows decided requests and what came of them", () => {
  it("executed, denied, expired and cancelled, filterable by outcome; reviewers see their groups, admins all", async () => {
    const tara = await userId("tara.treasury@countersign.test");
    const theo = await userId("theo.treasury@countersign.test");
    const executed = await wire(1, at(0));
    await decide({ requestId: executed.requestId, reviewerId: tara, decision: "approve" }, at(1));
    await decide({ requestId: executed.requestId, reviewerId: theo, decision: "approve" }, at(2));
    const denied = await wire(2, at(3));
    await decide({ requestId: denied.requestId, reviewerId: tara, decision: "deny", comment: "unknown account" }, at(4));
    const cancelled = await wire(3, at(5));
    await cancelTask(await principal("ops-bot"), cancelled.taskId, at(6));
    const refund = await gated(await principal("support-bot"), "issue_refund", { order_id: "O-2289" }, at(7));
    await decide({ requestId: refund.requestId, reviewerId: await userId("lena.lead@countersign.test"), decision: "approve" }, at(8));
    const expired = await wire(4, at(9));
    // The sweeper would do this at the deadline: the backend marks the request expired, the task ends denied.
    const { advanceTask } = await import("../lib/execution/advance");
    await advanceTask(expired.taskId, at(3 * 86400));

    const theoV = await viewer("theo.treasury@countersign.test");
    const mine = await historyPage(theoV, parseHistoryParams({}));
    expect(mine.items.map((i) => [i.id, i.outcome])).toEqual([
      [expired.requestId, "expired"],
      [cancelled.requestId, "cancelled"],
      [denied.requestId, "denied"],
      [executed.requestId, "executed"],
    ]);
    expect(mine.items.find((i) => i.id === executed.requestId)).toMatchObject({ ruleKey: "wire-over-25k", ruleVersion: 1, approvals: 2, disposition: "approved-executed" });
    expect(ids(await historyPage(theoV, parseHistoryParams({ outcome: "denied" })))).toEqual([denied.requestId]);
    const admin = await historyPage(await viewer("admin@countersign.test"), parseHistoryParams({}));
    expect(ids(admin)).toContain(refund.requestId);
    expect(ids(await historyPage(await viewer("admin@countersign.test"), parseHistoryParams({ tool: "issue_refund" })))).toEqual([refund.requestId]);
    const page1 = await historyPage(theoV, parseHistoryParams({}), 3);
    const page2 = await historyPage(theoV, parseHistoryParams({ after: page1.next! }), 3);
    expect([...ids(page1), ...ids(page2)]).toEqual(ids(mine));
    expect(ids(await historyPage(theoV, parseHistoryParams({ before: page2.prev! }), 3))).toEqual(ids(page1));
  });
});

describe("the request page", () => {
  it("shows the clocks, the rule version, questions with answers and the timeline through execution", async () => {
    const theo = await viewer("theo.treasury@countersign.test");
    const tara = await viewer("tara.treasury@countersign.test");
    const w = await wire(1, at(0));
    await askRequester({ requestId: w.requestId, reviewerId: theo.id, question: "Which invoice is this?" }, at(1));
    const { updateTask } = await import("../lib/tasks/update");
    const key = (await db().clarification.findFirstOrThrow({ where: { requestId: w.requestId } })).key;
    await updateTask(await principal("ops-bot"), w.taskId, { [key]: { action: "accept", content: { answer: "INV-77 <b>bold</b>" } } }, at(2));
    await decide({ requestId: w.requestId, reviewerId: tara.id, decision: "approve", comment: "ok" }, at(3));
    const pending = await requestFor(w.requestId, theo, at(4));
    expect(pending).toMatchObject({ cannotAct: null, canAsk: true, confirmation: { what: "amount", expected: "30001.00" }, approvals: 1, settled: false });
    expect(pending!.clarifications[0]).toMatchObject({ question: "Which invoice is this?", answer: "INV-77 <b>bold</b>", askedBy: "Theo Treasury" });
    await decide({ requestId: w.requestId, reviewerId: theo.id, decision: "approve" }, at(5));
    const done = await requestFor(w.requestId, theo, at(6));
    expect(done).toMatchObject({ status: "approved", disposition: "approved-executed", settled: true, cannotAct: "Theo Treasury gave the approval that decided this request.", ruleKey: "wire-over-25k", ruleVersion: 1 });
    expect(done!.approvalExpiresAt).toBe(new Date(at(5).getTime() + 4 * 3600_000).toISOString());
    expect(done!.timeline.map((e) => e.type)).toEqual([
      "request.created", "task.created", "task.input-requested", "task.input-received", "review.approved", "review.approved", "request.approved", "execution.claimed", "execution.completed",
    ]);
    expect(await requestFor(w.requestId, await viewer("lena.lead@countersign.test"), at(6))).toBeNull();
  });
});

describe("submission input", () => {
  it("the requester's justification and ticket reach the request page as given", async () => {
    const out = await callTool(await principal("ops-bot"), "wire_transfer", { to: "acct-input", amount: 30_000 }, { tasks: true, input: { justification: "Quarterly supplier payment <b>now</b>", ticket: "FIN-77" } }, at(0));
    if (out.kind !== "task") throw new Error("expected a task");
    const view = await requestFor(await requestIdOf(out.task.taskId), await viewer("theo.treasury@countersign.test"), at(1));
    expect(view!.input).toEqual({ justification: "Quarterly supplier payment <b>now</b>", ticket: "FIN-77" });
  });
});

describe("high-risk approvals need the amount or path typed (approvalsRequired >= 2), by the approval that completes the quorum", () => {
  it("names what to type and compares amounts to the cent", async () => {
    expect(confirmationFor({ tool: "issue_refund", arguments: { order_id: "O-1" }, approvalsRequired: 1, approvals: 0 })).toBeNull();
    const money = confirmationFor({ tool: "wire_transfer", arguments: { to: "acct-1", amount: 30000 }, approvalsRequired: 2, approvals: 1 })!;
    expect(money).toEqual({ what: "amount", expected: "30000.00", words: "the amount" });
    for (const ok of ["30000", "30000.00", "30,000.00", "USD 30000", " 30000.0 "]) expect(confirms(money, ok)).toBe(true);
    for (const bad of ["3000", "300000", "30000.01", "", "30000abc", "3e4"]) expect(confirms(money, bad)).toBe(false);
    const path = confirmationFor({ tool: "delete_path", arguments: { path: "prod/logs" }, approvalsRequired: 2, approvals: 1 })!;
    expect(path).toEqual({ what: "segment", expected: "logs", words: "the last part of the path" });
    expect(confirms(path, "logs")).toBe(true);
    expect(confirms(path, "log")).toBe(false);
    expect(confirmationFor({ tool: "deploy_service", arguments: { service: "x" }, approvalsRequired: 3, approvals: 2 })).toMatchObject({ what: "tool", expected: "deploy_service" });
    const w = await wire(1, at(0), 26_500.5);
    const theo = await userId("theo.treasury@countersign.test");
    // The first of two approvals runs nothing: no confirmation. The second does.
    expect(await checkConfirmation(w.requestId, theo, null)).toEqual({ ok: true });
    await decide({ requestId: w.requestId, reviewerId: await userId("tara.treasury@countersign.test"), decision: "approve" }, at(1));
    expect(await checkConfirmation(w.requestId, theo, "26500.50")).toEqual({ ok: true });
    expect(await checkConfirmation(w.requestId, theo, null)).toMatchObject({ ok: false });
  });
});

describe("policy preview", () => {
  it("says what the current version and a draft decide for given arguments, without saving anything", async () => {
    const draft = await activeRuleFields("refund-over-limit");
    const raised = await previewRule({ ...draft, value: "20000" }, { order_id: "O-2289" }, T0);
    expect(raised).toMatchObject({ ok: true, current: { decision: "requestable" }, draft: { decision: "allow" }, draftVersion: 2 });
    const two = await previewRule({ ...draft, approvalsRequired: 2 }, { order_id: "O-2289" }, T0);
    expect(two).toMatchObject({ ok: true, draft: { decision: "requestable", requirements: { approvalsRequired: 2 } } });
    expect(await previewRule({ ...draft, approverGroup: null }, { order_id: "O-2289" }, T0)).toMatchObject({ ok: false, error: expect.stringMatching(/approver group/) });
    expect(await previewRule(draft, { order_id: "O-9" }, T0)).toMatchObject({ ok: false, error: expect.stringMatching(/does not exist/) });
    expect(await db().policyRule.count({ where: { ruleKey: "refund-over-limit" } })).toBe(1);
  });
});

describe("admin audit listing", () => {
  it("filters by type, actor and task, newest first, in keyset pages", async () => {
    const w = await wire(1, at(0));
    await decide({ requestId: w.requestId, reviewerId: await userId("tara.treasury@countersign.test"), decision: "deny", comment: "no" }, at(1));
    const all = await listAuditEvents({});
    expect(all.events.map((e) => e.seq)).toEqual([...all.events.map((e) => e.seq)].sort((a, b) => b - a));
    const mine = await listAuditEvents({ taskId: w.taskId });
    expect(mine.events.every((e) => e.taskId === w.taskId)).toBe(true);
    expect((await listAuditEvents({ type: "review.denied" })).events).toHaveLength(1);
    const p1 = await listAuditEvents({ taskId: w.taskId }, { size: 2 });
    const p2 = await listAuditEvents({ taskId: w.taskId }, { size: 2, before: p1.nextBefore! });
    expect([...p1.events, ...p2.events].map((e) => e.seq)).toEqual(mine.events.slice(0, 4).map((e) => e.seq));
  });
});
