/**
 * Real MCP clients against the endpoint over HTTP (app/mcp/route.ts behind a Node server on 127.0.0.1): the
 * official tasks client (@modelcontextprotocol/ext-tasks), the SDK 2.4.0 Client pinned to 2026-07-28, and a
 * 2025-11-25 client (@modelcontextprotocol/sdk 1.x). Each drives a gated call to its end and reads the
 * disposition the way that client exposes it; the refund rows show whether the tool ran, and how often.
 */
import { Client, StreamableHTTPClientTransport, type StandardSchemaV1 } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  type ApplicationInputRequest,
  type RawClientDispatch,
  type TaskEnabledSession,
  type WithTasksOptions,
} from "@modelcontextprotocol/ext-tasks/client";
import { CallToolResultV2Schema, DetailedTaskV2Schema, isCreateTaskResultV2 } from "@modelcontextprotocol/ext-tasks/core/v2";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { db } from "../db/client";
import { askRequester } from "../tasks/ask";
import { decide } from "../tasks/decide";
import { refundsFor, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { OPS_BOT, REVISION, SUPPORT_BOT, serveRoute, textOf } from "./testing";
import { buildRpcRequest, parseRpcBody } from "./raw-request";

const DISPOSITION = "io.modelcontextprotocol/tool-approval-disposition";
const LENA = "lena.lead@countersign.test";
const GATED = { order_id: "O-2289" };
const CLIENT_INFO = { name: "countersign-client-test", version: "1.0.0" };
const TASKS_CAPABILITIES = { extensions: { "io.modelcontextprotocol/tasks": {} } };

let server: Awaited<ReturnType<typeof serveRoute>>;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  // The clients poll at the server's hint; keep it short so a settled task is seen at once.
  process.env.COUNTERSIGN_POLL_INTERVAL_MS = "20";
  server = await serveRoute();
});
afterAll(async () => {
  delete process.env.COUNTERSIGN_POLL_INTERVAL_MS;
  await server.close();
});
beforeEach(resetDb);
afterEach(async () => {
  while (closers.length) await closers.pop()!().catch(() => {});
});

async function review(taskId: string, decision: "approve" | "deny"): Promise<void> {
  const r = await decide({ requestId: await requestIdOf(taskId), reviewerId: await userId(LENA), decision, ...(decision === "deny" ? { comment: "Not this one." } : {}) }, new Date());
  expect(r.ok).toBe(true);
}

/** The SDK 2.4.0 Client, pinned to 2026-07-28, authenticated as a demo agent (the support-bot unless told). */
async function modernClient(token: string = SUPPORT_BOT): Promise<Client> {
  const client = new Client(CLIENT_INFO, { capabilities: TASKS_CAPABILITIES, versionNegotiation: { mode: { pin: REVISION } } });
  await client.connect(new StreamableHTTPClientTransport(server.url, { authProvider: { token: async () => token } }));
  closers.push(() => client.close());
  return client;
}

/**
 * The raw dispatch ext-tasks needs on 2026-07-28: it hands over `{method, params}` with the `_meta` envelope already
 * framed, and the host adds `jsonrpc` and `id`, the routing headers and the credentials.
 */
function rawDispatch(url: URL, token: string): RawClientDispatch {
  let id = 0;
  return async (request, options) => {
    const { method, params } = request as { method: string; params?: { name?: string; taskId?: string } };
    const res = await fetch(url, {
      method: "POST",
      signal: options?.signal,
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        Authorization: `Bearer ${token}`,
        "MCP-Protocol-Version": REVISION,
        "Mcp-Method": method,
        "Mcp-Name": String(params?.name ?? params?.taskId ?? ""),
        ...options?.context?.headers,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: `tasks-${++id}`, ...(request as object) }),
    });
    const reply = parseRpcBody(await res.text(), res.headers.get("content-type") ?? "");
    return reply.error ? { kind: "error", error: reply.error } : { kind: "result", result: reply.result };
  };
}

async function tasksSession(options: Pick<WithTasksOptions, "onInputRequest"> = {}, clientCapabilities: Record<string, {}> = {}, token: string = SUPPORT_BOT): Promise<TaskEnabledSession> {
  const client = await modernClient(token);
  const session = createTaskSessionFromClient(client, {
    ...options,
    endpointId: "countersign-test",
    rawDispatch: rawDispatch(server.url, token),
    v2RequestFraming: { protocolVersion: REVISION, clientInfo: CLIENT_INFO, clientCapabilities },
  });
  closers.push(() => session.close());
  return session;
}

describe("the official tasks client (@modelcontextprotocol/ext-tasks) reads the outcome of an approval task", () => {
  it.each([
    ["approve", "approved-executed", false, 1],
    ["deny", "denied-not-executed", true, 0],
  ] as const)("a gated call returns a task; on %s it completes with disposition %s, and the tool ran that many times", async (decision, disposition, isError, refunds) => {
    const session = await tasksSession();
    const execution = await session.callTool("issue_refund", GATED);
    expect(execution.kind).toBe("task");
    expect(await refundsFor("O-2289")).toHaveLength(0);
    await review(execution.handle!.taskId, decision);
    const { outcome } = await execution.settle();
    expect(outcome.status, outcome.status === "failed" ? `${outcome.error.message} (${String(outcome.error.cause)})` : "").toBe("completed");
    const result = (outcome as { result: { isError?: boolean; _meta?: Record<string, unknown> } }).result;
    expect(result.isError).toBe(isError);
    expect(result._meta?.[DISPOSITION]).toBe(disposition);
    expect(await refundsFor("O-2289")).toHaveLength(refunds);
  });

  it("a reviewer's question (input_required) reaches the client's input handler; its answer goes back with tasks/update and the approved task completes", async () => {
    const asked: ApplicationInputRequest[] = [];
    // The client may poll (and so meet the question) as soon as it holds the task; its answer waits for this gate,
    // so the check below sees the state "approved, question still open" whatever the client's timing.
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const session = await tasksSession({
      onInputRequest: async (request) => {
        asked.push(request);
        await answered;
        return { action: "accept", content: { answer: "SUP-4411" } } as never;
      },
    });
    const execution = await session.callTool("issue_refund", GATED);
    const taskId = execution.handle!.taskId;
    const lena = await userId(LENA);
    expect((await askRequester({ requestId: await requestIdOf(taskId), reviewerId: lena, question: "Which ticket is this refund for?" }, new Date())).ok).toBe(true);
    // Approved while the question is open: nothing runs until the requester has answered.
    await review(taskId, "approve");
    expect(await refundsFor("O-2289")).toHaveLength(0);
    answer();
    const { outcome } = await execution.settle();
    expect(outcome.status, outcome.status === "failed" ? `${outcome.error.message} (${String(outcome.error.cause)})` : "").toBe("completed");
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ kind: "elicitation", params: { mode: "form", message: expect.stringMatching(/Which ticket is this refund for\?/) } });
    expect((outcome as { result: { _meta: Record<string, unknown> } }).result._meta[DISPOSITION]).toBe("approved-executed");
    expect((await db().clarification.findFirstOrThrow({ where: { taskId } })).answeredAt).not.toBeNull();
    expect(await refundsFor("O-2289")).toHaveLength(1);
  });

  it("submission input before the task (input_required on tools/call): the client answers the question, the retry returns the task, and the approved deploy runs once", async () => {
    await db().policyRule.updateMany({ where: { ruleKey: "deploy-production" }, data: { requireJustification: true } });
    const asked: ApplicationInputRequest[] = [];
    const session = await tasksSession(
      {
        onInputRequest: async (request) => {
          asked.push(request);
          return { action: "accept", content: { justification: "Hotfix for the checkout outage INC-77", ticket: "INC-77" } } as never;
        },
      },
      { elicitation: { form: {} } },
      // Deploys are the ops-bot's: the demo policy limits the support-bot to refunds.
      OPS_BOT,
    );
    const execution = await session.callTool("deploy_service", { service: "checkout-api", environment: "production", version: "1.4.2" });
    expect(execution.kind).toBe("task");
    expect(asked).toMatchObject([{ kind: "elicitation", params: { mode: "form", message: expect.stringMatching(/justification/) } }]);
    const r = await decide({ requestId: await requestIdOf(execution.handle!.taskId), reviewerId: await userId("sasha.sre@countersign.test"), decision: "approve" }, new Date());
    expect(r.ok).toBe(true);
    const { outcome } = await execution.settle();
    expect(outcome.status, outcome.status === "failed" ? `${outcome.error.message} (${String(outcome.error.cause)})` : "").toBe("completed");
    expect((outcome as { result: { _meta: Record<string, unknown> } }).result._meta[DISPOSITION]).toBe("approved-executed");
    expect(await db().deployment.count()).toBe(1);
  });

  it("a cancelled task is reported as cancelled by the client, and the tool did not run", async () => {
    const session = await tasksSession();
    const execution = await session.callTool("issue_refund", GATED);
    await execution.cancel();
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("cancelled");
    expect((await db().task.findUniqueOrThrow({ where: { id: execution.handle!.taskId } })).status).toBe("cancelled");
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });
});

/**
 * A tasks/get result as a 2026-07-28 client validates it. The SDK checks the result's own `resultType` and lifts
 * it off; this schema, given to Client.request, checks the rest: the DetailedTask, and a completed task's inlined
 * `result` as a complete CallToolResult. The SDK refuses what does not fit.
 */
const StrictGetTaskResult: StandardSchemaV1<unknown, Record<string, any>> = {
  "~standard": {
    version: 1,
    vendor: "countersign-test",
    validate(value) {
      const task = DetailedTaskV2Schema.safeParse(value);
      if (!task.success) return { issues: [{ message: `tasks/get: ${task.error.message}` }] };
      const v = value as { status: string; result?: unknown };
      if (v.status === "completed") {
        const inner = CallToolResultV2Schema.safeParse(v.result);
        if (!inner.success) return { issues: [{ message: `tasks/get result: ${inner.error.message}` }] };
      }
      return { value: value as Record<string, any> };
    },
  },
};

describe("the SDK Client (2.4.0, pinned to 2026-07-28) reads the outcome of an approval task", () => {
  /** tools/call as raw JSON-RPC with the envelope the Client would send: the Client refuses resultType "task". */
  async function callRaw(tool: string, args: Record<string, unknown>) {
    const { headers, body } = buildRpcRequest("tools/call", { name: tool, arguments: args }, { token: SUPPORT_BOT, caps: TASKS_CAPABILITIES, clientName: CLIENT_INFO.name });
    const res = await fetch(server.url, { method: "POST", headers, body });
    return parseRpcBody(await res.text(), res.headers.get("content-type") ?? "").result;
  }

  /** Polls tasks/get through Client.request until the task leaves `working`; the server's state decides, not a clock. */
  async function pollUntilSettled(client: Client, taskId: string) {
    for (;;) {
      const task = await client.request({ method: "tasks/get", params: { taskId } } as never, StrictGetTaskResult);
      if (task.status !== "working") return task;
      await new Promise((r) => setTimeout(r, task.pollIntervalMs));
    }
  }

  it.each([
    ["approve", "approved-executed", false, 1],
    ["deny", "denied-not-executed", true, 0],
  ] as const)("%s: tasks/get inlines a complete CallToolResult with disposition %s", async (decision, disposition, isError, refunds) => {
    const client = await modernClient();
    expect(client.getNegotiatedProtocolVersion()).toBe(REVISION);
    const created = await callRaw("issue_refund", GATED);
    expect(isCreateTaskResultV2(created)).toBe(true);
    await review(created.taskId, decision);
    const task = await pollUntilSettled(client, created.taskId);
    expect(task).toMatchObject({ taskId: created.taskId, status: "completed" });
    expect(task.result).toMatchObject({ resultType: "complete", isError });
    expect(task.result._meta[DISPOSITION]).toBe(disposition);
    expect(await refundsFor("O-2289")).toHaveLength(refunds);
  });
});

describe("a 2025-11-25 client (@modelcontextprotocol/sdk 1.x) takes the degraded path", () => {
  type Result = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: Record<string, any>; _meta?: Record<string, unknown> };
  const callTool = async (client: LegacyClient, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as unknown as Result;

  async function legacyClient(): Promise<LegacyClient> {
    const client = new LegacyClient(CLIENT_INFO, { capabilities: {} });
    await client.connect(new LegacyTransport(server.url, { requestInit: { headers: { Authorization: `Bearer ${SUPPORT_BOT}` } } }));
    closers.push(() => client.close());
    return client;
  }

  it("a gated call is an isError result that says approval is required, and nothing runs", async () => {
    const client = await legacyClient();
    const r = await callTool(client, "issue_refund", GATED);
    expect(r.isError).toBe(true);
    expect(r).not.toHaveProperty("taskId");
    expect(textOf(r)).toMatch(/approval/i);
    expect(textOf(r)).toMatch(/did not run/);
    expect(textOf(r)).toMatch(/request_access/);
    expect(await refundsFor("O-2289")).toHaveLength(0);
    expect(await db().task.count()).toBe(0);
  });

  it.each([
    ["approve", "approved-executed", "yes", 1],
    ["deny", "denied-not-executed", "no", 0],
  ] as const)("request_access, then %s, then get_request_status reads disposition %s", async (decision, disposition, ran, refunds) => {
    const client = await legacyClient();
    const opened = await callTool(client, "request_access", { tool: "issue_refund", arguments: GATED });
    expect(opened.isError).toBe(false);
    expect(opened.structuredContent?.status).toBe("working");
    const requestId = String(opened.structuredContent?.request_id);
    const pending = await callTool(client, "get_request_status", { request_id: requestId });
    expect(pending.structuredContent).toMatchObject({ status: "working", tool_ran: "no" });
    expect(await refundsFor("O-2289")).toHaveLength(0);
    await review(requestId, decision);
    const done = await callTool(client, "get_request_status", { request_id: requestId });
    expect(done.structuredContent).toMatchObject({ status: "completed", disposition, tool_ran: ran });
    expect(done._meta?.[DISPOSITION]).toBe(disposition);
    expect(done.isError).toBe(decision === "deny");
    expect(await refundsFor("O-2289")).toHaveLength(refunds);
  });
});
