/**
 * At scale (20,000 terminal tasks in `npm test`; SCALE_TASKS=100000 for the full size, about 8 minutes): planner statistics kept fresh (after migrating and by the sweeper), so the claim's one
 * conditional UPDATE stays a primary-key lookup; and one sweep pass made of small statements, each backed by an
 * index and bounded by a LIMIT, so on the embedded database (where a statement holds the whole database) a sweep
 * never stalls the calls that arrive meanwhile.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { closeDb, db } from "../lib/db/client";
import { claim } from "../lib/execution/claim";
import { sweep } from "../lib/execution/sweep";
import { refreshStatistics, tableStatistics } from "../lib/db/statistics";
import { callTool } from "../lib/tasks/call";
import { principal, resetDb } from "./support/db";
import { at, DAY, HOUR, T0 } from "./support/proof";
import { explain, growTerminalTasks, isDataStatement, measure, recordStatements, type Statement } from "./support/scale";

const TASKS = Number(process.env.SCALE_TASKS ?? 20_000);
const SIZE = TASKS.toLocaleString("en");
const PENDING = 50;
/** No statement of a pass may read more rows than this: a batch is 200 to 500 rows; a scan reads every task. */
const MAX_ROWS_TOUCHED = 5_000;
const url = inject("databaseUrl");
const kind = inject("databaseKind");
const SWEEP_AT = at(2 * DAY + HOUR);
/** When the second half of the open tasks is past its deadline too. */
const SECOND_SWEEP_AT = at(4 * DAY + HOUR);

const figures: string[] = [];
afterAll(() => console.log(`[scale ${kind}]\n${figures.join("\n")}`));

async function gatedWires(n: number, from: number, now: Date): Promise<void> {
  const ops = await principal("ops-bot");
  for (let i = 0; i < n; i++) {
    const out = await callTool(ops, "wire_transfer", { to: `acct-scale-${from + i}`, amount: 30_000 + i }, { tasks: true }, now);
    if (out.kind !== "task") throw new Error(`expected a task, got ${out.kind}`);
  }
}

/** The claim's UPDATE exactly as claim() issues it (on a task that does not exist, so nothing changes). */
async function claimStatement(): Promise<Statement> {
  const { statements } = await recordStatements(() => claim("no-such-task", 1, SWEEP_AT));
  const update = statements.find((s) => /^\s*(WITH won AS \()?UPDATE "Task"/.test(s.text));
  if (!update) throw new Error("the claim issued no UPDATE on Task");
  return update;
}

beforeAll(async () => {
  await resetDb();
  // A few hundred open tasks: half past their request deadline at the sweep, half still pending.
  await gatedWires(PENDING, 0, T0);
  await gatedWires(PENDING, PENDING, at(2 * DAY));
  const start = performance.now();
  await growTerminalTasks(TASKS, SWEEP_AT);
  figures.push(`grew to ${await db().task.count()} tasks in ${Math.round(performance.now() - start)} ms`);
}, 600_000);

/**
 * PostgreSQL adds a connection's row changes to the table counters the statistics read when the connection ends, or
 * at its next transaction a second or more later: a counter can still grow after the maintenance pass has read it. So
 * before the passes, the app's connections are closed and the test waits (bounded) until they are gone. The embedded
 * database is one backend that holds its changes back the same way: a flush is forced, and happens once it is idle
 * (after the next statement).
 */
async function settleCounters(): Promise<void> {
  const [{ v }] = await db().$queryRaw<{ v: string }[]>`SELECT version() AS v`;
  if (/PGlite/i.test(v)) {
    await db().$executeRaw`SELECT pg_stat_force_next_flush()`;
    await db().$queryRaw`SELECT 1`;
    return;
  }
  await closeDb();
  for (let i = 0; i < 400; i++) {
    const [{ n }] = await db().$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
    if (n === 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe(`planner statistics are kept fresh at ${SIZE} tasks`, () => {
  it("the claim's UPDATE is a primary-key lookup (Index Scan on Task_pkey) once the sweeper refreshed the statistics", async () => {
    const before = await explain(url, await claimStatement());
    figures.push(`claim plan, statistics as grown:\n${before}`);
    const stale = (await tableStatistics(db())).find((s) => s.table === "Task")!;
    figures.push(`Task before maintenance: ${JSON.stringify(stale)}`);

    await settleCounters();
    // The sweeper's maintenance analyzes one table per pass, the most changed first: bounded count of passes.
    const analyzed: string[] = [];
    for (let i = 0; i < 12; i++) {
      const start = performance.now();
      const t = await refreshStatistics(db(), SWEEP_AT);
      if (!t) break;
      analyzed.push(`${t} ${Math.round(performance.now() - start)} ms`);
    }
    figures.push(`analyzed, one per pass: ${analyzed.join(", ")}`);
    expect(analyzed.map((a) => a.split(" ")[0])).toContain("Task");
    const task = (await tableStatistics(db())).find((s) => s.table === "Task")!;
    expect(task.neverAnalyzed).toBe(false);
    expect(task.rows).toBeGreaterThan(TASKS * 0.9);
    // Nothing changed since: the next pass analyzes nothing.
    expect(await refreshStatistics(db(), SWEEP_AT)).toBeNull();

    const after = await explain(url, await claimStatement());
    figures.push(`claim plan after maintenance:\n${after}`);
    expect(after).toMatch(/Index Scan using "Task_pkey" on "Task"/);
    expect(after).not.toMatch(/Seq Scan on "Task"/);
  }, 600_000);
});

describe(`one sweep pass at ${SIZE} tasks is small bounded statements`, () => {
  it("every statement of the pass is index-backed and bounded: no Seq Scan on a big table, at most a few thousand rows read; times reported", async () => {
    const { result, statements } = await recordStatements(() => sweep(SWEEP_AT, { intentMinAgeMs: 0 }));
    expect(result.advanced).toBe(PENDING);
    expect(result.purged).toBe(200);
    const data = statements.filter((s) => isDataStatement(s.text));
    expect(data.length).toBeGreaterThan(PENDING);
    // Each distinct statement text once, with the values of its slowest run in the pass.
    const byText = new Map<string, Statement>();
    for (const s of data) if (!byText.has(s.text) || byText.get(s.text)!.ms < s.ms) byText.set(s.text, s);
    const bad: string[] = [];
    const rows: { line: string; ms: number }[] = [];
    for (const s of byText.values()) {
      const work = await measure(url, s);
      const seq = /Seq Scan on "(Task|ApprovalRequest|SubmissionIntent|AuditEvent|CallRecord|Notification|WebhookDelivery)"/.test(work.plan);
      if (seq || work.rowsTouched > MAX_ROWS_TOUCHED) bad.push(`${s.text}\n${work.plan}`);
      rows.push({ ms: work.ms, line: `${work.ms.toFixed(3).padStart(8)} ms exec  ${s.ms.toFixed(1).padStart(6)} ms round trip  ${String(work.rowsTouched).padStart(5)} rows  ${s.text.replace(/\s+/g, " ").slice(0, 110)}` });
    }
    const times = data.map((s) => s.ms).sort((a, b) => a - b);
    figures.push(`sweep pass: ${statements.length} statements (${data.length} on data tables); round trip max ${times.at(-1)!.toFixed(1)} ms, p99 ${times[Math.floor(times.length * 0.99)].toFixed(1)} ms, median ${times[Math.floor(times.length / 2)].toFixed(1)} ms`);
    figures.push(`distinct statements by execution time (EXPLAIN ANALYZE):\n${rows.sort((a, b) => b.ms - a.ms).map((r) => r.line).join("\n")}`);
    expect(bad).toEqual([]);
  }, 600_000);

  it("while a sweep pass runs on the grown database, allowed calls keep being answered", async () => {
    const ops = await principal("ops-bot");
    let n = 0;
    const allowed = async () => {
      const start = performance.now();
      const out = await callTool(ops, "wire_transfer", { to: `acct-live-${n++}`, amount: 10 }, { tasks: true }, SECOND_SWEEP_AT);
      expect(out.kind).toBe("result");
      return performance.now() - start;
    };
    const idle: number[] = [];
    for (let i = 0; i < 10; i++) idle.push(await allowed());

    let running = true;
    const pass = sweep(SECOND_SWEEP_AT, { intentMinAgeMs: 0 }).finally(() => (running = false));
    const during: number[] = [];
    // Bounded in count and time: calls one after another for as long as the pass runs.
    const deadline = Date.now() + 240_000;
    while (running && during.length < 500 && Date.now() < deadline) during.push(await allowed());
    const report = await pass;
    expect(report.advanced).toBe(PENDING);
    expect(during.length).toBeGreaterThan(0);
    const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))].toFixed(1);
    figures.push(`allowed call latency, idle: median ${q(idle, 0.5)} ms, max ${q(idle, 1)} ms (${idle.length} calls)`);
    figures.push(`allowed call latency during a sweep pass: median ${q(during, 0.5)} ms, p95 ${q(during, 0.95)} ms, max ${q(during, 1)} ms (${during.length} calls)`);
  }, 600_000);
});
