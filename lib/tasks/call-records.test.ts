/**
 * A call settles its own record in policy history and no other: when its tool fails as it runs, and when its
 * approval request is refused as it is created. Another call's pending record (a refund waiting for a lead) is
 * still counted afterwards. Also: an unexpected failure while the request is created is not turned into a refusal,
 * and once the request's intent is recorded the record follows the task, whatever the caller saw.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { principal, resetDb } from "../../tests/support/db";
import { MIN, T0, at, freshOrder, gatedRefund, taskRow } from "../../tests/support/proof";
import { bindBackendApart, loseAnswerAfterSubmit } from "../../tests/support/submissions";
import { db } from "../db/client";
import { sweep } from "../execution/sweep";
import { deployService } from "../tools/deploy-service";
import { issueRefund } from "../tools/issue-refund";
import { ToolBusyError, ToolError, ToolOutcomeUnknownError } from "../tools/types";
import { callTool } from "./call";

beforeEach(resetDb);
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const statusOf = async (resourceId: string) => (await db().callRecord.findMany({ where: { resourceId }, select: { status: true } })).map((r) => r.status);

/** Another call of the same agent, waiting for a lead's approval: its record is pending and counted. */
async function bystander(): Promise<string> {
  const order = await freshOrder("O-7101", 30_000);
  await gatedRefund(order);
  expect(await statusOf(order)).toEqual(["pending"]);
  return order;
}

const refund = async (orderId: string, amount?: number) =>
  callTool(await principal(), "issue_refund", { order_id: orderId, ...(amount === undefined ? {} : { amount }) }, { tasks: true }, T0);
const deploy = async (version: string) =>
  callTool(await principal("ops-bot"), "deploy_service", { service: "checkout-api", environment: "production", version }, { tasks: true }, T0);
const textOf = (out: Awaited<ReturnType<typeof refund>>) => (out.kind === "result" ? out.outcome.text : `(${out.kind})`);

describe("an allowed call whose tool fails settles its own record only", () => {
  it.each([
    ["may have run", new ToolOutcomeUnknownError("The payment provider timed out."), "executed"],
    ["was busy", new ToolBusyError("The order is locked."), "void"],
    ["refused", new ToolError("Already refunded."), "void"],
  ])("%s: its record is settled, another call's pending record stays pending", async (_, error, settled) => {
    const other = await bystander();
    vi.spyOn(issueRefund, "run").mockRejectedValueOnce(error);
    expect(textOf(await refund("O-1145", 20))).toContain(error.message);
    expect(await statusOf("O-1145")).toEqual([settled]);
    expect(await statusOf(other)).toEqual(["pending"]);
  });
});

describe("a requestable call whose request is refused as it is created", () => {
  it("by the per-agent limit: its own record is void, the agent's waiting request keeps its record", async () => {
    vi.stubEnv("COUNTERSIGN_MAX_PENDING_PER_AGENT", "1");
    const other = await bystander();
    const order = await freshOrder("O-7102", 30_000);
    expect(textOf(await refund(order))).toMatch(/^Approval request limit reached\. .*the limit is 1/);
    expect(await statusOf(order)).toEqual(["void"]);
    expect(await statusOf(other)).toEqual(["pending"]);
    expect(await db().task.count()).toBe(1);
  });

  it("of a tool no window counts (no record of its own): no other call's record is touched", async () => {
    vi.stubEnv("COUNTERSIGN_MAX_PENDING_PER_AGENT", "1");
    const other = await bystander();
    expect((await deploy("9.9.1")).kind).toBe("task");
    expect(textOf(await deploy("9.9.2"))).toMatch(/^Approval request limit reached\./);
    expect(await statusOf(other)).toEqual(["pending"]);
  });

  it("by an unexpected failure (the backend cannot be reached): the failure goes through, not a refusal in its words", async () => {
    vi.spyOn(bindBackendApart(), "submit").mockRejectedValueOnce(new Error("backend unreachable"));
    await expect(deploy("9.9.3")).rejects.toThrow("backend unreachable");
  });

  it("after its intent was recorded (the backend received it, then the connection was lost): the record stays with the task", async () => {
    const order = await freshOrder("O-7103", 30_000);
    loseAnswerAfterSubmit();
    await expect(refund(order)).rejects.toThrow("connection lost");
    // The request exists in the backend: the call still counts against the order's refunds while it waits.
    expect(await statusOf(order)).toEqual(["pending"]);
    expect(await sweep(at(MIN), { intentMinAgeMs: 0 })).toMatchObject({ recovered: 1 });
    const [row] = await db().callRecord.findMany({ where: { resourceId: order } });
    expect(row).toMatchObject({ status: "pending", taskId: expect.any(String) });
    expect(await taskRow(row.taskId!)).toMatchObject({ status: "working", phase: "awaiting_approval" });
  });

  it("before creation took it (the request's summary could not be written): the record is void and the failure goes through", async () => {
    const order = await freshOrder("O-7104", 30_000);
    const other = await bystander();
    vi.spyOn(issueRefund, "summary").mockImplementationOnce(() => {
      throw new Error("a summary template bug");
    });
    await expect(refund(order)).rejects.toThrow("a summary template bug");
    expect(await statusOf(order)).toEqual(["void"]);
    expect(await statusOf(other)).toEqual(["pending"]);
    // A tool no window counts has no record to void: no other call's record is touched either.
    vi.spyOn(deployService, "summary").mockImplementationOnce(() => {
      throw new Error("another summary bug");
    });
    await expect(deploy("9.9.4")).rejects.toThrow("another summary bug");
    expect(await statusOf(other)).toEqual(["pending"]);
    expect(await db().task.count()).toBe(1);
  });
});
