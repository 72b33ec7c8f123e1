/**
 * Model-based tests (fast-check) of the approval core.
 *
 * 1. `fc.commands`: random sequences of approve, deny, cancel, claim (advanceTask), crash (advanceTask that dies
 *    right after the execution claim: claimed, tool not run, no result), a bare claim() call, recover (the sweeper
 *    after the execution deadline), and clock moves (small ticks, or jumps to exactly / just past / just before a
 *    request deadline, approval expiry or execution deadline). A model predicts every outcome; after every step
 *    the database must agree with the model and the invariants must hold:
 *      - at most one execution per task (side-effect rows <= 1, one execution.claimed at most);
 *      - a terminal status never changes;
 *      - disposition and body agree (approved-executed <-> "executed once", denied-not-executed <-> "did not run",
 *        outcome-unknown <-> "may have run");
 *      - nothing executes after expiry or cancellation (an execution only ever happens while the approval is
 *        valid, and a cancelled or denied task never gains a side effect).
 * 2. `fc.scheduler`: several operations on the same tasks started concurrently in an order the scheduler picks
 *    (and shrinks); whatever the order, never two executions, never cancelled-and-executed, and terminal results
 *    stay put through later sweeps.
 *
 * Default 15 runs each; LONG_PROOFS=1 runs 150.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { db } from "../lib/db/client";
import { advanceTask } from "../lib/execution/advance";
import { claim } from "../lib/execution/claim";
import { sweep } from "../lib/execution/sweep";
import { cancelTask } from "../lib/tasks/cancel";
import { decide } from "../lib/tasks/decide";
import type { Principal } from "../lib/tasks/types";
import { principal, requestIdOf, resetDb, userId } from "./support/db";
import { crashingAt } from "./support/inprocess-crash";
import {
  DAY,
  EXECUTION_DEADLINE_MS,
  HOUR,
  LEADS,
  LONG,
  MIN,
  SEC,
  T0,
  TREASURY,
  approveOnly,
  auditCount,
  expectBodyAgrees,
  gatedCall,
  review,
  sideEffects,
  taskRow,
} from "./support/proof";

vi.mock("../lib/faults", () => import("./support/inprocess-crash"));

afterEach(() => {
  vi.restoreAllMocks();
});

const RUNS = LONG ? 150 : 15;
const TIMEOUT = LONG ? 3_600_000 : 120_000;

// ---------------------------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------------------------

type ReqStatus = "pending" | "approved" | "denied" | "expired" | "cancelled";

type MTask = {
  label: string;
  id: string;
  agent: Principal;
  reviewers: readonly string[];
  required: number;
  validityMs: number;
  requestDeadline: number;
  /** The backend request's stored status (expiry is marked lazily, when the backend is asked). */
  req: ReqStatus;
  reviewed: Set<string>;
  approvedAt?: number;
  approvalExpiresAt?: number;
  phase: "pre" | "claimed" | "terminal";
  executionDeadline?: number;
  status: "working" | "completed" | "cancelled";
  disposition: string | null;
  claimed: boolean;
  executed: boolean;
};

type Model = { now: number; tasks: MTask[] };
type Real = { terminal: Map<string, unknown> };

function effective(m: Model, t: MTask): ReqStatus {
  return t.req === "pending" && m.now >= t.requestDeadline ? "expired" : t.req;
}

function terminate(t: MTask, status: MTask["status"], disposition: string | null): void {
  t.phase = "terminal";
  t.status = status;
  t.disposition = disposition;
}

/** What one advanceTask does to the model at m.now; `crash` stops it right after a claim. Returns whether it claimed. */
function advanceModel(m: Model, t: MTask, crash = false): boolean {
  if (t.phase === "terminal") return false;
  if (t.phase === "claimed") {
    if (m.now >= t.executionDeadline!) terminate(t, "completed", "outcome-unknown");
    return false;
  }
  const eff = effective(m, t);
  if (eff === "expired") t.req = "expired";
  switch (eff) {
    case "pending":
      return false;
    case "denied":
    case "expired":
      terminate(t, "completed", "denied-not-executed");
      return false;
    case "approved":
      if (m.now >= t.approvalExpiresAt!) {
        terminate(t, "completed", "denied-not-executed");
        return false;
      }
      t.claimed = true;
      if (crash) {
        t.phase = "claimed";
        t.executionDeadline = m.now + EXECUTION_DEADLINE_MS;
        return true;
      }
      t.executed = true;
      terminate(t, "completed", "approved-executed");
      return true;
    default:
      throw new Error(`model: unexpected backend state ${eff} for a pre-claim task`);
  }
}

/** Everything the database must agree with after each step. */
async function checkInvariants(m: Model, r: Real): Promise<void> {
  await Promise.all(
    m.tasks.map(async (t) => {
      const [row, effects, claims] = await Promise.all([taskRow(t.id), sideEffects(t.id), auditCount(t.id, "execution.claimed")]);
      const ctx = `${t.label} at +${m.now - T0.getTime()} ms`;
      // At most one execution per task, exactly as the model predicts.
      expect(effects, ctx).toBeLessThanOrEqual(1);
      expect(claims, ctx).toBeLessThanOrEqual(1);
      expect(effects, ctx).toBe(t.executed ? 1 : 0);
      expect(claims, ctx).toBe(t.claimed ? 1 : 0);
      expect({ status: row.status, disposition: row.disposition }, ctx).toEqual({ status: t.status, disposition: t.disposition });
      expect(row.phase, ctx).toBe({ pre: "awaiting_approval", claimed: "claimed", terminal: "done" }[t.phase]);
      // Disposition and body agree.
      if (row.status === "completed") expectBodyAgrees(row.result as never);
      else expect(row.result, ctx).toBeNull();
      // Nothing executes after expiry or cancellation: an execution happened while the approval was valid, and
      // the approval was given before the request deadline.
      if (t.executed) {
        const effect = (await db().refund.findFirst({ where: { taskId: t.id } })) ?? (await db().transfer.findFirstOrThrow({ where: { taskId: t.id } }));
        expect(effect.createdAt.getTime(), ctx).toBeLessThan(t.approvalExpiresAt!);
        expect(t.approvedAt!, ctx).toBeLessThan(t.requestDeadline);
      }
      if (row.status === "cancelled" || row.disposition === "denied-not-executed") expect(effects, ctx).toBe(0);
      // A terminal status never changes.
      if (["completed", "cancelled", "failed"].includes(row.status)) {
        const snap = { status: row.status, disposition: row.disposition, result: row.result, error: row.error, terminalizedAt: row.terminalizedAt, claimedAt: row.claimedAt };
        if (r.terminal.has(t.id)) expect(snap, `${ctx}: a terminal task changed`).toEqual(r.terminal.get(t.id));
        else r.terminal.set(t.id, snap);
      }
    }),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------------------------

abstract class Step implements fc.AsyncCommand<Model, Real> {
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    await this.apply(m);
    await checkInvariants(m, r);
  }
  abstract apply(m: Model): Promise<void>;
  abstract toString(): string;
}

class Review extends Step {
  constructor(readonly i: number, readonly who: number, readonly decision: "approve" | "deny") {
    super();
  }
  async apply(m: Model) {
    const t = m.tasks[this.i];
    const email = t.reviewers[this.who];
    const res = await review(t.id, email, this.decision, new Date(m.now));
    const eff = effective(m, t);
    if (eff === "pending" && !t.reviewed.has(email)) {
      expect(res, this.toString()).toMatchObject({ ok: true });
      t.reviewed.add(email);
      if (this.decision === "deny") t.req = "denied";
      else if (t.reviewed.size >= t.required) {
        t.req = "approved";
        t.approvedAt = m.now;
        t.approvalExpiresAt = m.now + t.validityMs;
      }
    } else if (eff === "pending") {
      expect(res, this.toString()).toEqual({ ok: false, error: "You have already reviewed this request." });
    } else {
      expect(res.ok, `${this.toString()} on a ${eff} request`).toBe(false);
    }
  }
  toString() {
    return `${this.decision}(${this.i}, ${this.who})`;
  }
}

class Cancel extends Step {
  constructor(readonly i: number) {
    super();
  }
  async apply(m: Model) {
    const t = m.tasks[this.i];
    const res = await cancelTask(t.agent, t.id, new Date(m.now));
    if (t.phase === "terminal") {
      expect(res).toEqual({ ok: false, reason: "terminal" });
    } else if (t.phase === "claimed") {
      // The claim already won: the cancel is a no-op.
      expect(res).toMatchObject({ ok: true, task: { status: "working" } });
    } else {
      expect(res).toMatchObject({ ok: true, task: { status: "cancelled" } });
      if (t.req === "pending") t.req = "cancelled";
      terminate(t, "cancelled", null);
    }
  }
  toString() {
    return `cancel(${this.i})`;
  }
}

class Claim extends Step {
  constructor(readonly i: number) {
    super();
  }
  async apply(m: Model) {
    const t = m.tasks[this.i];
    await advanceTask(t.id, new Date(m.now));
    advanceModel(m, t);
  }
  toString() {
    return `claim(${this.i})`;
  }
}

class Crash extends Step {
  constructor(readonly i: number) {
    super();
  }
  async apply(m: Model) {
    const t = m.tasks[this.i];
    const out = await crashingAt("after-claim", () => advanceTask(t.id, new Date(m.now)));
    const crashed = advanceModel(m, t, true);
    expect(out === "crashed", this.toString()).toBe(crashed);
  }
  toString() {
    return `crash(${this.i})`;
  }
}

/** A bare claim() outside the state machine: the fence admits it only for a recorded, unexpired approval. */
class BareClaim extends Step {
  constructor(readonly i: number) {
    super();
  }
  async apply(m: Model) {
    const t = m.tasks[this.i];
    const row = await taskRow(t.id);
    // The state machine never leaves a recorded, valid approval unclaimed in this model, so this never wins.
    expect(await claim(t.id, row.generation, new Date(m.now))).toBeNull();
  }
  toString() {
    return `bareClaim(${this.i})`;
  }
}

class Recover extends Step {
  async apply(m: Model) {
    m.now += EXECUTION_DEADLINE_MS;
    await sweep(new Date(m.now));
    for (const t of m.tasks) advanceModel(m, t);
  }
  toString() {
    return "recover()";
  }
}

class Tick extends Step {
  constructor(readonly ms: number) {
    super();
  }
  async apply(m: Model) {
    m.now += this.ms;
  }
  toString() {
    return `tick(${this.ms})`;
  }
}

/** Every task polled at the current instant (what tasks/get from each client does). */
class PollAll extends Step {
  async apply(m: Model) {
    for (const t of m.tasks) {
      await advanceTask(t.id, new Date(m.now));
      advanceModel(m, t);
    }
  }
  toString() {
    return "pollAll()";
  }
}

/**
 * Moves the clock to the nearest upcoming deadline of one kind (any task), offset by -1, 0 or +1 ms: the exact
 * boundaries where "valid" turns into "expired".
 */
class Expire extends Step {
  constructor(readonly clock: "request" | "approval" | "execution", readonly offset: number) {
    super();
  }
  async apply(m: Model) {
    const targets = m.tasks
      .filter((t) => t.phase !== "terminal")
      .map((t) => ({ request: t.requestDeadline, approval: t.approvalExpiresAt, execution: t.executionDeadline })[this.clock])
      .filter((d): d is number => d !== undefined && d + this.offset > m.now);
    if (targets.length) m.now = Math.min(...targets) + this.offset;
  }
  toString() {
    return `expire(${this.clock}, ${this.offset})`;
  }
}

const TASKS = 3;
const idx = fc.nat(TASKS - 1);
const approve = fc.tuple(idx, fc.nat(1)).map(([i, w]) => new Review(i, w, "approve"));
// Duplicates weigh an arbitrary: approvals, polls and deadline jumps are what reach the interesting boundaries.
const commandArbs = [
  approve,
  approve,
  approve,
  fc.tuple(idx, fc.nat(1)).map(([i, w]) => new Review(i, w, "deny")),
  idx.map((i) => new Cancel(i)),
  idx.map((i) => new Claim(i)),
  fc.constant(new PollAll()),
  fc.constant(new PollAll()),
  idx.map((i) => new Crash(i)),
  idx.map((i) => new BareClaim(i)),
  fc.constant(new Recover()),
  fc.constantFrom(SEC, 59 * SEC, 10 * MIN).map((ms) => new Tick(ms)),
  fc.tuple(fc.constantFrom("request" as const, "approval" as const, "execution" as const), fc.constantFrom(-1, 0, 1)).map(([c, o]) => new Expire(c, o)),
  fc.tuple(fc.constantFrom("request" as const, "approval" as const, "execution" as const), fc.constantFrom(-1, 0, 1)).map(([c, o]) => new Expire(c, o)),
];

async function setupRun(): Promise<{ model: Model; real: Real }> {
  await resetDb();
  const support = await principal();
  const ops = await principal("ops-bot");
  const mk = (label: string, id: string, agent: Principal, reviewers: readonly string[], required: number, validityMs: number, deadlineMs: number): MTask => ({
    label,
    id,
    agent,
    reviewers,
    required,
    validityMs,
    requestDeadline: T0.getTime() + deadlineMs,
    req: "pending",
    reviewed: new Set(),
    phase: "pre",
    status: "working",
    disposition: null,
    claimed: false,
    executed: false,
  });
  const tasks = [
    mk("refund O-2289", await gatedCall(support, "issue_refund", { order_id: "O-2289" }, T0), support, LEADS, 1, HOUR, DAY),
    mk("refund O-4410", await gatedCall(support, "issue_refund", { order_id: "O-4410" }, T0), support, LEADS, 1, HOUR, DAY),
    mk("wire USD 50k", await gatedCall(ops, "wire_transfer", { to: "acct-991", amount: 50_000 }, T0), ops, TREASURY, 2, 4 * HOUR, 2 * DAY),
  ];
  return { model: { now: T0.getTime(), tasks }, real: { terminal: new Map() } };
}

describe("model-based: approve, deny, cancel, expire, claim, crash, recover", () => {
  it(`after every step: at most one execution per task, a terminal status never changes, disposition and body agree, nothing executes after expiry or cancellation (${RUNS} runs)`, { timeout: TIMEOUT }, async () => {
    const started = performance.now();
    let steps = 0;
    await fc.assert(
      fc.asyncProperty(fc.commands(commandArbs, { maxCommands: LONG ? 40 : 30, size: "max" }), async (cmds) => {
        const { model, real } = await setupRun();
        await checkInvariants(model, real);
        await fc.asyncModelRun(() => ({ model, real }), cmds);
        steps += [...cmds].length;
      }),
      { numRuns: RUNS, verbose: 1 },
    );
    console.log(`[proof] model (commands): ${RUNS} runs, ${steps} steps in ${Math.round(performance.now() - started)} ms`);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Scheduled concurrency
// ---------------------------------------------------------------------------------------------------------------

const OPS = ["advanceA", "advanceA", "crashA", "cancelA", "cancelA", "bareClaimA", "sweep", "approveB", "denyB", "cancelB", "advanceB"] as const;
type Op = (typeof OPS)[number];

describe("scheduled concurrency (fc.scheduler)", () => {
  it(`operations started concurrently in any scheduler-chosen order never execute twice and never both cancel and execute (${RUNS} runs)`, { timeout: TIMEOUT }, async () => {
    const started = performance.now();
    const outcomes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(fc.constantFrom(...OPS), { minLength: 2, maxLength: 6 }), async (s, ops) => {
        await resetDb();
        const support = await principal();
        const opsBot = await principal("ops-bot");
        // A: a refund approved in the backend, not advanced yet. B: a wire transfer with one of its two approvals.
        const a = await gatedCall(support, "issue_refund", { order_id: "O-2289" }, T0);
        const b = await gatedCall(opsBot, "wire_transfer", { to: "acct-991", amount: 50_000 }, T0);
        await approveOnly(a, LEADS[0], new Date(T0.getTime() + MIN));
        await approveOnly(b, TREASURY[0], new Date(T0.getTime() + MIN));
        const now = new Date(T0.getTime() + 2 * MIN);
        const theo = await userId(TREASURY[1]);
        const requestB = await requestIdOf(b);

        const run = async (op: Op): Promise<unknown> => {
          switch (op) {
            case "advanceA":
              return advanceTask(a, now);
            case "crashA":
              return crashingAt("after-claim", () => advanceTask(a, now));
            case "cancelA":
              return cancelTask(support, a, now);
            case "bareClaimA":
              return claim(a, 1, now);
            case "sweep":
              return sweep(now);
            case "approveB":
              return decide({ requestId: requestB, reviewerId: theo, decision: "approve" }, now);
            case "denyB":
              return decide({ requestId: requestB, reviewerId: theo, decision: "deny", comment: "Unknown beneficiary" }, now);
            case "cancelB":
              return cancelTask(opsBot, b, now);
            case "advanceB":
              return advanceTask(b, now);
          }
        };
        const running = ops.map((op) => s.schedule(Promise.resolve(op), op).then(run));
        await s.waitAll();
        const settled = await Promise.allSettled(running);
        for (const x of settled) if (x.status === "rejected") throw x.reason;

        const check = async (id: string) => {
          const [row, effects, claims] = await Promise.all([taskRow(id), sideEffects(id), auditCount(id, "execution.claimed")]);
          expect(effects).toBeLessThanOrEqual(1);
          expect(claims).toBeLessThanOrEqual(1);
          if (row.status === "cancelled") expect({ effects, claims }).toEqual({ effects: 0, claims: 0 });
          if (row.status === "completed") expectBodyAgrees(row.result as never);
          if (row.disposition === "approved-executed") expect(effects).toBe(1);
          if (row.disposition === "denied-not-executed") expect({ effects, claims }).toEqual({ effects: 0, claims: 0 });
          // The only way to a claim without a result here is the simulated crash.
          if (row.disposition === "outcome-unknown" || row.phase === "claimed") expect(effects).toBe(0);
          if (row.phase === "claimed") expect(ops).toContain("crashA");
          return row;
        };
        const first = await Promise.all([check(a), check(b)]);
        // Later sweeps (past the execution deadline) and cancels settle what is left and change nothing terminal.
        const later = new Date(now.getTime() + EXECUTION_DEADLINE_MS);
        await Promise.all([sweep(later), sweep(later), cancelTask(support, a, later), cancelTask(opsBot, b, later)]);
        const second = await Promise.all([check(a), check(b)]);
        for (const [k, row] of first.entries()) {
          if (["completed", "cancelled", "failed"].includes(row.status)) expect(second[k]).toEqual(row);
        }
        const key = `A:${second[0].status}/${second[0].disposition ?? "-"} B:${second[1].status}/${second[1].disposition ?? "-"}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }),
      { numRuns: RUNS, verbose: 1 },
    );
    console.log(`[proof] model (scheduler): ${RUNS} runs in ${Math.round(performance.now() - started)} ms; outcomes ${JSON.stringify(Object.fromEntries(outcomes))}`);
  });
});
