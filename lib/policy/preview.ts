/**
 * The policy preview of the admin console: "for these arguments, this draft version would decide ...", beside what
 * the current version decides. Nothing is saved and nothing runs: the tool's `resource(args)` maps the call (it may
 * read current state, such as an order's refundable amount) and the pure `evaluate` decides, once with the current
 * rules and once with the draft in place of its rule key's current version.
 */
import { evaluate, type Decision, type Rule, type Subject } from "./evaluate";
import { compileStored, currentDocument, currentRules } from "./store";
import { RuleInput } from "./save-rule";
import { getTool } from "../tools/registry";
import { ToolError } from "../tools/types";
import { argumentsProblem, describeIssues } from "../tools/check-arguments";

export type PreviewResult =
  | { ok: true; resource: { type: string; id: string; properties: Record<string, unknown> }; current: Decision; draft: Decision; draftVersion: number }
  | { ok: false; error: string; field?: string };

export async function previewRule(draftInput: unknown, args: unknown, now: Date): Promise<PreviewResult> {
  const parsed = RuleInput.safeParse(draftInput);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, error: `The draft rule is not valid: ${issue?.path.join(".") || "rule"}: ${issue?.message ?? "invalid"}`, field: String(issue?.path[0] ?? "") };
  }
  const draft = parsed.data;
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
