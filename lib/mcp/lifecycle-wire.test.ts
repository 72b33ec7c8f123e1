/**
 * Every status and disposition row of the SEP's "Lifecycle and task status" table, observed on the wire
 * (JSON-RPC over HTTP through the route, in process): the task status, the SEP-2643 envelope, the disposition in
 * the inlined result's _meta, and the words of the body, which must say whether the tool ran, did not run, or
 * may have run. Reviewers act through the same lib verbs the inbox uses (reviewRequest, decide, askRequester).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../db/client";
import { reviewRequest } from "../approvals/review";
import { askRequester } from "../tasks/ask";
import { decide } from "../tasks/decide";
import { issueRefund } from "../tools/issue-refund";
import { ToolBusyError, ToolError } from "../tools/types";
import { crashingAt } from "../../tests/support/inprocess-crash";
import { refundsFor, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { call, getTaskRpc, rpc } from "./testing";

vi.mock("../faults", () => import("../../tests/support/inprocess-crash"));

const AUTH = "io.modelcontextprotocol/authorization";
const DISPOSITION = "io.modelcontextprotocol/tool-approval-disposition";
const AVAILABLE = { reason: "insufficient_authorization", remediation: "available", remediationHints: [{ type: "task" }] };
const UNAVAILABLE = { reason: "insufficient_authorization", remediation: "unavailable" };

const LENA = "lena.lead@countersign.test";
const SAM = "sam.lead@countersign.test";

async function openRefund(orderId = "O-2289", extra: Record<string, unknown> = {}): Promise<string> {
  const r = await call("issue_refund", { order_id: orderId, ...extra });
  expect(r.body.result).toMatchObject({ resultType: "task", status: "working" });
  return r.body.result.taskId as string;
}

async function review(taskId: string, email: string, decision: "approve" | "deny", comment?: string) {
  const r = await reviewRequest({ requestId: await requestIdOf(taskId), reviewerId: await userId(email), decision, comment }, new Date());
  expect(r.ok).toBe(true);
}

async function get(taskId: string) {
  const r = await getTaskRpc(taskId);
  expect(r.status).toBe(200);
  return r.body.result;
}

function expectBody(result: { content: { text: string }[]; isError: boolean }, words: RegExp, not: RegExp) {
  const text = result.content.map((c) => c.text).join("\n");
  expect(text).toMatch(words);
  expect(text).not.toMatch(not);
}

beforeEach(resetDb);
afterEach(() => {
  vi.restoreAllMocks();
  delete process.env.COUNTERSIGN_EXECUTION_DEADLINE_MS;
});

describe("lifecycle and task status, on the wire", () => {
  it("awaiting a decision: working, envelope available with the task hint, no disposition yet", async () => {
    const taskId = await openRefund();
    const t = await get(taskId);
    expect(t).toMatchObject({ status: "working", resultType: "complete" });
    expect(t._meta[AUTH]).toEqual(AVAILABLE);
    expect(t).not.toHaveProperty("result");
    expect(t.statusMessage).toMatch(/has not run/);
  });

  it("needs submission input in the task: input_required with the reviewer's question as an elicitation, answered with tasks/update, then back to working", async () => {
    const taskId = await openRefund();
    const asked = await askRequester({ requestId: await requestIdOf(taskId), reviewerId: await userId(LENA), question: "Which ticket is this refund for?" }, new Date());
    expect(asked.ok).toBe(true);
    const t = await get(taskId);
    expect(t.status).toBe("input_required");
    expect(t._meta[AUTH]).toMatchObject({ remediation: "available" });
    const [key] = Object.keys(t.inputRequests);
    expect(t.inputRequests[key]).toEqual({
      method: "elicitation/create",
      params: { mode: "form", message: expect.stringMatching(/Which ticket/), requestedSchema: expect.objectContaining({ type: "object" }) },
    });
    expect(t.statusMessage).toMatch(/has not run/);
    // Approving meanwhile does not execute a task that waits for the requester.
    await review(taskId, LENA, "approve");
    expect((await get(taskId)).status).toBe("input_required");
    expect(await refundsFor("O-2289")).toHaveLength(0);

    const ack = await rpc("tasks/update", { taskId, inputResponses: { [key]: { action: "accept", content: { answer: "SUP-4411" } } } });
    expect(ack.body.result).toEqual({ resultType: "complete", _meta: expect.any(Object) });
    const done = await get(taskId);
    expect(done.status).toBe("completed");
    expect(done.result._meta[DISPOSITION]).toBe("approved-executed");
    expect(await refundsFor("O-2289")).toHaveLength(1);
    const clar = await db().clarification.findFirstOrThrow({ where: { taskId } });
    expect(clar.answer).toMatchObject({ action: "accept", answer: "SUP-4411" });
  });

  it("re-evaluation returns retry: the approved task stays working (never a denial), then executes once the hold clears", async () => {
    const taskId = await openRefund();
    const resource = issueRefund.resource.bind(issueRefund);
    const spy = vi.spyOn(issueRefund, "resource").mockImplementationOnce(async () => {
      throw new ToolBusyError("The order is locked by a running export.", 1);
    });
    await review(taskId, LENA, "approve");
    const held = await get(taskId);
    expect(held.status).toBe("working");
    expect(held._meta[AUTH]).toEqual(AVAILABLE);
    expect(await refundsFor("O-2289")).toHaveLength(0);
    spy.mockImplementation(resource);
    await new Promise((r) => setTimeout(r, 20));
    await db().task.update({ where: { id: taskId }, data: { nextAttemptAt: new Date(Date.now() - 1) } });
    const done = await get(taskId);
    expect(done).toMatchObject({ status: "completed", result: { isError: false } });
    expect(done.result._meta[DISPOSITION]).toBe("approved-executed");
  });

  it("re-evaluation returns request: a stricter rule after approval keeps the task working with a new request; nothing runs", async () => {
    const taskId = await openRefund();
    const first = await requestIdOf(taskId);
    await db().policyRule.updateMany({ where: { ruleKey: "refund-over-limit" }, data: { approvalsRequired: 2 } });
    await decide({ requestId: first, reviewerId: await userId(LENA), decision: "approve" }, new Date());
    const t = await get(taskId);
    expect(t.status).toBe("working");
    expect(t._meta[AUTH]).toEqual(AVAILABLE);
    expect(await requestIdOf(taskId)).not.toBe(first);
    expect(await refundsFor("O-2289")).toHaveLength(0);
    // The new request, approved by two leads, executes once.
    await review(taskId, LENA, "approve");
    await review(taskId, SAM, "approve");
    expect((await get(taskId)).result._meta[DISPOSITION]).toBe("approved-executed");
    expect(await refundsFor("O-2289")).toHaveLength(1);
  });

  it("allowed, executed once: completed, approved-executed, no envelope, and the body says it ran", async () => {
    const taskId = await openRefund();
    await review(taskId, LENA, "approve");
    const t = await get(taskId);
    expect(t).toMatchObject({ status: "completed", result: { isError: false } });
    expect(t.result._meta).toEqual({ [DISPOSITION]: "approved-executed" });
    expect(t._meta ?? {}).not.toHaveProperty(AUTH);
    expectBody(t.result, /executed once/, /did not run|may have run/);
    await get(taskId);
    expect(await refundsFor("O-2289")).toHaveLength(1);
  });

  it("backend denied: completed, isError, denied-not-executed, envelope unavailable, and the body says it did not run", async () => {
    const taskId = await openRefund();
    await review(taskId, LENA, "deny", "Not covered by the policy.");
    const t = await get(taskId);
    expect(t).toMatchObject({ status: "completed", result: { isError: true } });
    expect(t.result._meta).toEqual({ [DISPOSITION]: "denied-not-executed", [AUTH]: UNAVAILABLE });
    expectBody(t.result, /did not run/, /executed once|may have run/);
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });

  it("request expired unresolved: completed, isError, denied-not-executed, and the body notes the expiry", async () => {
    const taskId = await openRefund();
    const past = new Date(Date.now() - 1000);
    await db().task.update({ where: { id: taskId }, data: { requestDeadline: past } });
    await db().approvalRequest.update({ where: { id: await requestIdOf(taskId) }, data: { deadline: past } });
    const t = await get(taskId);
    expect(t).toMatchObject({ status: "completed", result: { isError: true } });
    expect(t.result._meta).toEqual({ [DISPOSITION]: "denied-not-executed", [AUTH]: UNAVAILABLE });
    expectBody(t.result, /expired.*did not run/s, /executed once|may have run/);
  });

  it("approval expired before execution: completed, denied-not-executed, the body notes the expiry", async () => {
    const taskId = await openRefund();
    await review(taskId, LENA, "approve");
    await db().approvalRequest.update({ where: { id: await requestIdOf(taskId) }, data: { approvalExpiresAt: new Date(Date.now() - 1000) } });
    const t = await get(taskId);
    expect(t.result._meta[DISPOSITION]).toBe("denied-not-executed");
    expectBody(t.result, /approval expired.*did not run/s, /executed once/);
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });

  it("executed, tool errored: completed, isError, execution-error, no envelope, and the body says a side effect may have occurred", async () => {
    const taskId = await openRefund();
    vi.spyOn(issueRefund, "run").mockRejectedValue(new ToolError("The payment provider rejected the refund."));
    await review(taskId, LENA, "approve");
    const t = await get(taskId);
    expect(t).toMatchObject({ status: "completed", result: { isError: true } });
    expect(t.result._meta).toEqual({ [DISPOSITION]: "execution-error" });
    expectBody(t.result, /ran but failed.*side effect may have occurred/s, /did not run/);
  });

  it("execution claimed, outcome undeterminable: completed, isError, outcome-unknown, no envelope, and the body says it may have run", async () => {
    const taskId = await openRefund();
    process.env.COUNTERSIGN_EXECUTION_DEADLINE_MS = "1";
    const crashed = await crashingAt("after-claim", async () =>
      decide({ requestId: await requestIdOf(taskId), reviewerId: await userId(LENA), decision: "approve" }, new Date()),
    );
    expect(crashed).toBe("crashed");
    await new Promise((r) => setTimeout(r, 5));
    const t = await get(taskId);
    expect(t).toMatchObject({ status: "completed", result: { isError: true } });
    expect(t.result._meta).toEqual({ [DISPOSITION]: "outcome-unknown" });
    expectBody(t.result, /may have run/, /did not run|executed once/);
  });

  it("a backend failure surfaced as a JSON-RPC error: failed with the error object, no result, no envelope, no disposition", async () => {
    const taskId = await openRefund();
    await db().approvalRequest.update({ where: { id: await requestIdOf(taskId) }, data: { status: "failed" } });
    const t = await get(taskId);
    expect(t.status).toBe("failed");
    expect(t.error).toEqual({ code: -32603, message: expect.stringMatching(/did not run/) });
    expect(t).not.toHaveProperty("result");
    expect(t._meta ?? {}).not.toHaveProperty(AUTH);
  });

  it("cancelled by the client: cancelled, no result, no disposition; a later approval is refused and nothing runs", async () => {
    const taskId = await openRefund();
    const ack = await rpc("tasks/cancel", { taskId });
    expect(ack.body.result.resultType).toBe("complete");
    const t = await get(taskId);
    expect(t.status).toBe("cancelled");
    expect(t).not.toHaveProperty("result");
    expect(t.statusMessage).toMatch(/did not run/);
    const late = await reviewRequest({ requestId: await requestIdOf(taskId), reviewerId: await userId(LENA), decision: "approve" }, new Date());
    expect(late.ok).toBe(false);
    expect((await get(taskId)).status).toBe("cancelled");
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });

  it("cancelled by the backend: cancelled", async () => {
    const taskId = await openRefund();
    await db().approvalRequest.update({ where: { id: await requestIdOf(taskId) }, data: { status: "cancelled" } });
    expect((await get(taskId)).status).toBe("cancelled");
  });

  it("a terminal task is final: retry after denial opens a fresh evaluation, a cancel is a no-op, the result never changes", async () => {
    const taskId = await openRefund();
    await review(taskId, LENA, "deny", "No.");
    const before = await get(taskId);
    expect((await rpc("tasks/cancel", { taskId })).body.result.resultType).toBe("complete");
    const after = await get(taskId);
    expect(after.status).toBe("completed");
    expect(after.result).toEqual(before.result);
    // The same call again is a new intent: a new task, not the terminal one reopened.
    const again = await openRefund();
    expect(again).not.toBe(taskId);
  });
});
