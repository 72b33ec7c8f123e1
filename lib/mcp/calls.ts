/**
 * One tools/call of a gated tool, on the wire: the MRTR round for submission input (sealed, bound, single-use
 * requestState), then lib/tasks/call, then the outcome as a CallToolResult, a CreateTaskResult or an
 * InputRequiredResult. Shared by the registry tools (./server), the degraded-path tools (./degraded) and the
 * conformance fixtures (./conformance).
 */
import { DATABASE_UNAVAILABLE } from "../db/unavailable";
import { logFailure as logFailureOnly } from "../log";
import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  inputRequired,
  inputResponse,
  type CallToolResult,
  type AuthInfo,
  type ServerContext,
  type StandardSchemaWithJSON,
} from "@modelcontextprotocol/server";
import type { SubmissionInput } from "../approvals/backend";
import { callTool, parseSubmissionInput, type CallProgress } from "../tasks/call";
import type { CompiledPolicy } from "../policy/evaluate";
import { consumeRequestState } from "../tasks/request-state";
import type { CallOutcome, InputQuestion, Principal } from "../tasks/types";
import { noteUnavailable } from "./unavailable";
import { invalidState, newCallState, requireMatchingCall, sealState, type SealedState } from "./request-state";
import {
  CLIENT_CAPABILITIES_KEY,
  TASKS_EXTENSION,
  createTaskResultToWire,
  declaresFormElicitation,
  declaresTasksExtension,
  toolResultToWire,
} from "./wire";

/** Tools that only run as tasks: a client without the tasks extension gets -32021 instead of a degraded result. */
const TASK_REQUIRED = new Set(["failing_job"]);

/** Whether `tool` runs only as a task (so a client without the tasks extension is refused with -32021). */
export function needsTasksExtension(tool: string): boolean {
  return TASK_REQUIRED.has(tool);
}

/**
 * What a tools/call reads of its request: the SDK's ServerContext is one, and so is the context of a call answered
 * without the SDK's server (./direct-call).
 */
export type CallContext = {
  mcpReq: Pick<ServerContext["mcpReq"], "method" | "envelope" | "requestState" | "inputResponses">;
  http?: { authInfo?: AuthInfo };
};

export function clientCapabilities(reqCtx: CallContext): unknown {
  const envelope = reqCtx.mcpReq.envelope as Record<string, unknown> | undefined;
  return envelope?.[CLIENT_CAPABILITIES_KEY];
}

export function tasksRequired(): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } as never,
    `This request needs the ${TASKS_EXTENSION} extension in the request's client capabilities`,
  );
}

export async function callToolHandler(principal: Principal, tool: string, args: unknown, reqCtx: CallContext, policy?: CompiledPolicy): Promise<CallToolResult> {
  const tasks = declaresTasksExtension(clientCapabilities(reqCtx));
  if (!tasks && needsTasksExtension(tool)) throw tasksRequired();
  const now = new Date();
  const progress: CallProgress = { stage: "deciding" };
  let outcome: CallOutcome;
  try {
    const answered = await submissionAnswer(principal, tool, args, reqCtx, now);
    if ("result" in answered) return answered.result;
    outcome = await callTool(principal, tool, args, { tasks, input: answered.input, policy, progress }, now);
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    logFailure("tools/call", err);
    return toolError(failedCallText(progress.stage, noteUnavailable(err)));
  }
  return outcomeToWire(outcome, principal, tool, args, reqCtx, now);
}

/** What a call that failed says: why (the database, or an internal error) and, by how far it got, what happened. */
export function failedCallText(stage: CallProgress["stage"], databaseUnavailable: boolean): string {
  const why = databaseUnavailable ? "The database is unavailable right now, so this call could not be completed." : "Internal error while processing this call.";
  switch (stage) {
    case "deciding":
      return `${why} The tool did not run and nothing was submitted for approval. Retry later.`;
    case "submitting":
      return `${why} The tool did not run. Whether the approval request was recorded is unknown. Do not retry automatically.`;
    case "running":
      return `${why} Whether the tool ran is unknown. Do not retry automatically.`;
    case "ran":
      return `${why} The tool ran, but recording the call did not complete. Do not retry it.`;
  }
}

/** Maps what callTool decided to the wire: a result, a CreateTaskResult, or an MRTR question. */
export async function outcomeToWire(
  outcome: CallOutcome,
  principal: Principal,
  bindingTool: string,
  bindingArgs: unknown,
  reqCtx: CallContext,
  now: Date,
): Promise<CallToolResult> {
  switch (outcome.kind) {
    case "result":
      return toolResultToWire(outcome.outcome) as CallToolResult;
    case "approval-required":
      return toolResultToWire({
        ...outcome.outcome,
        text:
          `${outcome.outcome.text} Alternatively, open the approval request with the request_access tool ` +
          `({"tool": "${bindingTool}", "arguments": <the same arguments>}) and follow it with get_request_status.`,
      }) as CallToolResult;
    case "task":
      // A flat CreateTaskResult; the SDK's CallToolResult type does not know resultType "task".
      return createTaskResultToWire(outcome.task, outcome.modelMessage) as unknown as CallToolResult;
    case "input-required":
      return askSubmissionInput(principal, bindingTool, bindingArgs, outcome.key, outcome.question, reqCtx, now);
  }
}

/**
 * Submission input before the task (SEP "Collecting submission input", MRTR): the question goes out as a form
 * elicitation with a sealed requestState bound to this principal, tool and arguments. Only asked of a client that
 * declared form elicitation in this request's capabilities; any other client gets a tool error that says why.
 */
async function askSubmissionInput(
  principal: Principal,
  tool: string,
  args: unknown,
  key: string,
  question: InputQuestion,
  reqCtx: CallContext,
  now: Date,
): Promise<CallToolResult> {
  if (!declaresFormElicitation(clientCapabilities(reqCtx))) {
    return toolError(
      `${question.message} This client did not declare form elicitation, so it cannot be asked; nothing was submitted and the tool did not run. ` +
        (tool === "request_access"
          ? "Call request_access again with a justification argument (10 to 500 characters) and, if there is one, a ticket."
          : "Retry from a client that supports form elicitation, or use request_access with a justification argument."),
    );
  }
  const requestState = await sealState(newCallState(principal, tool, args, key, now), reqCtx);
  return inputRequired({
    inputRequests: { [key]: inputRequired.elicit({ mode: "form", message: question.message, requestedSchema: question.requestedSchema as never }) },
    requestState,
  }) as unknown as CallToolResult;
}

/**
 * Reads an MRTR retry. No requestState: any inputResponses are answers to a question never asked and are ignored
 * (the call asks again). A requestState: verified by the SDK already; it must be a state of this principal, tool
 * and arguments (else -32602), and it is consumed exactly once when its answer is accepted (a replay is -32602).
 * A missing or unfit answer asks again; a declined question ends the call without submitting anything.
 */
export async function submissionAnswer(
  principal: Principal,
  tool: string,
  args: unknown,
  reqCtx: CallContext,
  now: Date,
): Promise<{ input?: SubmissionInput } | { result: CallToolResult }> {
  const raw = reqCtx.mcpReq.requestState<SealedState>();
  if (raw === undefined) return {};
  const state = requireMatchingCall(raw, principal, tool, args, now);
  const view = inputResponse(reqCtx.mcpReq.inputResponses, state.k);
  if (view.kind !== "elicit") return {};
  if (view.action !== "accept") {
    if (!(await consumeRequestState(state.n, new Date(state.x), now))) throw invalidState();
    return { result: toolError("The question was declined, so nothing was submitted for approval and the tool did not run.") };
  }
  const input = parseSubmissionInput(view.content);
  if (!input) return {};
  if (!(await consumeRequestState(state.n, new Date(state.x), now))) throw invalidState();
  return { input };
}

export function toolError(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/**
 * A Standard Schema that advertises the registry's JSON Schema in tools/list but accepts any arguments: the
 * domain's callTool validates them (so a malformed call is refused, and audited, by the same code as any other).
 */
export function advertisedOnly(jsonSchema: Record<string, unknown>): StandardSchemaWithJSON<unknown, unknown> {
  return {
    "~standard": {
      version: 1,
      vendor: "countersign",
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: () => jsonSchema, output: () => jsonSchema },
    },
  };
}

export function requirePrincipal(p: Principal | null): Principal {
  // The route authenticates every request before the factory runs; this is a second lock, not a code path.
  if (!p) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, "Unauthenticated");
  return p;
}

/** Runs a domain call; an unexpected failure becomes a bare -32603 (no message or stack to the client). */
export async function guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ProtocolError) throw err;
    logFailure(what, err);
    if (noteUnavailable(err)) throw new ProtocolError(ProtocolErrorCode.InternalError, `${DATABASE_UNAVAILABLE} ${GUARDED_OUTCOME[what] ?? READ_ONLY_OUTCOME}`);
    throw new ProtocolError(ProtocolErrorCode.InternalError, "Internal error");
  }
}

const READ_ONLY_OUTCOME = "Nothing was changed and no tool ran. Retry later.";
/** What an unavailable database leaves undecided, by the guarded call that writes. */
const GUARDED_OUTCOME: Record<string, string> = {
  "tasks/update": "No tool ran. Whether the answer was recorded is unknown: read the task with tasks/get once the service is back.",
  "tasks/cancel": "No tool ran. Whether the cancellation was recorded is unknown: read the task with tasks/get once the service is back.",
  answer_request: "No tool ran. Whether the answer was recorded is unknown: read the request with get_request_status once the service is back.",
};

/** Logs where and the error's class only (lib/log.ts): messages can quote arguments, stacks carry paths. */
export function logFailure(what: string, err: unknown): void {
  logFailureOnly(`mcp ${what}`, err);
}
