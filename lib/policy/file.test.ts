/**
 * The policy file: one YAML file with the form rules and the policy document. Written stably (the same policy gives
 * the same bytes), money as money, every problem at its line and column in the file (Cedar problems inside
 * `policies` too), and a diff that says what an import would change. Test cases run with a fixed clock.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEMO_RULES } from "../db/seed";
import { policyTools } from "../tools/catalog";
import { DEMO_DOCUMENT } from "./demo-policy";
import { PolicyDocument, type PolicyTest } from "./document";
import type { RuleInput } from "./save-rule";
import { checkPolicyFile, compilePolicyFile, describeDiff, diffPolicy, formatPolicyFile, parsePolicyFile, storedRule, type PolicyFile } from "./file";
import { DEFAULT_TEST_TIME, failuresOf, runPolicyTests } from "./test-cases";
import { edited } from "../../tests/support/edit";

const EXAMPLE = path.resolve(import.meta.dirname, "../../policy/countersign.policy.yaml");
const demoRules = () => DEMO_RULES.map((r) => storedRule({ requireJustification: false, currency: null, ...r, id: r.ruleKey, version: 1 }));
const demo = () => ({ rules: demoRules(), document: PolicyDocument.parse(DEMO_DOCUMENT) });
const tools = policyTools();

function parsed(text: string): PolicyFile {
  const r = parsePolicyFile(text);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.file;
}

const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

describe("the policy file format", () => {
  it("the example file is the seeded demo policy as exported, and writing what was read gives the same bytes", () => {
    const text = formatPolicyFile(demo());
    expect(readFileSync(EXAMPLE, "utf8")).toBe(text);
    expect(text.split("\n").find((l) => l.trim() && !l.startsWith("#"))).toBe("format: countersign.policy/v1");
    expect(text).toContain("policies: |\n  @id(\"demo-tools\")");
    expect(text).toContain("    deadline: 24h\n");
    const file = parsed(text);
    expect(formatPolicyFile(file)).toBe(text);
    expect(diffPolicy(demo(), file).unchanged).toBe(true);
  });

  it("the same policy gives the same file whatever the order of its rules and of the keys in its records", () => {
    const a = demo();
    const b = demo();
    b.rules.reverse();
    b.document.tests = b.document.tests.map((t) => ({ ...t, call: { ...t.call, arguments: Object.fromEntries(Object.entries(t.call.arguments).reverse()) } }));
    expect(formatPolicyFile(b, tools)).toBe(formatPolicyFile(a, tools));
  });

  it("money thresholds with a currency are written as money and read back as minor units in that currency", () => {
    const content = demo();
    content.rules[0] = { ...content.rules.find((r) => r.ruleKey === "refund-over-limit")!, currency: "EUR", value: "15005" };
    const text = formatPolicyFile(content, tools);
    expect(text).toContain("    value: EUR 150.05\n");
    const rule = parsed(text).rules.find((r) => r.ruleKey === "refund-over-limit")!;
    expect([rule.value, rule.currency]).toEqual(["15005", "EUR"]);
    const edited = parsed(text.replace("value: EUR 150.05", "value: EUR 200"));
    expect(edited.rules.find((r) => r.ruleKey === "refund-over-limit")).toMatchObject({ value: "20000", currency: "EUR" });
  });
});

describe("values and settings as written and read back", () => {
  const refundRule = () => demoRules().find((r) => r.ruleKey === "refund-over-limit")!;
  /** The file with one rule changed, its text, and the rule as read back from that text. */
  const roundTrip = (over: Partial<RuleInput>) => {
    const content = { ...demo(), rules: [{ ...refundRule(), ...over }] };
    const text = formatPolicyFile(content, tools);
    return { text, rule: parsed(text).rules[0] };
  };
  /** The problems of the demo file with the refund rule's lines replaced. */
  const problemsWith = (lines: string[]) => {
    const text = formatPolicyFile({ ...demo(), rules: [refundRule()] }, tools);
    const r = parsePolicyFile(edited(text, / {4}value: EUR 150\.00\n/, lines.map((l) => `    ${l}\n`).join("")));
    return r.ok ? [] : r.problems.map((p) => p.message);
  };

  it("money of any size and sign: cents, whole units, negatives, zero", () => {
    const cases: [string, string][] = [["5", "EUR 0.05"], ["100", "EUR 1.00"], ["0", "EUR 0.00"], ["-150", "EUR -1.50"], ["-5", "EUR -0.05"], ["123456789", "EUR 1234567.89"], ["1000000000000", "EUR 10000000000.00"]];
    for (const [minor, money] of cases) {
      const { text, rule } = roundTrip({ value: minor, currency: "EUR" });
      expect(text).toContain(`    value: ${money}\n`);
      expect([rule.value, rule.currency]).toEqual([minor, "EUR"]);
    }
    // Minor units stored with a leading zero are written as plain money.
    expect(roundTrip({ value: "0150", currency: "EUR" }).text).toContain("    value: EUR 1.50\n");
    expect(roundTrip({ value: "00150", currency: "EUR" }).text).toContain("    value: EUR 1.50\n");
  });

  it("a rule the file marks inactive is read as retired, not as a rule in force", () => {
    const both = formatPolicyFile({ ...demo(), rules: [refundRule(), { ...refundRule(), ruleKey: "refund-retired" }] }, tools);
    const at = both.indexOf("  - key: refund-retired\n");
    const text = both.slice(0, at) + edited(both.slice(at), "    active: true\n", "    active: false\n");
    expect(parsed(both).rules.map((r) => r.ruleKey)).toEqual(["refund-over-limit", "refund-retired"]);
    expect(parsed(text).rules.map((r) => r.ruleKey)).toEqual(["refund-over-limit"]);
  });

  it("money is read with up to two decimals and up to thirteen digits; a minus zero is zero", () => {
    const read = (money: string) => parsed(formatPolicyFile({ ...demo(), rules: [refundRule()] }, tools).replace("value: EUR 150.00", `value: ${money}`)).rules[0];
    expect(read("EUR 1.5")).toMatchObject({ value: "150", currency: "EUR" });
    expect(read("USD -0.00")).toMatchObject({ value: "0", currency: "USD" });
    expect(read("EUR 1234567890123")).toMatchObject({ value: "123456789012300" });
    // Blanks a quoted value keeps around its money are not part of it.
    expect(read('" EUR 150.00 "')).toMatchObject({ value: "15000", currency: "EUR" });
    for (const money of ["EUR 1.505", "EUR 12345678901234", "eur 1.00", "EUR 1,000.00"]) {
      expect(problemsWith([`value: ${money}`])).toEqual([expect.stringMatching(/money is written as a currency code and an amount with at most two decimals/)]);
    }
  });

  it("a value that names its currency takes no currency key; a whole number must be one JavaScript holds exactly", () => {
    expect(problemsWith(["value: EUR 150.00", "currency: EUR"])).toEqual([expect.stringMatching(/the value already names its currency/)]);
    for (const n of ["1.5", "9007199254740993"]) expect(problemsWith([`value: ${n}`])).toEqual([expect.stringMatching(/a whole number \(money as minor units/)]);
    expect(problemsWith(["value: 15000", "currency: EUR"])).toEqual([]);
  });

  it("minor units without a currency are a number; text that looks like money is text outside a money field", () => {
    const { text, rule } = roundTrip({ value: "15000", currency: null });
    expect(text).toContain("    value: 15000\n");
    expect(rule).toMatchObject({ value: "15000", currency: null });
    const env = roundTrip({ tool: "deploy_service", field: "environment", operator: "eq", value: "EUR 1.00", currency: null });
    expect(env.rule).toMatchObject({ value: "EUR 1.00", currency: null });
    // A currency on a field that is not in cents is its own key.
    const labelled = roundTrip({ tool: "deploy_service", field: "environment", operator: "eq", value: "production", currency: "EUR" });
    expect(labelled.text).toContain("    currency: EUR\n");
    expect(labelled.rule).toMatchObject({ value: "production", currency: "EUR" });
  });

  it("a number is written as a number only where the attribute is a number, and only in its plain form", () => {
    expect(roundTrip({ tool: "deploy_service", field: "version", operator: "eq", value: "2", currency: null }).text).toContain('    value: "2"\n');
    expect(roundTrip({ tool: "gone_tool", field: "size", operator: "gt", value: "2", currency: null }).text).toContain("    value: 2\n");
    expect(roundTrip({ tool: "gone_tool", field: "size", operator: "eq", value: "2", currency: null }).text).toContain('    value: "2"\n');
    const padded = roundTrip({ value: "007", currency: null });
    expect(padded.text).toContain('    value: "007"\n');
    expect(padded.rule.value).toBe("007");
  });

  it("a requestable rule's settings default as documented; a passkey and an escalation are kept", () => {
    const text = formatPolicyFile({ ...demo(), rules: [refundRule()] }, tools).replace(/ {4}(quorum|deadline|validity|justification): .*\n/g, "");
    expect(parsed(text).rules[0]).toMatchObject({ approvalsRequired: 1, requestDeadlineSec: 86400, approvalValiditySec: 3600, requireJustification: false });
    const { text: full, rule } = roundTrip({ requirePasskey: true, requireJustification: true, escalateAfterSec: 7200, fallbackGroup: "treasury" });
    expect(full).toContain("    passkey: true\n");
    expect(rule).toMatchObject({ requirePasskey: true, requireJustification: true, escalateAfterSec: 7200, fallbackGroup: "treasury" });
    expect(roundTrip({}).rule).not.toHaveProperty("requirePasskey");
  });

  it("durations are written as people say them: hours up to two days, then days; minutes when not whole hours", () => {
    for (const [deadline, validity, written] of [
      [216000, 5400, ["    deadline: 60h\n", "    validity: 90m\n"]],
      [172800, 1800, ["    deadline: 2d\n", "    validity: 30m\n"]],
      [86400, 3600, ["    deadline: 24h\n", "    validity: 1h\n"]],
    ] as const) {
      const { text, rule } = roundTrip({ requestDeadlineSec: deadline, approvalValiditySec: validity });
      for (const line of written) expect(text).toContain(line);
      expect([rule.requestDeadlineSec, rule.approvalValiditySec]).toEqual([deadline, validity]);
    }
  });

  it("a deny rule has no passkey either", () => {
    const deny: RuleInput = { ...refundRule(), effect: "deny", approverGroup: null, approvalsRequired: 0, requestDeadlineSec: 0, approvalValiditySec: 0 };
    const text = formatPolicyFile({ ...demo(), rules: [deny] }, tools);
    // Read back, it carries none of a requestable rule's defaults (no quorum of 1, no deadline of a day).
    expect(parsed(text).rules).toEqual([deny]);
    const r = parsePolicyFile(text.replace("    effect: deny\n", "    effect: deny\n    passkey: true\n"));
    expect(r.ok ? [] : r.problems.map((p) => p.message)).toEqual([expect.stringMatching(/a deny rule cannot be approved, so it has no passkey/)]);
  });

  it("a requestable default posture keeps its passkey and escalation; lists in test arguments keep their order, their records sorted", () => {
    const requestable = { requestable: { approvers: "sre", quorum: 2, passkey: true, escalate: "2h", fallback: "treasury", reason: "Two SREs look first." } };
    const content = demo();
    content.document = PolicyDocument.parse({ ...DEMO_DOCUMENT, defaults: { ...DEMO_DOCUMENT.defaults, tools: { delete_path: requestable } } });
    const read = parsed(formatPolicyFile(content, tools));
    expect(read.document.defaults.tools.delete_path).toEqual(PolicyDocument.parse({ defaults: { tools: { delete_path: requestable } } }).defaults.tools.delete_path);
    const withList = (items: unknown[]) => {
      const c = demo();
      c.document.tests = [{ ...c.document.tests[0], call: { tool: "x", arguments: { items } } }];
      return formatPolicyFile(c, tools);
    };
    expect(withList([{ b: 1, a: 2 }, { d: 3, c: 4 }])).toBe(withList([{ a: 2, b: 1 }, { c: 4, d: 3 }]));
    expect(withList([1, 2])).not.toBe(withList([2, 1]));
    expect(parsed(withList([{ b: 1, a: 2 }, 3])).document.tests[0].call.arguments).toEqual({ items: [{ a: 2, b: 1 }, 3] });
  });
});

describe("reading a policy file: every problem at its line and column", () => {
  const text = formatPolicyFile(demo());

  it("a YAML syntax error is said in the parser's words at its line and column", () => {
    const unclosed = edited(text, "    quorum: 2\n", "    quorum: [2\n");
    const u = parsePolicyFile(unclosed);
    expect(!u.ok && u.problems[0]).toEqual({ message: "Flow sequence in block collection must be sufficiently indented and end with a ]", line: lineOf(unclosed, "quorum: [2") + 1, column: 5 });
  });

  it("a key given twice is refused at the second", () => {
    const twice = edited(text, "    effect: deny\n", "    effect: deny\n    effect: requestable\n");
    const r = parsePolicyFile(twice);
    expect(!r.ok && r.problems).toEqual([{ message: "Map keys must be unique", line: lineOf(twice, "    effect: deny") + 1, column: 5 }]);
  });

  it("aliases that expand without bound are refused before the file is read (a billion laughs)", () => {
    const lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 12; i++) lines.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(", ")}]`);
    const r = parsePolicyFile(`format: countersign.policy/v1\ntests:\n  ${lines.join("\n  ")}\n`);
    expect(!r.ok && r.problems).toEqual([{ message: expect.stringMatching(/alias count/i) }]);
  });

  it("a problem in the document's parts is reported at its line, under the file's names", () => {
    const zone = edited(text, "time_zones:\n  - Europe/Berlin\n", "time_zones:\n  - Europe/Berlin\n  - Mars/Olympus\n");
    const r = parsePolicyFile(zone);
    expect(!r.ok && r.problems).toEqual([{ line: lineOf(zone, "Mars/Olympus"), column: 5, message: expect.stringMatching(/^time_zones\[1\]: /) }]);
    const window = edited(text, "    window: 24h\n", "    window: soon\n");
    const w = parsePolicyFile(window);
    expect(!w.ok && w.problems).toEqual([{ line: lineOf(window, "window: soon"), column: 13, message: expect.stringMatching(/^history\[0\]\.window: /) }]);
  });

  it("a file that is not a map is refused at its start; an empty key means the same as no key", () => {
    for (const notMap of ["- format: countersign.policy/v1\n", "just text\n", "\n"]) {
      expect(parsePolicyFile(notMap)).toEqual({ ok: false, problems: [{ message: "a policy file is a YAML map starting with format: countersign.policy/v1", line: 1, column: 1 }] });
    }
    const empty = parsed(`${text}servers:\n`.replace(/^tests:\n(?: {2}.*\n)*/m, "tests:\n"));
    expect(empty.document.tests).toEqual([]);
    expect(empty.servers).toBeNull();
  });

  it("a schema error points at the key or value in the file, with the file's names for the rule's fields", () => {
    const broken = text.replace("    approvers: sre\n", "    approvers: sre\n    aprovers: sre\n").replace("    quorum: 1\n", "    quorum: one\n");
    const r = parsePolicyFile(broken);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const unknown = r.problems.find((p) => p.message.includes("aprovers"))!;
    expect(unknown).toMatchObject({ line: lineOf(broken, "aprovers: sre"), column: 5 });
    const quorum = r.problems.find((p) => p.message.includes("quorum"))!;
    expect(quorum).toMatchObject({ line: lineOf(broken, "quorum: one"), column: 13 });
    // A rule's own checks name the file's keys too (quorum, not approvalsRequired).
    const tooMany = text.replace("    quorum: 2\n", "    quorum: 99\n");
    const t = parsePolicyFile(tooMany);
    expect(!t.ok && t.problems).toEqual([{ line: lineOf(tooMany, "quorum: 99"), column: 13, message: expect.stringMatching(/^rules\[\d+\]\.quorum: /) }]);
  });

  it("a file without the format line, or of another format, is refused", () => {
    const r = parsePolicyFile(text.replace("format: countersign.policy/v1", "format: countersign.policy/v0"));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]).toMatchObject({ line: lineOf(text, "format:"), message: expect.stringContaining("countersign.policy/v1") });
  });

  it("a Cedar validation error inside policies is reported at its line in the file, not in the block", () => {
    const broken = text.replace('principal.name == "support-bot"', 'principal.name == "support-bot" && context.args.no_such_argument == 1');
    const file = parsed(broken);
    const r = compilePolicyFile(file, tools);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const line = lineOf(broken, "no_such_argument");
    expect(r.problems.some((p) => p.line === line && (p.column ?? 0) > 2)).toBe(true);
  });

  it("a Cedar syntax error inside policies is reported at its line and column in the file", () => {
    const broken = text.replace("context.history.refunds_per_order.total + resource.amount.minor > 15000", "context.history.refunds_per_order.total + > 15000");
    const r = compilePolicyFile(parsed(broken), tools);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const line = lineOf(broken, "refunds_per_order.total + > 15000");
    const col = broken.split("\n")[line - 1].indexOf("> 15000") + 1;
    expect(r.problems[0]).toMatchObject({ line, column: col });
  });

  it("a key the file leaves out is reported at the map that lacks it", () => {
    const broken = edited(text, /( {2}- key: delete-prod\n(?: {4}.*\n)*?) {4}reason: .*\n/, "$1");
    const r = parsePolicyFile(broken);
    expect(!r.ok && r.problems).toEqual([{ line: lineOf(broken, "key: delete-prod"), column: 5, message: expect.stringMatching(/^rules\[\d+\]\.reason: /) }]);
  });

  it("a Cedar syntax error is found at its column when the policies block starts with a blank line", () => {
    const broken = text
      .replace("policies: |\n", "policies: |\n\n")
      .replace("context.history.refunds_per_order.total + resource.amount.minor > 15000", "context.history.refunds_per_order.total + > 15000");
    const r = compilePolicyFile(parsed(broken), tools);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const line = lineOf(broken, "refunds_per_order.total + > 15000");
    expect(r.problems[0]).toMatchObject({ line, column: broken.split("\n")[line - 1].indexOf("> 15000") + 1 });
  });

  it("a Cedar problem in policies written as a quoted string is reported at the string", () => {
    const broken = edited(text, /^policies: \|\n(?: {2}.*\n|\n)*/m, 'policies: "permit (principal, action, resource) when { 1 + };"\n');
    const r = compilePolicyFile(parsed(broken), tools);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]).toMatchObject({ line: lineOf(broken, "policies: "), column: 11 });
  });

  it("a form rule the tool cannot evaluate is reported at the rule", () => {
    const broken = text.replace("    field: path\n", "    field: size\n");
    const r = compilePolicyFile(parsed(broken), tools);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems[0]).toMatchObject({ line: lineOf(text, "key: delete-prod"), message: expect.stringContaining("delete-prod") });
  });

  it("a key the file must have is missed at the file's first key; a rule's setting named as the file names it, at its value", () => {
    const noFormat = text.replace(/^format: .*\n/m, "");
    const r = parsePolicyFile(noFormat);
    const firstKey = noFormat.split("\n").findIndex((l) => /^[a-z_]+:/.test(l)) + 1;
    expect(firstKey).toBeGreaterThan(1);
    expect(!r.ok && r.problems).toEqual([{ message: "format: the first key is format: countersign.policy/v1", line: firstKey, column: 1 }]);
    const shortReason = text.replace(/    reason: .*\n/, "    reason: abc\n");
    const s = parsePolicyFile(shortReason);
    expect(!s.ok && s.problems).toEqual([{ message: "rules[0].reason: Too small: expected string to have >=5 characters", line: lineOf(shortReason, "    reason: abc"), column: 13 }]);
  });

  it("money that is not money, at the value or at the currency it repeats, whatever the spacing", () => {
    const at = (value: string, extra = "") => {
      const changed = text.replace("    value: EUR 150.00\n", `    value: ${value}\n${extra}`);
      expect(changed).not.toBe(text);
      const r = parsePolicyFile(changed);
      return r.ok ? [] : r.problems.map((p) => ({ ...p, line: p.line! - lineOf(changed, `    value: ${value}`) }));
    };
    const key = /^rules\[\d+\]\./;
    const fractional = at("1.5");
    expect(fractional).toEqual([{ message: expect.stringMatching(key), line: 0, column: 12 }]);
    expect(fractional[0].message.replace(key, "")).toBe("value: a whole number (money as minor units, or as money: EUR 150.00)");
    const twice = at("EUR 150.00", "    currency: EUR\n");
    expect(twice).toEqual([{ message: expect.stringMatching(key), line: 1, column: 15 }]);
    expect(twice[0].message.replace(key, "")).toBe("currency: the value already names its currency");
    const money = "value: money is written as a currency code and an amount with at most two decimals, e.g. EUR 150.00";
    for (const written of ["EUR 150.005", '"  EUR 150.005"']) {
      const problems = at(written);
      expect(problems.map((p) => p.message.replace(key, "")), written).toEqual([money]);
      expect(problems[0]).toMatchObject({ line: 0, column: 12 });
    }
    // Letters later in the value are not a currency code: a threshold needs a number.
    expect(at("100 EUR flat").map((p) => p.message.replace(key, ""))).toEqual(["value: a number for gt/gte"]);
  });

  it("a deny rule with approval settings, or two rules with one key, are refused", () => {
    const withApprovers = text.replace("    effect: deny\n", "    effect: deny\n    approvers: treasury\n");
    const r1 = parsePolicyFile(withApprovers);
    expect(r1.ok).toBe(false);
    // At the setting itself, named with its path.
    expect(!r1.ok && r1.problems).toEqual([
      { message: expect.stringMatching(/^rules\[\d+\]\.approvers: a deny rule cannot be approved, so it has no approvers$/), line: lineOf(withApprovers, "    approvers: treasury"), column: 16 },
    ]);
    const twice = text.replace("  - key: wire-over-25k", "  - key: wire-over-1m");
    const r2 = parsePolicyFile(twice);
    expect(r2.ok).toBe(false);
    const second = twice.split("\n").findLastIndex((l) => l.includes("key: wire-over-1m")) + 1;
    if (!r2.ok) expect(r2.problems[0]).toMatchObject({ message: expect.stringContaining("two rules have the key wire-over-1m"), line: second, column: 10 });
  });
});

describe("compiling a policy file: each problem where it is", () => {
  const text = formatPolicyFile(demo());

  it("a policy's problem at its place in the file; one of no place without a line; no test case run", async () => {
    const dup = text.replace('@id("demo-tools")', '@id("support-bot-refunds-only")');
    const second = dup.split("\n").findLastIndex((l) => l.includes('@id("support-bot-refunds-only")')) + 1;
    const problems = [{ message: 'policies: two policies have @id("support-bot-refunds-only")', line: second, column: 3 }];
    expect(compilePolicyFile(parsed(dup), tools)).toEqual({ ok: false, problems });
    expect(await checkPolicyFile(parsed(dup), tools)).toEqual({ ok: false, problems, outcomes: [] });
    const gone = text.replace(/tool: issue_refund\n    window/, "tool: refund_gone\n    window");
    expect(gone).not.toBe(text);
    const r = compilePolicyFile(parsed(gone), tools);
    expect(!r.ok && r.problems[0]).toEqual({ message: "history refunds_per_order: there is no tool refund_gone" });
  });
});

describe("the diff an import shows", () => {
  it("names rules added, changed (with their fields) and removed, policies by @id, and the document's parts", () => {
    const current = demo();
    const incoming = demo();
    incoming.rules = incoming.rules.filter((r) => r.ruleKey !== "delete-prod").map((r) => (r.ruleKey === "refund-over-limit" ? { ...r, value: "20000", reason: "Refunds above EUR 200.00 need a lead." } : r));
    incoming.rules.push({ ...incoming.rules[0], ruleKey: "refund-huge", value: "90000" });
    incoming.document = {
      ...incoming.document,
      policies: `${incoming.document.policies}\n@id("no-deletes-at-all")\nforbid (principal, action == Action::"delete_path", resource);\n`.replace('"The support bot may only issue refunds."', '"Only refunds for the support bot."'),
      timeZones: ["Europe/Berlin", "America/New_York"],
      tests: incoming.document.tests.slice(1),
    };
    const diff = diffPolicy(current, incoming);
    expect(diff.rules).toEqual({ added: ["refund-huge"], changed: [{ key: "refund-over-limit", fields: ["value", "reason"] }], removed: ["delete-prod"] });
    expect(diff.policies).toEqual({ added: ["no-deletes-at-all"], changed: ["support-bot-refunds-only"], removed: [] });
    expect([diff.defaults, diff.history, diff.timeZones, diff.document, diff.unchanged]).toEqual([false, false, true, true, false]);
    expect(diff.tests.removed).toEqual(["a refund within the limit runs at once"]);
    expect(describeDiff(diff).split("\n")).toEqual([
      "+ rule refund-huge",
      "~ rule refund-over-limit (value, reason)",
      "- rule delete-prod (retired)",
      "+ policy no-deletes-at-all",
      "~ policy support-bot-refunds-only",
      "~ time zones",
      '- test "a refund within the limit runs at once"',
    ]);
    expect(describeDiff(diffPolicy(current, demo()))).toBe("No changes.");
    const back = describeDiff(diffPolicy(incoming, current)).split("\n");
    expect(back).toContain("- policy no-deletes-at-all");
    expect(back).toContain('+ test "a refund within the limit runs at once"');
    const reworded = { ...current, document: { ...current.document, tests: current.document.tests.map((t, i) => (i === 0 ? { ...t, expect: "deny" as const } : t)) } };
    expect(describeDiff(diffPolicy(current, reworded))).toBe(`~ test "${current.document.tests[0].name}"`);
  });
});

describe("the diff an import shows, field by field", () => {
  const rule = (key: string) => demoRules().find((r) => r.ruleKey === key)!;
  const withRule = (r: RuleInput) => ({ ...demo(), rules: demoRules().map((x) => (x.ruleKey === r.ruleKey ? r : x)) });
  const changedFields = (r: RuleInput) => diffPolicy(demo(), withRule(r)).rules.changed;

  it("a requestable rule's approval settings and a rule's currency are compared", () => {
    const refund = rule("refund-over-limit");
    expect(changedFields({ ...refund, approverGroup: "sre" })).toEqual([{ key: "refund-over-limit", fields: ["approvers"] }]);
    expect(changedFields({ ...refund, approvalsRequired: 2 })).toEqual([{ key: "refund-over-limit", fields: ["quorum"] }]);
    expect(changedFields({ ...refund, requirePasskey: true })).toEqual([{ key: "refund-over-limit", fields: ["passkey"] }]);
    expect(changedFields({ ...refund, currency: "USD" })).toEqual([{ key: "refund-over-limit", fields: ["currency"] }]);
  });

  it("a rule made a deny rule names the settings it drops; an escalation's time and group are compared", () => {
    const refund = rule("refund-over-limit");
    expect([refund.requireJustification, refund.requirePasskey ?? false]).toEqual([false, false]);
    const deny = { ...refund, effect: "deny" as const, approverGroup: null, approvalsRequired: 0, requestDeadlineSec: 0, approvalValiditySec: 0 };
    expect(changedFields(deny)).toEqual([{ key: "refund-over-limit", fields: ["effect", "approvers", "quorum", "deadline", "validity"] }]);
    expect(changedFields({ ...refund, escalateAfterSec: 3600, fallbackGroup: "treasury" })).toEqual([{ key: "refund-over-limit", fields: ["escalate", "fallback"] }]);
    const escalating = { ...refund, escalateAfterSec: 3600, fallbackGroup: "treasury" };
    const diff = diffPolicy(withRule(escalating), withRule({ ...escalating, escalateAfterSec: 7200, fallbackGroup: "sre" }));
    expect(diff.rules.changed).toEqual([{ key: "refund-over-limit", fields: ["escalate", "fallback"] }]);
  });

  it("rules are named in key order, whatever order the files give them in", () => {
    const reversed = demoRules().reverse();
    const incoming = {
      ...demo(),
      rules: [
        { ...rule("refund-over-limit"), ruleKey: "zz-refund" },
        { ...rule("refund-over-limit"), ruleKey: "aa-refund" },
        ...reversed
          .filter((r) => r.ruleKey !== "wire-over-1m" && r.ruleKey !== "delete-prod")
          .map((r) => (r.ruleKey === "wire-over-25k" || r.ruleKey === "refund-over-limit" ? { ...r, reason: `${r.reason} Reviewed.` } : r)),
      ],
    };
    expect(diffPolicy(demo(), incoming).rules).toEqual({
      added: ["aa-refund", "zz-refund"],
      changed: [
        { key: "refund-over-limit", fields: ["reason"] },
        { key: "wire-over-25k", fields: ["reason"] },
      ],
      removed: ["delete-prod", "wire-over-1m"],
    });
  });

  it("a rule renamed, or one added beside one changed, is a change, and so is a policy or a test renamed", () => {
    const renamed = { ...demo(), rules: demoRules().map((r) => (r.ruleKey === "delete-prod" ? { ...r, ruleKey: "delete-production" } : r)) };
    expect(diffPolicy(demo(), renamed)).toMatchObject({ rules: { added: ["delete-production"], changed: [], removed: ["delete-prod"] }, unchanged: false });
    const addedAndChanged = { ...demo(), rules: [...demoRules().map((r) => (r.ruleKey === "delete-prod" ? { ...r, reason: `${r.reason} Reviewed.` } : r)), { ...rule("delete-prod"), ruleKey: "delete-staging" }] };
    expect(diffPolicy(demo(), addedAndChanged)).toMatchObject({ rules: { added: ["delete-staging"], changed: [{ key: "delete-prod", fields: ["reason"] }], removed: [] }, unchanged: false });
    const withDocument = (over: Partial<PolicyDocument>) => ({ ...demo(), document: { ...demo().document, ...over } });
    const policies = demo().document.policies;
    expect(describeDiff(diffPolicy(demo(), withDocument({ policies: policies.replace('@id("demo-tools")', '@id("demo-tools-only")') }))).split("\n")).toEqual(["+ policy demo-tools-only", "- policy demo-tools"]);
    const addedAndReworded = `${policies.replace("The support bot may only issue refunds.", "Refunds only.")}\n@id("no-deletes-at-all")\nforbid (principal, action == Action::"delete_path", resource);\n`;
    expect(describeDiff(diffPolicy(demo(), withDocument({ policies: addedAndReworded }))).split("\n")).toEqual(["+ policy no-deletes-at-all", "~ policy support-bot-refunds-only"]);
    const tests = demo().document.tests;
    const testRenamed = withDocument({ tests: tests.map((t, i) => (i === 0 ? { ...t, name: `${t.name}, renamed` } : t)) });
    expect(describeDiff(diffPolicy(demo(), testRenamed)).split("\n")).toEqual([`+ test "${tests[0].name}, renamed"`, `- test "${tests[0].name}"`]);
    const testAddedAndChanged = withDocument({ tests: [...tests.map((t, i) => (i === 0 ? { ...t, expect: "deny" as const } : t)), { ...tests[0], name: "one more" }] });
    expect(describeDiff(diffPolicy(demo(), testAddedAndChanged)).split("\n")).toEqual(['+ test "one more"', `~ test "${tests[0].name}"`]);
  });

  it("a deny rule's approval settings are not: they never apply", () => {
    const deny = rule("wire-over-1m");
    const diff = diffPolicy(demo(), withRule({ ...deny, approverGroup: "treasury", approvalsRequired: 2, requirePasskey: true, requestDeadlineSec: 60 }));
    expect(diff.rules.changed).toEqual([]);
    expect(diff.unchanged).toBe(true);
  });

  it("a rule the file keeps inactive is one the import retires", () => {
    const diff = diffPolicy(demo(), withRule({ ...rule("delete-prod"), active: false }));
    expect(diff.rules).toEqual({ added: [], changed: [], removed: ["delete-prod"] });
    expect(diffPolicy(withRule({ ...rule("delete-prod"), active: false }), demo()).rules.added).toEqual(["delete-prod"]);
  });

  it("defaults, history windows and a change of comments only are each named; none of them is 'no changes'", () => {
    const withDocument = (over: Partial<PolicyDocument>) => ({ ...demo(), document: { ...demo().document, ...over } });
    const defaults = diffPolicy(demo(), withDocument({ defaults: { ...demo().document.defaults, posture: "allow" } }));
    expect([defaults.defaults, defaults.history, defaults.unchanged]).toEqual([true, false, false]);
    expect(describeDiff(defaults)).toBe("~ defaults");
    const history = diffPolicy(demo(), withDocument({ history: demo().document.history.slice(1) }));
    expect([history.defaults, history.history, history.unchanged]).toEqual([false, true, false]);
    expect(describeDiff(history)).toBe("~ history windows");
    const comments = diffPolicy(demo(), withDocument({ policies: `// Reviewed in December.\n${demo().document.policies}` }));
    expect([comments.document, comments.policies.changed, comments.unchanged]).toEqual([true, [], false]);
    expect(describeDiff(comments)).toBe("~ policies (comments or layout)");
    const reworded = diffPolicy(demo(), withDocument({ policies: demo().document.policies.replace("The support bot may only issue refunds.", "Refunds only.") }));
    expect(describeDiff(reworded)).toBe("~ policy support-bot-refunds-only");
  });

  it("policies without an @id are told apart by their place; a text that does not parse is one entry", () => {
    const withPolicies = (policies: string) => ({ ...demo(), document: { ...demo().document, policies } });
    const unnamed = 'forbid (principal, action == Action::"delete_path", resource);\npermit (principal, action, resource);\n';
    expect(diffPolicy(withPolicies(""), withPolicies(unnamed)).policies.added).toEqual(["(policy 1 without @id)", "(policy 2 without @id)"]);
    // An @id without a value is none.
    expect(diffPolicy(withPolicies(""), withPolicies(`@id\n${unnamed}`)).policies.added).toEqual(["(policy 1 without @id)", "(policy 2 without @id)"]);
    // Blank lines between policies are layout, not a change of either.
    const two = '@id("a")\nforbid (principal, action == Action::"delete_path", resource);\n@id("b")\npermit (principal, action, resource);\n';
    const spaced = diffPolicy(withPolicies(two), withPolicies(two.replace('@id("b")', '\n\n@id("b")')));
    expect([spaced.policies, spaced.document]).toEqual([{ added: [], changed: [], removed: [] }, true]);
    const unreadable = diffPolicy(demo(), withPolicies("forbid (principal, action, resource"));
    expect(unreadable.policies.added).toEqual(["(unreadable policy text)"]);
    expect(unreadable.policies.removed).toEqual(["demo-tools", "support-bot-refunds-only", "wire-account-24h", "refund-order-total", "deploy-production-after-hours"]);
  });
});

describe("test cases", () => {
  const file = parsed(formatPolicyFile(demo()));
  const compiled = compilePolicyFile(file, tools);
  if (!compiled.ok) throw new Error("the demo policy does not compile");
  const base = file.document.tests[0];
  const run = (t: Partial<PolicyTest>) => runPolicyTests(compiled.policy, [{ ...base, ...t } as PolicyTest]).then((r) => r[0]);

  it("the demo policy passes its own test cases", async () => {
    const r = await checkPolicyFile(file, tools);
    expect(r.ok).toBe(true);
    expect(r.outcomes.map((o) => o.passed)).toEqual(file.document.tests.map(() => true));
  });

  it("a case fails with a one-line reason when the decision, or the policy that decides, is not the expected one", async () => {
    expect(await run({ expect: "deny" })).toMatchObject({ passed: false, reason: "expected deny, got allow by demo-tools", actual: { decision: "allow", by: "demo-tools" } });
    expect(await run({ by: "support-bot-refunds-only" })).toMatchObject({ passed: false, reason: "expected allow by support-bot-refunds-only, got allow by demo-tools" });
    const big = await run({ resource: { ...base.resource!, properties: { ...base.resource!.properties, amount_cents: 16000 } }, expect: "requestable", by: "rule:refund-over-limit" });
    expect(big).toMatchObject({ passed: true, reason: "requestable by rule:refund-over-limit" });
  });

  it("arguments are validated by the tool's schema; a case without a resource needs the mapping, which the command line does not read", async () => {
    expect(await run({ call: { tool: "issue_refund", arguments: { order_id: "2289", amount: 20 } } })).toMatchObject({ passed: false, actual: null, reason: expect.stringContaining("do not fit issue_refund") });
    expect(await run({ resource: undefined })).toMatchObject({ passed: false, reason: expect.stringContaining("gives no resource") });
    expect(await run({ history: { refunds_per_odrer: { total: 0, count: 0 } } })).toMatchObject({ passed: false, reason: expect.stringContaining("no history window refunds_per_odrer") });
  });

  it("a case without `at` is evaluated at a fixed instant (12:00 in Berlin), never the wall clock", async () => {
    expect(DEFAULT_TEST_TIME.toISOString()).toBe("2026-06-01T10:00:00.000Z");
    const deploy = file.document.tests.find((t) => t.name.startsWith("a production deploy"))!;
    const r = await runPolicyTests(compiled.policy, [{ ...deploy, at: undefined, by: "rule:deploy-production" }]);
    expect(r[0]).toMatchObject({ passed: true, reason: "requestable by rule:deploy-production" });
  });

  it("a test name with control characters is printed on one line", async () => {
    const r = await run({ name: "evil\u001b[2J\nname", expect: "deny" });
    const [failure] = failuresOf([r]);
    expect(failure.message).toContain("evil\\u001b[2J\\u000aname");
    expect(failure.message).not.toMatch(/[\u0000-\u001f]/);
  });
});

describe("the servers section: upstream MCP servers as code, secrets only as references", () => {
  const example = readFileSync(EXAMPLE, "utf8");
  const withServers = (section: string) => example.replace("format: countersign.policy/v1\n", `format: countersign.policy/v1\n${section}`);
  const SECTION = [
    "servers:",
    "  - name: github",
    "    transport: streamable-http",
    "    url: https://mcp.example.test/mcp",
    "    credentials:",
    "      bearer: ${env:GITHUB_TOKEN}",
    "  - name: files",
    "    transport: stdio",
    "    command: npx",
    "    args: [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/srv/files\"]",
    "    env:",
    "      API_KEY: ${env:FILES_API_KEY}",
    "      KEPT: ${stored}",
    "    root: /srv/files",
    "    path_arguments: [path]",
    "    summaries:",
    "      write_file: write {path}",
    "",
  ].join("\n");

  it("is read into servers with their references, written back stably, and shown in the diff", () => {
    const file = parsed(withServers(SECTION));
    expect(file.servers).toEqual([
      { name: "github", transport: "streamable-http", enabled: true, url: "https://mcp.example.test/mcp", credentials: { bearer: "${env:GITHUB_TOKEN}" }, pathArgs: [], summaries: {} },
      {
        name: "files",
        transport: "stdio",
        enabled: true,
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/files"],
        env: { API_KEY: "${env:FILES_API_KEY}", KEPT: "${stored}" },
        root: "/srv/files",
        pathArgs: ["path"],
        summaries: { write_file: "write {path}" },
      },
    ]);
    const text = formatPolicyFile(file, tools);
    // Every field read is written back: the file read again holds the same servers (in name order).
    expect(parsed(text).servers).toEqual([file.servers![1], file.servers![0]]);
    // Keys are written in order whatever order the file gave them in.
    const reordered = edited(SECTION, "      API_KEY: ${env:FILES_API_KEY}\n      KEPT: ${stored}\n", "      KEPT: ${stored}\n      API_KEY: ${env:FILES_API_KEY}\n");
    expect(formatPolicyFile(parsed(withServers(reordered)), tools)).toBe(text);
    expect(text.indexOf("servers:")).toBeLessThan(text.indexOf("rules:"));
    expect(text.indexOf("name: files")).toBeLessThan(text.indexOf("name: github"));
    expect(formatPolicyFile(parsed(text), tools)).toBe(text);

    const diff = diffPolicy({ ...demo(), servers: [{ ...file.servers![1], summaries: {} }] }, file);
    expect(diff.servers).toEqual({ added: ["github"], changed: [{ name: "files", fields: ["summaries"] }] });
    expect(diff.unchanged).toBe(false);
    expect(describeDiff(diff).split("\n").slice(0, 2)).toEqual(["+ server github", "~ server files (summaries)"]);
    // Without a servers section nothing about servers changes.
    expect(diffPolicy({ ...demo(), servers: file.servers }, parsed(example)).unchanged).toBe(true);
  });

  it("a literal secret is refused at its line and column, and so is a password in the URL", () => {
    const text = withServers(SECTION.replace("${env:GITHUB_TOKEN}", "ghp_live_secret").replace("${env:FILES_API_KEY}", "hunter2"));
    const r = parsePolicyFile(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toHaveLength(2);
    expect(r.problems[0]).toMatchObject({ line: lineOf(text, "bearer: ghp_live_secret"), column: 15 });
    expect(r.problems[0].message).toMatch(/^servers\[0\]\.credentials\.bearer: a literal secret is refused/);
    expect(r.problems[1]).toMatchObject({ line: lineOf(text, "API_KEY: hunter2"), column: 7 });
    expect(JSON.stringify(r.problems)).not.toMatch(/ghp_live_secret|hunter2/);

    const url = withServers(SECTION.replace("https://mcp.example.test/mcp", "https://bot:pw@mcp.example.test/mcp"));
    const u = parsePolicyFile(url);
    expect(!u.ok && u.problems[0]).toMatchObject({ line: lineOf(url, "url: https://bot:pw@"), message: expect.stringMatching(/credentials in the URL are refused/) });
  });

  it("a header credential's value is a reference too: ${stored} is kept, a literal is refused at credentials.value", () => {
    const header = SECTION.replace("      bearer: ${env:GITHUB_TOKEN}", "      header: X-Api-Key\n      value: ${stored}");
    const read = parsed(withServers(header));
    expect(read.servers![0].credentials).toEqual({ header: "X-Api-Key", value: "${stored}" });
    expect(formatPolicyFile(read, tools)).toContain("    credentials:\n      header: X-Api-Key\n      value: ${stored}\n");
    const text = withServers(header.replace("value: ${stored}", "value: sk_live_1"));
    const r = parsePolicyFile(text);
    expect(!r.ok && r.problems).toEqual([
      { line: lineOf(text, "value: sk_live_1"), column: 14, message: expect.stringMatching(/^servers\[0\]\.credentials\.value: a literal secret is refused/) },
    ]);
  });

  it("a server refused for one reason is not also checked as a server, so the file shows that reason alone", () => {
    // A streamable-http server with a command and no url: without the early stop, its empty url was refused too.
    const text = withServers(SECTION.replace("    url: https://mcp.example.test/mcp\n", "    command: npx\n"));
    const r = parsePolicyFile(text);
    expect(!r.ok && r.problems).toEqual([{ line: lineOf(text, "command: npx"), column: 14, message: "servers[0].command: a streamable-http server has no command" }]);
  });

  it("a server the file disables is read, written back and compared as disabled", () => {
    const off = parsed(withServers(SECTION.replace("  - name: files\n", "  - name: files\n    enabled: false\n")));
    expect(off.servers!.map((s) => [s.name, s.enabled])).toEqual([["github", true], ["files", false]]);
    const text = formatPolicyFile(off, tools);
    expect(text).toContain("  - name: files\n    transport: stdio\n    enabled: false\n");
    expect(text).not.toContain("enabled: true");
    const on = parsed(withServers(SECTION));
    expect(diffPolicy(on, off).servers).toEqual({ added: [], changed: [{ name: "files", fields: ["enabled"] }] });
    // A field the incoming server leaves out is a change too.
    const rootless = { ...on, servers: [on.servers![0], { ...on.servers![1], root: undefined }] };
    expect(diffPolicy(on, rootless).servers).toEqual({ added: [], changed: [{ name: "files", fields: ["root"] }] });
  });

  it("a bad name, a field of the other transport, or two servers of one name are refused where they are", () => {
    const text = withServers(SECTION.replace("name: github", "name: GitHub!").replace("    root: /srv/files\n", "    root: /srv/files\n    url: https://x.test/\n"));
    const r = parsePolicyFile(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => [p.line, p.message.split(":")[0]])).toEqual(
      expect.arrayContaining([
        [lineOf(text, "url: https://x.test/"), "servers[1].url"],
        [lineOf(text, "name: GitHub!"), "servers[0].name"],
      ]),
    );
    const httpWithStdioFields = parsePolicyFile(withServers(SECTION.replace("      bearer: ${env:GITHUB_TOKEN}\n", "      bearer: ${env:GITHUB_TOKEN}\n    command: npx\n    args: [x]\n    env:\n      A: ${env:A}\n")));
    expect(!httpWithStdioFields.ok && httpWithStdioFields.problems.map((p) => p.message)).toEqual([
      "servers[0].command: a streamable-http server has no command",
      "servers[0].args: a streamable-http server has no args",
      "servers[0].env: a streamable-http server has no env",
    ]);
    const reserved = withServers(SECTION.replace("    path_arguments: [path]\n", "    path_arguments:\n      - path\n      - tool\n"));
    const pa = parsePolicyFile(reserved);
    expect(!pa.ok && pa.problems).toEqual([{ line: lineOf(reserved, "      - tool"), column: 9, message: "servers[1].path_arguments[1]: a name policy's resource already uses" }]);
    const twice = parsePolicyFile(withServers(SECTION.replace("name: files", "name: github")));
    expect(!twice.ok && twice.problems[0].message).toBe("servers[1].name: two servers are named github");
  });
});
