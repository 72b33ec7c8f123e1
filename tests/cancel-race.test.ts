/**
 * SEP "Cancellation": a cancel that arrives after approval but before execution is resolved by the atomic
 * execution claim. If the cancel wins, the task is cancelled and the tool is not invoked; if the claim wins, the
 * cancel is ineffective and the task completes with its disposition. The server MUST NOT both execute the tool
 * and report cancelled.
 *
 * Each trial: a fresh refund task, approved in the backend but not advanced, then cancelTask and advanceTask
 * race. The cancel's start is staggered across trials (0 to ~45 ms, and sometimes before the advance) so both
 * orders, and the instant where both reach their compare-and-set together, are exercised.
 * Default 100 trials; LONG_PROOFS=1 runs 1,000.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { advanceTask } from "../lib/execution/advance";
import { cancelTask } from "../lib/tasks/cancel";
import { getTask } from "../lib/tasks/get";
import { principal, resetDb } from "./support/db";
import { LONG, SEC, T0, approveOnly, at, auditCount, expectBodyAgrees, freshOrder, gatedRefund, sideEffects, taskRow } from "./support/proof";

const TRIALS = LONG ? 1_000 : 100;

beforeAll(resetDb);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("cancel racing claim", () => {
  it(`cancel racing claim over ${TRIALS} trials never both cancels and executes`, { timeout: LONG ? 1_800_000 : 120_000 }, async () => {
    const agent = await principal();
    const tally = { cancelled: 0, executed: 0 };
    const started = performance.now();
    for (let i = 0; i < TRIALS; i++) {
      const orderId = await freshOrder(`O-7${String(i).padStart(6, "0")}`);
      const created = at(i * 10 * SEC);
      const taskId = await gatedRefund(orderId, created, agent);
      await approveOnly(taskId, i % 2 ? "lena.lead@countersign.test" : "sam.lead@countersign.test", at(SEC, created));
      const now = at(2 * SEC, created);

      // Stagger: every 10th trial the cancel starts first; otherwise it trails the advance by 0..44 ms.
      const delay = i % 10 === 0 ? 0 : (i * 7) % 45;
      const runAdvance = async () => {
        if (i % 10 === 0) await sleep(1);
        await advanceTask(taskId, now);
      };
      const runCancel = async () => {
        await sleep(delay);
        return cancelTask(agent, taskId, now);
      };
      const [, cancel] = await Promise.all([runAdvance(), runCancel()]);

      // Let anything the race left pending settle (a cancel that lost leaves the task to complete).
      await advanceTask(taskId, at(3 * SEC, created));
      const t = await taskRow(taskId);
      const effects = await sideEffects(taskId);
      const claimed = await auditCount(taskId, "execution.claimed");
      const cancelledEvents = await auditCount(taskId, "task.cancelled");
      const ctx = JSON.stringify({ trial: i, delay, status: t.status, disposition: t.disposition, effects, cancel });

      if (t.status === "cancelled") {
        tally.cancelled++;
        expect(effects, ctx).toBe(0);
        expect(claimed, ctx).toBe(0);
        expect(cancelledEvents, ctx).toBe(1);
        expect(t.claimedAt, ctx).toBeNull();
        expect(cancel, ctx).toMatchObject({ ok: true, task: { status: "cancelled" } });
      } else {
        tally.executed++;
        expect(t, ctx).toMatchObject({ status: "completed", disposition: "approved-executed" });
        expectBodyAgrees(t.result as never);
        expect(effects, ctx).toBe(1);
        expect(claimed, ctx).toBe(1);
        expect(cancelledEvents, ctx).toBe(0);
        // The losing cancel reported the task as it is (never "cancelled").
        expect(cancel.ok && cancel.task.status, ctx).not.toBe("cancelled");
      }
      // The creator reads the same thing afterwards, and the outcome is final.
      const view = await getTask(agent, taskId, at(4 * SEC, created));
      expect(view!.status).toBe(t.status);
      expect(await cancelTask(agent, taskId, at(5 * SEC, created))).toEqual({ ok: false, reason: "terminal" });
      expect(await sideEffects(taskId)).toBe(effects);
    }
    const ms = Math.round(performance.now() - started);
    console.log(`[proof] cancel-race: ${TRIALS} trials in ${ms} ms; cancel won ${tally.cancelled}, claim won ${tally.executed}`);
    // Both orders actually happened, so the race was exercised from both sides.
    expect(tally.cancelled).toBeGreaterThan(0);
    expect(tally.executed).toBeGreaterThan(0);
    expect(await db().refund.count()).toBe(tally.executed);
  });
});
