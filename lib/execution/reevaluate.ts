/**
 * Re-evaluation after approval (SEP "Completion"): the approval is an input to a fresh decision against the
 * immutable call binding and everything else current (principal, resource state, tool contract, policy).
 */
import type { Task } from "../db/generated/client";
import { appendAudit } from "../audit/append";
import { currentSubjectWith } from "../auth/agents";
import { db } from "../db/client";
import { digest } from "../canonical";
import { evaluate, type ApprovalInput, type Decision } from "../policy/evaluate";
import { currentPolicy, POLICY_HEAD_COLUMNS, type PolicyHead } from "../policy/store";
import { historyCallOf, measureHistory } from "../policy/history";
import { getTool, toolVersion } from "../tools/catalog";
import { ToolBusyError, ToolError } from "../tools/types";
import type { DenialCause } from "./outcomes";

export type Reevaluation =
  | { next: "allow"; decision: Extract<Decision, { decision: "allow" }> }
  | { next: "request"; decision: Extract<Decision, { decision: "requestable" }> }
  | { next: "retry"; retryAfterMs?: number }
  | { next: "deny"; cause: DenialCause; detail?: string };

export async function reevaluate(task: Task, approval: ApprovalInput, now: Date): Promise<Reevaluation> {
  // The principal as it is now, and in the same statement the policy's head (so the current policy, and with it
  // the current tool catalog, costs no statement of its own).
  const found = await currentSubjectWith<PolicyHead>(task.agentId, POLICY_HEAD_COLUMNS);
  if (!found) return { next: "deny", cause: "principal" };
  const { subject } = found;
  if (digest(task.arguments) !== task.argumentsDigest) return { next: "deny", cause: "binding" };
  const policy = await currentPolicy({ doc: found.also.doc, rules: found.also.rules, catalog: found.also.catalog });
  const tool = getTool(task.tool);
  // A tool held for review (it changed upstream) or changed at all is not the tool the approval was given for.
  if (!tool || tool.held || toolVersion(tool) !== task.toolVersion) return { next: "deny", cause: "binding" };
  const parsed = tool.schema.safeParse(task.arguments);
  if (!parsed.success) return { next: "deny", cause: "binding" };
  let resource;
  try {
    resource = await tool.resource(parsed.data);
  } catch (e) {
    if (e instanceof ToolBusyError) return { next: "retry", retryAfterMs: e.retryAfterMs };
    // The tool's own words (e.g. the order has less left to refund than this refund) say why it cannot run now.
    if (e instanceof ToolError) return { next: "deny", cause: "binding", detail: e.message };
    throw e;
  }
  if (resource.type !== task.resourceType || resource.id !== task.resourceId) return { next: "deny", cause: "binding" };
  if (tool.ready) {
    // Nothing is claimed for a tool that cannot be reached now: the approved call waits and is tried again.
    try {
      await tool.ready();
    } catch (e) {
      if (e instanceof ToolBusyError) return { next: "retry", retryAfterMs: e.retryAfterMs };
      throw e;
    }
  }
  // History now, without this task's own record (it is pending in it): what else ran or waits in the window.
  const history = await measureHistory(
    policy.document.history,
    historyCallOf(tool, { agentId: task.agentId, userId: task.principalUserId }, resource),
    now,
    { excludeTaskId: task.id },
  );
  const decision = evaluate({ subject, action: { name: task.tool }, resource, context: { args: parsed.data, history, approval } }, policy, now);
  if (decision.decision === "allow") return { next: "allow", decision };
  if (decision.decision === "requestable") return { next: "request", decision };
  if (decision.evaluationError) {
    // The policy could not be evaluated for the approved call: audited like one at call time; the call is denied.
    await db().$transaction((tx) =>
      appendAudit(tx, {
        type: "policy.evaluation-error",
        actor: "system",
        taskId: task.id,
        data: { tool: task.tool, argumentsDigest: task.argumentsDigest, rule: decision.rule, error: decision.evaluationError, at: "execution" },
        at: now,
      }),
    );
  }
  return { next: "deny", cause: "policy", detail: decision.reason || undefined };
}
