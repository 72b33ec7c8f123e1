/**
 * A raw 2026-07-28 JSON-RPC request as a client sends it over HTTP: the routing headers (MCP-Protocol-Version,
 * Mcp-Method, Mcp-Name), the bearer token, and the per-request `_meta` envelope with the client's capabilities.
 * For the black-box tests, the e2e specs, the in-process endpoint tests and the walkthrough generator: each sends
 * exactly what a real client would, built in one place. Not imported by the app.
 */
export const REVISION = "2026-07-28";
export const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
export const TASKS_AND_FORMS = { ...TASKS, elicitation: { form: {} } };

export type RawRequestOptions = {
  /** Bearer token; null or undefined sends none. */
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
  /** false: leave the `_meta` envelope out (to show what happens without it). */
  meta?: boolean;
  id?: number | string;
  clientName?: string;
};

export function buildRpcRequest(method: string, params: Record<string, unknown>, opts: RawRequestOptions = {}): { headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
  if (!opts.legacy) {
    headers["MCP-Protocol-Version"] = REVISION;
    headers["Mcp-Method"] = method;
    const name = opts.name !== undefined ? opts.name : typeof params.name === "string" ? params.name : typeof params.taskId === "string" ? params.taskId : null;
    if (name !== null) headers["Mcp-Name"] = name;
  } else if (method !== "initialize") {
    headers["MCP-Protocol-Version"] = "2025-11-25";
  }
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  Object.assign(headers, opts.headers ?? {});
  const withMeta = !opts.legacy && opts.meta !== false;
  const body =
    opts.raw ??
    JSON.stringify({
      jsonrpc: "2.0",
      id: opts.id ?? 1,
      method,
      params: withMeta
        ? {
            ...params,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": REVISION,
              "io.modelcontextprotocol/clientInfo": { name: opts.clientName ?? "countersign-test", version: "1" },
              "io.modelcontextprotocol/clientCapabilities": opts.caps ?? TASKS,
              ...((params._meta as object | undefined) ?? {}),
            },
          }
        : params,
    });
  return { headers, body };
}

/** A JSON body, or the JSON-RPC response (result or error) in an SSE body. */
export function parseRpcBody(text: string, contentType: string): any {
  if (!text) return null;
  if (!contentType.includes("text/event-stream")) return JSON.parse(text);
  const messages = text
    .split(/\r?\n\r?\n/)
    .map((e) => e.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n"))
    .filter(Boolean)
    .map((d) => JSON.parse(d));
  return messages.reverse().find((m) => "result" in m || "error" in m) ?? messages[0] ?? null;
}
