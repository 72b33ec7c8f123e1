/**
 * The official conformance suite's server fixtures (@modelcontextprotocol/conformance, --requirements 2026-07-28
 * and the tasks-* extension scenarios), registered ONLY in conformance mode (COUNTERSIGN_CONFORMANCE=1):
 * content tools, MRTR tools, resources, prompts and completion. The task fixtures themselves (slow_compute,
 * failing_job, ...) are real Countersign tools in lib/tools/conformance-fixtures.ts, served through the same
 * registry, policy and task store as the demo tools; `test_tool_with_task` here asks its question over MRTR and
 * then opens such a task (greet_later).
 *
 * MRTR fixtures seal their requestState with the same codec and keys as the real tools (../request-state).
 */
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  ResourceTemplate,
  completable,
  inputRequired,
  inputResponse,
  type CallToolResult,
  type McpServer,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { callTool } from "../../tasks/call";
import type { Principal } from "../../tasks/types";
import { advertisedOnly, clientCapabilities, logFailure, outcomeToWire, tasksRequired, toolError } from "../calls";
import { sealState, type SealedFixture, type SealedState } from "../request-state";
import { declaresTasksExtension } from "../wire";
import type { ToolHandler, ToolTable } from "../tool-table";
import { pngBase64, wavBase64 } from "./media";

const PNG = pngBase64();
const WAV = wavBase64();

const NAME_SCHEMA = { type: "object", properties: { name: { type: "string" } }, required: ["name"] } as const;
const none = z.object({}).passthrough();

const JSON_SCHEMA_2020_12 = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: { address: { $anchor: "addressDef", type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
  properties: {
    name: { type: "string" },
    address: { $ref: "#/$defs/address" },
    contactMethod: { type: "string", enum: ["phone", "email"] },
    phone: { type: "string" },
    email: { type: "string" },
  },
  allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
  if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
  then: { required: ["phone"] },
  else: { required: ["email"] },
  additionalProperties: false,
};

type Caps = { elicitation?: unknown; sampling?: unknown; roots?: unknown };

function caps(reqCtx: ServerContext): Caps {
  const c = clientCapabilities(reqCtx);
  return (c && typeof c === "object" ? c : {}) as Caps;
}

function text(t: string): CallToolResult {
  return { content: [{ type: "text", text: t }] };
}

/** The fixture state of this round, when the request carried one (already verified by the SDK). */
function fixtureState(reqCtx: ServerContext, tool: string, principal: Principal): SealedFixture | undefined {
  const s = reqCtx.mcpReq.requestState<SealedState>();
  if (s === undefined) return undefined;
  if (s.kind !== "fixture" || s.tool !== tool || s.a !== principal.agentId) throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid or expired requestState");
  return s;
}

function seal(reqCtx: ServerContext, principal: Principal, tool: string, round: number, data?: Record<string, unknown>): Promise<string> {
  return sealState({ kind: "fixture", tool, round, a: principal.agentId, ...(data ? { data } : {}) }, reqCtx);
}

function elicitName(message = "What is your name?") {
  return inputRequired.elicit({ mode: "form", message, requestedSchema: NAME_SCHEMA as never });
}

function acceptedString(reqCtx: ServerContext, key: string, field: string): string | undefined {
  const v = inputResponse(reqCtx.mcpReq.inputResponses, key);
  if (v.kind !== "elicit" || v.action !== "accept") return undefined;
  const value = v.content?.[field];
  return typeof value === "string" && value.trim() ? value.trim().slice(0, 200) : undefined;
}

export function registerConformanceFixtures(server: McpServer, tools: ToolTable, principal: () => Principal): void {
  const tool = (name: string, description: string, cb: ToolHandler, schema: z.ZodType = none) =>
    tools.add(name, { title: name, description, inputSchema: schema as never }, cb);

  // ---- content ------------------------------------------------------------------------------------------
  tool("test_simple_text", "Returns simple text content.", () => text("This is a simple text response for testing."));
  tool("test_image_content", "Returns image content.", () => ({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] }));
  tool("test_audio_content", "Returns audio content.", () => ({ content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] }));
  tool("test_embedded_resource", "Returns an embedded resource.", () => ({
    content: [{ type: "resource", resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." } }],
  }));
  tool("test_multiple_content_types", "Returns text, image and resource content.", () => ({
    content: [
      { type: "text", text: "Multiple content types test:" },
      { type: "image", data: PNG, mimeType: "image/png" },
      { type: "resource", resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: JSON.stringify({ test: "data", value: 123 }) } },
    ],
  }));
  tool("test_error_handling", "Always returns a tool error.", () => ({ content: [{ type: "text", text: "This tool intentionally returns an error for testing" }], isError: true }));
  const logging = async (_a: Record<string, unknown>, reqCtx: ServerContext) => {
    for (const m of ["Tool execution started", "Tool processing data", "Tool execution completed"]) {
      await reqCtx.mcpReq.log("info", m).catch(() => {});
    }
    return text("Tool with logging executed successfully");
  };
  tool("test_tool_with_logging", "Logs while it runs (only when the request sets a log level).", logging);
  tool("test_logging_tool", "Logs while it runs (only when the request sets a log level).", logging);
  tool("test_tool_with_progress", "Reports progress 0, 50, 100.", async (_a, reqCtx) => {
    const token = (reqCtx.mcpReq._meta as { progressToken?: string | number } | undefined)?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (token !== undefined) await reqCtx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress, total: 100 } });
      if (progress < 100) await new Promise((r) => setTimeout(r, 50));
    }
    return text(`Progress test completed (token ${token === undefined ? "none" : String(token)})`);
  });
  tool("test_missing_capability", "Needs the client's sampling capability.", (_a, reqCtx) => {
    if (!caps(reqCtx).sampling) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { sampling: {} } } as never, "This tool needs the sampling capability");
    return text("The client declared sampling.");
  });
  tool("test_streaming_elicitation", "Asks for a name (input_required) on a streamed response.", async (_a, reqCtx) => {
    const p = principal();
    const name = acceptedString(reqCtx, "user_name", "name");
    if (name) return text(`Hello, ${name}!`);
    return inputRequired({ inputRequests: { user_name: elicitName() }, requestState: await seal(reqCtx, p, "test_streaming_elicitation", 1) }) as never;
  });
  tool("greet", "Greets by name, synchronously (never a task).", (a) => text(`Hello, ${typeof a.name === "string" ? a.name.slice(0, 100) : "World"}!`), z.object({ name: z.string().max(100).optional() }).passthrough());

  // JSON Schema 2020-12 keywords in an inputSchema survive tools/list untouched (SEP-1613, SEP-2106).
  tools.add(
    "json_schema_2020_12_tool",
    { title: "json_schema_2020_12_tool", description: "Tool with JSON Schema 2020-12 features", inputSchema: advertisedOnly(JSON_SCHEMA_2020_12) },
    () => text("Received arguments with a JSON Schema 2020-12 input schema."),
  );
  // A parameter mirrored into an Mcp-Param-Region header (SEP-2243); the SDK checks the header against the body.
  tools.add(
    "test_custom_header_tool",
    {
      title: "test_custom_header_tool",
      description: "Echoes a region that the client also sends as the Mcp-Param-Region header.",
      inputSchema: advertisedOnly({ type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } }, required: ["region"] }),
    },
    (a) => text(`Region: ${String(a.region).slice(0, 100)}`),
  );

  // ---- MRTR (SEP-2322) ----------------------------------------------------------------------------------
  tool("test_input_required_result_elicitation", "Asks for a name, then greets.", async (_a, reqCtx) => {
    const name = acceptedString(reqCtx, "user_name", "name");
    if (name) return text(`Hello, ${name}!`);
    return inputRequired({ inputRequests: { user_name: elicitName() } }) as never;
  });
  tool("test_input_required_result_sampling", "Asks the client's model a question.", async (_a, reqCtx) => {
    const v = inputResponse(reqCtx.mcpReq.inputResponses, "capital_question");
    if (v.kind === "sampling") {
      const c = v.result.content as { type?: string; text?: string } | { type?: string; text?: string }[];
      const first = Array.isArray(c) ? c[0] : c;
      return text(`The model answered: ${first?.type === "text" ? String(first.text).slice(0, 500) : "(no text)"}`);
    }
    return inputRequired({
      inputRequests: { capital_question: inputRequired.createMessage({ messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }], maxTokens: 100 }) },
    }) as never;
  });
  tool("test_input_required_result_list_roots", "Asks for the client's roots.", async (_a, reqCtx) => {
    const v = inputResponse(reqCtx.mcpReq.inputResponses, "client_roots");
    if (v.kind === "roots") return text(`The client has ${v.roots.length} root(s): ${v.roots.map((r) => r.uri).join(", ").slice(0, 500)}`);
    return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } }) as never;
  });
  tool("test_input_required_result_request_state", "Round-trips a sealed requestState.", async (_a, reqCtx) => {
    const p = principal();
    const state = fixtureState(reqCtx, "test_input_required_result_request_state", p);
    const v = inputResponse(reqCtx.mcpReq.inputResponses, "confirm");
    if (state && v.kind === "elicit") return text(`state-ok: the sealed state of round ${state.round} came back intact (answer: ${v.action}).`);
    return inputRequired({
      inputRequests: { confirm: inputRequired.elicit({ mode: "form", message: "Please confirm", requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] } as never }) },
      requestState: await seal(reqCtx, p, "test_input_required_result_request_state", 1),
    }) as never;
  });
  tool("test_input_required_result_multiple_inputs", "Asks for three inputs at once.", async (_a, reqCtx) => {
    const p = principal();
    const state = fixtureState(reqCtx, "test_input_required_result_multiple_inputs", p);
    const r = reqCtx.mcpReq.inputResponses ?? {};
    if (state && ["user_name", "greeting", "client_roots"].every((k) => k in r)) return text("All three inputs were received.");
    return inputRequired({
      inputRequests: {
        user_name: elicitName(),
        greeting: inputRequired.createMessage({ messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }], maxTokens: 50 }),
        client_roots: inputRequired.listRoots(),
      },
      requestState: await seal(reqCtx, p, "test_input_required_result_multiple_inputs", 1),
    }) as never;
  });
  tool("test_input_required_result_multi_round", "Two rounds of questions with evolving state.", async (_a, reqCtx) => {
    const p = principal();
    const state = fixtureState(reqCtx, "test_input_required_result_multi_round", p);
    if (state?.round === 2) {
      const color = acceptedString(reqCtx, "step2", "color");
      if (color) return text(`${String(state.data?.name)} likes ${color}.`);
    }
    const name = state?.round === 1 ? acceptedString(reqCtx, "step1", "name") : typeof state?.data?.name === "string" ? state.data.name : undefined;
    if (name) {
      return inputRequired({
        inputRequests: {
          step2: inputRequired.elicit({ mode: "form", message: "Step 2: What is your favorite color?", requestedSchema: { type: "object", properties: { color: { type: "string" } }, required: ["color"] } as never }),
        },
        requestState: await seal(reqCtx, p, "test_input_required_result_multi_round", 2, { name }),
      }) as never;
    }
    return inputRequired({
      inputRequests: { step1: elicitName("Step 1: What is your name?") },
      requestState: await seal(reqCtx, p, "test_input_required_result_multi_round", 1),
    }) as never;
  });
  tool("test_input_required_result_tampered_state", "Refuses a tampered requestState.", async (_a, reqCtx) => {
    const p = principal();
    const state = fixtureState(reqCtx, "test_input_required_result_tampered_state", p);
    const name = acceptedString(reqCtx, "user_name", "name");
    if (state && name) return text(`Hello, ${name}! The state was intact.`);
    return inputRequired({ inputRequests: { user_name: elicitName() }, requestState: await seal(reqCtx, p, "test_input_required_result_tampered_state", 1) }) as never;
  });
  tool("test_input_required_result_capabilities", "Asks only for what the client declared.", async (_a, reqCtx) => {
    const c = caps(reqCtx);
    const requests: Record<string, ReturnType<typeof inputRequired.listRoots>> = {};
    if (c.elicitation) requests.user_name = elicitName();
    if (c.sampling) requests.greeting = inputRequired.createMessage({ messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }], maxTokens: 50 });
    if (c.roots) requests.client_roots = inputRequired.listRoots();
    const answered = Object.keys(requests).some((k) => k in (reqCtx.mcpReq.inputResponses ?? {}));
    if (Object.keys(requests).length === 0 || answered) return text("Nothing more to ask this client.");
    return inputRequired({ inputRequests: requests }) as never;
  });

  // ---- MRTR, then a task (SEP-2663 composition) ------------------------------------------------------------
  tool("test_tool_with_task", "Asks for a name over MRTR, then greets in an approval task.", async (_a, reqCtx) => {
    const p = principal();
    if (!declaresTasksExtension(clientCapabilities(reqCtx))) throw tasksRequired();
    const state = fixtureState(reqCtx, "test_tool_with_task", p);
    const name = state ? acceptedString(reqCtx, "user_name", "name") : undefined;
    if (!name) return inputRequired({ inputRequests: { user_name: elicitName() }, requestState: await seal(reqCtx, p, "test_tool_with_task", 1) }) as never;
    const now = new Date();
    try {
      const outcome = await callTool(p, "greet_later", { name }, { tasks: true }, now);
      return outcomeToWire(outcome, p, "greet_later", { name }, reqCtx, now);
    } catch (e) {
      logFailure("test_tool_with_task", e);
      return toolError("Internal error while opening the task.");
    }
  });

  // ---- resources --------------------------------------------------------------------------------------------
  server.registerResource("static-text", "test://static-text", { title: "Static text", description: "A static text resource", mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "This is the content of the static text resource." }],
  }));
  server.registerResource("static-binary", "test://static-binary", { title: "Static binary", description: "A static binary resource (PNG)", mimeType: "image/png" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG }],
  }));
  server.registerResource("watched-resource", "test://watched-resource", { title: "Watched resource", description: "A resource clients may watch", mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched resource content." }],
  }));
  server.registerResource(
    "template-data",
    new ResourceTemplate("test://template/{id}/data", { list: undefined }),
    { title: "Template data", description: "Data for an id", mimeType: "application/json" },
    async (uri, vars) => ({
      contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ id: String(vars.id), templateTest: true, data: `Data for ID: ${String(vars.id)}` }) }],
    }),
  );

  // ---- prompts ------------------------------------------------------------------------------------------------
  server.registerPrompt("test_simple_prompt", { title: "Simple prompt", description: "A prompt without arguments" }, () => ({
    messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }],
  }));
  server.registerPrompt(
    "test_prompt_with_arguments",
    {
      title: "Prompt with arguments",
      description: "A prompt with two arguments",
      argsSchema: z.object({
        arg1: completable(z.string().describe("First test argument"), (v: string) => ["paris", "park", "party"].filter((s) => s.startsWith(v ?? ""))),
        arg2: z.string().describe("Second test argument"),
      }),
    },
    ({ arg1, arg2 }: { arg1: string; arg2: string }) => ({
      messages: [{ role: "user", content: { type: "text", text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }],
    }),
  );
  server.registerPrompt(
    "test_prompt_with_embedded_resource",
    { title: "Prompt with embedded resource", description: "Embeds a resource", argsSchema: z.object({ resourceUri: z.string().describe("URI of the resource to embed") }) },
    ({ resourceUri }: { resourceUri: string }) => ({
      messages: [
        { role: "user", content: { type: "resource", resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." } } },
        { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
      ],
    }),
  );
  server.registerPrompt("test_prompt_with_image", { title: "Prompt with image", description: "Carries an image" }, () => ({
    messages: [
      { role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
      { role: "user", content: { type: "text", text: "Please analyze the image above." } },
    ],
  }));
  server.registerPrompt("test_input_required_result_prompt", { title: "Prompt needing input", description: "Asks for context before it is built" }, ((reqCtx: ServerContext) => {
    const context = acceptedString(reqCtx, "user_context", "context");
    if (context) return { messages: [{ role: "user", content: { type: "text", text: `Use this context: ${context}` } }] };
    return inputRequired({
      inputRequests: {
        user_context: inputRequired.elicit({ mode: "form", message: "What context should the prompt use?", requestedSchema: { type: "object", properties: { context: { type: "string" } }, required: ["context"] } as never }),
      },
    });
  }) as never);
}
