/**
 * A tools/call posted straight onto an upstream's 2025-era Streamable HTTP session: the session the SDK client
 * opened (its id and negotiated revision), one JSON-RPC request on a keep-alive connection, the answer read from
 * the JSON body or from the event stream. The SDK client's per-request machinery (web streams, schema validation of
 * every frame, request bookkeeping) was a third of the upstream leg of a forwarded call; this is the same exchange
 * without it. A 2026-07-28 upstream and a stdio one keep the SDK client (lib/gateway/connections.ts).
 *
 * It fails the way the SDK client does, so callUpstream tells the outcomes apart in one place: a JSON-RPC error
 * answer is a ProtocolError; a refused connection (nothing was sent) an error whose code is ECONNREFUSED; the
 * deadline an SdkError RequestTimeout; anything else after the request may have left (a reset, a status other than
 * 200, an answer that is not a CallToolResult, a stream that ended without the answer) a plain Error.
 */
import http from "node:http";
import https from "node:https";
import { ProtocolError, SdkError, SdkErrorCode, isCallToolResult, type CallToolResult } from "@modelcontextprotocol/client";

/**
 * The upstream answered with a redirect: it did not take the call, and the SDK client (which follows a same-origin
 * redirect) is to make it instead. Thrown before anything else was read.
 */
export class Redirected extends Error {}

export type Session = {
  url: URL;
  /** The registered credentials' header and any other configured headers. */
  headers: Record<string, string>;
  sessionId: string | undefined;
  protocolVersion: string;
};

/** Revisions before 2026-07-28: one session, the request's answer on the POST's own response. */
export function postsOnSession(protocolVersion: string | undefined): protocolVersion is string {
  return typeof protocolVersion === "string" && /^20(24|25)-\d\d-\d\d$/.test(protocolVersion);
}

/** At most this much of one answer is read (a larger one fails as an unknown outcome). */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
let sequence = 0;

type Message = { id?: unknown; method?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };

function requestHeaders(s: Session, body: string): Record<string, string | number> {
  return {
    ...s.headers,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": s.protocolVersion,
    ...(s.sessionId ? { "mcp-session-id": s.sessionId } : {}),
    "content-length": Buffer.byteLength(body),
  };
}

function post(s: Session, body: string): http.ClientRequest {
  const secure = s.url.protocol === "https:";
  return (secure ? https : http).request(s.url, { method: "POST", agent: secure ? agents.https : agents.http, headers: requestHeaders(s, body) });
}

/**
 * A request the upstream sends while it answers (sampling, elicitation, roots): the gateway offers none of these
 * capabilities, so it is answered "method not found", as the SDK client answers it, and the call goes on.
 */
function refuseServerRequest(s: Session, id: unknown): void {
  const body = JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } });
  const req = post(s, body);
  req.on("response", (res) => res.resume());
  req.on("error", () => {});
  req.end(body);
}

/** The data of each complete event in `buffer` (the HTML event-stream format); the incomplete tail is returned to be continued. */
export function sseEvents(buffer: string): { events: string[]; rest: string } {
  const events: string[] = [];
  const blocks = buffer.split(/\r?\n\r?\n/);
  const rest = blocks.pop() ?? "";
  for (const block of blocks) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(l.startsWith("data: ") ? 6 : 5));
    // An event whose data is empty is not dispatched (a resumable server's priming event is such a one).
    const text = data.join("\n");
    if (text) events.push(text);
  }
  return { events, rest };
}

export function postToolCall(s: Session, tool: string, args: Record<string, unknown>, timeoutMs: number, onNotification: (method: string) => void): Promise<CallToolResult> {
  const id = `countersign-${++sequence}`;
  const body = JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: args } });
  return new Promise<CallToolResult>((resolve, reject) => {
    let settled = false;
    const req = post(s, body);
    const settle = (outcome: { result: CallToolResult } | { error: Error }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if ("error" in outcome) {
        req.destroy();
        reject(outcome.error);
      } else {
        resolve(outcome.result);
      }
    };
    const failed = (why: string) => settle({ error: new Error(`the upstream's answer to the call ${why}`) });
    const timer = setTimeout(() => settle({ error: new SdkError(SdkErrorCode.RequestTimeout, "Request timed out", { timeout: timeoutMs }) }), timeoutMs);

    /** One JSON-RPC message of the answer: true once it was the call's own. */
    const take = (m: Message): boolean => {
      if (!m || typeof m !== "object") return false;
      if (m.id === id && m.method === undefined) {
        if (m.error && typeof m.error === "object") {
          const code = typeof m.error.code === "number" ? m.error.code : -32603;
          settle({ error: new ProtocolError(code, typeof m.error.message === "string" ? m.error.message : "Error", m.error.data) });
        } else if (isCallToolResult(m.result)) {
          settle({ result: m.result });
        } else {
          failed("is not a tool result");
        }
        return true;
      }
      if (typeof m.method === "string") {
        if (m.id !== undefined && m.id !== null) refuseServerRequest(s, m.id);
        else onNotification(m.method);
      }
      return false;
    };
    const takeText = (text: string): boolean => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        failed("is not JSON");
        return true;
      }
      for (const m of Array.isArray(parsed) ? parsed : [parsed]) if (take(m as Message)) return true;
      return false;
    };

    req.on("error", (e) => settle({ error: e }));
    req.on("response", (res) => {
      const type = String(res.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        res.resume();
        return settle({ error: new Redirected(`the upstream redirects its endpoint (HTTP ${status})`) });
      }
      if (res.statusCode !== 200 || (type !== "application/json" && type !== "text/event-stream")) {
        res.resume();
        failed(`came with HTTP ${res.statusCode} (${type || "no content type"})`);
        return;
      }
      res.setEncoding("utf8");
      let read = 0;
      let buffer = "";
      res.on("data", (chunk: string) => {
        if (settled) return;
        read += Buffer.byteLength(chunk);
        if (read > MAX_ANSWER_BYTES) return failed("exceeds the size the gateway reads");
        buffer += chunk;
        if (type !== "text/event-stream") return;
        const { events, rest } = sseEvents(buffer);
        buffer = rest;
        for (const event of events) if (takeText(event)) return;
      });
      res.on("end", () => {
        if (type === "application/json" && !settled && takeText(buffer)) return;
        failed("ended without it");
      });
      res.on("error", (e) => settle({ error: e }));
      res.on("close", () => failed("was cut off"));
    });
    req.end(body);
  });
}
