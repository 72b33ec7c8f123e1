/**
 * Webhooks signed per Standard Webhooks, delivered to a receiver on loopback that verifies the signatures;
 * retries and the delivery log; the tamper-evident audit chain and its exports.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { exportAudit } from "../lib/audit/export";
import { appendAudit } from "../lib/audit/append";
import { verifyAuditChain } from "../lib/audit/verify";
import { callTool } from "../lib/tasks/call";
import { decide } from "../lib/tasks/decide";
import { createWebhook } from "../lib/webhooks/admin";
import { deliverDue, RETRY_DELAYS_MS } from "../lib/webhooks/deliver";
import { principal, requestIdOf, resetDb, userId } from "./support/db";

import { T0 } from "./support/proof";
const later = (ms: number) => new Date(T0.getTime() + ms);

type Received = { headers: http.IncomingHttpHeaders; body: string };
let server: http.Server;
let received: Received[] = [];
let failNext = 0;

async function receiver(): Promise<string> {
  received = [];
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (failNext > 0) {
        failNext--;
        res.writeHead(503).end();
        return;
      }
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

beforeEach(resetDb);
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

async function approvedRefund() {
  const agent = await principal();
  const out = await callTool(agent, "issue_refund", { order_id: "O-2289" }, { tasks: true }, T0);
  if (out.kind !== "task") throw new Error("expected a task");
  await decide({ requestId: await requestIdOf(out.task.taskId), reviewerId: await userId("lena.lead@countersign.test"), decision: "approve" }, later(1000));
  return out.task.taskId;
}

describe("webhooks (Standard Webhooks)", () => {
  it("delivers request.created, request.decided and task.completed, each verifiable with the endpoint's secret", async () => {
    const url = await receiver();
    const { secret } = await createWebhook({ url, events: ["request.created", "request.decided", "task.completed"] }, await userId("admin@countersign.test"), T0);
    const taskId = await approvedRefund();
    const report = await deliverDue(later(2000));
    expect(report).toEqual({ delivered: 3, retried: 0, failed: 0 });
    const wh = new Webhook(secret);
    const events = received.map((r) => wh.verify(r.body, r.headers as Record<string, string>) as { type: string; data: Record<string, unknown> });
    expect(events.map((e) => e.type)).toEqual(["request.created", "request.decided", "task.completed"]);
    expect(events[1].data).toMatchObject({ taskId, decision: "approved" });
    expect(events[2].data).toMatchObject({ taskId, status: "completed", disposition: "approved-executed" });
    // A forged body fails verification.
    expect(() => wh.verify(received[0].body.replace("request.created", "task.completed"), received[0].headers as Record<string, string>)).toThrow();
  });

  it("retries a failed delivery with the same webhook-id and logs each attempt", async () => {
    const url = await receiver();
    await createWebhook({ url, events: ["request.created"] }, await userId("admin@countersign.test"), T0);
    await callTool(await principal(), "issue_refund", { order_id: "O-2289" }, { tasks: true }, T0);
    failNext = 1;
    expect(await deliverDue(later(1000))).toEqual({ delivered: 0, retried: 1, failed: 0 });
    const d = await db().webhookDelivery.findFirstOrThrow();
    expect(d).toMatchObject({ status: "pending", attempts: 1, lastStatus: 503, lastError: "HTTP 503" });
    expect(await deliverDue(later(1000 + RETRY_DELAYS_MS[0] - 1))).toEqual({ delivered: 0, retried: 0, failed: 0 });
    expect(await deliverDue(later(1000 + RETRY_DELAYS_MS[0]))).toEqual({ delivered: 1, retried: 0, failed: 0 });
    expect(received[0].headers["webhook-id"]).toBe(d.id);
    expect(await db().webhookDelivery.findFirstOrThrow()).toMatchObject({ status: "delivered", attempts: 2, lastStatus: 204 });
  });

  it("parallel deliverers send each delivery once", async () => {
    const url = await receiver();
    await createWebhook({ url, events: ["request.created"] }, await userId("admin@countersign.test"), T0);
    await callTool(await principal(), "issue_refund", { order_id: "O-2289" }, { tasks: true }, T0);
    await Promise.all([deliverDue(later(1000)), deliverDue(later(1000)), deliverDue(later(1000))]);
    expect(received).toHaveLength(1);
  });

  it("an endpoint that never answers ends as failed after the last retry", async () => {
    await createWebhook({ url: "http://127.0.0.1:1/nothing", events: ["request.created"] }, await userId("admin@countersign.test"), T0);
    await callTool(await principal(), "issue_refund", { order_id: "O-2289" }, { tasks: true }, T0);
    let t = 1000;
    for (let i = 0; i <= RETRY_DELAYS_MS.length; i++) {
      await deliverDue(later(t));
      t += RETRY_DELAYS_MS[i] ?? 0;
    }
    expect(await db().webhookDelivery.findFirstOrThrow()).toMatchObject({ status: "failed", attempts: RETRY_DELAYS_MS.length + 1, lastError: "could not connect" });
  });
});

describe("the audit trail is tamper-evident", () => {
  it("links request -> review -> claim -> result, and the hash chain verifies", async () => {
    const taskId = await approvedRefund();
    const types = (await db().auditEvent.findMany({ where: { taskId }, orderBy: { seq: "asc" } })).map((e) => e.type);
    expect(types).toEqual(["request.created", "task.created", "review.approved", "request.approved", "execution.claimed", "execution.completed"]);
    expect(await verifyAuditChain()).toMatchObject({ ok: true });
  });

  it("an edited or deleted event breaks the chain at that event", async () => {
    await approvedRefund();
    const third = await db().auditEvent.findFirstOrThrow({ where: { seq: 3 } });
    await db().auditEvent.update({ where: { seq: 3 }, data: { actor: "user:someone-else" } });
    expect(await verifyAuditChain()).toMatchObject({ ok: false, brokenAt: 3, why: "event content does not match its hash" });
    await db().auditEvent.update({ where: { seq: 3 }, data: { actor: third.actor } });
    expect(await verifyAuditChain()).toMatchObject({ ok: true });
    await db().auditEvent.delete({ where: { seq: 3 } });
    expect(await verifyAuditChain()).toMatchObject({ ok: false, brokenAt: 4, why: "link to the previous event does not match" });
  });

  it("a trail whose newest events were deleted ends before its head, and verification says so", async () => {
    await approvedRefund();
    const last = await db().auditEvent.findFirstOrThrow({ orderBy: { seq: "desc" } });
    await db().auditEvent.delete({ where: { seq: last.seq } });
    expect(await verifyAuditChain()).toMatchObject({ ok: false, brokenAt: last.seq, why: "the trail ends before its head: its newest events are missing" });
  });

  it("concurrent appends from many transactions form one unbroken chain in sequence order", async () => {
    const before = await db().auditEvent.count();
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        db().$transaction((tx) => appendAudit(tx, { type: "test.concurrent", actor: "system", data: { i }, at: new Date(T0.getTime() + i) })),
      ),
    );
    expect(await db().auditEvent.count()).toBe(before + 40);
    expect(await verifyAuditChain()).toMatchObject({ ok: true });
  });

  it("exports as JSON Lines and CSV, in chain order", async () => {
    await approvedRefund();
    let jsonl = "";
    for await (const line of exportAudit("jsonl")) jsonl += line;
    const rows = jsonl.trim().split("\n").map((l) => JSON.parse(l));
    expect(rows.length).toBe(await db().auditEvent.count());
    expect(rows[1].prevHash).toBe(rows[0].hash);
    let csv = "";
    for await (const line of exportAudit("csv", { type: "review.approved" })) csv += line;
    const lines = csv.trim().split("\n");
    expect(lines[0]).toBe("seq,at,type,actor,taskId,requestId,data,prevHash,hash");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('"review.approved"');
  });
});
