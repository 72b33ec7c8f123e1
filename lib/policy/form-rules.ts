/**
 * Form rules (the threshold editor's rules: one tool, one resource attribute, one comparison) compiled to Cedar.
 * A form rule is always a `forbid`: requestable when it names an approver group, a plain denial otherwise. The
 * compiled text is what the engine evaluates and what the advanced editor shows.
 */
import type { Rule } from "./evaluate";
import type { PolicyTool, ResourceAttr } from "./schema";

export const FORM_PREFIX = "rule:";

export function formPolicyId(ruleKey: string): string {
  return `${FORM_PREFIX}${ruleKey}`;
}

export function cedarString(s: string): string {
  return JSON.stringify(s);
}

/** A Cedar `like` pattern matching exactly `s` followed by anything (`*` in `s` is literal). */
export function likePrefix(s: string): string {
  const escaped = JSON.stringify(s).slice(1, -1).replace(/\*/g, "\\*");
  return `"${escaped}*"`;
}

/** "resource has x && " when the attribute may be absent, so a condition over it never errors. */
function presentGuard(tool: PolicyTool, name: string): string {
  const a = tool.resourceShape[name];
  return a && a.type !== "Money" && a.optional ? `resource has ${name} && ` : "";
}

/**
 * The condition of a rule over the resource, or null when it cannot be written for this tool (an attribute the
 * tool does not have, a value of the wrong type). A rule whose operator this server does not know matches every
 * call of its tool: an unknown rule must never silently allow.
 */
export function formCondition(rule: Pick<Rule, "field" | "operator" | "value">, tool: PolicyTool): string | null {
  const attr = tool.resourceShape[rule.field];
  if (!attr || attr.type === "Money" || attr.type === "Boolean") return null;
  const ref = `resource.${rule.field}`;
  const guard = presentGuard(tool, rule.field);
  const whole = /^-?\d{1,15}$/.test(rule.value.trim());
  if (attr.type === "StringSet") return setCondition(rule, attr, tool);
  switch (rule.operator) {
    case "gt":
    case "gte":
      if (attr.type !== "Long" || !whole) return null;
      return `${guard}${ref} ${rule.operator === "gt" ? ">" : ">="} ${Number(rule.value.trim())}`;
    case "eq":
      if (attr.type === "Long") return whole ? `${guard}${ref} == ${Number(rule.value.trim())}` : null;
      return `${guard}${ref} == ${cedarString(rule.value)}`;
    case "prefix": {
      if (attr.type !== "String") return null;
      // A value ending in "/" names a folder: it covers the folder itself as well as everything in it, so "prod/"
      // matches "prod" and "prod/logs" but not "production". Resources are canonical (see ToolDef.resource).
      const folder = rule.value.length > 1 && rule.value.endsWith("/") ? ` || ${ref} == ${cedarString(rule.value.slice(0, -1))}` : "";
      return `${guard}(${ref} like ${likePrefix(rule.value)}${folder})`;
    }
    default:
      return "true";
  }
}

/**
 * A rule over a set of paths matches when any of them matches: "eq" when the set holds the value; "prefix" with a
 * folder (a value ending in "/") when any path is that folder or lies in it, read from the attribute naming every
 * folder of the paths. A prefix that is not a folder cannot be read from a set, so it is not writable.
 */
function setCondition(rule: Pick<Rule, "field" | "operator" | "value">, attr: ResourceAttr & { type: "StringSet" }, tool: PolicyTool): string | null {
  const guard = (name: string) => presentGuard(tool, name);
  switch (rule.operator) {
    case "eq":
      return `${guard(rule.field)}resource.${rule.field}.contains(${cedarString(rule.value)})`;
    case "prefix": {
      if (!attr.folders || !tool.resourceShape[attr.folders] || rule.value.length < 2 || !rule.value.endsWith("/")) return null;
      return `${guard(attr.folders)}resource.${attr.folders}.contains(${cedarString(rule.value.slice(0, -1))})`;
    }
    case "gt":
    case "gte":
      return null;
    default:
      return "true";
  }
}

/** When the money a rule compares is in a currency, a call in another currency matches too (fail closed). */
function currencyGuard(rule: Pick<Rule, "field" | "currency">, tool: PolicyTool): string {
  if (!rule.currency) return "";
  const money = Object.entries(tool.resourceShape).find(([, a]) => a.type === "Money" && a.minor === rule.field);
  const currencyAttr = money && money[1].type === "Money" ? money[1].currency : tool.resourceShape.currency ? "currency" : null;
  return currencyAttr ? `resource.${currencyAttr} != ${cedarString(rule.currency)} || ` : "";
}

function annotations(rule: Rule): string[] {
  const lines = [`@id(${cedarString(formPolicyId(rule.ruleKey))})`, `@reason(${cedarString(rule.reason)})`];
  if (rule.effect === "requestable" && rule.approverGroup) {
    lines.push(
      `@approvers(${cedarString(rule.approverGroup)})`,
      `@quorum("${rule.approvalsRequired}")`,
      `@deadline("${rule.requestDeadlineSec}s")`,
      `@validity("${rule.approvalValiditySec}s")`,
    );
    if (rule.requireJustification) lines.push(`@justification("required")`);
    if (rule.requirePasskey) lines.push(`@passkey("required")`);
    if (rule.escalateAfterSec && rule.fallbackGroup) lines.push(`@escalate("${rule.escalateAfterSec}s")`, `@fallback(${cedarString(rule.fallbackGroup)})`);
  }
  return lines;
}

/** The Cedar text of a form rule; a rule that cannot be written for its tool denies every call of the tool. */
export function formRuleToCedar(rule: Rule, tool: PolicyTool | undefined): { text: string; problem: string | null } {
  const scope = `forbid (principal, action == Action::${cedarString(rule.tool)}, resource)`;
  const cond = tool ? formCondition(rule, tool) : null;
  if (cond === null) {
    const problem = tool
      ? `rule ${rule.ruleKey}: ${tool.name} has no attribute ${rule.field} that ${rule.operator} ${rule.value} can compare`
      : `rule ${rule.ruleKey}: there is no tool ${rule.tool}`;
    const failClosed = [`@id(${cedarString(formPolicyId(rule.ruleKey))})`, `@reason(${cedarString(`The policy rule ${rule.ruleKey} could not be evaluated, so the call is denied.`)})`];
    return { text: `${failClosed.join("\n")}\n${scope};`, problem };
  }
  return { text: `${annotations(rule).join("\n")}\n${scope}\nwhen { ${currencyGuard(rule, tool!)}${cond} };`, problem: null };
}
