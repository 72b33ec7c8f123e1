/**
 * SEP "The task handle is not authority" and "Completion": the server MUST check the immutable call binding before
 * executing, and when the authorization mapping changed materially while the task was pending it MUST NOT execute.
 * The resource an approval was given for is part of that binding: if the same arguments now map to another resource
 * (a path that resolves elsewhere, an account that was re-pointed), the approval does not apply to it.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { advanceTask } from "../lib/execution/advance";
import { issueRefund } from "../lib/tools/issue-refund";
import { resetDb } from "./support/db";
import { LEADS, MIN, approveOnly, at, auditCount, expectBodyAgrees, gatedRefund, sideEffects, taskRow } from "./support/proof";

beforeEach(resetDb);
afterEach(() => {
  vi.restoreAllMocks();
});

async function expectDeniedAsChanged(taskId: string): Promise<void> {
  const t = await taskRow(taskId);
  expect(t).toMatchObject({ status: "completed", disposition: "denied-not-executed", phase: "done" });
  expectBodyAgrees(t.result as never);
  expect((t.result as { text: string }).text).toMatch(/changed while the request was pending/);
  expect(await sideEffects(taskId)).toBe(0);
  expect(await auditCount(taskId, "execution.claimed")).toBe(0);
}

describe("the resource an approval was given for is part of the call binding", () => {
  it.each([
    ["another resource id (the same arguments now resolve to another order)", { id: "O-4410" }],
    ["another resource type (the mapping now names another kind of resource)", { type: "customer" }],
  ])("when the arguments now map to %s, re-evaluation does not execute the approved call", async (_label, change) => {
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(MIN));
    const original = issueRefund.resource.bind(issueRefund);
    // Every property policy judges is unchanged; only the identity of what the tool would act on moved.
    vi.spyOn(issueRefund, "resource").mockImplementation(async (args) => ({ ...(await original(args)), ...change }));
    const run = vi.spyOn(issueRefund, "run");

    await advanceTask(taskId, at(2 * MIN));

    expect(run).not.toHaveBeenCalled();
    await expectDeniedAsChanged(taskId);
  });

  it("the same resource, re-read at execution, executes the approved call once", async () => {
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(MIN));
    const resource = vi.spyOn(issueRefund, "resource");

    await advanceTask(taskId, at(2 * MIN));

    expect(resource).toHaveBeenCalled();
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect(await sideEffects(taskId)).toBe(1);
  });
});
