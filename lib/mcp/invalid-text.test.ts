/**
 * Arguments that cannot be stored or acted on as sent, on the wire: a NUL character or an unpaired surrogate in
 * any text, a key that names an object's prototype machinery (`__proto__`, `constructor`, `prototype`), and an
 * unbounded list of unknown keys. Each is refused as invalid input that says the tool did not run, short and
 * without a stack, and nothing is written: no task, no submission intent, no approval request, no audit event,
 * no side effect.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../db/client";
import { askQuestions } from "../tasks/ask-questions";
import { requestIdOf, resetDb, rowsWritten, userId } from "../../tests/support/db";
import { POST } from "../../app/mcp/route";
import { buildRpcRequest, parseRpcBody } from "./raw-request";
import { SUPPORT_BOT, call, rpc, textOf, type Rpc } from "./testing";
import { captureLog } from "../../tests/support/log";

beforeEach(resetDb);

async function nothingWritten() {
  expect(await rowsWritten()).toEqual({ tasks: 0, intents: 0, requests: 0, audit: 0, refunds: 0, transfers: 0, deployments: 0 });
}

function expectInvalidInput(r: Rpc) {
  expect(r.status).toBe(200);
  expect(r.body.result.isError).toBe(true);
  const text = textOf(r.body.result);
  expect(text).toMatch(/^Invalid arguments for /);
  expect(text).toMatch(/did not run/);
  expect(text).not.toMatch(/Internal error|unknown|\n\s+at |\.ts:\d+/);
  return text;
}

/** A tools/call whose body is sent exactly as written (so `__proto__` stays an own key of the arguments). */
async function rawCall(tool: string, argumentsJson: string): Promise<Rpc> {
  const { headers, body } = buildRpcRequest("tools/call", { name: tool, arguments: { placeholder: true } }, { token: SUPPORT_BOT });
  const raw = body.replace('{"placeholder":true}', argumentsJson);
  expect(raw).not.toBe(body);
  const res = await POST(new Request("http://localhost/mcp", { method: "POST", headers, body: raw }));
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: parseRpcBody(text, res.headers.get("content-type") ?? ""), text };
}

describe("text that cannot be stored is invalid input, refused before anything is written", () => {
  const cases: [string, string, Record<string, unknown>][] = [
    ["a NUL character in a refund reason (a call that would need approval)", "issue_refund", { order_id: "O-2289", reason: "refund\u0000now" }],
    ["a NUL character in a refund reason (a call that needs no approval)", "issue_refund", { order_id: "O-1021", amount: 5, reason: "a\u0000b" }],
    ["a lone high surrogate in a wire transfer memo", "wire_transfer", { to: "acct-991", amount: 30_000, memo: "pay \ud800 now" }],
    ["a lone low surrogate in a wire transfer memo", "wire_transfer", { to: "acct-991", amount: 50, memo: "\udc00" }],
    ["a NUL character in a path", "delete_path", { path: "prod/logs\u0000" }],
    ["a lone surrogate in a service name", "deploy_service", { service: "checkout-api\udfff", environment: "production", version: "1.4.2" }],
    ["a NUL character in a key", "issue_refund", { order_id: "O-2289", "re\u0000ason": "x" }],
  ];
  it.each(cases)("%s", async (_label, tool, args) => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const log = captureLog();
    const text = expectInvalidInput(await call(tool, args));
    expect(text).toMatch(/NUL character|unpaired surrogate/);
    expect(console.error).not.toHaveBeenCalled();
    // No failure in the server log: the refusal is an ordinary answer.
    expect(log.lines().filter((l) => l.level === "error")).toEqual([]);
    log.restore();
    await nothingWritten();
    vi.restoreAllMocks();
  });

  it("through request_access: in the inner arguments and in the justification", async () => {
    for (const args of [
      { tool: "issue_refund", arguments: { order_id: "O-2289", reason: "x\u0000" } },
      { tool: "issue_refund", arguments: { order_id: "O-2289" }, justification: "Customer was double charged \u0000 twice" },
      { tool: "wire_transfer", arguments: { to: "acct-991", amount: 30_000 }, ticket: "FIN-\ud83d" },
    ]) {
      const r = await call("request_access", args, { caps: {} });
      expect(r.body.result.isError).toBe(true);
      const text = textOf(r.body.result);
      expect(text).toMatch(/^Invalid arguments for (request_access|issue_refund|wire_transfer)/);
      expect(text).toMatch(/NUL character|unpaired surrogate/);
      expect(text).toMatch(/Nothing was submitted|did not run/);
      expect(text).not.toMatch(/Internal error|unknown/);
    }
    await nothingWritten();
  });
});

describe("keys that name the prototype are refused like any other unknown key", () => {
  it.each([
    ["__proto__", '{"order_id":"O-2289","__proto__":{"amount":1}}'],
    ["constructor", '{"order_id":"O-2289","constructor":{"amount":1}}'],
    ["prototype", '{"order_id":"O-2289","prototype":1}'],
    ["__proto__ nested", '{"order_id":"O-2289","reason":"x","extra":{"__proto__":{"a":1}}}'],
  ])("%s", async (key, json) => {
    const text = expectInvalidInput(await rawCall("issue_refund", json));
    expect(text).toContain(key.split(" ")[0]);
    await nothingWritten();
  });

  it("the same refusal for __proto__ and constructor in request_access's inner arguments", async () => {
    const texts = [];
    for (const key of ["__proto__", "constructor"]) {
      const r = await rawCall("request_access", `{"tool":"issue_refund","arguments":{"order_id":"O-2289","${key}":{"amount":1}}}`);
      expect(r.body.result.isError).toBe(true);
      texts.push(textOf(r.body.result).replaceAll(key, "KEY"));
    }
    expect(texts[0]).toBe(texts[1]);
    expect(texts[0]).toMatch(/^Invalid arguments for .*KEY.*(did not run|Nothing was submitted)/s);
    await nothingWritten();
  });
});

describe("the error text for unknown keys stays short", () => {
  it("100,000 unknown keys: the reply names the first few and counts the rest", async () => {
    const args: Record<string, unknown> = { order_id: "O-2289" };
    for (let i = 0; i < 100_000; i++) args[`k${i}`] = 1;
    const r = await call("issue_refund", args);
    const text = expectInvalidInput(r);
    expect(r.text.length).toBeLessThan(2_000);
    expect(text).toMatch(/k0.*k1.*and 99,99\d more/s);
    await nothingWritten();
  });

  it("a single very long unknown key is shortened", async () => {
    const r = await call("wire_transfer", { to: "acct-991", amount: 10, ["x".repeat(200_000)]: 1 });
    expectInvalidInput(r);
    expect(r.text.length).toBeLessThan(2_000);
  });

  it("through request_access too", async () => {
    const inner: Record<string, unknown> = { order_id: "O-2289" };
    for (let i = 0; i < 100_000; i++) inner[`k${i}`] = 1;
    const outer: Record<string, unknown> = { tool: "issue_refund", arguments: inner };
    for (let i = 0; i < 50_000; i++) outer[`o${i}`] = 1;
    const r = await call("request_access", outer, { caps: {} });
    expect(r.body.result.isError).toBe(true);
    expect(r.text.length).toBeLessThan(2_000);
    const r2 = await call("request_access", { tool: "issue_refund", arguments: inner }, { caps: {} });
    expect(r2.body.result.isError).toBe(true);
    expect(r2.text.length).toBeLessThan(2_000);
    await nothingWritten();
  });
});

describe("answers to a reviewer's question are text too", () => {
  async function askedTask(): Promise<string> {
    const taskId = (await call("issue_refund", { order_id: "O-2289" })).body.result.taskId as string;
    const schema = { type: "object", properties: { answer: { type: "string", maxLength: 100 } }, required: ["answer"] };
    const asked = await askQuestions(
      { requestId: await requestIdOf(taskId), reviewerId: await userId("lena.lead@countersign.test"), questions: { ticket: { message: "Which ticket?", requestedSchema: schema } } },
      new Date(),
    );
    expect(asked.ok).toBe(true);
    return taskId;
  }

  it("tasks/update with a NUL character or an unpaired surrogate in an answer: -32602 that says why, and nothing is recorded", async () => {
    const taskId = await askedTask();
    for (const answer of ["SUP-\u00001", "SUP-\ud8001"]) {
      const r = await rpc("tasks/update", { taskId, inputResponses: { ticket: { action: "accept", content: { answer } } } });
      expect(r.body.error.code).toBe(-32602);
      expect(r.body.error.message).toMatch(/ticket\.content\.answer: the text contains (a NUL character|an unpaired surrogate).*Nothing was recorded/);
    }
    expect((await db().clarification.findFirstOrThrow({ where: { taskId } })).answeredAt).toBeNull();
    expect((await rpc("tasks/get", { taskId })).body.result.status).toBe("input_required");
  });

  it("answer_request and get_request_status with a NUL character: invalid input, not an internal error", async () => {
    const taskId = await askedTask();
    const answered = await call("answer_request", { request_id: taskId, answers: { ticket: "SUP-\u00001" } }, { caps: {} });
    expect(answered.body.result.isError).toBe(true);
    expect(textOf(answered.body.result)).toMatch(/^Invalid arguments for answer_request: answers\.ticket: the text contains a NUL character.*Nothing was recorded/);
    expect((await db().clarification.findFirstOrThrow({ where: { taskId } })).answeredAt).toBeNull();
    const status = await call("get_request_status", { request_id: `${taskId}\u0000` }, { caps: {} });
    expect(status.body.result.isError).toBe(true);
    expect(textOf(status.body.result)).toMatch(/^Invalid arguments for get_request_status: request_id: the text contains a NUL character/);
  });
});
