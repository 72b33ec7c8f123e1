/**
 * An allowed call whose tool fails as it runs (no task involved): what the agent is told, the audit trail, and the
 * call's record in policy history. A tool that may have run (outcome unknown) stays counted by the windows and
 * must not be retried; a tool that was busy or refused did not complete, so its call stops counting.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { principal, resetDb } from "../../tests/support/db";
import { until } from "../../tests/support/gateway";
import { T0 } from "../../tests/support/proof";
import { db } from "../db/client";
import { deployService } from "../tools/deploy-service";
import { issueRefund } from "../tools/issue-refund";
import { ToolBusyError, ToolError, ToolOutcomeUnknownError } from "../tools/types";
import { UnknownToolError, callTool, type CallProgress } from "./call";

beforeEach(resetDb);
afterEach(() => vi.restoreAllMocks());

const refund = async (amount = 20) => callTool(await principal(), "issue_refund", { order_id: "O-1145", amount }, { tasks: true }, T0);
const recordsOf = () => db().callRecord.findMany({ where: { tool: "issue_refund", resourceId: "O-1145" }, select: { status: true, settledAt: true } });
const events = (type: string) => db().auditEvent.findMany({ where: { type }, select: { actor: true, data: true } });
/** The trail of the calls of `tool`, oldest first: each event's type. */
const trail = async (tool: string) =>
  (await db().auditEvent.findMany({ where: { type: { startsWith: "call." } }, orderBy: { seq: "asc" }, select: { type: true, data: true } }))
    .filter((e) => (e.data as { tool?: string }).tool === tool)
    .map((e) => e.type);
const textOf = (out: Awaited<ReturnType<typeof refund>>) => {
  if (out.kind !== "result") throw new Error(`expected a result, got ${out.kind}`);
  expect(out.outcome.isError).toBe(true);
  return out.outcome.text;
};

describe("an allowed call whose tool fails", () => {
  it("may have run: the agent is told not to retry, the call stays counted, and the outcome is audited as unknown", async () => {
    vi.spyOn(issueRefund, "run").mockRejectedValueOnce(new ToolOutcomeUnknownError("The payment provider timed out."));
    expect(textOf(await refund())).toBe("The payment provider timed out. The tool may have run; do not retry automatically.");
    expect(await recordsOf()).toEqual([{ status: "executed", settledAt: T0 }]);
    const [e] = await events("call.outcome-unknown");
    expect(e).toMatchObject({ actor: expect.stringMatching(/^agent:/), data: { tool: "issue_refund", rule: expect.anything() } });
    // The call was written as it went to the tool; what the tool left unknown follows it.
    expect(await trail("issue_refund")).toEqual(["call.executed", "call.outcome-unknown"]);
    // Counted: with the 20.00 that may have been refunded, another 140.00 takes the order past 150.00 and needs a lead.
    expect((await refund(140)).kind).toBe("task");
  });

  it("was busy: the agent is told the tool did not run, and the call stops counting", async () => {
    vi.spyOn(issueRefund, "run").mockRejectedValueOnce(new ToolBusyError("The order is locked by a running export.", 60_000));
    expect(textOf(await refund())).toBe("The order is locked by a running export. The tool did not run; try again later.");
    expect(await recordsOf()).toEqual([{ status: "void", settledAt: T0 }]);
    expect(await trail("issue_refund")).toEqual(["call.executed", "call.not-run"]);
    expect((await refund(140)).kind).toBe("result");
  });

  it("refused: the agent is told the tool did not complete, and the call stops counting", async () => {
    vi.spyOn(issueRefund, "run").mockRejectedValueOnce(new ToolError("The order was already refunded in full."));
    expect(textOf(await refund())).toBe("The order was already refunded in full. The tool did not complete.");
    expect(await recordsOf()).toEqual([{ status: "void", settledAt: T0 }]);
    expect(await trail("issue_refund")).toEqual(["call.executed", "call.not-completed"]);
  });

  it("with no window counting the tool, fails the same way: its record, written as it went to the tool, stops counting unless it may have run", async () => {
    const ops = await principal("ops-bot");
    const deploy = () => callTool(ops, "deploy_service", { service: "checkout-api", environment: "staging", version: "1.2.3" }, { tasks: true }, T0);
    vi.spyOn(deployService, "run")
      .mockRejectedValueOnce(new ToolOutcomeUnknownError("The deploy agent stopped answering."))
      .mockRejectedValueOnce(new ToolBusyError("Another deploy is running."))
      .mockRejectedValueOnce(new ToolError("No such version."));
    expect(textOf(await deploy())).toBe("The deploy agent stopped answering. The tool may have run; do not retry automatically.");
    expect(textOf(await deploy())).toBe("Another deploy is running. The tool did not run; try again later.");
    expect(textOf(await deploy())).toBe("No such version. The tool did not complete.");
    const records = await db().callRecord.findMany({ where: { tool: "deploy_service" }, select: { status: true, settledAt: true }, orderBy: { status: "asc" } });
    expect(records).toEqual(["executed", "void", "void"].map((status) => ({ status, settledAt: T0 })));
    expect(await trail("deploy_service")).toEqual(["call.executed", "call.outcome-unknown", "call.executed", "call.not-run", "call.executed", "call.not-completed"]);
  });

  it("with an unexpected error, lets it through and the call stays counted: whether it ran is unknown, and the trail says so", async () => {
    vi.spyOn(issueRefund, "run").mockRejectedValueOnce(new Error("bug"));
    await expect(refund()).rejects.toThrow("bug");
    expect((await recordsOf()).map((r) => r.status)).toEqual(["executed"]);
    expect(await trail("issue_refund")).toEqual(["call.executed", "call.outcome-unknown"]);
  });
});

describe("an allowed call's record, written while its tool runs", () => {
  const deployArgs = { service: "checkout-api", environment: "staging", version: "1.2.3" };
  const deployRecords = () => db().callRecord.count({ where: { tool: "deploy_service", status: "executed" } });

  it("is in the database before the tool answers, with its event", async () => {
    const ops = await principal("ops-bot");
    // The tool answers only once it sees the call's record: written after the tool, the call would never end.
    vi.spyOn(deployService, "run").mockImplementationOnce(async () => {
      await until("the call's record, while the tool runs", async () => (await deployRecords()) === 1, 10_000);
      return { text: "Deployed." };
    });
    const out = await callTool(ops, "deploy_service", deployArgs, { tasks: true }, T0);
    expect(out).toMatchObject({ kind: "result", outcome: { text: "Deployed.", isError: false } });
    expect(await trail("deploy_service")).toEqual(["call.executed"]);
  });

  describe("when the record cannot be written", () => {
    // The database refuses the record of a deploy (a trigger stands in for a database that fails mid-call).
    beforeEach(async () => {
      await db().$executeRawUnsafe(`CREATE FUNCTION refuse_record() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'record refused'; END $$`);
      await db().$executeRawUnsafe(`CREATE TRIGGER refuse_record BEFORE INSERT ON "CallRecord" FOR EACH ROW WHEN (NEW.tool = 'deploy_service') EXECUTE FUNCTION refuse_record()`);
    });
    afterEach(async () => {
      await db().$executeRawUnsafe(`DROP TRIGGER IF EXISTS refuse_record ON "CallRecord"`);
      await db().$executeRawUnsafe(`DROP FUNCTION IF EXISTS refuse_record()`);
    });

    it("the tool's result is not given: the call fails once the tool ran, and nothing is in the trail", async () => {
      const ops = await principal("ops-bot");
      const run = vi.spyOn(deployService, "run").mockResolvedValueOnce({ text: "Deployed." });
      const progress: CallProgress = { stage: "deciding" };
      await expect(callTool(ops, "deploy_service", deployArgs, { tasks: true, progress }, T0)).rejects.toThrow("record refused");
      expect(run).toHaveBeenCalledTimes(1);
      // What the agent is told follows from this stage: the tool ran, its recording did not complete.
      expect(progress.stage).toBe("ran");
      expect(await trail("deploy_service")).toEqual([]);
    });

    it("a tool that did not run still says so, and one that may have run fails as unknown", async () => {
      const ops = await principal("ops-bot");
      const progress: CallProgress = { stage: "deciding" };
      vi.spyOn(deployService, "run")
        .mockRejectedValueOnce(new ToolBusyError("Another deploy is running."))
        .mockRejectedValueOnce(new ToolOutcomeUnknownError("The deploy agent stopped answering."));
      expect(textOf(await callTool(ops, "deploy_service", deployArgs, { tasks: true }, T0))).toBe("Another deploy is running. The tool did not run; try again later.");
      await expect(callTool(ops, "deploy_service", deployArgs, { tasks: true, progress }, T0)).rejects.toThrow("record refused");
      expect(progress.stage).toBe("running");
      expect(await trail("deploy_service")).toEqual([]);
    });
  });
});

describe("an allowed call's resource and result", () => {
  it("a resource that cannot be read is refused as the tool's words when the tool says why, and let through otherwise", async () => {
    vi.spyOn(issueRefund, "resource").mockRejectedValueOnce(new ToolError("No order O-1145 in this shop."));
    expect(textOf(await refund())).toBe("No order O-1145 in this shop. The tool did not run.");
    vi.spyOn(issueRefund, "resource").mockRejectedValueOnce(new Error("a bug"));
    await expect(refund()).rejects.toThrow("a bug");
    expect(await recordsOf()).toEqual([]);
  });

  it("a tool that ran and reported an error is audited as executed, then as its error, and stays counted", async () => {
    vi.spyOn(issueRefund, "run").mockResolvedValueOnce({ text: "The provider declined the refund.", isError: true });
    const out = await refund();
    expect(out).toMatchObject({ kind: "result", outcome: { text: "The provider declined the refund.", isError: true } });
    const [e] = await events("call.tool-error");
    expect(e).toMatchObject({ actor: expect.stringMatching(/^agent:/), data: { tool: "issue_refund", rule: expect.anything() } });
    expect((await recordsOf()).map((r) => r.status)).toEqual(["executed"]);
    vi.spyOn(issueRefund, "run").mockResolvedValueOnce({ text: "Refunded." });
    await refund(1);
    expect(await trail("issue_refund")).toEqual(["call.executed", "call.tool-error", "call.executed"]);
  });
});

describe("a call of a tool that does not exist", () => {
  it("is refused before anything is decided or recorded, naming at most 64 characters of what was asked", async () => {
    const name = `no_such_tool_${"x".repeat(100)}`;
    const out = callTool(await principal(), name, {}, { tasks: true }, T0);
    await expect(out).rejects.toBeInstanceOf(UnknownToolError);
    await expect(callTool(await principal(), name, {}, { tasks: true }, T0)).rejects.toThrow(new Error(`Unknown tool: ${name.slice(0, 64)}`));
    expect(await db().callRecord.count()).toBe(0);
    expect(await db().auditEvent.count({ where: { type: { startsWith: "call." } } })).toBe(0);
  });
});
