/**
 * A body nested thousands of levels deep is refused with 400 before anything walks it recursively (it used to
 * overflow the stack inside the SDK's envelope validation and come back as a 500); the limit leaves room for any
 * real request, and brackets inside strings do not count.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { resetDb } from "../../tests/support/db";
import { MAX_JSON_DEPTH, jsonDepth, parsedBodyOf, screenBody } from "./nesting";
import { buildRpcRequest } from "./raw-request";
import { SUPPORT_BOT, TASKS, call, rpc } from "./testing";

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
  const post = (body: string | null, method = "POST", headers: Record<string, string> = {}) =>
    new Request("http://127.0.0.1/mcp", { method, body, headers: { "content-type": "application/json", ...headers } });
  const LIST = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
  const declared = (text: string) => ({ "content-length": String(Buffer.byteLength(text)) });

  it("a body without a declared length is read from a clone: its text and value come back, the request's own body stays unread", async () => {
    const request = post(LIST);
    const screened = await screenBody(request);
    expect(screened).toEqual({ request, text: LIST, parsedBody: JSON.parse(LIST) });
    expect(request.bodyUsed).toBe(false);
    expect(await request.text()).toBe(LIST);
  });

  it("a body of a declared length is read from the request itself, which is handed on as it is when its value was read", async () => {
    const request = post(LIST, "POST", declared(LIST));
    const screened = await screenBody(request);
    expect(screened).toEqual({ request, text: LIST, parsedBody: JSON.parse(LIST) });
    expect(request.bodyUsed).toBe(true);
  });

  it("text that is not JSON, read from the request itself, is handed on in a copy the SDK can read again", async () => {
    const text = '{"jsonrpc":"2.0",';
    const request = post(text, "POST", { ...declared(text), "x-request-id": "kept-request-id" });
    const screened = await screenBody(request);
    if ("refused" in screened) throw new Error("refused");
    expect(screened).not.toHaveProperty("parsedBody");
    expect(screened.request).not.toBe(request);
    expect(screened.request.headers.get("x-request-id")).toBe("kept-request-id");
    expect(await screened.request.text()).toBe(text);
  });

  it("a body that fails while it is read is handed on as a copy whose reading fails too", async () => {
    const broken = new ReadableStream<Uint8Array>({ start: (c) => c.error(new Error("connection reset")) });
    const request = new Request("http://127.0.0.1/mcp", { method: "POST", body: broken, headers: { "content-type": "application/json", "content-length": "10" }, duplex: "half" } as RequestInit);
    const screened = await screenBody(request);
    if ("refused" in screened) throw new Error("refused");
    expect(screened).not.toHaveProperty("text");
    await expect(screened.request.text()).rejects.toThrow();
  });

  it("a body nested too deep is refused; a GET or a POST without a body is left to the SDK", async () => {
    const refused = await screenBody(post(JSON.stringify(nested(MAX_JSON_DEPTH + 1))));
    expect("refused" in refused && refused.refused.status).toBe(400);
    const deep = JSON.stringify(nested(MAX_JSON_DEPTH + 1));
    const refusedDeclared = await screenBody(post(deep, "POST", declared(deep)));
    expect("refused" in refusedDeclared && refusedDeclared.refused.status).toBe(400);
    expect(await screenBody(post(JSON.stringify(nested(MAX_JSON_DEPTH))))).toHaveProperty("text");
    const get = new Request("http://127.0.0.1/mcp");
    expect(await screenBody(get)).toEqual({ request: get });
    const empty = post(null);
    expect(await screenBody(empty)).toEqual({ request: empty });
  });

  it("a body too large to read whole is left to the SDK, unread, which answers it with its 413", async () => {
    const big = `{"x":"${"a".repeat(5 * 1024 * 1024)}"}`;
    for (const request of [post(big), post(big, "POST", declared(big))]) {
      expect(await screenBody(request)).toEqual({ request });
      expect(request.bodyUsed).toBe(false);
    }
  });

  it("through the route, a body read from the request itself is answered as one read from a clone", async () => {
    const { POST } = await import("../../app/mcp/route");
    const send = async (text: string, withLength: boolean) => {
      const { headers } = buildRpcRequest("tools/list", {}, { token: SUPPORT_BOT });
      const r = await POST(new Request("http://127.0.0.1/mcp", { method: "POST", body: text, headers: { ...headers, ...(withLength ? declared(text) : {}) } }));
      return { status: r.status, body: await r.text() };
    };
    const list = buildRpcRequest("tools/list", {}, { token: SUPPORT_BOT }).body;
    for (const text of ['{"jsonrpc":"2.0",', "", "null", "[]", list]) {
      const viaClone = await send(text, false);
      expect(await send(text, true)).toEqual(viaClone);
    }
    expect((await send(list, true)).status).toBe(200);
    expect((await send('{"jsonrpc":"2.0",', true)).body).toMatch(/-32700/);
  });

  it("only JSON text becomes parsedBody: empty or malformed text gives nothing, so the SDK reads and answers it", () => {
    expect(parsedBodyOf('{"a":[1,2]}')).toEqual({ parsedBody: { a: [1, 2] } });
    expect(parsedBodyOf("null")).toEqual({ parsedBody: null });
    expect(parsedBodyOf("")).toEqual({});
    expect(parsedBodyOf(undefined)).toEqual({});
    expect(parsedBodyOf('{"jsonrpc":"2.0",')).toEqual({});
  });
});
