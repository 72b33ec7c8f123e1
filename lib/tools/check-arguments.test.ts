/**
 * Arguments no tool may receive, in the domain: callTool refuses them as invalid input before the tool's schema,
 * policy or storage see them, and the words stay short.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { callTool } from "../tasks/call";
import { principal, resetDb, rowsWritten } from "../../tests/support/db";
import { argumentsProblem, describeIssues } from "./check-arguments";

const T0 = new Date("2026-11-30T10:00:00Z");

async function written(): Promise<number> {
  return Object.values(await rowsWritten()).reduce((a, b) => a + b, 0);
}

describe("arguments that cannot be stored are invalid input (callTool)", () => {
  beforeEach(resetDb);

  it.each([
    ["a NUL character in a value", "issue_refund", { order_id: "O-2289", reason: "x\u0000y" }, /reason: the text contains a NUL character/],
    ["a lone surrogate in a value", "wire_transfer", { to: "acct-991", amount: 30_000, memo: "\ud800" }, /memo: the text contains an unpaired surrogate/],
    ["a NUL character in a key", "deploy_service", { service: "checkout-api", environment: "production", version: "1.4.2", ["a\u0000"]: 1 }, /arguments: a key contains a NUL/],
    ["an own __proto__ key, as JSON.parse makes it", "issue_refund", JSON.parse('{"order_id":"O-2289","__proto__":{"amount":1}}'), /__proto__: "__proto__" is not allowed as a key/],
    ["a constructor key", "issue_refund", { order_id: "O-2289", constructor: { amount: 1 } }, /constructor: "constructor" is not allowed as a key/],
  ])("%s: refused, says the tool did not run, and writes nothing", async (_label, tool, args, words) => {
    const out = await callTool(await principal(), tool, args, { tasks: true }, T0);
    expect(out.kind).toBe("result");
    if (out.kind !== "result") return;
    expect(out.outcome.isError).toBe(true);
    expect(out.outcome.text).toMatch(new RegExp(`^Invalid arguments for ${tool}: `));
    expect(out.outcome.text).toMatch(words);
    expect(out.outcome.text).toMatch(/The tool did not run\.$/);
    expect(await written()).toBe(0);
  });

  it("100,000 unknown keys: the refusal names the first five and counts the rest", async () => {
    const args: Record<string, unknown> = { order_id: "O-2289" };
    for (let i = 0; i < 100_000; i++) args[`key${i}`] = true;
    const out = await callTool(await principal(), "issue_refund", args, { tasks: true }, T0);
    if (out.kind !== "result") throw new Error(out.kind);
    expect(out.outcome.text).toBe(
      'Invalid arguments for issue_refund: arguments: unrecognized keys "key0", "key1", "key2", "key3", "key4" and 99,995 more. The tool did not run.',
    );
    expect(await written()).toBe(0);
  });
});

describe("argumentsProblem", () => {
  it("accepts ordinary text, including paired surrogates (emoji) and other control characters", () => {
    expect(argumentsProblem({ a: "Grüße 👋", b: ["tab\there", { c: "line\nbreak" }], d: 1, e: null, f: true })).toBeNull();
  });

  it("finds a problem at any depth and names where it is", () => {
    expect(argumentsProblem({ a: [{ b: "ok" }, { c: ["x", "\udc00"] }] })).toBe("a.1.c.1: the text contains an unpaired surrogate, which is not valid Unicode text");
    expect(argumentsProblem({ a: { prototype: 1 } })).toBe('a.prototype: "prototype" is not allowed as a key');
    expect(argumentsProblem("\u0000", "inputResponses")).toMatch(/^inputResponses: the text contains a NUL/);
  });

  it("reports the first problem in document order", () => {
    expect(argumentsProblem({ a: "\u0000", b: "\ud800" })).toMatch(/^a: /);
    expect(argumentsProblem([{ x: 1 }, "\ud800", "\u0000"])).toMatch(/^1: /);
  });

  it("walks any depth without exhausting the stack", () => {
    let deep: unknown = "\u0000";
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const problem = argumentsProblem(deep)!;
    expect(problem).toMatch(/^0\.0\.0\.….0\.0: the text contains a NUL/);
    expect(problem.length).toBeLessThan(120);
  });

  it("quotes keys back shortened and without unprintable characters", () => {
    const long = "k".repeat(10_000);
    expect(argumentsProblem({ [long]: { constructor: 1 } })!.length).toBeLessThan(120);
  });
});

describe("describeIssues", () => {
  it("names at most five problems and counts the rest", () => {
    const schema = z.object(Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}`, z.string()]))).strict();
    const r = schema.safeParse({});
    expect(r.success).toBe(false);
    const text = describeIssues(r.error!);
    expect(text.match(/f\d: /g)).toHaveLength(5);
    expect(text).toMatch(/; and 3 more problems$/);
  });

  it("a single unknown key reads as one", () => {
    const r = z.object({}).strict().safeParse({ extra: 1 });
    expect(describeIssues(r.error!)).toBe('arguments: unrecognized key "extra"');
  });
});
