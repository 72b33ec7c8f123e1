/**
 * Our tools/call dispatch. McpServer lists the registered tools (tools/list), but its own tools/call turns every
 * error a handler throws into an `isError` tool result, and some of ours must reach the client as JSON-RPC
 * errors: -32021 for a task-only tool called without the tasks extension, -32602 for a refused MRTR
 * requestState. So every tool is registered here too, and `install` replaces tools/call with a dispatcher that
 * lets ProtocolErrors through and turns anything else into a tool error without a message or stack.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  isInputRequiredResult,
  type CallToolResult,
  type McpServer,
  type ServerContext,
  type StandardSchemaWithJSON,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { logFailure } from "./calls";

/**
 * tools/call params with the arguments exactly as the JSON body carried them. The SDK's own schema copies the
 * arguments into a new object, which silently drops an own `__proto__` key (JSON.parse keeps it; assigning it
 * sets a prototype instead); the domain must see such a key to refuse it like any other.
 */
const CallParams = z.looseObject({ name: z.string(), arguments: z.unknown().optional() });

export type ToolHandler = (args: Record<string, unknown>, reqCtx: ServerContext) => Promise<CallToolResult> | CallToolResult;
type Config = { title?: string; description?: string; inputSchema?: StandardSchemaWithJSON };

/** Which of the governed tools this principal may see in tools/list (computed only when tools/list is asked). */
export type ListFilter = { governed: Set<string>; visible: () => Promise<Set<string>> };

export class ToolTable {
  private readonly handlers = new Map<string, ToolHandler>();
  private readonly registered = new Map<string, { enabled: boolean }>();

  constructor(private readonly server: McpServer) {}

  add(name: string, config: Config, handler: ToolHandler): void {
    if (this.handlers.has(name)) throw new Error(`tool ${name} registered twice`);
    this.handlers.set(name, handler);
    // Registered with McpServer for tools/list only; its tools/call is replaced by `install`.
    const tool = this.server.registerTool(name, config as never, (() => {
      throw new Error("unreachable: tools/call is dispatched by ToolTable");
    }) as never);
    this.registered.set(name, tool as unknown as { enabled: boolean });
  }

  install(filter?: ListFilter): void {
    const low = this.server.server;
    if (filter) {
      // tools/list shows only the governed tools policy may ever permit this principal. The SDK's own listing is
      // kept (same shapes); the tools policy hides are switched off on this per-request server before it runs.
      const sdkList = (low as unknown as { _getRequestHandler(m: string): ((req: unknown, ctx: unknown) => Promise<unknown>) | undefined })._getRequestHandler("tools/list");
      if (!sdkList) throw new Error("tools/list handler missing");
      low.setRequestHandler("tools/list", (async (request: unknown, ctx: unknown) => {
        const visible = await filter.visible();
        for (const [name, tool] of this.registered) if (filter.governed.has(name)) tool.enabled = visible.has(name);
        return sdkList(request, ctx);
      }) as never);
    }
    low.setRequestHandler("tools/call", { params: CallParams }, async (params, ctx) => {
      const handler = this.handlers.get(params.name);
      if (!handler) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${String(params.name).slice(0, 64)} not found`);
      const args = params.arguments;
      const result = await handled(params.name, () => handler(args && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : {}, ctx));
      if (isInputRequiredResult(result)) return result as never;
      return low.projectCallToolResult(result, undefined) as never;
    });
  }
}

/**
 * A tool handler's run as tools/call answers it: a ProtocolError goes out as the JSON-RPC error it is; any other
 * failure is logged (its class) and becomes a tool error without a message or stack. Shared with the calls answered
 * without the SDK's server (./direct-call).
 */
export async function handled(tool: string, run: () => Promise<CallToolResult> | CallToolResult): Promise<CallToolResult> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    logFailure(`tools/call ${tool}`, err);
    return { content: [{ type: "text", text: "Internal error while processing this call; whether the tool ran is unknown. Do not retry automatically." }], isError: true };
  }
}
