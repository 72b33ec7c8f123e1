/**
 * Soak: `npm run soak` (opt-in, not part of `npm test`). Agents, reviewers and the sweeper together for
 * SOAK_MINUTES (30 by default) at half the capacity measured at the start of the same run, then the invariants:
 *
 *   - executions per task: every `execution.claimed` event and every deployment counted per task (at most 1 each),
 *     and every task completed `approved-executed` has exactly one deployment, every other task none;
 *   - orphaned submission intents: intents still `open` a minute after they were written (0);
 *   - tasks neither terminal nor legitimately pending: open tasks whose request deadline passed more than the
 *     sweeper's grace ago (0);
 *   - the serving process's memory (heap after a full GC, and RSS) at the start, the middle and the end (flat: the
 *     end's heap within 25% + 16 MiB of the middle's).
 *
 * It runs as the benchmark does (scripts/bench.ts): the MCP route in process, each agent with its own token, the
 * reviewer's decisions through lib/tasks/decide (review, then re-evaluation, claim and the tool, as the approve
 * action calls it), the sweeper on its timer as instrumentation.ts runs it. The database is a fresh in-memory
 * embedded one, or a scratch database on the PostgreSQL server DATABASE_URL names. Pending windows are capped at
 * SOAK_WINDOW_S (60 s) so that requests left alone expire within the run and the sweeper's expiry path is soaked
 * too. The workload, per agent and tick: an allowed call (a staging deploy), a gated call (a production deploy)
 * that one reviewer approves (about 55%), denies (20%), leaves to expire (10%), or the agent cancels (10%), or
 * that two approvals race for (5%); the agent polls tasks/get until its task ends.
 *
 *   npm run soak                                   30 minutes on the embedded database
 *   SOAK_MINUTES=2 npm run soak                    a short run
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run soak
 *
 * Exit code 0 when every invariant holds, 1 otherwise. Bounded: every loop ends with the run's clock, and the
 * drain after it waits at most the window plus two minutes.
 */
import { seededScratch } from "./bench-db";
import { benchChildEnv, percentile } from "./bench-support";

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const WINDOW_S = Number(process.env.SOAK_WINDOW_S ?? 60);
const AGENTS = Number(process.env.SOAK_AGENTS ?? 16);
const CAPACITY_MS = Number(process.env.SOAK_CAPACITY_MS ?? 8000);
const SWEEP_MS = Number(process.env.COUNTERSIGN_SWEEP_MS ?? 500);

type Memory = { at: string; heapMiB: number; rssMiB: number };

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function memory(at: string): Memory {
  gc();
  const m = process.memoryUsage();
  return { at, heapMiB: +(m.heapUsed / 2 ** 20).toFixed(1), rssMiB: +(m.rss / 2 ** 20).toFixed(1) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<number> {
  const began = Date.now();
  const log = (s: string) => process.stderr.write(`[soak ${((Date.now() - began) / 1000).toFixed(0)} s] ${s}\n`);
  const cleanup = benchChildEnv("soak");
  process.env.COUNTERSIGN_MAX_PENDING_WINDOW_MS = String(WINDOW_S * 1000);
  // One line per request would be the run's output; warnings and errors still show.
  process.env.COUNTERSIGN_LOG_LEVEL ??= "warn";
  const { scratch, db, closeDb } = await seededScratch();
  let stopSweeper = () => {};
  try {
    const { createAgent } = await import("../lib/admin/agents");
    const { rpc } = await import("../lib/mcp/testing");
    const { decide } = await import("../lib/tasks/decide");
    const { sweep } = await import("../lib/execution/sweep");
    log(`database: ${scratch.kind}`);

    const user = (email: string) => db().user.findUniqueOrThrow({ where: { email } });
    const [admin, otto, sasha] = await Promise.all([user("admin@countersign.test"), user("otto.ops@countersign.test"), user("sasha.sre@countersign.test")]);
    const agents: string[] = [];
    for (let a = 0; a < AGENTS; a++) agents.push((await createAgent({ name: `soak-agent-${a}`, userId: otto.id }, admin.id, new Date())).token);

    // The sweeper, as instrumentation.ts runs it: one pass at a time on a timer.
    let sweeping = false;
    let sweepErrors = 0;
    const timer = setInterval(async () => {
      if (sweeping) return;
      sweeping = true;
      try {
        await sweep(new Date());
      } catch {
        sweepErrors++;
      } finally {
        sweeping = false;
      }
    }, SWEEP_MS);
    stopSweeper = () => clearInterval(timer);

    let version = 0;
    const counts = { allowed: 0, gated: 0, approved: 0, denied: 0, cancelled: 0, leftToExpire: 0, raced: 0, errors: 0, refusedDecisions: 0 };
    const errors: string[] = [];
    const fail = (what: string, detail: unknown) => {
      counts.errors++;
      if (errors.length < 20) errors.push(`${what}: ${typeof detail === "string" ? detail : JSON.stringify(detail).slice(0, 300)}`);
    };
    const deploy = (environment: string) => ({ name: "deploy_service", arguments: { service: "checkout-api", environment, version: `${environment === "staging" ? 9 : 8}.${version++}.0` } });
    const requestOf = async (taskId: string) => (await db().approvalRequest.findFirst({ where: { taskId }, select: { id: true } }))?.id;
    const latencies: number[] = [];

    /** One story of one agent: an allowed call, a gated call and what becomes of it, polled to its end. */
    async function story(a: number, poll: boolean): Promise<void> {
      const token = agents[a];
      const t0 = performance.now();
      const allowed = await rpc("tools/call", deploy("staging"), { token });
      if (allowed.status !== 200 || allowed.body?.result?.isError !== false) return fail("allowed call", allowed.body);
      counts.allowed++;
      const gated = await rpc("tools/call", deploy("production"), { token });
      latencies.push(performance.now() - t0);
      const taskId = gated.body?.result?.taskId as string | undefined;
      if (gated.status !== 200 || gated.body?.result?.resultType !== "task" || !taskId) return fail("gated call", gated.body);
      counts.gated++;
      const roll = Math.random();
      const requestId = await requestOf(taskId);
      if (!requestId) return fail("gated call", `no approval request for task ${taskId}`);
      const now = () => new Date();
      if (roll < 0.55) {
        const r = await decide({ requestId, reviewerId: sasha.id, decision: "approve" }, now());
        if (!r.ok) counts.refusedDecisions++;
        else counts.approved++;
      } else if (roll < 0.75) {
        const r = await decide({ requestId, reviewerId: sasha.id, decision: "deny", comment: "Not during the soak." }, now());
        if (!r.ok) counts.refusedDecisions++;
        else counts.denied++;
      } else if (roll < 0.85) {
        counts.leftToExpire++;
        return; // the sweeper expires it within the window
      } else if (roll < 0.95) {
        const c = await rpc("tasks/cancel", { taskId }, { token });
        if (c.status !== 200 || c.body?.error) return fail("tasks/cancel", c.body);
        counts.cancelled++;
      } else {
        // The same reviewer's approval twice at once: one review counts, the other is refused; one execution.
        counts.raced++;
        const rs = await Promise.all([0, 1].map(() => decide({ requestId, reviewerId: sasha.id, decision: "approve" }, now())));
        if (rs.filter((r) => r.ok).length !== 1) fail("racing approvals", rs);
      }
      if (!poll) return;
      for (let i = 0; i < 50; i++) {
        const g = await rpc("tasks/get", { taskId }, { token });
        if (g.status !== 200 || g.body?.error) return fail("tasks/get", g.body);
        if (["completed", "failed", "cancelled"].includes(g.body.result.status)) return;
        await sleep(100);
      }
    }

    // Capacity: stories per second from 8 closed-loop agents, without polls.
    await story(0, true);
    const capStart = performance.now();
    let capDone = 0;
    await Promise.all(
      Array.from({ length: 8 }, async (_, c) => {
        for (let i = 0; i < 100_000 && performance.now() - capStart < CAPACITY_MS; i++) {
          await story(c % AGENTS, false);
          capDone++;
        }
      }),
    );
    const capacity = (capDone / (performance.now() - capStart)) * 1000;
    const rate = capacity / 2;
    log(`capacity ${capacity.toFixed(1)} stories/s; soaking at ${rate.toFixed(1)}/s for ${MINUTES} min with ${AGENTS} agents`);

    // The soak: each agent starts a story on a schedule (the stories of one agent may overlap).
    const memories: Memory[] = [memory("start")];
    const soakMs = MINUTES * 60_000;
    const soakStart = performance.now();
    let middleTaken = false;
    let started = 0;
    const inFlight = new Set<Promise<void>>();
    const perAgentMs = (AGENTS / rate) * 1000;
    while (performance.now() - soakStart < soakMs) {
      const due = Math.floor(((performance.now() - soakStart) / 1000) * rate);
      while (started < due && inFlight.size < AGENTS * 4) {
        const p: Promise<void> = story(started % AGENTS, true)
          .catch((e) => fail("story", String(e)))
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
        started++;
      }
      if (!middleTaken && performance.now() - soakStart >= soakMs / 2) {
        middleTaken = true;
        memories.push(memory("middle"));
        log(`middle: ${started} stories started, ${counts.errors} errors, heap ${memories[1].heapMiB} MiB`);
      }
      await sleep(Math.min(100, perAgentMs / AGENTS));
    }
    await Promise.all(inFlight);
    if (!middleTaken) memories.push(memory("middle"));
    log(`soak over: ${started} stories; draining (at most ${WINDOW_S + 120} s)`);

    // Drain: everything left alone must expire through the sweeper within the window.
    const drainUntil = Date.now() + (WINDOW_S + 120) * 1000;
    const graceMs = SWEEP_MS * 4 + 5_000;
    const overdue = () =>
      db().task.count({ where: { status: { in: ["working", "input_required"] }, requestDeadline: { lt: new Date(Date.now() - graceMs) } } });
    while (Date.now() < drainUntil && (await db().task.count({ where: { status: { in: ["working", "input_required"] } } })) > 0) await sleep(500);
    stopSweeper();
    while (sweeping) await sleep(50);
    memories.push(memory("end"));

    // The invariants.
    const claims = await db().$queryRawUnsafe<{ taskId: string; n: number }[]>(
      `SELECT "taskId", count(*)::int AS n FROM "AuditEvent" WHERE type = 'execution.claimed' GROUP BY "taskId" HAVING count(*) > 1`,
    );
    const deployments = await db().$queryRawUnsafe<{ taskId: string; n: number }[]>(
      `SELECT "taskId", count(*)::int AS n FROM "Deployment" WHERE "taskId" IS NOT NULL GROUP BY "taskId" HAVING count(*) > 1`,
    );
    const executedWithout = await db().$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM "Task" t WHERE t.disposition = 'approved-executed' AND NOT EXISTS (SELECT 1 FROM "Deployment" d WHERE d."taskId" = t.id)`,
    );
    const ranWithout = await db().$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM "Deployment" d JOIN "Task" t ON t.id = d."taskId" WHERE t.disposition IS DISTINCT FROM 'approved-executed' AND t.status IN ('completed', 'failed', 'cancelled')`,
    );
    const maxClaims = (await db().$queryRawUnsafe<{ n: number }[]>(`SELECT coalesce(max(n), 0)::int AS n FROM (SELECT count(*) AS n FROM "AuditEvent" WHERE type = 'execution.claimed' GROUP BY "taskId") c`))[0].n;
    const orphaned = await db().submissionIntent.count({ where: { state: "open", createdAt: { lt: new Date(Date.now() - 60_000) } } });
    const notTerminal = await overdue();
    const byDisposition = await db().$queryRawUnsafe<{ status: string; disposition: string | null; n: number }[]>(
      `SELECT status, disposition, count(*)::int AS n FROM "Task" GROUP BY status, disposition ORDER BY n DESC`,
    );
    const tasks = await db().task.count();
    const [, middle, end] = memories;
    const flat = end.heapMiB <= middle.heapMiB * 1.25 + 16;

    const lines = [
      `database: ${scratch.kind}`,
      `ran ${MINUTES} min at ${rate.toFixed(1)} stories/s (half of the measured ${capacity.toFixed(1)}/s), ${AGENTS} agents, sweeper every ${SWEEP_MS} ms, pending windows ${WINDOW_S} s`,
      `stories: ${started}; allowed calls ${counts.allowed}, gated calls ${counts.gated}: approved ${counts.approved}, denied ${counts.denied}, cancelled ${counts.cancelled}, left to expire ${counts.leftToExpire}, raced approvals ${counts.raced}; decisions refused ${counts.refusedDecisions}`,
      `gated call (with its allowed call) p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms`,
      `tasks: ${tasks}; ${byDisposition.map((r) => `${r.status}/${r.disposition ?? "-"} ${r.n}`).join(", ")}`,
      `executions per task: at most ${maxClaims} claim(s); tasks with more than one claim: ${claims.length}; with more than one deployment: ${deployments.length}; executed without a deployment: ${executedWithout[0].n}; deployed but not executed: ${ranWithout[0].n}`,
      `orphaned intents: ${orphaned}`,
      `tasks not terminal and not legitimately pending: ${notTerminal}`,
      `memory (heap after GC / RSS): ${memories.map((m) => `${m.at} ${m.heapMiB} / ${m.rssMiB} MiB`).join(", ")} (${flat ? "flat" : "GROWING"})`,
      `errors: ${counts.errors}${errors.length ? `\n  ${errors.join("\n  ")}` : ""}; sweeper errors: ${sweepErrors}`,
    ];
    process.stdout.write(lines.join("\n") + "\n");
    await closeDb();
    const ok =
      maxClaims <= 1 && claims.length === 0 && deployments.length === 0 && executedWithout[0].n === 0 && ranWithout[0].n === 0 && orphaned === 0 && notTerminal === 0 && flat && counts.errors === 0 && sweepErrors === 0;
    process.stdout.write(ok ? "soak: every invariant held\n" : "soak: an invariant failed\n");
    return ok ? 0 : 1;
  } finally {
    stopSweeper();
    await scratch.drop();
    cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
