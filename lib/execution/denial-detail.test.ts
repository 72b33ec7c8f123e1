/**
 * The words a reviewer reads under "not run": the detail the re-check stored on this task's latest denial, and
 * nothing else (not another task's, not another event's, not a detail that is not text).
 */
import { beforeEach, describe, expect, it } from "vitest";
import { appendAudit } from "../audit/append";
import { db } from "../db/client";
import { denialDetailOf } from "./denial-detail";
import { resetDb } from "../../tests/support/db";
import { at, gatedDeploy, MIN } from "../../tests/support/proof";

async function event(taskId: string, type: string, data: Record<string, unknown>, minutes: number): Promise<void> {
  await db().$transaction((tx) => appendAudit(tx, { type, actor: "system", taskId, data, at: at(minutes * MIN) }));
}

beforeEach(async () => {
  await resetDb();
});

describe("denialDetailOf", () => {
  it("reads this task's latest denial detail, not another task's nor another event's", async () => {
    const mine = await gatedDeploy("1.0.1");
    const other = await gatedDeploy("1.0.2");
    expect(await denialDetailOf(mine)).toBeNull();
    await event(mine, "task.denied", { cause: "policy", detail: "The first re-check's words." }, 1);
    await event(mine, "task.denied", { cause: "policy", detail: "The service is frozen for the release." }, 2);
    await event(other, "task.denied", { cause: "policy", detail: "Another task's words." }, 3);
    await event(mine, "execution.completed", { detail: "Not a denial." }, 4);
    expect(await denialDetailOf(mine)).toBe("The service is frozen for the release.");
    expect(await denialDetailOf(other)).toBe("Another task's words.");
  });

  it("a denial without a detail, with an empty one or one that is not text has none to show", async () => {
    const a = await gatedDeploy("2.0.1");
    await event(a, "task.denied", { cause: "expired" }, 1);
    expect(await denialDetailOf(a)).toBeNull();
    const b = await gatedDeploy("2.0.2");
    await event(b, "task.denied", { cause: "policy", detail: "" }, 1);
    expect(await denialDetailOf(b)).toBeNull();
    const c = await gatedDeploy("2.0.3");
    await event(c, "task.denied", { cause: "policy", detail: { text: "an object" } }, 1);
    expect(await denialDetailOf(c)).toBeNull();
  });
});
