/**
 * The policy preview of the admin console: "for these arguments, this draft version would decide ...", beside what
 * the current version decides. Nothing is saved and nothing runs: the tool's `resource(args)` maps the call (it may
 * read current state, such as an order's refundable amount) and the pure `evaluate` decides, once with the current
 * rules and once with the draft in place of its rule key's current version.
 */
import { evaluate, type Decision, type Rule, type Subject } from "./evaluate";
import { compileStored, currentDocument, currentRules } from "./store";
import { RuleInput } from "./save-rule";
import { getTool } from "../tools/catalog";
import { ToolError } from "../tools/types";
import { argumentsProblem, describeIssues } from "../tools/check-arguments";
import { isMoneyField, parseMoney } from "../inbox/rule-words";

/** The threshold editor's fields by their labels, so that an error says which field it is about. */
export const FIELD_LABELS: Record<string, string> = {
  description: "Description",
  effect: "Effect",
  field: "Threshold field",
  operator: "Operator",
  value: "Threshold value",
  currency: "Threshold value",
  approverGroup: "Approver group",
  approvalsRequired: "Approvals needed",
  requestDeadlineSec: "Request deadline",
  approvalValiditySec: "Approval validity",
  escalateAfterSec: "Escalate after",
  fallbackGroup: "Fallback group",
  reason: "Reason",
  ruleKey: "Rule key",
  tool: "Tool",
  form: "Rule",
};

export type RuleFields = Record<string, string | boolean | number | null | undefined>;

export type FieldsResult = { ok: true; rule: RuleInput } | { ok: false; fieldErrors: Record<string, string> };

const text = (v: unknown) => (typeof v === "string" ? v.trim() : typeof v === "number" ? String(v) : "");
const whole = (v: unknown) => {
  const t = text(v);
  return /^-?\d+$/.test(t) ? Number(t) : Number.NaN;
};

/**
 * The editor's fields as a rule: a money threshold (amount_cents, refundable_cents, total_cents) is typed as
 * money ("EUR 200.00") and stored as minor units plus its currency; every other value as typed.
 */
export function ruleFromFields(f: RuleFields): FieldsResult {
  const fieldErrors: Record<string, string> = {};
  const field = text(f.field);
  // The editor sends a money threshold as typed ("money": "EUR 200.00"); an API client may send minor units in
  // "value" with "currency", as stored.
  let value = text(f.value);
  let currency: string | null = text(f.currency) || null;
  if (typeof f.money === "string" && isMoneyField(field) && f.operator !== "prefix") {
    const money = parseMoney(f.money);
    if (money.ok) {
      value = String(money.minor);
      currency = money.currency;
    } else fieldErrors.value = money.message;
  }
  const parsed = RuleInput.safeParse({
    ruleKey: text(f.ruleKey),
    tool: text(f.tool),
    description: text(f.description),
    field,
    operator: text(f.operator),
    value,
    currency,
    effect: text(f.effect),
    approverGroup: text(f.approverGroup) || null,
    approvalsRequired: whole(f.approvalsRequired),
    requestDeadlineSec: whole(f.requestDeadlineSec),
    approvalValiditySec: whole(f.approvalValiditySec),
    requireJustification: f.requireJustification === true || f.requireJustification === "on",
    requirePasskey: f.requirePasskey === true || f.requirePasskey === "on",
    escalateAfterSec: text(f.escalateAfterSec) ? whole(f.escalateAfterSec) : null,
    fallbackGroup: text(f.fallbackGroup) || null,
    reason: text(f.reason),
    active: f.active === true || f.active === "on",
  });
  if (!parsed.success) {
    // A field's first problem is the one shown (money that is not money before what the rule makes of it).
    for (const issue of parsed.error.issues) {
      const k = String(issue.path[0] ?? "form");
      fieldErrors[k] ??= issue.code === "invalid_type" && (k.endsWith("Sec") || k === "approvalsRequired") ? "a whole number" : issue.message;
    }
  }
  if (Object.keys(fieldErrors).length > 0 || !parsed.success) return { ok: false, fieldErrors };
  return { ok: true, rule: parsed.data };
}

/** "Threshold value: at most two decimals ...; Approver group: ..." */
export function describeFieldErrors(fieldErrors: Record<string, string>): string {
  return Object.entries(fieldErrors)
    .map(([k, m]) => `${FIELD_LABELS[k] ?? k}: ${m}`)
    .join("; ");
}

export type PreviewResult =
  | { ok: true; resource: { type: string; id: string; properties: Record<string, unknown> }; current: Decision; draft: Decision; draftVersion: number }
  | { ok: false; error: string; field?: string };

export async function previewRule(draftInput: unknown, args: unknown, now: Date): Promise<PreviewResult> {
  const parsed = ruleFromFields((draftInput ?? {}) as RuleFields);
  if (!parsed.ok) {
    const [field] = Object.keys(parsed.fieldErrors);
    return { ok: false, error: `The draft rule is not valid: ${describeFieldErrors(parsed.fieldErrors)}`, field };
  }
  const draft = parsed.rule;
  const tool = getTool(draft.tool);
  if (!tool) return { ok: false, error: `Unknown tool ${draft.tool}.` };
  const problem = argumentsProblem(args ?? {});
  if (problem) return { ok: false, error: `These arguments do not fit ${tool.name}: ${problem}`, field: "arguments" };
  const call = tool.schema.safeParse(args ?? {});
  if (!call.success) return { ok: false, error: `These arguments do not fit ${tool.name}: ${describeIssues(call.error)}`, field: "arguments" };
  let resource;
  try {
    resource = await tool.resource(call.data);
  } catch (e) {
    if (e instanceof ToolError) return { ok: false, error: e.message, field: "arguments" };
    throw e;
  }
  const rules = await currentRules();
  const latest = rules.find((r) => r.ruleKey === draft.ruleKey)?.version ?? 0;
  const draftRule: Rule = { ...draft, id: "draft", version: latest + 1 };
  const withDraft = [...rules.filter((r) => r.ruleKey !== draft.ruleKey), ...(draft.active ? [draftRule] : [])];
  const document = await currentDocument();
  const subject: Subject = { agentId: "preview", agentName: "preview", user: { id: "preview", email: "preview@countersign.invalid", name: "Preview", role: "requester", groups: [] } };
  // No history: the preview of one example call shows what the rules decide for it on its own.
  const history = Object.fromEntries(document.body.history.filter((h) => h.tool === tool.name).map((h) => [h.name, { total: 0, count: 0 }]));
  const request = { subject, action: { name: tool.name }, resource, context: { args: call.data, history } };
  return {
    ok: true,
    resource,
    current: evaluate(request, compileStored(rules, document), now),
    draft: evaluate(request, compileStored(withDraft, document), now),
    draftVersion: latest + 1,
  };
}
