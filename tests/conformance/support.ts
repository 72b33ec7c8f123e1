/**
 * Support for the black-box scenarios: the agent side speaks raw JSON-RPC over HTTP to the running server at
 * COUNTERSIGN_BASE_URL, exactly as any MCP client would; nothing of the server's code is loaded for that side.
 *
 * The reviewer side is out of band by definition (the SEP: the approval protocol never crosses the MCP wire), so
 * the scenarios act as a reviewer the way the app's inbox does: they call `decide` and `askRequester` from lib,
 * the same functions the inbox server actions call, against the server's own database (DATABASE_URL). Reading
 * that database is also how they observe side effects (a refund row or its absence), and how they find the
 * request a reviewer would open in the inbox. They never feed anything back to the agent side.
 */
import { randomInt } from "node:crypto";
import { expect } from "vitest";
import { db } from "../../lib/db/client";
import { DEMO_AGENTS } from "../../lib/db/seed";
import { TASKS, TASKS_AND_FORMS, buildRpcRequest, parseRpcBody } from "../../lib/mcp/raw-request";

// Not BASE_URL: Vite defines that one ("/") inside Vitest.
export const BASE_URL = process.env.COUNTERSIGN_BASE_URL ?? "";
export const MCP_URL = `${BASE_URL.replace(/\/$/, "")}/mcp`;
export const SUPPORT_BOT = DEMO_AGENTS[0].token;
export const OPS_BOT = DEMO_AGENTS[1].token;
export { TASKS, TASKS_AND_FORMS };
export const AUTH_KEY = "io.modelcontextprotocol/authorization";
export const DISPOSITION_KEY = "io.modelcontextprotocol/tool-approval-disposition";
export const IMMEDIATE_KEY = "io.modelcontextprotocol/model-immediate-response";

export type Reply = { status: number; headers: Headers; text: string; body: any };

let nextId = 1;

/** One JSON-RPC request over HTTP with the 2026-07-28 headers and per-request _meta envelope. */
export async function rpc(method: string, params: Record<string, unknown> = {}, opts: { token?: string | null; caps?: object; headers?: Record<string, string>; raw?: string } = {}): Promise<Reply> {
  const { headers, body } = buildRpcRequest(method, params, {
    ...opts,
    id: nextId++,
    clientName: "countersign-blackbox",
    token: opts.token === undefined ? SUPPORT_BOT : opts.token,
  });
  const res = await fetch(MCP_URL, { method: "POST", headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: parseRpcBody(text, res.headers.get("content-type") ?? "") };
}

export const callTool = (name: string, args: Record<string, unknown>, opts: Parameters<typeof rpc>[2] & { extra?: Record<string, unknown> } = {}) =>
  rpc("tools/call", { name, arguments: args, ...(opts.extra ?? {}) }, opts);
export const getTask = (taskId: string, token?: string) => rpc("tasks/get", { taskId }, { token });
export const cancelTask = (taskId: string, token?: string) => rpc("tasks/cancel", { taskId }, { token });

export function textOf(result: { content?: { text?: string }[] } | undefined): string {
  return (result?.content ?? []).map((c) => c.text ?? "").join("\n");
}

/** Polls tasks/get until the task leaves working (or input_required when `until` says so). */
export async function settle(taskId: string, until: (status: string) => boolean = (s) => ["completed", "failed", "cancelled"].includes(s), timeoutMs = 20_000, token?: string): Promise<any> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = await getTask(taskId, token);
    expect(r.status).toBe(200);
    if (until(r.body.result.status) || Date.now() > end) return r.body.result;
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** A demo-shop order of its own (fixture data in the server's database), so scenarios never share one. */
export async function freshOrder(totalCents = 20_000): Promise<string> {
  const id = `O-${randomInt(100_000_000, 999_999_999)}`;
  await db().order.create({ data: { id, customer: "Conformance Scenario", totalCents, currency: "EUR" } });
  return id;
}

export async function reviewerId(email: string): Promise<string> {
  return (await db().user.findUniqueOrThrow({ where: { email } })).id;
}

/** The approval request a reviewer would open in the inbox for this task (its current generation). */
export async function requestOf(taskId: string) {
  const t = await db().task.findUniqueOrThrow({ where: { id: taskId } });
  return db().approvalRequest.findUniqueOrThrow({ where: { id: t.handle! } });
}

export function refunds(orderId: string): Promise<number> {
  return db().refund.count({ where: { orderId } });
}
