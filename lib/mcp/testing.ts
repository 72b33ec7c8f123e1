/**
 * Test helper for the endpoint tests in lib/mcp: JSON-RPC over HTTP through app/mcp/route.ts in process (Request
 * in, Response out, the SDK and lib/mcp in between), against the test database. Not imported by the app.
 */
import { createServer } from "node:http";
import { DELETE, GET, POST } from "../../app/mcp/route";
import { GET as resourceMetadata } from "../../app/.well-known/oauth-protected-resource/route";
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

/**
 * app/mcp/route.ts behind a real HTTP server on 127.0.0.1 (a random port), for real MCP clients that need a URL.
 * Each Node request becomes the web Request the route handler takes, and its Response is written back as is.
 * `/.well-known/oauth-protected-resource[/mcp]` goes to the resource metadata route.
 */
export async function serveRoute(): Promise<{ url: URL; close: () => Promise<void> }> {
  const handlers: Record<string, (r: Request) => Promise<Response>> = { POST, GET, DELETE };
  const server = createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
      // The resource metadata documents (RFC 9728) beside /mcp, as the app serves them.
      const wellKnown = (req.url ?? "").startsWith("/.well-known/oauth-protected-resource");
      const handler = wellKnown ? (req.method === "GET" ? async (r: Request) => resourceMetadata(r) : undefined) : handlers[req.method ?? ""];
      if (!handler) {
        res.writeHead(405).end();
        return;
      }
      const body = chunks.length && req.method !== "GET" ? Buffer.concat(chunks) : undefined;
      const response = await handler(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body }));
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch {
      res.writeHead(500).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    url: new URL(`http://127.0.0.1:${address.port}/mcp`),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
