/**
 * A body nested thousands of levels deep is refused with 400 before anything walks it recursively (it used to
 * overflow the stack inside the SDK's envelope validation and come back as a 500); the limit leaves room for any
 * real request, and brackets inside strings do not count.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { resetDb } from "../../tests/support/db";
import { MAX_JSON_DEPTH, jsonDepth, parsedBodyOf, screenBody } from "./nesting";
import { TASKS, call, rpc } from "./testing";

function nested(depth: number): object {
  let v: object = { leaf: true };
  for (let i = 1; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

beforeAll(resetDb);

describe("JSON nesting depth", () => {
  it("counts arrays and objects, not brackets in strings or escaped quotes", () => {
    expect(jsonDepth('{"a":[1,{"b":2}]}')).toBe(3);
    expect(jsonDepth('{"a":"[[[{{{\\"]]]"}')).toBe(1);
    expect(jsonDepth("[]")).toBe(1);
    expect(jsonDepth('"plain"')).toBe(0);
    expect(jsonDepth(JSON.stringify(nested(1500)))).toBe(1500);
  });

  it("a request nested 1,500 deep in its client capabilities is a 400 Invalid Request, not a 500", async () => {
    const r = await rpc("tools/list", {}, { caps: { ...TASKS, extensions: { "io.modelcontextprotocol/tasks": nested(1500) } } });
    expect(r.status).toBe(400);
    expect(r.body.error).toEqual({ code: -32600, message: `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels` });
  });

  it("deep tool arguments are refused the same way, before authentication or any tool code", async () => {
    const r = await call("issue_refund", { order_id: "O-1021", amount: 1, note: nested(2000) }, { token: null });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe(-32600);
  });

  it("a request within the limit is served as before", async () => {
    // The envelope adds 3 levels above the arguments: params, arguments, then the value itself.
    const r = await call("issue_refund", { order_id: "O-1021", amount: 1, note: nested(MAX_JSON_DEPTH - 4) });
    expect(r.status).toBe(200);
    expect(r.body.result.isError).toBe(true);
    expect(r.body.result.content[0].text).toMatch(/did not run/);
  });
});

describe("the body read once for the SDK", () => {
  const post = (body: string | null, method = "POST") =>
    new Request("http://127.0.0.1/mcp", { method, body, headers: { "content-type": "application/json" } });

  it("a readable body comes back as its text and the request's own body stays unread", async () => {
    const request = post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
    const screened = await screenBody(request);
    expect(screened).toEqual({ text: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    expect(request.bodyUsed).toBe(false);
    expect(await request.text()).toBe('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
  });

  it("a body nested too deep is refused; a GET or a POST without a body is left to the SDK", async () => {
    const refused = await screenBody(post(JSON.stringify(nested(MAX_JSON_DEPTH + 1))));
    expect("refused" in refused && refused.refused.status).toBe(400);
    expect(await screenBody(post(JSON.stringify(nested(MAX_JSON_DEPTH))))).toHaveProperty("text");
    expect(await screenBody(new Request("http://127.0.0.1/mcp"))).toEqual({});
    expect(await screenBody(post(null))).toEqual({});
  });

  it("a body too large to read whole is left to the SDK, which answers it with its 413", async () => {
    expect(await screenBody(post(`{"x":"${"a".repeat(5 * 1024 * 1024)}"}`))).toEqual({});
  });

  it("only JSON text becomes parsedBody: empty or malformed text gives nothing, so the SDK reads and answers it", () => {
    expect(parsedBodyOf('{"a":[1,2]}')).toEqual({ parsedBody: { a: [1, 2] } });
    expect(parsedBodyOf("null")).toEqual({ parsedBody: null });
    expect(parsedBodyOf("")).toEqual({});
    expect(parsedBodyOf(undefined)).toEqual({});
    expect(parsedBodyOf('{"jsonrpc":"2.0",')).toEqual({});
  });
});
