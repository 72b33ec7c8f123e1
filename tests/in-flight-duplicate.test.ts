/**
 * SEP "At-most-once and deduplication": dedup matches in-progress submission intents too, so a concurrent retry
 * in the window between persisting the intent and creating the task does not open a second approval. What that
 * retry is told must be true: the first call's task is being created, this call submitted nothing, the tool has
 * not run, and retrying shortly returns that task; or, once the task exists, the task itself.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../lib/db/client";
import { callTool } from "../lib/tasks/call";
import { principal, resetDb } from "./support/db";
import { T0, sideEffects } from "./support/proof";
import { holdSubmissions, untilSubmissionInProgress } from "./support/submissions";

beforeEach(resetDb);
afterEach(() => {
  vi.restoreAllMocks();
});

const REFUND = { order_id: "O-2289" };

describe("an identical call while the first call's submission is in progress", () => {
  it("is told the truth: the first call's task is being created, nothing was submitted for this call, the tool has not run, retry shortly", async () => {
    const agent = await principal();
    const release = holdSubmissions();
    const first = callTool(agent, "issue_refund", REFUND, { tasks: true }, T0);
    try {
      await untilSubmissionInProgress();
      const dup = await callTool(agent, "issue_refund", REFUND, { tasks: true }, T0);
      expect(dup.kind).toBe("result");
      const outcome = (dup as Extract<typeof dup, { kind: "result" }>).outcome;
      expect(outcome.isError).toBe(true);
      expect(outcome.text).toMatch(/identical call is being submitted for approval/);
      expect(outcome.text).toMatch(/task is still being created/);
      expect(outcome.text).toMatch(/the tool has not run/);
      expect(outcome.text).toMatch(/Retry the same call shortly/);
      expect(outcome.text).not.toMatch(/unknown|may have run/i);
    } finally {
      release();
      await first.catch(() => undefined);
    }
    const created = await first;
    expect(created.kind).toBe("task");
    const again = await callTool(agent, "issue_refund", REFUND, { tasks: true }, T0);
    expect(again).toMatchObject({ kind: "task", task: { taskId: (created as Extract<typeof created, { kind: "task" }>).task.taskId } });
    expect(await db().approvalRequest.count()).toBe(1);
    expect(await db().refund.count()).toBe(0);
  });

  it("returns the first call's task once it is created while the identical call waits", async () => {
    const agent = await principal();
    const release = holdSubmissions();
    const first = callTool(agent, "issue_refund", REFUND, { tasks: true }, T0);
    await untilSubmissionInProgress();
    const dup = callTool(agent, "issue_refund", REFUND, { tasks: true }, T0);
    release();
    const [a, b] = await Promise.all([first, dup]);
    expect(a.kind).toBe("task");
    expect(b).toMatchObject({ kind: "task", task: { taskId: (a as Extract<typeof a, { kind: "task" }>).task.taskId, status: "working" } });
    expect(await db().approvalRequest.count()).toBe(1);
    expect(await sideEffects((a as Extract<typeof a, { kind: "task" }>).task.taskId)).toBe(0);
  });
});
