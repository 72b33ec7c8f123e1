/**
 * The per-agent limits hold under concurrent calls (SEP "Approval-request amplification"): an agent that fires many
 * gated calls at once gets exactly as many approval requests as its limit allows, never more, because each
 * submission reads the agent's load under the agent's lock (lockCallerLoad). Races at PostgreSQL's isolation show
 * only there; on the embedded database, where transactions run one at a time, the same test must hold too.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { principal, resetDb } from "../../tests/support/db";
import { LONG, T0 } from "../../tests/support/proof";
import { db } from "../db/client";
import { callTool } from "./call";

beforeEach(resetDb);
afterEach(() => vi.unstubAllEnvs());

const TRIALS = LONG ? 200 : 6;
const CALLS = 12;

/** CALLS production deploys of the ops bot at once, each of its own version: what each call answered. */
async function burst(trial: number): Promise<string[]> {
  const agent = await principal("ops-bot");
  const outs = await Promise.all(
    Array.from({ length: CALLS }, (_, i) => callTool(agent, "deploy_service", { service: "checkout-api", environment: "production", version: `${trial}.${i}.0` }, { tasks: true }, T0)),
  );
  return outs.map((o) => (o.kind === "task" ? "task" : o.kind === "result" ? o.outcome.text.split(".")[0] : o.kind));
}

/** The agent's open requests, ended so the next trial starts from none (the per-minute count stays). */
async function endOpenTasks(): Promise<number> {
  const open = await db().task.count({ where: { status: { in: ["working", "input_required"] } } });
  await db().task.updateMany({ where: { status: { in: ["working", "input_required"] } }, data: { status: "cancelled" } });
  await db().submissionIntent.updateMany({ where: { state: "open" }, data: { state: "cancelled" } });
  return open;
}

/** Each burst opens exactly `allowed` requests and refuses the rest as over the limit; `between` runs after each. */
async function burstsOpenExactly(allowed: number, between: () => Promise<void>): Promise<void> {
  for (let trial = 0; trial < TRIALS; trial++) {
    const answers = await burst(trial);
    expect(answers.filter((a) => a === "task"), `trial ${trial}: ${answers.join(", ")}`).toHaveLength(allowed);
    expect(answers.filter((a) => a !== "task")).toEqual(Array(CALLS - allowed).fill("Approval request limit reached"));
    await between();
  }
}

describe("concurrent gated calls of one agent", () => {
  it("never open more requests than the pending limit (bursts of 12 calls at once, a limit of 3)", async () => {
    vi.stubEnv("COUNTERSIGN_MAX_PENDING_PER_AGENT", "3");
    vi.stubEnv("COUNTERSIGN_SUBMISSIONS_PER_MINUTE", "100000");
    await burstsOpenExactly(3, async () => expect(await endOpenTasks()).toBe(3));
  });

  it("never submit more in a minute than the rate limit (bursts of 12 calls at once, 4 a minute)", async () => {
    vi.stubEnv("COUNTERSIGN_MAX_PENDING_PER_AGENT", "1000");
    vi.stubEnv("COUNTERSIGN_SUBMISSIONS_PER_MINUTE", "4");
    await burstsOpenExactly(4, async () => {
      // The minute's submissions are forgotten (their intents moved back), so the next burst starts from none.
      await endOpenTasks();
      await db().submissionIntent.updateMany({ data: { createdAt: new Date(T0.getTime() - 3_600_000) } });
    });
  });
});
