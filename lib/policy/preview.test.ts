/**
 * The policy preview (`previewRule`): what the current rules and a draft in place of its rule key's current version
 * decide for one example call. Every refusal says what it is about (the field, the arguments, the tool), a draft is
 * numbered after its key's latest version, an inactive draft takes its rule out, the call is decided without the
 * call history (each window of the tool reads as empty), and nothing is saved.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { activeRuleFields, resetDb } from "../../tests/support/db";
import { T0 } from "../../tests/support/proof";
import { db } from "../db/client";
import { previewRule } from "./preview";

beforeEach(resetDb);

/** The demo's refund rule as the editor would send it back. */
const refundDraft = () => activeRuleFields("refund-over-limit");

describe("what a preview refuses, and what each refusal is about", () => {
  it("a draft that is not a valid rule: its first field in error, with the editor's label", async () => {
    const r = await previewRule({ ...(await refundDraft()), approverGroup: null }, { order_id: "O-2289" }, T0);
    expect(r).toEqual({ ok: false, error: "The draft rule is not valid: Approver group: a requestable rule needs an approver group", field: "approverGroup" });
    expect(await previewRule(null, { order_id: "O-2289" }, T0)).toMatchObject({ ok: false, error: expect.stringMatching(/^The draft rule is not valid: /), field: expect.any(String) });
  });

  it("a draft for a tool the catalog does not have", async () => {
    expect(await previewRule({ ...(await refundDraft()), tool: "no_such_tool" }, { order_id: "O-2289" }, T0)).toEqual({ ok: false, error: "Unknown tool no_such_tool." });
  });

  it("arguments the call itself would refuse: unreadable text, a reserved key, a wrong shape, none at all", async () => {
    const draft = await refundDraft();
    const nul = await previewRule(draft, { order_id: "O-2289\u0000" }, T0);
    expect(nul).toMatchObject({ ok: false, field: "arguments", error: "These arguments do not fit issue_refund: order_id: the text contains a NUL character (U+0000), which text arguments must not contain" });
    const proto = await previewRule(draft, JSON.parse('{"order_id":"O-2289","__proto__":{"x":1}}'), T0);
    expect(proto).toMatchObject({ ok: false, field: "arguments", error: 'These arguments do not fit issue_refund: __proto__: "__proto__" is not allowed as a key' });
    const shape = await previewRule(draft, { order_id: 2289 }, T0);
    expect(shape).toMatchObject({ ok: false, field: "arguments", error: expect.stringMatching(/^These arguments do not fit issue_refund: order_id: /) });
    expect(await previewRule(draft, null, T0)).toMatchObject({ ok: false, field: "arguments", error: expect.stringMatching(/^These arguments do not fit issue_refund: order_id: /) });
  });

  it("a resource the tool cannot map (an order that does not exist): the tool's own words, about the arguments", async () => {
    expect(await previewRule(await refundDraft(), { order_id: "O-9" }, T0)).toMatchObject({ ok: false, field: "arguments", error: expect.stringMatching(/does not exist/) });
  });
});

describe("the draft beside the current rules", () => {
  it("a draft of an existing rule is its next version and replaces it; a new key starts at 1 and adds to the rules", async () => {
    const draft = await refundDraft();
    const raised = await previewRule({ ...draft, value: "20000" }, { order_id: "O-2289" }, T0);
    expect(raised).toMatchObject({ ok: true, draftVersion: 2, current: { decision: "requestable", rule: { ruleKey: "refund-over-limit", version: 1 } }, draft: { decision: "allow" } });
    expect(raised).toMatchObject({ resource: { id: "O-2289", properties: { amount_cents: 18000 } } });
    // A new key: the current version of refund-over-limit still decides beside it.
    const added = await previewRule({ ...draft, ruleKey: "refund-any", value: "0", approvalsRequired: 2 }, { order_id: "O-2289" }, T0);
    expect(added).toMatchObject({
      ok: true,
      draftVersion: 1,
      current: { decision: "requestable", rule: { ruleKey: "refund-over-limit" }, requirements: { approvalsRequired: 1 } },
      // The stricter of the two requestable rules that hold decides the draft: the new one, with two approvals.
      draft: { decision: "requestable", rule: { id: "draft", ruleKey: "refund-any", version: 1 }, requirements: { approvalsRequired: 2 } },
    });
    expect(await db().policyRule.count({ where: { ruleKey: { in: ["refund-over-limit", "refund-any"] } } })).toBe(1);
  });

  it("an inactive draft takes its rule out of the draft's decision", async () => {
    const off = await previewRule({ ...(await refundDraft()), active: false }, { order_id: "O-2289" }, T0);
    expect(off).toMatchObject({ ok: true, draftVersion: 2, current: { decision: "requestable", rule: { ruleKey: "refund-over-limit", version: 1 } }, draft: { decision: "allow" } });
  });

  it("the version counts from the key's latest version, not from the count of rules", async () => {
    const draft = await refundDraft();
    await db().policyRule.updateMany({ where: { ruleKey: "refund-over-limit" }, data: { version: 7 } });
    expect(await previewRule({ ...draft, value: "20000" }, { order_id: "O-2289" }, T0)).toMatchObject({ ok: true, draftVersion: 8 });
  });
});

describe("the call history in a preview", () => {
  it("each window of the tool reads as empty and no other tool's window is in the call's context", async () => {
    // The demo document's policy reads refunds_per_order: a missing window would be an evaluation error, which
    // denies instead of deciding (a window of wire_transfer beside it is left out of the context by evaluate).
    const r = await previewRule({ ...(await refundDraft()), value: "50000" }, { order_id: "O-2289" }, T0);
    // An evaluation error would be a denial.
    expect(r).toMatchObject({ ok: true, current: { decision: "requestable" }, draft: { decision: "allow" } });
  });
});
