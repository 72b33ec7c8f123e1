/**
 * Policy as code: the whole policy (the form rules and the policy document: Cedar policies, default postures,
 * history windows, time zones and test cases) in one YAML file that can live in a repository.
 *
 *  - `formatPolicyFile` / `exportPolicyFile` write it: stable (the same policy gives a byte-identical file), money
 *    as money, durations as durations, the Cedar text as a literal block.
 *  - `parsePolicyFile` reads it: YAML and schema problems with the line and column in the file.
 *  - `checkPolicyFile` compiles it strictly against a tool catalog and runs its test cases; Cedar problems inside
 *    `policies` are reported at their line and column in the file, not in the block.
 *  - `diffPolicy` / `describeDiff` say what an import would change; `importPolicyFile` saves it in one transaction,
 *    or saves nothing at all.
 *  - An optional `servers:` section registers upstream MCP servers (lib/policy/file-servers.ts): no secrets, only
 *    references to environment variables.
 */
import YAML, { isMap, isScalar, isSeq, LineCounter, Scalar, type Document, type Node as YamlNode } from "yaml";
import { z } from "zod";
import { appendAudit } from "../audit/append";
import { digest } from "../canonical";
import { db } from "../db/client";
import { policyToolOf, policyTools, syncCatalog } from "../tools/catalog";
import { splitPolicies, policyJson } from "./cedar";
import { compilePolicy } from "./compile";
import { formatDuration, LEGACY_DOCUMENT, parseDuration, PolicyDocument, type PostureSpec } from "./document";
import type { CompiledPolicy, Rule } from "./evaluate";
import { FORM_PREFIX } from "./form-rules";
import { RuleInput } from "./save-rule";
import type { PolicyTool } from "./schema";
import { currentDocument, currentRules } from "./store";
import { UpstreamInput, UpstreamInputError } from "../gateway/servers";
import { discoverServer } from "../gateway/discover";
import { dropUpstream } from "../gateway/connections";
import {
  applyServers,
  applySummariesOfDiscovered,
  currentServerSpecs,
  diffServers,
  FileServer,
  serverOut,
  serverSpecsOf,
  summaryProblems,
  toolsOfNewServers,
  upstreamInputOf,
  type NewServerTools,
  type ServerSpec,
  type ServersDiff,
} from "./file-servers";
import { failuresOf, oneLine, runPolicyTests, type RunOptions, type TestOutcome } from "./test-cases";
import type { ToolDef } from "../tools/types";

export const FORMAT = "countersign.policy/v1";

/** A problem in a policy file, at its 1-based line and column in the file when known. */
export type FileProblem = { message: string; line?: number; column?: number };

type Pos = { line: number; column: number };

/** Where things are in the file the policy was read from. */
export type FileLocator = {
  rule(key: string): Pos | undefined;
  test(index: number): Pos | undefined;
  /** A line and column inside `policies` to the line and column in the file. */
  policies(line: number, column: number): Pos | undefined;
  /** Any key of the file by its path, e.g. ["servers", 0, "summaries", "write_file"]. */
  at(path: (string | number)[]): Pos | undefined;
};

/** `servers` is null when the file has no servers section (the registered servers are then left as they are). */
export type PolicyFile = { rules: RuleInput[]; document: PolicyDocument; servers: ServerSpec[] | null; locate: FileLocator };

/** What a policy is for export, diff and import: the active form rules, the document's body and the upstream servers. */
export type PolicyContent = { rules: RuleInput[]; document: PolicyDocument; servers?: ServerSpec[] | null };

// ---------------------------------------------------------------------------------------------------------------
// Money and values

const MONEY_TEXT = /^([A-Z]{3})\s+(-?)(\d{1,13})(?:\.(\d{1,2}))?$/;

function moneyText(minor: string, currency: string): string {
  const negative = minor.startsWith("-");
  const digits = (negative ? minor.slice(1) : minor).padStart(3, "0");
  return `${currency} ${negative ? "-" : ""}${digits.slice(0, -2).replace(/^0+(?=\d)/, "")}.${digits.slice(-2)}`;
}

function moneyMinor(m: RegExpExecArray): string {
  const minor = BigInt(m[3]) * 100n + BigInt((m[4] ?? "").padEnd(2, "0"));
  return `${m[2] === "-" && minor !== 0n ? "-" : ""}${minor}`;
}

const isCents = (field: string) => field.endsWith("_cents");

/** A duration as people say it: hours up to two days (`24h`, `36h`), then days; minutes or seconds when not whole. */
function durationText(sec: number): string {
  if (sec >= 2 * 86400 && sec % 86400 === 0) return `${sec / 86400}d`;
  if (sec >= 3600 && sec % 3600 === 0) return `${sec / 3600}h`;
  return formatDuration(sec);
}

function fileValue(rule: RuleInput, tools: PolicyTool[]): string | number {
  if (rule.currency && isCents(rule.field) && /^-?\d{1,15}$/.test(rule.value)) return moneyText(rule.value, rule.currency);
  const attr = tools.find((t) => t.name === rule.tool)?.resourceShape[rule.field];
  const numeric = /^-?\d{1,15}$/.test(rule.value) && String(Number(rule.value)) === rule.value;
  if (numeric && (attr ? attr.type === "Long" : rule.operator === "gt" || rule.operator === "gte")) return Number(rule.value);
  return rule.value;
}

// ---------------------------------------------------------------------------------------------------------------
// Writing

function sortedDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedDeep);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortedDeep((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

function postureOut(p: PostureSpec): unknown {
  if (typeof p === "string") return p;
  const r = p.requestable;
  return { requestable: { approvers: r.approvers, quorum: r.quorum, deadline: r.deadline, validity: r.validity, justification: r.justification, ...(r.passkey ? { passkey: true } : {}), ...(r.escalate ? { escalate: r.escalate, fallback: r.fallback } : {}), reason: r.reason } };
}

function ruleOut(rule: RuleInput, tools: PolicyTool[]): Record<string, unknown> {
  const out: Record<string, unknown> = {
    key: rule.ruleKey,
    tool: rule.tool,
    description: rule.description,
    field: rule.field,
    operator: rule.operator,
    value: fileValue(rule, tools),
  };
  if (rule.currency && !isCents(rule.field)) out.currency = rule.currency;
  out.effect = rule.effect;
  if (rule.effect === "requestable") {
    out.approvers = rule.approverGroup;
    out.quorum = rule.approvalsRequired;
    out.deadline = durationText(rule.requestDeadlineSec);
    out.validity = durationText(rule.approvalValiditySec);
    out.justification = rule.requireJustification;
    if (rule.requirePasskey) out.passkey = true;
    if (rule.escalateAfterSec && rule.fallbackGroup) {
      out.escalate = durationText(rule.escalateAfterSec);
      out.fallback = rule.fallbackGroup;
    }
  }
  out.reason = rule.reason;
  out.active = rule.active;
  return out;
}

function testOut(t: PolicyDocument["tests"][number]): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: t.name,
    call: { tool: t.call.tool, arguments: sortedDeep(t.call.arguments) },
    principal: { agent: t.principal.agent, user: t.principal.user, role: t.principal.role, groups: t.principal.groups },
  };
  if (t.resource) out.resource = { type: t.resource.type, id: t.resource.id, properties: sortedDeep(t.resource.properties) };
  if (Object.keys(t.history).length > 0) out.history = Object.fromEntries(Object.keys(t.history).sort().map((k) => [k, { total: t.history[k].total, count: t.history[k].count }]));
  if (t.at) out.at = t.at;
  out.expect = t.expect;
  if (t.by) out.by = t.by;
  return out;
}

const sortedRecord = <T>(r: Record<string, T>, f: (v: T) => unknown) => Object.fromEntries(Object.keys(r).sort().map((k) => [k, f(r[k])]));

/** The policy as a file: stable, so the same policy always gives the same bytes. */
export function formatPolicyFile(content: PolicyContent, tools: PolicyTool[] = policyTools()): string {
  const d = content.document;
  const rules = [...content.rules].filter((r) => r.active).sort((a, b) => (a.ruleKey < b.ruleKey ? -1 : a.ruleKey > b.ruleKey ? 1 : 0));
  const doc = new YAML.Document({
    format: FORMAT,
    ...(content.servers?.length ? { servers: [...content.servers].sort((a, b) => (a.name < b.name ? -1 : 1)).map(serverOut) } : {}),
    rules: rules.map((r) => ruleOut(r, tools)),
    policies: d.policies,
    defaults: { posture: postureOut(d.defaults.posture), tools: sortedRecord(d.defaults.tools, postureOut), agents: sortedRecord(d.defaults.agents, postureOut) },
    history: d.history.map((h) => ({ name: h.name, tool: h.tool, window: h.window, per: h.per })),
    time_zones: [...d.timeZones],
    tests: d.tests.map(testOut),
  });
  doc.commentBefore =
    " Countersign policy: the form rules, the Cedar policies (requirements of a requestable denial as annotations),\n" +
    " the default postures, the history windows and time zones policy reads, and test cases.\n" +
    " Check it with `npm run policy:test -- <this file>`; import it in the admin console.";
  const policies = doc.get("policies", true);
  if (isScalar(policies) && d.policies.length > 0) policies.type = Scalar.BLOCK_LITERAL;
  return doc.toString({ lineWidth: 0, minContentWidth: 0 });
}

/** The current policy (active form rules and the current document) as a file. */
export async function exportPolicyFile(): Promise<string> {
  const [rules, document, servers] = await Promise.all([currentRules(), currentDocument(), currentServerSpecs()]);
  return formatPolicyFile({ rules: rules.map(storedRule), document: document.body, servers });
}

/** A stored rule row as rule input (the fields a version is made of). */
export function storedRule(row: Rule & { description?: string; active?: boolean }): RuleInput {
  return {
    ruleKey: row.ruleKey,
    tool: row.tool,
    description: row.description ?? "",
    field: row.field,
    operator: row.operator as RuleInput["operator"],
    value: row.value,
    currency: row.currency ?? null,
    effect: row.effect as RuleInput["effect"],
    approverGroup: row.approverGroup,
    approvalsRequired: row.approvalsRequired,
    requestDeadlineSec: row.requestDeadlineSec,
    approvalValiditySec: row.approvalValiditySec,
    requireJustification: row.requireJustification,
    ...(row.requirePasskey ? { requirePasskey: true } : {}),
    escalateAfterSec: row.escalateAfterSec ?? null,
    fallbackGroup: row.fallbackGroup ?? null,
    reason: row.reason,
    active: row.active ?? true,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Reading

const DurationText = z.string().refine((s) => parseDuration(s) !== null, "a duration such as 30m, 8h or 2d");

const FileRule = z
  .object({
    key: z.string(),
    tool: z.string(),
    description: z.string(),
    field: z.string(),
    operator: z.string(),
    value: z.union([z.string(), z.number()]),
    currency: z.string().optional(),
    effect: z.enum(["requestable", "deny"]),
    approvers: z.string().optional(),
    quorum: z.number().int().optional(),
    deadline: DurationText.optional(),
    validity: DurationText.optional(),
    justification: z.boolean().optional(),
    passkey: z.boolean().optional(),
    escalate: DurationText.optional(),
    fallback: z.string().optional(),
    reason: z.string(),
    active: z.boolean().default(true),
  })
  .strict();
type FileRule = z.infer<typeof FileRule>;

const FileShape = z
  .object({
    format: z.literal(FORMAT, `the first key is format: ${FORMAT}`),
    servers: z.array(FileServer).optional(),
    rules: z.array(FileRule).default([]),
    policies: z.string().default(""),
    defaults: z.unknown().optional(),
    history: z.unknown().optional(),
    time_zones: z.unknown().optional(),
    tests: z.unknown().optional(),
  })
  .strict();

/** RuleInput's field names as the file spells them. */
const RULE_FIELD: Record<string, string> = {
  ruleKey: "key",
  approverGroup: "approvers",
  approvalsRequired: "quorum",
  requestDeadlineSec: "deadline",
  approvalValiditySec: "validity",
  requireJustification: "justification",
  requirePasskey: "passkey",
  escalateAfterSec: "escalate",
  fallbackGroup: "fallback",
  currency: "value",
};

type Path = (string | number)[];

function ruleInputOf(r: FileRule): { rule?: z.input<typeof RuleInput>; problem?: { path: Path; message: string } } {
  let value: string;
  let currency: string | null = r.currency ?? null;
  if (typeof r.value === "number") {
    if (!Number.isSafeInteger(r.value)) return { problem: { path: ["value"], message: "a whole number (money as minor units, or as money: EUR 150.00)" } };
    value = String(r.value);
  } else {
    const m = isCents(r.field) ? MONEY_TEXT.exec(r.value.trim()) : null;
    if (m) {
      if (r.currency) return { problem: { path: ["currency"], message: "the value already names its currency" } };
      value = moneyMinor(m);
      currency = m[1];
    } else {
      if (isCents(r.field) && /^[A-Za-z]{3}\s/.test(r.value.trim())) return { problem: { path: ["value"], message: "money is written as a currency code and an amount with at most two decimals, e.g. EUR 150.00" } };
      value = r.value;
    }
  }
  if (r.effect === "deny") {
    const extra = (["approvers", "quorum", "deadline", "validity", "justification", "passkey", "escalate", "fallback"] as const).find((k) => r[k] !== undefined);
    if (extra) return { problem: { path: [extra], message: `a deny rule cannot be approved, so it has no ${extra}` } };
  }
  const requestable = r.effect === "requestable";
  return {
    rule: {
      ruleKey: r.key,
      tool: r.tool,
      description: r.description,
      field: r.field,
      operator: r.operator as RuleInput["operator"],
      value,
      currency,
      effect: r.effect,
      approverGroup: requestable ? (r.approvers ?? null) : null,
      approvalsRequired: requestable ? (r.quorum ?? 1) : 0,
      requestDeadlineSec: requestable ? parseDuration(r.deadline ?? "24h")! : 0,
      approvalValiditySec: requestable ? parseDuration(r.validity ?? "1h")! : 0,
      requireJustification: requestable ? (r.justification ?? false) : false,
      ...(requestable && r.passkey ? { requirePasskey: true } : {}),
      escalateAfterSec: requestable && r.escalate !== undefined ? parseDuration(r.escalate)! : null,
      fallbackGroup: requestable ? (r.fallback ?? null) : null,
      reason: r.reason,
      active: r.active,
    },
  };
}

function pathText(path: Path): string {
  return path.length === 0 ? "file" : path.map((p) => (typeof p === "number" ? `[${p}]` : p)).join(".").replace(/\.\[/g, "[");
}

/** The node at `path` (or its deepest existing ancestor) and, when the last step is a map key, that key's node. */
function nodeAt(doc: Document, path: Path, atKey = false): YamlNode | null {
  let node: unknown = doc.contents;
  let found: YamlNode | null = (node as YamlNode) ?? null;
  for (const [i, step] of path.entries()) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(step));
      if (!pair) break;
      if (atKey && i === path.length - 1 && pair.key) return pair.key as YamlNode;
      node = pair.value;
    } else if (isSeq(node) && typeof step === "number") {
      node = node.items[step];
    } else {
      break;
    }
    if (!node) break;
    found = node as YamlNode;
  }
  return found;
}

function posOf(lc: LineCounter, node: YamlNode | null): Pos | undefined {
  if (!node?.range) return undefined;
  const p = lc.linePos(node.range[0]);
  return { line: p.line, column: p.col };
}

function at(problem: { message: string }, pos: Pos | undefined): FileProblem {
  return pos ? { message: problem.message, line: pos.line, column: pos.column } : { message: problem.message };
}

function policiesLocator(text: string, lc: LineCounter, node: YamlNode | null): FileLocator["policies"] {
  if (!isScalar(node) || !node.range) return () => undefined;
  const start = lc.linePos(node.range[0]);
  if (node.type === Scalar.BLOCK_LITERAL) {
    // Each line of a literal block is one line of its content, indented by the block's indentation.
    const lines = text.split(/\r?\n/);
    const body = lines.slice(start.line).find((l) => l.trim() !== "");
    const indent = body ? body.length - body.trimStart().length : 0;
    return (line, column) => ({ line: start.line + line, column: indent + column });
  }
  // Another scalar style: the content's lines are not the file's; point at the value.
  return () => ({ line: start.line, column: start.col });
}

export type ParseResult = { ok: true; file: PolicyFile } | { ok: false; problems: FileProblem[] };

/** Reads a policy file: YAML syntax and the file's schema, each problem at its line and column. Compiles nothing. */
export function parsePolicyFile(text: string): ParseResult {
  const lc = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true, strict: true });
  const yamlErrors = [...doc.errors];
  if (yamlErrors.length > 0) {
    return {
      ok: false,
      problems: yamlErrors.map((e) => {
        const p = e.linePos?.[0] ?? lc.linePos(e.pos[0]);
        // prettyErrors: false keeps the message to one line without its position, which is given apart.
        return { message: e.message, line: p.line, column: p.col };
      }),
    };
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return { ok: false, problems: [{ message: (e as Error).message }] };
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { ok: false, problems: [{ message: `a policy file is a YAML map starting with format: ${FORMAT}`, line: 1, column: 1 }] };
  // An empty key (`tests:`) means the same as no key.
  const top = Object.fromEntries(Object.entries(raw as Record<string, unknown>).filter(([, v]) => v !== null));

  const problems: FileProblem[] = [];
  const issue = (path: Path, message: string, atKey = false) => problems.push(at({ message: `${pathText(path)}: ${message}` }, posOf(lc, nodeAt(doc, path, atKey))));
  const zodIssues = (error: z.ZodError, prefix: Path, rename: (p: Path) => Path = (p) => p) => {
    for (const i of error.issues) {
      const path = [...prefix, ...rename(i.path.map((p) => (typeof p === "symbol" ? String(p) : p)) as Path)];
      if (i.code === "unrecognized_keys") for (const k of i.keys) issue([...path, k], `there is no key ${k} here`, true);
      else issue(path, i.message);
    }
  };

  const shape = FileShape.safeParse(top);
  if (!shape.success) {
    zodIssues(shape.error, []);
    return { ok: false, problems };
  }
  const f = shape.data;

  const rules: RuleInput[] = [];
  const keys = new Map<string, number>();
  f.rules.forEach((r, i) => {
    const converted = ruleInputOf(r);
    if (converted.problem) return issue(["rules", i, ...converted.problem.path], converted.problem.message);
    const parsed = RuleInput.safeParse(converted.rule);
    if (!parsed.success) return zodIssues(parsed.error, ["rules", i], (p) => (typeof p[0] === "string" && RULE_FIELD[p[0]] ? [RULE_FIELD[p[0]], ...p.slice(1)] : p));
    if (keys.has(r.key)) return issue(["rules", i, "key"], `two rules have the key ${r.key}`);
    keys.set(r.key, i);
    rules.push(parsed.data);
  });

  let servers: ServerSpec[] | null = null;
  if (f.servers) {
    const { specs, problems: found } = serverSpecsOf(f.servers);
    for (const p of found) issue(["servers", ...p.path], p.message, p.path.length === 3 && (p.path[1] === "env"));
    for (const spec of specs) {
      const i = f.servers.findIndex((s) => s.name === spec.name);
      const checked = UpstreamInput.safeParse(upstreamInputOf(spec));
      if (!checked.success) zodIssues(checked.error, ["servers", i], (p) => (p[0] === "pathArgs" ? ["path_arguments", ...p.slice(1)] : p));
    }
    servers = specs;
  }

  const body = PolicyDocument.safeParse({ policies: f.policies, defaults: f.defaults, history: f.history, timeZones: f.time_zones, tests: f.tests });
  if (!body.success) zodIssues(body.error, [], (p) => (p[0] === "timeZones" ? ["time_zones", ...p.slice(1)] : p));
  if (problems.length > 0 || !body.success) return { ok: false, problems };

  const locate: FileLocator = {
    rule: (key) => (keys.has(key) ? posOf(lc, nodeAt(doc, ["rules", keys.get(key)!])) : undefined),
    test: (index) => posOf(lc, nodeAt(doc, ["tests", index])),
    policies: policiesLocator(text, lc, doc.get("policies", true) as YamlNode | null),
    at: (path) => posOf(lc, nodeAt(doc, path)),
  };
  return { ok: true, file: { rules: rules.filter((r) => r.active), document: body.data, servers, locate } };
}

// ---------------------------------------------------------------------------------------------------------------
// Checking

export type CheckResult =
  | { ok: true; policy: CompiledPolicy; outcomes: TestOutcome[] }
  | { ok: false; problems: FileProblem[]; outcomes: TestOutcome[] };

/** The file's rules as the engine's rules (not stored: no id or version yet). */
function draftRules(rules: RuleInput[]): Rule[] {
  return rules.map((r) => ({ ...r, id: `file:${r.ruleKey}`, version: 0 }));
}

/** Compiles the file strictly against `tools`, with every problem at its place in the file. */
export function compilePolicyFile(file: PolicyFile, tools: PolicyTool[]): { ok: true; policy: CompiledPolicy } | { ok: false; problems: FileProblem[] } {
  const r = compilePolicy({ rules: draftRules(file.rules), document: { id: "file", version: 0, body: file.document }, tools }, { strict: true });
  if (r.ok) return r;
  return {
    ok: false,
    problems: r.problems.map((p) => {
      if (p.policyId?.startsWith(FORM_PREFIX)) return at(p, file.locate.rule(p.policyId.slice(FORM_PREFIX.length)));
      if (p.line !== undefined) return at({ message: `policies: ${p.message}` }, file.locate.policies(p.line, p.column ?? 1));
      return { message: p.message };
    }),
  };
}

/** Strict compilation and then every test case; ok only when it compiles and all cases pass. */
export async function checkPolicyFile(file: PolicyFile, tools: PolicyTool[], opts: RunOptions = {}): Promise<CheckResult> {
  const compiled = compilePolicyFile(file, tools);
  if (!compiled.ok) return { ok: false, problems: compiled.problems, outcomes: [] };
  const outcomes = await runPolicyTests(compiled.policy, file.document.tests, opts);
  const failures = failuresOf(outcomes);
  if (failures.length > 0) return { ok: false, problems: failures.map((f) => at(f, file.locate.test(f.index))), outcomes };
  return { ok: true, policy: compiled.policy, outcomes };
}

// ---------------------------------------------------------------------------------------------------------------
// Diff

export type PolicyDiff = {
  rules: { added: string[]; changed: { key: string; fields: string[] }[]; removed: string[] };
  policies: { added: string[]; changed: string[]; removed: string[] };
  defaults: boolean;
  history: boolean;
  timeZones: boolean;
  tests: { added: string[]; changed: string[]; removed: string[] };
  /** The document's text differs (also when only comments or layout of `policies` changed). */
  document: boolean;
  /** Upstream servers the import registers or changes (a server the file does not name is left as it is). */
  servers: ServersDiff;
  unchanged: boolean;
};

/** The fields that make a rule what it is, as the file names them; approval settings only for a requestable rule. */
function ruleFields(r: RuleInput): Record<string, unknown> {
  const requestable = r.effect === "requestable";
  return {
    tool: r.tool,
    description: r.description,
    field: r.field,
    operator: r.operator,
    value: r.value,
    currency: r.currency ?? null,
    effect: r.effect,
    approvers: requestable ? r.approverGroup : null,
    quorum: requestable ? r.approvalsRequired : 0,
    deadline: requestable ? r.requestDeadlineSec : 0,
    validity: requestable ? r.approvalValiditySec : 0,
    justification: requestable ? r.requireJustification : false,
    passkey: requestable ? (r.requirePasskey ?? false) : false,
    escalate: requestable ? (r.escalateAfterSec ?? null) : null,
    fallback: requestable ? (r.fallbackGroup ?? null) : null,
    reason: r.reason,
  };
}

/** The policies of a Cedar text by @id (each one's own text); an unreadable text is one entry. */
function policiesById(text: string): Map<string, string> {
  const out = new Map<string, string>();
  if (!text.trim()) return out;
  const split = splitPolicies(text);
  if (!split.ok) return out.set("(unreadable policy text)", text);
  split.policies.forEach((p, i) => {
    let id: string | undefined;
    try {
      const v = policyJson(p.text).annotations?.id;
      id = v === null || v === undefined ? undefined : String(v);
    } catch {
      id = undefined;
    }
    // Its own text, from its first character to its `;` (splitPolicies): blank lines around it are layout.
    out.set(id ?? `(policy ${i + 1} without @id)`, p.text);
  });
  return out;
}

function keyedDiff<T>(a: Map<string, T>, b: Map<string, T>, same: (x: T, y: T) => boolean) {
  return {
    added: [...b.keys()].filter((k) => !a.has(k)),
    changed: [...b.keys()].filter((k) => a.has(k) && !same(a.get(k)!, b.get(k)!)),
    removed: [...a.keys()].filter((k) => !b.has(k)),
  };
}

export function diffPolicy(current: PolicyContent, incoming: PolicyContent): PolicyDiff {
  const active = (rs: RuleInput[]) => new Map(rs.filter((r) => r.active).map((r) => [r.ruleKey, ruleFields(r)]));
  const a = active(current.rules);
  const b = active(incoming.rules);
  const rules = {
    added: [...b.keys()].filter((k) => !a.has(k)).sort(),
    changed: [...b.keys()]
      .filter((k) => a.has(k))
      .sort()
      .map((key) => ({ key, fields: Object.keys(b.get(key)!).filter((f) => digest(a.get(key)![f]) !== digest(b.get(key)![f])) }))
      .filter((c) => c.fields.length > 0),
    removed: [...a.keys()].filter((k) => !b.has(k)).sort(),
  };
  const cd = current.document;
  const id = incoming.document;
  const policies = keyedDiff(policiesById(cd.policies), policiesById(id.policies), (x, y) => x === y);
  const testsOf = (d: PolicyDocument) => new Map(d.tests.map((t) => [t.name, digest(t)]));
  const tests = keyedDiff(testsOf(cd), testsOf(id), (x, y) => x === y);
  const document = digest(cd) !== digest(id);
  const diff: PolicyDiff = {
    rules,
    policies,
    defaults: digest(cd.defaults) !== digest(id.defaults),
    history: digest(cd.history) !== digest(id.history),
    timeZones: digest(cd.timeZones) !== digest(id.timeZones),
    tests,
    document,
    servers: incoming.servers ? diffServers(current.servers ?? [], incoming.servers) : { added: [], changed: [] },
    unchanged: false,
  };
  diff.unchanged = !document && rules.added.length + rules.changed.length + rules.removed.length === 0 && diff.servers.added.length + diff.servers.changed.length === 0;
  return diff;
}

/** The diff in words, one change a line, for the command line. */
export function describeDiff(diff: PolicyDiff): string {
  if (diff.unchanged) return "No changes.";
  const lines: string[] = [];
  for (const k of diff.servers.added) lines.push(`+ server ${k}`);
  for (const c of diff.servers.changed) lines.push(`~ server ${c.name} (${c.fields.join(", ")})`);
  for (const k of diff.rules.added) lines.push(`+ rule ${k}`);
  for (const c of diff.rules.changed) lines.push(`~ rule ${c.key} (${c.fields.join(", ")})`);
  for (const k of diff.rules.removed) lines.push(`- rule ${k} (retired)`);
  for (const k of diff.policies.added) lines.push(`+ policy ${oneLine(k, 80)}`);
  for (const k of diff.policies.changed) lines.push(`~ policy ${oneLine(k, 80)}`);
  for (const k of diff.policies.removed) lines.push(`- policy ${oneLine(k, 80)}`);
  if (diff.defaults) lines.push("~ defaults");
  if (diff.history) lines.push("~ history windows");
  if (diff.timeZones) lines.push("~ time zones");
  for (const k of diff.tests.added) lines.push(`+ test "${oneLine(k, 100)}"`);
  for (const k of diff.tests.changed) lines.push(`~ test "${oneLine(k, 100)}"`);
  for (const k of diff.tests.removed) lines.push(`- test "${oneLine(k, 100)}"`);
  const policyChanges = diff.policies.added.length + diff.policies.changed.length + diff.policies.removed.length;
  if (diff.document && policyChanges === 0 && !diff.defaults && !diff.history && !diff.timeZones && diff.tests.added.length + diff.tests.changed.length + diff.tests.removed.length === 0) {
    lines.push("~ policies (comments or layout)");
  }
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------------------------
// Import

export type ImportedVersions = {
  rules: { ruleKey: string; version: number; previous: number | null; active: boolean }[];
  document: { version: number; previous: number | null } | null;
};

export type ImportResult =
  | { ok: true; unchanged: boolean; diff: PolicyDiff; versions: ImportedVersions; discovery?: string[] }
  | { ok: false; problems: FileProblem[] };

/**
 * Imports a policy file as the new policy: the whole incoming policy is compiled strictly and its test cases run
 * first; then, in one transaction, each new or changed rule key gets its next version, each rule the file no longer
 * has is retired (a new inactive version), the document gets a new version when it changed, and one audit event
 * `policy.imported` names the versions. On any problem, found early or late, nothing is saved.
 */
export async function importPolicyFile(text: string, actorUserId: string, now: Date): Promise<ImportResult> {
  const parsed = parsePolicyFile(text);
  if (!parsed.ok) return parsed;
  const { file } = parsed;
  const catalog = await catalogOf(file);
  const checked = await checkAgainst(file, catalog);
  if (!checked.ok) return checked;
  const incoming: PolicyContent = { rules: file.rules, document: file.document, servers: file.servers };

  const result: ImportResult = await db().$transaction(async (tx): Promise<ImportResult> => {
    // The same locks as saving one rule (per key) or the document: an import and those saves serialize.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(7240004, 1)`;
    const locked = new Set<string>();
    let active;
    for (;;) {
      active = await tx.policyRule.findMany({ where: { active: true }, orderBy: { ruleKey: "asc" } });
      const keys = [...new Set([...incoming.rules.map((r) => r.ruleKey), ...active.map((r) => r.ruleKey)])].filter((k) => !locked.has(k)).sort();
      if (keys.length === 0) break;
      for (const k of keys) {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(7240003, hashtext(${k}))`;
        locked.add(k);
      }
    }
    const head = await tx.policyDocument.findFirst({ orderBy: { version: "desc" } });
    // With no document stored yet, the current one is the legacy default. Read nothing outside the transaction:
    // on the embedded database a transaction holds the whole database, so an outside read would wait for it.
    const currentBody = head ? PolicyDocument.parse(head.body) : LEGACY_DOCUMENT;
    const servers = file.servers ? await currentServerSpecs(tx) : [];
    const diff = diffPolicy({ rules: active.map(storedRule), document: currentBody, servers }, incoming);
    const versions: ImportedVersions = { rules: [], document: null };
    if (diff.unchanged) return { ok: true as const, unchanged: true, diff, versions };

    const nextVersion = async (ruleKey: string) => (await tx.policyRule.findFirst({ where: { ruleKey }, orderBy: { version: "desc" }, select: { version: true } }))?.version ?? 0;
    for (const key of [...diff.rules.added, ...diff.rules.changed.map((c) => c.key)].sort()) {
      const rule = incoming.rules.find((r) => r.ruleKey === key)!;
      const last = await nextVersion(key);
      await tx.policyRule.updateMany({ where: { ruleKey: key, active: true }, data: { active: false } });
      const created = await tx.policyRule.create({ data: { ...rule, active: true, version: last + 1, createdBy: actorUserId, createdAt: now } });
      versions.rules.push({ ruleKey: key, version: created.version, previous: last || null, active: true });
    }
    for (const key of diff.rules.removed) {
      const row = active.find((r) => r.ruleKey === key)!;
      const last = await nextVersion(key);
      await tx.policyRule.updateMany({ where: { ruleKey: key, active: true }, data: { active: false } });
      const { id: _id, version: _v, createdAt: _c, createdBy: _b, ...fields } = row;
      void _id, _v, _c, _b;
      const created = await tx.policyRule.create({ data: { ...fields, active: false, version: last + 1, createdBy: actorUserId, createdAt: now } });
      versions.rules.push({ ruleKey: key, version: created.version, previous: last, active: false });
    }
    versions.rules.sort((x, y) => (x.ruleKey < y.ruleKey ? -1 : 1));
    if (diff.document) {
      const version = (head?.version ?? 0) + 1;
      await tx.policyDocument.create({
        data: { version, body: incoming.document as object, digest: digest(incoming.document), note: "Imported from a policy file.", createdBy: actorUserId, createdAt: now },
      });
      versions.document = { version, previous: head?.version ?? null };
    }
    const touched = file.servers ? await applyServers(tx, file.servers, diff.servers, `user:${actorUserId}`, now) : [];
    await appendAudit(tx, {
      type: "policy.imported",
      actor: `user:${actorUserId}`,
      data: { rules: versions.rules, document: versions.document, servers: touched, digest: digest(text) },
      at: now,
    });
    return { ok: true as const, unchanged: false, diff, versions };
  }).catch((e) => {
    // A server the file cannot register as written (e.g. ${stored} with nothing stored): refused, nothing saved.
    if (e instanceof UpstreamInputError) return { ok: false as const, problems: [{ message: e.message }] };
    throw e;
  });
  if (!result.ok || result.unchanged) return result;
  return { ...result, discovery: await rediscoverImported(result.diff.servers, file.servers ?? [], `user:${actorUserId}`, now) };
}

type FileCatalog = { tools: PolicyTool[]; defs: Map<string, ToolDef>; news: NewServerTools | null };

/**
 * What a file is checked against: today's catalog, and the tools of the servers the file registers (listed from
 * the servers themselves), so one import registers a server and the policies on its tools.
 */
async function catalogOf(file: PolicyFile): Promise<FileCatalog> {
  await syncCatalog();
  if (!file.servers?.length) return { tools: policyTools(), defs: new Map(), news: null };
  const registered = new Set((await db().upstreamServer.findMany({ select: { name: true } })).map((s) => s.name));
  const news = await toolsOfNewServers(file.servers, registered);
  const defs = new Map(news.defs.map((d) => [d.name, d]));
  return { tools: [...policyTools().filter((t) => !defs.has(t.name)), ...news.defs.map(policyToolOf)], defs, news };
}

/** The file compiled strictly, its test cases run and its summaries checked against `catalog`; every problem at its place. */
async function checkAgainst(file: PolicyFile, catalog: FileCatalog): Promise<{ ok: true } | { ok: false; problems: FileProblem[] }> {
  const checked = await checkPolicyFile(file, catalog.tools, { mapResource: true, tools: catalog.defs });
  // A server whose tools could not be listed explains a policy or case naming them: said beside the problems.
  const unlisted = (catalog.news?.unlisted ?? []).map((u) => at({ message: `servers[${u.server}]: ${u.message}` }, file.locate.at(["servers", u.server])));
  if (!checked.ok) return { ok: false, problems: [...checked.problems, ...unlisted] };
  if (!file.servers) return { ok: true };
  const summaries = (await summaryProblems(file.servers, catalog.news?.listed)).map((p) =>
    at({ message: `servers[${p.server}].summaries.${p.tool}: ${p.message}` }, file.locate.at(["servers", p.server, "summaries", p.tool])),
  );
  return summaries.length > 0 ? { ok: false, problems: [...summaries, ...unlisted] } : { ok: true };
}

/**
 * After an import that registered or changed servers: their open connections are closed (the next call uses the
 * new settings) and their tools discovered. A server that cannot be reached now is reported; the import stands.
 */
async function rediscoverImported(diff: ServersDiff, specs: ServerSpec[], actor: string, now: Date): Promise<string[]> {
  const notes: string[] = [];
  for (const name of [...diff.added, ...diff.changed.map((c) => c.name)].sort()) {
    const row = await db().upstreamServer.findUnique({ where: { name }, select: { id: true, enabled: true } });
    if (!row) continue;
    await dropUpstream(row.id);
    if (!row.enabled) continue;
    try {
      const r = await discoverServer(name, now);
      // A server's first discovery found the tools its summaries are for.
      if (diff.added.includes(name)) await applySummariesOfDiscovered(specs.find((s) => s.name === name)!, actor, now);
      notes.push(`${name}: ${r.added.length} new, ${r.changed.length} changed, ${r.removed.length} removed, ${r.unchanged.length} unchanged tools`);
    } catch (e) {
      notes.push(`${name}: not discovered (${(e as Error).constructor.name === "Error" ? "the server could not be reached" : (e as Error).message})`);
    }
  }
  return notes;
}

/** What importing `text` would change (nothing is saved), or its problems with line and column. */
export async function previewPolicyFile(text: string): Promise<{ ok: true; diff: PolicyDiff } | { ok: false; problems: FileProblem[] }> {
  const parsed = parsePolicyFile(text);
  if (!parsed.ok) return parsed;
  const checked = await checkAgainst(parsed.file, await catalogOf(parsed.file));
  if (!checked.ok) return checked;
  const [rules, document, servers] = await Promise.all([currentRules(), currentDocument(), parsed.file.servers ? currentServerSpecs() : Promise.resolve([])]);
  return { ok: true, diff: diffPolicy({ rules: rules.map(storedRule), document: document.body, servers }, parsed.file) };
}
