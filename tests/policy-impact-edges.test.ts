/**
 * Preview against reality, at its edges: every word of the sentence; the list of changes said to be whole when it
 * is; a draft's version after several saved versions; a draft of one rule leaves every other rule as it is; a
 * document that is not one at all; history per agent (not per user) and per tool; pending requests judged with
 * their own agent's or person's history without their own record, a gone tool, the limit, a failure that is not the
 * tool's refusal; snapshots that cannot be judged (none at all among them); a call whose tool cannot write its summary.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../lib/db/client";
import { impactSentence, previewImpact, type Draft, type ImpactCounts } from "../lib/policy/impact";
import { getTool } from "../lib/tools/catalog";
import { saveRuleVersion } from "../lib/policy/save-rule";
import { saveDocument } from "../lib/policy/store";
import { callTool } from "../lib/tasks/call";
import { cancelTask } from "../lib/tasks/cancel";
import { activeRuleFields, principal, resetDb } from "./support/db";
import { preview, refund, refundRuleDraft, steadyDocument, withWindow } from "./support/impact";
import { at, HOUR, MIN, T0 } from "./support/proof";

beforeEach(resetDb);

const counts = (over: Partial<ImpactCounts>): ImpactCounts => ({
  considered: 0,
  skipped: 0,
  truncated: false,
  changed: 0,
  toApproval: 0,
  offApproval: 0,
  toAllow: 0,
  toDeny: 0,
  otherApproval: 0,
  ...over,
});

describe("the sentence", () => {
  it("names every kind of change, for calls and for pending requests, one and many", () => {
    const calls = counts({ considered: 12, toApproval: 1, offApproval: 2, toDeny: 3, toAllow: 1, otherApproval: 2 });
    const pending = counts({ considered: 9, toApproval: 2, offApproval: 1, toDeny: 1, toAllow: 2, otherApproval: 1 });
    expect(impactSentence(calls, pending)).toBe(
      "1 call would have needed approval; 2 calls would no longer have needed approval; 3 calls would have been refused; " +
        "1 call would have run at once instead of being refused; 2 calls would have needed different approval; " +
        "2 pending requests would need approval; 1 pending request would no longer need it; 1 pending request would be refused; " +
        "2 pending requests would run at once; 1 pending request would need different approval " +
        "(12 calls of the last 30 days and 9 pending requests checked).",
    );
  });

  it("says when it cut, with the limit written out", () => {
    expect(impactSentence(counts({ considered: 1 }), counts({ considered: 0, truncated: true }), 12_000)).toBe(
      "No call of the last 30 days and no pending request would be decided differently (1 call of the last 30 days and 0 pending requests checked; only the most recent 12,000 of each were checked).",
    );
  });
});

describe("what a preview reads", () => {
  it("lists every change and says the list is whole", async () => {
    for (const [order, when] of [["O-1145", at(-2 * MIN)], ["O-3107", at(-MIN)]] as const) expect((await refund(order, 100, when)).kind).toBe("result");
    const impact = await preview(await refundRuleDraft({ value: "5000" }), T0);
    expect(impact.calls).toMatchObject({ changed: 2, toApproval: 2 });
    expect(impact.changes).toHaveLength(2);
    expect(impact.listedAll).toBe(true);
  });

  it("a draft's version follows the latest saved version of its rule key, and of the document", async () => {
    const bot = await principal();
    await saveRuleVersion({ ...(await activeRuleFields("refund-over-limit")), value: "16000" }, bot.userId, at(-HOUR));
    await saveRuleVersion({ ...(await activeRuleFields("refund-over-limit")), value: "17000" }, bot.userId, at(-MIN));
    expect((await preview(await refundRuleDraft({ value: "18000" }), T0)).draftVersion).toBe(4);
    const body = steadyDocument();
    expect(await saveDocument({ ...body, policies: `${body.policies}\n// v2\n` }, `user:${bot.userId}`, at(-HOUR))).toMatchObject({ ok: true });
    expect(await saveDocument({ ...body, policies: `${body.policies}\n// v3\n` }, `user:${bot.userId}`, at(-MIN))).toMatchObject({ ok: true });
    const versions = await db().policyDocument.count();
    expect((await preview({ kind: "document", body }, T0)).draftVersion).toBe(versions + 1);
    expect(versions).toBeGreaterThanOrEqual(3);
  });

  it("a draft of one rule leaves every other rule as it is", async () => {
    // A refund waiting for a lead under refund-over-limit, and one cancelled (a call of the last 30 days).
    const cancelled = await refund("O-1145", 170, at(-HOUR));
    if (cancelled.kind !== "task") throw new Error(`expected a task, got ${cancelled.kind}`);
    expect(await cancelTask(await principal(), cancelled.task.taskId, at(-HOUR + MIN))).toMatchObject({ ok: true });
    expect((await refund("O-4410", 160, at(-30 * MIN))).kind).toBe("task");
    const impact = await preview({ kind: "rule", rule: await activeRuleFields("wire-over-25k") }, T0);
    expect(impact.calls).toMatchObject({ considered: 1, changed: 0 });
    expect(impact.pending).toMatchObject({ considered: 1, changed: 0 });
  });

  it("a draft document that is not an object, or wrong deep inside, is refused with where", async () => {
    expect(await previewImpact({ kind: "document", body: "not a document" }, T0)).toMatchObject({ ok: false, problems: [{ message: expect.stringMatching(/^document: /) }] });
    const body = steadyDocument();
    const deep = await previewImpact({ kind: "document", body: { ...body, history: [{ ...body.history[0], per: "planet" }] } }, T0);
    expect(deep).toMatchObject({ ok: false, problems: [{ message: expect.stringMatching(/^history\.0\.per: /) }] });
  });
});

describe("history as it stood, per agent and per tool", () => {
  const count1 = "context.history.recent_refunds.count >= 1";

  it("per agent: another agent of the same person does not count; per user it does", async () => {
    const bot = await principal();
    // A refund by another agent the support bot's owner also runs (history is read from the records alone).
    await db().callRecord.create({
      data: { tool: "issue_refund", agentId: "another-agent-of-rita", userId: bot.userId, resourceType: "order", resourceId: "O-3107", amountMinor: 100n, currency: "EUR", status: "executed", createdAt: at(-20 * MIN) },
    });
    expect((await refund("O-1145", 100, at(-10 * MIN))).kind).toBe("result");
    expect((await preview(withWindow({ per: "agent", length: "1h" }, count1), T0)).calls).toMatchObject({ considered: 1, skipped: 1, changed: 0 });
    expect((await preview(withWindow({ per: "user", length: "1h" }, count1), T0)).calls).toMatchObject({ considered: 1, skipped: 1, changed: 1, toApproval: 1 });
  });

  it("per tool: every call of the tool counts, whoever made it and on whatever it acted", async () => {
    expect((await refund("O-3107", 100, at(-20 * MIN), await principal("ops-bot"))).kind).toBe("result");
    expect((await refund("O-1145", 100, at(-10 * MIN))).kind).toBe("result");
    const impact = await preview(withWindow({ per: "tool", length: "1h" }, count1), T0);
    expect(impact.calls).toMatchObject({ considered: 2, changed: 1, toApproval: 1 });
    expect(impact.changes.map((c) => c.summary)).toEqual([expect.stringMatching(/O-1145/)]);
  });
});

describe("pending requests, judged as they stand now", () => {
  /** The steady document with a window over refunds and a plain forbid (a denial, no approval) that reads it. */
  function denyWindow(per: "agent" | "user"): Draft {
    const body = steadyDocument();
    return {
      kind: "document",
      body: {
        ...body,
        history: [...body.history, { name: "recent_refunds", tool: "issue_refund", window: "1h", per }],
        policies: `${body.policies}\n@id("refunds-in-a-row")\n@reason("No refunds in a row.")\nforbid (principal, action == Action::"issue_refund", resource)\nwhen { context.history.recent_refunds.count >= 1 };\n`,
      },
    };
  }

  it("with the history of their own agent or person, not counting their own record", async () => {
    const bot = await principal();
    // A refund by another agent the support bot's owner also runs; the pending request's own record is the only other one.
    await db().callRecord.create({
      data: { tool: "issue_refund", agentId: "another-agent-of-rita", userId: bot.userId, resourceType: "order", resourceId: "O-3107", amountMinor: 100n, currency: "EUR", status: "executed", createdAt: at(-20 * MIN) },
    });
    expect((await refund("O-2289", 160, at(-MIN))).kind).toBe("task");
    expect((await preview(denyWindow("agent"), T0)).pending).toMatchObject({ considered: 1, changed: 0 });
    expect((await preview(denyWindow("user"), T0)).pending).toMatchObject({ considered: 1, changed: 1, toDeny: 1 });
  });

  it("with the windows of the document in force, not counting their own record there either", async () => {
    const bot = await principal();
    const current = denyWindow("agent");
    if (current.kind !== "document") throw new Error("a document draft");
    expect(await saveDocument(current.body, `user:${bot.userId}`, at(-HOUR), { check: async () => [] })).toMatchObject({ ok: true });
    expect((await refund("O-2289", 160, at(-MIN))).kind).toBe("task");
    // Now: needs approval by the amount, no refund before it. The draft's threshold lets it run at once.
    const impact = await preview(await refundRuleDraft({ value: "20000" }), T0);
    expect(impact.pending).toMatchObject({ considered: 1, changed: 1, offApproval: 1, toAllow: 0 });
  });

  it("one whose tool is gone is skipped; exactly as many as the limit is not cut", async () => {
    expect((await refund("O-2289", 160, at(-2 * MIN))).kind).toBe("task");
    expect((await refund("O-4410", 160, at(-MIN))).kind).toBe("task");
    // Written past the product's own paths (a tool removed while its request waits): what a preview may still meet.
    const gone = await db().task.findFirstOrThrow({ where: { status: "working" }, orderBy: { createdAt: "asc" } });
    await db().task.update({ where: { id: gone.id }, data: { tool: "refund_gone" } });
    const exact = await preview(await refundRuleDraft({ value: "20000" }), T0, 2);
    expect(exact.pending).toMatchObject({ considered: 1, skipped: 1, truncated: false, offApproval: 1 });
  });

  it("a failure reading a resource that is not the tool's own refusal is not taken for a request that cannot be judged", async () => {
    expect((await refund("O-2289", 160, at(-MIN))).kind).toBe("task");
    const spy = vi.spyOn(getTool("issue_refund")!, "resource").mockRejectedValue(new Error("the shop's database is gone"));
    try {
      await expect(previewImpact(await refundRuleDraft({ value: "20000" }), T0)).rejects.toThrow("the shop's database is gone");
    } finally {
      spy.mockRestore();
    }
  });
});

describe("records that cannot be judged", () => {
  it.each([
    ["none at all (a record older than snapshots)", undefined],
    ["no resource", { args: { order_id: "O-9101" } }],
    ["a resource without a type", { args: { order_id: "O-9101" }, resource: { id: "O-9101", properties: {} } }],
    ["a resource whose id is not text", { args: { order_id: "O-9101" }, resource: { type: "order", id: 9101, properties: {} } }],
    ["a resource without properties", { args: { order_id: "O-9101" }, resource: { type: "order", id: "O-9101" } }],
    ["properties that are not an object", { args: { order_id: "O-9101" }, resource: { type: "order", id: "O-9101", properties: "amount" } }],
    ["properties that are null", { args: { order_id: "O-9101" }, resource: { type: "order", id: "O-9101", properties: null } }],
    ["a snapshot that is not an object", "O-9101"],
  ])("a snapshot with %s is skipped", async (_what, snapshot) => {
    const bot = await principal();
    await db().callRecord.create({
      data: { tool: "issue_refund", agentId: bot.agentId, userId: bot.userId, resourceType: "order", resourceId: "O-9101", amountMinor: 100n, currency: "EUR", status: "executed", createdAt: at(-MIN), snapshot },
    });
    const impact = await preview(await refundRuleDraft({ value: "5000" }), T0);
    expect(impact.calls).toMatchObject({ considered: 0, skipped: 1, changed: 0 });
  });
});

describe("a call whose summary cannot be written", () => {
  it("is listed under its tool and resource, and still counted", async () => {
    const ops = await principal("ops-bot");
    expect((await callTool(ops, "wire_transfer", { to: "acct-991", amount: 10 }, { tasks: true }, at(-MIN))).kind).toBe("result");
    // A stored call whose amount the tool's schema takes but its summary cannot print (more than two decimals).
    const record = await db().callRecord.findFirstOrThrow({ where: { tool: "wire_transfer" } });
    const snapshot = record.snapshot as { args: Record<string, unknown> };
    await db().callRecord.update({ where: { id: record.id }, data: { snapshot: { ...snapshot, args: { ...snapshot.args, amount: 10.001 } } } });
    const body = steadyDocument();
    const noWires = `${body.policies}\n\n@id("no-wires")\n@reason("No wires.")\nforbid (principal, action == Action::"wire_transfer", resource);\n`;
    const impact = await preview({ kind: "document", body: { ...body, policies: noWires } }, T0);
    expect(impact.calls).toMatchObject({ considered: 1, skipped: 0, changed: 1, toDeny: 1 });
    expect(impact.changes.map((c) => c.summary)).toEqual(["wire_transfer on account acct-991"]);
  });
});
