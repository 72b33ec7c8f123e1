/**
 * checkAnswer: an agent's form answer is untrusted. Each bound of the question's schema is held exactly at its
 * edge, a value of the wrong type is refused (never coerced), and only the asked fields are kept, trimmed.
 */
import { describe, expect, it } from "vitest";
import { checkAnswer } from "./answers";
import type { InputQuestion } from "./types";

const question = (properties: Record<string, unknown>, required: string[] = []): InputQuestion => ({
  message: "q",
  requestedSchema: { type: "object", properties, required },
});

const refused = (q: InputQuestion, content: unknown) => {
  const r = checkAnswer(q, content);
  if (r.ok) throw new Error(`accepted ${JSON.stringify(content)}`);
  return r.message;
};
const accepted = (q: InputQuestion, content: unknown) => {
  const r = checkAnswer(q, content);
  if (!r.ok) throw new Error(`refused ${JSON.stringify(content)}: ${r.message}`);
  return r.content;
};

describe("checkAnswer", () => {
  it("needs an object as content", () => {
    const q = question({ answer: { type: "string" } });
    for (const c of [null, undefined, "text", 3, [], [{ answer: "x" }]]) expect(refused(q, c)).toBe("content must be an object");
    expect(accepted(q, {})).toEqual({});
  });

  it("refuses a required field that is missing, null or only blanks, and names it", () => {
    const q = question({ answer: { type: "string" }, note: { type: "string" } }, ["answer"]);
    expect(refused(q, {})).toBe("answer is required");
    expect(refused(q, { answer: null })).toBe("answer is required");
    expect(refused(q, { answer: "  \n " })).toBe("answer is required");
    expect(refused(q, { note: "n" })).toBe("answer is required");
    // A required boolean false and number 0 are answers.
    const flags = question({ ok: { type: "boolean" }, n: { type: "number" } }, ["ok", "n"]);
    expect(accepted(flags, { ok: false, n: 0 })).toEqual({ ok: false, n: 0 });
  });

  it("holds a string's length at both edges, counted after trimming, and keeps it trimmed", () => {
    const q = question({ s: { type: "string", minLength: 3, maxLength: 5 } });
    expect(refused(q, { s: "ab" })).toBe("s needs at least 3 characters");
    expect(refused(q, { s: "  ab  " })).toBe("s needs at least 3 characters");
    expect(accepted(q, { s: " abc " })).toEqual({ s: "abc" });
    expect(accepted(q, { s: "abcde" })).toEqual({ s: "abcde" });
    expect(refused(q, { s: "abcdef" })).toBe("s allows at most 5 characters");
    expect(refused(q, { s: 12345 })).toBe("s must be a string");
    expect(refused(q, { s: true })).toBe("s must be a string");
  });

  it("holds a number's bounds at both edges and refuses what is not a finite number", () => {
    const q = question({ n: { type: "number", minimum: 1, maximum: 10 } });
    expect(refused(q, { n: 0.5 })).toBe("n must be at least 1");
    expect(accepted(q, { n: 1 })).toEqual({ n: 1 });
    expect(accepted(q, { n: 2.5 })).toEqual({ n: 2.5 });
    expect(accepted(q, { n: 10 })).toEqual({ n: 10 });
    expect(refused(q, { n: 10.01 })).toBe("n must be at most 10");
    expect(refused(q, { n: "5" })).toBe("n must be a number");
    expect(refused(q, { n: Number.NaN })).toBe("n must be a number");
    expect(refused(q, { n: Number.POSITIVE_INFINITY })).toBe("n must be a number");
    // Zero bounds are bounds.
    const zero = question({ n: { type: "integer", minimum: 0, maximum: 0 } });
    expect(refused(zero, { n: -1 })).toBe("n must be at least 0");
    expect(refused(zero, { n: 1 })).toBe("n must be at most 0");
    expect(accepted(zero, { n: 0 })).toEqual({ n: 0 });
  });

  it("refuses a fraction for an integer, not for a number", () => {
    expect(refused(question({ n: { type: "integer" } }), { n: 1.5 })).toBe("n must be an integer");
    expect(accepted(question({ n: { type: "integer" } }), { n: 2 })).toEqual({ n: 2 });
    expect(accepted(question({ n: { type: "number" } }), { n: 1.5 })).toEqual({ n: 1.5 });
  });

  it("takes a boolean only as true or false", () => {
    const q = question({ b: { type: "boolean" } });
    expect(accepted(q, { b: true })).toEqual({ b: true });
    expect(accepted(q, { b: false })).toEqual({ b: false });
    for (const v of ["true", 1, 0]) expect(refused(q, { b: v })).toBe("b must be true or false");
  });

  it("takes an enum field only as one of the offered values, whatever its type says", () => {
    const q = question({ e: { type: "string", enum: ["low", "high"] } });
    expect(accepted(q, { e: "low" })).toEqual({ e: "low" });
    expect(refused(q, { e: "medium" })).toBe("e is not one of the offered values");
    expect(refused(q, { e: "Low" })).toBe("e is not one of the offered values");
  });

  it("refuses a field of a type a question never asks, rather than storing it unchecked", () => {
    expect(refused(question({ o: { type: "object" } }), { o: { a: 1 } })).toBe("o has a type this server does not accept");
    expect(refused(question({ o: {} }), { o: "x" })).toBe("o has a type this server does not accept");
  });

  it("keeps only the asked fields, and leaves out an optional field not given", () => {
    const q = question({ answer: { type: "string" }, n: { type: "number" } }, ["answer"]);
    expect(accepted(q, { answer: " yes ", extra: "dropped", __proto__x: 1 })).toEqual({ answer: "yes" });
    expect(accepted(q, { answer: "yes", n: null })).toEqual({ answer: "yes" });
  });

  it("accepts any object when the question names no properties", () => {
    expect(accepted({ message: "q", requestedSchema: {} }, { a: 1 })).toEqual({});
  });
});
