/**
 * The advanced editor's draft: the Cedar text plus the rest of the policy document (defaults, history windows,
 * time zones, test cases) as YAML. Parsed into a document body, compiled strictly against the current form rules
 * (what saving runs), with every problem placed: "policies" problems carry the Cedar text's line and column,
 * "settings" problems the YAML's.
 */
import { parseDocument } from "yaml";
import { stringify } from "yaml";
import type { PolicyProblem } from "./cedar";
import { compilePolicy } from "./compile";
import { PolicyDocument } from "./document";
import { currentRules } from "./store";
import { evaluate, type CompiledPolicy, type Decision } from "./evaluate";
import { getTool } from "../tools/registry";
import { ToolError } from "../tools/types";
import { policyTools } from "../tools/registry";

export type PlacedProblem = PolicyProblem & { where: "policies" | "settings" };

export type DraftText = { policies: string; settings: string };

/** The document's settings (everything but the Cedar text) as the YAML the editor shows. */
export function settingsYaml(body: PolicyDocument): string {
  const { policies: _policies, ...rest } = body;
  void _policies;
  return stringify(rest, { lineWidth: 0 });
}

/** The draft as a document body, or the problems that keep it from being one. */
export function draftBody(draft: DraftText): { ok: true; body: PolicyDocument } | { ok: false; problems: PlacedProblem[] } {
  const yaml = parseDocument(draft.settings || "{}", { prettyErrors: true });
  if (yaml.errors.length > 0) {
    return {
      ok: false,
      problems: yaml.errors.map((e) => ({ where: "settings" as const, message: e.message.split("\n")[0], ...(e.linePos?.[0] ? { line: e.linePos[0].line, column: e.linePos[0].col } : {}) })),
    };
  }
  const settings = yaml.toJS() ?? {};
  if (typeof settings !== "object" || Array.isArray(settings)) return { ok: false, problems: [{ where: "settings", message: "the settings are a mapping (defaults, history, timeZones, tests)" }] };
  const parsed = PolicyDocument.safeParse({ ...settings, policies: draft.policies });
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((i) => {
        const path = i.path.map(String);
        const node = path.length > 0 && path[0] !== "policies" ? yaml.getIn(i.path as (string | number)[], true) : null;
        const range = node && typeof node === "object" && "range" in node ? (node as { range?: [number, number, number] }).range : undefined;
        const at = range ? lineOf(draft.settings, range[0]) : {};
        return { where: path[0] === "policies" ? ("policies" as const) : ("settings" as const), message: `${path.join(".") || "document"}: ${i.message}`, ...at };
      }),
    };
  }
  return { ok: true, body: parsed.data };
}

function lineOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: before[before.length - 1].length + 1 };
}

/** Strict compilation of the draft with the current form rules: no problems means saving would compile. */
export async function validateDraft(draft: DraftText): Promise<{ body: PolicyDocument | null; problems: PlacedProblem[] }> {
  const parsed = draftBody(draft);
  if (!parsed.ok) return { body: null, problems: parsed.problems };
  const compiled = compilePolicy({ rules: await currentRules(), document: { id: "draft", version: 0, body: parsed.body }, tools: policyTools() }, { strict: true });
  if (compiled.ok) return { body: parsed.body, problems: [] };
  return {
    body: parsed.body,
    problems: compiled.problems.map((p) => ({ ...p, where: p.line !== undefined || (p.policyId && !p.policyId.startsWith("rule:")) ? ("policies" as const) : ("settings" as const) })),
  };
}

const DEFAULT_AT = new Date("2026-06-01T10:00:00.000Z");

function decidedBy(d: Decision): string {
  return d.rule?.ruleKey ?? "default";
}

/**
 * The document's test cases against the compiled draft: each failure names its test. (What saving in the console
 * runs; the same cases run from the command line.)
 */
export async function failingTests(policy: CompiledPolicy, body: PolicyDocument): Promise<PolicyProblem[]> {
  const failures: PolicyProblem[] = [];
  for (const t of body.tests) {
    const tool = getTool(t.call.tool);
    const name = JSON.stringify(t.name.slice(0, 120));
    if (!tool) {
      failures.push({ message: `test ${name}: there is no tool ${t.call.tool}` });
      continue;
    }
    const args = tool.schema.safeParse(t.call.arguments);
    if (!args.success) {
      failures.push({ message: `test ${name}: the arguments do not fit ${tool.name}` });
      continue;
    }
    let resource = t.resource;
    if (!resource) {
      try {
        resource = await tool.resource(args.data);
      } catch (e) {
        if (!(e instanceof ToolError)) throw e;
        failures.push({ message: `test ${name}: ${e.message}` });
        continue;
      }
    }
    const history = Object.fromEntries(policy.document.history.filter((h) => h.tool === tool.name).map((h) => [h.name, t.history[h.name] ?? { total: 0, count: 0 }]));
    const subject = { agentId: t.principal.agent, agentName: t.principal.agent, user: { id: t.principal.user, email: t.principal.user, name: t.principal.user, role: t.principal.role, groups: t.principal.groups } };
    const d = evaluate({ subject, action: { name: tool.name }, resource, context: { args: args.data, history } }, policy, t.at ? new Date(t.at) : DEFAULT_AT);
    if (d.decision !== t.expect) failures.push({ message: `test ${name} failed: expected ${t.expect}, the draft decides ${d.decision} (by ${decidedBy(d)})` });
    else if (t.by && decidedBy(d) !== t.by) failures.push({ message: `test ${name} failed: expected ${t.expect} by ${t.by}, decided by ${decidedBy(d)}` });
  }
  return failures;
}
