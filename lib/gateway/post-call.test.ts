/**
 * The direct tools/call on a 2025-era Streamable HTTP session, against a local HTTP server that answers the ways a
 * real one may: a JSON body, an event stream with notifications and a request of its own before the answer, a
 * JSON-RPC error, a status other than 200, an answer that never comes, a connection refused. Each must fail the
 * way callUpstream reads (end to end against server-everything: tests/gateway-everything.test.ts).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ProtocolError, SdkError, SdkErrorCode } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { freeLoopbackPort } from "../net/free-port";
import { MAX_ANSWER_BYTES, Redirected, postToolCall, postsOnSession, sseEvents, type Session } from "./post-call";

type Seen = { headers: http.IncomingHttpHeaders; body: { id?: unknown; method?: string; params?: unknown; error?: unknown } };
type Answer = (req: Seen, res: http.ServerResponse) => void;

let server: http.Server | null = null;
const seen: Seen[] = [];

async function upstream(answer: Answer): Promise<Session> {
  seen.length = 0;
  server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      const s = { headers: req.headers, body: JSON.parse(text) };
      seen.push(s);
      if (s.body.method === undefined) return void res.writeHead(202).end();
      answer(s, res);
    });
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), headers: { Authorization: "Bearer up-secret" }, sessionId: "sess-1", protocolVersion: "2025-11-25" };
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => (server ? server.close(r) : r(null)));
  server = null;
});

const ok = (id: unknown, text = "done") => ({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text }], isError: false } });
const noNotes = () => {};

describe("postToolCall", () => {
  it("posts one tools/call on the session, with its headers and credentials, and returns a JSON answer as given", async () => {
    const s = await upstream((req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(ok(req.body.id, "hi"))));
    const r = await postToolCall(s, "echo", { message: "hi" }, 5000, noNotes);
    expect(r).toEqual({ content: [{ type: "text", text: "hi" }], isError: false });
    expect(seen).toHaveLength(1);
    expect(seen[0].body).toMatchObject({ jsonrpc: "2.0", method: "tools/call", params: { name: "echo", arguments: { message: "hi" } } });
    expect(seen[0].headers).toMatchObject({ authorization: "Bearer up-secret", "mcp-session-id": "sess-1", "mcp-protocol-version": "2025-11-25", "content-type": "application/json" });
    expect(seen[0].headers.accept).toContain("text/event-stream");
  });

  it("reads the answer from an event stream after notifications and a request of the server's own, which it refuses", async () => {
    const notes: string[] = [];
    const s = await upstream((req, res) => {
      if (req.body.method !== "tools/call") return;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("id: 0\ndata: \n\n");
      res.write(`event: message\r\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { progress: 1 } })}\r\n\r\n`);
      res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/tools/list_changed" })}\n\n`);
      res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id: 77, method: "sampling/createMessage", params: {} })}\n\n`);
      // A request of the server's that happens to reuse the call's id is still a request, not the answer.
      res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id: req.body.id, method: "roots/list" })}\n\n`);
      // The answer split across writes, as a network may deliver it.
      const frame = `data: ${JSON.stringify(ok(req.body.id, "streamed"))}\n\n`;
      res.write(frame.slice(0, 10));
      setImmediate(() => res.end(frame.slice(10)));
    });
    const r = await postToolCall(s, "echo", {}, 5000, (m) => notes.push(m));
    expect(r.content).toEqual([{ type: "text", text: "streamed" }]);
    expect(notes).toEqual(["notifications/progress", "notifications/tools/list_changed"]);
    await expect.poll(() => seen.find((x) => x.body.id === 77)?.body).toMatchObject({ id: 77, error: { code: -32601 } });
    await expect.poll(() => seen.filter((x) => x.body.error).length).toBe(2);
  });

  it("fails with the upstream's JSON-RPC error as a ProtocolError", async () => {
    const s = await upstream((req, res) =>
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: req.body.id, error: { code: -32602, message: "Unknown tool: nope" } })),
    );
    const e = await postToolCall(s, "nope", {}, 5000, noNotes).catch((x) => x);
    expect(e).toBeInstanceOf(ProtocolError);
    expect(e).toMatchObject({ code: -32602, message: "Unknown tool: nope" });
  });

  it.each([
    ["a status other than 200", (_: Seen, res: http.ServerResponse) => res.writeHead(404, { "content-type": "application/json" }).end("{}"), /HTTP 404/],
    ["an answer that is not a tool result", (req: Seen, res: http.ServerResponse) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: req.body.id, result: { content: "no" } })), /not a tool result/],
    ["a body that is not JSON", (_: Seen, res: http.ServerResponse) => res.writeHead(200, { "content-type": "application/json" }).end("{"), /not JSON/],
    ["another request's answer only", (_: Seen, res: http.ServerResponse) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(ok("other"))), /ended without it/],
    ["a stream that ends without the answer", (_: Seen, res: http.ServerResponse) => res.writeHead(200, { "content-type": "text/event-stream" }).end(`data: {"jsonrpc":"2.0","method":"notifications/message"}\n\n`), /ended without it/],
    ["a stream cut off", (_: Seen, res: http.ServerResponse) => (res.writeHead(200, { "content-type": "text/event-stream" }), res.write(": open\n\n"), setImmediate(() => res.socket?.destroy())), /cut off|socket hang up|aborted/],
    [
      "an answer larger than the gateway reads",
      (_: Seen, res: http.ServerResponse) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = `: ${"x".repeat(1024 * 1024)}\n\n`;
        for (let i = 0; i < MAX_ANSWER_BYTES / (1024 * 1024) + 1; i++) res.write(chunk);
        res.end();
      },
      /exceeds the size/,
    ],
    ["an unexpected content type", (_: Seen, res: http.ServerResponse) => res.writeHead(200, { "content-type": "text/html" }).end("<p>hi</p>"), /text\/html/],
  ])("fails with a plain error (an unknown outcome) on %s", async (_what, answer, message) => {
    const s = await upstream(answer);
    const e = await postToolCall(s, "echo", {}, 5000, noNotes).catch((x) => x);
    expect(e).toBeInstanceOf(Error);
    expect(e).not.toBeInstanceOf(ProtocolError);
    expect(e).not.toBeInstanceOf(SdkError);
    expect((e as { code?: string }).code).not.toBe("ECONNREFUSED");
    expect(String((e as Error).message)).toMatch(message);
  });

  it("fails with Redirected, having read nothing, when the endpoint redirects (the SDK client then makes the call)", async () => {
    const s = await upstream((_req, res) => res.writeHead(307, { location: "/elsewhere", "content-type": "text/plain" }).end("moved"));
    const e = await postToolCall(s, "echo", {}, 5000, noNotes).catch((x) => x);
    expect(e).toBeInstanceOf(Redirected);
  });

  it("fails with a request timeout when no answer comes before the deadline", async () => {
    const s = await upstream((_req, res) => res.writeHead(200, { "content-type": "text/event-stream" }).write(": waiting\n\n"));
    const e = await postToolCall(s, "slow", {}, 150, noNotes).catch((x) => x);
    expect(e).toBeInstanceOf(SdkError);
    expect((e as SdkError).code).toBe(SdkErrorCode.RequestTimeout);
  });

  it("fails with ECONNREFUSED when nothing listens (nothing was sent)", async () => {
    const port = await freeLoopbackPort();
    const e = await postToolCall({ url: new URL(`http://127.0.0.1:${port}/mcp`), headers: {}, sessionId: undefined, protocolVersion: "2025-11-25" }, "echo", {}, 5000, noNotes).catch((x) => x);
    expect((e as { code?: string }).code).toBe("ECONNREFUSED");
  });
});

describe("postsOnSession", () => {
  it("takes the revisions that answer on the POST's own response, not 2026-07-28 or none", () => {
    for (const v of ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]) expect(postsOnSession(v)).toBe(true);
    for (const v of ["2026-07-28", undefined, "", "2025-11-25x"]) expect(postsOnSession(v)).toBe(false);
  });
});

describe("sseEvents", () => {
  it("joins each complete event's data lines and keeps an incomplete tail", () => {
    expect(sseEvents("id: 1\ndata: a\ndata: b\n\n: comment\n\ndata:c\r\n\r\ndata: par")).toEqual({ events: ["a\nb", "c"], rest: "data: par" });
    // A priming event (an id and empty data, as resumable servers send first) is not dispatched.
    expect(sseEvents("id: 0\ndata: \n\nid: 1\ndata:\n\n")).toEqual({ events: [], rest: "" });
  });
});
