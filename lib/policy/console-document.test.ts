/**
 * The advanced editor's draft (`console-document.ts`): the settings shown as YAML read back as the same document,
 * every problem placed where the admin will look for it (the settings' line and column, the Cedar text's line and
 * column, or the settings as a whole), and a draft checked as saving would check it, without saving it.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { resetDb } from "../../tests/support/db";
import { currentDocument } from "./store";
import { draftBody, placeProblems, settingsYaml, validateDraft } from "./console-document";
import { PolicyDocument } from "./document";

beforeEach(resetDb);

const MAPPING = "the settings are a mapping (defaults, history, timeZones, tests)";

describe("the settings as YAML", () => {
  it("are everything but the Cedar text, and read back with it as the same document", async () => {
    const { body } = await currentDocument();
    const settings = settingsYaml(body);
    expect(settings).not.toMatch(/^policies:/m);
    expect(settings).toMatch(/^history:/m);
    expect(draftBody({ policies: body.policies, settings })).toEqual({ ok: true, body });
  });

  it("keep a long text on one line, so a problem's line is the line the admin sees", () => {
    const name = `a test case whose name is long ${"and goes on ".repeat(12)}to the end`;
    const body = PolicyDocument.parse({ tests: [{ name, call: { tool: "issue_refund" }, expect: "allow" }] });
    expect(settingsYaml(body).split("\n")).toContain(`  - name: ${name}`);
  });
});

describe("a draft as a document", () => {
  it("empty settings, or a YAML null, are the defaults with the Cedar text as it is", () => {
    const defaults = { policies: "permit (principal, action, resource);", defaults: { posture: "deny", tools: {}, agents: {} }, history: [], timeZones: [], tests: [] };
    expect(draftBody({ policies: defaults.policies, settings: "" })).toEqual({ ok: true, body: defaults });
    expect(draftBody({ policies: defaults.policies, settings: "~\n" })).toEqual({ ok: true, body: defaults });
  });

  it("YAML that does not parse: the parser's first line, at its line and column in the settings", () => {
    expect(draftBody({ policies: "", settings: "defaults: [\n  x: 1" })).toEqual({
      ok: false,
      problems: [{ where: "settings", message: "Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 7:", line: 2, column: 7 }],
    });
  });

  it("settings that are not a mapping: a list, a number, a text", () => {
    for (const settings of ["- 1\n- 2\n", "5", "just words"]) {
      expect(draftBody({ policies: "", settings })).toEqual({ ok: false, problems: [{ where: "settings", message: MAPPING }] });
    }
  });

  it("a wrong value deep in the settings: its path and the schema's words, at the value itself", () => {
    const settings = ["history:", "  - name: refunds", "    tool: issue_refund", "    window: 30d", "    per: resource", "  - name: Bad Name", "    tool: issue_refund", "    window: 1h", "    per: tool", ""].join("\n");
    expect(draftBody({ policies: "", settings })).toEqual({
      ok: false,
      problems: [{ where: "settings", message: "history.1.name: a name of lowercase letters, digits and underscores", line: 6, column: 11 }],
    });
  });

  it("every problem of the settings is given, each at its own place", () => {
    const settings = ["defaults:", "  posture: maybe", "timeZones:", "  - Mars/Olympus", ""].join("\n");
    const r = draftBody({ policies: "", settings });
    expect(r.ok).toBe(false);
    const problems = r.ok ? [] : r.problems;
    expect(problems.map((p) => [p.message.split(":")[0], p.line, p.column])).toEqual([
      ["defaults.posture", 2, 12],
      ["timeZones.0", 4, 5],
    ]);
    expect(problems[1]).toMatchObject({ where: "settings", message: "timeZones.0: an IANA time zone such as Europe/Berlin" });
  });

  it("a key the document does not know: named, at the key's own line, at the top and deep inside", () => {
    const top = draftBody({ policies: "", settings: "history: []\nnope: 1\n" });
    expect(top).toEqual({ ok: false, problems: [{ where: "settings", message: expect.stringMatching(/^document: .*"nope"/), line: 2, column: 1 }] });
    const deep = draftBody({ policies: "", settings: "defaults:\n  posture: deny\n  postures: allow\n" });
    expect(deep).toEqual({ ok: false, problems: [{ where: "settings", message: expect.stringMatching(/^defaults: .*"postures"/), line: 3, column: 3 }] });
    // A test case with a key of its own, in a list: the key's line too.
    const inList = draftBody({ policies: "", settings: "tests:\n  - name: one\n    call: { tool: issue_refund }\n    expect: allow\n    because: reasons\n" });
    expect(inList).toEqual({ ok: false, problems: [{ where: "settings", message: expect.stringMatching(/^tests\.0: .*"because"/), line: 5, column: 5 }] });
    // A key YAML reads as a number is still found.
    const numeric = draftBody({ policies: "", settings: "history: []\n2024: true\n" });
    expect(numeric).toEqual({ ok: false, problems: [{ where: "settings", message: expect.stringMatching(/^document: .*"2024"/), line: 2, column: 1 }] });
  });

  it("a Cedar text over the size limit is a problem of the policies, not of the settings", () => {
    const r = draftBody({ policies: "x".repeat(2_000_001), settings: "" });
    expect(r).toEqual({ ok: false, problems: [{ where: "policies", message: expect.stringMatching(/^policies: /) }] });
  });
});

describe("where a compilation problem is shown", () => {
  it("in the Cedar text when it has a line or names a Cedar policy; a form rule's and the document's own in the settings", () => {
    expect(
      placeProblems([
        { message: "a", line: 3, column: 1 },
        { message: "b", policyId: "wire-account-24h" },
        { message: "c", policyId: "document:unreadable" },
        { message: "d", policyId: "rule:refund-over-limit" },
        { message: "e", policyId: "rule:refund-over-limit", line: 1, column: 1 },
        { message: "f" },
      ]).map((p) => `${p.message}:${p.where}`),
    ).toEqual(["a:policies", "b:policies", "c:policies", "d:settings", "e:policies", "f:settings"]);
  });
});

describe("a draft checked as saving would check it", () => {
  it("the current document as the editor shows it has no problems, and checking saves nothing", async () => {
    const before = await currentDocument();
    const r = await validateDraft({ policies: before.body.policies, settings: settingsYaml(before.body) });
    expect(r).toEqual({ body: before.body, problems: [] });
    expect((await currentDocument()).version).toBe(before.version);
  });

  it("a condition on an argument the tool does not have: in the Cedar text, at the condition, once", async () => {
    const { body } = await currentDocument();
    const policies = `${body.policies}\n\n@id("no-such-argument")\n@reason("Never.")\nforbid (principal, action == Action::"issue_refund", resource)\nwhen { context.args.no_such_argument == 1 };\n`;
    const line = policies.split("\n").findIndex((l) => l.includes("no_such_argument")) + 1;
    const r = await validateDraft({ policies, settings: settingsYaml(body) });
    expect(r.body?.policies).toBe(policies);
    expect(r.problems).toEqual([{ where: "policies", policyId: "no-such-argument", line, column: 8, message: expect.stringContaining("`args.no_such_argument`") }]);
  });

  it("a history window of a tool that does not exist: in the settings, and each policy reading it in the Cedar text", async () => {
    const { body } = await currentDocument();
    const settings = settingsYaml(body).replace("tool: wire_transfer", "tool: no_such_tool");
    const r = await validateDraft({ policies: body.policies, settings });
    expect(r.problems[0]).toEqual({ where: "settings", message: "history wire_to_account_24h: there is no tool no_such_tool" });
    expect(r.problems.slice(1).length).toBeGreaterThan(0);
    expect(r.problems.slice(1).every((p) => p.where === "policies" && p.policyId === "wire-account-24h" && typeof p.line === "number")).toBe(true);
  });

  it("a draft whose settings do not read is not compiled: no document, the settings' problems", async () => {
    const { body } = await currentDocument();
    expect(await validateDraft({ policies: body.policies, settings: "- a list" })).toEqual({ body: null, problems: [{ where: "settings", message: MAPPING }] });
  });
});
