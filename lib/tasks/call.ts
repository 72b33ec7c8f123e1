/**
 * One tools/call, decided: validate the arguments, map the call onto the policy's resource, evaluate, then
 * execute at once (allow), refuse (deny), or open an approval task (requestable denial). The tool never runs on a
 * requestable denial.
 */
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import { digest } from "../canonical";
import { evaluate } from "../policy/evaluate";
import { currentRules } from "../policy/rules";
import { getTool, toolVersion } from "../tools/registry";
import { ToolError } from "../tools/types";
import { createApprovalTask } from "./create";
import type { CallOutcome, Principal } from "./types";

export class UnknownToolError extends Error {
  constructor(name: string) {
    super(`Unknown tool: ${name.slice(0, 64)}`);
  }
}

function refused(text: string): CallOutcome {
  return { kind: "result", outcome: { text, isError: true } };
}

export async function callTool(principal: Principal, name: string, rawArgs: unknown, opts: { tasks: boolean }, now: Date): Promise<CallOutcome> {
  const tool = getTool(name);
  if (!tool) throw new UnknownToolError(name);
  const parsed = tool.schema.safeParse(rawArgs ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ");
    return refused(`Invalid arguments for ${tool.name}: ${issues}. The tool did not run.`);
  }
  const args = parsed.data;
  let resource;
  try {
    resource = await tool.resource(args);
  } catch (e) {
    if (e instanceof ToolError) return refused(`${e.message} The tool did not run.`);
    throw e;
  }
  const decision = evaluate(
    {
      subject: { type: "user", id: principal.userId, properties: { agentId: principal.agentId } },
      action: { name: tool.name },
      resource,
      context: {},
    },
    await currentRules(tool.name),
    now,
  );

  if (decision.decision === "deny") {
    return refused(`Denied by policy: ${decision.reason} The tool did not run. This denial cannot be approved; do not retry.`);
  }

  const argumentsDigest = digest(args);
  if (decision.decision === "allow") {
    try {
      const out = await tool.run(args, { taskId: null, now });
      await db().$transaction((tx) =>
        appendAudit(tx, {
          type: "call.executed",
          actor: `agent:${principal.agentId}`,
          data: { tool: tool.name, argumentsDigest, rule: decision.rule },
          at: now,
        }),
      );
      return { kind: "result", outcome: { text: out.text, isError: false, structured: out.structured } };
    } catch (e) {
      if (e instanceof ToolError) return refused(`${e.message} The tool did not complete.`);
      throw e;
    }
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

  const task = await createApprovalTask(
    {
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
    },
    now,
  );
  return {
    kind: "task",
    task,
    modelMessage:
      "This call needs approval before it can run, so it has not run yet. It is pending review; you can continue other work and check the task later.",
  };
}
