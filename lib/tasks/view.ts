/** A task row as its creator may see it: status mapping, retention, server-authored status text. */
import type { Task } from "../db/generated/client";
import { config } from "../config";
import { sanitizeForModel } from "../sanitize";
import type { InputQuestion, TaskStatus, TaskView, ToolOutcome } from "./types";

export const TERMINAL: TaskStatus[] = ["completed", "failed", "cancelled"];
export const PRE_CLAIM_PHASES = ["submitting", "awaiting_approval", "retry_wait"];

export function isTerminal(t: Pick<Task, "status">): boolean {
  return TERMINAL.includes(t.status as TaskStatus);
}

function statusMessage(t: Task): string {
  switch (t.status) {
    case "completed":
      return (t.result as ToolOutcome | null)?.disposition === "approved-executed"
        ? "Approved and executed."
        : "Finished without a successful execution; see the result.";
    case "cancelled":
      return "Cancelled. The tool did not run.";
    case "failed":
      return "Failed before execution. The tool did not run.";
    case "input_required":
      return "A reviewer needs more information before deciding; answer the outstanding input with tasks/update. The tool has not run.";
    default:
      if (t.phase === "claimed") return "Approved. The tool is being executed; poll again for the result.";
      return `${sanitizeForModel(t.reason)} Waiting for approval; the tool has not run.`;
  }
}

export function toView(t: Task): TaskView {
  return {
    taskId: t.id,
    status: t.status as TaskStatus,
    statusMessage: statusMessage(t),
    createdAt: t.createdAt,
    lastUpdatedAt: t.lastUpdatedAt,
    ttlMs: t.retainUntil ? t.retainUntil.getTime() - t.createdAt.getTime() : null,
    pollIntervalMs: config.pollIntervalMs,
    pending: !isTerminal(t),
    result: t.status === "completed" ? (t.result as ToolOutcome) : undefined,
    error: t.status === "failed" ? (t.error as { code: number; message: string }) : undefined,
    inputRequests: t.status === "input_required" ? (t.inputRequests as Record<string, InputQuestion>) : undefined,
  };
}
