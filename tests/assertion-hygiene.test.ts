/**
 * Assertions that cannot fail. Vitest's `toMatchObject` (as of 4.1) reads a regular expression in the expected
 * object as an object with no keys, so `toMatchObject({ error: /words/ })` holds for any value of `error`, a
 * number included: the assertion looks like a check of the words and checks nothing. A regular expression goes in
 * `expect.stringMatching(...)` there. This file proves the library's behaviour (when a later Vitest reads the
 * expression, the first test fails and the scan can go) and scans every test and browser spec for such a value.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");
const SKIP = new Set(["node_modules", ".next", ".git", ".cache", ".data", "reports", "test-results", "playwright-report", "test-reports", ".stryker-tmp"]);
const TEST_FILE = /\.(test|spec)\.tsx?$/;

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(full));
    else if (TEST_FILE.test(entry.name)) out.push(full);
  }
  return out;
}

const parse = (file: string, text: string) => ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
const lineOf = (source: ts.SourceFile, node: ts.Node) => `${source.fileName}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;

/** Each regular expression given as a value (in an object or an array, at any depth) to `toMatchObject`, as file:line. */
export function vacuousPatterns(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const inExpected = (node: ts.Node): void => {
    if (ts.isRegularExpressionLiteral(node)) found.push(lineOf(source, node));
    else if (ts.isObjectLiteralExpression(node)) for (const p of node.properties) ts.isPropertyAssignment(p) && inExpected(p.initializer);
    else if (ts.isArrayLiteralExpression(node)) node.elements.forEach(inExpected);
    else if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node)) inExpected(node.expression);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === "toMatchObject") node.arguments.forEach(inExpected);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Each assertion statement that asserts nothing, as file:line: `expect(x);` or a matcher named but not called
 * (`expect(x).toBeTruthy;`), and an `expect(promise).resolves...` or `.rejects...` left without `await` or
 * `return` (the test ends before it is checked).
 */
export function unfinishedAssertions(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const isExpect = (e: ts.Expression): boolean => ts.isCallExpression(e) && ts.isIdentifier(e.expression) && e.expression.text === "expect";
  const chain = (e: ts.Expression): ts.Expression[] => {
    const out: ts.Expression[] = [];
    for (let x: ts.Expression = e; ; ) {
      out.push(x);
      if (ts.isPropertyAccessExpression(x) || ts.isCallExpression(x)) x = x.expression;
      else return out;
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isExpressionStatement(node)) {
      const e = node.expression;
      const links = chain(e);
      const unfinished = !ts.isCallExpression(e) || isExpect(e);
      const settles = links.some((l) => ts.isPropertyAccessExpression(l) && (l.name.text === "resolves" || l.name.text === "rejects"));
      if (links.some(isExpect) && (unfinished || settles)) found.push(lineOf(source, node));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("an expected value that matches anything", () => {
  it("Vitest's toMatchObject takes a regular expression for an object with no keys, so it holds whatever the value", () => {
    expect(() => expect({ error: 42 }).toMatchObject({ error: /no such words/ })).not.toThrow();
    expect(() => expect({ error: "other words" }).toMatchObject({ error: expect.stringMatching(/no such words/) })).toThrow();
  });

  it("the scan finds such a value at any depth of the expected object, and not inside stringMatching", () => {
    const text = [
      "expect(a).toMatchObject({ error: /x/ });",
      "expect(a).toMatchObject({ problems: [{ message: /y/ }] });",
      "expect(a).toMatchObject({ message: expect.stringMatching(/z/) });",
      "expect(a).toEqual({ error: /w/ });",
    ].join("\n");
    expect(vacuousPatterns(parse("t.test.ts", text))).toEqual(["t.test.ts:1", "t.test.ts:2"]);
  });

  it("the scan finds an assertion without its matcher call and a promise's assertion the test does not wait for", () => {
    const text = [
      "expect(a);",
      "expect(a).toBeTruthy;",
      "expect(p).resolves.toBe(1);",
      "await expect(p).resolves.toBe(1);",
      "expect(a).not.toBe(1);",
      "void expect(p).rejects.toThrow();",
    ].join("\n");
    expect(unfinishedAssertions(parse("t.test.ts", text))).toEqual(["t.test.ts:1", "t.test.ts:2", "t.test.ts:3"]);
  });

  // Every test and browser spec, read and parsed once for both scans.
  const sources = testFiles(ROOT).map((f) => parse(path.relative(ROOT, f), fs.readFileSync(f, "utf8")));

  it("no test or browser spec gives toMatchObject a regular expression as a value", () => {
    expect(sources.length).toBeGreaterThan(100);
    // This file's own proof of the library's behaviour above is the one such value on purpose.
    const others = sources.filter((s) => path.resolve(ROOT, s.fileName) !== import.meta.filename);
    expect(others.flatMap(vacuousPatterns)).toEqual([]);
  });

  it("every assertion in a test or browser spec calls its matcher, and one on a promise is waited for", () => {
    expect(sources.flatMap(unfinishedAssertions)).toEqual([]);
  });
});
