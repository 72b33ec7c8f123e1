/**
 * The degraded path as ordinary tools, for clients that do not drive the tasks extension (SEP "Client maturity":
 * a server MAY expose approval as ordinary tools; the SEP does not standardize their shape):
 *
 *   request_access     {tool, arguments, justification?, ticket?}  opens the approval request exactly as a tasks
 *                      client's tools/call would (same policy, dedup, limits, submission input) and returns the
 *                      request id (the task id), its status and how often to poll
 *   get_request_status {request_id}  the status and, once completed, the outcome: whether the tool ran, in words
 *                      and in structuredContent, with the disposition in _meta
 *   answer_request     {request_id, answers}  answers a reviewer's questions (what tasks/update does)
 *
 * Only the agent that opened a request can read or answer it; any other id reads as unknown.
 */
import type { CallToolResult, ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { SubmissionInput } from "../approvals/backend";
import { UnknownToolError, callTool, parseSubmissionInput } from "../tasks/call";
import { argumentsProblem, describeIssues } from "../tools/check-arguments";
import { getTask } from "../tasks/get";
import type { CallOutcome, Disposition, Principal, TaskView } from "../tasks/types";
import { updateTask } from "../tasks/update";
import { advertisedOnly, guard, logFailure, outcomeToWire, submissionAnswer, toolError } from "./calls";
import type { ToolTable } from "./tool-table";
import { DISPOSITION_KEY, toolResultToWire } from "./wire";

export const DEGRADED_TOOLS = ["request_access", "get_request_status", "answer_request"] as const;

const RequestAccess = z
  .object({
    tool: z.string().min(1).max(64),
    arguments: z.record(z.string(), z.unknown()).default({}),
    justification: z.string().max(500).optional(),
    ticket: z.string().max(40).optional(),
  })
  .strict();
const RequestId = z.object({ request_id: z.string().min(1).max(200) }).strict();
const Answer = z.object({
  request_id: z.string().min(1).max(200),
  answers: z.record(z.string(), z.union([z.string().max(1000), z.record(z.string(), z.unknown())])),
});

const REQUEST_ACCESS_SCHEMA = {
  type: "object",
  properties: {
    tool: { type: "string", description: "The name of the tool the call needs approval for" },
    arguments: { type: "object", description: "The exact arguments of that call", additionalProperties: true },
    justification: { type: "string", description: "Why the call is needed (10 to 500 characters); some rules require it", maxLength: 500 },
    ticket: { type: "string", description: "A ticket reference, for example SUP-1234 (optional)", maxLength: 40 },
  },
  required: ["tool"],
  additionalProperties: false,
};
const REQUEST_ID_SCHEMA = {
  type: "object",
  properties: { request_id: { type: "string", description: "The request id request_access returned" } },
  required: ["request_id"],
  additionalProperties: false,
};
const ANSWER_SCHEMA = {
  type: "object",
  properties: {
    request_id: { type: "string", description: "The request id request_access returned" },
    answers: {
      type: "object",
      description: "One entry per question key get_request_status listed: a text answer, or an object of the question's fields",
      additionalProperties: true,
    },
  },
  required: ["request_id", "answers"],
  additionalProperties: false,
};

export function registerDegradedTools(tools: ToolTable, principal: () => Principal): void {
  tools.add(
    "request_access",
    {
      title: "Request access for a tool call",
      description:
        "Opens an approval request for a tool call that needs approval, for clients that do not use the MCP tasks extension. " +
        "Returns a request id; follow it with get_request_status. The call runs only after approval.",
      inputSchema: advertisedOnly(REQUEST_ACCESS_SCHEMA),
    },
    (args, reqCtx) => requestAccess(principal(), args, reqCtx),
  );
  tools.add(
    "get_request_status",
    {
      title: "Get the status of an approval request",
      description: "The status of a request opened with request_access and, once it is decided, whether the tool ran and its result.",
      inputSchema: advertisedOnly(REQUEST_ID_SCHEMA),
    },
    (args) => requestStatus(principal(), args),
  );
  tools.add(
    "answer_request",
    {
      title: "Answer a reviewer's question",
      description: "Answers the questions a reviewer asked about a request opened with request_access (get_request_status lists them).",
      inputSchema: advertisedOnly(ANSWER_SCHEMA),
    },
    (args) => answerRequest(principal(), args),
  );
}

async function requestAccess(principal: Principal, raw: unknown, reqCtx: ServerContext): Promise<CallToolResult> {
  const problem = argumentsProblem(raw ?? {});
  if (problem) return toolError(`Invalid arguments for request_access: ${problem}. Nothing was submitted and the tool did not run.`);
  const parsed = RequestAccess.safeParse(raw ?? {});
  if (!parsed.success) return toolError(`Invalid arguments for request_access: ${describeIssues(parsed.error)}. Nothing was submitted.`);
  const { tool, arguments: args, justification, ticket } = parsed.data;
  if ((DEGRADED_TOOLS as readonly string[]).includes(tool)) return toolError(`request_access opens requests for the server's other tools, not for ${tool}.`);
  const now = new Date();
  // The binding of an MRTR question asked through request_access: the inner tool and its exact arguments.
  const binding = { tool, arguments: args };
  let input: SubmissionInput | undefined;
  if (justification !== undefined) {
    const given = parseSubmissionInput({ justification, ...(ticket !== undefined ? { ticket } : {}) });
    if (!given) return toolError("justification must be 10 to 500 characters and ticket at most 40. Nothing was submitted.");
    input = given;
  } else {
    const answered = await submissionAnswer(principal, "request_access", binding, reqCtx, now);
    if ("result" in answered) return answered.result;
    input = answered.input;
  }
  let outcome: CallOutcome;
  try {
    outcome = await callTool(principal, tool, args, { tasks: true, input }, now);
  } catch (e) {
    if (e instanceof UnknownToolError) return toolError(`There is no tool named ${tool.slice(0, 64)}. Nothing was submitted.`);
    logFailure("request_access", e);
    return toolError("Internal error while opening the request; whether it was opened is unknown. Do not retry automatically.");
  }
  switch (outcome.kind) {
    case "task":
      return requestOpened(outcome.task);
    case "result":
      if (!outcome.outcome.isError) {
        return toolResultToWire({ ...outcome.outcome, text: `No approval was needed, so the call was executed at once: ${outcome.outcome.text}` }) as CallToolResult;
      }
      return toolResultToWire(outcome.outcome) as CallToolResult;
    default:
      return outcomeToWire(outcome, principal, "request_access", binding, reqCtx, now);
  }
}

function requestOpened(task: TaskView): CallToolResult {
  const seconds = Math.max(1, Math.round(task.pollIntervalMs / 1000));
  return {
    content: [
      {
        type: "text",
        text:
          `Approval requested. Request id: ${task.taskId}. Status: ${task.status}. ${task.statusMessage ?? "The tool has not run."} ` +
          `Check the request with get_request_status {"request_id": "${task.taskId}"} about every ${seconds} s; ` +
          "keep the request id, it is the only way back to this request.",
      },
    ],
    structuredContent: { request_id: task.taskId, status: task.status, poll_interval_ms: task.pollIntervalMs, tool_ran: "no" },
    isError: false,
  };
}

async function requestStatus(principal: Principal, raw: unknown): Promise<CallToolResult> {
  const problem = argumentsProblem(raw ?? {});
  if (problem) return toolError(`Invalid arguments for get_request_status: ${problem}.`);
  const parsed = RequestId.safeParse(raw ?? {});
  if (!parsed.success) return toolError(`Invalid arguments for get_request_status: ${describeIssues(parsed.error)}.`);
  const task = await guard("get_request_status", () => getTask(principal, parsed.data.request_id, new Date()));
  if (!task) return toolError("Unknown request id. Only the agent that opened a request can read it.");
  return statusResult(task);
}

const RAN: Record<Disposition, { words: string; ran: "yes" | "no" | "maybe" }> = {
  "approved-executed": { words: "It was approved and the tool ran once.", ran: "yes" },
  "denied-not-executed": { words: "It was not approved in time or was denied; the tool did not run.", ran: "no" },
  "execution-error": { words: "It was approved and the tool ran, but failed; a side effect may have occurred.", ran: "yes" },
  "outcome-unknown": { words: "It was approved, but whether the tool ran is unknown; it may have run.", ran: "maybe" },
};

export function statusResult(task: TaskView): CallToolResult {
  const id = task.taskId;
  const base = { request_id: id, status: task.status };
  switch (task.status) {
    case "working": {
      const seconds = Math.max(1, Math.round(task.pollIntervalMs / 1000));
      return {
        content: [{ type: "text", text: `Request ${id} is pending (working). ${task.statusMessage ?? "The tool has not run."} Check again in about ${seconds} s.` }],
        structuredContent: { ...base, poll_interval_ms: task.pollIntervalMs, tool_ran: "no" },
        isError: false,
      };
    }
    case "input_required": {
      const questions = Object.entries(task.inputRequests ?? {});
      const listed = questions.map(([k, q]) => `${k}: ${q.message}`).join(" ");
      return {
        content: [
          {
            type: "text",
            text: `Request ${id} is waiting for an answer before the reviewer decides. ${listed} Answer with answer_request {"request_id": "${id}", "answers": {"<key>": "<answer>"}}. The tool has not run.`,
          },
        ],
        structuredContent: { ...base, questions: Object.fromEntries(questions.map(([k, q]) => [k, { message: q.message, schema: q.requestedSchema }])), tool_ran: "no" },
        isError: false,
      };
    }
    case "completed": {
      const r = task.result!;
      const d = r.disposition ? RAN[r.disposition] : { words: "It has finished; treat it as possibly executed.", ran: "maybe" as const };
      return {
        content: [{ type: "text", text: `Request ${id} is completed. ${d.words} ${r.text}` }],
        structuredContent: { ...base, disposition: r.disposition ?? null, tool_ran: d.ran, result: { text: r.text, isError: r.isError, ...(r.structured ? { structured: r.structured } : {}) } },
        isError: r.isError,
        ...(r.disposition ? { _meta: { [DISPOSITION_KEY]: r.disposition } } : {}),
      };
    }
    case "failed":
      return {
        content: [{ type: "text", text: `Request ${id} failed before anything ran: ${task.error?.message ?? "an internal error"} The tool did not run; the request may be opened again.` }],
        structuredContent: { ...base, tool_ran: "no", error: task.error ?? null },
        isError: true,
      };
    case "cancelled":
      return {
        content: [{ type: "text", text: `Request ${id} was cancelled. The tool did not run.` }],
        structuredContent: { ...base, tool_ran: "no" },
        isError: true,
      };
  }
}

async function answerRequest(principal: Principal, raw: unknown): Promise<CallToolResult> {
  const problem = argumentsProblem(raw ?? {});
  if (problem) return toolError(`Invalid arguments for answer_request: ${problem}. Nothing was recorded.`);
  const parsed = Answer.safeParse(raw ?? {});
  if (!parsed.success) return toolError(`Invalid arguments for answer_request: ${describeIssues(parsed.error)}.`);
  const now = new Date();
  const task = await guard("answer_request", () => getTask(principal, parsed.data.request_id, now));
  if (!task) return toolError("Unknown request id. Only the agent that opened a request can answer it.");
  const questions = task.inputRequests ?? {};
  const responses: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed.data.answers)) {
    if (!questions[key]) continue;
    if (typeof value === "string") {
      // A text answer fills the question's only field.
      const fields = Object.keys((questions[key].requestedSchema as { properties?: object }).properties ?? {});
      if (fields.length !== 1) return toolError(`${key} asks for several fields (${fields.join(", ")}); answer it with an object.`);
      responses[key] = { action: "accept", content: { [fields[0]]: value } };
    } else {
      responses[key] = { action: "accept", content: value };
    }
  }
  if (Object.keys(responses).length === 0) return toolError(`Request ${task.taskId} has no outstanding question with those keys. ${statusText(task)}`);
  const r = await guard("answer_request", () => updateTask(principal, task.taskId, responses, now));
  if (!r.ok) return toolError(`The answer was not recorded: ${r.message}`);
  return statusResult(r.task);
}

function statusText(task: TaskView): string {
  return (statusResult(task).content[0] as { text: string }).text;
}
