/**
 * The McpServer factory for `createMcpHandler`: one instance per HTTP request, built for the authenticated
 * principal. Tools come from lib/tools/catalog; every tools/call goes to lib/tasks/call, and the tasks
 * extension's tasks/get, tasks/update and tasks/cancel to lib/tasks. This file only moves values between the SDK
 * and the domain; the shapes are built in ./wire, the MRTR state in ./request-state.
 *
 * Also served here:
 *  - the degraded path for clients without the tasks extension: the tools `request_access`,
 *    `get_request_status` and `answer_request` (./degraded.ts);
 *  - in conformance mode only (COUNTERSIGN_CONFORMANCE=1), the official conformance suite's fixtures
 *    (./conformance).
 */
import { McpServer, ProtocolError, ProtocolErrorCode, type McpRequestContext, type ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import { cancelTask } from "../tasks/cancel";
import { getTask } from "../tasks/get";
import { updateTask } from "../tasks/update";
import { conformanceMode } from "../tools/conformance-fixtures";
import { listTools } from "../tools/catalog";
import { subjectOf } from "../auth/agents";
import { visibleTools } from "../policy/evaluate";
import { currentPolicy, type PolicyHead } from "../policy/store";
import { policyHeadOf, principalOf } from "./auth";
import type { Principal } from "../tasks/types";
import { advertisedOnly, callToolHandler, clientCapabilities, guard, requirePrincipal, tasksRequired } from "./calls";
import { registerConformanceFixtures } from "./conformance/fixtures";
import { resolveFixtureTask } from "./conformance/resolver";
import { ensureConformanceData } from "./conformance/seed";
import { registerDegradedTools } from "./degraded";
import { openState } from "./request-state";
import { ToolTable } from "./tool-table";
import { TASKS_EXTENSION, TOOL_APPROVAL_EXTENSION, declaresTasksExtension, getTaskResultToWire } from "./wire";

export const SERVER_INFO = { name: "countersign", version: "0.1.0" };

/** Same answer for an unknown task and another principal's task, so task ids cannot be probed. */
export const UNKNOWN_TASK_MESSAGE = "Unknown taskId";

const TaskIdParams = z.object({ taskId: z.string().min(1).max(200) });
const UpdateParams = z.object({ taskId: z.string().min(1).max(200), inputResponses: z.record(z.string(), z.unknown()).optional() });

export async function createServer(ctx: McpRequestContext): Promise<McpServer> {
  const principal = principalOf(ctx.authInfo);
  if (conformanceMode()) await ensureConformanceData();
  // The tasks/* methods read only the task: a request for one of them (its Mcp-Method header, which the SDK has
  // checked against the body) registers no tools and reads no policy.
  const method = ctx.era === "modern" ? ctx.requestInfo?.headers.get("mcp-method") : null;
  const toolsNeeded = conformanceMode() || !method || !TASK_METHODS.has(method);
  const server = new McpServer(SERVER_INFO, {
    // One server per request: a client that lists again sees the current catalog, so no list_changed is sent.
    capabilities: {
      tools: { listChanged: false },
      // Conformance fixtures only: static resources and prompts, so no list_changed and no subscriptions either.
      ...(conformanceMode() ? { resources: { listChanged: false, subscribe: false }, prompts: { listChanged: false }, completions: {} } : {}),
      extensions: { [TASKS_EXTENSION]: {}, [TOOL_APPROVAL_EXTENSION]: {} },
    },
    // MRTR requestState: the SDK verifies it (HMAC, expiry, method + agent binding) before any handler runs.
    requestState: { verify: openState },
  });

  // A 2026-07-28 tools/call names its tool in the Mcp-Name header (checked against the body by the SDK): only that
  // tool is registered. An encoded name (not one of the catalog's) or any other request registers them all.
  const called = ctx.era === "modern" && method === "tools/call" && !conformanceMode() ? ctx.requestInfo?.headers.get("mcp-name")?.trim() : undefined;
  if (toolsNeeded) await registerTools(server, principal, policyHeadOf(ctx.authInfo), called);

  // tasks/get, tasks/update and tasks/cancel exist only on the 2026-07-28 era, where only the custom-schema form
  // registers them. A 2025-era client has no per-request capabilities, so it never receives a task.
  if (ctx.era === "modern") {
    server.server.setRequestHandler("tasks/get", { params: TaskIdParams }, async ({ taskId }, reqCtx) => {
      requireTasksCapability(reqCtx);
      const p = requirePrincipal(principal);
      const now = new Date();
      if (conformanceMode()) await guard("resolver", () => resolveFixtureTask(taskId, p.agentId, now));
      const task = await guard("tasks/get", () => getTask(p, taskId, now));
      if (!task) throw new ProtocolError(ProtocolErrorCode.InvalidParams, UNKNOWN_TASK_MESSAGE);
      return getTaskResultToWire(task);
    });
    server.server.setRequestHandler("tasks/update", { params: UpdateParams }, async ({ taskId, inputResponses }, reqCtx) => {
      requireTasksCapability(reqCtx);
      // The SDK lifts well-formed inputResponses out of params into ctx; read either.
      const responses = { ...(inputResponses ?? {}), ...(reqCtx.mcpReq.inputResponses ?? {}) };
      const r = await guard("tasks/update", () => updateTask(requirePrincipal(principal), taskId, responses, new Date()));
      if (!r.ok) throw new ProtocolError(ProtocolErrorCode.InvalidParams, r.reason === "not-found" ? UNKNOWN_TASK_MESSAGE : r.message);
      // An empty ack; the SDK stamps resultType "complete". The new state is read with tasks/get.
      return {};
    });
    server.server.setRequestHandler("tasks/cancel", { params: TaskIdParams }, async ({ taskId }, reqCtx) => {
      requireTasksCapability(reqCtx);
      const r = await guard("tasks/cancel", () => cancelTask(requirePrincipal(principal), taskId, new Date()));
      // A cancel of a task that is already terminal is a no-op (SEP "Cancellation"): the same empty ack.
      if (!r.ok && r.reason === "not-found") throw new ProtocolError(ProtocolErrorCode.InvalidParams, UNKNOWN_TASK_MESSAGE);
      return {};
    });
  }

  return server;
}

const TASK_METHODS = new Set(["tasks/get", "tasks/update", "tasks/cancel"]);

/** The catalog's tools (each call decided by lib/tasks/call), the degraded tools, and tools/list by policy. */
async function registerTools(server: McpServer, principal: Principal | null, head: PolicyHead | undefined, called?: string): Promise<void> {
  // The current policy, and with it the current tool catalog this request registers and calls: from the head the
  // authentication statement read, or one statement.
  const policy = await currentPolicy(head);
  const tools = new ToolTable(server);
  const catalog = listTools({ held: true });
  const held = new Set(catalog.filter((t) => t.held).map((t) => t.name));
  const only = called === undefined ? [] : catalog.filter((t) => t.name === called);
  for (const tool of only.length ? only : catalog) {
    tools.add(tool.name, { title: tool.title, description: tool.description, inputSchema: advertisedOnly(tool.inputSchema) }, (args, reqCtx) =>
      callToolHandler(requirePrincipal(principal), tool.name, args, reqCtx, policy),
    );
  }
  if (!only.length) registerDegradedTools(tools, () => requirePrincipal(principal));
  if (conformanceMode()) registerConformanceFixtures(server, tools, () => requirePrincipal(principal));
  tools.install({
    governed: new Set(catalog.map((t) => t.name)),
    // A tool held for an admin's review is never listed, whatever policy says.
    visible: async () => {
      const visible = new Set(visibleTools(policy, await subjectOf(requirePrincipal(principal))));
      for (const name of held) visible.delete(name);
      return visible;
    },
  });
}

function requireTasksCapability(reqCtx: ServerContext): void {
  if (!declaresTasksExtension(clientCapabilities(reqCtx))) throw tasksRequired();
}
