/**
 * Summary templates: the one line reviewers read for a call of an upstream tool, e.g. `write {path}`. A
 * placeholder `{name}` is replaced by that argument (a path argument by the path it resolves to under the
 * server's root); a template may only name arguments the tool's accepted input schema declares.
 */
import type { ToolSnapshot } from "./source";

export const PLACEHOLDER = /\{([^{}]*)\}/g;
const ARGUMENT_NAME = /^[A-Za-z0-9_]{1,64}$/;

/** What is wrong with `template` for a tool of this snapshot, or null when it can be used. */
export function summaryTemplateProblem(template: string, snapshot: ToolSnapshot): string | null {
  if (template.trim().length === 0 || template.length > 200 || /[\u0000-\u001f\u007f]/.test(template)) {
    return "A summary template is one line of at most 200 characters.";
  }
  const props = snapshot.inputSchema.properties;
  const known = new Set(props && typeof props === "object" && !Array.isArray(props) ? Object.keys(props) : []);
  const unknown: string[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) {
    const name = m[1];
    if (!ARGUMENT_NAME.test(name)) return `{${name}} is not a placeholder: write an argument's name in braces, e.g. {path}.`;
    if (!known.has(name) && !unknown.includes(name)) unknown.push(name);
  }
  if (/[{}]/.test(template.replace(PLACEHOLDER, ""))) return "A brace without its pair: placeholders are written {argument}.";
  if (unknown.length > 0) {
    const offered = [...known].sort();
    return `The tool has no argument ${unknown.map((u) => `{${u}}`).join(", ")}${offered.length ? `; its arguments are ${offered.map((k) => `{${k}}`).join(", ")}` : "; it takes no arguments"}.`;
  }
  return null;
}
