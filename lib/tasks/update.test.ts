/**
 * tasks/update (SEP-2663 "Task Update Requests"): answers to outstanding questions only, by the task's creator
 * only; accept, decline or cancel, nothing else; an accepted answer must fit its question or nothing is recorded;
 * a subset may be answered and the task returns to working once every question has an answer; concurrent partial
 * answers are each applied once.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { principal, requestIdOf, resetDb, userId } from "../../tests/support/db";
import { LEADS, MIN, at, auditCount, gatedRefund, taskRow } from "../../tests/support/proof";
import { db } from "../db/client";
import { askQuestions } from "./ask-questions";
import { cancelTask } from "./cancel";
import { updateTask } from "./update";
import type { InputQuestion } from "./types";

const text = (maxLength = 20): InputQuestion => ({ message: "Which ticket?", requestedSchema: { type: "object", properties: { answer: { type: "string", maxLength } }, required: ["answer"] } });

beforeEach(resetDb);
afterEach(() => vi.restoreAllMocks());

/** A refund task with the given questions outstanding. */
async function asking(keys: string[]): Promise<string> {
  const taskId = await gatedRefund("O-2289");
  const r = await askQuestions({ requestId: await requestIdOf(taskId), reviewerId: await userId(LEADS[0]), questions: Object.fromEntries(keys.map((k) => [k, text()])) }, at(MIN));
  if (!r.ok) throw new Error(r.error);
  return taskId;
}

const answersOf = async (taskId: string) =>
  Object.fromEntries((await db().clarification.findMany({ where: { taskId }, orderBy: { key: "asc" } })).map((c) => [c.key, c.answer]));

describe("updateTask", () => {
  it("refuses an action other than accept, decline or cancel, and records nothing", async () => {
    const taskId = await asking(["a"]);
    const agent = await principal();
    for (const answer of [{ action: "maybe" }, {}, null, { action: 1 }]) {
      expect(await updateTask(agent, taskId, { a: answer }, at(2 * MIN))).toEqual({
        ok: false,
        reason: "invalid-input",
        message: "inputResponses.a: action must be accept, decline or cancel.",
      });
    }
    expect(await taskRow(taskId)).toMatchObject({ status: "input_required" });
    expect(await answersOf(taskId)).toEqual({ a: null });
    expect(await auditCount(taskId, "task.input-received")).toBe(0);
  });

  it("refuses an accepted answer that does not fit its question, and text a model must not receive", async () => {
    const taskId = await asking(["a"]);
    const agent = await principal();
    const tooLong = await updateTask(agent, taskId, { a: { action: "accept", content: { answer: "x".repeat(21) } } }, at(2 * MIN));
    expect(tooLong).toEqual({ ok: false, reason: "invalid-input", message: "inputResponses.a: answer allows at most 20 characters." });
    const bad = await updateTask(agent, taskId, { a: { action: "accept", content: { answer: "nul\u0000" } } }, at(2 * MIN));
    expect(bad).toEqual({
      ok: false,
      reason: "invalid-input",
      message: "a.content.answer: the text contains a NUL character (U+0000), which text arguments must not contain. Nothing was recorded.",
    });
    // A problem in inputResponses' own keys is named as inputResponses.
    const badKey = await updateTask(agent, taskId, { "a\u0000": { action: "decline" } }, at(2 * MIN));
    expect(badKey).toEqual({
      ok: false,
      reason: "invalid-input",
      message: "inputResponses: a key contains a NUL character (U+0000), which text arguments must not contain. Nothing was recorded.",
    });
    expect(await answersOf(taskId)).toEqual({ a: null });
  });

  it("records a decline and a cancel as answers, and the task goes back to working once all are answered", async () => {
    const taskId = await asking(["a", "b", "c"]);
    const agent = await principal();
    const first = await updateTask(agent, taskId, { a: { action: "decline" } }, at(2 * MIN));
    expect(first).toMatchObject({ ok: true, applied: ["a"], task: { status: "input_required" } });
    expect(Object.keys((first as { task: { inputRequests: object } }).task.inputRequests).sort()).toEqual(["b", "c"]);
    const rest = await updateTask(agent, taskId, { b: { action: "cancel" }, c: { action: "accept", content: { answer: "  SUP-9 ", extra: 1 } } }, at(3 * MIN));
    expect(rest).toMatchObject({ ok: true, applied: ["b", "c"], task: { status: "working" } });
    expect(await taskRow(taskId)).toMatchObject({ status: "working", inputRequests: null, lastUpdatedAt: at(3 * MIN) });
    expect(await answersOf(taskId)).toEqual({ a: { action: "decline" }, b: { action: "cancel" }, c: { action: "accept", content: { answer: "SUP-9" }, answer: "SUP-9" } });
    expect(await auditCount(taskId, "task.input-received")).toBe(2);
    // Each update's event says which agent answered, which keys it answered and which remain.
    const events = await db().auditEvent.findMany({ where: { taskId, type: "task.input-received" }, orderBy: { seq: "asc" } });
    expect(events.map((e) => ({ actor: e.actor, data: e.data, requestId: e.requestId }))).toEqual([
      { actor: `agent:${agent.agentId}`, data: { keys: ["a"], remaining: ["b", "c"] }, requestId: await requestIdOf(taskId) },
      { actor: `agent:${agent.agentId}`, data: { keys: ["b", "c"], remaining: [] }, requestId: await requestIdOf(taskId) },
    ]);
  });

  it("ignores answers to keys that are not outstanding, and a task that waits for no input", async () => {
    const taskId = await asking(["a"]);
    const agent = await principal();
    const none = await updateTask(agent, taskId, { zzz: { action: "accept", content: { answer: "x" } } }, at(2 * MIN));
    expect(none).toMatchObject({ ok: true, applied: [], task: { status: "input_required" } });
    await updateTask(agent, taskId, { a: { action: "accept", content: { answer: "x" } } }, at(3 * MIN));
    const again = await updateTask(agent, taskId, { a: { action: "accept", content: { answer: "y" } } }, at(4 * MIN));
    expect(again).toMatchObject({ ok: true, applied: [], task: { status: "working" } });
    expect(await answersOf(taskId)).toEqual({ a: { action: "accept", content: { answer: "x" }, answer: "x" } });
  });

  it("ignores answers to the questions of a task that has stopped waiting for them (cancelled while asking)", async () => {
    const taskId = await asking(["a"]);
    const agent = await principal();
    expect(await cancelTask(agent, taskId, at(2 * MIN))).toMatchObject({ ok: true });
    const before = await taskRow(taskId);
    // The questions stay on the row; the task no longer waits for them, so nothing is outstanding.
    expect(before).toMatchObject({ status: "cancelled", inputRequests: { a: expect.anything() } });
    const r = await updateTask(agent, taskId, { a: { action: "accept", content: { answer: "x" } } }, at(3 * MIN));
    expect(r).toMatchObject({ ok: true, applied: [], task: { status: "cancelled" } });
    expect(await answersOf(taskId)).toEqual({ a: null });
    expect(await auditCount(taskId, "task.input-received")).toBe(0);
  });

  it("never answers a task that was cancelled between reading its questions and recording the answers", async () => {
    const taskId = await asking(["a"]);
    const agent = await principal();
    // The cancel lands just after updateTask read the task as waiting for "a".
    const findFirst = db().task.findFirst.bind(db().task);
    let cancelled = false;
    vi.spyOn(db().task, "findFirst").mockImplementation((async (args: never) => {
      const row = await findFirst(args);
      if (!cancelled) {
        cancelled = true;
        expect(await cancelTask(agent, taskId, at(2 * MIN))).toMatchObject({ ok: true });
      }
      return row;
    }) as never);
    const r = await updateTask(agent, taskId, { a: { action: "accept", content: { answer: "x" } } }, at(3 * MIN));
    expect(cancelled).toBe(true);
    expect(r).toMatchObject({ ok: true, applied: [], task: { status: "cancelled" } });
    expect(await taskRow(taskId)).toMatchObject({ status: "cancelled" });
    expect(await answersOf(taskId)).toEqual({ a: null });
    expect(await auditCount(taskId, "task.input-received")).toBe(0);
  });

  it("takes no key an object inherits (toString, hasOwnProperty) for an outstanding question", async () => {
    const taskId = await asking(["a"]);
    const agent = await principal();
    const inherited = { toString: { action: "accept", content: { answer: "x" } }, hasOwnProperty: { action: "decline" }, valueOf: { action: "cancel" } };
    const r = await updateTask(agent, taskId, inherited, at(2 * MIN));
    expect(r).toMatchObject({ ok: true, applied: [], task: { status: "input_required" } });
    expect(await answersOf(taskId)).toEqual({ a: null });
    expect(await auditCount(taskId, "task.input-received")).toBe(0);
  });

  it("answers only to the task's creator: any other agent is told the task is unknown", async () => {
    const taskId = await asking(["a"]);
    const other = await principal("ops-bot");
    expect(await updateTask(other, taskId, { a: { action: "accept", content: { answer: "x" } } }, at(2 * MIN))).toEqual({ ok: false, reason: "not-found", message: "Unknown taskId" });
    expect(await answersOf(taskId)).toEqual({ a: null });
  });

  it("gives up after five lost attempts and says to send the answers again, with nothing recorded", async () => {
    const taskId = await asking(["a"]);
    const agent = await principal();
    // Every conditional update loses: the outstanding set changes under each attempt.
    const tx = vi.spyOn(db(), "$transaction").mockResolvedValue(false as never);
    const r = await updateTask(agent, taskId, { a: { action: "accept", content: { answer: "x" } } }, at(2 * MIN));
    expect(r).toEqual({ ok: false, reason: "invalid-input", message: "The task changed while the answers were being recorded; send them again." });
    expect(tx).toHaveBeenCalledTimes(5);
    tx.mockRestore();
    expect(await answersOf(taskId)).toEqual({ a: null });
  });

  it("applies concurrent answers to different questions each once", async () => {
    const keys = ["a", "b", "c", "d"];
    const taskId = await asking(keys);
    const agent = await principal();
    const results = await Promise.all(keys.map((k) => updateTask(agent, taskId, { [k]: { action: "accept", content: { answer: k } } }, at(2 * MIN))));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(results.flatMap((r) => (r.ok ? r.applied : [])).sort()).toEqual(keys);
    expect(await taskRow(taskId)).toMatchObject({ status: "working", inputRequests: null });
    expect(await auditCount(taskId, "task.input-received")).toBe(4);
  });
});
