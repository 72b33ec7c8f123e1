/**
 * Child process for tests/claim-race.test.ts: fires `count` advanceTask calls at each given task, twice its pool's
 * size in flight at a time, starting at the same instant as its sibling processes. Protocol on stdio: prints "ready" once its pool is warm, waits
 * for "go" on stdin, prints one JSON line with how many calls settled and which errors occurred, then exits.
 *
 *   node --import tsx tests/workers/claim-worker.ts <nowIso> <count> <taskId>...
 */
import readline from "node:readline";
import { closeDb, db, poolMax } from "../../lib/db/client";
import { advanceTask } from "../../lib/execution/advance";

const [nowIso, countArg, ...taskIds] = process.argv.slice(2);
const now = new Date(nowIso);
const count = Number(countArg);

// Open the whole pool before the barrier so the race is not decided by connection set-up.
await Promise.all(Array.from({ length: poolMax() }, () => db().$queryRaw`SELECT 1 AS one FROM pg_sleep(0.02)`));
process.stdout.write("ready\n");

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) if (line.trim() === "go") break;
rl.close();

const started = performance.now();
// Twice the pool in flight: every connection of the pool races at the database at once. More would add no
// concurrency there, only a queue in this process whose tail waits on the machine's speed, not on the claim.
const jobs = taskIds.flatMap((id) => Array.from({ length: count }, () => id));
const settled: PromiseSettledResult<unknown>[] = [];
let next = 0;
await Promise.all(
  Array.from({ length: Math.min(jobs.length, 2 * poolMax()) }, async () => {
    while (next < jobs.length) {
      const id = jobs[next++];
      settled.push(await advanceTask(id, now).then((value) => ({ status: "fulfilled" as const, value }), (reason: unknown) => ({ status: "rejected" as const, reason })));
    }
  }),
);
const calls = jobs;
const errors = settled.filter((s) => s.status === "rejected").map((s) => String((s as PromiseRejectedResult).reason?.message ?? s).slice(0, 200));
process.stdout.write(
  JSON.stringify({ pid: process.pid, calls: calls.length, fulfilled: settled.length - errors.length, errors: [...new Set(errors)], errorCount: errors.length, ms: Math.round(performance.now() - started) }) + "\n",
);
await closeDb();
process.exit(0);
