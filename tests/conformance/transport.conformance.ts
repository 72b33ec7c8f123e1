/**
 * The transport rules on a real running server (Next.js in front of the SDK), black-box: what reaches the wire
 * for hostile or clumsy requests, and the 2025-11-25 handshake. The in-process tests in lib/mcp/hardening.test.ts
 * cover the same ground in more detail; this file proves the production server answers alike.
 */
import { describe, expect, it } from "vitest";
import { MCP_URL, SUPPORT_BOT, callTool, rpc, textOf } from "./support";

const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);

describe("transport on a running server", () => {
  it("401 with WWW-Authenticate for a missing or unknown token; 403 for a foreign Origin", async () => {
    for (const token of [null, "cs_not-a-real-token-not-a-real-token-000000"]) {
      const r = await rpc("tools/list", {}, { token });
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toMatch(/^Bearer /);
    }
    const foreign = await rpc("tools/list", {}, { headers: { Origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    noStack(foreign.text);
  });

  it("malformed JSON is -32700, a batch -32600, an unknown method -32601, a header mismatch -32020, an oversized body 413", async () => {
    const cases: [Parameters<typeof rpc>, number, number | null][] = [
      [["tools/list", {}, { raw: "{not json" }], 400, -32700],
      [["tools/list", {}, { raw: "[]" }], 400, -32600],
      [["no/such_method"], 404, -32601],
      [["tools/list", {}, { headers: { "Mcp-Method": "prompts/list" } }], 400, -32020],
      [["tools/list", {}, { raw: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"${"y".repeat(4_500_000)}"}}` }], 413, null],
    ];
    for (const [args, status, code] of cases) {
      const r = await rpc(...args);
      expect(r.status).toBe(status);
      if (code !== null) expect(r.body.error.code).toBe(code);
      noStack(r.text);
    }
  });

  it("a 2025-11-25 client: initialize, then a gated call gets the degraded result with next steps", async () => {
    const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${SUPPORT_BOT}` };
    const init = await fetch(MCP_URL, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "old", version: "1" } } }),
    });
    expect(init.status).toBe(200);
    expect(await init.text()).toMatch(/"protocolVersion":"2025-11-25"/);
    const gated = await fetch(MCP_URL, {
      method: "POST",
      headers: { ...headers, "MCP-Protocol-Version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "issue_refund", arguments: { order_id: "O-2289" } } }),
    });
    const text = await gated.text();
    expect(text).toMatch(/"isError":true/);
    expect(text).toMatch(/did not run/);
    expect(text).toMatch(/request_access/);
    expect(text).not.toMatch(/"taskId"/);
  });

  it("the degraded tools work for a client without the tasks extension", async () => {
    const r = await callTool("request_access", { tool: "issue_refund", arguments: { order_id: "O-4410" } }, { caps: {} });
    expect(r.body.result.structuredContent).toMatchObject({ status: "working", tool_ran: "no" });
    const s = await callTool("get_request_status", { request_id: r.body.result.structuredContent.request_id }, { caps: {} });
    expect(textOf(s.body.result)).toMatch(/pending.*has not run/s);
  });
});
