/**
 * One tools/call, decided: validate the arguments, map the call onto the policy's resource, evaluate, then
 * execute at once (allow), refuse (deny), or open an approval task (requestable denial). The tool never runs on a
 * requestable denial.
 */
import { randomUUID } from "node:crypto";
import { db, direct } from "../db/client";
import { appendAudit, appendAuditWith } from "../audit/append";
import { digest } from "../canonical";
import { evaluate, type CompiledPolicy, type Decision, type ResourceView, type RuleRef } from "../policy/evaluate";
import { currentPolicy } from "../policy/store";
import { executedRecordWrite, historyCallOf, settleRecord, voidRecord, windowsApply, withHistory, type HistoryCall } from "../policy/history";
import { subjectOf } from "../auth/agents";
import { getTool, toolVersion } from "../tools/catalog";
import { countCall } from "../metrics";
import { ToolBusyError, ToolError, ToolOutcomeUnknownError, type ToolDef } from "../tools/types";
import type { SubmissionInput } from "../approvals/backend";
import { argumentsProblem, describeIssues } from "../tools/check-arguments";
import { SubmissionInProgress, createApprovalTask, type CreateInput } from "./create";
import { CallerLimitReached } from "./limits";
import type { CallOutcome, InputQuestion, Principal } from "./types";

export class UnknownToolError extends Error {
  constructor(name: string) {
    super(`Unknown tool: ${name.slice(0, 64)}`);
  }
}

function refused(text: string): CallOutcome {
  return { kind: "result", outcome: { text, isError: true } };
}

/** The key of the submission-input question a rule with requireJustification asks before submitting. */
export const SUBMISSION_INPUT_KEY = "approval_request";

export function submissionQuestion(reason: string): InputQuestion {
  return {
    message: `${reason} Before the request goes to reviewers, give a justification (and a ticket reference if there is one).`,
    requestedSchema: {
      type: "object",
      properties: {
        justification: { type: "string", title: "Justification", description: "Why this call is needed", minLength: 10, maxLength: 500 },
        ticket: { type: "string", title: "Ticket reference", description: "For example SUP-1234 (optional)", maxLength: 40 },
      },
      required: ["justification"],
    },
  };
}

/** Validates answers to submissionQuestion; null when they are missing or do not fit. */
export function parseSubmissionInput(content: unknown): SubmissionInput | null {
  // Anything but an object has no justification (a string or a number has no such property).
  const { justification, ticket } = (content ?? {}) as Record<string, unknown>;
  if (typeof justification !== "string" || justification.trim().length < 10 || justification.length > 500) return null;
  if (ticket !== undefined && (typeof ticket !== "string" || ticket.length > 40)) return null;
  return { justification: justification.trim(), ...(typeof ticket === "string" && ticket.trim() ? { ticket: ticket.trim() } : {}) };
}

export type CallOptions = {
  /** The client declared io.modelcontextprotocol/tasks in this request's capabilities. */
  tasks: boolean;
  /** Submission input answered on an MRTR retry (already checked against the sealed call binding). */
  input?: SubmissionInput;
  /**
   * The current policy as the request read it when it began (that statement synced the tool catalog too), so a
   * call costs no second read; read here when absent.
   */
  policy?: CompiledPolicy;
  /** Moved on as the call passes each point, so a caller that sees it fail can say whether the tool ran. */
  progress?: CallProgress;
};

/**
 * How far a call got: deciding (nothing ran, nothing submitted), running (the tool was started), ran (the tool
 * finished; recording it is what remains), submitting (the approval request is being written; the tool did not run).
 */
export type CallProgress = { stage: "deciding" | "running" | "ran" | "submitting" };

export async function callTool(principal: Principal, name: string, rawArgs: unknown, opts: CallOptions, now: Date): Promise<CallOutcome> {
  // The current policy, and with it (same statement) the current tool catalog.
  const policy = opts.policy ?? (await currentPolicy());
  const tool = getTool(name);
  if (!tool) {
    countCall(null, "deny");
    throw new UnknownToolError(name);
  }
  if (tool.held) return refused(tool.held);
  const problem = argumentsProblem(rawArgs ?? {});
  if (problem) return refused(`Invalid arguments for ${tool.name}: ${problem}. The tool did not run.`);
  const parsed = tool.schema.safeParse(rawArgs ?? {});
  if (!parsed.success) return refused(`Invalid arguments for ${tool.name}: ${describeIssues(parsed.error)}. The tool did not run.`);
  const args = parsed.data;
  let resource;
  try {
    resource = await tool.resource(args);
  } catch (e) {
    if (e instanceof ToolError) return refused(`${e.message} The tool did not run.`);
    throw e;
  }
  const subject = await subjectOf(principal);
  const argumentsDigest = digest(args);
  // Measure recent history, decide, and record the call in one short transaction that holds the history keys'
  // locks: two calls at the same instant cannot both count a window without the other.
  const submits = (d: Decision) => d.decision === "requestable" && opts.tasks && (!d.requirements.requireJustification || !!opts.input);
  const historyCall = { ...historyCallOf(tool, principal, resource), snapshot: { args, resource } };
  // When no window reads this tool, nothing needs counting first: an allowed call is recorded with its audit event
  // as it goes to the tool, and only a call that opens a task is recorded here (as pending).
  const counted = windowsApply(policy.document.history, tool.name);
  const { result: decision, recordId, recordWithTask } = await withHistory(policy.document.history, historyCall, now, (history) => {
    const d = evaluate({ subject, action: { name: tool.name }, resource, context: { args, history } }, policy, now);
    return { result: d, record: d.decision === "allow" ? (counted ? "reserved" : null) : submits(d) ? "pending" : null };
  });
  countCall(tool.name, decision.decision);

  if (decision.decision === "deny") {
    if (decision.evaluationError) {
      await db().$transaction((tx) =>
        appendAudit(tx, {
          type: "policy.evaluation-error",
          actor: `agent:${principal.agentId}`,
          data: { tool: tool.name, argumentsDigest, rule: decision.rule, error: decision.evaluationError },
          at: now,
        }),
      );
    }
    return refused(`Denied by policy: ${decision.reason} The tool did not run. This denial cannot be approved; do not retry.`);
  }

  if (decision.decision === "allow") {
    return runAllowed({ principal, tool, args, resource, argumentsDigest, rule: decision.rule, recordId, historyCall, progress: opts.progress }, now);
  }

  if (!opts.tasks) {
    return {
      kind: "approval-required",
      outcome: {
        isError: true,
        text:
          `Approval required: ${decision.reason} The tool did not run. ` +
          "This server returns a durable approval task to clients that declare the io.modelcontextprotocol/tasks extension; " +
          "this client did not, so nothing was submitted for approval. Ask the user to have the call approved, or retry from a tasks-capable client.",
      },
    };
  }

  if (decision.requirements.requireJustification && !opts.input) {
    return { kind: "input-required", key: SUBMISSION_INPUT_KEY, question: submissionQuestion(decision.reason) };
  }

  if (opts.progress) opts.progress.stage = "submitting";
  let input: CreateInput;
  try {
    input = {
      principal,
      tool: tool.name,
      toolVersion: toolVersion(tool),
      args,
      argumentsDigest,
      summary: tool.summary(args, resource),
      resource,
      rule: decision.rule,
      reason: decision.reason,
      requirements: decision.requirements,
      input: opts.input,
      toolInfo: { title: tool.title, description: tool.description },
      historyRecordId: recordId ?? undefined,
      historyCall: recordWithTask ? historyCall : undefined,
    };
  } catch (e) {
    // Nothing was submitted: the call's record stops counting.
    if (recordId) await settleRecord({ id: recordId }, "void", now);
    throw e;
  }
  // From here the record is creation's to settle: void when the call opens no task of its own, and once the
  // request's intent is recorded it follows the task (a failure after that, such as a backend that received the
  // request before the connection was lost, leaves a request that reconciliation recovers, still counted).
  let task;
  try {
    task = await createApprovalTask(input, now);
  } catch (e) {
    if (e instanceof CallerLimitReached) return refused(`Approval request limit reached. ${e.message}`);
    if (e instanceof SubmissionInProgress) return refused(e.message);
    throw e;
  }
  return {
    kind: "task",
    task,
    modelMessage:
      "This call needs approval before it can run, so it has not run yet. It is pending review; you can continue other work and check the task later.",
  };
}

/**
 * An allowed call, run: its record and `call.executed` are written while the tool runs (one round trip off the
 * call's path), and the agent reads the result only once both are done. `call.executed` says the allowed call went
 * to the tool; what the tool then reports that changes it (an error result, not run, not completed, unknown) follows
 * as its own event. The common case (no window counted the call first, so no `recordId`) is one statement: the
 * record with its event.
 */
async function runAllowed(
  call: {
    principal: Principal;
    tool: ToolDef;
    args: unknown;
    resource: ResourceView;
    argumentsDigest: string;
    rule: RuleRef | null;
    recordId: string | null | undefined;
    historyCall: HistoryCall;
    progress?: CallProgress;
  },
  now: Date,
): Promise<CallOutcome> {
  const { principal, tool, args, resource, argumentsDigest, recordId, historyCall, progress } = call;
  const actor = `agent:${principal.agentId}`;
  const data = { tool: tool.name, argumentsDigest, rule: call.rule };
  const started = { type: "call.executed", actor, data, at: now };
  if (progress) progress.stage = "running";
  const executedId = recordId ?? randomUUID();
  const recorded = recordId
    ? db().$transaction(async (tx) => {
        await settleRecord({ id: recordId }, "executed", now, tx);
        await appendAudit(tx, started);
      })
    : appendAuditWith(direct(), started, executedRecordWrite(historyCall, now, executedId));
  // A tool that throws before its first await fails the same way as one that rejects.
  const ran = (async () => tool.run(args, { taskId: null, now, resource: { type: resource.type, id: resource.id } }))();
  const [written, result] = await Promise.allSettled([recorded, ran]);
  if (result.status === "fulfilled") {
    const out = result.value;
    if (progress) progress.stage = "ran";
    if (written.status === "rejected") throw written.reason;
    // A tool error the tool itself reported (an upstream's isError result) still ran: the record stays executed.
    if (out.isError) await appendAuditWith(direct(), { type: "call.tool-error", actor, data, at: now }, null);
    return { kind: "result", outcome: { text: out.text, isError: out.isError === true, structured: out.structured, content: out.content } };
  }
  const e = result.reason;
  // What the tool's failure means for the call's record, once the record is written (when it could not be, there
  // is nothing to correct; an unknown outcome still needs its event, so it throws there).
  const correct = async (type: string, status: "executed" | "void") => {
    if (written.status === "rejected") {
      if (status === "executed") throw written.reason;
      return;
    }
    await db().$transaction(async (tx) => {
      if (status === "void") await voidRecord(executedId, now, tx);
      await appendAudit(tx, { type, actor, data, at: now });
    });
  };
  if (e instanceof ToolOutcomeUnknownError) {
    await correct("call.outcome-unknown", "executed");
    return refused(`${e.message} The tool may have run; do not retry automatically.`);
  }
  if (e instanceof ToolBusyError) {
    await correct("call.not-run", "void");
    return refused(`${e.message} The tool did not run; try again later.`);
  }
  if (e instanceof ToolError) {
    await correct("call.not-completed", "void");
    return refused(`${e.message} The tool did not complete.`);
  }
  // Anything else leaves whether the tool ran unknown (the caller's answer says so): the trail says it too.
  await correct("call.outcome-unknown", "executed").catch(() => undefined);
  throw e;
}
