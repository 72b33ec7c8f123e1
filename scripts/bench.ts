/**
 * Speed benchmark: `npm run bench`. Prints one markdown table of ratios; it is not a test.
 *
 * Every figure is a ratio against a baseline measured in the same process of the same round, so a busy machine
 * slows both alike. Rounds run in fresh processes, alternating the embedded database (in-memory PGlite, served in
 * the bench process as the app serves it) and PostgreSQL (when DATABASE_URL names a server: a fresh scratch
 * database per round, created and dropped by the round); each figure is the median of the rounds' ratios.
 *
 * All MCP traffic goes through the route handler in process (app/mcp/route.ts via lib/mcp/testing.ts rpc()):
 * bearer authentication, the SDK's protocol handling and lib/mcp, as an agent's request pays them. Each concurrent
 * client is a distinct agent (its own token). The gated call is the demo policy's production deploy (one SRE, no
 * justification question); the allowed call is the same tool to staging. The final approval goes through
 * lib/tasks/decide (review, then the task advances: re-evaluation, claim, the tool, the stored result), as the
 * reviewer's approve action calls it.
 *
 * Baselines, each in the same round:
 *   - a raw single-row INSERT, one statement in its own transaction, through the app's driver path (the Prisma
 *     client and its pg adapter and pool, $executeRawUnsafe): the machine's write ceiling at 1, 8, 32 clients;
 *   - the allowed call, at 1, 8 and 32 clients;  tools/list at 8 clients;
 *   - one conditional UPDATE on Task (`... WHERE id = $1 AND status = 'working'`, after ANALYZE), one at a time.
 * Statements are counted by wrapping pg's Client.prototype.query in the round's process: every statement the app
 * sends is one, BEGIN and COMMIT included; transactions are the BEGINs. Database time is the time spent inside
 * those query calls (one call at a time, so the sum is the call's own).
 *
 *   npm run bench                                       both databases when DATABASE_URL is set, else embedded only
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench -- --json bench.json
 *   ROUNDS=5 SECONDS=20 MEASURE_MS=3000 SEQUENTIAL=50 WARMUP=20 GROW=100000 npm run bench
 *   DATABASE_URL=... npm run bench -- --profile         CPU profile of the gated call (PostgreSQL; embedded without)
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { seededScratch } from "./bench-db";
import { benchChildEnv, countStatements, median, percentile, reportFigures, runRound } from "./bench-support";

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SECONDS = Number(process.env.SECONDS ?? 8);
const MEASURE_MS = Number(process.env.MEASURE_MS ?? 1500);
const GROW = Number(process.env.GROW ?? 100_000);
const GROW_ALL = process.env.GROW_ALL === "1";
const SEQUENTIAL = Number(process.env.SEQUENTIAL ?? 25);
const WARMUP = Number(process.env.WARMUP ?? 10);
const PROFILE_SECONDS = Number(process.env.PROFILE_SECONDS ?? 10);
const CLIENTS = [1, 8, 32] as const;
const AGENTS = 32;
const SCRIPT = "scripts/bench.ts";

type Figures = {
  database: string;
  insertPerSecond: Record<string, number>;
  allowedPerSecond: Record<string, number>;
  gatedPerSecond: Record<string, number>;
  toolsListPerSecond: number;
  tasksGetPerSecond: number;
  updateMs: number;
  approvalMs: number;
  gatedStatements: number;
  gatedTransactions: number;
  approvalStatements: number;
  approvalTransactions: number;
  emptyDbMs: number;
  emptyLatencyMs: number;
  grownDbMs: number;
  grownLatencyMs: number;
  grownTasks: number;
  growMs: number;
  pacedP50Ms: number;
  pacedP95Ms: number;
  pacedCalls: number;
  pacedFailures: number;
};

// ---- the round (child process) ----

/** Completed calls per second of `clients` closed-loop callers over `ms` (each starts its next call when one ends). */
async function closedLoop(clients: number, ms: number, f: (client: number, i: number) => Promise<unknown>): Promise<number> {
  let done = 0;
  const t0 = performance.now();
  const until = t0 + ms;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < 1_000_000 && performance.now() < until; i++) {
        await f(c, i);
        done++;
      }
    }),
  );
  return (done / (performance.now() - t0)) * 1000;
}

async function child(profile: boolean): Promise<void> {
  const began = performance.now();
  const phase = (name: string) => process.stderr.write(`[${((performance.now() - began) / 1000).toFixed(1)} s] ${name}\n`);
  const cleanup = benchChildEnv("bench");
  const { scratch, db, closeDb } = await seededScratch();
  try {
    const { createAgent } = await import("../lib/admin/agents");
    const { rpc } = await import("../lib/mcp/testing");
    const { decide } = await import("../lib/tasks/decide");
    const counter = await countStatements();
    phase("seeded");

    const user = (email: string) => db().user.findUniqueOrThrow({ where: { email } });
    const [admin, otto, sasha] = await Promise.all([user("admin@countersign.test"), user("otto.ops@countersign.test"), user("sasha.sre@countersign.test")]);
    const agents: { id: string; token: string }[] = [];
    for (let a = 0; a < AGENTS; a++) {
      const { agent, token } = await createAgent({ name: `bench-agent-${a}`, userId: otto.id }, admin.id, new Date());
      agents.push({ id: agent.id, token });
    }

    // The calls, each through the route with the agent's token; every answer is checked, a wrong one ends the round.
    let version = 0;
    const ok = (r: { status: number; body: any }, what: string, check: (result: any) => boolean) => {
      if (r.status !== 200 || !r.body?.result || !check(r.body.result)) throw new Error(`${what}: unexpected answer ${r.status} ${JSON.stringify(r.body).slice(0, 400)}`);
      return r.body.result;
    };
    const deploy = (environment: string) => ({ name: "deploy_service", arguments: { service: "checkout-api", environment, version: `${environment === "staging" ? 9 : 8}.${version++}.0` } });
    const allowed = async (a: number) => ok(await rpc("tools/call", deploy("staging"), { token: agents[a].token }), "allowed call", (x) => x.isError === false);
    const gated = async (a: number): Promise<string> =>
      ok(await rpc("tools/call", deploy("production"), { token: agents[a].token }), "gated call", (x) => x.resultType === "task" && x.status === "working").taskId;
    const toolsList = async (a: number) => ok(await rpc("tools/list", {}, { token: agents[a].token }), "tools/list", (x) => Array.isArray(x.tools) && x.tools.length > 0);
    const tasksGet = async (a: number, taskId: string) => ok(await rpc("tasks/get", { taskId }, { token: agents[a].token }), "tasks/get", (x) => x.taskId === taskId);
    const approve = async (taskId: string) => {
      const req = await db().approvalRequest.findFirstOrThrow({ where: { taskId }, select: { id: true } });
      return counter.measure(async () => {
        const r = await decide({ requestId: req.id, reviewerId: sasha.id, decision: "approve" }, new Date());
        if (!r.ok || r.taskStatus !== "completed" || r.disposition !== "approved-executed") throw new Error(`approval: unexpected outcome ${JSON.stringify(r)}`);
        return r;
      });
    };

    phase("agents");
    // Warm-up: plans, pools, the JIT.
    for (let i = 0; i < WARMUP; i++) {
      await allowed(i % AGENTS);
      await gated(i % AGENTS);
      await toolsList(i % AGENTS);
    }

    /** The gated call one at a time: median latency and median database time. */
    const gatedAlone = async () => {
      const ms: number[] = [];
      const dbMs: number[] = [];
      for (let i = 0; i < SEQUENTIAL; i++) {
        const m = await counter.measure(() => gated(i % AGENTS));
        ms.push(m.ms);
        dbMs.push(m.dbMs);
      }
      return { latency: median(ms), dbTime: median(dbMs) };
    };

    if (profile) {
      // Only the gated call: half the time one at a time, half from 8 clients. The window is reported so that the
      // summary keeps the samples inside it.
      const start = process.hrtime.bigint() / 1000n;
      const half = (PROFILE_SECONDS * 1000) / 2;
      let calls = 0;
      await closedLoop(1, half, () => gated(0).then(() => calls++));
      await closedLoop(8, half, (c) => gated(c).then(() => calls++));
      const windowEndUs = Number(process.hrtime.bigint() / 1000n);
      reportFigures({ database: scratch.kind, windowStartUs: Number(start), windowEndUs, calls });
      await closeDb();
      return;
    }

    const empty = await gatedAlone();
    phase("empty");

    // Statements of one gated call (authentication included) and of one final approval.
    const one = await counter.measure(() => gated(0));

    // Baseline: one conditional UPDATE on Task, on an analyzed database; and the final approval, one at a time.
    await db().$executeRawUnsafe(`ANALYZE`);
    const target = await gated(1);
    const update = () => db().$executeRawUnsafe(`UPDATE "Task" SET "lastUpdatedAt" = $2 WHERE id = $1 AND status = 'working'`, target, new Date());
    for (let i = 0; i < 20; i++) await update();
    const updates: number[] = [];
    for (let i = 0; i < SEQUENTIAL * 5; i++) {
      const t = performance.now();
      if ((await update()) !== 1) throw new Error("the conditional UPDATE matched no row");
      updates.push(performance.now() - t);
    }
    const pending: string[] = [];
    for (let i = 0; i < SEQUENTIAL + 3; i++) pending.push(await gated(i % AGENTS));
    for (const t of pending.splice(0, 3)) await approve(t);
    const approvals = [];
    for (const t of pending) approvals.push(await approve(t));

    phase("approvals");
    // Baselines and figures at 1, 8 and 32 clients, in alternating order.
    await db().$executeRawUnsafe(`CREATE TABLE bench_insert (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), payload text NOT NULL)`);
    const insert = () => db().$executeRawUnsafe(`INSERT INTO bench_insert (payload) VALUES ($1)`, `row ${version++}`);
    const insertPerSecond: Record<string, number> = {};
    const allowedPerSecond: Record<string, number> = {};
    const gatedPerSecond: Record<string, number> = {};
    for (const [k, clients] of CLIENTS.entries()) {
      const runs: [Record<string, number>, (c: number) => Promise<unknown>][] = [
        [insertPerSecond, () => insert()],
        [allowedPerSecond, (c) => allowed(c)],
        [gatedPerSecond, (c) => gated(c)],
      ];
      if (k % 2) runs.reverse();
      for (const [into, f] of runs) into[clients] = await closedLoop(clients, MEASURE_MS, f);
    }

    phase("throughput");
    // tasks/get (each agent polls its own pending task) beside tools/list, 8 clients.
    const own = await Promise.all(Array.from({ length: 8 }, (_, c) => gated(c)));
    const toolsListPerSecond = await closedLoop(8, MEASURE_MS, (c) => toolsList(c));
    const tasksGetPerSecond = await closedLoop(8, MEASURE_MS, (c) => tasksGet(c, own[c]));

    phase("tasks/get");
    // Paced: every agent makes one gated call a second, on a schedule; latency counts from the scheduled time.
    const paced: number[] = [];
    let pacedFailures = 0;
    const t0 = performance.now() + 200;
    await Promise.all(
      agents.map(async (_, a) => {
        const inFlight: Promise<void>[] = [];
        for (let k = 0; k < SECONDS; k++) {
          const at = t0 + k * 1000 + (a * 1000) / AGENTS;
          await new Promise((r) => setTimeout(r, Math.max(0, at - performance.now())));
          // An overloaded server answers some calls with an error: counted, and the run goes on.
          inFlight.push(gated(a).then(() => void paced.push(performance.now() - at), () => void pacedFailures++));
        }
        await Promise.all(inFlight);
      }),
    );

    phase("paced");
    // Grown: GROW terminal tasks (approved-executed and denied), cloned with all their rows, then the gated call again.
    for (let i = 0; i < 3; i++) {
      const t = await gated(i);
      const req = await db().approvalRequest.findFirstOrThrow({ where: { taskId: t }, select: { id: true } });
      await decide({ requestId: req.id, reviewerId: sasha.id, decision: "deny", comment: "Not this week." }, new Date());
    }
    const tg = performance.now();
    await growTasks(db(), GROW, agents.map((a) => a.id));
    await db().$executeRawUnsafe(`ANALYZE`);
    const growMs = performance.now() - tg;
    phase("grew");
    const grownTasks = await db().task.count();
    for (let i = 0; i < WARMUP; i++) await gated(i % AGENTS);
    const grown = await gatedAlone();
    phase("grown");

    const figures: Figures = {
      database: scratch.kind,
      insertPerSecond,
      allowedPerSecond,
      gatedPerSecond,
      toolsListPerSecond,
      tasksGetPerSecond,
      updateMs: median(updates),
      approvalMs: median(approvals.map((a) => a.ms)),
      gatedStatements: one.statements,
      gatedTransactions: one.transactions,
      approvalStatements: median(approvals.map((a) => a.statements)),
      approvalTransactions: median(approvals.map((a) => a.transactions)),
      emptyDbMs: empty.dbTime,
      emptyLatencyMs: empty.latency,
      grownDbMs: grown.dbTime,
      grownLatencyMs: grown.latency,
      grownTasks,
      growMs,
      pacedP50Ms: paced.length ? percentile(paced, 50) : NaN,
      pacedP95Ms: paced.length ? percentile(paced, 95) : NaN,
      pacedCalls: paced.length,
      pacedFailures,
    };
    reportFigures(figures);
    await closeDb();
  } finally {
    await scratch.drop();
    cleanup();
  }
}

/**
 * Adds `n` terminal tasks as the app leaves them, by cloning finished tasks with INSERT ... SELECT over
 * generate_series: the rows a gated call reads and writes (Task, ApprovalRequest, SubmissionIntent, CallRecord), and
 * with GROW_ALL=1 the rest of each task's trail too (Review, AuditEvent, Deployment: several times the rows, minutes
 * more on a loaded machine); new ids, the agents in turn, every timestamp moved back by 25 s per copy. Three in four
 * copies are of approved and executed tasks, one in four of denied ones. Sealed columns keep the template's
 * ciphertext (bound to the template's row, so a copy's arguments do not open: no figure here reads them).
 */
/** An id of this database as an SQL literal (ids are uuids; anything else is refused). */
function literal(id: string | null): string {
  if (!id || !/^[0-9a-f-]{36}$/.test(id)) throw new Error(`not an id: ${id}`);
  return `'${id}'`;
}

async function growTasks(client: import("../lib/db/client").Db, n: number, agentIds: string[]): Promise<void> {
  const approved = await client.task.findMany({ where: { disposition: "approved-executed" }, select: { id: true, handle: true }, take: 3 });
  const denied = await client.task.findFirstOrThrow({ where: { disposition: "denied-not-executed" }, select: { id: true, handle: true } });
  const templates = [...approved, denied];
  if (approved.length < 3) throw new Error("no approved tasks to clone");
  const columns = async (table: string) =>
    client.$queryRawUnsafe<{ column_name: string; data_type: string }[]>(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`,
      table,
    );
  const agents = `(ARRAY[${agentIds.map(literal).join(",")}])[1 + g % ${agentIds.length}]`;
  const tables: { table: string; where: string; map: Record<string, string> }[] = [
    { table: "Task", where: `src.id = $1`, map: { id: "nt", dedupKey: "md5('dedup' || nt)", handle: "nr", agentId: agents } },
    { table: "ApprovalRequest", where: `src."taskId" = $1`, map: { id: "nr", taskId: "nt", idempotencyKey: "md5('key' || nr)" } },
    { table: "Review", where: `src."requestId" = $2`, map: { id: "md5(src.id || nr)::uuid::text", requestId: "nr" } },
    { table: "SubmissionIntent", where: `src."taskId" = $1`, map: { id: "md5(src.id || nt)::uuid::text", taskId: "nt", idempotencyKey: "md5('key' || nr)", handle: "nr", agentId: agents } },
    { table: "CallRecord", where: `src."taskId" = $1`, map: { id: "md5(src.id || nt)::uuid::text", taskId: "nt", agentId: agents } },
    { table: "Deployment", where: `src."taskId" = $1`, map: { id: "md5(src.id || nt)::uuid::text", taskId: "nt" } },
    { table: "AuditEvent", where: `(src."taskId" = $1 OR src."requestId" = $2)`, map: { seq: "", taskId: `CASE WHEN src."taskId" IS NULL THEN NULL ELSE nt END`, requestId: `CASE WHEN src."requestId" IS NULL THEN NULL ELSE nr END` } },
  ];
  for (const { table, where, map } of tables.filter((t) => GROW_ALL || !["Review", "AuditEvent", "Deployment"].includes(t.table))) {
    const cols = (await columns(table)).filter((c) => map[c.column_name] !== "");
    const names = cols.map((c) => `"${c.column_name}"`).join(", ");
    const exprs = cols
      .map((c) => map[c.column_name] ?? (c.data_type.startsWith("timestamp") ? `src."${c.column_name}" - g * interval '25 seconds'` : `src."${c.column_name}"`))
      .join(", ");
    for (const [k, t] of templates.entries()) {
      // Copy g of template k: g = k+1, k+1+4, ... up to n, so the copies interleave in time.
      await client.$executeRawUnsafe(
        `INSERT INTO "${table}" (${names})
         SELECT ${exprs}
         FROM "${table}" src,
              LATERAL (SELECT g, md5('task' || g)::uuid::text AS nt, md5('request' || g)::uuid::text AS nr
                       FROM generate_series(${k + 1}, ${n}, ${templates.length}) g) copies
         WHERE ${where.replace("$1", literal(t.id)).replace("$2", literal(t.handle))}`,
      );
    }
  }
}

// ---- the profile ----

type ProfileNode = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type CpuProfile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number };

/** Where a frame's code lives: a package, a file of this repository, or the engine's own buckets. */
function moduleOf(url: string, name: string): string {
  if (!url) return name;
  const file = url.replace(/^file:\/\//, "");
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (pkg) return pkg[1];
  if (file.startsWith("node:")) return file;
  const root = path.resolve(".") + path.sep;
  return file.startsWith(root) ? file.slice(root.length) : file;
}

function summarizeProfile(file: string, window: { windowStartUs: number; windowEndUs: number }, top = 20) {
  const p = JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  let t = p.startTime;
  const selfUs = new Map<number, number>();
  let inWindow = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    if (t < window.windowStartUs || t > window.windowEndUs) continue;
    const d = p.timeDeltas[i + 1] ?? 0;
    selfUs.set(p.samples[i], (selfUs.get(p.samples[i]) ?? 0) + d);
    inWindow++;
  }
  // Native and WebAssembly frames are named after the JavaScript module that called them (Cedar's and Prisma's
  // query compiler's WebAssembly look alike otherwise).
  const jsCaller = (id: number): string => {
    for (let at = parent.get(id), i = 0; at !== undefined && i < 10_000; at = parent.get(at), i++) {
      const { url, functionName } = byId.get(at)!.callFrame;
      if (url && !url.startsWith("wasm://")) return moduleOf(url, functionName);
    }
    return "?";
  };
  const fn = new Map<string, number>();
  const mod = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === "(idle)") continue;
    total += us;
    const engine = !url && functionName.startsWith("(");
    const m = engine ? functionName : !url ? `native, from ${jsCaller(id)}` : url.startsWith("wasm://") ? `WebAssembly, from ${jsCaller(id)}` : moduleOf(url, functionName);
    const key = engine ? functionName : `${functionName || "(anonymous)"} (${m}${url && !url.startsWith("wasm://") ? `:${lineNumber + 1}` : ""})`;
    fn.set(key, (fn.get(key) ?? 0) + us);
    mod.set(m, (mod.get(m) ?? 0) + us);
  }
  const rank = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: us / 1000, share: us / total }));
  return { samples: inWindow, busyMs: total / 1000, functions: rank(fn), modules: rank(mod) };
}

function profile(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "countersign-bench-profile-"));
  const figures = runRound<{ database: string; windowStartUs: number; windowEndUs: number; calls: number }>(SCRIPT, ["--child", "--profile"], {
    nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`],
  });
  const file = fs.readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error("the child wrote no CPU profile");
  const s = summarizeProfile(path.join(dir, file), figures);
  const seconds = (figures.windowEndUs - figures.windowStartUs) / 1e6;
  console.log(`CPU profile of the gated tools/call on ${figures.database}: ${figures.calls} calls in ${seconds.toFixed(1)} s through the route (half the time one at a time,`);
  console.log(`half from 8 clients); ${s.samples} samples, ${s.busyMs.toFixed(0)} ms on the CPU (idle left out); self time. Profile: ${path.join(dir, file)}`);
  for (const [title, rows] of [["function", s.functions], ["module", s.modules]] as const) {
    console.log(`\n| ${title} (self time) | ms | share |\n|---|---|---|`);
    for (const r of rows) console.log(`| ${r.name.replace(/\|/g, "\\|")} | ${r.ms.toFixed(0)} | ${(r.share * 100).toFixed(1)}% |`);
  }
}

// ---- the table ----

type Row = { figure: string; value: (f: Figures) => number; fmt: (x: number) => string; target?: { op: ">=" | "<=" | "<"; limit: number; text: string } };

const ratio = (x: number) => `${x.toFixed(2)}`;
const perSecond = (x: number) => `${x.toFixed(0)}/s`;
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
const count = (x: number) => `${x}`;

const ROWS: Row[] = [
  ...CLIENTS.map((c): Row => ({ figure: `baseline: single-row INSERT transactions, ${c} client${c > 1 ? "s" : ""} (the ceiling)`, value: (f) => f.insertPerSecond[c], fmt: perSecond })),
  ...CLIENTS.map((c): Row => ({ figure: `baseline: allowed tools/call, ${c} client${c > 1 ? "s" : ""}`, value: (f) => f.allowedPerSecond[c], fmt: perSecond })),
  { figure: "baseline: tools/list, 8 clients", value: (f) => f.toolsListPerSecond, fmt: perSecond },
  { figure: "baseline: one conditional UPDATE on Task", value: (f) => f.updateMs, fmt: ms },
  ...CLIENTS.map((c): Row => ({
    figure: `gated tools/call throughput / allowed call's, ${c} client${c > 1 ? "s" : ""}`,
    value: (f) => f.gatedPerSecond[c] / f.allowedPerSecond[c],
    fmt: ratio,
    target: { op: ">=", limit: 0.8, text: ">= 0.8" },
  })),
  ...CLIENTS.map((c): Row => ({ figure: `(gated tools/call, ${c} client${c > 1 ? "s" : ""})`, value: (f) => f.gatedPerSecond[c], fmt: perSecond })),
  ...CLIENTS.map((c): Row => ({ figure: `(gated tools/call / INSERT ceiling, ${c} client${c > 1 ? "s" : ""})`, value: (f) => f.gatedPerSecond[c] / f.insertPerSecond[c], fmt: ratio })),
  { figure: "tasks/get throughput / tools/list's, 8 clients", value: (f) => f.tasksGetPerSecond / f.toolsListPerSecond, fmt: ratio, target: { op: ">=", limit: 0.8, text: ">= 0.8" } },
  { figure: "(tasks/get, 8 clients)", value: (f) => f.tasksGetPerSecond, fmt: perSecond },
  { figure: "final approval -> stored result / one conditional UPDATE", value: (f) => f.approvalMs / f.updateMs, fmt: (x) => `${x.toFixed(1)}x`, target: { op: "<=", limit: 10, text: "<= 10x" } },
  { figure: "(final approval -> stored result)", value: (f) => f.approvalMs, fmt: ms },
  { figure: "statements in one gated tools/call (with authentication)", value: (f) => f.gatedStatements, fmt: count },
  { figure: "transactions in one gated tools/call", value: (f) => f.gatedTransactions, fmt: count },
  { figure: "statements in one final approval (review to stored result)", value: (f) => f.approvalStatements, fmt: count },
  { figure: "transactions in one final approval", value: (f) => f.approvalTransactions, fmt: count },
  { figure: `gated call's database time at ${GROW.toLocaleString("en-US")} tasks / empty`, value: (f) => f.grownDbMs / f.emptyDbMs, fmt: ratio, target: { op: "<=", limit: 1.15, text: "<= 1.15" } },
  { figure: `gated call's latency at ${GROW.toLocaleString("en-US")} tasks / empty`, value: (f) => f.grownLatencyMs / f.emptyLatencyMs, fmt: ratio, target: { op: "<=", limit: 1.15, text: "<= 1.15" } },
  { figure: "(gated call, empty: latency)", value: (f) => f.emptyLatencyMs, fmt: ms },
  { figure: "(gated call, empty: database time)", value: (f) => f.emptyDbMs, fmt: ms },
  { figure: `(gated call, ${GROW.toLocaleString("en-US")} tasks: latency)`, value: (f) => f.grownLatencyMs, fmt: ms },
  { figure: `(gated call, ${GROW.toLocaleString("en-US")} tasks: database time)`, value: (f) => f.grownDbMs, fmt: ms },
  { figure: `paced: ${AGENTS} agents x 1 gated call/s for ${SECONDS} s, p50`, value: (f) => f.pacedP50Ms, fmt: ms },
  { figure: `paced: calls answered with an error (of ${AGENTS * SECONDS})`, value: (f) => f.pacedFailures, fmt: count, target: { op: "<=", limit: 0, text: "0" } },
  { figure: `paced: ${AGENTS} agents x 1 gated call/s for ${SECONDS} s, p95`, value: (f) => f.pacedP95Ms, fmt: ms, target: { op: "<", limit: 50, text: "< 50 ms" } },
];

function meets(x: number, t: NonNullable<Row["target"]>): boolean {
  return t.op === ">=" ? x >= t.limit : t.op === "<=" ? x <= t.limit : x < t.limit;
}

function main(): void {
  const argv = process.argv.slice(2);
  if (argv[0] === "--child") return void child(argv.includes("--profile")).catch((e) => {
    console.error(e);
    process.exit(1);
  });
  if (argv.includes("--profile")) return profile();
  const jsonAt = argv.indexOf("--json");
  const jsonFile = jsonAt >= 0 ? argv[jsonAt + 1] : null;
  const server = process.env.DATABASE_URL;
  const databases = [{ key: "embedded", env: { ...process.env, DATABASE_URL: "" } as NodeJS.ProcessEnv }];
  delete databases[0].env.DATABASE_URL;
  if (server) databases.push({ key: "postgres", env: { ...process.env, DATABASE_URL: server } });
  const rounds: Record<string, Figures[]> = Object.fromEntries(databases.map((d) => [d.key, []]));
  const started = Date.now();
  for (let i = 0; i < ROUNDS; i++) {
    // Alternate which database goes first, so neither always runs on the warmer (or busier) machine.
    for (const d of i % 2 ? [...databases].reverse() : databases) {
      rounds[d.key].push(runRound<Figures>(SCRIPT, ["--child"], { env: d.env }));
      process.stderr.write(`round ${i + 1}/${ROUNDS} on ${d.key} done (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
    }
  }
  const names = databases.map((d) => (d.key === "embedded" ? "embedded PGlite" : `PostgreSQL ${/PostgreSQL ([\d.]+)/.exec(rounds.postgres[0].database)?.[1] ?? ""}`.trim()));
  const table = ROWS.map((r) => {
    const values = databases.map((d) => median(rounds[d.key].map(r.value)));
    const missed = r.target ? databases.filter((_, k) => !meets(values[k], r.target!)).map((_, k) => names[k]) : [];
    const verdict = r.target ? `${r.target.text}: ${missed.length ? `MISS (${missed.join(", ")})` : "PASS"}` : "";
    return { figure: r.figure, values, cells: values.map(r.fmt), target: verdict };
  });
  const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).stdout.trim();
  console.log(
    `Countersign speed, commit ${commit}, ${os.cpus().length} cores, Node ${process.version}: medians of ${ROUNDS} rounds per database (fresh processes, alternating),` +
      ` each ratio against a baseline of the same round; through the MCP route with authentication, ${AGENTS} distinct agents.`,
  );
  console.log("");
  console.log(`| figure | ${names.join(" | ")} | target |`);
  console.log(`|---|${names.map(() => "---|").join("")}---|`);
  for (const r of table) console.log(`| ${r.figure} | ${r.cells.join(" | ")} | ${r.target} |`);
  console.log("");
  console.log(
    "Statements counted by wrapping pg's Client.prototype.query in the round's process (BEGIN and COMMIT count as statements; transactions are the BEGINs); " +
      "the INSERT and UPDATE baselines go through the app's driver path (Prisma, its pg adapter and pool).",
  );
  console.log(`Rerun: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench [-- --json bench.json] (ROUNDS=${ROUNDS} SECONDS=${SECONDS} MEASURE_MS=${MEASURE_MS} GROW=${GROW}); without DATABASE_URL, embedded only.`);
  if (jsonFile) {
    fs.writeFileSync(
      jsonFile,
      JSON.stringify({ commit, at: new Date().toISOString(), cores: os.cpus().length, node: process.version, settings: { ROUNDS, SECONDS, MEASURE_MS, GROW, GROW_ALL, SEQUENTIAL, WARMUP }, databases: names, table, rounds }, null, 2) + "\n",
    );
    console.log(`Figures of every round: ${jsonFile}`);
  }
}

main();
