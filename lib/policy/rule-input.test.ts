/**
 * What the admin console can save as a policy rule. A requestable rule is a promise that the call waits for
 * reviewers, so one that no reviewer could satisfy, or that no one would have time to review, is refused.
 */
import { describe, expect, it } from "vitest";
import { describeFieldErrors, ruleFromFields } from "./preview";
import { RuleInput } from "./save-rule";

const valid = {
  ruleKey: "refund-over-limit",
  tool: "issue_refund",
  description: "Large refunds",
  field: "amount_cents",
  operator: "gt",
  value: "15000",
  effect: "requestable",
  approverGroup: "support-leads",
  approvalsRequired: 1,
  requestDeadlineSec: 60,
  approvalValiditySec: 60,
  requireJustification: false,
  reason: "Refunds above EUR 150.00 need a support lead's approval.",
};

function issues(input: Record<string, unknown>): { path: string; message: string }[] {
  const r = RuleInput.safeParse(input);
  return r.success ? [] : r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
}

describe("a requestable rule must be one reviewers can satisfy in time", () => {
  it("the smallest valid requestable rule is accepted and active by default", () => {
    expect(issues(valid)).toEqual([]);
    expect(RuleInput.parse(valid).active).toBe(true);
  });

  it("needs an approver group", () => {
    expect(issues({ ...valid, approverGroup: null })).toEqual([{ path: "approverGroup", message: "a requestable rule needs an approver group" }]);
  });

  it("needs at least one approval", () => {
    expect(issues({ ...valid, approvalsRequired: 0 })).toEqual([{ path: "approvalsRequired", message: "at least one approval" }]);
    expect(issues({ ...valid, approvalsRequired: 10 })).toEqual([]);
    expect(issues({ ...valid, approvalsRequired: 11 }).map((i) => i.path)).toEqual(["approvalsRequired"]);
  });

  it("needs at least 60 seconds to review and at least 60 seconds of validity", () => {
    expect(issues({ ...valid, requestDeadlineSec: 59 })).toEqual([{ path: "requestDeadlineSec", message: "at least 60 seconds" }]);
    expect(issues({ ...valid, approvalValiditySec: 59 })).toEqual([{ path: "approvalValiditySec", message: "at least 60 seconds" }]);
  });

  it("an escalation needs both its time and its fallback group, another group, before the request's deadline", () => {
    const escalating = { ...valid, requestDeadlineSec: 7200, escalateAfterSec: 3600, fallbackGroup: "treasury" };
    expect(issues(escalating)).toEqual([]);
    expect(issues({ ...escalating, fallbackGroup: null })).toEqual([{ path: "fallbackGroup", message: "an escalation needs a fallback group" }]);
    expect(issues({ ...escalating, escalateAfterSec: null })).toEqual([{ path: "escalateAfterSec", message: "a fallback group needs an escalation time" }]);
    expect(issues({ ...escalating, fallbackGroup: "support-leads" })).toEqual([{ path: "fallbackGroup", message: "the fallback group must differ from the approver group" }]);
    expect(issues({ ...escalating, escalateAfterSec: 7200 })).toEqual([{ path: "escalateAfterSec", message: "escalation must come before the request deadline" }]);
  });

  it("a deny rule needs none of these: it is never approved", () => {
    expect(issues({ ...valid, effect: "deny", approverGroup: null, approvalsRequired: 0, requestDeadlineSec: 0, approvalValiditySec: 0 })).toEqual([]);
  });
});

describe("a rule's comparison must be one the decision can make", () => {
  it("gt and gte need a number; eq and prefix take any text", () => {
    for (const operator of ["gt", "gte"]) {
      expect(issues({ ...valid, operator, value: "lots" })).toEqual([{ path: "value", message: "a number for gt/gte" }]);
      expect(issues({ ...valid, operator, value: "150.5" })).toEqual([]);
    }
    for (const operator of ["eq", "prefix"]) expect(issues({ ...valid, operator, value: "lots" })).toEqual([]);
  });

  it("a rule key is lowercase letters, digits and dashes, 2 to 61 of them, not starting with a dash; a currency is three capitals", () => {
    for (const ruleKey of ["r1", "1-refund", `r${"x".repeat(60)}`]) expect(issues({ ...valid, ruleKey })).toEqual([]);
    for (const ruleKey of ["r", "-refund", "Refund", "refund_big", `r${"x".repeat(61)}`]) {
      expect(issues({ ...valid, ruleKey })).toEqual([{ path: "ruleKey", message: "lowercase letters, digits and dashes" }]);
    }
    expect(issues({ ...valid, currency: "EUR" })).toEqual([]);
    for (const currency of ["eur", "EU", "EURO"]) expect(issues({ ...valid, currency })).toEqual([{ path: "currency", message: "a three-letter currency code such as EUR" }]);
  });

  it("an operator the decision does not know is refused", () => {
    expect(issues({ ...valid, operator: "regex" }).map((i) => i.path)).toEqual(["operator"]);
  });
});

describe("the threshold editor's fields as a rule", () => {
  // As the form posts them: every value a string, checkboxes "on" when ticked and absent otherwise.
  const form = {
    ruleKey: " refund-over-limit ", tool: "issue_refund", description: "Large refunds", field: "amount_cents", operator: "gt",
    money: "EUR 150.00", effect: "requestable", approverGroup: "support-leads", approvalsRequired: "1", requestDeadlineSec: "86400",
    approvalValiditySec: "3600", reason: "Refunds above EUR 150.00 need a support lead.", active: "on",
  };

  it("money typed as money is stored as minor units with its currency; text is trimmed; unticked boxes are false", () => {
    expect(ruleFromFields(form)).toEqual({
      ok: true,
      rule: {
        ruleKey: "refund-over-limit", tool: "issue_refund", description: "Large refunds", field: "amount_cents", operator: "gt", value: "15000",
        currency: "EUR", effect: "requestable", approverGroup: "support-leads", approvalsRequired: 1, requestDeadlineSec: 86400, approvalValiditySec: 3600,
        requireJustification: false, requirePasskey: false, escalateAfterSec: null, fallbackGroup: null, reason: "Refunds above EUR 150.00 need a support lead.", active: true,
      },
    });
  });

  it("ticked boxes are true, from the form (on) or from an API client (true); an unticked active box retires the rule", () => {
    for (const on of ["on", true]) {
      expect(ruleFromFields({ ...form, requireJustification: on, requirePasskey: on })).toMatchObject({ ok: true, rule: { requireJustification: true, requirePasskey: true, active: true } });
    }
    expect(ruleFromFields({ ...form, requireJustification: "yes", active: undefined })).toMatchObject({ ok: true, rule: { requireJustification: false, active: false } });
    expect(ruleFromFields({ ...form, active: false })).toMatchObject({ ok: true, rule: { active: false } });
  });

  it("an API client may send minor units with their currency; money is read only for a money field compared by amount", () => {
    expect(ruleFromFields({ ...form, money: undefined, value: "20000", currency: "EUR" })).toMatchObject({ ok: true, rule: { value: "20000", currency: "EUR" } });
    // Money typed wrong is refused even beside minor units that would do: what the admin typed is what is saved.
    expect(ruleFromFields({ ...form, money: "EUR 1.234", value: "20000", currency: "EUR" })).toEqual({ ok: false, fieldErrors: { value: expect.any(String) } });
    // A path prefix is text, whatever is in the money box.
    expect(ruleFromFields({ ...form, tool: "delete_path", field: "path", operator: "prefix", value: "prod/", money: "EUR 1.00" })).toMatchObject({ ok: true, rule: { value: "prod/", currency: null } });
    expect(ruleFromFields({ ...form, field: "environment", operator: "eq", value: "production", money: "EUR 1.00" })).toMatchObject({ ok: true, rule: { value: "production", currency: null } });
    expect(ruleFromFields({ ...form, operator: "prefix", value: "15", money: "EUR 1.00" })).toMatchObject({ ok: true, rule: { value: "15", currency: null } });
  });

  it("money that is not money is refused at the threshold value, with every other field's problem beside it", () => {
    const r = ruleFromFields({ ...form, money: "150", description: "x", approvalsRequired: "two" });
    expect(r).toEqual({ ok: false, fieldErrors: { value: expect.stringMatching(/give the currency too/), description: expect.stringMatching(/3/), approvalsRequired: "a whole number" } });
    expect(describeFieldErrors(r.ok ? {} : r.fieldErrors)).toMatch(/^Threshold value: give the currency too.*; Description: .*; Approvals needed: a whole number$/);
    // Money that is not money alone is refused too, though the rest of the rule is valid.
    expect(ruleFromFields({ ...form, money: "EUR 1.005" })).toEqual({ ok: false, fieldErrors: { value: "at most two decimals (cents), e.g. EUR 200.50" } });
  });

  it("whole numbers only where seconds and counts go; an empty escalation is none", () => {
    for (const v of ["1.5", "1e3", "", " ", "0x10"]) expect(ruleFromFields({ ...form, requestDeadlineSec: v })).toEqual({ ok: false, fieldErrors: { requestDeadlineSec: "a whole number" } });
    expect(ruleFromFields({ ...form, requestDeadlineSec: 7200, approvalsRequired: " 2 " })).toMatchObject({ ok: true, rule: { requestDeadlineSec: 7200, approvalsRequired: 2 } });
    expect(ruleFromFields({ ...form, escalateAfterSec: "  ", fallbackGroup: " " })).toMatchObject({ ok: true, rule: { escalateAfterSec: null, fallbackGroup: null } });
    expect(ruleFromFields({ ...form, escalateAfterSec: "soon", fallbackGroup: "treasury" })).toEqual({ ok: false, fieldErrors: { escalateAfterSec: "a whole number" } });
  });

  it("a deny rule has no approver group, whether the box is empty or absent; it does not escalate", () => {
    for (const approverGroup of ["", " ", undefined]) expect(ruleFromFields({ ...form, effect: "deny", approverGroup })).toMatchObject({ ok: true, rule: { effect: "deny", approverGroup: null } });
    for (const escalation of [{ escalateAfterSec: "3600", fallbackGroup: "treasury" }, { fallbackGroup: "treasury" }, { escalateAfterSec: "3600" }]) {
      expect(ruleFromFields({ ...form, effect: "deny", ...escalation })).toEqual({ ok: false, fieldErrors: { fallbackGroup: "a deny rule cannot be approved, so it does not escalate" } });
    }
  });

  it("a field the labels do not know is named as it is", () => {
    expect(describeFieldErrors({ arguments: "not an object" })).toBe("arguments: not an object");
  });
});
