/**
 * The seven MCP-observable statements of the tool-approval SEP's "Reference Implementation" section, each as a
 * black-box scenario against a running Countersign (COUNTERSIGN_BASE_URL): the agent's side is raw JSON-RPC over HTTP; the
 * reviewer acts out of band through the inbox's own lib functions against the server's database (see
 * support.ts). sep-2848.yaml at the repository root maps each statement and each MUST to the test proving it.
 */
import { afterAll, describe, expect, it } from "vitest";
import { reviewRequest } from "../../lib/approvals/review";
import { closeDb, db } from "../../lib/db/client";
import { askRequester } from "../../lib/tasks/ask";
import { decide } from "../../lib/tasks/decide";
import {
  AUTH_KEY,
  BASE_URL,
  DISPOSITION_KEY,
  IMMEDIATE_KEY,
  OPS_BOT,
  TASKS_AND_FORMS,
  callTool,
  cancelTask,
  freshOrder,
  getTask,
  refunds,
  requestOf,
  reviewerId,
  rpc,
  settle,
  textOf,
  type Reply,
} from "./support";

const LENA = "lena.lead@countersign.test";
const SAM = "sam.lead@countersign.test";
const PENDING = { reason: "insufficient_authorization", remediation: "available", remediationHints: [{ type: "task" }] };

if (!BASE_URL) throw new Error("COUNTERSIGN_BASE_URL must name a running Countersign (scripts/conformance.sh sets it)");

afterAll(closeDb);

async function openRefund(orderId: string, args: Record<string, unknown> = {}, token?: string): Promise<Reply> {
  const r = await callTool("issue_refund", { order_id: orderId, ...args }, { token });
  expect(r.status).toBe(200);
  return r;
}

async function reviewer(taskId: string, email: string, decision: "approve" | "deny", comment?: string) {
  return decide({ requestId: (await requestOf(taskId)).id, reviewerId: await reviewerId(email), decision, comment }, new Date());
}

describe("1. a requestable denial returns a task without executing the tool", () => {
  it("tools/call from a tasks client answers with a flat CreateTaskResult as in the SEP's example, and nothing runs", async () => {
    const order = await freshOrder();
    const r = await openRefund(order);
    const t = r.body.result;
    expect(t).toMatchObject({
      resultType: "task",
      taskId: expect.any(String),
      status: "working",
      statusMessage: expect.any(String),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      lastUpdatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      ttlMs: expect.any(Number),
      pollIntervalMs: expect.any(Number),
    });
    expect(t).not.toHaveProperty("task");
    expect(t).not.toHaveProperty("result");
    expect(t._meta[AUTH_KEY]).toEqual(PENDING);
    expect(t._meta[IMMEDIATE_KEY]).toMatch(/has not run/);
    expect(t.statusMessage).toMatch(/has not run/);
    // The envelope is repeated on every tasks/get while the task is not terminal.
    for (let i = 0; i < 3; i++) expect((await getTask(t.taskId)).body.result._meta[AUTH_KEY]).toEqual(PENDING);
    expect(await refunds(order)).toBe(0);
  });
});

describe("2. approval resumes execution at most once", () => {
  it("after approval, many concurrent polls (each of which may advance the task) execute the refund exactly once", async () => {
    const order = await freshOrder();
    const taskId = (await openRefund(order)).body.result.taskId;
    // Record the approval in the backend only, then let the agent's polls race to execute it.
    const ok = await reviewRequest({ requestId: (await requestOf(taskId)).id, reviewerId: await reviewerId(LENA), decision: "approve" }, new Date());
    expect(ok.ok).toBe(true);
    const polls = await Promise.all(Array.from({ length: 12 }, () => getTask(taskId)));
    expect(polls.every((p) => p.status === 200)).toBe(true);
    const done = await settle(taskId);
    expect(done).toMatchObject({ status: "completed", result: { isError: false } });
    expect(done.result._meta[DISPOSITION_KEY]).toBe("approved-executed");
    expect(textOf(done.result)).toMatch(/executed once/);
    // A second decision and further polls change nothing.
    expect((await reviewer(taskId, SAM, "approve")).ok).toBe(false);
    expect((await getTask(taskId)).body.result.result).toEqual(done.result);
    expect(await refunds(order)).toBe(1);
  });
});

describe("3. a terminal denial is a completed task whose body (not only _meta) marks it denied-not-executed, distinct from an execution error", () => {
  it("a denial reads 'did not run' in the body; a tool that ran and failed reads 'ran but failed'; the dispositions and envelope differ", async () => {
    const order = await freshOrder();
    const denied = (await openRefund(order)).body.result.taskId;
    await reviewer(denied, LENA, "deny", "Outside the refund policy.");
    const d = await settle(denied);
    expect(d).toMatchObject({ status: "completed", result: { isError: true } });
    expect(d.result._meta[DISPOSITION_KEY]).toBe("denied-not-executed");
    expect(d.result._meta[AUTH_KEY]).toEqual({ reason: "insufficient_authorization", remediation: "unavailable" });
    expect(textOf(d.result)).toMatch(/did not run/);
    expect(textOf(d.result)).not.toMatch(/ran but failed|may have/);

    // failing_job: a conformance fixture whose tool always fails when it runs (approved by the automatic resolver).
    // Called as the ops agent: the demo policy lets the support bot issue refunds only.
    const failing = (await callTool("failing_job", {}, { token: OPS_BOT })).body.result.taskId;
    const e = await settle(failing, undefined, undefined, OPS_BOT);
    expect(e).toMatchObject({ status: "completed", result: { isError: true } });
    expect(e.result._meta[DISPOSITION_KEY]).toBe("execution-error");
    expect(e.result._meta).not.toHaveProperty(AUTH_KEY);
    expect(textOf(e.result)).toMatch(/ran but failed.*side effect may have occurred/s);
    expect(textOf(e.result)).not.toMatch(/did not run/);
  });
});

describe("4. a changed envelope (tool, arguments, principal, or subject/resource) requires a new approval", () => {
  it("other arguments and another principal open tasks of their own; the first task's approval executes only the first call", async () => {
    const order = await freshOrder(40_000);
    const first = (await openRefund(order, { amount: 180 })).body.result.taskId;
    const otherArgs = (await openRefund(order, { amount: 190 })).body.result.taskId;
    const otherPrincipal = (await openRefund(order, { amount: 180 }, OPS_BOT)).body.result.taskId;
    expect(new Set([first, otherArgs, otherPrincipal]).size).toBe(3);
    await reviewer(first, LENA, "approve");
    expect((await settle(first)).result._meta[DISPOSITION_KEY]).toBe("approved-executed");
    expect((await getTask(otherArgs)).body.result.status).toBe("working");
    expect((await getTask(otherPrincipal, OPS_BOT)).body.result.status).toBe("working");
    const rows = await db().refund.findMany({ where: { orderId: order } });
    expect(rows.map((r) => r.amountCents)).toEqual([18_000]);
  });

  it("another tool: the approval of one tool's call is no approval for a call of another tool", async () => {
    const order = await freshOrder();
    const refund = (await openRefund(order)).body.result.taskId;
    const deploy = (await callTool("deploy_service", { service: `svc-${order.toLowerCase()}`, environment: "production", version: "1.0.0" }, { token: OPS_BOT })).body.result.taskId;
    expect(deploy).not.toBe(refund);
    await reviewer(refund, LENA, "approve");
    expect((await settle(refund)).result._meta[DISPOSITION_KEY]).toBe("approved-executed");
    expect((await getTask(deploy, OPS_BOT)).body.result.status).toBe("working");
    expect(await db().deployment.count({ where: { service: `svc-${order.toLowerCase()}` } })).toBe(0);
  });

  it("the resource changed while pending: the approval no longer applies and the task ends denied-not-executed", async () => {
    const order = await freshOrder(18_000);
    const taskId = (await openRefund(order, { amount: 180 })).body.result.taskId;
    // The shop changes the order meanwhile (EUR 10.00 refunded outside Countersign): its refundable remainder is less.
    await db().order.update({ where: { id: order }, data: { refundedCents: { increment: 1000 } } });
    await reviewer(taskId, LENA, "approve");
    const t = await settle(taskId);
    expect(t.result._meta[DISPOSITION_KEY]).toBe("denied-not-executed");
    expect(textOf(t.result)).toMatch(/did not run/);
    expect(await refunds(order)).toBe(0);
  });
});

describe("5. a cancelled or expired task cannot later execute", () => {
  it("cancelled: a later approval is refused and the task stays cancelled; nothing runs", async () => {
    const order = await freshOrder();
    const taskId = (await openRefund(order)).body.result.taskId;
    expect((await cancelTask(taskId)).body.result).toMatchObject({ resultType: "complete" });
    expect((await reviewer(taskId, LENA, "approve")).ok).toBe(false);
    const t = await settle(taskId);
    expect(t.status).toBe("cancelled");
    expect(t).not.toHaveProperty("result");
    expect(await refunds(order)).toBe(0);
  });

  it("expired: past the request deadline the task completes denied-not-executed noting the expiry; a late approval never executes it", async () => {
    const order = await freshOrder();
    await db().policyRule.updateMany({ where: { ruleKey: "refund-over-limit", active: true }, data: { requestDeadlineSec: 1 } });
    let taskId: string;
    try {
      taskId = (await openRefund(order)).body.result.taskId;
    } finally {
      await db().policyRule.updateMany({ where: { ruleKey: "refund-over-limit", active: true }, data: { requestDeadlineSec: 86_400 } });
    }
    await new Promise((r) => setTimeout(r, 1500));
    const t = await settle(taskId);
    expect(t).toMatchObject({ status: "completed", result: { isError: true } });
    expect(t.result._meta[DISPOSITION_KEY]).toBe("denied-not-executed");
    expect(textOf(t.result)).toMatch(/expired/);
    expect((await reviewer(taskId, LENA, "approve")).ok).toBe(false);
    expect(await refunds(order)).toBe(0);
  });
});

describe("6. result retrieval does not expose backend artifacts", () => {
  it("no request id, idempotency key, handle, body digest, reviewer identity or review content in any response", async () => {
    const order = await freshOrder();
    const created = await openRefund(order);
    const taskId = created.body.result.taskId;
    const request = await requestOf(taskId);
    const intent = await db().submissionIntent.findFirstOrThrow({ where: { taskId } });
    const pending = await getTask(taskId);
    await reviewer(taskId, LENA, "approve", "Approved by Lena after checking the ticket");
    const done = await getTask(taskId);
    const degraded = await callTool("get_request_status", { request_id: taskId }, { caps: {} });
    const lena = await db().user.findUniqueOrThrow({ where: { email: LENA } });
    const artifacts = [request.id, request.idempotencyKey, intent.idempotencyKey, request.bodyDigest, lena.id, lena.email, lena.name, "Approved by Lena"];
    for (const r of [created, pending, done, degraded]) {
      expect(r.status).toBe(200);
      for (const a of artifacts) expect(r.text).not.toContain(a);
    }
    expect(done.body.result.status).toBe("completed");
  });
});

describe("7. submission input flows through the task input channel", () => {
  it("before submission: input_required on tools/call (MRTR), the answer on the retry, and only then the request the reviewers see", async () => {
    await db().policyRule.updateMany({ where: { ruleKey: "deploy-production", active: true }, data: { requireJustification: true } });
    try {
      const args = { service: `svc-${Date.now().toString(36)}`, environment: "production", version: "2.0.1" };
      const first = await callTool("deploy_service", args, { caps: TASKS_AND_FORMS, token: OPS_BOT });
      expect(first.body.result).toMatchObject({ resultType: "input_required", requestState: expect.any(String) });
      const key = Object.keys(first.body.result.inputRequests)[0];
      expect(first.body.result.inputRequests[key]).toMatchObject({ method: "elicitation/create", params: { mode: "form" } });
      expect(await db().approvalRequest.count({ where: { body: { path: ["arguments", "service"], equals: args.service } } })).toBe(0);
      const retry = await callTool("deploy_service", args, {
        caps: TASKS_AND_FORMS,
        token: OPS_BOT,
        extra: { requestState: first.body.result.requestState, inputResponses: { [key]: { action: "accept", content: { justification: "Rollout of the fix for INC-42", ticket: "INC-42" } } } },
      });
      expect(retry.body.result).toMatchObject({ resultType: "task", status: "working" });
      expect((await requestOf(retry.body.result.taskId)).body).toMatchObject({ input: { justification: "Rollout of the fix for INC-42", ticket: "INC-42" } });
      // The state is single-use.
      const replay = await callTool("deploy_service", args, {
        caps: TASKS_AND_FORMS,
        token: OPS_BOT,
        extra: { requestState: first.body.result.requestState, inputResponses: { [key]: { action: "accept", content: { justification: "Rollout of the fix for INC-42" } } } },
      });
      expect(replay.body.error).toMatchObject({ code: -32602 });
    } finally {
      await db().policyRule.updateMany({ where: { ruleKey: "deploy-production", active: true }, data: { requireJustification: false } });
    }
  });

  it("during the workflow: a reviewer's question puts the task in input_required, tasks/update answers it, and the task returns to working", async () => {
    const order = await freshOrder();
    const taskId = (await openRefund(order)).body.result.taskId;
    const asked = await askRequester({ requestId: (await requestOf(taskId)).id, reviewerId: await reviewerId(LENA), question: "Which support ticket is this refund for?" }, new Date());
    expect(asked.ok).toBe(true);
    const waiting = (await getTask(taskId)).body.result;
    expect(waiting.status).toBe("input_required");
    const [key] = Object.keys(waiting.inputRequests);
    const ack = await rpc("tasks/update", { taskId, inputResponses: { [key]: { action: "accept", content: { answer: "SUP-2231" } } } });
    expect(ack.body.result.resultType).toBe("complete");
    expect((await getTask(taskId)).body.result.status).toBe("working");
    const clar = await db().clarification.findFirstOrThrow({ where: { taskId } });
    expect(clar.answer).toMatchObject({ answer: "SUP-2231" });
    await reviewer(taskId, LENA, "approve");
    expect((await settle(taskId)).result._meta[DISPOSITION_KEY]).toBe("approved-executed");
  });
});
