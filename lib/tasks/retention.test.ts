/**
 * Retention end (`purgeExpiredTasks`) task by task: which tasks a batch takes (only terminal ones past their
 * retention, the oldest retention first, up to the batch's limit), and what the purge records. The whole
 * purge (every table searched for a marker) is proved in tests/sealed-records.test.ts and tests/retention.test.ts.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { resetDb } from "../../tests/support/db";
import { DAY, T0, at, gatedDeploy } from "../../tests/support/proof";
import { db } from "../db/client";
import { purgeExpiredTasks } from "./retention";

beforeEach(resetDb);

/** A production deploy's task, then set as `status` with its retention ending at `retainUntil`. */
async function taskAs(version: string, status: "completed" | "failed" | "cancelled" | "working", retainUntil: Date): Promise<string> {
  const id = await gatedDeploy(version);
  await db().task.update({ where: { id }, data: { status, retainUntil, ...(status === "working" ? {} : { phase: "done" }) } });
  return id;
}

const remaining = async () => (await db().task.findMany({ select: { id: true } })).map((t) => t.id).sort();

describe("which tasks a purge takes", () => {
  it("only terminal tasks past their retention, the oldest retention first, as many as the batch's limit", async () => {
    // A task still working whose retention is the oldest of all: never purged, and never taking a purgeable one's place.
    const working = await taskAs("1.0.0", "working", at(-10 * DAY));
    const oldest = await taskAs("1.0.1", "completed", at(-3 * DAY));
    const older = await taskAs("1.0.2", "failed", at(-2 * DAY));
    const old = await taskAs("1.0.3", "cancelled", at(-1 * DAY));
    const kept = await taskAs("1.0.4", "completed", at(DAY));

    expect(await purgeExpiredTasks(T0, 1)).toBe(1);
    expect(await remaining()).toEqual([working, older, old, kept].sort());
    // Without a limit of one, every expired task goes in one call.
    expect(await purgeExpiredTasks(T0)).toBe(2);
    expect(await remaining()).toEqual([working, kept].sort());
    expect(await purgeExpiredTasks(T0)).toBe(0);
  });

  it("a retention that ends exactly now is not yet over", async () => {
    const id = await taskAs("2.0.0", "completed", T0);
    expect(await purgeExpiredTasks(T0)).toBe(0);
    expect(await purgeExpiredTasks(at(1))).toBe(1);
    expect(await db().task.findUnique({ where: { id } })).toBeNull();
  });
});

describe("two purges at once (two replicas' sweepers)", () => {
  it("each task is purged and audited once, and counted by the purge that deleted it", async () => {
    const ids = [await taskAs("4.0.0", "completed", at(-2 * DAY)), await taskAs("4.0.1", "cancelled", at(-DAY))];
    const counts = await Promise.all([purgeExpiredTasks(T0), purgeExpiredTasks(T0), purgeExpiredTasks(T0)]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(2);
    expect(await remaining()).toEqual([]);
    for (const id of ids) expect(await db().auditEvent.count({ where: { taskId: id, type: "task.purged" } })).toBe(1);
  });
});

describe("what a purge records", () => {
  it("an audit event for each task, by the system, with the task's argument digest and nothing of its arguments", async () => {
    const id = await taskAs("3.0.0", "completed", at(-DAY));
    const { argumentsDigest } = await db().task.findUniqueOrThrow({ where: { id }, select: { argumentsDigest: true } });
    expect(await purgeExpiredTasks(T0)).toBe(1);
    const events = await db().auditEvent.findMany({ where: { taskId: id, type: "task.purged" } });
    expect(events.map((e) => ({ actor: e.actor, data: e.data, at: e.at }))).toEqual([{ actor: "system", data: { argumentsDigest }, at: T0 }]);
    expect(argumentsDigest).toMatch(/^[0-9a-f]{64}$|^sha256:/);
  });
});
