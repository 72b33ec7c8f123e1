/**
 * Four-eyes review in the built-in backend: any recorded denial is terminal, whatever the interleaving. With two
 * approvals needed, one reviewer approves, then a denial and a third reviewer's final approval race each other:
 * either the denial wins (the request is denied, nothing runs, the approval is refused) or the approval wins (the
 * request is approved and executed once, the denial is refused). Never is a request that has a denial executed.
 *
 * Raced with parallel calls on the pool and across two OS processes. Default a few dozen trials each;
 * LONG_PROOFS=1 runs 1,000 each.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { decide, type DecideResult } from "../lib/tasks/decide";
import { reviewerDecides } from "./support/reviewer";
import { principal, requestIdOf, resetDb, userId } from "./support/db";
import { LONG, MIN, T0, TREASURY, approveOnly, at, auditCount, expectBodyAgrees, gatedCall, sideEffects, startWorker, taskRow, timed, type Worker } from "./support/proof";

const IN_PROCESS_TRIALS = LONG ? 1_000 : 30;
const CROSS_PROCESS_TRIALS = LONG ? 1_000 : 16;
const TIMEOUT = LONG ? 3_600_000 : 300_000;
const THIRD = "tina.treasury@countersign.test";

type Racer = (requestId: string, deny: { reviewerId: string; comment: string }, approve: { reviewerId: string }, now: Date, i: number) => Promise<[DecideResult, DecideResult]>;
type Tally = { denialWon: number; approvalWon: number };

let reviewers: { tara: string; theo: string; tina: string };

beforeAll(async () => {
  await resetDb();
  // The demo treasury group has two reviewers; a third makes approve, deny, approve possible with two required.
  const tina = await db().user.create({ data: { email: THIRD, name: "Tina Treasury", role: "reviewer", groups: ["treasury"], passwordHash: "x" } });
  reviewers = { tara: await userId(TREASURY[0]), theo: await userId(TREASURY[1]), tina: tina.id };
});

/** One trial: a fresh USD 50,000 wire (two treasury approvals), Tara approves, then Theo's denial races Tina's approval. */
async function trial(tag: string, i: number, race: Racer, tally: Tally): Promise<void> {
  const taskId = await gatedCall(await principal("ops-bot"), "wire_transfer", { to: `acct-${tag}-${i}`, amount: 50_000 }, T0);
  const requestId = await requestIdOf(taskId);
  await approveOnly(taskId, TREASURY[0], at(MIN));
  const [denial, approval] = await race(requestId, { reviewerId: reviewers.theo, comment: "Unknown beneficiary" }, { reviewerId: reviewers.tina }, at(2 * MIN + i), i);
  const req = await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId }, include: { reviews: true } });
  const t = await taskRow(taskId);
  const why = JSON.stringify({ i, denial, approval, status: req.status, reviews: req.reviews.map((r) => r.decision) });
  if (req.reviews.some((r) => r.decision === "deny")) {
    // A request that has a denial: denied, and the tool never ran.
    expect(await sideEffects(taskId), why).toBe(0);
    expect(await auditCount(taskId, "execution.claimed"), why).toBe(0);
    expect(req.status, why).toBe("denied");
    expect(t, why).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    expect(approval, why).toEqual({ ok: false, error: "This request is already denied." });
    tally.denialWon++;
  } else {
    expect(req.status, why).toBe("approved");
    expect(t, why).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect(await sideEffects(taskId), why).toBe(1);
    expect(denial, why).toEqual({ ok: false, error: "This request is already approved." });
    tally.approvalWon++;
  }
  // Exactly one of the two racing reviews is accepted.
  expect([denial.ok, approval.ok].filter(Boolean), why).toHaveLength(1);
  expectBodyAgrees(t.result as never);
}

async function run(tag: string, trials: number, race: Racer): Promise<Tally> {
  const tally: Tally = { denialWon: 0, approvalWon: 0 };
  await timed(`four-eyes race, ${tag} (${trials} trials)`, async () => {
    for (let i = 0; i < trials; i++) await trial(tag, i, race, tally);
  });
  console.log(`[proof] four-eyes race, ${tag}:`, JSON.stringify({ trials, ...tally }));
  // Zero executions of a request that has a denial, over every trial.
  const denied = await db().approvalRequest.findMany({ where: { reviews: { some: { decision: "deny" } } }, select: { taskId: true } });
  expect(await db().transfer.count({ where: { taskId: { in: denied.map((r) => r.taskId) } } })).toBe(0);
  expect(tally.denialWon + tally.approvalWon).toBe(trials);
  return tally;
}

describe("four-eyes review: any recorded denial is terminal", () => {
  it("a denial recorded while the request still reads pending wins: a later final approval neither approves nor executes it", async () => {
    const taskId = await gatedCall(await principal("ops-bot"), "wire_transfer", { to: "acct-recorded-denial", amount: 50_000 }, T0);
    const requestId = await requestIdOf(taskId);
    await approveOnly(taskId, TREASURY[0], at(MIN));
    // A denial row whose request has not yet changed status (for example written just before a crash).
    await db().review.create({ data: { requestId, reviewerId: reviewers.theo, decision: "deny", comment: "Unknown beneficiary", createdAt: at(2 * MIN) } });
    await decide({ requestId, reviewerId: reviewers.tina, decision: "approve" }, at(3 * MIN));
    expect((await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).status).toBe("denied");
    expect(await taskRow(taskId)).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    expect(await sideEffects(taskId)).toBe(0);
  });

  it(`a denial racing the final approval, parallel calls on the pool: zero executions of a request that has a denial (${IN_PROCESS_TRIALS} trials)`, { timeout: TIMEOUT }, async () => {
    await run("pool", IN_PROCESS_TRIALS, (requestId, deny, approve, now, i) => {
      // Alternate which call starts first.
      const d = () => reviewerDecides({ requestId, decision: "deny", ...deny }, now);
      const a = () => reviewerDecides({ requestId, decision: "approve", ...approve }, now);
      return i % 2 === 0 ? Promise.all([d(), a()]) : Promise.all([a(), d()]).then(([x, y]) => [y, x]);
    });
  });

  it(`a denial racing the final approval from two OS processes: zero executions of a request that has a denial (${CROSS_PROCESS_TRIALS} trials)`, { timeout: TIMEOUT }, async () => {
    const workers: Worker[] = [startWorker("review-worker.ts", []), startWorker("review-worker.ts", [])];
    try {
      for (const w of workers) expect(await w.nextLine()).toBe("ready");
      await run("processes", CROSS_PROCESS_TRIALS, async (requestId, deny, approve, now, i) => {
        const [dw, aw] = i % 2 === 0 ? workers : [workers[1], workers[0]];
        dw.child.stdin.write(JSON.stringify({ requestId, decision: "deny", ...deny, now: now.toISOString() }) + "\n");
        aw.child.stdin.write(JSON.stringify({ requestId, decision: "approve", ...approve, now: now.toISOString() }) + "\n");
        expect([await dw.nextLine(), await aw.nextLine()]).toEqual(["armed", "armed"]);
        dw.child.stdin.write("go\n");
        aw.child.stdin.write("go\n");
        const [d, a] = await Promise.all([dw.nextLine(), aw.nextLine()]);
        return [JSON.parse(d), JSON.parse(a)];
      });
      for (const w of workers) w.child.stdin.write("exit\n");
      for (const w of workers) expect(await w.exited, w.stderr()).toEqual({ code: 0, signal: null });
    } finally {
      for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGKILL");
    }
  });
});

afterAll(async () => {
  await db().user.deleteMany({ where: { email: THIRD, reviews: { none: {} } } });
});
