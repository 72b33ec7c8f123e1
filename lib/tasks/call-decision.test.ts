/**
 * A call, decided: what each decision records in policy history, audits and answers before anything runs. A call
 * that opens no task leaves no record (a client without tasks, a rule that first asks for a justification, a
 * denial); an allowed call of a tool a window counts is recorded before its tool runs; a call that opens a task
 * has its record (with what policy evaluated) waiting with the task. A denial because the policy could not be
 * evaluated is audited with the call's digest, the rule and the error; a plain denial is not.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { principal, resetDb } from "../../tests/support/db";
import { T0, freshOrder } from "../../tests/support/proof";
import { digest } from "../canonical";
import { db } from "../db/client";
import { metricValue } from "../metrics";
import { DEMO_DOCUMENT, withoutPolicy } from "../policy/demo-policy";
import { saveDocument } from "../policy/store";
import { getTool } from "../tools/catalog";
import { issueRefund } from "../tools/issue-refund";
import { SUBMISSION_INPUT_KEY, callTool, submissionQuestion, type CallOptions, type CallProgress } from "./call";

beforeEach(resetDb);
afterEach(() => vi.restoreAllMocks());

const REFUND_REASON = "Refunds above EUR 150.00 need a support lead's approval.";
const calls = (tool: string, decision: string) => metricValue("countersign_tool_calls_total", { tool, decision });
const recordsOf = (resourceId: string) => db().callRecord.findMany({ where: { resourceId }, select: { status: true, taskId: true, snapshot: true } });
/** A refund of the whole of a fresh order of 300.00: above 150.00, so it needs a support lead (rule refund-over-limit). */
async function largeRefund(id: string, opts: CallOptions) {
  const order = await freshOrder(id, 30_000);
  return { order, out: await callTool(await principal(), "issue_refund", { order_id: order }, opts, T0) };
}

describe("a requestable call that opens no task", () => {
  it("from a client without tasks: approval required in words that say why nothing was submitted; nothing is recorded or submitted", async () => {
    const before = await calls("issue_refund", "requestable");
    const progress: CallProgress = { stage: "deciding" };
    const { order, out } = await largeRefund("O-7201", { tasks: false, progress });
    expect(out).toEqual({
      kind: "approval-required",
      outcome: {
        isError: true,
        text:
          `Approval required: ${REFUND_REASON} The tool did not run. ` +
          "This server returns a durable approval task to clients that declare the io.modelcontextprotocol/tasks extension; " +
          "this client did not, so nothing was submitted for approval. Ask the user to have the call approved, or retry from a tasks-capable client.",
      },
    });
    // The refund window counts issue_refund, yet a call that submits nothing leaves no record to count.
    expect(await recordsOf(order)).toEqual([]);
    expect(await db().task.count()).toBe(0);
    expect(await db().approvalRequest.count()).toBe(0);
    expect(progress.stage).toBe("deciding");
    expect(await calls("issue_refund", "requestable")).toBe(before + 1);
  });

  it("under a rule that needs a justification, asked without one: the question is asked first and nothing is recorded", async () => {
    await db().policyRule.updateMany({ where: { ruleKey: "refund-over-limit" }, data: { requireJustification: true } });
    const progress: CallProgress = { stage: "deciding" };
    const { order, out } = await largeRefund("O-7202", { tasks: true, progress });
    expect(out).toEqual({ kind: "input-required", key: SUBMISSION_INPUT_KEY, question: submissionQuestion(REFUND_REASON) });
    expect(out.kind === "input-required" && out.question.message).toMatch(/^Refunds above EUR 150\.00 need a support lead's approval\. Before the request goes to reviewers/);
    expect(await recordsOf(order)).toEqual([]);
    expect(await db().task.count()).toBe(0);
    expect(progress.stage).toBe("deciding");
  });
});

describe("a requestable call that opens a task", () => {
  it("under a rule that needs a justification, answered: the task opens with the answer, and the call's record waits with it", async () => {
    await db().policyRule.updateMany({ where: { ruleKey: "refund-over-limit" }, data: { requireJustification: true } });
    const input = { justification: "The customer was charged twice for this order." };
    const progress: CallProgress = { stage: "deciding" };
    const { order, out } = await largeRefund("O-7203", { tasks: true, input, progress });
    if (out.kind !== "task") throw new Error(`expected a task, got ${JSON.stringify(out)}`);
    expect(progress.stage).toBe("submitting");
    expect(await recordsOf(order)).toMatchObject([{ status: "pending", taskId: out.task.taskId }]);
    expect((await db().approvalRequest.findFirstOrThrow()).body).toMatchObject({ input });
  });

  it("of a tool a window counts: its record is pending, linked to the task, and keeps what policy evaluated", async () => {
    const progress: CallProgress = { stage: "deciding" };
    const { order, out } = await largeRefund("O-7204", { tasks: true, progress });
    if (out.kind !== "task") throw new Error(`expected a task, got ${JSON.stringify(out)}`);
    expect(progress.stage).toBe("submitting");
    expect(await recordsOf(order)).toEqual([
      {
        status: "pending",
        taskId: out.task.taskId,
        snapshot: { args: { order_id: order }, resource: { type: "order", id: order, properties: expect.objectContaining({ amount_cents: 30_000, currency: "EUR" }) } },
      },
    ]);
  });

  it("of a tool no window counts: its record is written with the task, pending, with what policy evaluated", async () => {
    const args = { service: "checkout-api", environment: "production", version: "9.9.9" };
    const out = await callTool(await principal("ops-bot"), "deploy_service", args, { tasks: true }, T0);
    if (out.kind !== "task") throw new Error(`expected a task, got ${JSON.stringify(out)}`);
    expect(await recordsOf("checkout-api")).toEqual([
      { status: "pending", taskId: out.task.taskId, snapshot: { args, resource: expect.objectContaining({ type: "service", id: "checkout-api" }) } },
    ]);
  });
});

describe("an allowed call of a tool a window counts", () => {
  // The database refuses the record of a refund (a trigger stands in for a database that fails mid-call).
  beforeEach(async () => {
    await db().$executeRawUnsafe(`CREATE FUNCTION refuse_refund_record() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'record refused'; END $$`);
    await db().$executeRawUnsafe(
      `CREATE TRIGGER refuse_refund_record BEFORE INSERT ON "CallRecord" FOR EACH ROW WHEN (NEW.tool = 'issue_refund') EXECUTE FUNCTION refuse_refund_record()`,
    );
  });
  afterEach(async () => {
    await db().$executeRawUnsafe(`DROP TRIGGER IF EXISTS refuse_refund_record ON "CallRecord"`);
    await db().$executeRawUnsafe(`DROP FUNCTION IF EXISTS refuse_refund_record()`);
  });

  it("is counted before its tool runs: when its record cannot be written, the tool does not run and nothing is in the trail", async () => {
    const run = vi.spyOn(issueRefund, "run").mockResolvedValue({ text: "Refunded." });
    const progress: CallProgress = { stage: "deciding" };
    await expect(callTool(await principal(), "issue_refund", { order_id: "O-1021", amount: 20 }, { tasks: true, progress }, T0)).rejects.toThrow("record refused");
    expect(run).not.toHaveBeenCalled();
    expect(progress.stage).toBe("deciding");
    expect(await db().auditEvent.count({ where: { type: { startsWith: "call." } } })).toBe(0);
  });
});

describe("a denied call", () => {
  const overflow = `\n@id("overflow")\n@reason("Never meant to hold.")\nforbid (principal, action == Action::"issue_refund", resource)\nwhen { resource.amount.minor * 9223372036854775807 < 0 };\n`;
  async function saveOverflow() {
    const steady = withoutPolicy(DEMO_DOCUMENT, "deploy-production-after-hours");
    const r = await saveDocument({ ...steady, policies: steady.policies + overflow, tests: [] }, "admin@countersign.test", T0);
    if (!r.ok) throw new Error(`not saved: ${JSON.stringify(r.problems)}`);
    return r.version;
  }
  const DENIED_UNEVALUATED =
    "Denied by policy: The policy could not be evaluated for this call, so it is denied. The tool did not run. This denial cannot be approved; do not retry.";

  it("because the policy could not be evaluated: refused, audited with the call's digest, the rule and the error; nothing is recorded", async () => {
    const version = await saveOverflow();
    const bot = await principal();
    const args = { order_id: "O-1021", amount: 20 };
    const before = await calls("issue_refund", "deny");
    const out = await callTool(bot, "issue_refund", args, { tasks: true }, T0);
    expect(out).toEqual({ kind: "result", outcome: { isError: true, text: DENIED_UNEVALUATED } });
    const events = await db().auditEvent.findMany({ where: { type: "policy.evaluation-error" }, select: { actor: true, at: true, taskId: true, data: true } });
    expect(events).toEqual([
      {
        actor: `agent:${bot.agentId}`,
        at: T0,
        taskId: null,
        data: {
          tool: "issue_refund",
          argumentsDigest: digest(getTool("issue_refund")!.schema.parse(args)),
          // The policy document's version that could not be evaluated.
          rule: { id: expect.any(String), ruleKey: "evaluation-error", version },
          error: expect.stringContaining("overflow"),
        },
      },
    ]);
    // The refund window counts issue_refund; a denied call is not counted.
    expect(await recordsOf("O-1021")).toEqual([]);
    expect(await db().refund.count()).toBe(0);
    expect(await calls("issue_refund", "deny")).toBe(before + 1);
  });

  it("because the policy could not be evaluated, from a client without tasks: the same denial, audited, nothing recorded", async () => {
    await saveOverflow();
    const out = await callTool(await principal(), "issue_refund", { order_id: "O-1021", amount: 20 }, { tasks: false }, T0);
    expect(out).toEqual({ kind: "result", outcome: { isError: true, text: DENIED_UNEVALUATED } });
    expect(await db().auditEvent.count({ where: { type: "policy.evaluation-error" } })).toBe(1);
    expect(await recordsOf("O-1021")).toEqual([]);
  });

  it("because the policy could not be evaluated, when that cannot be audited: the call fails rather than deny unaudited", async () => {
    await saveOverflow();
    await db().$executeRawUnsafe(`CREATE FUNCTION refuse_evaluation_event() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'event refused'; END $$`);
    await db().$executeRawUnsafe(
      `CREATE TRIGGER refuse_evaluation_event BEFORE INSERT ON "AuditEvent" FOR EACH ROW WHEN (NEW.type = 'policy.evaluation-error') EXECUTE FUNCTION refuse_evaluation_event()`,
    );
    try {
      await expect(callTool(await principal(), "issue_refund", { order_id: "O-1021", amount: 20 }, { tasks: true }, T0)).rejects.toThrow("event refused");
    } finally {
      await db().$executeRawUnsafe(`DROP TRIGGER IF EXISTS refuse_evaluation_event ON "AuditEvent"`);
      await db().$executeRawUnsafe(`DROP FUNCTION IF EXISTS refuse_evaluation_event()`);
    }
  });

  it("by a policy that held: refused in the rule's words, no evaluation-error event, nothing recorded", async () => {
    const before = await calls("wire_transfer", "deny");
    const out = await callTool(await principal("support-bot"), "wire_transfer", { to: "acct-991", amount: 10, memo: "a test" }, { tasks: true }, T0);
    expect(out).toEqual({
      kind: "result",
      outcome: { isError: true, text: "Denied by policy: The support bot may only issue refunds. The tool did not run. This denial cannot be approved; do not retry." },
    });
    expect(await db().auditEvent.count({ where: { type: "policy.evaluation-error" } })).toBe(0);
    // The 24-hour window counts wire_transfer; a denied call is not counted.
    expect(await db().callRecord.count({ where: { tool: "wire_transfer" } })).toBe(0);
    expect(await db().transfer.count()).toBe(0);
    expect(await calls("wire_transfer", "deny")).toBe(before + 1);
  });
});
