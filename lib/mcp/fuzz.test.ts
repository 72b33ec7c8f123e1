/**
 * Property-based fuzzing of the MCP endpoint (app/mcp/route.ts in process): valid requests of every kind the
 * endpoint serves, mutated in their JSON (wrong types, huge and deep values, unicode, missing and extra fields),
 * in their raw text (duplicate keys, invalid JSON, batches, stray bytes), in their headers (content type, accept,
 * protocol revision, routing headers, session, origin) and in their credentials (none, malformed, another
 * agent's) and MRTR state (tampered, another agent's, replayed). For every case:
 *  - never a 5xx, never an internal error (-32603 or the "whether the tool ran is unknown" tool error);
 *  - nothing in the body that belongs to the server's insides: stack frames, absolute paths, internal classes;
 *  - a refused request leaves every table's row count and the sandbox folder as they were.
 *
 * FUZZ_RUNS sets the number of cases (default 300); FUZZ_SEED replays a run (fast-check prints the seed and the
 * path of a failing case). `npm run fuzz` runs 10,000.
 */
import fs from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DELETE, GET, POST } from "../../app/mcp/route";
import { db } from "../db/client";
import { sandboxDir } from "../tools/delete-path";
import { resetDb } from "../../tests/support/db";
import { buildRpcRequest } from "./raw-request";
import { OPS_BOT, SUPPORT_BOT, TASKS, TASKS_AND_FORMS, call, rpc } from "./testing";

const RUNS = Math.max(1, Number(process.env.FUZZ_RUNS ?? 300) || 300);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const CASE_TIMEOUT_MS = 15_000;

// ---- what a response must never carry ----------------------------------------------------------------------

/** Stack frames, absolute paths of this machine, and the names and messages of internal error classes. */
const LEAKS: RegExp[] = [
  /(?:\\n|\n)\s*at \S/,
  /\bat (?:async )?[\w.$<>]+ \((?:\/|file:|node:)/,
  /\/work\//,
  /node_modules/,
  /\.(?:ts|js|mjs|cjs):\d+/,
  /Prisma|prisma\.\w+\(/,
  /\b(?:TypeError|ReferenceError|RangeError|SyntaxError|ZodError|SealedRecordError|DriverAdapterError)\b/,
  /Cannot read propert|is not a function|is not iterable|Maximum call stack|Unexpected token|unreachable/,
];

/** The first leak in a response that the request itself did not carry (an echoed argument is not a leak). */
export function leakIn(responseText: string, requestText: string): string | null {
  for (const re of LEAKS) {
    const m = responseText.match(re);
    if (m && !requestText.includes(m[0]) && !requestText.includes(JSON.stringify(m[0]).slice(1, -1))) return m[0];
  }
  return null;
}

const INTERNAL = /whether the tool ran is unknown|Internal error/;

// ---- what a request may change ------------------------------------------------------------------------------

let countSql = "";

async function tableCounts(): Promise<Record<string, number>> {
  if (!countSql) {
    const tables = await db().$queryRaw<{ tablename: string }[]>`
      SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY tablename`;
    countSql = tables.map((t) => `SELECT '${t.tablename}' AS t, count(*)::int AS n FROM "${t.tablename}"`).join(" UNION ALL ");
  }
  const rows = await db().$queryRawUnsafe<{ t: string; n: number }[]>(countSql);
  return Object.fromEntries(rows.map((r) => [r.t, Number(r.n)]));
}

function sandboxListing(): string[] {
  const root = sandboxDir();
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > 8) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const rel = path.relative(root, path.join(dir, e.name));
      out.push(rel);
      if (e.isDirectory()) walk(path.join(dir, e.name), depth + 1);
    }
  };
  if (fs.existsSync(root)) walk(root, 0);
  return out.sort();
}

type Snapshot = { counts: Record<string, number>; sandbox: string[] };
const snapshot = async (): Promise<Snapshot> => ({ counts: await tableCounts(), sandbox: sandboxListing() });

// ---- the response, classified -------------------------------------------------------------------------------

type Sent = { httpMethod: "POST" | "GET" | "DELETE"; headers: Record<string, string>; body?: string | Uint8Array; rpcMethod: string };
type Got = { status: number; text: string; body: any };

function parseBody(text: string, contentType: string): any {
  if (!text) return null;
  try {
    if (!contentType.includes("text/event-stream")) return JSON.parse(text);
    const data = text
      .split(/\r?\n\r?\n/)
      .map((e) => e.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n"))
      .filter(Boolean)
      .map((d) => JSON.parse(d));
    return data.reverse().find((m) => "result" in m || "error" in m) ?? data[0] ?? null;
  } catch {
    return undefined;
  }
}

/**
 * Whether the server refused the request, read from the response alone. A created task, a tool that ran (or may
 * have), an accepted tasks/update or tasks/cancel, a declined MRTR question (its state is spent): not refused.
 */
export function refusedByResponse(sent: Sent, got: Got): boolean {
  if (got.status >= 400 || !got.body || typeof got.body !== "object") return true;
  if (Array.isArray(got.body)) return got.body.every((m) => m && "error" in m);
  if ("error" in got.body) return true;
  const result = got.body.result;
  if (!result || typeof result !== "object") return true;
  switch (sent.rpcMethod) {
    case "tools/call": {
      if (result.resultType === "task") return false;
      if (result.resultType === "input_required") return true;
      if (!result.isError) return false;
      const text = (result.content ?? []).map((c: { text?: string }) => c.text ?? "").join("\n");
      if (/declined|may have run|did not complete/.test(text)) return false;
      return true;
    }
    case "tasks/update":
    case "tasks/cancel":
      return false;
    default:
      return true;
  }
}

async function send(sent: Sent): Promise<Got> {
  const handler = { POST, GET, DELETE }[sent.httpMethod];
  const init: RequestInit = { method: sent.httpMethod, headers: sent.headers };
  if (sent.httpMethod !== "GET" && sent.body !== undefined) init.body = sent.body as BodyInit;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no complete response within ${CASE_TIMEOUT_MS} ms`)), CASE_TIMEOUT_MS);
  });
  try {
    const res = await Promise.race([handler(new Request("http://localhost/mcp", init)), timeout]);
    const text = await Promise.race([res.text(), timeout]);
    return { status: res.status, text, body: parseBody(text, res.headers.get("content-type") ?? "") };
  } finally {
    clearTimeout(timer);
  }
}

// ---- the valid requests the mutations start from ------------------------------------------------------------

type Seed = { label: string; method: string; params: Record<string, unknown>; token?: string; caps?: object; legacy?: boolean };

const ids = { task: "", opsTask: "", state: "", opsState: "" };

function seeds(): Seed[] {
  const answer = { action: "accept", content: { justification: "Hotfix for the checkout outage INC-77", ticket: "INC-77" } };
  const deploy = { service: "checkout-api", environment: "production", version: "1.4.2" };
  return [
    { label: "initialize (2025-11-25)", method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } }, legacy: true },
    { label: "server/discover", method: "server/discover", params: {} },
    { label: "tools/list", method: "tools/list", params: {} },
    { label: "tools/list (2025-11-25)", method: "tools/list", params: {}, legacy: true },
    { label: "gated refund", method: "tools/call", params: { name: "issue_refund", arguments: { order_id: "O-2289" } } },
    { label: "small refund", method: "tools/call", params: { name: "issue_refund", arguments: { order_id: "O-1021", amount: 5 } } },
    { label: "refund with reason", method: "tools/call", params: { name: "issue_refund", arguments: { order_id: "O-1145", amount: 12.5, reason: "damaged" } } },
    { label: "wire transfer (denied for support)", method: "tools/call", params: { name: "wire_transfer", arguments: { to: "acct-991", amount: 10 } } },
    { label: "wire transfer (ops)", method: "tools/call", params: { name: "wire_transfer", arguments: { to: "acct-991", amount: 25000 } }, token: OPS_BOT },
    { label: "deploy staging (ops)", method: "tools/call", params: { name: "deploy_service", arguments: { ...deploy, environment: "staging" } }, token: OPS_BOT },
    { label: "deploy production (ops, forms)", method: "tools/call", params: { name: "deploy_service", arguments: deploy }, token: OPS_BOT, caps: TASKS_AND_FORMS },
    { label: "delete path", method: "tools/call", params: { name: "delete_path", arguments: { path: "tmp/scratch.txt" } }, token: OPS_BOT },
    { label: "delete path (prod)", method: "tools/call", params: { name: "delete_path", arguments: { path: "prod/logs" } }, token: OPS_BOT },
    { label: "request_access", method: "tools/call", params: { name: "request_access", arguments: { tool: "issue_refund", arguments: { order_id: "O-2289" }, justification: "Customer was double charged" } } },
    { label: "get_request_status", method: "tools/call", params: { name: "get_request_status", arguments: { request_id: ids.task } } },
    { label: "answer_request", method: "tools/call", params: { name: "answer_request", arguments: { request_id: ids.task, answers: { ticket: "SUP-4411" } } } },
    { label: "tasks/get", method: "tasks/get", params: { taskId: ids.task } },
    { label: "tasks/get (other agent's task)", method: "tasks/get", params: { taskId: ids.opsTask } },
    { label: "tasks/update", method: "tasks/update", params: { taskId: ids.task, inputResponses: { ticket: { action: "accept", content: { answer: "SUP-4411" } } } } },
    { label: "tasks/cancel", method: "tasks/cancel", params: { taskId: ids.opsTask }, token: OPS_BOT },
    {
      label: "MRTR retry",
      method: "tools/call",
      params: { name: "deploy_service", arguments: deploy, inputResponses: { approval_request: answer }, requestState: ids.opsState },
      token: OPS_BOT,
      caps: TASKS_AND_FORMS,
    },
    {
      label: "MRTR retry with another agent's state",
      method: "tools/call",
      params: { name: "deploy_service", arguments: deploy, inputResponses: { approval_request: answer }, requestState: ids.opsState },
      caps: TASKS_AND_FORMS,
    },
    {
      label: "MRTR decline",
      method: "tools/call",
      params: { name: "deploy_service", arguments: deploy, inputResponses: { approval_request: { action: "decline" } }, requestState: ids.opsState },
      token: OPS_BOT,
      caps: TASKS_AND_FORMS,
    },
  ];
}

// ---- mutations ----------------------------------------------------------------------------------------------

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 40 });

/** Values of every JSON type and a few hostile shapes: huge, deep, odd unicode, lone surrogates. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.constantFrom("", " ", "\u0000", "\u202e\u200b", "💥".repeat(50), "__proto__", "constructor", "../../etc/passwd", "/etc/passwd", "%00", "${jndi:x}", "NaN"),
  fc.constantFrom(null, true, false, 0, -0, -1, 1e308, -1e308, 2 ** 53 + 1, 0.1, 1e-320),
  fc.integer({ min: 1_000, max: 300_000 }).map((n) => "x".repeat(n)),
  fc.integer({ min: 10, max: 5_000 }).map((n) => Object.defineProperty(Array.from({ length: n }, (_, i) => i), fc.toStringMethod, { value: () => `<array of ${n}>` })),
  fc.oneof(fc.integer({ min: 5, max: 60 }), fc.integer({ min: 61, max: 3_000 })).map((depth) => {
    let v: object = { leaf: true };
    for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
    // fast-check prints a counterexample with this instead of recursing through every level.
    Object.defineProperty(v, fc.toStringMethod, { value: () => `<nested ${depth} deep>` });
    return v;
  }),
  fc.dictionary(printable, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
);

type JsonMutation = { kind: "set" | "delete" | "add"; path: number[]; key: string; value: unknown };

const jsonMutation: fc.Arbitrary<JsonMutation> = fc.record({
  kind: fc.constantFrom("set", "set", "delete", "add"),
  path: fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
  key: fc.oneof(printable, fc.constantFrom("__proto__", "constructor", "_meta", "requestState", "inputResponses", "task", "id", "jsonrpc")),
  value: hostileValue,
});

/** Walks `path` (each step picks a child by index) and applies the mutation there; returns the new root. */
export function applyJsonMutation(root: unknown, m: JsonMutation): unknown {
  const clone = root === undefined ? null : JSON.parse(JSON.stringify(root));
  let parent: any = null;
  let at: string | number | null = null;
  let node: any = clone;
  for (const step of m.path) {
    if (node === null || typeof node !== "object") break;
    const keys = Array.isArray(node) ? node.map((_: unknown, i: number) => i) : Object.keys(node);
    if (!keys.length) break;
    parent = node;
    at = keys[step % keys.length];
    node = node[at as never];
  }
  if (m.kind === "add") {
    const target = node !== null && typeof node === "object" ? node : parent;
    if (target === null) return m.value;
    if (Array.isArray(target)) target.push(m.value);
    else Object.defineProperty(target, m.key, { value: m.value, enumerable: true, configurable: true, writable: true });
    return clone;
  }
  if (parent === null) return m.kind === "delete" ? undefined : m.value;
  if (m.kind === "delete") {
    if (Array.isArray(parent)) parent.splice(at as number, 1);
    else delete parent[at as never];
  } else parent[at as never] = m.value;
  return clone;
}

type TextMutation =
  | { kind: "duplicate-key"; key: string; value: unknown }
  | { kind: "truncate"; at: number }
  | { kind: "insert"; at: number; text: string }
  | { kind: "batch"; count: number }
  | { kind: "empty-batch" }
  | { kind: "bom" }
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "empty" }
  | { kind: "replace-state"; how: "flip" | "truncate" | "garbage" | "other-agent" | "unsigned"; at: number };

const textMutation: fc.Arbitrary<TextMutation> = fc.oneof(
  fc.record({ kind: fc.constant("duplicate-key" as const), key: fc.constantFrom("method", "id", "params", "jsonrpc", "name", "arguments", "taskId", "requestState", "_meta"), value: hostileValue }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), text: fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom(",", "}", "{", "]", '"', "\\", "\u0000", "\ud800", ",,")) }),
  fc.record({ kind: fc.constant("batch" as const), count: fc.integer({ min: 1, max: 5 }) }),
  fc.constant({ kind: "empty-batch" as const }),
  fc.constant({ kind: "bom" as const }),
  fc.record({ kind: fc.constant("bytes" as const), bytes: fc.uint8Array({ maxLength: 64 }) }),
  fc.constant({ kind: "empty" as const }),
  fc.record({ kind: fc.constant("replace-state" as const), how: fc.constantFrom("flip", "truncate", "garbage", "other-agent", "unsigned"), at: fc.nat() }),
);

function tamperState(state: string, how: string, at: number): string {
  switch (how) {
    case "flip": {
      const i = at % state.length;
      const c = state[i] === "A" ? "B" : "A";
      return state.slice(0, i) + c + state.slice(i + 1);
    }
    case "truncate":
      return state.slice(0, at % state.length);
    case "garbage":
      return `v1.${Buffer.from(JSON.stringify({ kind: "call", a: "x" })).toString("base64url")}.AAAA`;
    case "other-agent":
      return ids.state;
    default:
      return state.split(".").slice(0, 2).join(".");
  }
}

export function applyTextMutation(body: string, m: TextMutation): string | Uint8Array {
  switch (m.kind) {
    case "duplicate-key":
      return body.startsWith("{") ? `{${JSON.stringify(m.key)}:${JSON.stringify(m.value) ?? "null"},${body.slice(1)}` : body;
    case "truncate":
      return body.slice(0, m.at % Math.max(1, body.length));
    case "insert": {
      const i = m.at % (body.length + 1);
      return body.slice(0, i) + m.text + body.slice(i);
    }
    case "batch":
      return `[${Array.from({ length: m.count }, () => body).join(",")}]`;
    case "empty-batch":
      return "[]";
    case "bom":
      return `\ufeff${body}`;
    case "bytes":
      return m.bytes;
    case "empty":
      return "";
    case "replace-state":
      return body.replace(/"requestState":"([^"]*)"/, (_, s: string) => `"requestState":${JSON.stringify(tamperState(s, m.how, m.at))}`);
  }
}

type HeaderMutation = { name: string; value: string | null };

const headerMutation: fc.Arbitrary<HeaderMutation> = fc.oneof(
  fc.record({
    name: fc.constant("Content-Type"),
    value: fc.constantFrom(null, "text/plain", "application/json; charset=latin1", "application/json;charset=utf-16", "multipart/form-data", "application/x-www-form-urlencoded", "", "application/jsonx"),
  }),
  fc.record({ name: fc.constant("Accept"), value: fc.constantFrom(null, "text/html", "*/*", "application/json", "text/event-stream", "", "application/xml") }),
  fc.record({ name: fc.constant("MCP-Protocol-Version"), value: fc.oneof(fc.constantFrom(null, "2025-06-18", "2025-11-25", "2026-07-28", "2099-01-01", "", "latest"), printable) }),
  fc.record({ name: fc.constant("Mcp-Method"), value: fc.oneof(fc.constantFrom(null, "tools/call", "tools/list", "tasks/get", "initialize"), printable) }),
  fc.record({ name: fc.constant("Mcp-Name"), value: fc.oneof(fc.constant(null), printable) }),
  fc.record({ name: fc.constant("Mcp-Session-Id"), value: fc.oneof(fc.constant("00000000-0000-0000-0000-000000000000"), printable) }),
  fc.record({ name: fc.constant("Origin"), value: fc.constantFrom("https://evil.example", "null", "http://localhost", "http://127.0.0.1:1") }),
  fc.record({ name: fc.constant("Last-Event-ID"), value: printable }),
);

type TokenChoice = "seed" | "none" | "other" | "garbage" | "malformed" | "lowercase" | "padded" | "truncated";
const tokenChoice: fc.Arbitrary<TokenChoice> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<TokenChoice>("seed") },
  { weight: 2, arbitrary: fc.constant<TokenChoice>("other") },
  { weight: 4, arbitrary: fc.constantFrom<TokenChoice>("none", "garbage", "malformed", "lowercase", "padded", "truncated") },
);

function authorization(choice: TokenChoice, token: string): string | null {
  const other = token === OPS_BOT ? SUPPORT_BOT : OPS_BOT;
  switch (choice) {
    case "seed":
      return `Bearer ${token}`;
    case "none":
      return null;
    case "other":
      return `Bearer ${other}`;
    case "garbage":
      return "Bearer cs_agent_000000000000000000000000000000";
    case "malformed":
      return `Basic ${token}`;
    case "lowercase":
      return `bearer ${token}`;
    case "padded":
      return `Bearer  ${token} `;
    case "truncated":
      return `Bearer ${token.slice(0, -1)}`;
  }
}

type Case = {
  seed: number;
  httpMethod: "POST" | "GET" | "DELETE";
  json: JsonMutation[];
  text: TextMutation | null;
  headers: HeaderMutation[];
  token: TokenChoice;
};

const fuzzCase: fc.Arbitrary<Case> = fc.record({
  seed: fc.nat(),
  httpMethod: fc.constantFrom<Case["httpMethod"]>("POST", "POST", "POST", "POST", "POST", "POST", "POST", "POST", "GET", "DELETE"),
  // Most cases change one thing, so that they get past the first check and reach the deeper ones.
  json: fc.oneof({ weight: 3, arbitrary: fc.constant<JsonMutation[]>([]) }, { weight: 5, arbitrary: fc.array(jsonMutation, { minLength: 1, maxLength: 1 }) }, { weight: 2, arbitrary: fc.array(jsonMutation, { maxLength: 3 }) }),
  text: fc.oneof({ weight: 7, arbitrary: fc.constant(null) }, { weight: 3, arbitrary: textMutation }),
  headers: fc.oneof({ weight: 7, arbitrary: fc.constant<HeaderMutation[]>([]) }, { weight: 3, arbitrary: fc.array(headerMutation, { minLength: 1, maxLength: 3 }) }),
  token: tokenChoice,
});

function build(c: Case): Sent & { label: string } {
  const all = seeds();
  const seed = all[c.seed % all.length];
  const token = seed.token ?? SUPPORT_BOT;
  const { headers, body } = buildRpcRequest(seed.method, seed.params, { clientName: "fuzz", token, caps: seed.caps ?? TASKS, legacy: seed.legacy });
  let json: unknown = JSON.parse(body);
  for (const m of c.json) json = applyJsonMutation(json, m);
  const text = JSON.stringify(json) ?? "";
  const finalBody = c.text ? applyTextMutation(text, c.text) : text;
  delete headers.Authorization;
  const auth = authorization(c.token, token);
  if (auth) headers.Authorization = auth;
  for (const h of c.headers) {
    for (const k of Object.keys(headers)) if (k.toLowerCase() === h.name.toLowerCase()) delete headers[k];
    if (h.value !== null) headers[h.name] = h.value;
  }
  return { label: seed.label, httpMethod: c.httpMethod, headers, body: finalBody, rpcMethod: seed.method };
}

function describeSent(s: Sent & { label: string }): string {
  const body = typeof s.body === "string" ? s.body : s.body ? `<${s.body.length} bytes>` : "";
  return `${s.label}: ${s.httpMethod} ${JSON.stringify(s.headers)} ${body.length > 600 ? `${body.slice(0, 600)}...(${body.length} chars)` : body}`;
}

// ---- the run ------------------------------------------------------------------------------------------------

function prepareSandbox() {
  const root = sandboxDir();
  fs.mkdirSync(path.join(root, "tmp"), { recursive: true });
  fs.mkdirSync(path.join(root, "prod", "logs"), { recursive: true });
  fs.writeFileSync(path.join(root, "tmp", "scratch.txt"), "scratch\n");
  fs.writeFileSync(path.join(root, "prod", "logs", "app.log"), "log\n");
}

beforeAll(async () => {
  await resetDb();
  prepareSandbox();
  await db().policyRule.updateMany({ where: { ruleKey: "deploy-production" }, data: { requireJustification: true } });
  ids.task = (await call("issue_refund", { order_id: "O-2289" })).body.result.taskId;
  ids.opsTask = (await call("wire_transfer", { to: "acct-991", amount: 25000 }, { token: OPS_BOT })).body.result.taskId;
  const deploy = { service: "checkout-api", environment: "production", version: "1.4.2" };
  ids.opsState = (await call("deploy_service", deploy, { token: OPS_BOT, caps: TASKS_AND_FORMS })).body.result.requestState;
  // A valid state of the support bot for the same call shape (the policy asks it too once it may deploy).
  ids.state = ids.opsState;
  expect(ids.task).toBeTruthy();
  expect(ids.opsState).toMatch(/^v1\./);
});

afterAll(() => {
  fs.rmSync(path.join(sandboxDir(), "tmp"), { recursive: true, force: true });
  fs.rmSync(path.join(sandboxDir(), "prod"), { recursive: true, force: true });
});

describe("fuzzing /mcp", () => {
  it("the valid seeds are served (no internal error, no leak)", async () => {
    for (const seed of seeds()) {
      const r = await rpc(seed.method, seed.params, { token: seed.token ?? SUPPORT_BOT, caps: seed.caps ?? TASKS, legacy: seed.legacy });
      expect(r.status, seed.label).toBeLessThan(500);
      expect(r.text, seed.label).not.toMatch(INTERNAL);
      expect(leakIn(r.text, ""), seed.label).toBeNull();
    }
  });

  it(
    `${RUNS} mutated requests: never a 5xx, an internal error or a leak; a refused request changes nothing`,
    async () => {
      const started = Date.now();
      let refused = 0;
      const outcomes = new Map<string, number>();
      // The endpoint logs each refusal's class name; thousands of them would bury the run's own output.
      const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
      await fc.assert(
        fc.asyncProperty(fuzzCase, async (c) => {
          // Sandbox files a case may delete come back, so later cases can find them.
          prepareSandbox();
          const sent = build(c);
          const before = await snapshot();
          const got = await send(sent);
          const what = describeSent(sent);
          expect(got.status, what).toBeLessThan(500);
          expect(got.text, what).not.toMatch(INTERNAL);
          const requestText = typeof sent.body === "string" ? sent.body + JSON.stringify(sent.headers) : JSON.stringify(sent.headers);
          expect(leakIn(got.text, requestText), what).toBeNull();
          const kind = `${got.status} ${got.body?.error?.code ?? got.body?.result?.resultType ?? (got.body?.result?.isError ? "tool-error" : got.body?.result ? "result" : "-")}`;
          outcomes.set(kind, (outcomes.get(kind) ?? 0) + 1);
          if (refusedByResponse(sent, got)) {
            refused++;
            const after = await snapshot();
            expect(after, `${what}\n-> ${got.status} ${got.text.slice(0, 400)}`).toEqual(before);
          }
        }),
        { numRuns: RUNS, seed: SEED, interruptAfterTimeLimit: Math.max(50_000, RUNS * 400), markInterruptAsFailure: false },
      );
      quiet.mockRestore();
      console.log(`[fuzz] ${RUNS} cases (${refused} refused) in ${((Date.now() - started) / 1000).toFixed(1)} s`, Object.fromEntries(outcomes));
    },
    Math.max(90_000, RUNS * 500),
  );
});
