/**
 * Child process for tests/four-eyes-race.test.ts: records one reviewer's decision (decide: review, then advance)
 * per round, at the same instant as its sibling process. Protocol on stdio: prints "ready" once its pool is warm;
 * then, per round, reads one JSON line {requestId, reviewerId, decision, comment, now}, prints "armed", waits for
 * "go", runs the decision and prints its result as one JSON line. "exit" ends it.
 *
 *   node --import tsx tests/workers/review-worker.ts
 */
import readline from "node:readline";
import { closeDb, db, poolMax } from "../../lib/db/client";
import { reviewerDecides } from "../support/reviewer";

// Open the whole pool before the first round so the race is not decided by connection set-up.
await Promise.all(Array.from({ length: poolMax() }, () => db().$queryRaw`SELECT 1 AS one FROM pg_sleep(0.02)`));
process.stdout.write("ready\n");

const rl = readline.createInterface({ input: process.stdin });
let armed: { requestId: string; reviewerId: string; decision: "approve" | "deny"; comment?: string; now: string } | null = null;
for await (const line of rl) {
  const cmd = line.trim();
  if (cmd === "exit") break;
  if (cmd === "go" && armed) {
    const { now, ...input } = armed;
    armed = null;
    try {
      process.stdout.write(JSON.stringify(await reviewerDecides(input, new Date(now))) + "\n");
    } catch (e) {
      process.stdout.write(JSON.stringify({ ok: false, error: `threw: ${String((e as Error).message).slice(0, 200)}` }) + "\n");
    }
    continue;
  }
  armed = JSON.parse(cmd);
  process.stdout.write("armed\n");
}
rl.close();
await closeDb();
process.exit(0);
