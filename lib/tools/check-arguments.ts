/**
 * What every tool's arguments must be before the tool's own schema reads them, and the words for a refusal.
 *
 * Arguments are stored (the call binding, the submission body), shown to reviewers and handed to the tool, so
 * text that none of these can hold is invalid input, refused before anything is evaluated or written:
 *  - a NUL character (U+0000): PostgreSQL text and jsonb cannot store it, and paths end at it;
 *  - an unpaired UTF-16 surrogate: it is not Unicode text at all, and is stored or encoded differently by each
 *    layer it passes through;
 *  - a key naming an object's prototype machinery (`__proto__`, `constructor`, `prototype`): JSON.parse makes
 *    such a key an ordinary own property, but copying it into an object changes that object's prototype instead,
 *    so different layers would see different arguments. All three are refused the same way, wherever they occur.
 *
 * Refusals stay short whatever the input: a few problems are named, the rest counted.
 */
import type { z } from "zod";

const RESERVED_KEYS = new Set(["__proto__", "constructor", "prototype"]);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const MAX_NAMED = 5;
const MAX_KEY = 40;
const MAX_MESSAGE = 200;

function textProblem(s: string): string | null {
  if (s.includes("\u0000")) return "contains a NUL character (U+0000), which text arguments must not contain";
  if (LONE_SURROGATE.test(s)) return "contains an unpaired surrogate, which is not valid Unicode text";
  return null;
}

/** A key as it may be quoted back: bounded, with anything unprintable replaced. */
function shownKey(key: string | number): string {
  if (typeof key === "number") return String(key);
  const clean = key.replace(/[\u0000-\u001f\u007f]/g, "?").replace(new RegExp(LONE_SURROGATE, "g"), "?");
  return clean.length > MAX_KEY ? `${clean.slice(0, MAX_KEY)}…` : clean;
}

const MAX_SEGMENTS = 6;

/** `a.b.0`, or `root` for the whole value; a deep path keeps its first and last segments. */
export function pathText(path: readonly PropertyKey[], root = "arguments"): string {
  if (path.length === 0) return root;
  const shown = path.length > MAX_SEGMENTS ? [...path.slice(0, 3), "…", ...path.slice(-2)] : path;
  return shown.map((k) => shownKey(typeof k === "symbol" ? "?" : k)).join(".");
}

type Node = { value: unknown; parent: Node | null; key: string | number | null };

function pathOf(node: Node | null): (string | number)[] {
  const out: (string | number)[] = [];
  for (let n = node; n && n.key !== null; n = n.parent) out.push(n.key);
  return out.reverse();
}

/**
 * The first problem in `value` (walked in document order, iteratively so no nesting depth can exhaust the stack),
 * as `path: what is wrong`; null when there is none.
 */
export function argumentsProblem(value: unknown, root = "arguments"): string | null {
  const stack: Node[] = [{ value, parent: null, key: null }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.value;
    if (typeof v === "string") {
      const p = textProblem(v);
      if (p) return `${pathText(pathOf(node), root)}: the text ${p}`;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], parent: node, key: i });
    } else if (v !== null && typeof v === "object") {
      const keys = Object.keys(v);
      for (const key of keys) {
        if (RESERVED_KEYS.has(key)) return `${pathText([...pathOf(node), key], root)}: "${key}" is not allowed as a key`;
        const p = textProblem(key);
        if (p) return `${pathText(pathOf(node), root)}: a key ${p}`;
      }
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: (v as Record<string, unknown>)[keys[i]], parent: node, key: keys[i] });
    }
  }
  return null;
}

function count(n: number): string {
  return n.toLocaleString("en-US");
}

function issueText(issue: z.core.$ZodIssue): string {
  const where = pathText(issue.path);
  if (issue.code === "unrecognized_keys") {
    const named = issue.keys.slice(0, MAX_NAMED).map((k) => `"${shownKey(k)}"`).join(", ");
    const rest = issue.keys.length - MAX_NAMED;
    return `${where}: unrecognized key${issue.keys.length === 1 ? "" : "s"} ${named}${rest > 0 ? ` and ${count(rest)} more` : ""}`;
  }
  const message = issue.message.length > MAX_MESSAGE ? `${issue.message.slice(0, MAX_MESSAGE)}…` : issue.message;
  return `${where}: ${message}`;
}

/** A schema's refusal in a few words: the first problems named, the rest counted. */
export function describeIssues(error: z.ZodError): string {
  const named = error.issues.slice(0, MAX_NAMED).map(issueText).join("; ");
  const rest = error.issues.length - MAX_NAMED;
  return rest > 0 ? `${named}; and ${count(rest)} more problem${rest === 1 ? "" : "s"}` : named;
}
