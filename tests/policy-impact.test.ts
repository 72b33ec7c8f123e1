/** Preview against reality: what a draft would have decided for the calls of the last 30 days and every pending request. */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { previewImpact } from "../lib/policy/impact";
import { resetDb } from "./support/db";
import { refund, refundRuleDraft, steadyDocument } from "./support/impact";
import { at, DAY, MIN, T0 } from "./support/proof";

beforeEach(resetDb);

describe("preview against reality", () => {
  it("a call's record keeps what policy evaluated, sealed at rest", async () => {
    const out = await refund("O-1145", 100, T0);
    expect(out).toMatchObject({ kind: "result", outcome: { isError: false } });
    const [raw] = await db().$queryRaw<{ snapshot: string }[]>`SELECT snapshot::text AS snapshot FROM "CallRecord"`;
    expect(raw.snapshot.startsWith('"cs1.')).toBe(true);
    expect(raw.snapshot).not.toContain("O-1145");
    const row = await db().callRecord.findFirstOrThrow();
    expect(row.snapshot).toMatchObject({ args: { order_id: "O-1145", amount: 100 }, resource: { type: "order", id: "O-1145", properties: { amount_cents: 10000 } } });
  });

  it("lowering a threshold counts the calls of the last 30 days that would have needed approval, and lists them", async () => {
    expect((await refund("O-4410", 100, at(-40 * DAY))).kind).toBe("result"); // older than 30 days: not counted
    for (const [order, when] of [["O-1145", at(-2 * DAY)], ["O-3107", at(-DAY)], ["O-2289", T0]] as const) {
      expect((await refund(order, 100, when)).kind).toBe("result");
    }
    expect((await refund("O-1021", 20, T0)).kind).toBe("result"); // under the draft's 50.00 too
    const impact = await previewImpact(await refundRuleDraft({ value: "5000" }), at(MIN));
    if (!impact.ok) throw new Error(JSON.stringify(impact.problems));
    expect(impact.calls).toMatchObject({ considered: 4, toApproval: 3, changed: 3, truncated: false });
    expect(impact.pending).toMatchObject({ considered: 0, changed: 0 });
    expect(impact.sentence).toMatch(/^3 calls would have needed approval \(4 calls of the last 30 days and 0 pending requests checked\)\.$/);
    expect(impact.changes.map((c) => [c.source, c.tool, c.before, c.after])).toEqual(Array(3).fill(["call", "issue_refund", "allow", "requestable"]));
    expect(impact.changes[0].summary).toMatch(/100\.00/);
    expect(impact.changes[0].afterText).toBe("needs 1 approval from support-leads");
    // Nothing was saved.
    expect(await db().policyRule.count({ where: { ruleKey: "refund-over-limit" } })).toBe(1);
  });

  it("raising a threshold: pending requests that would no longer need approval, judged as they stand now", async () => {
    const out = await refund("O-4410", 160, T0);
    expect(out.kind).toBe("task");
    const unchanged = await previewImpact(await refundRuleDraft({ value: "15500" }), at(MIN));
    if (!unchanged.ok) throw new Error("draft refused");
    expect(unchanged.pending).toMatchObject({ considered: 1, changed: 0 });
    // The pending request is judged once, as a pending request, not again as a call of the last 30 days.
    expect(unchanged.calls.considered).toBe(0);
    const raised = await previewImpact(await refundRuleDraft({ value: "20000" }), at(MIN));
    if (!raised.ok) throw new Error("draft refused");
    expect(raised.pending).toMatchObject({ considered: 1, offApproval: 1 });
    expect(raised.sentence).toMatch(/^1 pending request would no longer need it \(/);
    expect(raised.changes).toMatchObject([{ source: "pending", tool: "issue_refund", before: "requestable", after: "allow" }]);
  });

  it("a draft document is judged with each call's history as it stood when the call was made", async () => {
    // 60 + 60 + 60 on one order: the third crosses the demo's 150.00 per-order total and waits for a lead.
    expect((await refund("O-4410", 60, T0)).kind).toBe("result");
    expect((await refund("O-4410", 60, at(MIN))).kind).toBe("result");
    expect((await refund("O-4410", 60, at(2 * MIN))).kind).toBe("task");
    const body = steadyDocument();
    const draft = { ...body, policies: body.policies.replace("resource.amount.minor > 15000", "resource.amount.minor > 10000") };
    const impact = await previewImpact({ kind: "document", body: draft }, at(3 * MIN));
    if (!impact.ok) throw new Error(JSON.stringify(impact.problems));
    // Only the second call had a total above 100.00 at its time (60 before it); the first had none.
    expect(impact.calls).toMatchObject({ considered: 2, toApproval: 1 });
    expect(impact.pending).toMatchObject({ considered: 1, changed: 0 });
    expect(impact.changes).toHaveLength(1);
  });

  it("a draft that does not compile is refused with its problems and its line", async () => {
    const bad = { ...steadyDocument(), policies: `@id("x")\nforbid (principal, action == Action::"issue_refund", resource)\nwhen { context.args.no_such_argument > 1 };` };
    const impact = await previewImpact({ kind: "document", body: bad }, T0);
    expect(impact.ok).toBe(false);
    if (!impact.ok) expect(impact.problems.some((p) => p.line !== undefined && p.line >= 1)).toBe(true);
    const rule = await refundRuleDraft({ value: "5000" });
    if (rule.kind === "rule") rule.rule.field = "no_such_field";
    expect((await previewImpact(rule, T0)).ok).toBe(false);
  });

  it("is bounded: beyond the limit only the most recent calls are judged, and the answer says so", async () => {
    for (const [order, when] of [["O-1145", at(-3 * MIN)], ["O-3107", at(-2 * MIN)], ["O-2289", at(-MIN)]] as const) {
      expect((await refund(order, 100, when)).kind).toBe("result");
    }
    const impact = await previewImpact(await refundRuleDraft({ value: "5000" }), T0, { limit: 2 });
    if (!impact.ok) throw new Error("draft refused");
    expect(impact.calls).toMatchObject({ considered: 2, truncated: true, toApproval: 2 });
    expect(impact.sentence).toMatch(/only the most recent 2 of each were checked/);
  });
});
