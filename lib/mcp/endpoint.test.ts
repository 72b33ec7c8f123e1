/**
 * The MCP endpoint over HTTP, in process: app/mcp/route.ts -> SDK -> lib/mcp -> lib/tasks, against the test
 * database. What the SDK adds or refuses (resultType stamping, header checks, 401) is asserted here, on the wire.
 */
import { isCreateTaskResultV2, isDetailedTaskV2 } from "@modelcontextprotocol/ext-tasks/core/v2";
import { beforeEach, describe, expect, it } from "vitest";
import { POST } from "../../app/mcp/route";
import { DEMO_AGENTS } from "../db/seed";
import { decide } from "../tasks/decide";
import { refundsFor, requestIdOf, resetDb, userId } from "../../tests/support/db";

const SUPPORT_BOT = DEMO_AGENTS[0].token;
const OPS_BOT = DEMO_AGENTS[1].token;
const TASKS_CAPS = { extensions: { "io.modelcontextprotocol/tasks": {} } };

type Rpc = { status: number; headers: Headers; body: any };

async function rpc(method: string, params: Record<string, unknown>, opts: { token?: string | null; caps?: object; name?: string } = {}): Promise<Rpc> {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": method,
  };
  const name = opts.name ?? (typeof params.name === "string" ? params.name : typeof params.taskId === "string" ? params.taskId : undefined);
  if (name) headers["Mcp-Name"] = name;
  const token = opts.token === undefined ? SUPPORT_BOT : opts.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  const body = {
    jsonrpc: "2.0",
    id: 1,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { name: "endpoint-test", version: "1" },
        "io.modelcontextprotocol/clientCapabilities": opts.caps ?? TASKS_CAPS,
      },
    },
  };
  const res = await POST(new Request("http://localhost/mcp", { method: "POST", headers, body: JSON.stringify(body) }));
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

const refund = (args: Record<string, unknown>, opts?: Parameters<typeof rpc>[2]) =>
  rpc("tools/call", { name: "issue_refund", arguments: args }, opts);

beforeEach(resetDb);

describe("authentication", () => {
  it.each([
    ["an unknown token", "cs_unknown-token-unknown-token-unknown-0000"],
    ["a malformed token", "not a token"],
    ["no token", null],
  ])("refuses %s with 401 and WWW-Authenticate: Bearer", async (_label, token) => {
    const r = await rpc("tools/list", {}, { token });
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect(JSON.stringify(r.body)).not.toContain("at ");
  });
});

describe("server/discover", () => {
  it("declares the tasks and tool-approval extensions", async () => {
    const r = await rpc("server/discover", {});
    expect(r.body.result.capabilities.extensions).toEqual({
      "io.modelcontextprotocol/tasks": {},
      "io.modelcontextprotocol/tool-approval": {},
    });
  });
});

describe("a requestable denial returns a task", () => {
  it("answers tools/call with a flat CreateTaskResult carrying the pending envelope, and nothing runs", async () => {
    const r = await refund({ order_id: "O-2289" });
    const result = r.body.result;
    expect(isCreateTaskResultV2(result)).toBe(true);
    expect(result).toMatchObject({ resultType: "task", status: "working", pollIntervalMs: expect.any(Number) });
    expect(result).not.toHaveProperty("task");
    expect(result._meta["io.modelcontextprotocol/authorization"]).toEqual({
      reason: "insufficient_authorization",
      remediation: "available",
      remediationHints: [{ type: "task" }],
    });
    // What the model reads at once: the call has not run and waits for review.
    expect(result._meta["io.modelcontextprotocol/model-immediate-response"]).toBe(
      "This call needs approval before it can run, so it has not run yet. It is pending review; you can continue other work and check the task later.",
    );
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });

  it("gives a client without the tasks extension the degraded isError result", async () => {
    const r = await refund({ order_id: "O-2289" }, { caps: {} });
    expect(r.body.result).toMatchObject({ isError: true, resultType: "complete" });
    expect(r.body.result).not.toHaveProperty("taskId");
  });

  it("returns an ordinary result, without disposition, for a call that needs no approval", async () => {
    const r = await refund({ order_id: "O-1021" });
    expect(r.body.result).toMatchObject({ resultType: "complete", isError: false });
    expect(r.body.result._meta ?? {}).not.toHaveProperty("io.modelcontextprotocol/tool-approval-disposition");
  });

  it("refuses bad arguments as a tool error, not a protocol error or a 500", async () => {
    const r = await refund({ order_id: 12, amount: "lots" });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ isError: true });
  });
});

describe("tasks/get", () => {
  it("repeats the envelope while pending and is stamped resultType complete", async () => {
    const { taskId } = (await refund({ order_id: "O-2289" })).body.result;
    const r = await rpc("tasks/get", { taskId });
    expect(r.body.result).toMatchObject({ taskId, status: "working", resultType: "complete" });
    expect(r.body.result._meta["io.modelcontextprotocol/authorization"].remediation).toBe("available");
    expect(isDetailedTaskV2(r.body.result)).toBe(true);
  });

  it("answers an unknown and another principal's taskId with the same -32602", async () => {
    const { taskId } = (await refund({ order_id: "O-2289" })).body.result;
    const foreign = await rpc("tasks/get", { taskId }, { token: OPS_BOT });
    const unknown = await rpc("tasks/get", { taskId: "00000000-0000-0000-0000-000000000000" });
    expect(foreign.body.error).toEqual({ code: -32602, message: "Unknown taskId" });
    expect(unknown.body.error).toEqual(foreign.body.error);
  });

  it("inlines the approved result with disposition approved-executed and no envelope", async () => {
    const { taskId } = (await refund({ order_id: "O-2289" })).body.result;
    const lead = await userId("lena.lead@countersign.test");
    await decide({ requestId: await requestIdOf(taskId), reviewerId: lead, decision: "approve" }, new Date());
    const r = (await rpc("tasks/get", { taskId })).body.result;
    expect(r).toMatchObject({ status: "completed", result: { isError: false } });
    expect(r.result._meta).toEqual({ "io.modelcontextprotocol/tool-approval-disposition": "approved-executed" });
    expect(r._meta ?? {}).not.toHaveProperty("io.modelcontextprotocol/authorization");
    expect(await refundsFor("O-2289")).toHaveLength(1);
  });

  it("marks a denial denied-not-executed with remediation unavailable on the result", async () => {
    const { taskId } = (await refund({ order_id: "O-2289" })).body.result;
    const lead = await userId("lena.lead@countersign.test");
    await decide({ requestId: await requestIdOf(taskId), reviewerId: lead, decision: "deny", comment: "No." }, new Date());
    const r = (await rpc("tasks/get", { taskId })).body.result;
    expect(r).toMatchObject({ status: "completed", result: { isError: true } });
    expect(r.result._meta).toEqual({
      "io.modelcontextprotocol/tool-approval-disposition": "denied-not-executed",
      "io.modelcontextprotocol/authorization": { reason: "insufficient_authorization", remediation: "unavailable" },
    });
  });
});

describe("tasks/cancel", () => {
  it("acks with an empty resultType complete, then tasks/get reads cancelled; cancelling a terminal task is the same no-op ack", async () => {
    const { taskId } = (await refund({ order_id: "O-2289" })).body.result;
    const ack = await rpc("tasks/cancel", { taskId });
    expect(ack.body.result.resultType).toBe("complete");
    expect(ack.body.result).not.toHaveProperty("status");
    expect((await rpc("tasks/get", { taskId })).body.result.status).toBe("cancelled");
    // SEP "Cancellation": a cancel of a task that is already terminal is a no-op, acknowledged like any other.
    const again = await rpc("tasks/cancel", { taskId });
    expect(again.body.result).toEqual({ resultType: "complete", _meta: expect.any(Object) });
    expect((await rpc("tasks/get", { taskId })).body.result.status).toBe("cancelled");
    expect((await rpc("tasks/cancel", { taskId: "00000000-0000-0000-0000-000000000000" })).body.error).toEqual({ code: -32602, message: "Unknown taskId" });
  });

  it("cannot cancel another principal's task", async () => {
    const { taskId } = (await refund({ order_id: "O-2289" })).body.result;
    expect((await rpc("tasks/cancel", { taskId }, { token: OPS_BOT })).body.error).toEqual({ code: -32602, message: "Unknown taskId" });
    expect((await rpc("tasks/get", { taskId })).body.result.status).toBe("working");
  });
});
