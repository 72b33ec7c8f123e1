/**
 * The Cedar policy engine (@cedar-policy/cedar-wasm, Node build). Countersign never interprets a condition
 * itself: parsing, schema validation and evaluation are Cedar's. This module only adapts types and errors.
 */
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";

export type CedarSchema = cedar.SchemaJson<string>;
export type CedarEntity = cedar.EntityJson;
export type CedarValue = cedar.CedarValueJson;
export type CedarUid = { type: string; id: string };
export type CedarPolicyJson = cedar.PolicyJson;

/** One problem in a policy text: a line and column (1-based) when Cedar gives a location. */
export type PolicyProblem = { message: string; policyId?: string; line?: number; column?: number };

/** 1-based line and column of a character offset in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split("\n");
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

/** Cedar's errors about a policy text, each with its label and help, at its line and column when Cedar gives one. */
function problemsOf(errors: cedar.DetailedError[], text: string): PolicyProblem[] {
  return errors.map((e) => {
    const at = e.sourceLocations?.[0];
    const help = e.help ? ` (${e.help})` : "";
    const label = at?.label ? `: ${at.label}` : "";
    return { message: `${e.message}${label}${help}`, ...(at ? lineColumn(text, at.start) : {}) };
  });
}

/** Splits a policy text into its policies, each with its text and its offset in the whole text. */
export function splitPolicies(text: string): { ok: true; policies: { text: string; offset: number }[] } | { ok: false; problems: PolicyProblem[] } {
  const parts = cedar.policySetTextToParts(text);
  if (parts.type === "failure") return { ok: false, problems: problemsOf(parts.errors, text) };
  if (parts.policy_templates.length > 0) return { ok: false, problems: [{ message: "policy templates are not supported; write static policies" }] };
  // Each policy's own text is cut from the whole text (so a validation error's offset is an offset in what the
  // admin wrote), at the top-level semicolons Cedar's parser also ended them at.
  const spans = policySpans(text);
  if (spans.length !== parts.policies.length) {
    return { ok: false, problems: [{ message: "the policy text could not be split into its policies" }] };
  }
  return { ok: true, policies: spans.map(({ start, end }) => ({ text: text.slice(start, end), offset: start })) };
}

/**
 * Where each policy of a text that parses starts and ends: from its first character that is not blank or a comment
 * to the semicolon that ends it outside strings, comments and brackets.
 */
export function policySpans(text: string): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  let depth = 0;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "/" && text[i + 1] === "/") {
      const nl = text.indexOf("\n", i);
      i = nl < 0 ? text.length : nl;
      continue;
    }
    if (/\s/.test(c)) continue;
    if (start < 0) start = i;
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      continue;
    }
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
    else if (c === ";" && depth === 0) {
      spans.push({ start, end: i + 1 });
      start = -1;
    }
  }
  return spans;
}

/** Cedar's refusal of input Countersign built or already checked: its words, for the error that stops the work. */
function cedarError(errors: cedar.DetailedError[]): Error {
  return new Error(errors.map((e) => e.message).join("; "));
}

export function policyJson(text: string): CedarPolicyJson {
  const r = cedar.policyToJson(text);
  if (r.type === "failure") throw cedarError(r.errors);
  return r.json;
}

/** Validates policies (id -> text or JSON) against the schema in strict mode; `start` is an offset in the policy's own text. */
export function validatePolicies(schema: CedarSchema, policies: Record<string, string | CedarPolicyJson>): { policyId: string | null; message: string; start?: number }[] {
  const r = cedar.validate({ schema, policies: { staticPolicies: policies }, validationSettings: { mode: "strict" } });
  if (r.type === "failure") return r.errors.map((e) => ({ policyId: null, message: e.message }));
  return r.validationErrors.map((v) => ({
    policyId: v.policyId,
    message: `${v.error.message}${v.error.help ? ` (${v.error.help})` : ""}`,
    start: v.error.sourceLocations?.[0]?.start,
  }));
}

let sets = 0;

/** Parses a policy set and its schema once and keeps them in the engine, so each evaluation does not parse them again. */
export function preparse(policies: Record<string, string | CedarPolicyJson>, schema: CedarSchema): { setId: string; schemaId: string } {
  return preparseSet(policies, preparseSchemaOnly(schema));
}

/** Parses a schema once and keeps it in the engine; the sets evaluated against it are parsed by preparseSet. */
export function preparseSchemaOnly(schema: CedarSchema): string {
  const schemaId = `schema-${++sets}`;
  const s = cedar.preparseSchema(schemaId, schema);
  if (s.type === "failure") throw cedarError(s.errors);
  return schemaId;
}

/** Parses another set against a schema already preparsed (a per-action subset of a compiled policy). */
export function preparseSet(policies: Record<string, string | CedarPolicyJson>, schemaId: string): { setId: string; schemaId: string } {
  const setId = `set-${++sets}`;
  const p = cedar.preparsePolicySet(setId, { staticPolicies: policies });
  if (p.type === "failure") throw cedarError(p.errors);
  return { setId, schemaId };
}

/**
 * Whether a policy's action scope can hold for a request of `action`: false only when the scope names actions
 * (`action == A`, `action in [A, B]`) and `action` is not one of them. Exact for Countersign's schemas, which
 * declare no action groups (lib/policy/schema.ts), so an action is `in` nothing but itself; a scope it cannot
 * read (a slot, a template) is kept.
 */
export function actionScopeAdmits(policy: CedarPolicyJson, action: string): boolean {
  const scope = policy.action as { op?: string; entity?: CedarUid; entities?: CedarUid[] } | undefined;
  // `All` names none; `==` and `in` name one entity or a list.
  const named = scope?.entities ?? (scope?.entity ? [scope.entity] : null);
  if (!named || named.some((e) => !e || typeof e !== "object" || typeof e.id !== "string")) return true;
  return named.some((e) => e.id === action);
}

export type CedarRequest = {
  principal: CedarUid;
  action: CedarUid;
  resource: CedarUid;
  context: Record<string, CedarValue>;
  entities: CedarEntity[];
};

export type CedarAnswer =
  | { ok: true; decision: "allow" | "deny"; determining: string[]; errors: string[] }
  | { ok: false; errors: string[] };

/** Evaluates against a preparsed set, validating the request against the schema. */
export function authorize(prepared: { setId: string; schemaId: string }, req: CedarRequest): CedarAnswer {
  const r = cedar.statefulIsAuthorized({
    principal: req.principal,
    action: req.action,
    resource: req.resource,
    context: req.context,
    entities: req.entities,
    preparsedPolicySetId: prepared.setId,
    preparsedSchemaName: prepared.schemaId,
    validateRequest: true,
  });
  if (r.type === "failure") return { ok: false, errors: r.errors.map((e) => e.message) };
  return {
    ok: true,
    decision: r.response.decision,
    determining: r.response.diagnostics.reason,
    errors: r.response.diagnostics.errors.map((e) => `${e.policyId}: ${e.error.message}`),
  };
}

export type PartialAnswer =
  | {
      ok: true;
      decision: "allow" | "deny" | null;
      mustBeDetermining: string[];
      mayBeDetermining: string[];
      /** Policies whose outcome still depends on what was left unknown. */
      nontrivialResiduals: string[];
      /** Policies that already errored on what was known. */
      errored: string[];
    }
  | { ok: false };

/** Partial evaluation with the resource and the context unknown: what policy may ever decide for this principal and action. */
export function authorizePartial(policies: Record<string, string | CedarPolicyJson>, principal: CedarUid, action: CedarUid, entities: CedarEntity[], contextKeys: string[]): PartialAnswer {
  const context: Record<string, CedarValue> = {};
  for (const k of contextKeys) context[k] = { __extn: { fn: "unknown", arg: `context.${k}` } };
  const r = cedar.isAuthorizedPartial({ principal, action, resource: null, context, entities, policies: { staticPolicies: policies } });
  if (r.type === "failure") return { ok: false };
  return {
    ok: true,
    decision: r.response.decision,
    mustBeDetermining: r.response.mustBeDetermining,
    mayBeDetermining: r.response.mayBeDetermining,
    nontrivialResiduals: r.response.nontrivialResiduals,
    errored: r.response.errored,
  };
}
