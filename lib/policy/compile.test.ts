/**
 * Compilation's own guards (compile.ts), on two small tools: what an annotation may say, which names a policy may
 * take, the strictest of two requestable postures, and how lenient compilation of a stored version keeps every
 * promise that version made: a policy that no longer compiles can deny, never allow and never become requestable.
 */
import { describe, expect, it } from "vitest";
import { compilePolicy, postureResolver, requirementsFromAnnotations } from "./compile";
import { PolicyDocument } from "./document";
import { decideCall } from "../../tests/support/policy-call";
import type { CompiledPolicy, Decision, Rule } from "./evaluate";
import type { PolicyTool } from "./schema";
import { compileStored } from "./store";

const tool = (name: string, entity: string): PolicyTool => ({
  name,
  inputSchema: { type: "object", required: ["note"], properties: { note: { type: "string" } } },
  resourceEntity: entity,
  resourceShape: { name: { type: "String" } },
});
const TOOLS = [tool("alpha", "Alpha"), tool("beta", "Beta")];

const compileText = (policies: string, opts: { strict: boolean; rules?: Rule[]; tools?: PolicyTool[]; more?: object }) =>
  compilePolicy({ rules: opts.rules ?? [], document: { id: "d", version: 3, body: PolicyDocument.parse({ policies, defaults: { posture: "allow" }, ...opts.more }) }, tools: opts.tools ?? TOOLS }, { strict: opts.strict });

function stored(policies: string, opts: { rules?: Rule[]; tools?: PolicyTool[]; more?: object } = {}): CompiledPolicy {
  const r = compileText(policies, { strict: false, ...opts });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.policy;
}

function refused(policies: string): { message: string; line?: number; column?: number; policyId?: string }[] {
  const r = compileText(policies, { strict: true });
  expect(r.ok).toBe(false);
  return r.ok ? [] : r.problems;
}

/** A form rule on an argument alpha does not have: it never compiles. */
const ruleOnNothing = (value = "v"): Rule =>
  ({ id: "r1", ruleKey: "r", version: 1, tool: "alpha", field: "nothing", operator: "eq", value, effect: "deny", approverGroup: null, approvalsRequired: 1, requestDeadlineSec: 86400, approvalValiditySec: 3600, requireJustification: false, reason: "No." }) as Rule;
/** A requestable forbid on alpha's note as a string, and the catalog after alpha's note became a whole number. */
const ASK = `@id("ask")\n@approvers("treasury")\n@reason("Treasury looks first.")\nforbid (principal, action == Action::"alpha", resource)\nwhen { context.args.note == "x" };`;
const NOTE_NOW_INTEGER = [{ ...TOOLS[0], inputSchema: { type: "object", required: ["note"], properties: { note: { type: "integer" } } } }, TOOLS[1]];

const decide = (policy: CompiledPolicy, tool: string, note: unknown = "n"): Decision => decideCall(policy, { tool, properties: { name: "x" }, args: { note } });

describe("the requirements a policy's annotations declare", () => {
  const forbid = (annotations: Record<string, string>) => ({ effect: "forbid", annotations: { approvers: "treasury", reason: "Treasury looks first.", ...annotations } }) as never;

  it("optional justification and passkey are no requirement; required ones are", () => {
    const optional = requirementsFromAnnotations(forbid({ justification: "optional", passkey: "optional" }));
    expect(optional).toEqual({ requirements: expect.objectContaining({ requireJustification: false }), reason: "Treasury looks first." });
    expect(optional).not.toHaveProperty("requirements.requirePasskey");
    expect(requirementsFromAnnotations(forbid({ justification: "required", passkey: "required" }))).toMatchObject({ requirements: { requireJustification: true, requirePasskey: true } });
  });

  it("a quorum is one or two plain digits: no sign, space, fraction or other base", () => {
    expect(requirementsFromAnnotations(forbid({ quorum: "2" }))).toMatchObject({ requirements: { approvalsRequired: 2 } });
    expect(requirementsFromAnnotations(forbid({ quorum: "10" }))).toMatchObject({ requirements: { approvalsRequired: 10 } });
    for (const quorum of ["2.0", "0x2", " 2", "+2", "2e0", "", "002"]) expect(requirementsFromAnnotations(forbid({ quorum }))).toEqual({ problem: expect.stringMatching(/^@quorum: /) });
  });

  it("an annotation written without a value is the empty string, as Cedar reads it: never an absent requirement", () => {
    const annotated = (lines: string) => refused(`@id("ask")\n${lines}\nforbid (principal, action == Action::"alpha", resource);`).map((p) => p.message);
    expect(annotated(`@approvers("treasury")\n@reason("Treasury looks first.")\n@passkey`)).toEqual(['@passkey is "required" or "optional", not ""']);
    expect(annotated(`@approvers("treasury")\n@reason("Treasury looks first.")\n@justification`)).toEqual(['@justification is "required" or "optional", not ""']);
    expect(annotated(`@approvers("treasury")\n@reason`)).toEqual(["a requestable denial needs @reason: the words reviewers and the agent read"]);
    expect(annotated(`@approvers\n@reason("Treasury looks first.")`)).toEqual([expect.stringMatching(/^@approvers: /)]);
    expect(refused(`@id\npermit (principal, action, resource);`).map((p) => p.message)).toEqual(['every policy needs an @id("...") annotation']);
  });

  it("names what is missing or wrong in words an admin can act on", () => {
    expect(requirementsFromAnnotations({ effect: "forbid", annotations: { approvers: "treasury" } } as never)).toEqual({ problem: "a requestable denial needs @reason: the words reviewers and the agent read" });
    expect(requirementsFromAnnotations(forbid({ approvers: "Tre Asury" }))).toEqual({ problem: "@approvers: an approver group: lowercase letters, digits and dashes" });
    expect(requirementsFromAnnotations(forbid({ deadline: "soon" }))).toEqual({ problem: expect.stringMatching(/^@deadline: a duration such as 30m/) });
    expect(requirementsFromAnnotations({ effect: "forbid", annotations: { passkey: "required" } } as never)).toEqual({ problem: "@passkey needs @approvers (the group that can approve)" });
    for (const name of ["quorum", "deadline", "validity", "justification", "passkey", "escalate", "fallback"]) {
      expect(requirementsFromAnnotations({ effect: "forbid", annotations: { reason: "r", [name]: "x" } } as never)).toEqual({ problem: `@${name} needs @approvers (the group that can approve)` });
    }
  });
});

describe("the strictest of an agent's and a tool's requestable posture", () => {
  const req = (quorum: number) => ({ requestable: { approvers: "treasury", quorum, reason: `Quorum of ${quorum}.` } });
  const ref = { id: "d", ruleKey: "document", version: 1 };

  it("asks for the larger quorum, whichever of the two declares it", () => {
    const toolStricter = postureResolver(PolicyDocument.parse({ defaults: { agents: { bot: req(1) }, tools: { alpha: req(2) } } }), ref)("bot", "alpha");
    expect(toolStricter).toMatchObject({ posture: { requirements: { approvalsRequired: 2 } }, ref: { ruleKey: "default:tool:alpha" } });
    const agentStricter = postureResolver(PolicyDocument.parse({ defaults: { agents: { bot: req(2) }, tools: { alpha: req(1) } } }), ref)("bot", "alpha");
    expect(agentStricter).toMatchObject({ posture: { requirements: { approvalsRequired: 2 } }, ref: { ruleKey: "default:agent:bot" } });
  });

  it("a denial outranks a request and a request an allow, whichever of the two declares it", () => {
    const resolve = (agent: object | string, forTool: object | string) =>
      postureResolver(PolicyDocument.parse({ defaults: { posture: "allow", agents: { bot: agent }, tools: { alpha: forTool } } }), ref)("bot", "alpha");
    expect(resolve("allow", "deny")).toMatchObject({ posture: { effect: "deny" }, ref: { ruleKey: "default:tool:alpha" } });
    expect(resolve("deny", "allow")).toMatchObject({ posture: { effect: "deny" }, ref: { ruleKey: "default:agent:bot" } });
    expect(resolve("allow", req(1))).toMatchObject({ posture: { effect: "requestable", requirements: { approvalsRequired: 1 } }, ref: { ruleKey: "default:tool:alpha" } });
    expect(resolve(req(2), "deny")).toMatchObject({ posture: { effect: "deny" }, ref: { ruleKey: "default:tool:alpha" } });
    expect(resolve(req(2), "allow")).toMatchObject({ posture: { effect: "requestable", requirements: { approvalsRequired: 2 } }, ref: { ruleKey: "default:agent:bot" } });
    // One effect from both: the agent's, and nothing further is compared.
    expect(resolve("deny", "deny")).toMatchObject({ posture: { effect: "deny" }, ref: { ruleKey: "default:agent:bot" } });
    expect(resolve("allow", "allow")).toMatchObject({ posture: { effect: "allow" }, ref: { ruleKey: "default:agent:bot" } });
  });
});

describe("the names a policy may take", () => {
  const permit = (id: string) => `@id(${JSON.stringify(id)})\npermit (principal, action, resource);`;

  it("lowercase letters, digits, dots, dashes and underscores, at most 80, never a form rule's or a default's", () => {
    expect(compileText(permit("a.b_c-1"), { strict: true }).ok).toBe(true);
    expect(compileText(permit(`a${"b".repeat(79)}`), { strict: true }).ok).toBe(true);
    for (const id of ["Upper", "has space", "-dash-first", `a${"b".repeat(80)}`, "rule:x", "default", "default-x", "defaults.more"]) {
      expect(refused(permit(id))).toEqual([expect.objectContaining({ message: expect.stringMatching(/^@id\(.*\) must be lowercase letters/), line: 1, column: 1 })]);
    }
  });
});

describe("problems reported with a stored version", () => {
  it("say at which line and column", () => {
    const policy = stored(`@id("a")\npermit (principal, action, resource);\n\n@id("b")\nforbid (principal, action == Action::"alpha", resource)\nwhen { context.args.missing == "x" };`);
    expect(policy.problems).toEqual([expect.stringMatching(/missing.* \(line 6, column 8\)$/)]);
  });

  it("an evaluation error stays short however long the problem", () => {
    const d = decide(stored("", { rules: [ruleOnNothing("v".repeat(2000))] }), "alpha");
    expect(d).toMatchObject({ decision: "deny", evaluationError: expect.stringMatching(/^the stored policy no longer compiles: rule r: alpha has no attribute nothing/) });
    expect(d.decision === "deny" && d.evaluationError!.length).toBe(300);
  });
});

describe("lenient compilation: a stored policy that no longer compiles can deny, never allow", () => {
  const otherwiseAllowed = (policy: CompiledPolicy) => expect(decide(policy, "beta")).toMatchObject({ decision: "allow" });

  it("a forbid that lost its @id still denies every call of its tool, as an evaluation error", () => {
    const policy = stored(`@id("ok") permit (principal, action, resource);\nforbid (principal, action == Action::"alpha", resource) when { context.args.note == "never" };`);
    expect(decide(policy, "alpha")).toMatchObject({ decision: "deny", evaluationError: expect.stringMatching(/a forbid without a valid @id/) });
    otherwiseAllowed(policy);
  });

  it("a permit that lost its @id permits nothing", () => {
    const policy = compileText(`permit (principal, action == Action::"alpha", resource);`, { strict: false, more: { defaults: { posture: "deny" } } });
    if (!policy.ok) throw new Error("lenient compilation refused");
    expect(decide(policy.policy, "alpha")).toMatchObject({ decision: "deny", rule: { ruleKey: "default" } });
  });

  it("a requestable forbid that no longer validates denies: no approval can clear it", () => {
    expect(decide(stored(ASK), "alpha", "x")).toMatchObject({ decision: "requestable", rule: { ruleKey: "ask" } });
    const policy = stored(ASK, { tools: NOTE_NOW_INTEGER });
    expect(decide(policy, "alpha", 7)).toMatchObject({ decision: "deny", rule: { ruleKey: "ask" }, evaluationError: expect.stringMatching(/no longer compiles/) });
    otherwiseAllowed(policy);
  });

  it("a plain forbid denies in the words of its @reason", () => {
    expect(decide(stored(`@id("no-alpha")\n@reason("Alpha is closed.")\nforbid (principal, action == Action::"alpha", resource);`), "alpha")).toEqual({ decision: "deny", rule: { id: "d", ruleKey: "no-alpha", version: 3 }, reason: "Alpha is closed." });
  });

  it("a window of a tool that is gone is named among the stored version's problems and counts nothing", () => {
    const policy = stored(`@id("ok") permit (principal, action, resource);`, { more: { history: [{ name: "gone_24h", tool: "gamma", window: "24h", per: "tool" }] } });
    expect(policy.problems).toEqual(["history gone_24h: there is no tool gamma"]);
    expect(policy.document.history).toEqual([]);
    expect(decide(policy, "alpha")).toMatchObject({ decision: "allow" });
  });

  it("a forbid without @reason denies in words that name it", () => {
    expect(decide(stored(`@id("no-alpha") forbid (principal, action == Action::"alpha", resource);`), "alpha")).toEqual({ decision: "deny", rule: { id: "d", ruleKey: "no-alpha", version: 3 }, reason: "Denied by the policy no-alpha." });
  });
});

describe("tools whose schema does not resolve", () => {
  const broken = [{ ...TOOLS[0], resourceEntity: "1x" }, TOOLS[1]];

  it("give no policy, with or without policies to validate: every call of a stored version is denied", () => {
    for (const policies of [`@id("ok") permit (principal, action, resource);`, ""]) {
      for (const strict of [true, false]) expect(compileText(policies, { strict, tools: broken })).toEqual({ ok: false, problems: [expect.objectContaining({ message: expect.stringMatching(/1x/) })] });
      const policy = compileStored([], { id: "d", version: 3, body: PolicyDocument.parse({ policies, defaults: { posture: "allow" } }) }, broken);
      for (const name of ["alpha", "beta"]) expect(decide(policy, name)).toMatchObject({ decision: "deny", evaluationError: expect.any(String) });
    }
  });
});

describe("where a policy's problem is reported", () => {
  const first = `@id("ok")\npermit (principal, action == Action::"beta", resource);\n`;

  it("at the annotation the problem names, else at the policy's first character", () => {
    const quorum = refused(`${first}@id("ask")\n@reason("Treasury looks first.")\n@quorum("2")\nforbid (principal, action == Action::"alpha", resource);`);
    expect(quorum).toEqual([{ message: "@quorum needs @approvers (the group that can approve)", policyId: "ask", line: 5, column: 1 }]);
    // Problems that name no annotation first, or one the policy lacks: at the policy, never before it.
    const onPermit = refused(`${first}@id("open")\n@approvers("treasury")\n@reason("r")\npermit (principal, action == Action::"alpha", resource);`);
    expect(onPermit).toEqual([{ message: "requirements (@approvers) belong on a forbid: the denial that an approval can clear", policyId: "open", line: 3, column: 1 }]);
    const emptyReason = refused(`${first}@id("ask")\n@approvers("treasury")\n@reason("")\nforbid (principal, action == Action::"alpha", resource);`);
    expect(emptyReason).toEqual([{ message: "a requestable denial needs @reason: the words reviewers and the agent read", policyId: "ask", line: 3, column: 1 }]);
  });

  it("a form rule's problem names its rule and no place in the policy text", () => {
    const r = compileText(`@id("ok")\npermit (principal, action, resource);`, { strict: true, rules: [ruleOnNothing()] });
    expect(r).toEqual({ ok: false, problems: [{ message: expect.stringMatching(/^rule r: alpha has no attribute nothing/), policyId: "rule:r" }] });
    // A rule on a tool the catalog no longer has: its own problem, then the schema's, neither at a place.
    const gone = compileText(`@id("ok")\npermit (principal, action, resource);`, { strict: true, rules: [{ ...ruleOnNothing(), tool: "gamma" }] });
    expect(gone).toEqual({
      ok: false,
      problems: [
        { message: "rule r: there is no tool gamma", policyId: "rule:r" },
        { message: expect.stringMatching(/^for policy `rule:r`, unrecognized action `Action::"gamma"`/), policyId: "rule:r" },
      ],
    });
  });
});

describe("lenient compilation of what cannot be read or named", () => {
  it("a policy text that no longer parses denies every call, as the document's own evaluation error", () => {
    const policy = stored(`@id("a") permit (principal, action, resource);\n@id("b") forbid (principal, action resource);`);
    expect(decide(policy, "beta")).toEqual({
      decision: "deny",
      rule: { id: "d", ruleKey: "document:unreadable", version: 3 },
      reason: "The policy could not be evaluated for this call, so it is denied.",
      evaluationError: expect.stringMatching(/^the stored policy no longer compiles: the policy text does not parse: (?!unknown).+/),
    });
  });

  it("a forbid without a name denies under a name of its place; a stale forbid under its own", () => {
    const text = `@id("ok") permit (principal, action, resource);\nforbid (principal, action == Action::"alpha", resource);`;
    expect(decide(stored(text), "alpha")).toMatchObject({
      decision: "deny",
      rule: { id: "d", ruleKey: `document:unnamed:${text.indexOf("forbid")}`, version: 3 },
      evaluationError: "the stored policy no longer compiles: a forbid without a valid @id",
    });
    expect(decide(stored(ASK, { tools: NOTE_NOW_INTEGER }), "alpha", 7)).toMatchObject({ decision: "deny", rule: { ruleKey: "ask" }, evaluationError: expect.stringMatching(/^the stored policy no longer compiles: the types Long and String are not compatible/) });
  });

  it("a forbid without a name on a tool that is gone: compiled without it, every other call decided as usual", () => {
    const text = `@id("ok") permit (principal, action, resource);\nforbid (principal, action == Action::"gamma", resource);`;
    const policy = stored(text);
    expect(policy.problems).toEqual([expect.stringMatching(/^every policy needs an @id/), expect.stringMatching(/unrecognized action `Action::"gamma"`/)]);
    for (const name of ["alpha", "beta"]) expect(decide(policy, name)).toMatchObject({ decision: "allow", rule: { ruleKey: "ok" } });
  });

  it("a forbid whose annotations no longer hold denies under its own name, saying which annotation", () => {
    const text = `@id("ok") permit (principal, action, resource);\n@id("bad-quorum")\n@approvers("treasury")\n@reason("r")\n@quorum("x")\nforbid (principal, action == Action::"alpha", resource);`;
    expect(decide(stored(text), "alpha")).toEqual({
      decision: "deny",
      rule: { id: "d", ruleKey: "bad-quorum", version: 3 },
      reason: "The policy could not be evaluated for this call, so it is denied.",
      evaluationError: expect.stringMatching(/^the stored policy no longer compiles: bad-quorum: @quorum: /),
    });
    expect(decide(stored(text), "beta")).toMatchObject({ decision: "allow" });
  });

  it("a permit whose annotations no longer hold is dropped, not turned into a denial", () => {
    const r = compileText(`@id("open")\n@approvers("treasury")\n@reason("r")\npermit (principal, action == Action::"alpha", resource);`, { strict: false });
    if (!r.ok) throw new Error("lenient compilation refused");
    expect(r.policy.problems).toEqual([expect.stringMatching(/^requirements \(@approvers\) belong on a forbid/)]);
    expect(decide(r.policy, "alpha")).toMatchObject({ decision: "allow", rule: { ruleKey: "default" } });
  });

  it("a form rule that no longer validates denies under the rule's name, as an evaluation error", () => {
    expect(decide(stored("", { rules: [ruleOnNothing()] }), "alpha")).toEqual({ decision: "deny", rule: { id: "r1", ruleKey: "r", version: 1 }, reason: "The policy could not be evaluated for this call, so it is denied.", evaluationError: expect.stringMatching(/^the stored policy no longer compiles: rule r: /) });
  });
});

describe("tools that disagree on a resource type", () => {
  it("give no policy: the schema cannot say what the type holds", () => {
    const disagreeing = [TOOLS[0], { ...TOOLS[1], resourceEntity: "Alpha", resourceShape: { size: { type: "Long" as const } } }];
    for (const strict of [true, false]) {
      expect(compileText("", { strict, tools: disagreeing })).toEqual({ ok: false, problems: [{ message: "Tools disagree on the attributes of the resource type Alpha." }] });
    }
  });
});
