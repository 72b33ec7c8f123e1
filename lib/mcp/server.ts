/**
 * The McpServer factory for `createMcpHandler`: one instance per HTTP request, built for the authenticated
 * principal. Tools come from lib/tools/registry; every tools/call goes to lib/tasks/call, and the tasks
 * extension's tasks/get and tasks/cancel to lib/tasks. This file only moves values between the SDK and the
 * domain; the shapes are built in ./wire.
 */
import {
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type McpRequestContext,
  type ServerContext,
  type StandardSchemaWithJSON,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { callTool } from "../tasks/call";
import { cancelTask } from "../tasks/cancel";
import { getTask } from "../tasks/get";
import type { Principal } from "../tasks/types";
import { listTools } from "../tools/registry";
import { principalOf } from "./auth";
import {
  CLIENT_CAPABILITIES_KEY,
  TASKS_EXTENSION,
  TOOL_APPROVAL_EXTENSION,
  createTaskResultToWire,
  declaresTasksExtension,
  getTaskResultToWire,
  toolResultToWire,
} from "./wire";

export const SERVER_INFO = { name: "countersign", version: "0.1.0" };

/** Same answer for an unknown task and another principal's task, so task ids cannot be probed. */
export const UNKNOWN_TASK_MESSAGE = "Unknown taskId";
export const TERMINAL_TASK_MESSAGE = "Task is already terminal and cannot be cancelled";

const TaskIdParams = z.object({ taskId: z.string().min(1).max(200) });

export function createServer(ctx: McpRequestContext): McpServer {
  const principal = principalOf(ctx.authInfo);
  const server = new McpServer(SERVER_INFO, {
    // The tool list is fixed at build time, so no list_changed is ever sent.
    capabilities: { tools: { listChanged: false }, extensions: { [TASKS_EXTENSION]: {}, [TOOL_APPROVAL_EXTENSION]: {} } },
  });

  for (const tool of listTools()) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: advertisedOnly(tool.inputSchema) },
      async (args: unknown, reqCtx: ServerContext) => callToolHandler(requirePrincipal(principal), tool.name, args, reqCtx),
    );
  }

  // tasks/get and tasks/cancel exist only on the 2026-07-28 era, where only the custom-schema form registers
  // them. A 2025-era client has no per-request capabilities, so it never receives a task (degraded path).
  if (ctx.era === "modern") {
    server.server.setRequestHandler("tasks/get", { params: TaskIdParams }, async ({ taskId }) => {
      const task = await guard("tasks/get", () => getTask(requirePrincipal(principal), taskId, new Date()));
      if (!task) throw new ProtocolError(ProtocolErrorCode.InvalidParams, UNKNOWN_TASK_MESSAGE);
      return getTaskResultToWire(task);
    });
    server.server.setRequestHandler("tasks/cancel", { params: TaskIdParams }, async ({ taskId }) => {
      const r = await guard("tasks/cancel", () => cancelTask(requirePrincipal(principal), taskId, new Date()));
      if (!r.ok) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          r.reason === "terminal" ? TERMINAL_TASK_MESSAGE : UNKNOWN_TASK_MESSAGE,
        );
      }
      // An empty ack; the SDK stamps resultType "complete". The cancelled status is read with tasks/get.
      return {};
    });
  }

  return server;
}

async function callToolHandler(principal: Principal, tool: string, args: unknown, reqCtx: ServerContext): Promise<CallToolResult> {
  const envelope = reqCtx.mcpReq.envelope as Record<string, unknown> | undefined;
  const tasks = declaresTasksExtension(envelope?.[CLIENT_CAPABILITIES_KEY]);
  let outcome: Awaited<ReturnType<typeof callTool>>;
  try {
    outcome = await callTool(principal, tool, args, { tasks }, new Date());
  } catch (err) {
    logFailure("tools/call", err);
    return {
      content: [{ type: "text", text: "Internal error while processing this call; whether the tool ran is unknown. Do not retry automatically." }],
      isError: true,
    };
  }
  switch (outcome.kind) {
    case "result":
    case "approval-required":
      return toolResultToWire(outcome.outcome) as CallToolResult;
    case "task":
      // A flat CreateTaskResult; the SDK's CallToolResult type does not know resultType "task".
      return createTaskResultToWire(outcome.task, outcome.modelMessage) as unknown as CallToolResult;
    case "input-required":
      // Submission input over MRTR is not wired yet: say so instead of submitting without it.
      return toolResultToWire({ isError: true, text: `${outcome.question.message} This server cannot collect it from this client yet; the tool did not run.` }) as CallToolResult;
  }
}

/**
 * A Standard Schema that advertises the registry's JSON Schema in tools/list but accepts any arguments: the
 * domain's callTool validates them (so a malformed call is refused, and audited, by the same code as any other).
 */
function advertisedOnly(jsonSchema: Record<string, unknown>): StandardSchemaWithJSON<unknown, unknown> {
  return {
    "~standard": {
      version: 1,
      vendor: "countersign",
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: () => jsonSchema, output: () => jsonSchema },
    },
  };
}

function requirePrincipal(p: Principal | null): Principal {
  // The route authenticates every request before the factory runs; this is a second lock, not a code path.
  if (!p) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, "Unauthenticated");
  return p;
}

/** Runs a domain call; an unexpected failure becomes a bare -32603 (no message or stack to the client). */
async function guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    logFailure(what, err);
    throw new ProtocolError(ProtocolErrorCode.InternalError, "Internal error");
  }
}

/** Logs the error's class and stack frames only: messages can quote arguments, which must not reach the logs. */
function logFailure(what: string, err: unknown): void {
  const name = err instanceof Error ? err.name : typeof err;
  const frames = err instanceof Error && err.stack ? err.stack.split("\n").filter((l) => /^\s+at /.test(l)).slice(0, 8).join("\n") : "";
  console.error(`[mcp] ${what} failed: ${name}\n${frames}`);
}
