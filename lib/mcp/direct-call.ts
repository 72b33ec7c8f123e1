/**
 * A plain 2026-07-28 `tools/call`, answered without the SDK's per-request server.
 *
 * The SDK answers every request by building a server for it, connecting a single-exchange transport and
 * dispatching through its protocol layer; for the commonest request of all, a tool call with nothing but a name,
 * arguments and the per-request envelope, that machinery costs more than everything Countersign decides about the
 * call (about 0.6 ms of the gateway's overhead on this project's machine, `npm run bench:gateway`). The call itself
 * is the same: `callToolHandler` (./calls), the same policy, record and wire shapes.
 *
 * Only a request that cannot be answered differently here is taken (`plainToolCall`): POST with a JSON body; one
 * JSON-RPC request whose members are exactly `jsonrpc`, `id`, `method`, `params`; `method` "tools/call"; the
 * MCP-Protocol-Version, Mcp-Method and Mcp-Name headers present and naming this revision, this method and this
 * tool; `params` holding only `name`, `arguments` (an object) and `_meta`, and `_meta` only the envelope's three
 * keys (no requestState or inputResponses, no progress token, no trace context); and the SDK's own classifier
 * (`classifyInboundRequest`) taking it as a modern request of this revision, so the envelope is valid (its answer
 * is kept per envelope). Then `directCallAnswer` takes it only for a tool of the catalog whose advertised input
 * schema declares no `x-mcp-header` parameter and that the client's capabilities allow. Conformance mode included,
 * so the official suite and the SEP's scenarios in tests/conformance exercise it; the suite's fixtures outside the
 * catalog go to the SDK. Everything else (malformed requests included) goes to the SDK, which answers it as it
 * always did.
 *
 * The answer is encoded as the SDK encodes a 2026-07-28 tools/call result: an empty `content` for a result
 * without one (a CreateTaskResult), the text fallback for a non-object `structuredContent`, `resultType` stamped
 * "complete" unless the result names its own, the server's identity in `_meta`, a 200 JSON-RPC response.
 * `lib/mcp/direct-call.test.ts` sends each kind of call both ways and requires the same status, content type and
 * body.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  classifyInboundRequest,
  isInputRequiredResult,
  isJsonContentType,
  type AuthInfo,
  type CallToolResult,
} from "@modelcontextprotocol/server";
import { currentPolicy } from "../policy/store";
import { conformanceMode } from "../tools/conformance-fixtures";
import { getTool, inputSchemaOf } from "../tools/catalog";
import type { ToolDef } from "../tools/types";
import { policyHeadOf, principalOf } from "./auth";
import { callToolHandler, needsTasksExtension, type CallContext } from "./calls";
import { ensureConformanceData } from "./conformance/seed";
import { handled } from "./tool-table";
import { SERVER_INFO } from "./server";
import { declaresTasksExtension } from "./wire";

/**
 * Whether plain calls are answered here: unless COUNTERSIGN_DIRECT_CALLS=0 (every request then goes to the SDK, as
 * the comparison in the tests and the benchmark do).
 */
export function directCalls(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.COUNTERSIGN_DIRECT_CALLS !== "0";
}

/** A request `plainToolCall` took: what the call needs, nothing else. */
export type PlainToolCall = { id: string | number; name: string; args: Record<string, unknown>; envelope: Record<string, unknown> };

/** The revision whose encoding `encodeResult` reproduces: a request of any other goes to the SDK. */
const REVISION = "2026-07-28";

const MESSAGE_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const PARAM_KEYS = new Set(["name", "arguments", "_meta"]);
const ENVELOPE_KEYS = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY]);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function onlyKeys(o: Record<string, unknown>, allowed: Set<string>): boolean {
  for (const k of Object.keys(o)) if (!allowed.has(k)) return false;
  return true;
}

/** The header's value as the SDK reads it (optional whitespace around it stripped), or undefined. */
function header(request: Request, name: string): string | undefined {
  return request.headers.get(name)?.trim();
}

/**
 * The request as a plain tools/call of this revision, or null when anything about it is not plain (the SDK then
 * answers it). `body` is the request's body, already parsed.
 */
export function plainToolCall(request: Request, body: unknown): PlainToolCall | null {
  if (request.method !== "POST" || !isJsonContentType(request.headers.get("content-type"))) return null;
  if (!isPlainObject(body) || !onlyKeys(body, MESSAGE_KEYS) || body.jsonrpc !== "2.0" || body.method !== "tools/call") return null;
  const id = body.id;
  if (!(typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)))) return null;
  const params = body.params;
  if (!isPlainObject(params) || !onlyKeys(params, PARAM_KEYS)) return null;
  const { name, arguments: args, _meta: envelope } = params;
  if (typeof name !== "string" || name === "") return null;
  if (args !== undefined && !isPlainObject(args)) return null;
  if (!isPlainObject(envelope) || !onlyKeys(envelope, ENVELOPE_KEYS)) return null;
  const version = header(request, "mcp-protocol-version");
  if (version !== REVISION || header(request, "mcp-method") !== "tools/call" || header(request, "mcp-name") !== name) return null;
  if (!envelopeAccepted(envelope)) return null;
  return { id, name, args: args ?? {}, envelope };
}

/**
 * Whether the SDK's classifier takes a plain call with this envelope as a modern request of REVISION. It reads the
 * envelope (the revision it claims, the client's information and capabilities) against the headers, which
 * `plainToolCall` has required to be exactly these, and the rest of the body only for its JSON-RPC shape, which
 * `plainToolCall` has checked more strictly; so its answer depends on the envelope alone. A client sends the same
 * envelope with every call: the answer is kept per envelope (its JSON text), for at most 256 envelopes.
 */
function envelopeAccepted(envelope: Record<string, unknown>): boolean {
  const key = JSON.stringify(envelope);
  let accepted = verdicts.get(key);
  if (accepted === undefined) {
    const body = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "tool", _meta: envelope } };
    const route = classifyInboundRequest({ httpMethod: "POST", protocolVersionHeader: REVISION, mcpMethodHeader: "tools/call", mcpNameHeader: "tool", body });
    accepted = route.kind === "modern" && route.classification.revision === REVISION;
    if (verdicts.size >= 256) verdicts.clear();
    verdicts.set(key, accepted);
  }
  return accepted;
}
const verdicts = new Map<string, boolean>();

/** Whether the tool's advertised input schema declares a header-mapped parameter (the SDK checks those headers). */
function declaresHeaderParams(tool: ToolDef): boolean {
  let known = headerParams.get(tool);
  if (known === undefined) {
    known = /x-mcp-header/i.test(JSON.stringify(inputSchemaOf(tool)));
    headerParams.set(tool, known);
  }
  return known;
}
const headerParams = new WeakMap<ToolDef, boolean>();

/**
 * Runs a plain tool call for the authenticated agent and answers it, or null when the call is not one this module
 * answers (the SDK then does, and nothing has happened yet).
 */
export async function directCallAnswer(call: PlainToolCall, authInfo: AuthInfo): Promise<Response | null> {
  const principal = principalOf(authInfo);
  const tool = getTool(call.name);
  if (!principal || !tool || declaresHeaderParams(tool)) return null;
  const capabilities = call.envelope[CLIENT_CAPABILITIES_META_KEY];
  if (needsTasksExtension(tool.name) && !declaresTasksExtension(capabilities)) return null;
  const ctx: CallContext = {
    mcpReq: { method: "tools/call", envelope: call.envelope, requestState: () => undefined, inputResponses: undefined },
    http: { authInfo },
  };
  let policy;
  try {
    // As the SDK's path does in conformance mode (./server): the suite's fixture data first.
    if (conformanceMode()) await ensureConformanceData();
    policy = await currentPolicy(policyHeadOf(authInfo));
  } catch {
    // Nothing has happened yet: the SDK's path reads the policy again and answers its failure as it always has.
    return null;
  }
  // The handler throws a protocol error only for a task-only tool without the tasks extension or for a
  // requestState, both left to the SDK above.
  const result = await handled(tool.name, () => callToolHandler(principal, tool.name, call.args, ctx, policy));
  return Response.json({ jsonrpc: "2.0", id: call.id, result: encodeResult(result) }, { status: 200, headers: { "Content-Type": "application/json" } });
}

/** A tools/call result as the SDK encodes it on 2026-07-28. */
export function encodeResult(result: CallToolResult): Record<string, unknown> {
  const projected: Record<string, unknown> = isInputRequiredResult(result) ? result : textFallback(contentDefaulted(result));
  const stamped = projected.resultType === undefined ? { ...projected, resultType: "complete" } : projected;
  const meta = stamped._meta;
  if (meta === undefined) return { ...stamped, _meta: { [SERVER_INFO_META_KEY]: SERVER_INFO } };
  if (!isPlainObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return stamped;
  return { ...stamped, _meta: { ...meta, [SERVER_INFO_META_KEY]: SERVER_INFO } };
}

/** The SDK's rule for a result without `content` (a flat CreateTaskResult): it gains an empty one, unless it is of another family. */
function contentDefaulted(result: CallToolResult): CallToolResult {
  if (result.content !== undefined || ["task", "inputRequests", "requestState"].some((k) => k in result)) return result;
  return { ...result, content: [] };
}

/** A `structuredContent` that is not an object also goes out as text, unless the result already has text. */
function textFallback(result: CallToolResult): Record<string, unknown> {
  const sc = result.structuredContent as unknown;
  if (sc === undefined || (typeof sc === "object" && sc !== null && !Array.isArray(sc))) return result;
  if (result.content?.some((c) => c.type === "text")) return result;
  return { ...result, content: [...(result.content ?? []), { type: "text", text: JSON.stringify(sc) }] };
}
