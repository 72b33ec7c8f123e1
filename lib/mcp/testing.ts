/**
 * Test helper for the endpoint tests in lib/mcp: JSON-RPC over HTTP through app/mcp/route.ts in process (Request
 * in, Response out, the SDK and lib/mcp in between), against the test database. Not imported by the app.
 */
import { POST } from "../../app/mcp/route";
import { DEMO_AGENTS } from "../db/seed";

export const SUPPORT_BOT = DEMO_AGENTS[0].token;
export const OPS_BOT = DEMO_AGENTS[1].token;
export const REVISION = "2026-07-28";
export const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
export const TASKS_AND_FORMS = { ...TASKS, elicitation: { form: {} } };

export type Rpc = { status: number; headers: Headers; body: any; text: string };

export type RpcOptions = {
  /** Bearer token; null sends none. Default: the support-bot demo agent. */
  token?: string | null;
  /** Per-request client capabilities. Default: the tasks extension only. */
  caps?: object;
  /** Override the Mcp-Name header (default: params.name or params.taskId). */
  name?: string | null;
  headers?: Record<string, string>;
  /** Send this raw body instead of a JSON-RPC request built from method and params. */
  raw?: string;
  /** A 2025-11-25 request: no per-request _meta envelope, no 2026 routing headers. */
  legacy?: boolean;
  id?: number | string;
};

export async function rpc(method: string, params: Record<string, unknown> = {}, opts: RpcOptions = {}): Promise<Rpc> {
  const headers: Record<string, string> = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
  if (!opts.legacy) {
    headers["MCP-Protocol-Version"] = REVISION;
    headers["Mcp-Method"] = method;
    const name = opts.name !== undefined ? opts.name : typeof params.name === "string" ? params.name : typeof params.taskId === "string" ? params.taskId : null;
    if (name !== null) headers["Mcp-Name"] = name;
  } else if (method !== "initialize") {
    headers["MCP-Protocol-Version"] = "2025-11-25";
  }
  const token = opts.token === undefined ? SUPPORT_BOT : opts.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  Object.assign(headers, opts.headers ?? {});
  const body =
    opts.raw ??
    JSON.stringify({
      jsonrpc: "2.0",
      id: opts.id ?? 1,
      method,
      params: opts.legacy
        ? params
        : {
            ...params,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": REVISION,
              "io.modelcontextprotocol/clientInfo": { name: "endpoint-test", version: "1" },
              "io.modelcontextprotocol/clientCapabilities": opts.caps ?? TASKS,
              ...((params._meta as object | undefined) ?? {}),
            },
          },
    });
  const res = await POST(new Request("http://localhost/mcp", { method: "POST", headers, body }));
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: parseBody(text, res.headers.get("content-type") ?? ""), text };
}

/** A JSON body, or the last JSON-RPC message of an SSE body. */
function parseBody(text: string, type: string): any {
  if (!text) return null;
  if (!type.includes("text/event-stream")) return JSON.parse(text);
  const messages = text
    .split(/\r?\n\r?\n/)
    .map((e) => e.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n"))
    .filter(Boolean)
    .map((d) => JSON.parse(d));
  return messages.reverse().find((m) => "result" in m || "error" in m) ?? messages[0] ?? null;
}

export const call = (tool: string, args: Record<string, unknown>, opts?: RpcOptions & { extra?: Record<string, unknown> }) =>
  rpc("tools/call", { name: tool, arguments: args, ...(opts?.extra ?? {}) }, opts);

export const getTaskRpc = (taskId: string, opts?: RpcOptions) => rpc("tasks/get", { taskId }, opts);

/** The text of a CallToolResult. */
export function textOf(result: { content?: { type: string; text?: string }[] } | undefined): string {
  return (result?.content ?? []).map((c) => c.text ?? "").join("\n");
}
