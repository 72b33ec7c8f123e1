/**
 * SEP "Lifecycle and task status": three clocks apply and are distinct. When the request deadline or the
 * approval's validity passes without a usable approval, the task completes as a terminal denial
 * (denied-not-executed, noting expiry) and is fenced against later execution; MCP retention then lets it go.
 * A task waiting for the requester's answer (input_required) is no exception: its clocks run on.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { reviewRequest } from "../lib/approvals/review";
import { sweep } from "../lib/execution/sweep";
import { inboxPage } from "../lib/inbox/inbox";
import { parseInboxParams } from "../lib/inbox/params";
import { askRequester } from "../lib/tasks/ask";
import { decide } from "../lib/tasks/decide";
import { getTask } from "../lib/tasks/get";
import { principal, requestIdOf, resetDb, userId } from "./support/db";
import { HOUR, LEADS, MIN, approveOnly, at, expectDenied, gatedRefund, taskRow } from "./support/proof";

beforeEach(resetDb);

/** A refund task whose reviewer asked the requester a question: input_required, the tool has not run. */
async function waitingForAnswer(): Promise<{ taskId: string; requestId: string }> {
  const taskId = await gatedRefund("O-2289");
  const requestId = await requestIdOf(taskId);
  const asked = await askRequester({ requestId, reviewerId: await userId(LEADS[0]), question: "Which ticket is this refund for?" }, at(MIN));
  expect(asked.ok).toBe(true);
  expect(await taskRow(taskId)).toMatchObject({ status: "input_required" });
  return { taskId, requestId };
}

describe("a task waiting for the requester's answer (input_required) keeps its clocks", () => {
  it("past the request deadline it completes denied-not-executed (expired), is withdrawn from reviewers, and is purged when its retention ends", async () => {
    const { taskId, requestId } = await waitingForAnswer();
    const { requestDeadline } = await taskRow(taskId);

    expect((await sweep(new Date(requestDeadline.getTime() - 1))).advanced).toBe(0);
    expect(await taskRow(taskId)).toMatchObject({ status: "input_required" });

    expect((await sweep(requestDeadline)).advanced).toBe(1);
    await expectDenied(taskId, /expired before anyone decided/);

    // Withdrawn from reviewers: the request is closed (not pending), so no inbox lists it and no review is taken.
    const req = await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } });
    expect(["expired", "cancelled"]).toContain(req.status);
    const lena = await db().user.findUniqueOrThrow({ where: { email: LEADS[0] } });
    const inbox = await inboxPage({ id: lena.id, role: lena.role, groups: lena.groups }, parseInboxParams({}), at(2 * MIN));
    expect(inbox.items.map((i) => i.id)).not.toContain(requestId);
    expect(await decide({ requestId, reviewerId: lena.id, decision: "approve" }, at(2 * MIN))).toMatchObject({ ok: false });

    // Retention: kept for resultRetention after terminalization, then purged.
    const { retainUntil } = await taskRow(taskId);
    expect((await sweep(retainUntil!)).purged).toBe(0);
    expect((await sweep(new Date(retainUntil!.getTime() + 1))).purged).toBe(1);
    expect(await db().task.findUnique({ where: { id: taskId } })).toBeNull();
  });

  it("a denial recorded while it waits ends it at the next sweep, without a poll", async () => {
    const { taskId, requestId } = await waitingForAnswer();
    const denied = await reviewRequest({ requestId, reviewerId: await userId(LEADS[1]), decision: "deny", comment: "No ticket" }, at(2 * MIN));
    expect(denied).toMatchObject({ ok: true, requestStatus: "denied" });
    expect((await sweep(at(3 * MIN))).advanced).toBe(1);
    await expectDenied(taskId, /request was denied/);
  });

  it("an approval granted while it waits, never answered, ends denied-not-executed when the approval expires, and not before", async () => {
    const { taskId, requestId } = await waitingForAnswer();
    await approveOnly(taskId, LEADS[1], at(2 * MIN));
    const expiresAt = (await db().approvalRequest.findUniqueOrThrow({ where: { id: requestId } })).approvalExpiresAt!;
    expect(expiresAt).toEqual(at(2 * MIN + HOUR));

    await sweep(at(3 * MIN));
    expect(await taskRow(taskId)).toMatchObject({ status: "input_required", approvalExpiresAt: expiresAt });
    expect((await sweep(new Date(expiresAt.getTime() - 1))).advanced).toBe(0);
    expect((await getTask(await principal(), taskId, new Date(expiresAt.getTime() - 1)))!.status).toBe("input_required");

    expect((await sweep(expiresAt)).advanced).toBe(1);
    await expectDenied(taskId, /approval expired before the call could be executed/);
  });
});
