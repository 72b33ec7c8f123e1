/**
 * SEP "At-most-once and deduplication" and "Completion": the server MUST execute the approved tool at most once
 * per task, and execution is fenced by a single atomic compare-and-set from pre-execution to execution-claimed.
 * Proved across OS processes: two child processes each fire 100 concurrent advanceTask calls at the same
 * approved tasks at the same instant. Four-eyes reviews racing each other are counted exactly.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { decide } from "../lib/tasks/decide";
import { principal, requestIdOf, resetDb, userId } from "./support/db";
import {
  LONG,
  SEC,
  SRES,
  T0,
  TREASURY,
  approveOnly,
  at,
  auditCount,
  expectBodyAgrees,
  gatedCall,
  gatedRefund,
  sideEffects,
  startWorker,
  taskRow,
  timed,
} from "./support/proof";

beforeEach(resetDb);

const PROCESSES = 2;
const CALLS_PER_PROCESS = 100;

describe("approval resumes execution at most once", () => {
  it(`${PROCESSES * CALLS_PER_PROCESS} concurrent claims on one approved task from ${PROCESSES} OS processes execute the tool exactly once`, async () => {
    // Two approved tasks with different side effects: a refund (support lead) and a production deploy (one SRE).
    const refundTask = await gatedRefund("O-2289");
    const deployTask = await gatedCall(await principal("ops-bot"), "deploy_service", { service: "checkout-api", environment: "production", version: "1.4.2" }, T0);
    await approveOnly(refundTask, "lena.lead@countersign.test", at(SEC));
    await approveOnly(deployTask, SRES[0], at(SEC));
    // Approved in the backend, not yet advanced: every racer still sees a pre-claim task.
    for (const id of [refundTask, deployTask]) expect(await taskRow(id)).toMatchObject({ status: "working", phase: "awaiting_approval" });

    const now = at(2 * SEC);
    const workers = Array.from({ length: PROCESSES }, () => startWorker("claim-worker.ts", [now.toISOString(), String(CALLS_PER_PROCESS), refundTask, deployTask]));
    try {
      for (const w of workers) expect(await w.nextLine()).toBe("ready");
      const reports = await timed("claim race (2 processes x 200 advanceTask)", async () => {
        for (const w of workers) w.child.stdin.write("go\n");
        return Promise.all(workers.map(async (w) => JSON.parse(await w.nextLine())));
      });
      console.log("[proof] claim-race worker reports:", JSON.stringify(reports));
      for (const [i, w] of workers.entries()) {
        expect(await w.exited, w.stderr()).toEqual({ code: 0, signal: null });
        expect(reports[i].calls).toBe(2 * CALLS_PER_PROCESS);
        expect(reports[i].errors, "no advanceTask call may fail under contention").toEqual([]);
      }
      expect(new Set(reports.map((r) => r.pid)).size).toBe(PROCESSES);
    } finally {
      for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGKILL");
    }

    for (const id of [refundTask, deployTask]) {
      const t = await taskRow(id);
      expect(t).toMatchObject({ status: "completed", disposition: "approved-executed", phase: "done" });
      expectBodyAgrees(t.result as never);
      expect(await sideEffects(id)).toBe(1);
      expect(await auditCount(id, "execution.claimed")).toBe(1);
      expect(await auditCount(id, "execution.completed")).toBe(1);
      expect(await auditCount(id, "execution.result-late")).toBe(0);
      // The claim was won in a child process (its boot id prefixes the token), not by the test process.
      expect(t.claimedBy).toMatch(/^[0-9a-f]{8}:/);
    }
    expect(await db().refund.count({ where: { orderId: "O-2289" } })).toBe(1);
    expect((await db().order.findUniqueOrThrow({ where: { id: "O-2289" } })).refundedCents).toBe(18_000);
    expect(await db().deployment.count()).toBe(1);
  }, 300_000); // a bound, not a wait: two processes of 200 calls each take about 5 s idle, over a minute on a crowded machine
});

describe("four-eyes reviews racing each other", () => {
  const trials = LONG ? 40 : 6;

  it(`two reviewers' parallel approvals are both counted and the transfer executes once (${trials} trials)`, async () => {
    const agent = await principal("ops-bot");
    const tara = await userId(TREASURY[0]);
    const theo = await userId(TREASURY[1]);
    for (let i = 0; i < trials; i++) {
      // USD 50,000 is above 25,000: two distinct treasury approvals.
      const taskId = await gatedCall(agent, "wire_transfer", { to: `acct-race-${i}`, amount: 50_000 }, T0);
      const requestId = await requestIdOf(taskId);
      const now = at(60 * SEC + i);
      const [a, b] = await Promise.all([
        decide({ requestId, reviewerId: tara, decision: "approve" }, now),
        decide({ requestId, reviewerId: theo, decision: "approve" }, now),
      ]);
      expect(a.ok && b.ok, JSON.stringify({ a, b })).toBe(true);
      const req = await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId }, include: { reviews: true } });
      expect(req.status).toBe("approved");
      expect(new Set(req.reviews.map((r) => r.reviewerId))).toEqual(new Set([tara, theo]));
      expect(await db().auditEvent.count({ where: { requestId, type: "request.approved" } })).toBe(1);
      const t = await taskRow(taskId);
      expect(t).toMatchObject({ status: "completed", disposition: "approved-executed" });
      expect(await db().transfer.count({ where: { taskId } })).toBe(1);
      expect(await auditCount(taskId, "execution.claimed")).toBe(1);
    }
    expect(await db().transfer.count()).toBe(trials);
  });

  it("the same reviewer's duplicate parallel approvals: exactly one succeeds, the others are told they already reviewed", async () => {
    const agent = await principal("ops-bot");
    const tara = await userId(TREASURY[0]);
    const taskId = await gatedCall(agent, "wire_transfer", { to: "acct-dup", amount: 50_000 }, T0);
    const requestId = await requestIdOf(taskId);
    const results = await Promise.all(Array.from({ length: 5 }, () => decide({ requestId, reviewerId: tara, decision: "approve" }, at(SEC))));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    for (const r of results.filter((x) => !x.ok)) expect(r).toEqual({ ok: false, error: "You have already reviewed this request." });
    // One approval of two: still pending, nothing ran.
    expect(await db().review.count({ where: { requestId } })).toBe(1);
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).status).toBe("pending");
    expect(await taskRow(taskId)).toMatchObject({ status: "working", phase: "awaiting_approval" });
    expect(await sideEffects(taskId)).toBe(0);
  });
});
