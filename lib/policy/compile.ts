/**
 * From what is stored (the form rules and the current policy document) to a policy Cedar can evaluate.
 *
 * Strict compilation is what saving runs: any problem (a parse error with its line and column, a policy without an
 * `@id`, a condition on an argument that does not exist or of the wrong type, a bad requirement) refuses the
 * version. Lenient compilation is what evaluation runs on stored versions, which were strict when saved but may
 * meet a tool catalog that changed since: a policy that no longer validates is replaced by a denial of every call
 * it could apply to (a permit that no longer validates is dropped), so a stale policy can deny but never allow.
 * Tools whose schema does not resolve at all give no policy, strict or lenient: then every call is denied.
 */
import { actionScopeAdmits, lineColumn, policyJson, preparseSchemaOnly, preparseSet, splitPolicies, validatePolicies, type CedarPolicyJson, type PolicyProblem } from "./cedar";
import { parseDuration, requirementsOf, type PolicyDocument, type PostureSpec, RequestableSpec } from "./document";
import type { CompiledPolicy, Posture, PolicyMeta, Requirements, Rule, RuleRef } from "./evaluate";
import { EVALUATION_ERROR_REASON, strictness } from "./evaluate";
import { formPolicyId, formRuleToCedar } from "./form-rules";
import { buildSchema, type PolicyTool } from "./schema";

export type StoredDocument = { id: string; version: number; body: PolicyDocument };

export type CompileInput = { rules: Rule[]; document: StoredDocument; tools: PolicyTool[] };

export type CompileResult = { ok: true; policy: CompiledPolicy } | { ok: false; problems: PolicyProblem[] };

const POLICY_ID = /^[a-z0-9][a-z0-9._-]{0,79}$/;

/** An annotation's value; one written without a value (`@passkey`) is the empty string, as Cedar defines it. */
function annotation(json: CedarPolicyJson, name: string): string | undefined {
  const v = json.annotations?.[name];
  return v === undefined ? undefined : String(v ?? "");
}

/** The requirements an advanced policy's annotations declare, or a problem. null: a plain policy. */
export function requirementsFromAnnotations(json: CedarPolicyJson): { requirements: Requirements | null; reason: string } | { problem: string } {
  const approvers = annotation(json, "approvers");
  const reason = annotation(json, "reason");
  const others = ["quorum", "deadline", "validity", "justification", "passkey", "escalate", "fallback"].filter((a) => annotation(json, a) !== undefined);
  if (approvers === undefined) {
    if (others.length > 0) return { problem: `@${others[0]} needs @approvers (the group that can approve)` };
    return { requirements: null, reason: reason ?? "" };
  }
  if (json.effect !== "forbid") return { problem: "requirements (@approvers) belong on a forbid: the denial that an approval can clear" };
  if (!reason) return { problem: "a requestable denial needs @reason: the words reviewers and the agent read" };
  const quorum = annotation(json, "quorum");
  const justification = annotation(json, "justification");
  if (justification !== undefined && justification !== "required" && justification !== "optional") {
    return { problem: `@justification is "required" or "optional", not "${justification}"` };
  }
  const passkey = annotation(json, "passkey");
  if (passkey !== undefined && passkey !== "required" && passkey !== "optional") {
    return { problem: `@passkey is "required" or "optional", not "${passkey}"` };
  }
  const parsed = RequestableSpec.safeParse({
    approvers,
    quorum: quorum === undefined ? undefined : /^\d{1,2}$/.test(quorum) ? Number(quorum) : NaN,
    deadline: annotation(json, "deadline"),
    validity: annotation(json, "validity"),
    justification: justification === "required",
    passkey: passkey === "required",
    escalate: annotation(json, "escalate"),
    fallback: annotation(json, "fallback"),
    reason,
  });
  if (!parsed.success) {
    // Each field of the spec is named as its annotation, and every refusal names its field.
    const [issue] = parsed.error.issues;
    return { problem: `@${String(issue.path[0])}: ${issue.message}` };
  }
  return { requirements: requirementsOf(parsed.data), reason };
}

function postureOf(spec: PostureSpec): Posture {
  if (spec === "allow") return { effect: "allow" };
  if (spec === "deny") return { effect: "deny" };
  return { effect: "requestable", requirements: requirementsOf(RequestableSpec.parse(spec.requestable)), reason: spec.requestable.reason };
}

const RANK = { deny: 0, requestable: 1, allow: 2 } as const;

/** The strictest of the agent's and the tool's posture; the document's default when neither is set. */
export function postureResolver(doc: PolicyDocument, docRef: RuleRef): CompiledPolicy["posture"] {
  return (agentName, tool) => {
    const found: { posture: Posture; ref: RuleRef }[] = [];
    const agent = doc.defaults.agents[agentName];
    if (agent !== undefined) found.push({ posture: postureOf(agent), ref: { ...docRef, ruleKey: `default:agent:${agentName}` } });
    const forTool = doc.defaults.tools[tool];
    if (forTool !== undefined) found.push({ posture: postureOf(forTool), ref: { ...docRef, ruleKey: `default:tool:${tool}` } });
    if (found.length === 0) return { posture: postureOf(doc.defaults.posture), ref: { ...docRef, ruleKey: "default" } };
    return found.sort((a, b) => {
      // Two postures of one rank have one effect: only two requests compare further, by their requirements.
      const r = RANK[a.posture.effect] - RANK[b.posture.effect];
      if (r !== 0 || a.posture.effect !== "requestable") return r;
      return strictness(a.posture.requirements, (b.posture as { requirements: Requirements }).requirements);
    })[0];
  };
}

function failClosed(json: CedarPolicyJson): CedarPolicyJson {
  return { effect: "forbid", principal: { op: "All" }, action: json.action, resource: { op: "All" }, conditions: [], annotations: {} } as CedarPolicyJson;
}

/**
 * The denial that replaces a stored policy that no longer compiles: every call it applies to is denied as an
 * evaluation error (evaluate.ts), with the problem (bounded) as the error the audit trail keeps.
 */
function staleDenial(ref: RuleRef, problem: string): PolicyMeta {
  return { ref, effect: "forbid", requirements: null, reason: EVALUATION_ERROR_REASON, stale: `the stored policy no longer compiles: ${problem}`.slice(0, 300) };
}

const DENY_ALL = { effect: "forbid", principal: { op: "All" }, action: { op: "All" }, resource: { op: "All" }, conditions: [] } as unknown as CedarPolicyJson;

export function compilePolicy(input: CompileInput, opts: { strict: boolean }): CompileResult {
  const problems: PolicyProblem[] = [];
  const { body } = input.document;
  const docRef: RuleRef = { id: input.document.id, ruleKey: "document", version: input.document.version };
  const toolNames = new Set(input.tools.map((t) => t.name));

  const history = body.history.map((h) => ({ name: h.name, tool: h.tool, windowSec: parseDuration(h.window)!, per: h.per }));
  // A stored window of a tool that is gone counts nothing (below); strict compilation refuses it.
  for (const h of history) if (!toolNames.has(h.tool)) problems.push({ message: `history ${h.name}: there is no tool ${h.tool}` });
  const knownHistory = history.filter((h) => toolNames.has(h.tool));

  let schema;
  try {
    schema = buildSchema(input.tools, knownHistory, body.timeZones);
  } catch (e) {
    problems.push({ message: (e as Error).message });
    return { ok: false, problems };
  }

  const texts: Record<string, string | CedarPolicyJson> = {};
  const meta = new Map<string, PolicyMeta>();
  const offsets = new Map<string, number>();

  for (const rule of input.rules) {
    const tool = input.tools.find((t) => t.name === rule.tool);
    const { text, problem } = formRuleToCedar(rule, tool);
    const id = formPolicyId(rule.ruleKey);
    texts[id] = text;
    const ref = { id: rule.id, ruleKey: rule.ruleKey, version: rule.version };
    if (problem) {
      problems.push({ message: problem, policyId: id });
      meta.set(id, staleDenial(ref, problem));
      continue;
    }
    const requestable = rule.effect === "requestable" && rule.approverGroup;
    meta.set(id, {
      ref,
      effect: "forbid",
      requirements: requestable
        ? {
            approverGroup: rule.approverGroup!,
            approvalsRequired: rule.approvalsRequired,
            requestDeadlineSec: rule.requestDeadlineSec,
            approvalValiditySec: rule.approvalValiditySec,
            requireJustification: rule.requireJustification,
            ...(rule.requirePasskey ? { requirePasskey: true } : {}),
            ...(rule.escalateAfterSec && rule.fallbackGroup ? { escalateAfterSec: rule.escalateAfterSec, fallbackGroup: rule.fallbackGroup } : {}),
          }
        : null,
      reason: rule.reason,
    });
  }

  const split = body.policies.trim() ? splitPolicies(body.policies) : { ok: true as const, policies: [] };
  if (!split.ok) {
    problems.push(...split.problems);
    // A stored text that no longer parses denies everything (strict compilation refuses the version below).
    texts["document:unreadable"] = DENY_ALL;
    meta.set("document:unreadable", staleDenial({ ...docRef, ruleKey: "document:unreadable" }, `the policy text does not parse: ${split.problems[0]?.message ?? "unknown"}`));
  } else {
    for (const part of split.policies) {
      const json = policyJson(part.text);
      const at = lineColumn(body.policies, part.offset);
      const id = annotation(json, "id");
      // A form rule's id ("rule:...") never fits POLICY_ID; a default's ruleKey starts with "default".
      if (!id || !POLICY_ID.test(id) || id.startsWith("default")) {
        problems.push({
          message: id ? `@id("${id}") must be lowercase letters, digits, dots, dashes or underscores, not starting with "rule:" or "default"` : "every policy needs an @id(\"...\") annotation",
          ...at,
        });
        if (!opts.strict && json.effect === "forbid") {
          const fallback = `document:unnamed:${part.offset}`;
          texts[fallback] = failClosed(json);
          meta.set(fallback, staleDenial({ ...docRef, ruleKey: fallback }, "a forbid without a valid @id"));
        }
        continue;
      }
      if (meta.has(id)) {
        problems.push({ message: `two policies have @id("${id}")`, policyId: id, ...at });
        continue;
      }
      const req = requirementsFromAnnotations(json);
      if ("problem" in req) {
        // At the annotation the problem names, when it names one.
        const named = /^@([a-z]+)/.exec(req.problem)?.[1];
        const within = named ? part.text.search(new RegExp(`@${named}\\s*\\(`)) : -1;
        problems.push({ message: req.problem, policyId: id, ...(within >= 0 ? lineColumn(body.policies, part.offset + within) : at) });
        if (!opts.strict && json.effect === "forbid") {
          texts[id] = failClosed(json);
          meta.set(id, staleDenial({ ...docRef, ruleKey: id }, `${id}: ${req.problem}`));
        }
        continue;
      }
      texts[id] = part.text;
      offsets.set(id, part.offset);
      meta.set(id, {
        ref: { ...docRef, ruleKey: id },
        effect: json.effect,
        requirements: req.requirements,
        reason: req.reason || (json.effect === "forbid" ? `Denied by the policy ${id}.` : ""),
      });
    }
  }

  for (const v of validatePolicies(schema, texts)) {
    const id = v.policyId;
    const offset = id ? offsets.get(id) : undefined;
    const where = offset === undefined ? {} : lineColumn(body.policies, offset + (v.start ?? 0));
    problems.push({ message: v.message, ...(id ? { policyId: id } : {}), ...where });
    // The set could not be validated at all (the schema the tools make does not resolve): nothing in it can be
    // trusted, and the engine could not load it either. No policy: strict refuses the version, and a stored one
    // is replaced by the denial of every call (compileStored).
    if (!id) return { ok: false, problems };
    // Every policy in the set was put there with its meta.
    const m = meta.get(id)!;
    if (m.effect === "permit") {
      delete texts[id];
      meta.delete(id);
    } else {
      const json = typeof texts[id] === "string" ? policyJson(texts[id] as string) : (texts[id] as CedarPolicyJson);
      texts[id] = failClosed(json);
      meta.set(id, staleDenial(m.ref, v.message));
    }
  }

  if (opts.strict && problems.length > 0) return { ok: false, problems };

  // Requestable forbids are evaluated as permits: Cedar then reports every one that holds in one evaluation
  // (a plain forbid would hide them), and evaluate() reads them back as requestable denials by their meta.
  const evaluated: Record<string, string | CedarPolicyJson> = {};
  for (const [id, t] of Object.entries(texts)) {
    const m = meta.get(id)!;
    if (m.effect === "forbid" && m.requirements) {
      const json = typeof t === "string" ? policyJson(t) : t;
      evaluated[id] = { ...json, effect: "permit" };
    } else {
      evaluated[id] = t;
    }
  }
  // Only the schema is parsed now: no call is evaluated against the whole set, only against an action's part of it.
  const schemaId = preparseSchemaOnly(schema);
  // Each action is evaluated against the policies whose scope can name it (a third of the time with a few tools'
  // policies), parsed on the first call of that action.
  const scopes = Object.entries(evaluated).map(([id, t]) => [id, t, typeof t === "string" ? policyJson(t) : t] as const);
  const byAction = new Map<string, { setId: string; schemaId: string }>();
  const preparedFor = (action: string) => {
    let hit = byAction.get(action);
    if (!hit) {
      hit = preparseSet(Object.fromEntries(scopes.filter(([, , json]) => actionScopeAdmits(json, action)).map(([id, t]) => [id, t])), schemaId);
      byAction.set(action, hit);
    }
    return hit;
  };
  return {
    ok: true,
    policy: {
      preparedFor,
      evaluated,
      meta,
      tools: new Map(input.tools.map((t) => [t.name, t])),
      document: { ref: docRef, zones: body.timeZones, history: knownHistory },
      posture: postureResolver(body, docRef),
      problems: problems.map((p) => (p.line ? `${p.message} (line ${p.line}, column ${p.column})` : p.message)),
      visibility: new Map(),
      settled: new Map(),
    },
  };
}
