/**
 * Test helper for the endpoint tests in lib/mcp: JSON-RPC over HTTP through app/mcp/route.ts in process (Request
 * in, Response out, the SDK and lib/mcp in between), against the test database. Not imported by the app.
 */
import { POST } from "../../app/mcp/route";
import { DEMO_AGENTS } from "../db/seed";
import { REVISION, TASKS, TASKS_AND_FORMS, buildRpcRequest, parseRpcBody, type RawRequestOptions } from "./raw-request";

export const SUPPORT_BOT = DEMO_AGENTS[0].token;
export const OPS_BOT = DEMO_AGENTS[1].token;
export { REVISION, TASKS, TASKS_AND_FORMS };

export type Rpc = { status: number; headers: Headers; body: any; text: string };

/** `token` defaults to the support-bot demo agent; null sends none. */
export type RpcOptions = RawRequestOptions;

export async function rpc(method: string, params: Record<string, unknown> = {}, opts: RpcOptions = {}): Promise<Rpc> {
  const { headers, body } = buildRpcRequest(method, params, { clientName: "endpoint-test", ...opts, token: opts.token === undefined ? SUPPORT_BOT : opts.token });
  const res = await POST(new Request("http://localhost/mcp", { method: "POST", headers, body }));
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: parseRpcBody(text, res.headers.get("content-type") ?? ""), text };
}

export const call = (tool: string, args: Record<string, unknown>, opts?: RpcOptions & { extra?: Record<string, unknown> }) =>
  rpc("tools/call", { name: tool, arguments: args, ...(opts?.extra ?? {}) }, opts);

export const getTaskRpc = (taskId: string, opts?: RpcOptions) => rpc("tasks/get", { taskId }, opts);

/** The text of a CallToolResult. */
export function textOf(result: { content?: { type: string; text?: string }[] } | undefined): string {
  return (result?.content ?? []).map((c) => c.text ?? "").join("\n");
}
