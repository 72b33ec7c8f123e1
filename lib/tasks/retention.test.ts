/**
 * Retention end (`purgeExpiredTasks`) task by task: which tasks a batch takes (only terminal ones past their
 * retention, the oldest retention first, up to the batch's limit), and what the purge records. The whole
 * purge (every table searched for a marker) is proved in tests/sealed-records.test.ts and tests/retention.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { principal, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { DAY, LEADS, T0, at, emailOutboxOn, freshOrder, gatedDeploy, gatedRefund } from "../../tests/support/proof";
import { db } from "../db/client";
import { createWebhook } from "../webhooks/admin";
import { askRequester } from "./ask";
import { purgeExpiredTasks } from "./retention";

beforeEach(resetDb);
afterEach(() => vi.unstubAllEnvs());

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
    await taskAs("1.0.1", "completed", at(-3 * DAY)); // the oldest expired: the first to go
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

/** Every row of a task's own records (as stored, sealed values included), to compare before and after. */
async function recordsOf(taskId: string) {
  const [intents, requests, clarifications, deliveries, notifications, calls] = await Promise.all([
    db().submissionIntent.findMany({ where: { taskId }, orderBy: { id: "asc" } }),
    db().approvalRequest.findMany({ where: { taskId }, orderBy: { id: "asc" } }),
    db().clarification.findMany({ where: { taskId }, orderBy: { id: "asc" } }),
    db().webhookDelivery.findMany({ where: { taskId }, orderBy: { id: "asc" } }),
    db().notification.findMany({ where: { taskId }, orderBy: { id: "asc" } }),
    db().callRecord.findMany({ where: { taskId }, orderBy: { id: "asc" } }),
  ]);
  return { intents, requests, clarifications, deliveries, notifications, calls };
}

describe("a purge touches the purged task's records only", () => {
  it("another task's intent, request, question, webhook deliveries, notifications and call record stay exactly as they were", async () => {
    // Email on (nothing is sent here: the outbox rows are what a purge must leave alone), and a webhook.
    emailOutboxOn();
    await createWebhook({ url: "https://hooks.example/in", events: ["request.created"] }, await userId("admin@countersign.test"), T0);
    const agent = await principal();
    const [gone, kept] = [await gatedRefund(await freshOrder("O-9101", 30_000), T0, agent), await gatedRefund(await freshOrder("O-9102", 30_000), T0, agent)];
    for (const id of [gone, kept]) {
      expect(await askRequester({ requestId: await requestIdOf(id), reviewerId: await userId(LEADS[0]), question: "Which parcel?" }, T0)).toMatchObject({ ok: true });
    }
    const before = await recordsOf(kept);
    // Each kind of record exists for the task that stays, so a purge reaching beyond its own task would show.
    for (const [kind, rows] of Object.entries(before)) expect(rows.length, kind).toBeGreaterThan(0);
    expect(before.calls.every((c) => c.snapshot !== null)).toBe(true);
    await db().task.update({ where: { id: gone }, data: { status: "cancelled", phase: "done", retainUntil: at(-DAY) } });

    expect(await purgeExpiredTasks(T0)).toBe(1);
    expect(await recordsOf(kept)).toEqual(before);
    const purged = await recordsOf(gone);
    expect([purged.intents, purged.deliveries, purged.notifications].map((r) => r.length)).toEqual([0, 0, 0]);
    expect(purged.requests.map((r) => (r.body as { redacted?: string }).redacted)).toEqual(["deleted at the end of the task's retention"]);
    expect(purged.clarifications.map((c) => [c.question, c.answer])).toEqual([["deleted at the end of the task's retention", null]]);
    expect(purged.calls.map((c) => c.snapshot)).toEqual([null]);
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
