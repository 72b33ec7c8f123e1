/**
 * A plain 2026-07-28 tools/call answered without the SDK's per-request server (./direct-call.ts) must be answered
 * exactly as the SDK answers it: each kind of call is sent through the route twice, once with
 * COUNTERSIGN_DIRECT_CALLS=0 (every request through the SDK) and once as deployed, from the same database state,
 * and the two answers must have the same status, content type and body (ids, times and sealed states aside). The
 * calls the direct path takes build no SDK server; the requests it must leave to the SDK are listed.
 */
import { McpServer } from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../db/client";
import { resetDb } from "../../tests/support/db";
import { encodeResult, plainToolCall } from "./direct-call";
import { SERVER_INFO } from "./server";
import { buildRpcRequest, type RawRequestOptions } from "./raw-request";
import { OPS_BOT, SUPPORT_BOT, TASKS, TASKS_AND_FORMS, call, type Rpc } from "./testing";

const DEPLOY_STAGING = { service: "checkout-api", environment: "staging", version: "1.4.2" };
const DEPLOY_PRODUCTION = { ...DEPLOY_STAGING, environment: "production" };

/** Ids, times and sealed states differ between two runs of one call; everything else must not. */
function normalized(r: Rpc): unknown {
  const text = JSON.stringify(r.body)
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, "<time>")
    .replace(/"requestState":"[^"]+"/g, '"requestState":"<state>"');
  return { status: r.status, type: r.headers.get("content-type"), body: JSON.parse(text) };
}

type Case = {
  label: string;
  tool: string;
  args: Record<string, unknown>;
  opts: RawRequestOptions & { extra?: Record<string, unknown> };
  direct: boolean;
  setup?: () => unknown;
};

const justificationRequired = () => db().policyRule.updateMany({ where: { ruleKey: "deploy-production" }, data: { requireJustification: true } });

const CASES: Case[] = [
  { label: "an allowed call (its result)", tool: "deploy_service", args: DEPLOY_STAGING, opts: { token: OPS_BOT }, direct: true },
  { label: "a call policy denies", tool: "deploy_service", args: DEPLOY_STAGING, opts: { token: SUPPORT_BOT }, direct: true },
  { label: "a requestable call (a task)", tool: "issue_refund", args: { order_id: "O-2289" }, opts: {}, direct: true },
  { label: "a requestable call without the tasks extension", tool: "issue_refund", args: { order_id: "O-2289" }, opts: { caps: {} }, direct: true },
  { label: "invalid arguments", tool: "issue_refund", args: { order_id: 12, amount: "lots" }, opts: {}, direct: true },
  { label: "a call no data backs (a refused mapping)", tool: "issue_refund", args: { order_id: "O-0000" }, opts: {}, direct: true },
  {
    label: "a call that needs a justification first (input_required)",
    tool: "deploy_service",
    args: DEPLOY_PRODUCTION,
    opts: { token: OPS_BOT, caps: TASKS_AND_FORMS },
    direct: true,
    setup: justificationRequired,
  },
  {
    label: "a justification asked of a client without forms",
    tool: "deploy_service",
    args: DEPLOY_PRODUCTION,
    opts: { token: OPS_BOT, caps: TASKS },
    direct: true,
    setup: justificationRequired,
  },
  {
    label: "a question that cannot be sealed (a request-state key too short)",
    tool: "deploy_service",
    args: DEPLOY_PRODUCTION,
    opts: { token: OPS_BOT, caps: TASKS_AND_FORMS },
    direct: true,
    setup: async () => {
      process.env.COUNTERSIGN_REQUEST_STATE_KEYS = "short";
      await justificationRequired();
    },
  },
  {
    label: "capabilities that are not an object",
    tool: "issue_refund",
    args: { order_id: "O-2289" },
    opts: { caps: "tasks" as never },
    direct: false,
  },
  {
    label: "client information without a version",
    tool: "issue_refund",
    args: { order_id: "O-1021" },
    opts: { extra: { _meta: { "io.modelcontextprotocol/clientInfo": { name: "no-version" } } } },
    direct: false,
  },
  {
    label: "a protocol version in the envelope other than the header's",
    tool: "issue_refund",
    args: { order_id: "O-1021" },
    opts: { extra: { _meta: { "io.modelcontextprotocol/protocolVersion": "2025-11-25" } } },
    direct: false,
  },
  {
    // Task-only tools exist in conformance mode (the suite's fixtures): -32021, answered by the SDK.
    label: "a task-only tool without the tasks extension (-32021), in conformance mode",
    tool: "failing_job",
    args: {},
    opts: { caps: {} },
    direct: false,
    setup: () => (process.env.COUNTERSIGN_CONFORMANCE = "1"),
  },
  {
    label: "an upstream tool whose schema maps an argument to a header (the SDK checks the header)",
    tool: "hdr__lookup",
    args: { region: "eu" },
    opts: {},
    direct: false,
    setup: async () => {
      await db().$executeRaw`INSERT INTO "UpstreamServer" ("id", "name", "transport", "url") VALUES ('srv-hdr', 'hdr', 'streamable-http', 'http://127.0.0.1:9/mcp')`;
      const accepted = { description: "Looks a region up.", inputSchema: { type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } } }, annotations: {} };
      await db().upstreamTool.create({ data: { id: "t-hdr", serverId: "srv-hdr", name: "lookup", accepted, acceptedDigest: "d-hdr" } });
    },
  },
  { label: "an unknown tool", tool: "no_such_tool", args: {}, opts: {}, direct: false },
  { label: "a degraded-path tool", tool: "get_request_status", args: { request_id: "nope" }, opts: {}, direct: false },
];

let connects: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  connects = vi.spyOn(McpServer.prototype, "connect");
});
afterEach(() => {
  delete process.env.COUNTERSIGN_DIRECT_CALLS;
  delete process.env.COUNTERSIGN_CONFORMANCE;
  delete process.env.COUNTERSIGN_REQUEST_STATE_KEYS;
  vi.restoreAllMocks();
});

async function sendOnce(c: Case, direct: boolean): Promise<{ answer: Rpc; servers: number }> {
  await resetDb();
  await c.setup?.();
  if (direct) delete process.env.COUNTERSIGN_DIRECT_CALLS;
  else process.env.COUNTERSIGN_DIRECT_CALLS = "0";
  connects.mockClear();
  const answer = await call(c.tool, c.args, c.opts);
  return { answer, servers: connects.mock.calls.length };
}

describe("a plain tools/call without the SDK's server", () => {
  it.each(CASES)("$label: the same answer both ways", async (c) => {
    const sdk = await sendOnce(c, false);
    const direct = await sendOnce(c, true);
    // Taken: no per-request server was built (the SDK built one). Left to the SDK: it did what it did before
    // (a request its checks refuse builds none).
    expect(direct.servers).toBe(c.direct ? 0 : sdk.servers);
    if (c.direct) expect(sdk.servers).toBe(1);
    expect(normalized(direct.answer)).toEqual(normalized(sdk.answer));
  });

  it("writes what the SDK's path writes: the call's record and its audit event", async () => {
    // Agents are seeded afresh by each reset: named here by their names.
    const trail = async () => {
      const names = new Map((await db().agent.findMany({ select: { id: true, name: true } })).map((a) => [a.id, a.name]));
      return {
        records: (await db().callRecord.findMany({ select: { tool: true, status: true, agentId: true } })).map((r) => `${r.tool} ${r.status} ${names.get(r.agentId)}`),
        events: (await db().auditEvent.findMany({ orderBy: { seq: "asc" }, select: { type: true, actor: true } })).map((e) => `${e.type} ${names.get(e.actor.replace(/^agent:/, "")) ?? e.actor}`),
      };
    };
    const c = CASES[0];
    await sendOnce(c, false);
    const viaSdk = await trail();
    await sendOnce(c, true);
    expect(await trail()).toEqual(viaSdk);
    expect(viaSdk).toEqual({ records: ["deploy_service executed ops-bot"], events: expect.arrayContaining(["call.executed ops-bot"]) });
  });
});

describe("which requests are plain", () => {
  const request = (opts: RawRequestOptions & { method?: string; params?: Record<string, unknown> } = {}) => {
    const { headers, body } = buildRpcRequest("tools/call", opts.params ?? { name: "issue_refund", arguments: { order_id: "O-1021" } }, { token: SUPPORT_BOT, ...opts });
    return { request: new Request("http://localhost/mcp", { method: opts.method ?? "POST", headers, body: opts.method === "GET" ? undefined : body }), body: JSON.parse(opts.raw ?? body) };
  };

  it("takes a tools/call with a name, object arguments and the envelope, headers agreeing", () => {
    const { request: r, body } = request();
    expect(plainToolCall(r, body)).toEqual({ id: 1, name: "issue_refund", args: { order_id: "O-1021" }, envelope: body.params._meta });
    const noArgs = request({ params: { name: "issue_refund" } });
    expect(plainToolCall(noArgs.request, noArgs.body)?.args).toEqual({});
    const stringId = request({ id: "abc" });
    expect(plainToolCall(stringId.request, stringId.body)?.id).toBe("abc");
  });

  const meta = (extra: Record<string, unknown>) => ({ name: "issue_refund", arguments: {}, _meta: extra });
  it.each<[string, RawRequestOptions & { params?: Record<string, unknown> }, ((b: any) => void)?]>([
    ["a requestState", { params: { name: "issue_refund", arguments: {}, requestState: "x" } }],
    ["inputResponses", { params: { name: "issue_refund", arguments: {}, inputResponses: {} } }],
    ["a progress token", { params: meta({ progressToken: 1 }) }],
    ["trace context", { params: meta({ traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }) }],
    ["arguments that are a list", { params: { name: "issue_refund", arguments: [1] } }],
    ["an empty tool name", { params: { name: "", arguments: {} } }],
    ["no Mcp-Name header", { name: null }],
    ["an Mcp-Name naming another tool", { name: "deploy_service" }],
    ["another Mcp-Method", { headers: { "Mcp-Method": "tools/list" } }],
    ["another revision in the header", { headers: { "MCP-Protocol-Version": "2025-11-25" } }],
    ["no envelope", { meta: false }],
    ["a 2025-era request", { legacy: true }],
    ["a text body type", { headers: { "Content-Type": "text/plain" } }],
    ["an id that is not a whole number", { id: 1.5 }],
    [
      "a member beside the four",
      {},
      (b) => {
        b.extra = 1;
      },
    ],
    [
      "a JSON-RPC version other than 2.0",
      {},
      (b) => {
        b.jsonrpc = "1.0";
      },
    ],
    [
      "another method in the body",
      {},
      (b) => {
        b.method = "tools/list";
      },
    ],
    ["a batch", {}, (b) => [b]],
  ])("leaves a request with %s to the SDK", (_label, opts, change) => {
    const { request: r, body } = request(opts);
    const changed = change ? (change(body) ?? body) : body;
    expect(plainToolCall(r, changed)).toBeNull();
  });

  it("leaves an envelope the SDK's classifier refuses to the SDK, every time it comes (its verdict is kept per envelope)", () => {
    const bad = { "io.modelcontextprotocol/clientInfo": { name: "no-version" } };
    for (let i = 0; i < 3; i++) {
      const refused = request({ params: meta(bad) });
      refused.body.params._meta = { ...refused.body.params._meta, ...bad };
      expect(plainToolCall(refused.request, refused.body)).toBeNull();
      const good = request();
      expect(plainToolCall(good.request, good.body)).not.toBeNull();
    }
    const revision = request();
    revision.body.params._meta["io.modelcontextprotocol/protocolVersion"] = "2025-11-25";
    expect(plainToolCall(revision.request, revision.body)).toBeNull();
  });

  it("leaves anything but a POST to the SDK", () => {
    const { request: r, body } = request({ method: "GET" });
    expect(plainToolCall(r, body)).toBeNull();
  });
});

describe("the answer's encoding (the SDK's for 2026-07-28)", () => {
  const serverInfo = { "io.modelcontextprotocol/serverInfo": SERVER_INFO };

  it("stamps resultType complete and the server's identity, and keeps a result's own", () => {
    expect(encodeResult({ content: [{ type: "text", text: "ok" }] })).toEqual({ content: [{ type: "text", text: "ok" }], resultType: "complete", _meta: serverInfo });
    const own = { content: [], _meta: { "io.modelcontextprotocol/serverInfo": { name: "upstream", version: "9" }, x: 1 } };
    expect(encodeResult(own)).toEqual({ ...own, resultType: "complete" });
    expect(encodeResult({ content: [], _meta: { x: 1 } })).toEqual({ content: [], resultType: "complete", _meta: { x: 1, ...serverInfo } });
  });

  it("gives a result without content an empty one, unless it is of another family", () => {
    expect(encodeResult({ resultType: "task", taskId: "t" } as never)).toEqual({ resultType: "task", taskId: "t", content: [], _meta: serverInfo });
    const question = { resultType: "input_required", inputRequests: { k: {} }, requestState: "s" };
    expect(encodeResult(question as never)).toEqual({ ...question, _meta: serverInfo });
  });

  it("also sends structured content that is not an object as text, unless the result has text already", () => {
    expect(encodeResult({ content: [], structuredContent: [1, 2] as never })).toMatchObject({ content: [{ type: "text", text: "[1,2]" }] });
    expect(encodeResult({ content: [{ type: "text", text: "two" }], structuredContent: 2 as never })).toMatchObject({ content: [{ type: "text", text: "two" }] });
    expect(encodeResult({ content: [], structuredContent: { n: 2 } })).toMatchObject({ content: [] });
  });
});
