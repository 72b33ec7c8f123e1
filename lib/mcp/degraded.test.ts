/**
 * The degraded path for clients without the tasks extension: an isError result with next-step guidance on the
 * gated call itself, plus the ordinary tools request_access, get_request_status and answer_request, which open
 * and follow the same approval task a tasks client would get. Only the agent that opened a request can read it.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../db/client";
import { askRequester } from "../tasks/ask";
import { decide } from "../tasks/decide";
import { refundsFor, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { OPS_BOT, call, textOf } from "./testing";

const NO_TASKS = {};
const DISPOSITION = "io.modelcontextprotocol/tool-approval-disposition";
const LENA = "lena.lead@countersign.test";

const requestAccess = (args: Record<string, unknown>, opts: { token?: string; caps?: object } = {}) =>
  call("request_access", args, { caps: opts.caps ?? NO_TASKS, token: opts.token });
const status = (id: string, token?: string) => call("get_request_status", { request_id: id }, { caps: NO_TASKS, token });

async function open(): Promise<string> {
  const r = await requestAccess({ tool: "issue_refund", arguments: { order_id: "O-2289" } });
  expect(r.body.result.isError).toBe(false);
  return r.body.result.structuredContent.request_id as string;
}

beforeEach(resetDb);

describe("the gated call without the tasks extension", () => {
  it("is an isError result that says the tool did not run and names request_access as the next step", async () => {
    const r = await call("issue_refund", { order_id: "O-2289" }, { caps: NO_TASKS });
    expect(r.body.result).toMatchObject({ isError: true, resultType: "complete" });
    expect(textOf(r.body.result)).toMatch(/did not run.*request_access.*get_request_status/s);
    expect(await db().approvalRequest.count()).toBe(0);
  });
});

describe("request_access", () => {
  it("opens the approval request exactly as a tasks client would: a request id that is the task id, its status and poll guidance", async () => {
    const r = await requestAccess({ tool: "issue_refund", arguments: { order_id: "O-2289" } });
    const result = r.body.result;
    expect(result).toMatchObject({ isError: false, structuredContent: { status: "working", tool_ran: "no", poll_interval_ms: expect.any(Number) } });
    const id = result.structuredContent.request_id;
    expect(await db().task.findUnique({ where: { id } })).toMatchObject({ tool: "issue_refund", status: "working" });
    expect(textOf(result)).toMatch(/Request id: .*has not run.*get_request_status/s);
    // The same call from a tasks client is deduplicated onto the same task.
    const tasksClient = await call("issue_refund", { order_id: "O-2289" });
    expect(tasksClient.body.result.taskId).toBe(id);
    expect(await refundsFor("O-2289")).toHaveLength(0);
  });

  it("refuses an unknown tool and itself without submitting anything", async () => {
    for (const tool of ["no_such_tool", "request_access", "get_request_status"]) {
      const r = await requestAccess({ tool, arguments: {} });
      expect(r.body.result.isError).toBe(true);
    }
    expect(await db().approvalRequest.count()).toBe(0);
  });

  it("a rule that needs a justification: refused with guidance without one, opened with one (no elicitation needed)", async () => {
    await db().policyRule.updateMany({ where: { ruleKey: "deploy-production" }, data: { requireJustification: true } });
    const args = { service: "checkout-api", environment: "production", version: "1.4.2" };
    // Deploys are the ops-bot's: the demo policy limits the support-bot to refunds.
    const without = await requestAccess({ tool: "deploy_service", arguments: args }, { token: OPS_BOT });
    expect(without.body.result.isError).toBe(true);
    expect(textOf(without.body.result)).toMatch(/justification argument/);
    expect(await db().approvalRequest.count()).toBe(0);
    const withIt = await requestAccess({ tool: "deploy_service", arguments: args, justification: "Rollout of the fix for INC-77", ticket: "INC-77" }, { token: OPS_BOT });
    expect(withIt.body.result.structuredContent.status).toBe("working");
    expect((await db().approvalRequest.findFirstOrThrow()).body).toMatchObject({ input: { justification: "Rollout of the fix for INC-77" } });
  });

  it("a call that needs no approval is simply executed, and says so", async () => {
    const r = await requestAccess({ tool: "issue_refund", arguments: { order_id: "O-1021", amount: 10 } });
    expect(r.body.result.isError).toBe(false);
    expect(textOf(r.body.result)).toMatch(/No approval was needed/);
    expect(await refundsFor("O-1021")).toHaveLength(1);
  });
});

describe("get_request_status", () => {
  it("pending, then approved: the outcome with the disposition in words, in structuredContent and in _meta", async () => {
    const id = await open();
    const pending = (await status(id)).body.result;
    expect(pending).toMatchObject({ isError: false, structuredContent: { request_id: id, status: "working", tool_ran: "no" } });
    await decide({ requestId: await requestIdOf(id), reviewerId: await userId(LENA), decision: "approve" }, new Date());
    const done = (await status(id)).body.result;
    expect(done).toMatchObject({ isError: false, structuredContent: { status: "completed", disposition: "approved-executed", tool_ran: "yes" } });
    expect(done._meta[DISPOSITION]).toBe("approved-executed");
    expect(textOf(done)).toMatch(/the tool ran once/);
    expect(await refundsFor("O-2289")).toHaveLength(1);
  });

  it("denied: isError, tool_ran no, and the words say it did not run", async () => {
    const id = await open();
    await decide({ requestId: await requestIdOf(id), reviewerId: await userId(LENA), decision: "deny", comment: "No." }, new Date());
    const done = (await status(id)).body.result;
    expect(done).toMatchObject({ isError: true, structuredContent: { disposition: "denied-not-executed", tool_ran: "no" } });
    expect(textOf(done)).toMatch(/did not run/);
  });

  it("only the creator may read a request's status: another agent reads it as unknown", async () => {
    const id = await open();
    const foreign = (await status(id, OPS_BOT)).body.result;
    expect(foreign.isError).toBe(true);
    expect(textOf(foreign)).toMatch(/Unknown request id/);
    expect(textOf(foreign)).toBe(textOf((await status("00000000-0000-0000-0000-000000000000", OPS_BOT)).body.result));
  });
});

describe("answer_request", () => {
  it("answers a reviewer's question (what tasks/update does), and the request goes back to pending", async () => {
    const id = await open();
    await askRequester({ requestId: await requestIdOf(id), reviewerId: await userId(LENA), question: "Which ticket is this for?" }, new Date());
    const waiting = (await status(id)).body.result;
    expect(waiting.structuredContent.status).toBe("input_required");
    const [key] = Object.keys(waiting.structuredContent.questions);
    expect(textOf(waiting)).toMatch(/Which ticket/);
    const answered = await call("answer_request", { request_id: id, answers: { [key]: "SUP-4411" } }, { caps: NO_TASKS });
    expect(answered.body.result.structuredContent.status).toBe("working");
    expect(await db().clarification.findFirstOrThrow({ where: { taskId: id } })).toMatchObject({ answer: { action: "accept", answer: "SUP-4411" } });
    // Another agent cannot answer it.
    const foreign = await call("answer_request", { request_id: id, answers: { [key]: "x" } }, { caps: NO_TASKS, token: OPS_BOT });
    expect(foreign.body.result.isError).toBe(true);
  });
});
