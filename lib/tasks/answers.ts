/**
 * Checks a form answer against the flat schema of the question that asked for it (the restricted JSON Schema of
 * MCP form elicitation: an object of string, number, integer, boolean and enum fields). Answers come from the
 * agent and are untrusted: a value that does not fit is refused, never coerced. Strings are trimmed.
 */
import type { InputQuestion } from "./types";

type Field = {
  type?: string;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
};

export type AnswerCheck = { ok: true; content: Record<string, string | number | boolean> } | { ok: false; message: string };

export function checkAnswer(question: InputQuestion, content: unknown): AnswerCheck {
  if (!content || typeof content !== "object" || Array.isArray(content)) return { ok: false, message: "content must be an object" };
  const schema = question.requestedSchema as { properties?: Record<string, Field>; required?: string[] };
  const properties = schema.properties ?? {};
  const given = content as Record<string, unknown>;
  const out: Record<string, string | number | boolean> = {};
  for (const name of schema.required ?? []) {
    const v = given[name];
    if (v === undefined || v === null || (typeof v === "string" && !v.trim())) return { ok: false, message: `${name} is required` };
  }
  for (const [name, field] of Object.entries(properties)) {
    const v = given[name];
    if (v === undefined || v === null) continue;
    const problem = checkField(field, v);
    if (problem) return { ok: false, message: `${name} ${problem}` };
    out[name] = typeof v === "string" ? v.trim() : (v as number | boolean);
  }
  // Fields the question did not ask for are dropped, not stored.
  return { ok: true, content: out };
}

function checkField(field: Field, v: unknown): string | null {
  if (field.enum) return field.enum.includes(v) ? null : "is not one of the offered values";
  switch (field.type) {
    case "string": {
      if (typeof v !== "string") return "must be a string";
      const s = v.trim();
      if (s.length < (field.minLength ?? 0)) return `needs at least ${field.minLength} characters`;
      if (s.length > (field.maxLength ?? Infinity)) return `allows at most ${field.maxLength} characters`;
      return null;
    }
    case "number":
    case "integer": {
      // Number.isFinite is false for anything that is not a number (it does not convert "5").
      if (!Number.isFinite(v)) return "must be a number";
      const n = v as number;
      if (field.type === "integer" && !Number.isInteger(n)) return "must be an integer";
      if (n < (field.minimum ?? -Infinity)) return `must be at least ${field.minimum}`;
      if (n > (field.maximum ?? Infinity)) return `must be at most ${field.maximum}`;
      return null;
    }
    case "boolean":
      return typeof v === "boolean" ? null : "must be true or false";
    default:
      // A question never asks for a field of another type; refuse rather than store something unchecked.
      return "has a type this server does not accept";
  }
}
