/**
 * On the wire: an identical tools/call that arrives while the first call's submission is in progress gets a tool
 * error that says what is true (the first call's task is being created, the tool has not run, retry shortly),
 * never "whether the tool ran is unknown".
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../db/client";
import { resetDb } from "../../tests/support/db";
import { holdSubmissions, untilSubmissionInProgress } from "../../tests/support/submissions";
import { call, textOf } from "./testing";

beforeEach(resetDb);
afterEach(() => {
  vi.restoreAllMocks();
});

describe("tools/call while an identical call's submission is in progress", () => {
  it("is an isError result saying the first call's task is being created and the tool has not run; a retry afterwards returns that task", async () => {
    const release = holdSubmissions();
    const first = call("issue_refund", { order_id: "O-2289" });
    let dup;
    try {
      await untilSubmissionInProgress();
      dup = await call("issue_refund", { order_id: "O-2289" });
    } finally {
      release();
      await first.catch(() => undefined);
    }
    expect(dup.status).toBe(200);
    expect(dup.body.error).toBeUndefined();
    expect(dup.body.result.isError).toBe(true);
    const text = textOf(dup.body.result);
    expect(text).toMatch(/task is still being created/);
    expect(text).toMatch(/the tool has not run/);
    expect(text).toMatch(/Retry the same call shortly/);
    expect(text).not.toMatch(/unknown|may have run|Do not retry/i);

    const created = await first;
    const taskId = created.body.result.taskId ?? created.body.result.task?.taskId;
    expect(typeof taskId).toBe("string");
    const again = await call("issue_refund", { order_id: "O-2289" });
    expect(JSON.stringify(again.body.result)).toContain(taskId);
    expect(await db().approvalRequest.count()).toBe(1);
  });
});
