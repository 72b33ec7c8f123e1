/**
 * The advanced editor's draft: the Cedar text plus the rest of the policy document (defaults, history windows,
 * time zones, test cases) as YAML. Parsed into a document body, compiled strictly against the current form rules
 * (what saving runs), with every problem placed: "policies" problems carry the Cedar text's line and column,
 * "settings" problems the YAML's.
 */
import { isMap, isNode, isScalar, parseDocument, stringify, type Document } from "yaml";
import { lineColumn, type PolicyProblem } from "./cedar";
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
  const yaml = parseDocument(draft.settings, { prettyErrors: true });
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
        const offset = path[0] === "policies" ? undefined : settingsOffset(yaml, i.path as (string | number)[], i.code === "unrecognized_keys" ? i.keys[0] : undefined);
        const at = offset === undefined ? {} : lineColumn(draft.settings, offset);
        return { where: path[0] === "policies" ? ("policies" as const) : ("settings" as const), message: `${path.join(".") || "document"}: ${i.message}`, ...at };
      }),
    };
  }
  return { ok: true, body: parsed.data };
}

/**
 * Where in the settings' YAML a problem is: the value at `path`, or, for a key the document does not know, that key
 * itself (its mapping has no value of its own to point at). Undefined when the YAML has no such place (a value
 * the schema's default filled in).
 */
function settingsOffset(yaml: Document, path: (string | number)[], unknownKey?: string): number | undefined {
  const node = yaml.getIn(path, true);
  if (unknownKey === undefined) return path.length > 0 && isNode(node) ? node.range?.[0] : undefined;
  const pair = isMap(node) ? node.items.find((p) => isScalar(p.key) && String(p.key.value) === unknownKey) : undefined;
  return isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
}

/**
 * Where the editor shows a compilation problem: in the Cedar text when it has a place there or names a Cedar
 * policy (an `@id`, `document:...`), else in the settings (a form rule's problem, a test case, a history window).
 */
export function placeProblems(problems: PolicyProblem[]): PlacedProblem[] {
  return problems.map((p) => ({ ...p, where: p.line !== undefined || (p.policyId && !p.policyId.startsWith("rule:")) ? ("policies" as const) : ("settings" as const) }));
}

/** Strict compilation of the draft with the current form rules: no problems means saving would compile. */
export async function validateDraft(draft: DraftText): Promise<{ body: PolicyDocument | null; problems: PlacedProblem[] }> {
  const parsed = draftBody(draft);
  if (!parsed.ok) return { body: null, problems: parsed.problems };
  await syncCatalog();
  const compiled = compilePolicy({ rules: await currentRules(), document: { id: "draft", version: 0, body: parsed.body }, tools: policyTools() }, { strict: true });
  if (compiled.ok) return { body: parsed.body, problems: [] };
  return { body: parsed.body, problems: placeProblems(compiled.problems) };
}

