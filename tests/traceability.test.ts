/**
 * sep-2848.yaml names, for each requirement of the tool-approval SEP, the tests that prove it. A pointer that names
 * no test proves nothing: every `tests:` entry must resolve to a test declared in the named file, with its exact
 * describe chain and title (a `<N>` stands for a `${...}` in a template-literal title).
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { declaredTests, normaliseTitle } from "./support/test-titles";

const ROOT = path.resolve(import.meta.dirname, "..");
const SEP_FILE = path.join(ROOT, "sep-2848.yaml");
const SEPARATOR = " › ";

type Entry = { id: string; line: number; tests: { pointer: string; line: number }[]; excluded: boolean };

/** The file's `statements` and `requirements`: each `- id:`/`- check:` with its `excluded:` or `tests:` items. */
function entries(): Entry[] {
  const out: Entry[] = [];
  let inTests = false;
  fs.readFileSync(SEP_FILE, "utf8")
    .split("\n")
    .forEach((text, i) => {
      const line = i + 1;
      const head = text.match(/^  - (?:id|check): (\S+)\s*$/);
      if (head) {
        out.push({ id: head[1], line, tests: [], excluded: false });
        inTests = false;
        return;
      }
      const current = out.at(-1);
      if (!current) return;
      if (/^    excluded: /.test(text)) current.excluded = true;
      if (/^    tests:\s*$/.test(text)) {
        inTests = true;
        return;
      }
      if (!inTests) return;
      const item = text.match(/^      - '((?:[^']|'')*)'\s*$/);
      if (item) current.tests.push({ pointer: item[1].replace(/''/g, "'"), line });
      else if (text.trim() && !text.trim().startsWith("#")) {
        if (/^      - /.test(text)) throw new Error(`sep-2848.yaml:${line}: a test pointer must be one single-quoted line`);
        inTests = false;
      }
    });
  return out;
}

const cache = new Map<string, string[]>();
function fullTitles(file: string): string[] {
  if (!cache.has(file)) {
    cache.set(
      file,
      declaredTests(path.join(ROOT, file)).map((t) => [...t.describes, t.title].map(normaliseTitle).join(SEPARATOR)),
    );
  }
  return cache.get(file)!;
}

/** null when the pointer names a declared test, else why not. */
function unresolved(pointer: string): string | null {
  // The official conformance suite's scenarios run outside Vitest (scripts/conformance.sh).
  if (pointer.startsWith(`conformance suite${SEPARATOR}`)) {
    return /\(scripts\/conformance\.sh\)$/.test(pointer) ? null : "an official-suite pointer ends with (scripts/conformance.sh)";
  }
  const [file, ...chain] = pointer.split(SEPARATOR);
  if (!/\.(test|conformance)\.ts$/.test(file)) return `${file} is not a test file`;
  if (!fs.existsSync(path.join(ROOT, file))) return `${file} does not exist`;
  if (chain.length < 2) return "a pointer is <file> › <describe> › <test name>";
  const wanted = chain.map(normaliseTitle).join(SEPARATOR);
  return fullTitles(file).includes(wanted) ? null : `no test "${chain.join(SEPARATOR)}" in ${file}`;
}

describe("sep-2848.yaml: every requirement points at tests that exist", () => {
  const all = entries();

  it("the file lists the SEP's statements and requirements, each with tests or a reason for its exclusion", () => {
    expect(all.length).toBeGreaterThan(40);
    const ids = all.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    const bare = all.filter((e) => !e.excluded && e.tests.length === 0).map((e) => `${e.id} (line ${e.line})`);
    expect(bare).toEqual([]);
  });

  it("every tests: entry names a test declared in its file, with its exact describe chain and title", () => {
    const broken = all.flatMap((e) =>
      e.tests.map((t) => ({ t, why: unresolved(t.pointer) })).filter((x) => x.why).map(({ t, why }) => `sep-2848.yaml:${t.line} (${e.id}): ${why}`),
    );
    expect(broken).toEqual([]);
  });

  it("a pointer with a wrong title, describe or file is reported, not silently accepted", () => {
    const good = "tests/lifecycle.test.ts › cancellation › a cancel after the claim is a no-op: the task completes with its execution disposition, never cancelled";
    expect(unresolved(good)).toBeNull();
    expect(unresolved(good.replace("never cancelled", "never ..."))).toMatch(/no test/);
    expect(unresolved(good.replace("cancellation", "cancellations"))).toMatch(/no test/);
    expect(unresolved(good.replace("lifecycle", "lifecycles"))).toMatch(/does not exist/);
    expect(unresolved("tests/lifecycle.test.ts › cancellation")).toMatch(/<describe> › <test name>/);
    // A `<N>` names a title's `${...}`.
    expect(unresolved("tests/cancel-race.test.ts › cancel racing claim › cancel racing claim over <N> trials never both cancels and executes")).toBeNull();
    expect(unresolved("tests/cancel-race.test.ts › cancel racing claim › cancel racing claim over 50 trials never both cancels and executes")).toMatch(/no test/);
  });
});
