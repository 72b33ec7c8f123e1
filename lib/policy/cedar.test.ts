/**
 * The adapter to Cedar (cedar.ts): where a problem in what an admin wrote is reported, how a policy text is cut into
 * its policies, that a request which does not fit the schema is refused rather than evaluated, and that sets parsed
 * into the engine keep apart.
 */
import { describe, expect, it } from "vitest";
import {
  authorize,
  authorizePartial,
  lineColumn,
  policyJson,
  policySpans,
  preparse,
  preparseSchemaOnly,
  preparseSet,
  splitPolicies,
  validatePolicies,
  type CedarRequest,
  type CedarSchema,
} from "./cedar";

const SCHEMA = {
  "": {
    entityTypes: { U: {} },
    actions: {
      a: { appliesTo: { principalTypes: ["U"], resourceTypes: ["U"], context: { type: "Record", attributes: { n: { type: "Long" } } } } },
    },
  },
} as unknown as CedarSchema;

/** A schema naming a parent type it never declares. */
const BROKEN = { "": { entityTypes: { U: { memberOfTypes: ["Nope"] } }, actions: {} } } as unknown as CedarSchema;

const request = (n: unknown): CedarRequest => ({
  principal: { type: "U", id: "p" },
  action: { type: "Action", id: "a" },
  resource: { type: "U", id: "r" },
  context: { n } as CedarRequest["context"],
  entities: [],
});

describe("lineColumn", () => {
  it("counts lines and columns from 1, and keeps an offset outside the text at its ends", () => {
    expect(lineColumn("ab\ncd", 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn("ab\ncd", 2)).toEqual({ line: 1, column: 3 });
    expect(lineColumn("ab\ncd", 4)).toEqual({ line: 2, column: 2 });
    expect(lineColumn("ab\ncd", -3)).toEqual({ line: 1, column: 1 });
    expect(lineColumn("ab\ncd", 99)).toEqual({ line: 2, column: 3 });
  });
});

describe("splitting a policy text into its policies", () => {
  it("cuts at the semicolons that end policies, not those in comments or strings, each policy with its offset", () => {
    const first = 'permit (principal, action, resource) when { "a;}\\";" == "x" };';
    const second = "forbid (principal, action, resource)\n  when { [1, 2].contains(3) };";
    const text = `// one; two { "\n${first}\n\n  // between; }\n${second} // tail; no newline`;
    const split = splitPolicies(text);
    expect(split).toEqual({
      ok: true,
      policies: [
        { text: first, offset: text.indexOf(first) },
        { text: second, offset: text.indexOf(second) },
      ],
    });
    expect(policySpans("// only a comment; nothing else")).toEqual([]);
  });

  it("reports a parse error with Cedar's words, what it expected, and the line and column", () => {
    const split = splitPolicies('permit (principal, action, resource);\npermit (principal, action, resource) when { 1 == };');
    expect(split.ok).toBe(false);
    if (split.ok) return;
    expect(split.problems).toHaveLength(1);
    expect(split.problems[0].message).toMatch(/^unexpected token `}`: expected .*`true`$/);
    expect(split.problems[0]).toMatchObject({ line: 2, column: 50 });
    expect(splitPolicies("\n  allow (principal, action, resource);")).toEqual({
      ok: false,
      problems: [{ message: "invalid policy effect: allow (effect must be either `permit` or `forbid`)", line: 2, column: 3 }],
    });
  });

  it("refuses templates in words an admin can act on", () => {
    expect(splitPolicies("permit (principal == ?principal, action, resource);")).toEqual({
      ok: false,
      problems: [{ message: "policy templates are not supported; write static policies" }],
    });
  });

  it("a policy that does not parse on its own is an error with Cedar's words", () => {
    expect(() => policyJson("permit (principal, action")).toThrow(/unexpected end of input/);
  });
});

describe("validating policies against the schema", () => {
  it("names the policy, gives Cedar's help in brackets and the offset in the policy's own text", () => {
    const problems = validatePolicies(SCHEMA, {
      p: 'permit (principal, action, resource) when { context.n == "x" };',
      q: "permit (principal, action, resource) when { context.m == 1 };",
    });
    expect([...problems].sort((a, b) => String(a.policyId).localeCompare(String(b.policyId)))).toEqual([
      { policyId: "p", message: expect.stringMatching(/^the types Long and String are not compatible \(for policy `p`, both operands .+\)$/), start: 44 },
      { policyId: "q", message: 'for policy `q`, attribute `m` in context for Action::"a" not found (did you mean `n`?)', start: 44 },
    ]);
    expect(validatePolicies(SCHEMA, { ok: "permit (principal, action, resource) when { context.n == 1 };" })).toEqual([]);
    // A problem Cedar gives no help for has no brackets.
    expect(validatePolicies(SCHEMA, { p: "permit (principal, action, resource) when { principal.x == 1 };" })).toEqual([
      { policyId: "p", message: "for policy `p`, attribute `x` on entity type `U` not found", start: 44 },
    ]);
  });

  it("a schema that does not resolve is a problem of no policy", () => {
    expect(validatePolicies(BROKEN, {})).toEqual([{ policyId: null, message: "failed to resolve type: Nope" }]);
  });
});

describe("sets parsed into the engine", () => {
  it("refuses a set or a schema that does not parse, in Cedar's words", () => {
    const schemaId = preparseSchemaOnly(SCHEMA);
    expect(() => preparseSet({ p: "permit (principal, action" }, schemaId)).toThrow(/unexpected end of input/);
    expect(() => preparseSchemaOnly(BROKEN)).toThrow(/Nope/);
  });

  it("a refusal is an Error with each of Cedar's problems, separated", () => {
    // toThrow(/words/) also holds when the thrown value is undefined: the Error itself is read here.
    const thrown = (fn: () => unknown): unknown => {
      try {
        fn();
      } catch (e) {
        return e;
      }
      return "nothing was thrown";
    };
    const both = thrown(() => preparseSet({ p: "permit (principal, action", q: "forbid (principal" }, preparseSchemaOnly(SCHEMA)));
    expect(both).toBeInstanceOf(Error);
    const parts = (both as Error).message.split("; ");
    expect(parts.sort()).toEqual(["p", "q"].map((id) => `failed to parse policy with id \`${id}\` from string: unexpected end of input`));
    const one = thrown(() => policyJson("permit (principal, action, resource) when { 1 + };"));
    expect(one).toBeInstanceOf(Error);
    expect((one as Error).message).toBe("failed to parse policy from string: unexpected token `}`");
  });

  it("each set keeps its own policies, however many are parsed after it", () => {
    const permitting = preparse({ p: "permit (principal, action, resource);" }, SCHEMA);
    const schemaId = preparseSchemaOnly(SCHEMA);
    const forbidding = preparseSet({ f: "forbid (principal, action, resource);" }, schemaId);
    const empty = preparseSet({}, schemaId);
    expect(new Set([permitting.setId, forbidding.setId, empty.setId]).size).toBe(3);
    expect(new Set([permitting.schemaId, schemaId]).size).toBe(2);
    expect(authorize(permitting, request(1))).toEqual({ ok: true, decision: "allow", determining: ["p"], errors: [] });
    expect(authorize(forbidding, request(1))).toEqual({ ok: true, decision: "deny", determining: ["f"], errors: [] });
    expect(authorize(empty, request(1))).toEqual({ ok: true, decision: "deny", determining: [], errors: [] });
  });
});

describe("authorize", () => {
  const prepared = preparse(
    {
      big: "forbid (principal, action, resource) when { context.n > 10 };",
      overflow: "permit (principal, action, resource) when { context.n + 9223372036854775807 > 0 };",
      any: "permit (principal, action, resource);",
    },
    SCHEMA,
  );

  it("refuses a request whose context does not fit the schema, rather than evaluating it", () => {
    // Unvalidated, a string where a Long is declared makes `context.n > 10` an error that drops the forbid.
    const answer = authorize(prepared, request("11"));
    expect(answer.ok).toBe(false);
    if (answer.ok) return;
    expect(answer.errors.join(" ")).toMatch(/context/);
  });

  it("reports the policies that decided and, by policy, those that erred", () => {
    const overflow = [expect.stringMatching(/^overflow: integer overflow/)];
    expect(authorize(prepared, request(11))).toEqual({ ok: true, decision: "deny", determining: ["big"], errors: overflow });
    expect(authorize(prepared, request(1))).toEqual({ ok: true, decision: "allow", determining: ["any"], errors: overflow });
    const clean = authorize(prepared, request(0));
    expect(clean.ok && { ...clean, determining: [...clean.determining].sort() }).toEqual({ ok: true, decision: "allow", determining: ["any", "overflow"], errors: [] });
  });
});

describe("authorizePartial", () => {
  it("with the context unknown, a forbid that holds on any context must decide; one that depends on it only may", () => {
    const partial = (policies: Record<string, string>) => authorizePartial(policies, { type: "U", id: "p" }, { type: "Action", id: "a" }, [], ["args"]);
    const always = partial({ always: "forbid (principal, action, resource);", maybe: "permit (principal, action, resource) when { context.args > 1 };" });
    expect(always).toMatchObject({ ok: true, decision: "deny", mustBeDetermining: ["always"], nontrivialResiduals: ["maybe"], errored: [] });
    const depends = partial({ maybe: "forbid (principal, action, resource) when { context.args > 1 };", always: "permit (principal, action, resource);" });
    expect(depends.ok && { ...depends, mayBeDetermining: [...depends.mayBeDetermining].sort() }).toEqual({
      ok: true,
      decision: null,
      mustBeDetermining: [],
      mayBeDetermining: ["always", "maybe"],
      nontrivialResiduals: ["maybe"],
      errored: [],
    });
  });

  it("names the policies that errored on what is known", () => {
    const r = authorizePartial(
      { overflows: "forbid (principal, action, resource) when { 9223372036854775807 + 1 > 0 };", fine: "permit (principal, action, resource);" },
      { type: "U", id: "p" },
      { type: "Action", id: "a" },
      [],
      ["args"],
    );
    expect(r).toMatchObject({ ok: true, decision: "allow", mustBeDetermining: ["fine"], nontrivialResiduals: [], errored: ["overflows"] });
  });

  it("is not ok when the policies cannot be read", () => {
    expect(authorizePartial({ p: "permit (principal, action" }, { type: "U", id: "p" }, { type: "Action", id: "a" }, [], ["args"])).toEqual({ ok: false });
  });
});
