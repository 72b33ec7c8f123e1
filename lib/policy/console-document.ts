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

import { policyTools, syncCatalog } from "../tools/catalog";

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
  await syncCatalog();
  const compiled = compilePolicy({ rules: await currentRules(), document: { id: "draft", version: 0, body: parsed.body }, tools: policyTools() }, { strict: true });
  if (compiled.ok) return { body: parsed.body, problems: [] };
  return {
    body: parsed.body,
    problems: compiled.problems.map((p) => ({ ...p, where: p.line !== undefined || (p.policyId && !p.policyId.startsWith("rule:")) ? ("policies" as const) : ("settings" as const) })),
  };
}

