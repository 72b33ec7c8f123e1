/**
 * Submission input before the task (SEP "Collecting submission input", before submission; SEP-2322 MRTR), on the
 * wire: the rule needs a justification, so tools/call answers input_required with a form elicitation and a sealed
 * requestState; the retry carries the answer and the echoed state, and only then is the approval submitted. The
 * state is bound to the principal, the tool and the arguments, short-lived and single-use; everything else is
 * refused with the SDK's -32602.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { authenticateAgent, hashToken } from "../auth/agents";
import { db } from "../db/client";
import type { Principal } from "../tasks/types";
import { principal, resetDb } from "../../tests/support/db";
import { newCallState, sealState } from "./request-state";
import { OPS_BOT, SUPPORT_BOT, TASKS, TASKS_AND_FORMS, call, textOf } from "./testing";

const DEPLOY = { service: "checkout-api", environment: "production", version: "1.4.2" };
const ANSWER = { action: "accept", content: { justification: "Hotfix for the checkout outage INC-77", ticket: "INC-77" } };
const INVALID_STATE = { code: -32602, message: "Invalid or expired requestState" };

/** Deploys are the ops-bot's: the demo policy limits the support-bot to refunds. */
async function ask(args: Record<string, unknown> = DEPLOY, caps: object = TASKS_AND_FORMS) {
  const r = await call("deploy_service", args, { caps, token: OPS_BOT });
  expect(r.status).toBe(200);
  return r.body.result;
}

function retry(requestState: string | undefined, inputResponses: Record<string, unknown>, opts: { args?: Record<string, unknown>; token?: string; tool?: string } = {}) {
  return call(opts.tool ?? "deploy_service", opts.args ?? DEPLOY, {
    caps: TASKS_AND_FORMS,
    token: opts.token ?? OPS_BOT,
    extra: { inputResponses, ...(requestState !== undefined ? { requestState } : {}) },
  });
}

const submitted = () => db().approvalRequest.count();

beforeEach(async () => {
  await resetDb();
  await db().policyRule.updateMany({ where: { ruleKey: "deploy-production" }, data: { requireJustification: true } });
});
afterEach(() => {
  delete process.env.COUNTERSIGN_REQUEST_STATE_KEYS;
  delete process.env.COUNTERSIGN_REQUEST_STATE_TTL_SEC;
});

describe("a rule that needs a justification asks for it before anything is submitted", () => {
  it("answers tools/call with resultType input_required: one form elicitation and a sealed requestState; nothing submitted, no task", async () => {
    const r = await ask();
    expect(r).toMatchObject({ resultType: "input_required", requestState: expect.stringMatching(/^v1\./) });
    expect(r).not.toHaveProperty("taskId");
    expect(r.inputRequests.approval_request).toEqual({
      method: "elicitation/create",
      params: {
        mode: "form",
        message: expect.stringMatching(/justification/),
        requestedSchema: expect.objectContaining({ type: "object", required: ["justification"] }),
      },
    });
    expect(await submitted()).toBe(0);
    expect(await db().task.count()).toBe(0);
  });

  it("the retry with the answer and the echoed state submits the approval and returns the task", async () => {
    const first = await ask();
    const r = await retry(first.requestState, { approval_request: ANSWER });
    expect(r.body.result).toMatchObject({ resultType: "task", status: "working" });
    expect(r.body.result).not.toHaveProperty("requestState");
    const req = await db().approvalRequest.findFirstOrThrow();
    expect(req.body).toMatchObject({ input: { justification: "Hotfix for the checkout outage INC-77", ticket: "INC-77" } });
    expect(req.taskId).toBe(r.body.result.taskId);
  });

  it("the sealed state carries no secret: only ids, the tool, an argument digest, a nonce and an expiry", async () => {
    const { requestState } = await ask({ ...DEPLOY, version: "9.9.9" });
    const body = JSON.parse(Buffer.from(requestState.split(".")[1], "base64url").toString("utf8"));
    expect(Object.keys(body.p).sort()).toEqual(["a", "d", "k", "kind", "n", "t", "u", "x"]);
    expect(JSON.stringify(body)).not.toMatch(/9\.9\.9|cs_demo/);
    expect(body.p.d).toMatch(/^sha256:/);
  });
});

describe("the requestState is refused (-32602) when it is not this call's, or not fresh", () => {
  it("replayed: a state answered once is refused the second time, and nothing more is submitted", async () => {
    const first = await ask();
    expect((await retry(first.requestState, { approval_request: ANSWER })).body.result.resultType).toBe("task");
    const replay = await retry(first.requestState, { approval_request: ANSWER });
    expect(replay.body.error).toMatchObject(INVALID_STATE);
    expect(await submitted()).toBe(1);
  });

  it("tampered: a changed byte in the sealed state", async () => {
    const { requestState } = await ask();
    const [v, body, mac] = requestState.split(".");
    const payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    payload.p.t = "wire_transfer";
    const forged = `${v}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${mac}`;
    expect((await retry(forged, { approval_request: ANSWER })).body.error).toMatchObject(INVALID_STATE);
    expect((await retry(`${requestState}x`, { approval_request: ANSWER })).body.error).toMatchObject(INVALID_STATE);
    expect(await submitted()).toBe(0);
  });

  it("cross-principal: another agent echoing this agent's state", async () => {
    const { requestState } = await ask();
    const r = await retry(requestState, { approval_request: ANSWER }, { token: SUPPORT_BOT });
    expect(r.body.error).toMatchObject(INVALID_STATE);
    expect(await submitted()).toBe(0);
  });

  it("other arguments: the state of one call echoed on a call with different arguments", async () => {
    const { requestState } = await ask();
    const r = await retry(requestState, { approval_request: ANSWER }, { args: { ...DEPLOY, version: "1.4.3" } });
    expect(r.body.error).toMatchObject(INVALID_STATE);
    expect(await submitted()).toBe(0);
  });

  it("other tool: the state echoed on a call of another tool", async () => {
    const { requestState } = await ask();
    const r = await retry(requestState, { approval_request: ANSWER }, { tool: "issue_refund", args: { order_id: "O-2289" } });
    expect(r.body.error).toMatchObject(INVALID_STATE);
    expect(await submitted()).toBe(0);
  });

  it("expired: a state older than config.requestStateTtlSec", async () => {
    process.env.COUNTERSIGN_REQUEST_STATE_TTL_SEC = "1";
    const { requestState } = await ask();
    await new Promise((r) => setTimeout(r, 2100));
    expect((await retry(requestState, { approval_request: ANSWER })).body.error).toMatchObject(INVALID_STATE);
    expect(await submitted()).toBe(0);
  });
});

describe("the requestState is bound to the tool and to the caller, each on its own", () => {
  it("other tool, same arguments: a state sealed for one tool, echoed on another tool with the very same arguments, is refused and not spent", async () => {
    const { requestState } = await ask();
    const r = await retry(requestState, { approval_request: ANSWER }, { tool: "issue_refund", args: DEPLOY });
    expect(r.body.error).toMatchObject(INVALID_STATE);
    expect(await submitted()).toBe(0);
    // Refused before its answer was read: the state still answers its own call, once.
    expect((await retry(requestState, { approval_request: ANSWER })).body.result).toMatchObject({ resultType: "task" });
    expect(await submitted()).toBe(1);
  });

  /** A second agent of the ops-bot's own user (Otto), so only the agent differs; policy lets it deploy too. */
  async function sibling(): Promise<{ token: string; principal: Principal }> {
    const token = "cs_second-ops-agent-token-for-tests-000003";
    const otto = await db().user.findUniqueOrThrow({ where: { email: "otto.ops@countersign.test" } });
    await db().agent.create({ data: { name: "ops-bot-2", userId: otto.id, tokenHash: hashToken(token), tokenPrefix: token.slice(0, 10) } });
    return { token, principal: (await authenticateAgent(token))! };
  }

  /**
   * A state whose payload names one caller but whose codec binding (method and agent) is the replaying caller's,
   * so the SDK's own binding lets it through and only the payload's caller check stands between it and a
   * submission.
   */
  async function sealedFor(payloadOf: Principal, boundTo: Principal, override: Partial<{ u: string }> = {}): Promise<string> {
    const ctx = { mcpReq: { method: "tools/call" }, http: { authInfo: { clientId: boundTo.agentId } } };
    return sealState({ ...newCallState(payloadOf, "deploy_service", DEPLOY, "approval_request", new Date()), ...override }, ctx as never);
  }

  it("other agent of the same user: a state sealed for agent X is refused when agent Y replays it", async () => {
    const y = await sibling();
    const state = await sealedFor(await principal("ops-bot"), y.principal);
    const r = await retry(state, { approval_request: ANSWER }, { token: y.token });
    expect(r.body.error).toMatchObject(INVALID_STATE);
    expect(await submitted()).toBe(0);
  });

  it("other user's agent: a state sealed for the support-bot is refused when the ops-bot replays it", async () => {
    const ops = await principal("ops-bot");
    const state = await sealedFor(await principal("support-bot"), ops);
    const r = await retry(state, { approval_request: ANSWER }, { token: OPS_BOT });
    expect(r.body.error).toMatchObject(INVALID_STATE);
    expect(await submitted()).toBe(0);
  });

  it("same agent, other user: a state naming this agent under another user (its owner since changed) is refused", async () => {
    const me = await principal("ops-bot");
    const support = await principal("support-bot");
    const state = await sealedFor(me, me, { u: support.userId });
    const r = await retry(state, { approval_request: ANSWER }, { token: OPS_BOT });
    expect(r.body.error).toMatchObject(INVALID_STATE);
    expect(await submitted()).toBe(0);
  });

  it("the same construction for the caller itself is accepted, so the refusals above are the caller check's", async () => {
    const me = await principal("ops-bot");
    const r = await retry(await sealedFor(me, me), { approval_request: ANSWER }, { token: OPS_BOT });
    expect(r.body.result).toMatchObject({ resultType: "task" });
    expect(await submitted()).toBe(1);
  });
});

describe("keys rotate without dropping answers", () => {
  const A = "a".repeat(40);
  const B = "b".repeat(40);

  it("a state sealed under the old key opens while the old key is still listed after the new one, and not once it is dropped", async () => {
    process.env.COUNTERSIGN_REQUEST_STATE_KEYS = A;
    const one = await ask();
    const two = await ask({ ...DEPLOY, version: "2.0.0" });
    process.env.COUNTERSIGN_REQUEST_STATE_KEYS = `${B},${A}`;
    expect((await retry(one.requestState, { approval_request: ANSWER })).body.result.resultType).toBe("task");
    process.env.COUNTERSIGN_REQUEST_STATE_KEYS = B;
    const dropped = await retry(two.requestState, { approval_request: ANSWER }, { args: { ...DEPLOY, version: "2.0.0" } });
    expect(dropped.body.error).toMatchObject(INVALID_STATE);
  });

  it("a key shorter than 32 bytes is refused rather than used", async () => {
    process.env.COUNTERSIGN_REQUEST_STATE_KEYS = "short";
    const r = await call("deploy_service", DEPLOY, { caps: TASKS_AND_FORMS, token: OPS_BOT });
    expect(r.status).toBeLessThan(500);
    expect(r.body.result?.isError ?? r.body.error).toBeTruthy();
    expect(await submitted()).toBe(0);
  });
});

describe("answers that do not complete the question", () => {
  it("an answer without a state is a question never asked: the server asks again and submits nothing", async () => {
    const r = await retry(undefined, { approval_request: ANSWER });
    expect(r.body.result.resultType).toBe("input_required");
    expect(await submitted()).toBe(0);
  });

  it("a missing or unfit answer with a valid state is asked again, with a fresh state", async () => {
    const first = await ask();
    const missing = await retry(first.requestState, { something_else: ANSWER });
    expect(missing.body.result.resultType).toBe("input_required");
    const short = await retry(first.requestState, { approval_request: { action: "accept", content: { justification: "too short" } } });
    expect(short.body.result.resultType).toBe("input_required");
    expect(short.body.result.requestState).not.toBe(first.requestState);
    expect(await submitted()).toBe(0);
    // The first state was never consumed by those: answering it properly still works once.
    expect((await retry(first.requestState, { approval_request: ANSWER })).body.result.resultType).toBe("task");
  });

  it("a declined question ends the call: a tool error that says nothing was submitted, and the state is spent", async () => {
    const first = await ask();
    const r = await retry(first.requestState, { approval_request: { action: "decline" } });
    expect(r.body.result.isError).toBe(true);
    expect(textOf(r.body.result)).toMatch(/nothing was submitted.*did not run/);
    expect((await retry(first.requestState, { approval_request: ANSWER })).body.error).toMatchObject(INVALID_STATE);
    expect(await submitted()).toBe(0);
  });
});

describe("ask only what the client can answer", () => {
  it.each([
    ["no elicitation capability", TASKS],
    ["URL-mode elicitation only", { ...TASKS, elicitation: { url: {} } }],
  ])("%s: a clear tool error instead of a question, and nothing submitted", async (_label, caps) => {
    const r = await ask(DEPLOY, caps);
    expect(r.isError).toBe(true);
    expect(r).not.toHaveProperty("inputRequests");
    expect(textOf(r)).toMatch(/cannot be asked.*nothing was submitted and the tool did not run/);
    expect(await submitted()).toBe(0);
  });

  it("elicitation: {} means form mode: the question is asked", async () => {
    expect((await ask(DEPLOY, { ...TASKS, elicitation: {} })).resultType).toBe("input_required");
  });
});
