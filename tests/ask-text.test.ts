/**
 * A reviewer's question is stored and sent to the agent, so it is text like any argument: a NUL character or an
 * unpaired surrogate is refused with words that say why, and the task stays as it was.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { askRequester } from "../lib/tasks/ask";
import { requestIdOf, resetDb, userId } from "./support/db";
import { LEADS, MIN, at, gatedRefund, taskRow } from "./support/proof";

beforeEach(resetDb);

describe("a reviewer's question is text that can be stored and sent", () => {
  it.each([
    ["a NUL character", "Which ticket\u0000 is this for?", /NUL character/],
    ["an unpaired surrogate", "Which ticket \uD800 is this for?", /unpaired surrogate/],
  ])("a question with %s is refused as such; nothing is asked and the task keeps working", async (_label, question, words) => {
    const taskId = await gatedRefund("O-2289");
    const requestId = await requestIdOf(taskId);
    const r = await askRequester({ requestId, reviewerId: await userId(LEADS[0]), question }, at(MIN));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(words);
    expect(await taskRow(taskId)).toMatchObject({ status: "working", inputRequests: null });
    expect(await db().clarification.count({ where: { taskId } })).toBe(0);
  });
});
