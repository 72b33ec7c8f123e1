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

export class ToolTable {
  private readonly handlers = new Map<string, ToolHandler>();

  constructor(private readonly server: McpServer) {}

  add(name: string, config: Config, handler: ToolHandler): void {
    if (this.handlers.has(name)) throw new Error(`tool ${name} registered twice`);
    this.handlers.set(name, handler);
    // Registered with McpServer for tools/list only; its tools/call is replaced by `install`.
    this.server.registerTool(name, config as never, (() => {
      throw new Error("unreachable: tools/call is dispatched by ToolTable");
    }) as never);
  }

  install(): void {
    const low = this.server.server;
    low.setRequestHandler("tools/call", { params: CallParams }, async (params, ctx) => {
      const handler = this.handlers.get(params.name);
      if (!handler) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${String(params.name).slice(0, 64)} not found`);
      const args = params.arguments;
      let result: CallToolResult;
      try {
        result = await handler(args && typeof args === "object" && !Array.isArray(args) ? (args as Record<string, unknown>) : {}, ctx);
      } catch (err) {
        if (err instanceof ProtocolError) throw err;
        logFailure(`tools/call ${params.name}`, err);
        return { content: [{ type: "text", text: "Internal error while processing this call; whether the tool ran is unknown. Do not retry automatically." }], isError: true };
      }
      if (isInputRequiredResult(result)) return result as never;
      return low.projectCallToolResult(result, undefined) as never;
    });
  }
}
