/**
 * Preview against reality, outcome by outcome: each way a draft can change a decision is counted where it belongs
 * and said in the sentence; history windows are measured as they stood when each call was made (per agent, per
 * user, within the window, before the call, a voided call only until it was voided, in the call's own currency);
 * the bounds and the records that cannot be judged.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { DEMO_DOCUMENT } from "../lib/policy/demo-policy";
import { PolicyDocument } from "../lib/policy/document";
import { previewImpact } from "../lib/policy/impact";
import { callTool } from "../lib/tasks/call";
import { cancelTask } from "../lib/tasks/cancel";
import type { Principal } from "../lib/tasks/types";
import { principal, resetDb } from "./support/db";
import { preview, refund, refundRuleDraft, steadyDocument, withWindow } from "./support/impact";
import { at, HOUR, MIN, T0 } from "./support/proof";

beforeEach(resetDb);



/**
 * Two refunds above the EUR 150.00 limit by the support bot: one still waiting for a lead (a pending request), one
 * cancelled (a call of the last 30 days, judged as it was made).
 */
async function oneCallOnePending(): Promise<void> {
  const cancelled = await refund("O-1145", 170, at(-HOUR));
  if (cancelled.kind !== "task") throw new Error(`expected a task, got ${cancelled.kind}`);
  expect(await cancelTask(await principal(), cancelled.task.taskId, at(-HOUR + MIN))).toMatchObject({ ok: true });
  expect((await refund("O-4410", 160, at(-30 * MIN))).kind).toBe("task");
}

describe("what a draft would change, outcome by outcome", () => {
  it("other approval: another number of approvers or another group, for a call and for a pending request", async () => {
    await oneCallOnePending();
    const two = await preview(await refundRuleDraft({ approvalsRequired: 2 }), T0);
    expect(two.calls).toMatchObject({ considered: 1, changed: 1, otherApproval: 1, toApproval: 0 });
    expect(two.pending).toMatchObject({ considered: 1, changed: 1, otherApproval: 1, toApproval: 0 });
    expect(two.sentence).toBe(
      "1 call would have needed different approval; 1 pending request would need different approval (1 call of the last 30 days and 1 pending request checked).",
    );
    expect(two.changes.map((c) => [c.source, c.beforeText, c.afterText])).toEqual([
      ["call", "needs 1 approval from support-leads", "needs 2 approvals from support-leads"],
      ["pending", "needs 1 approval from support-leads", "needs 2 approvals from support-leads"],
    ]);
    const sre = await preview(await refundRuleDraft({ approverGroup: "sre" }), T0);
    expect([sre.calls.otherApproval, sre.pending.otherApproval]).toEqual([1, 1]);
    expect(sre.changes.map((c) => c.afterText)).toEqual(["needs 1 approval from sre", "needs 1 approval from sre"]);
  });

  it("refused: a deny rule in the draft", async () => {
    await oneCallOnePending();
    const denied = await preview(await refundRuleDraft({ effect: "deny", approverGroup: null, approvalsRequired: 0 }), T0);
    expect(denied.calls).toMatchObject({ changed: 1, toDeny: 1, otherApproval: 0, toApproval: 0, offApproval: 0, toAllow: 0 });
    expect(denied.pending).toMatchObject({ changed: 1, toDeny: 1, otherApproval: 0 });
    expect(denied.sentence).toBe("1 call would have been refused; 1 pending request would be refused (1 call of the last 30 days and 1 pending request checked).");
    expect(denied.changes.map((c) => [c.before, c.after, c.afterText])).toEqual([
      ["requestable", "deny", "refused"],
      ["requestable", "deny", "refused"],
    ]);
  });

  it("no longer needing approval: the rule retired in the draft, which replaces the current version", async () => {
    await oneCallOnePending();
    const retired = await preview(await refundRuleDraft({ active: false }), T0);
    expect(retired.draftVersion).toBe(2);
    expect(retired.calls).toMatchObject({ changed: 1, offApproval: 1, toAllow: 0 });
    expect(retired.pending).toMatchObject({ changed: 1, offApproval: 1, toAllow: 0 });
    expect(retired.sentence).toBe(
      "1 call would no longer have needed approval; 1 pending request would no longer need it (1 call of the last 30 days and 1 pending request checked).",
    );
  });

  it("run at once instead of refused: a call the current version refuses, which the draft lets through", async () => {
    await oneCallOnePending();
    // The current version refuses both (written past the console's checks, as an older policy could have been).
    await db().policyRule.updateMany({ where: { ruleKey: "refund-over-limit", active: true }, data: { effect: "deny" } });
    const allowed = await preview(await refundRuleDraft({ effect: "requestable", value: "20000" }), T0);
    expect(allowed.calls).toMatchObject({ changed: 1, toAllow: 1, offApproval: 0 });
    expect(allowed.pending).toMatchObject({ changed: 1, toAllow: 1, offApproval: 0 });
    expect(allowed.sentence).toBe("1 call would have run at once instead of being refused; 1 pending request would run at once (1 call of the last 30 days and 1 pending request checked).");
    expect(allowed.changes.map((c) => [c.beforeText, c.afterText])).toEqual([
      ["refused", "runs at once"],
      ["refused", "runs at once"],
    ]);
  });

  it("nothing changes: the sentence says so and what was checked; a request waiting for its requester's answer is pending too", async () => {
    await oneCallOnePending();
    await db().task.updateMany({ where: { status: "working" }, data: { status: "input_required" } });
    const same = await preview(await refundRuleDraft(), T0);
    expect(same.changes).toEqual([]);
    expect(same.listedAll).toBe(true);
    expect(same.pending).toMatchObject({ considered: 1, changed: 0, truncated: false });
    expect(same.sentence).toBe("No call of the last 30 days and no pending request would be decided differently (1 call of the last 30 days and 1 pending request checked).");
  });

  it("a draft's version is the next one of its rule key or of the document, 1 when there is none", async () => {
    expect((await preview({ kind: "document", body: steadyDocument() }, T0)).draftVersion).toBe((await db().policyDocument.count()) + 1);
    expect((await preview(await refundRuleDraft({ ruleKey: "refund-new", value: "90000" }), T0)).draftVersion).toBe(1);
    await db().policyDocument.deleteMany();
    expect((await preview({ kind: "document", body: steadyDocument() }, T0)).draftVersion).toBe(1);
  });

  it("a draft document that is not one is refused with the field at fault", async () => {
    const bad = await previewImpact({ kind: "document", body: { ...steadyDocument(), policies: 42 } }, T0);
    expect(bad).toMatchObject({ ok: false, problems: [{ message: expect.stringMatching(/^policies: /) }] });
  });
});

describe("history as it stood when each call was made", () => {
  it.each(["agent", "user"] as const)("per %s: only the calls in the window before each call, by the same one, count", async (per) => {
    const ops = await principal("ops-bot");
    expect((await refund("O-1021", 10, at(-3 * HOUR))).kind).toBe("result"); // the support bot, outside the hour before any call below
    expect((await refund("O-1145", 100, at(-30 * MIN))).kind).toBe("result"); // the support bot
    expect((await refund("O-3107", 100, at(-20 * MIN), ops)).kind).toBe("result"); // another agent, another owner
    expect((await refund("O-2289", 100, at(-10 * MIN))).kind).toBe("result"); // the support bot again, 20 minutes later
    const impact = await preview(withWindow({ per, length: "1h" }, "context.history.recent_refunds.count >= 1"), T0);
    expect(impact.calls).toMatchObject({ considered: 4, changed: 1, toApproval: 1 });
    expect(impact.changes.map((c) => c.summary)).toEqual([expect.stringMatching(/O-2289/)]);
  });

  it("per resource: a record of another type of resource with the same id is another resource", async () => {
    const bot = await principal();
    await db().callRecord.create({
      data: { tool: "issue_refund", agentId: bot.agentId, userId: bot.userId, resourceType: "invoice", resourceId: "O-1145", amountMinor: 100n, currency: "EUR", status: "executed", createdAt: at(-20 * MIN) },
    });
    expect((await refund("O-1145", 100, at(-10 * MIN))).kind).toBe("result");
    const impact = await preview(withWindow({ per: "resource", length: "1h" }, "context.history.recent_refunds.count >= 1"), T0);
    expect(impact.calls).toMatchObject({ considered: 1, skipped: 1, changed: 0 });
  });

  it("a call voided later still counted for the calls made while it waited, and not for those after", async () => {
    const first = await refund("O-4410", 160, at(-50 * MIN));
    if (first.kind !== "task") throw new Error("expected a task");
    expect((await refund("O-1145", 100, at(-45 * MIN))).kind).toBe("result"); // while the first one waited
    expect(await cancelTask(await principal(), first.task.taskId, at(-40 * MIN))).toMatchObject({ ok: true });
    expect((await refund("O-3107", 100, at(-30 * MIN))).kind).toBe("result"); // after it was voided
    const one = await preview(withWindow({ per: "agent", length: "1h" }, "context.history.recent_refunds.count >= 1"), T0);
    expect(one.changes.map((c) => c.summary)).toEqual([expect.stringMatching(/O-3107/), expect.stringMatching(/O-1145/)]);
    // The last call saw one counted call before it (the second), not two.
    const two = await preview(withWindow({ per: "agent", length: "1h" }, "context.history.recent_refunds.count >= 2"), T0);
    expect(two.changes).toEqual([]);
  });

  it("totals add up the calls in the call's own currency; records that cannot be judged are skipped but still counted", async () => {
    const bot = await principal();
    const row = { tool: "issue_refund", agentId: bot.agentId, userId: bot.userId, resourceType: "order", status: "executed" };
    // A large USD record with no snapshot (counted, never judged), and one whose snapshot does not fit the tool.
    await db().callRecord.create({ data: { ...row, resourceId: "O-9001", amountMinor: 1_000_000n, currency: "USD", createdAt: at(-20 * MIN) } });
    await db().callRecord.create({
      data: { ...row, resourceId: "O-9002", amountMinor: 100n, currency: "EUR", createdAt: at(-19 * MIN), snapshot: { args: { order_id: 7 }, resource: { type: "order", id: "O-9002", properties: {} } } },
    });
    await db().callRecord.create({
      data: { ...row, resourceId: "O-9003", amountMinor: 100n, currency: "EUR", createdAt: at(-18 * MIN), snapshot: { args: { order_id: "O-9003" }, resource: { type: "order", id: 9003 } } },
    });
    expect((await refund("O-1145", 100, at(-10 * MIN))).kind).toBe("result");
    const impact = await preview(withWindow({ per: "agent", length: "1h" }, "context.history.recent_refunds.total + resource.amount.minor > 20000"), T0);
    expect(impact.calls).toMatchObject({ considered: 1, skipped: 3, changed: 0 });
  });
});

describe("bounds and the calls a preview reads", () => {
  it("at most 200 changed calls are listed, all of them counted; a revoked agent's calls are skipped", async () => {
    const bot = await principal();
    const ops = await principal("ops-bot");
    const record = (i: number, agent: Principal) => {
      const order = `O-${5000 + i}`;
      const properties = { amount_cents: 10000, currency: "EUR", refundable_cents: 20000, total_cents: 20000 };
      return db().callRecord.create({
        data: {
          tool: "issue_refund", agentId: agent.agentId, userId: agent.userId, resourceType: "order", resourceId: order, amountMinor: 10000n, currency: "EUR",
          status: "executed", createdAt: at(-HOUR - i * 1000), snapshot: { args: { order_id: order, amount: 100 }, resource: { type: "order", id: order, properties } },
        },
      });
    };
    for (let i = 0; i < 201; i++) await record(i, bot);
    await record(201, ops);
    await db().agent.update({ where: { id: ops.agentId }, data: { revokedAt: at(-MIN) } });
    const impact = await preview(await refundRuleDraft({ value: "5000" }), T0);
    expect(impact.calls).toMatchObject({ considered: 201, skipped: 1, changed: 201, toApproval: 201 });
    expect(impact.changes).toHaveLength(200);
    expect(impact.listedAll).toBe(false);
  });

  it("pending requests that cannot be judged now are skipped: the agent revoked, an order with nothing left to refund", async () => {
    const ops = await principal("ops-bot");
    expect((await refund("O-1145", 160, at(-3 * MIN), ops)).kind).toBe("task");
    expect((await refund("O-2289", 160, at(-2 * MIN))).kind).toBe("task");
    expect((await refund("O-4410", 160, at(-MIN))).kind).toBe("task");
    // Written past the product's own paths (revoking withdraws the agent's tasks): what a preview may still meet.
    await db().agent.update({ where: { id: ops.agentId }, data: { revokedAt: at(-MIN) } });
    await db().order.update({ where: { id: "O-2289" }, data: { refundedCents: 18000 } });
    const impact = await preview(await refundRuleDraft({ value: "20000" }), T0);
    expect(impact.pending).toMatchObject({ considered: 1, skipped: 2, offApproval: 1 });
    expect(impact.changes.map((c) => c.summary)).toEqual([expect.stringMatching(/O-4410/)]);
  });

  it("the calls of the last 30 days up to now: a record dated after now is not one of them", async () => {
    expect((await refund("O-1145", 100, at(-MIN))).kind).toBe("result");
    expect((await refund("O-3107", 100, at(HOUR))).kind).toBe("result");
    const impact = await preview(await refundRuleDraft({ value: "5000" }), T0);
    expect(impact.calls).toMatchObject({ considered: 1, toApproval: 1 });
  });

  it("exactly as many calls as the limit is not cut", async () => {
    for (const [order, when] of [["O-1145", at(-3 * MIN)], ["O-3107", at(-2 * MIN)]] as const) expect((await refund(order, 100, when)).kind).toBe("result");
    const exact = await preview(await refundRuleDraft({ value: "5000" }), T0, 2);
    expect(exact.calls).toMatchObject({ considered: 2, truncated: false });
    expect(exact.sentence).not.toMatch(/only the most recent/);
  });

  it("more pending requests than the limit: the most recent are judged, and the sentence says so", async () => {
    for (const [order, when] of [["O-2289", at(-2 * MIN)], ["O-4410", at(-MIN)]] as const) expect((await refund(order, 160, when)).kind).toBe("task");
    const cut = await preview(await refundRuleDraft({ value: "20000" }), T0, 1);
    expect(cut.calls).toMatchObject({ considered: 0, truncated: false });
    expect(cut.pending).toMatchObject({ considered: 1, truncated: true, offApproval: 1 });
    expect(cut.changes.map((c) => c.summary)).toEqual([expect.stringMatching(/O-4410/)]);
    expect(cut.sentence).toBe("1 pending request would no longer need it (0 calls of the last 30 days and 1 pending request checked; only the most recent 1 of each were checked).");
  });

  it("a call is judged at the time it was made: an after-hours rule does not reach a deploy made in office hours", async () => {
    const ops = await principal("ops-bot");
    // 11:00 in Berlin: one SRE's approval; the request was cancelled, so it is a call of the last 30 days.
    const deploy = await callTool(ops, "deploy_service", { service: "checkout-api", environment: "production", version: "1.4.2" }, { tasks: true }, T0);
    if (deploy.kind !== "task") throw new Error("expected a task");
    expect(await cancelTask(ops, deploy.task.taskId, at(MIN))).toMatchObject({ ok: true });
    // Previewed at 21:00 in Berlin, with the document's after-hours rule.
    const impact = await preview({ kind: "document", body: PolicyDocument.parse(DEMO_DOCUMENT) }, at(10 * HOUR));
    expect(impact.calls).toMatchObject({ considered: 1, changed: 0 });
  });
});
