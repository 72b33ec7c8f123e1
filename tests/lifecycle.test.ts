/**
 * The SEP's lifecycle rules beyond the walking skeleton (tests/refund-flow.test.ts): four-eyes review,
 * re-evaluation outcomes (allow, retry, request, deny), the immutable call binding, claim-time validity, the
 * three clocks, execution dispositions, terminal finality, retention, cancellation, the sweeper in parallel,
 * deduplication, and the durable-grant rule of seed 000 (a consumed approval fails closed).
 *
 * "Crash after the claim" is simulated in-process here (lib/faults.ts is replaced so the after-claim fault point
 * throws inside one call); tests/crash.test.ts does the same with a real SIGKILL.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { db } from "../lib/db/client";
import { config } from "../lib/config";
import { inboxBackend } from "../lib/approvals/inbox-backend";
import { saveRuleVersion } from "../lib/policy/save-rule";
import { advanceTask } from "../lib/execution/advance";
import { claim } from "../lib/execution/claim";
import { sweep } from "../lib/execution/sweep";
import { terminalize } from "../lib/execution/terminalize";
import { callTool } from "../lib/tasks/call";
import { askRequester } from "../lib/tasks/ask";
import { cancelTask } from "../lib/tasks/cancel";
import { decide } from "../lib/tasks/decide";
import { getTask } from "../lib/tasks/get";
import { deletePath, sandboxDir } from "../lib/tools/delete-path";
import { issueRefund } from "../lib/tools/issue-refund";
import { wireTransfer } from "../lib/tools/wire-transfer";
import { ToolBusyError, ToolError } from "../lib/tools/types";
import type { Principal } from "../lib/tasks/types";
import { principal, requestIdOf, resetDb, userId } from "./support/db";
import { crashingAt } from "./support/inprocess-crash";
import {
  DAY,
  EXECUTION_DEADLINE_MS,
  HOUR,
  LEADS,
  MIN,
  RESULT_RETENTION_MS,
  SEC,
  SRES,
  T0,
  TREASURY,
  approveOnly,
  at,
  auditCount,
  editRule,
  expectBodyAgrees,
  expectDenied,
  freshOrder,
  gatedCall,
  gatedRefund,
  review,
  sideEffects,
  taskRow,
} from "./support/proof";

vi.mock("../lib/faults", () => import("./support/inprocess-crash"));

beforeEach(resetDb);
afterEach(() => {
  vi.restoreAllMocks();
});

// ---- helpers ----

async function addReviewer(email: string, groups: string[]): Promise<string> {
  const u = await db().user.create({ data: { email, name: email.split("@")[0], role: "reviewer", groups, passwordHash: "x" } });
  return u.id;
}

async function ops(): Promise<Principal> {
  return principal("ops-bot");
}

/** USD 50,000: two distinct treasury approvals. */
async function bigWire(to = "acct-991", now = T0): Promise<string> {
  return gatedCall(await ops(), "wire_transfer", { to, amount: 50_000 }, now);
}

/** Advances the task but "crashes" right after the execution claim: claimed, tool not run, no result stored. */
async function claimWithoutResult(taskId: string, now: Date): Promise<void> {
  expect(await crashingAt("after-claim", () => advanceTask(taskId, now))).toBe("crashed");
  expect(await taskRow(taskId)).toMatchObject({ status: "working", phase: "claimed", claimedAt: now });
}

const TERMINAL_EVENTS = ["execution.completed", "execution.outcome-unknown", "task.denied", "task.cancelled", "task.failed"];
async function terminalEvents(taskId: string): Promise<number> {
  return db().auditEvent.count({ where: { taskId, type: { in: TERMINAL_EVENTS } } });
}

// ---- four-eyes ----

describe("four-eyes review in the built-in backend", () => {
  it("four-eyes with 2 distinct approvers: one approval leaves the task working and nothing runs; the second executes it once", async () => {
    const agent = await ops();
    const taskId = await bigWire();
    const requestId = await requestIdOf(taskId);
    const first = await decide({ requestId, reviewerId: await userId(TREASURY[0]), decision: "approve" }, at(MIN));
    expect(first).toEqual({ ok: true, requestStatus: "pending", taskStatus: "working", disposition: undefined });
    const view = await getTask(agent, taskId, at(2 * MIN));
    expect(view).toMatchObject({ status: "working", pending: true });
    expect(view!.result).toBeUndefined();
    expect(view!.statusMessage).toMatch(/has not run/);
    expect(await sideEffects(taskId)).toBe(0);

    const second = await decide({ requestId, reviewerId: await userId(TREASURY[1]), decision: "approve" }, at(3 * MIN));
    expect(second).toMatchObject({ ok: true, requestStatus: "approved", taskStatus: "completed", disposition: "approved-executed" });
    const transfers = await db().transfer.findMany({ where: { taskId } });
    expect(transfers).toHaveLength(1);
    expect(transfers[0]).toMatchObject({ toAccount: "acct-991", amountCents: 5_000_000n });
  });

  it("any denial is terminal: an approval then a denial by the second reviewer is denied-not-executed, and no later approval revives it", async () => {
    const taskId = await bigWire();
    const requestId = await requestIdOf(taskId);
    expect(await decide({ requestId, reviewerId: await userId(TREASURY[0]), decision: "approve" }, at(MIN))).toMatchObject({ requestStatus: "pending" });
    const denied = await decide({ requestId, reviewerId: await userId(TREASURY[1]), decision: "deny", comment: "Unknown beneficiary" }, at(2 * MIN));
    expect(denied).toMatchObject({ ok: true, requestStatus: "denied", taskStatus: "completed", disposition: "denied-not-executed" });
    await expectDenied(taskId, /request was denied/);
    const snapshot = await taskRow(taskId);

    // A third treasury reviewer arrives: the request is closed, nothing changes.
    const tina = await addReviewer("tina.treasury@countersign.test", ["treasury"]);
    expect(await decide({ requestId, reviewerId: tina, decision: "approve" }, at(3 * MIN))).toEqual({ ok: false, error: "This request is already denied." });
    await advanceTask(taskId, at(4 * MIN));
    expect(await taskRow(taskId)).toEqual(snapshot);
    expect(await sideEffects(taskId)).toBe(0);
  });

  it.each([
    ["deactivated", { active: false }],
    ["removed from the approver group", { groups: [] as string[] }],
  ])(
    "only approvals from reviewers still eligible when the task is re-evaluated count: an approver %s after approving leaves too few, so the generation is consumed and a new request opens; nothing executes",
    async (_label, change) => {
      const taskId = await bigWire();
      await approveOnly(taskId, TREASURY[0], at(MIN));
      await approveOnly(taskId, TREASURY[1], at(MIN));
      const gen1 = await taskRow(taskId);
      expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: gen1.handle! } })).status).toBe("approved");

      await db().user.update({ where: { email: TREASURY[1] }, data: change });
      await advanceTask(taskId, at(2 * MIN));

      // What the code does: re-evaluation says "request" (one eligible approval of two), so a new generation opens.
      const gen2 = await taskRow(taskId);
      expect(gen2).toMatchObject({ status: "working", phase: "awaiting_approval", generation: 2, approvalExpiresAt: null });
      expect(gen2.handle).not.toBe(gen1.handle);
      const [req1, req2] = await Promise.all([gen1.handle!, gen2.handle!].map((id) => db().approvalRequest.findUniqueOrThrow({ where: { id } })));
      expect(req2).toMatchObject({ status: "pending", approvalsRequired: 2, approverGroup: "treasury" });
      expect(req2.idempotencyKey).not.toBe(req1.idempotencyKey);
      expect(await sideEffects(taskId)).toBe(0);
      expect(await auditCount(taskId, "execution.claimed")).toBe(0);

      // Theo can no longer review; Tara alone is not enough; the backend says why it cannot resolve.
      expect(await decide({ requestId: req2.id, reviewerId: await userId(TREASURY[1]), decision: "approve" }, at(3 * MIN))).toEqual({
        ok: false,
        error: "Only active treasury reviewers can review this request.",
      });
      expect(await decide({ requestId: req2.id, reviewerId: await userId(TREASURY[0]), decision: "approve" }, at(3 * MIN))).toMatchObject({
        ok: true,
        requestStatus: "pending",
        taskStatus: "working",
      });
      expect((await inboxBackend.status(req2.id, at(4 * MIN))).note).toMatch(/Not enough eligible reviewers exist/);
      expect((await getTask(await ops(), taskId, at(4 * MIN)))!.statusMessage).toMatch(/Not enough eligible reviewers exist/);

      // It never hangs: at its deadline the sweeper ends it as a denial.
      await sweep(gen2.requestDeadline);
      await expectDenied(taskId, /expired before anyone decided/);
    },
  );

  it("a request that cannot gather enough eligible reviewers expires at its deadline and never hangs", async () => {
    await db().user.update({ where: { email: TREASURY[1] }, data: { active: false } });
    const taskId = await bigWire();
    const t = await taskRow(taskId);
    expect(t.requestDeadline).toEqual(at(2 * DAY));
    const st = await inboxBackend.status(t.handle!, at(MIN));
    expect(st.state).toBe("pending");
    expect(st.note).toMatch(/Not enough eligible reviewers exist to approve this request/);
    // The agent is told too (server-authored words), while the task keeps waiting.
    expect((await getTask(await ops(), taskId, at(MIN)))!.statusMessage).toMatch(/Not enough eligible reviewers exist.*has not run|has not run.*Not enough eligible reviewers/);
    expect(await decide({ requestId: t.handle!, reviewerId: await userId(TREASURY[0]), decision: "approve" }, at(MIN))).toMatchObject({ requestStatus: "pending" });

    // One millisecond before the deadline it is still waiting; at the deadline the sweeper terminalizes it.
    expect((await sweep(at(2 * DAY - 1))).advanced).toBe(0);
    expect(await taskRow(taskId)).toMatchObject({ status: "working" });
    expect((await sweep(at(2 * DAY))).advanced).toBe(1);
    await expectDenied(taskId, /expired before anyone decided/);
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: t.handle! } })).status).toBe("expired");
    expect(await decide({ requestId: t.handle!, reviewerId: await userId(TREASURY[0]), decision: "approve" }, at(2 * DAY + 1))).toMatchObject({ ok: false });
  });

  it("the note about too few eligible reviewers is for a task waiting for approval, not one waiting for its requester's answer", async () => {
    await db().user.update({ where: { email: TREASURY[1] }, data: { active: false } });
    const taskId = await bigWire();
    const requestId = (await taskRow(taskId)).handle!;
    expect(await askRequester({ requestId, reviewerId: await userId(TREASURY[0]), question: "Which invoice is this for?" }, at(MIN))).toMatchObject({ ok: true });
    expect((await inboxBackend.status(requestId, at(2 * MIN))).note).toMatch(/Not enough eligible reviewers exist/);
    const view = (await getTask(await ops(), taskId, at(2 * MIN)))!;
    expect(view.status).toBe("input_required");
    expect(view.statusMessage).toBe("A reviewer needs more information before deciding; answer the outstanding input with tasks/update. The tool has not run.");
  });

  // The approvers' eligibility is read by the backend's status() at the start of advanceTask and read again,
  // FOR SHARE, inside the claim: a reviewer deactivated between the two no longer counts.
  it("only approvals from reviewers still eligible at the claim count: an approver deactivated between re-evaluation and the claim", async () => {
    const taskId = await bigWire();
    await approveOnly(taskId, TREASURY[0], at(MIN));
    await approveOnly(taskId, TREASURY[1], at(MIN));
    const original = wireTransfer.resource.bind(wireTransfer);
    vi.spyOn(wireTransfer, "resource").mockImplementation(async (args) => {
      await db().user.update({ where: { email: TREASURY[1] }, data: { active: false } });
      return original(args);
    });
    await advanceTask(taskId, at(2 * MIN));
    expect(await sideEffects(taskId)).toBe(0);
  });
});

// ---- re-evaluation ----

describe("completion: re-evaluate, then execute", () => {
  it("re-evaluation \"request\": raising the rule's approvalsRequired after approval consumes the current generation and opens a new request with a new key; the old generation's approval can never cause execution", async () => {
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(MIN));
    const gen1 = await taskRow(taskId);
    const req1 = await db().approvalRequest.findUniqueOrThrow({ where: { id: gen1.handle! } });
    const v2 = await editRule("refund-over-limit", { approvalsRequired: 2 });

    await advanceTask(taskId, at(2 * MIN));
    const gen2 = await taskRow(taskId);
    expect(gen2).toMatchObject({ status: "working", phase: "awaiting_approval", generation: 2, approvalExpiresAt: null, policyVersion: v2 });
    expect(gen2.requestDeadline).toEqual(at(2 * MIN + DAY));
    const req2 = await db().approvalRequest.findUniqueOrThrow({ where: { id: gen2.handle! } });
    expect(req2).toMatchObject({ status: "pending", approvalsRequired: 2 });
    expect(req2.idempotencyKey).not.toBe(req1.idempotencyKey);
    const intents = await db().submissionIntent.findMany({ where: { taskId }, orderBy: { generation: "asc" } });
    expect(intents.map((i) => [i.generation, i.state, i.handle])).toEqual([
      [1, "bound", req1.id],
      [2, "bound", req2.id],
    ]);
    expect(await auditCount(taskId, "request.superseded")).toBe(1);
    expect(await auditCount(taskId, "request.reopened")).toBe(1);

    // The consumed generation 1 is approved in the backend, yet nothing can make it act.
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: req1.id } })).status).toBe("approved");
    await advanceTask(taskId, at(3 * MIN));
    await sweep(at(3 * MIN));
    expect(await claim(taskId, 1, at(3 * MIN))).toBeNull();
    expect(
      await terminalize({
        taskId,
        fromPhases: ["awaiting_approval"],
        generation: 1,
        to: { status: "cancelled" },
        audit: { type: "stale", actor: "test" },
        now: at(3 * MIN),
      }),
    ).toBe(false);
    expect(await decide({ requestId: req1.id, reviewerId: await userId(LEADS[1]), decision: "approve" }, at(3 * MIN))).toEqual({
      ok: false,
      error: "This request is already approved.",
    });
    expect(await taskRow(taskId)).toMatchObject({ status: "working", generation: 2, handle: req2.id });
    expect(await sideEffects(taskId)).toBe(0);

    // The new generation, approved by two leads, executes once.
    expect(await decide({ requestId: req2.id, reviewerId: await userId(LEADS[0]), decision: "approve" }, at(4 * MIN))).toMatchObject({ requestStatus: "pending", taskStatus: "working" });
    expect(await decide({ requestId: req2.id, reviewerId: await userId(LEADS[1]), decision: "approve" }, at(5 * MIN))).toMatchObject({ disposition: "approved-executed" });
    expect(await sideEffects(taskId)).toBe(1);
    const claimed = await db().auditEvent.findFirstOrThrow({ where: { taskId, type: "execution.claimed" } });
    expect(claimed.data).toMatchObject({ generation: 2 });
  });

  it("a chained request is bounded by the same maximum pending window as the first: its backend deadline is the task's pending deadline", async () => {
    // A rule asking for more than the server accepts (maxPendingWindowMs, 14 days by default).
    const maxSec = config.maxPendingWindowMs / 1000;
    await editRule("refund-over-limit", { requestDeadlineSec: 20 * 24 * 3600, approvalValiditySec: 20 * 24 * 3600 });
    const taskId = await gatedRefund("O-2289");
    const gen1 = await taskRow(taskId);
    const req1 = await db().approvalRequest.findUniqueOrThrow({ where: { id: gen1.handle! } });
    expect(gen1.requestDeadline).toEqual(at(config.maxPendingWindowMs));
    expect(req1.deadline).toEqual(gen1.requestDeadline);
    expect(req1.approvalValiditySec).toBe(maxSec);

    await approveOnly(taskId, LEADS[0], at(MIN));
    await editRule("refund-over-limit", { approvalsRequired: 2 });
    await advanceTask(taskId, at(2 * MIN));
    const gen2 = await taskRow(taskId);
    const req2 = await db().approvalRequest.findUniqueOrThrow({ where: { id: gen2.handle! } });
    expect(gen2).toMatchObject({ generation: 2, status: "working" });
    expect(gen2.requestDeadline).toEqual(at(2 * MIN + config.maxPendingWindowMs));
    // The chained request must not outlive its task, nor grant a validity the server would not accept.
    expect(req2.deadline).toEqual(gen2.requestDeadline);
    expect(req2.approvalValiditySec).toBe(maxSec);
    expect(gen2.retainUntil!.getTime()).toBeGreaterThanOrEqual(req2.deadline.getTime() + RESULT_RETENTION_MS);
  });

  it(`chains are bounded by config.maxGenerations (${config.maxGenerations}), then the task completes as a terminal denial`, async () => {
    const leads = [...LEADS.map((e) => e as string), "lina.lead@countersign.test", "lou.lead@countersign.test"];
    for (const e of leads.slice(2)) await addReviewer(e, ["support-leads"]);
    const taskId = await gatedRefund("O-2289");
    let now = T0.getTime();
    for (let g = 1; g <= config.maxGenerations; g++) {
      const t = await taskRow(taskId);
      expect(t).toMatchObject({ status: "working", generation: g });
      for (const e of leads.slice(0, g)) await approveOnly(taskId, e, new Date((now += MIN)));
      expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: t.handle! } })).status).toBe("approved");
      await editRule("refund-over-limit", { approvalsRequired: g + 1 });
      await advanceTask(taskId, new Date((now += MIN)));
    }
    await expectDenied(taskId, /maximum number of approval requests/);
    const denied = await db().auditEvent.findFirstOrThrow({ where: { taskId, type: "task.denied" } });
    expect(denied.data).toMatchObject({ cause: "chain-exhausted" });
    const requests = await db().approvalRequest.findMany({ where: { taskId } });
    expect(requests).toHaveLength(config.maxGenerations);
    expect(new Set(requests.map((r) => r.idempotencyKey)).size).toBe(config.maxGenerations);
    expect((await taskRow(taskId)).generation).toBe(config.maxGenerations);
  });

  it("re-evaluation \"deny\" after a policy change (a deny rule added after approval) is denied-not-executed", async () => {
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(MIN));
    await saveRuleVersion(
      {
        ruleKey: "refund-freeze",
        tool: "issue_refund",
        // Above what the policy's own test cases refund, so saving it is not refused by them.
        description: "Refunds above EUR 170.00 are frozen",
        field: "amount_cents",
        operator: "gt",
        value: "17000",
        currency: "EUR",
        effect: "deny",
        approverGroup: null,
        approvalsRequired: 0,
        requestDeadlineSec: 0,
        approvalValiditySec: 0,
        requireJustification: false,
        reason: "Refunds are frozen during the audit.",
        active: true,
      },
      await userId("admin@countersign.test"),
      at(90 * SEC),
    );
    await advanceTask(taskId, at(2 * MIN));
    await expectDenied(taskId, /Re-evaluation of the current policy after approval denied the call/);
  });

  it("re-evaluation \"retry\" keeps the task working (never a denial), waits with bounded backoff, then executes once the hold clears", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(MIN));
    vi.spyOn(issueRefund, "resource").mockRejectedValueOnce(new ToolBusyError("The order is locked by a running export.", 10 * MIN));
    await advanceTask(taskId, at(2 * MIN));
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "working", phase: "retry_wait", attempts: 1, disposition: null });
    // Jittered between half and all of the retry-after hint.
    expect(t.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(at(2 * MIN + 5 * MIN).getTime());
    expect(t.nextAttemptAt!.getTime()).toBeLessThanOrEqual(at(2 * MIN + 10 * MIN).getTime());
    const view = await getTask(agent, taskId, at(3 * MIN));
    expect(view).toMatchObject({ status: "working", pending: true });
    expect(await taskRow(taskId)).toMatchObject({ phase: "retry_wait", attempts: 1 });

    // Not before its time; at its time the sweeper re-evaluates and executes.
    expect((await sweep(new Date(t.nextAttemptAt!.getTime() - 1))).advanced).toBe(0);
    await sweep(t.nextAttemptAt!);
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect(await sideEffects(taskId)).toBe(1);
  });

  it("re-evaluation \"retry\" stops once the approval expires: every attempt is made within the approval's validity, and the task ends denied-not-executed only when it has expired", async () => {
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(MIN));
    const expiresAt = at(MIN + HOUR);
    const resource = vi.spyOn(issueRefund, "resource").mockRejectedValue(new ToolBusyError("The order is locked.", 10 * MIN));
    let now = at(2 * MIN);
    let rounds = 0;
    for (; rounds < 60; rounds++) {
      await advanceTask(taskId, now);
      const t = await taskRow(taskId);
      if (t.status !== "working") break;
      expect(t.phase).toBe("retry_wait");
      expect(t.nextAttemptAt!.getTime()).toBeGreaterThan(now.getTime());
      expect(t.nextAttemptAt!.getTime()).toBeLessThanOrEqual(expiresAt.getTime());
      now = t.nextAttemptAt!;
    }
    // Bounded: the backoff is clamped to halfway to the expiry, down to a floor, then the expiry itself.
    expect(rounds).toBeLessThan(40);
    await expectDenied(taskId, /approval expired before the call could be executed/);
    expect((await taskRow(taskId)).terminalizedAt).toEqual(expiresAt);
    // Every re-evaluation happened while the approval was valid; none was ended as a denial.
    expect(resource).toHaveBeenCalledTimes(rounds);
  });

  it("re-evaluation \"retry\" whose next attempt would land after the approval's expiry is not a denial: the backoff is clamped into the validity and the call executes once the hold clears", async () => {
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(MIN));
    const expiresAt = at(MIN + HOUR);
    // A retry-after hint longer than what is left of the approval.
    vi.spyOn(issueRefund, "resource").mockRejectedValueOnce(new ToolBusyError("The order is locked by a long export.", 2 * HOUR));
    await advanceTask(taskId, at(2 * MIN));
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "working", phase: "retry_wait", attempts: 1, disposition: null });
    expect(t.nextAttemptAt!.getTime()).toBeGreaterThan(at(2 * MIN).getTime());
    expect(t.nextAttemptAt!.getTime()).toBeLessThan(expiresAt.getTime());
    expect(await auditCount(taskId, "task.denied")).toBe(0);

    await sweep(t.nextAttemptAt!);
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect(await sideEffects(taskId)).toBe(1);
  });

  it.each([
    ["the stored arguments were tampered with (digest mismatch)", async (taskId: string) => {
      await db().task.update({ where: { id: taskId }, data: { arguments: { order_id: "O-2289", amount: 1 } } });
    }],
    ["the tool's contract changed while pending (tool version)", async (taskId: string) => {
      await db().task.update({ where: { id: taskId }, data: { toolVersion: "sha256:an-older-contract" } });
    }],
    ["the resource changed so the approved call no longer fits (the order was partly refunded meanwhile)", async () => {
      // The pending EUR 180.00 counts in the order's refund total, so this EUR 10.00 needs its own approval too;
      // approved and executed first, it takes what the order has left to refund below what the first call saw.
      const other = await gatedCall(await principal(), "issue_refund", { order_id: "O-2289", amount: 10 }, at(90 * SEC));
      await approveOnly(other, LEADS[1], at(95 * SEC));
      await advanceTask(other, at(100 * SEC));
      expect(await taskRow(other)).toMatchObject({ status: "completed", disposition: "approved-executed" });
    }],
  ])("a changed binding requires a new approval: when %s, nothing executes", async (_label, change) => {
    const taskId = await gatedCall(await principal(), "issue_refund", { order_id: "O-2289", amount: 180 }, T0);
    await approveOnly(taskId, LEADS[0], at(MIN));
    await change(taskId);
    await advanceTask(taskId, at(2 * MIN));
    await expectDenied(taskId, /changed while the request was pending/);
  });

  it.each([
    ["its agent was revoked", async (agentId: string) => void (await db().agent.update({ where: { id: agentId }, data: { revokedAt: at(90 * SEC) } }))],
    ["its user was deactivated", async (agentId: string) => {
      const a = await db().agent.findUniqueOrThrow({ where: { id: agentId } });
      await db().user.update({ where: { id: a.userId }, data: { active: false } });
    }],
  ])("a principal that is no longer valid at execution is not executed: %s after approval", async (_label, revoke) => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    await approveOnly(taskId, LEADS[0], at(MIN));
    await revoke(agent.agentId);
    await advanceTask(taskId, at(2 * MIN));
    await expectDenied(taskId, /no longer authorized/);
  });

  it("the claim is the enforcement point: an agent revoked after re-evaluation read it as valid but before the claim does not execute", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    await approveOnly(taskId, LEADS[0], at(MIN));
    const original = issueRefund.resource.bind(issueRefund);
    // Re-evaluation reads the resource after checking the principal: revoke in that gap.
    vi.spyOn(issueRefund, "resource").mockImplementation(async (args) => {
      await db().agent.update({ where: { id: agent.agentId }, data: { revokedAt: at(2 * MIN) } });
      return original(args);
    });
    const run = vi.spyOn(issueRefund, "run");
    await advanceTask(taskId, at(2 * MIN));
    expect(run).not.toHaveBeenCalled();
    await expectDenied(taskId, /no longer authorized/);
  });

  it("approval validity expiry before the claim is denied-not-executed; an approval still valid at the claim executes (exact boundary)", async () => {
    const inTime = await gatedRefund("O-2289");
    const late = await gatedRefund("O-4410");
    await approveOnly(inTime, LEADS[0], at(MIN));
    await approveOnly(late, LEADS[0], at(MIN));
    const expiresAt = at(MIN + HOUR);
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: await requestIdOf(late) } })).approvalExpiresAt).toEqual(expiresAt);

    await advanceTask(inTime, new Date(expiresAt.getTime() - 1));
    expect(await taskRow(inTime)).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect(await sideEffects(inTime)).toBe(1);

    expect((await sweep(expiresAt)).advanced).toBe(1);
    await expectDenied(late, /approval expired before the call could be executed/);
  });

  it("an execution deadline that passes with the task claimed ends outcome-unknown via the sweeper, and the tool is not re-invoked", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    await approveOnly(taskId, LEADS[0], at(MIN));
    const run = vi.spyOn(issueRefund, "run");
    const claimedAt = at(2 * MIN);
    await claimWithoutResult(taskId, claimedAt);
    const deadline = at(EXECUTION_DEADLINE_MS, claimedAt);
    const claimed = await taskRow(taskId);
    expect(claimed.executionDeadline).toEqual(deadline);
    expect(claimed.retainUntil!.getTime()).toBeGreaterThanOrEqual(deadline.getTime() + RESULT_RETENTION_MS);
    // Working, and presented as in progress, never as completed.
    const view = await getTask(agent, taskId, at(30 * SEC, claimedAt));
    expect(view).toMatchObject({ status: "working", pending: true });
    expect(view!.statusMessage).toMatch(/being executed/);

    expect((await sweep(new Date(deadline.getTime() - 1))).advanced).toBe(0);
    expect((await sweep(deadline)).advanced).toBe(1);
    const done = await taskRow(taskId);
    expect(done).toMatchObject({ status: "completed", disposition: "outcome-unknown", terminalizedAt: deadline });
    expectBodyAgrees(done.result as never);
    await advanceTask(taskId, at(HOUR, deadline));
    await sweep(at(DAY, deadline));
    expect(run).not.toHaveBeenCalled();
    expect(await sideEffects(taskId)).toBe(0);
    expect(await auditCount(taskId, "execution.claimed")).toBe(1);
  });

  it("an approval that expires after the claim does not fence the claimed task: it is carried through and never reported as a denial", async () => {
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(MIN));
    const expiresAt = at(MIN + HOUR);
    const claimedAt = new Date(expiresAt.getTime() - 1);
    await claimWithoutResult(taskId, claimedAt);
    // Past the approval's expiry, before the execution deadline: still claimed (authorization was enforced at the claim).
    await sweep(at(10 * SEC, expiresAt));
    await advanceTask(taskId, at(20 * SEC, expiresAt));
    expect(await taskRow(taskId)).toMatchObject({ status: "working", phase: "claimed", disposition: null });
    await sweep(at(EXECUTION_DEADLINE_MS, claimedAt));
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "outcome-unknown" });
  });

  it("a backend failure after the claim never makes the task failed: it still ends outcome-unknown", async () => {
    const taskId = await gatedRefund("O-2289");
    await approveOnly(taskId, LEADS[0], at(MIN));
    await claimWithoutResult(taskId, at(2 * MIN));
    await db().approvalRequest.update({ where: { id: await requestIdOf(taskId) }, data: { status: "failed" } });
    await advanceTask(taskId, at(2 * MIN + 30 * SEC));
    expect(await taskRow(taskId)).toMatchObject({ status: "working", phase: "claimed" });
    await sweep(at(10 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "outcome-unknown", error: null });
  });
});

// ---- execution errors ----

describe("execution disposition", () => {
  it("a tool error after the claim (delete_path whose file vanished after approval) is execution-error, never failed", async () => {
    const root = sandboxDir();
    await fs.mkdir(path.join(root, "prod/tmp"), { recursive: true });
    const file = path.join(root, "prod/tmp/current.log");
    await fs.writeFile(file, "today's log\n");
    const taskId = await gatedCall(await ops(), "delete_path", { path: "prod/tmp/current.log" }, T0);
    await approveOnly(taskId, SRES[0], at(MIN));
    await approveOnly(taskId, SRES[1], at(MIN));
    // The approved file vanishes after the claim, just before the tool acts: the tool itself finds it gone.
    const run = deletePath.run.bind(deletePath);
    vi.spyOn(deletePath, "run").mockImplementationOnce(async (args, ctx) => {
      await fs.rm(file);
      return run(args, ctx);
    });

    await advanceTask(taskId, at(2 * MIN));
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "completed", disposition: "execution-error", error: null });
    expectBodyAgrees(t.result as never);
    expect((t.result as { text: string }).text).toMatch(/prod\/tmp\/current\.log no longer exists/);
    expect(await auditCount(taskId, "execution.claimed")).toBe(1);
  });

  it("an unexpected error thrown by the tool after the claim is execution-error, never failed, and says a side effect may have occurred", async () => {
    const taskId = await gatedRefund("O-2289");
    vi.spyOn(console, "error").mockImplementation(() => {});
    vi.spyOn(issueRefund, "run").mockRejectedValueOnce(new Error("connection reset by peer"));
    await decide({ requestId: await requestIdOf(taskId), reviewerId: await userId(LEADS[0]), decision: "approve" }, at(MIN));
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "completed", disposition: "execution-error" });
    expectBodyAgrees(t.result as never);
    expect((t.result as { text: string }).text).not.toMatch(/connection reset/);
  });

  it("a file deleted after approval but before the claim: re-evaluation re-reads the resource, so it is denied-not-executed and never claimed", async () => {
    const rel = "prod/cache/render-cache.bin";
    const taskId = await gatedCall(await ops(), "delete_path", { path: rel }, T0);
    await approveOnly(taskId, SRES[0], at(MIN));
    await approveOnly(taskId, SRES[1], at(MIN));
    await fs.rm(path.join(sandboxDir(), rel));
    await advanceTask(taskId, at(2 * MIN));
    await expectDenied(taskId, /changed while the request was pending/);
  });
});

// ---- finality ----

describe("a terminal task never changes", () => {
  it("a terminal task never changes: cancel, approve, advance, sweep, claim and terminalize on each terminal status", async () => {
    const agent = await principal();
    const orders = ["O-2289", "O-1145", "O-4410", await freshOrder("O-800001"), await freshOrder("O-800002"), await freshOrder("O-800003")];
    const ids = [] as string[];
    for (const o of orders) ids.push(await gatedRefund(o, T0, agent));
    const [executed, denied, errored, unknown, cancelled, failed] = ids;
    const lena = await userId(LEADS[0]);
    const sam = await userId(LEADS[1]);

    await decide({ requestId: await requestIdOf(executed), reviewerId: lena, decision: "approve" }, at(MIN));
    await decide({ requestId: await requestIdOf(denied), reviewerId: lena, decision: "deny", comment: "no" }, at(MIN));
    vi.spyOn(issueRefund, "run").mockRejectedValueOnce(new ToolError("The payment provider refused the refund."));
    await decide({ requestId: await requestIdOf(errored), reviewerId: lena, decision: "approve" }, at(MIN));
    await approveOnly(unknown, LEADS[0], at(MIN));
    await claimWithoutResult(unknown, at(2 * MIN));
    await sweep(at(2 * MIN + EXECUTION_DEADLINE_MS));
    await cancelTask(agent, cancelled, at(MIN));
    await db().approvalRequest.update({ where: { id: await requestIdOf(failed) }, data: { status: "failed" } });
    await advanceTask(failed, at(MIN));

    const expected: Record<string, [string, string | null]> = {
      [executed]: ["completed", "approved-executed"],
      [denied]: ["completed", "denied-not-executed"],
      [errored]: ["completed", "execution-error"],
      [unknown]: ["completed", "outcome-unknown"],
      [cancelled]: ["cancelled", null],
      [failed]: ["failed", null],
    };
    const snapshots = new Map<string, unknown>();
    for (const id of ids) {
      const t = await taskRow(id);
      expect([t.status, t.disposition]).toEqual(expected[id]);
      if (t.status === "completed") expectBodyAgrees(t.result as never);
      else expect(t.result).toBeNull();
      snapshots.set(id, { row: t, effects: await sideEffects(id), events: await db().auditEvent.count({ where: { taskId: id } }) });
    }
    vi.restoreAllMocks();

    // Late, but inside every task's retention (at least createdAt + 24 h + resultRetention): still retrievable.
    const late = at(RESULT_RETENTION_MS);
    for (const id of ids) {
      const t = await taskRow(id);
      expect(await cancelTask(agent, id, at(10 * MIN))).toEqual({ ok: false, reason: "terminal" });
      for (const reviewerId of [lena, sam]) {
        expect((await decide({ requestId: t.handle!, reviewerId, decision: "approve" }, at(10 * MIN))).ok).toBe(false);
      }
      await advanceTask(id, late);
      expect(await claim(id, t.generation, at(10 * MIN))).toBeNull();
      for (const to of [{ status: "failed" as const, error: { code: -32603, message: "late failure" } }, { status: "cancelled" as const }]) {
        expect(await terminalize({ taskId: id, fromPhases: ["done", "claimed", "awaiting_approval", "retry_wait", "submitting"], to, audit: { type: "late", actor: "test" }, now: late })).toBe(false);
      }
    }
    await Promise.all([sweep(late), sweep(late)]);
    for (const id of ids) {
      expect({ row: await taskRow(id), effects: await sideEffects(id), events: await db().auditEvent.count({ where: { taskId: id } }) }).toEqual(snapshots.get(id));
    }
  });
});

// ---- retention ----

describe("retention", () => {
  it("while pending, createdAt + ttlMs covers the request deadline plus resultRetention, and a working task is not expired before its deadline", async () => {
    const agent = await principal();
    const out = await callTool(agent, "issue_refund", { order_id: "O-2289" }, { tasks: true }, T0);
    if (out.kind !== "task") throw new Error("expected a task");
    expect(out.task.ttlMs).toBe(DAY + RESULT_RETENTION_MS);
    const wireId = await bigWire();
    expect((await getTask(await ops(), wireId, at(MIN)))!.ttlMs).toBe(2 * DAY + RESULT_RETENTION_MS);

    await sweep(at(DAY - 1));
    const view = await getTask(agent, out.task.taskId, at(DAY - 1));
    expect(view).toMatchObject({ status: "working", ttlMs: DAY + RESULT_RETENTION_MS });
  });

  it("when the approval's validity becomes the pending deadline and reaches past the request deadline, ttlMs is extended to cover it plus resultRetention", async () => {
    await editRule("refund-over-limit", { approvalValiditySec: 3 * 24 * 3600 });
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    await approveOnly(taskId, LEADS[0], at(MIN));
    vi.spyOn(issueRefund, "resource").mockRejectedValueOnce(new ToolBusyError("locked", 10 * MIN));
    await advanceTask(taskId, at(2 * MIN));
    const view = await getTask(agent, taskId, at(3 * MIN));
    expect(view).toMatchObject({ status: "working", ttlMs: MIN + 3 * DAY + RESULT_RETENTION_MS });
  });

  it("a chained request's later deadline extends ttlMs", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    await approveOnly(taskId, LEADS[0], at(MIN));
    await editRule("refund-over-limit", { approvalsRequired: 2 });
    // Re-evaluated 50 minutes in (the approval is still valid): generation 2 with a deadline 24 h from then.
    await advanceTask(taskId, at(50 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ generation: 2, status: "working" });
    expect((await getTask(agent, taskId, at(51 * MIN)))!.ttlMs).toBe(50 * MIN + DAY + RESULT_RETENTION_MS);
  });

  it("an execution-claimed task is never deleted before it terminalizes: a sweep long after its ttl completes it outcome-unknown and keeps it for resultRetention, and only then may it go", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    await approveOnly(taskId, LEADS[0], at(MIN));
    await claimWithoutResult(taskId, at(2 * MIN));
    const muchLater = at(400 * DAY);
    await sweep(muchLater);
    const t = await taskRow(taskId);
    expect(t).toMatchObject({ status: "completed", disposition: "outcome-unknown", terminalizedAt: muchLater });
    expect(t.retainUntil).toEqual(at(RESULT_RETENTION_MS, muchLater));
    expect((await getTask(agent, taskId, at(RESULT_RETENTION_MS - 1, muchLater)))!.result!.disposition).toBe("outcome-unknown");
    await sweep(at(RESULT_RETENTION_MS + 1, muchLater));
    expect(await db().task.findUnique({ where: { id: taskId } })).toBeNull();
    expect(await sideEffects(taskId)).toBe(0);
  });

  it("a working task is never deleted or expired before its pending deadline; long after it, it first ends as a denial that stays retrievable for resultRetention", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    await sweep(at(DAY - 1));
    expect(await taskRow(taskId)).toMatchObject({ status: "working" });
    const muchLater = at(400 * DAY);
    await sweep(muchLater);
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "denied-not-executed", terminalizedAt: muchLater });
    expect((await getTask(agent, taskId, at(DAY, muchLater)))!.status).toBe("completed");
  });

  it("at terminalization ttlMs covers terminalizedAt plus resultRetention (extended when needed, never shortened)", async () => {
    const agent = await principal();
    const expired = await gatedRefund("O-2289", T0, agent);
    const executed = await gatedRefund("O-4410", T0, agent);
    await decide({ requestId: await requestIdOf(executed), reviewerId: await userId(LEADS[0]), decision: "approve" }, at(MIN));
    await sweep(at(DAY + 1));
    for (const id of [expired, executed]) {
      const t = await taskRow(id);
      expect(t.retainUntil!.getTime()).toBeGreaterThanOrEqual(t.terminalizedAt!.getTime() + RESULT_RETENTION_MS);
    }
    // The expiry happened after the pending window: extended to exactly terminalizedAt + resultRetention.
    expect((await getTask(agent, expired, at(DAY + 2)))!.ttlMs).toBe(DAY + 1 + RESULT_RETENTION_MS);
    // The execution happened early: the pending window already covered it, and it is not shortened.
    expect((await getTask(agent, executed, at(DAY + 2)))!.ttlMs).toBe(DAY + RESULT_RETENTION_MS);
  });
});

// ---- cancellation ----

describe("cancellation", () => {
  it("a winning cancel before approval cancels the backend request; a later approval is ignored and nothing runs", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    const c = await cancelTask(agent, taskId, at(MIN));
    expect(c).toMatchObject({ ok: true, task: { status: "cancelled", pending: false } });
    if (c.ok) expect(c.task.result).toBeUndefined();
    expect(await taskRow(taskId)).toMatchObject({ status: "cancelled", disposition: null });
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: await requestIdOf(taskId) } })).status).toBe("cancelled");
    expect(await auditCount(taskId, "task.cancelled")).toBe(1);
    expect(await auditCount(taskId, "request.cancelled")).toBe(1);
    expect(await decide({ requestId: await requestIdOf(taskId), reviewerId: await userId(LEADS[0]), decision: "approve" }, at(2 * MIN))).toEqual({
      ok: false,
      error: "This request is already cancelled.",
    });
    expect(await sideEffects(taskId)).toBe(0);
  });

  it("a cancel after approval but before the claim wins: the task is cancelled, the approval ignored, the tool never runs", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    await approveOnly(taskId, LEADS[0], at(MIN));
    expect(await cancelTask(agent, taskId, at(2 * MIN))).toMatchObject({ ok: true, task: { status: "cancelled" } });
    // The backend request stays approved (it can no longer be cancelled there); the local fence holds.
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: await requestIdOf(taskId) } })).status).toBe("approved");
    await advanceTask(taskId, at(3 * MIN));
    await sweep(at(4 * MIN));
    expect(await claim(taskId, 1, at(5 * MIN))).toBeNull();
    expect(await taskRow(taskId)).toMatchObject({ status: "cancelled" });
    expect(await sideEffects(taskId)).toBe(0);
  });

  it("a cancel after the claim is a no-op: the task completes with its execution disposition, never cancelled", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    await approveOnly(taskId, LEADS[0], at(MIN));
    await claimWithoutResult(taskId, at(2 * MIN));
    const c = await cancelTask(agent, taskId, at(2 * MIN + SEC));
    expect(c).toMatchObject({ ok: true, task: { status: "working", pending: true } });
    expect(await auditCount(taskId, "task.cancelled")).toBe(0);
    await sweep(at(2 * MIN + EXECUTION_DEADLINE_MS));
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "outcome-unknown" });
  });

  it("no orphan: a cancel that wins while a chained request is being submitted leaves no pending request behind", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    await approveOnly(taskId, LEADS[0], at(MIN));
    await editRule("refund-over-limit", { approvalsRequired: 2 });
    const realSubmit = inboxBackend.submit.bind(inboxBackend);
    vi.spyOn(inboxBackend, "submit").mockImplementationOnce(async (key, body, now) => {
      // The agent cancels in the window between consuming generation 1 and submitting generation 2.
      expect(await cancelTask(agent, taskId, now)).toMatchObject({ ok: true, task: { status: "cancelled" } });
      return realSubmit(key, body, now);
    });
    await advanceTask(taskId, at(2 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "cancelled" });
    const pending = await db().approvalRequest.findMany({ where: { taskId, status: "pending" } });
    expect(pending, "a pending approval request for a cancelled task is an orphan in the reviewers' inbox").toEqual([]);
  });
});

// ---- sweeper ----

describe("the sweeper", () => {
  it("the sweeper is safe in parallel: concurrent sweeps over many due tasks terminalize each exactly once, with one audit event each", async () => {
    const agent = await principal();
    const per = 6;
    const kinds = ["approved", "claimed", "denied", "pending"] as const;
    const tasks: { id: string; kind: (typeof kinds)[number] }[] = [];
    for (const [k, kind] of kinds.entries()) {
      for (let i = 0; i < per; i++) tasks.push({ kind, id: await gatedRefund(await freshOrder(`O-60${k}${String(i).padStart(3, "0")}`), T0, agent) });
    }
    for (const t of tasks) {
      if (t.kind === "approved") await approveOnly(t.id, LEADS[0], at(10 * SEC));
      if (t.kind === "denied") expect((await review(t.id, LEADS[1], "deny", at(10 * SEC))).ok).toBe(true);
      if (t.kind === "claimed") {
        await approveOnly(t.id, LEADS[0], at(10 * SEC));
        await claimWithoutResult(t.id, at(20 * SEC));
      }
    }
    // Round 1 (claims past their execution deadline, decided requests) and round 2 (request deadlines), each
    // as four sweepers racing.
    const r1 = await Promise.all(Array.from({ length: 4 }, () => sweep(at(2 * MIN))));
    const r2 = await Promise.all(Array.from({ length: 4 }, () => sweep(at(DAY))));
    console.log(`[proof] parallel sweeps advanced ${JSON.stringify(r1.map((r) => r.advanced))} then ${JSON.stringify(r2.map((r) => r.advanced))}`);
    const want = { approved: "approved-executed", claimed: "outcome-unknown", denied: "denied-not-executed", pending: "denied-not-executed" };
    for (const t of tasks) {
      const row = await taskRow(t.id);
      expect(row, t.kind).toMatchObject({ status: "completed", disposition: want[t.kind] });
      expect(await terminalEvents(t.id), t.kind).toBe(1);
      expect(await sideEffects(t.id), t.kind).toBe(t.kind === "approved" ? 1 : 0);
      expect(await auditCount(t.id, "execution.claimed"), t.kind).toBe(t.kind === "approved" || t.kind === "claimed" ? 1 : 0);
      expect(await auditCount(t.id, "execution.result-late")).toBe(0);
    }
  });

  it("advances at most its batch of due tasks in a pass; the next pass takes the rest", async () => {
    const agent = await principal();
    const ids = [await gatedRefund(await freshOrder("O-6501"), T0, agent), await gatedRefund(await freshOrder("O-6502"), T0, agent)];
    // Both past their request deadline.
    expect((await sweep(at(DAY), { batch: 1 })).advanced).toBe(1);
    expect((await sweep(at(DAY), { batch: 1 })).advanced).toBe(1);
    expect((await sweep(at(DAY), { batch: 1 })).advanced).toBe(0);
    for (const id of ids) expect(await taskRow(id)).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
  });
});

// ---- dedup ----

describe("at-most-once and deduplication", () => {
  it("an identical call while the task is open returns the same task, even when the retries race", async () => {
    const agent = await principal();
    const outs = await Promise.all(Array.from({ length: 6 }, () => callTool(agent, "issue_refund", { order_id: "O-2289" }, { tasks: true }, T0)));
    const ids = new Set(outs.map((o) => (o.kind === "task" ? o.task.taskId : o.kind)));
    expect(ids.size).toBe(1);
    expect(await db().task.count()).toBe(1);
    expect(await db().submissionIntent.count()).toBe(1);
    expect(await db().approvalRequest.count()).toBe(1);
  });

  it("after the task is terminal a new identical call opens a new task (the terminal one is never reopened)", async () => {
    const agent = await principal();
    const args = { order_id: "O-4410", amount: 200 };
    const first = await gatedCall(agent, "issue_refund", args, T0);
    await decide({ requestId: await requestIdOf(first), reviewerId: await userId(LEADS[0]), decision: "deny", comment: "Check first" }, at(MIN));
    const afterDenial = await gatedCall(agent, "issue_refund", args, at(2 * MIN));
    expect(afterDenial).not.toBe(first);
    expect(await taskRow(first)).toMatchObject({ status: "completed", disposition: "denied-not-executed" });

    await decide({ requestId: await requestIdOf(afterDenial), reviewerId: await userId(LEADS[0]), decision: "approve" }, at(3 * MIN));
    expect(await taskRow(afterDenial)).toMatchObject({ disposition: "approved-executed" });
    // After an execution, the same call again is a new intent: a new task that needs a new approval.
    const afterExecution = await gatedCall(agent, "issue_refund", args, at(4 * MIN));
    expect(new Set([first, afterDenial, afterExecution]).size).toBe(3);
    expect(await taskRow(afterExecution)).toMatchObject({ status: "working", phase: "awaiting_approval" });
    expect(await db().approvalRequest.count()).toBe(3);
    expect(await db().refund.count({ where: { orderId: "O-4410" } })).toBe(1);
  });

  it("the dedup scope is the caller, the tool and the arguments: another agent or other arguments open their own task", async () => {
    const support = await principal();
    const base = await gatedCall(support, "issue_refund", { order_id: "O-4410" }, T0);
    const otherAgent = await gatedCall(await ops(), "issue_refund", { order_id: "O-4410" }, T0);
    const otherArgs = await gatedCall(support, "issue_refund", { order_id: "O-4410", amount: 300 }, T0);
    expect(new Set([base, otherAgent, otherArgs]).size).toBe(3);
    expect(await gatedCall(support, "issue_refund", { order_id: "O-4410" }, at(SEC))).toBe(base);
  });
});

// ---- durable grant (seed 000) ----

describe("an approval is a durable grant consumed once (seed 000)", () => {
  it("after consumption a retry fails closed: advancing again, a second decision, a direct claim or a sweep never executes again", async () => {
    const agent = await principal();
    const taskId = await gatedRefund("O-2289", T0, agent);
    const requestId = await requestIdOf(taskId);
    expect(await decide({ requestId, reviewerId: await userId(LEADS[0]), decision: "approve" }, at(MIN))).toMatchObject({ disposition: "approved-executed" });
    const run = vi.spyOn(issueRefund, "run");
    const consumed = await taskRow(taskId);

    await Promise.all(Array.from({ length: 5 }, (_, i) => advanceTask(taskId, at(2 * MIN + i))));
    await getTask(agent, taskId, at(3 * MIN));
    expect(await decide({ requestId, reviewerId: await userId(LEADS[1]), decision: "approve" }, at(4 * MIN))).toEqual({ ok: false, error: "This request is already approved." });
    expect(await claim(taskId, consumed.generation, at(5 * MIN))).toBeNull();
    await sweep(at(6 * MIN));

    expect(run).not.toHaveBeenCalled();
    expect(await sideEffects(taskId)).toBe(1);
    expect(await auditCount(taskId, "execution.claimed")).toBe(1);
    expect(await taskRow(taskId)).toEqual(consumed);
  });

  it("the task handle is not authority: another principal can neither read, cancel nor approve its way into execution", async () => {
    const taskId = await gatedRefund("O-2289");
    const other = await ops();
    expect(await getTask(other, taskId, at(MIN))).toBeNull();
    expect(await cancelTask(other, taskId, at(MIN))).toEqual({ ok: false, reason: "not-found" });
    // The requester's own user is not a reviewer; an admin is not in the group.
    const admin = await userId("admin@countersign.test");
    expect((await decide({ requestId: await requestIdOf(taskId), reviewerId: admin, decision: "approve" }, at(MIN))).ok).toBe(false);
    expect(await taskRow(taskId)).toMatchObject({ status: "working", phase: "awaiting_approval" });
    expect(await sideEffects(taskId)).toBe(0);
  });
});
