/**
 * Domain -> wire: the JSON shapes of the tasks extension (SEP-2663) and the tool-approval extension, built from
 * the domain's own types. Pure functions, no SDK: lib/mcp/server.ts hands their output to the SDK unchanged.
 */
import type { Disposition, InputQuestion, TaskView, ToolOutcome } from "../tasks/types";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
export const TOOL_APPROVAL_EXTENSION = "io.modelcontextprotocol/tool-approval";
export const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
/** SEP-2643 structured authorization denial. */
export const AUTHORIZATION_KEY = "io.modelcontextprotocol/authorization";
export const DISPOSITION_KEY = "io.modelcontextprotocol/tool-approval-disposition";
export const MODEL_IMMEDIATE_RESPONSE_KEY = "io.modelcontextprotocol/model-immediate-response";

export type AuthorizationEnvelope = {
  reason: "insufficient_authorization";
  remediation: "available" | "unavailable";
  remediationHints?: { type: "task" }[];
};

export type CallToolResultWire = {
  content: { type: "text"; text: string }[];
  isError: boolean;
  structuredContent?: Record<string, unknown>;
  _meta?: { [DISPOSITION_KEY]?: Disposition; [AUTHORIZATION_KEY]?: AuthorizationEnvelope };
};

/** The task fields shared by CreateTaskResult and tasks/get (the SEP-2663 `Task`). */
export type TaskWire = {
  taskId: string;
  status: TaskView["status"];
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs: number;
};

export type CreateTaskResultWire = TaskWire & {
  resultType: "task";
  _meta: { [AUTHORIZATION_KEY]?: AuthorizationEnvelope; [MODEL_IMMEDIATE_RESPONSE_KEY]: string };
};

/** One embedded request of an input_required task (SEP-2663 `inputRequests`, the MRTR request shape). */
export type ElicitInputRequestWire = {
  method: "elicitation/create";
  params: { mode: "form"; message: string; requestedSchema: Record<string, unknown> };
};

/**
 * A completed task's inlined CallToolResult. The SDK stamps `resultType` only on the top level of what a handler
 * returns, and on 2026-07-28 every result carries one, the nested one included, so it is written here.
 */
export type TaskToolResultWire = CallToolResultWire & { resultType: "complete" };

/** A tasks/get result. No `resultType`: on 2026-07-28 the SDK stamps "complete" (a "task" here is refused). */
export type GetTaskResultWire = TaskWire & {
  result?: TaskToolResultWire;
  error?: { code: number; message: string };
  inputRequests?: Record<string, ElicitInputRequestWire>;
  _meta?: { [AUTHORIZATION_KEY]: AuthorizationEnvelope };
};

/** While a call is denied but approvable: the client may wait for the task. */
export function pendingEnvelope(): AuthorizationEnvelope {
  return { reason: "insufficient_authorization", remediation: "available", remediationHints: [{ type: "task" }] };
}

/** A terminal denial: the tool did not run and the client is not invited to retry. */
export function terminalDenialEnvelope(): AuthorizationEnvelope {
  return { reason: "insufficient_authorization", remediation: "unavailable" };
}

/**
 * An ordinary CallToolResult. The disposition, when the outcome has one, goes in `_meta`; a
 * `denied-not-executed` outcome also carries the SEP-2643 envelope with remediation "unavailable". The envelope
 * asserts that nothing ran, so it never appears on `execution-error` or `outcome-unknown`.
 */
export function toolResultToWire(outcome: ToolOutcome): CallToolResultWire {
  const wire: CallToolResultWire = {
    content: outcome.content && outcome.content.length > 0 ? (outcome.content as CallToolResultWire["content"]) : [{ type: "text", text: outcome.text }],
    isError: outcome.isError,
  };
  if (outcome.structured !== undefined) wire.structuredContent = outcome.structured;
  if (outcome.disposition !== undefined) {
    wire._meta = { [DISPOSITION_KEY]: outcome.disposition };
    if (outcome.disposition === "denied-not-executed") wire._meta[AUTHORIZATION_KEY] = terminalDenialEnvelope();
  }
  return wire;
}

export function taskToWire(task: TaskView): TaskWire {
  const wire: TaskWire = {
    taskId: task.taskId,
    status: task.status,
    createdAt: task.createdAt.toISOString(),
    lastUpdatedAt: task.lastUpdatedAt.toISOString(),
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
  };
  if (task.statusMessage !== undefined) wire.statusMessage = task.statusMessage;
  return wire;
}

/** The flat CreateTaskResult returned in place of the tool result for a requestable denial. */
export function createTaskResultToWire(task: TaskView, modelMessage: string): CreateTaskResultWire {
  const _meta: CreateTaskResultWire["_meta"] = {
    ...(task.pending ? { [AUTHORIZATION_KEY]: pendingEnvelope() } : {}),
    [MODEL_IMMEDIATE_RESPONSE_KEY]: modelMessage,
  };
  // resultType first, as in the SEP's example; key order is cosmetic.
  return { resultType: "task", ...taskToWire(task), _meta };
}

/**
 * A tasks/get result (the SEP-2663 DetailedTask): `result` inlined when completed, `error` when failed, the
 * pending envelope repeated while the call is still denied-but-approvable.
 */
export function getTaskResultToWire(task: TaskView): GetTaskResultWire {
  const wire: GetTaskResultWire = taskToWire(task);
  // A completed task always has a result and a failed one an error (the tasks extension requires them); a row
  // without one reads as what is known: the outcome is unknown, or an internal error.
  if (task.status === "completed") wire.result = { resultType: "complete", ...toolResultToWire(task.result ?? MISSING_RESULT) };
  if (task.status === "failed") wire.error = task.error ? { code: task.error.code, message: task.error.message } : { code: -32603, message: "Internal error" };
  if (task.status === "input_required") wire.inputRequests = inputRequestsToWire(task.inputRequests ?? {});
  if (task.pending) wire._meta = { [AUTHORIZATION_KEY]: pendingEnvelope() };
  return wire;
}

const MISSING_RESULT: ToolOutcome = {
  text: "The task finished but its result is not available; whether the tool ran is unknown. Do not retry automatically.",
  isError: true,
  disposition: "outcome-unknown",
};

/** A form-mode question as an embedded `elicitation/create` request. */
export function elicitRequestToWire(q: InputQuestion): ElicitInputRequestWire {
  return { method: "elicitation/create", params: { mode: "form", message: q.message, requestedSchema: q.requestedSchema } };
}

export function inputRequestsToWire(questions: Record<string, InputQuestion>): Record<string, ElicitInputRequestWire> {
  return Object.fromEntries(Object.entries(questions).map(([k, q]) => [k, elicitRequestToWire(q)]));
}

/**
 * Whether the per-request client capabilities let the server ask a form question: `elicitation: {}` (form only,
 * by the spec's default) or `elicitation: { form: {} }`. URL-only clients cannot answer a form.
 */
export function declaresFormElicitation(clientCapabilities: unknown): boolean {
  if (!isObject(clientCapabilities) || !isObject(clientCapabilities.elicitation)) return false;
  const e = clientCapabilities.elicitation;
  return Object.keys(e).length === 0 || isObject(e.form);
}

/** Whether the per-request client capabilities (`_meta` envelope) declare the tasks extension. */
export function declaresTasksExtension(clientCapabilities: unknown): boolean {
  if (!isObject(clientCapabilities)) return false;
  const extensions = clientCapabilities.extensions;
  return isObject(extensions) && isObject(extensions[TASKS_EXTENSION]);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
