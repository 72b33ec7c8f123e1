/**
 * A policy's test cases: each one a call (tool and arguments), a principal, the resource as the tool's mapping would
 * read it, the history values, an instant, and the decision expected (optionally which policy decides). Run against
 * a compiled policy with the pure `evaluate`, so the same cases run in the console when a version is saved and from
 * the command line (`npm run policy:test`) with no database.
 */
import { getTool } from "../tools/catalog";
import { ToolError, type ToolDef } from "../tools/types";
import { argumentsProblem, describeIssues } from "../tools/check-arguments";
import type { PolicyTest } from "./document";
import { evaluate, type CompiledPolicy, type Decision, type ResourceView, type Subject } from "./evaluate";
import { formPolicyId } from "./form-rules";

/** The instant a case without `at` is evaluated at: fixed (a Monday, 12:00 in Berlin), never the wall clock. */
export const DEFAULT_TEST_TIME = new Date("2026-06-01T10:00:00.000Z");

export type TestOutcome = {
  /** The index of the case in the list it was given in. */
  index: number;
  name: string;
  passed: boolean;
  expected: { decision: PolicyTest["expect"]; by?: string };
  /** What the policy decided, or null when the case could not be evaluated (a bad argument, no resource). */
  actual: { decision: Decision["decision"]; by: string } | null;
  /** One line: what was decided by which policy, or why the case could not run. */
  reason: string;
};

export type RunOptions = {
  /** Lets a case without a resource read it through the tool's mapping (which may read the database). */
  mapResource?: boolean;
  /**
   * Tools not in the catalog yet (those of servers a policy file registers), by name; their mapping reads no
   * database, so a case without a resource is mapped through it even without `mapResource`.
   */
  tools?: ReadonlyMap<string, ToolDef>;
};

/** Text fit for one line of output: control characters escaped, length bounded. */
export function oneLine(text: string, max = 160): string {
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** The id of the policy that decided: an @id, `rule:<key>` for a form rule, `default...` for a posture. */
export function decidingId(decision: Decision, policy: CompiledPolicy): string {
  const ref = decision.rule;
  if (!ref) return "default";
  const form = policy.meta.get(formPolicyId(ref.ruleKey));
  if (form && form.ref.id === ref.id && form.ref.version === ref.version) return formPolicyId(ref.ruleKey);
  return ref.ruleKey;
}

function subjectOf(test: PolicyTest): Subject {
  const p = test.principal;
  return { agentId: p.agent, agentName: p.agent, user: { id: p.user, email: p.user, name: p.user, role: p.role, groups: p.groups } };
}

function expectation(test: PolicyTest): string {
  return test.by ? `${test.expect} by ${test.by}` : test.expect;
}

async function runOne(policy: CompiledPolicy, test: PolicyTest, index: number, opts: RunOptions): Promise<TestOutcome> {
  const expected = { decision: test.expect, ...(test.by ? { by: test.by } : {}) };
  const fail = (reason: string): TestOutcome => ({ index, name: test.name, passed: false, expected, actual: null, reason });
  const tool = policy.tools.get(test.call.tool);
  if (!tool) return fail(`there is no tool ${oneLine(test.call.tool, 60)}`);

  const problem = argumentsProblem(test.call.arguments);
  if (problem) return fail(`the arguments do not fit ${tool.name}: ${oneLine(problem)}`);
  const def = opts.tools?.get(tool.name) ?? getTool(tool.name);
  let args: unknown = test.call.arguments;
  if (def) {
    const parsed = def.schema.safeParse(test.call.arguments);
    if (!parsed.success) return fail(`the arguments do not fit ${tool.name}: ${oneLine(describeIssues(parsed.error))}`);
    args = parsed.data;
  }

  let resource: ResourceView;
  if (test.resource) {
    resource = test.resource;
  } else if (def && (opts.mapResource || opts.tools?.has(tool.name))) {
    try {
      resource = await def.resource(args);
    } catch (e) {
      if (e instanceof ToolError) return fail(`the tool's mapping refused the call: ${oneLine(e.message)}`);
      throw e;
    }
  } else {
    return fail("the case gives no resource, and the tool's mapping is not read here (give `resource`)");
  }

  const windows = policy.document.history.filter((h) => h.tool === tool.name);
  const unknown = Object.keys(test.history).filter((name) => !windows.some((w) => w.name === name));
  if (unknown.length > 0) return fail(`the policy has no history window ${oneLine(unknown[0], 60)} on ${tool.name}`);
  // A window the case does not mention had no calls in it.
  const history = Object.fromEntries(windows.map((w) => [w.name, test.history[w.name] ?? { total: 0, count: 0 }]));

  const at = test.at ? new Date(test.at) : DEFAULT_TEST_TIME;
  const decision = evaluate({ subject: subjectOf(test), action: { name: tool.name }, resource, context: { args, history } }, policy, at);
  const by = decidingId(decision, policy);
  const actual = { decision: decision.decision, by };
  const got = `${decision.decision} by ${by}${decision.decision === "deny" && decision.evaluationError ? ` (the policy could not be evaluated: ${oneLine(decision.evaluationError, 120)})` : ""}`;
  const passed = decision.decision === test.expect && (!test.by || test.by === by);
  return { index, name: test.name, passed, expected, actual, reason: passed ? got : `expected ${expectation(test)}, got ${got}` };
}

/** Runs every case; never stops at the first failure. */
export async function runPolicyTests(policy: CompiledPolicy, tests: PolicyTest[], opts: RunOptions = {}): Promise<TestOutcome[]> {
  const out: TestOutcome[] = [];
  for (const [i, t] of tests.entries()) out.push(await runOne(policy, t, i, opts));
  return out;
}

/** The failures as problems a save refuses with, each naming its test. */
export function failuresOf(outcomes: TestOutcome[]): { message: string; test: string; index: number }[] {
  return outcomes
    .filter((o) => !o.passed)
    .map((o) => ({ message: `the test "${oneLine(o.name, 120)}" fails: ${o.reason}`, test: o.name, index: o.index }));
}
