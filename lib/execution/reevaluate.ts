/**
 * Re-evaluation after approval (SEP "Completion"): the approval is an input to a fresh decision against the
 * immutable call binding and everything else current (principal, resource state, tool contract, policy).
 */
import type { Task } from "../db/generated/client";
import { principalStillValid } from "../auth/agents";
import { digest } from "../canonical";
import { evaluate, type ApprovalInput, type Decision } from "../policy/evaluate";
import { currentRules } from "../policy/rules";
import { getTool, toolVersion } from "../tools/registry";
import { ToolBusyError, ToolError } from "../tools/types";
import type { DenialCause } from "./outcomes";

export type Reevaluation =
  | { next: "allow"; decision: Extract<Decision, { decision: "allow" }> }
  | { next: "request"; decision: Extract<Decision, { decision: "requestable" }> }
  | { next: "retry"; retryAfterMs?: number }
  | { next: "deny"; cause: DenialCause };

export async function reevaluate(task: Task, approval: ApprovalInput, now: Date): Promise<Reevaluation> {
  if (!(await principalStillValid(task.agentId))) return { next: "deny", cause: "principal" };
  if (digest(task.arguments) !== task.argumentsDigest) return { next: "deny", cause: "binding" };
  const tool = getTool(task.tool);
  if (!tool || toolVersion(tool) !== task.toolVersion) return { next: "deny", cause: "binding" };
  const parsed = tool.schema.safeParse(task.arguments);
  if (!parsed.success) return { next: "deny", cause: "binding" };
  let resource;
  try {
    resource = await tool.resource(parsed.data);
  } catch (e) {
    if (e instanceof ToolBusyError) return { next: "retry", retryAfterMs: e.retryAfterMs };
    if (e instanceof ToolError) return { next: "deny", cause: "binding" };
    throw e;
  }
  if (resource.type !== task.resourceType || resource.id !== task.resourceId) return { next: "deny", cause: "binding" };
  const decision = evaluate(
    {
      subject: { type: "user", id: task.principalUserId, properties: { agentId: task.agentId } },
      action: { name: task.tool },
      resource,
      context: { approval },
    },
    await currentRules(task.tool),
    now,
  );
  if (decision.decision === "allow") return { next: "allow", decision };
  if (decision.decision === "requestable") return { next: "request", decision };
  return { next: "deny", cause: "policy" };
}
