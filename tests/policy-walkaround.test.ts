/**
 * Policy that cannot be walked around, end to end on the database: splitting a transfer or a refund into small
 * calls (in a row and in parallel) is judged on what the parts add up to, pending calls count, re-evaluation at
 * execution re-measures history; the support bot is limited to refunds (also in tools/list over the real MCP
 * endpoint); business hours in Europe/Berlin; default deny; bad input saves nothing; evaluation errors are denials
 * that are audited.
 */
import { beforeEach, describe, expect, inject, it } from "vitest";
import { db } from "../lib/db/client";
import { DEMO_AGENTS } from "../lib/db/seed";
import { buildRpcRequest, TASKS } from "../lib/mcp/raw-request";
import { serveRoute } from "../lib/mcp/testing";
import { DEMO_DOCUMENT, withoutPolicy } from "../lib/policy/demo-policy";
import { PolicyDocument } from "../lib/policy/document";
import { saveDocument } from "../lib/policy/store";
import { digest } from "../lib/canonical";
import { decide } from "../lib/tasks/decide";
import { callTool } from "../lib/tasks/call";
import type { CallOutcome, Principal } from "../lib/tasks/types";
import { principal, requestIdOf, resetDb, userId } from "./support/db";
import { HOUR, LEADS, MIN, SEC, T0, at, freshOrder, taskRow } from "./support/proof";

beforeEach(resetDb);

const STEADY = withoutPolicy(DEMO_DOCUMENT, "deploy-production-after-hours");
const PERMIT_DEMO_TOOLS = STEADY.policies.split(/\n\s*\n/)[0];

async function save(body: unknown, now: Date = T0): Promise<number> {
  const r = await saveDocument(body, "admin@countersign.test", now);
  if (!r.ok) throw new Error(`not saved: ${JSON.stringify(r.problems)}`);
  return r.version;
}

const versions = () => db().policyDocument.count();

const call = (p: Principal, tool: string, args: Record<string, unknown>, now: Date = T0) => callTool(p, tool, args, { tasks: true }, now);
// Each call is a call of its own (a memo of its own): an identical call while one is pending is its in-flight duplicate.
let n = 0;
const wire = (p: Principal, to: string, amount: number, now: Date = T0) => call(p, "wire_transfer", { to, amount, memo: `part ${++n}` }, now);
const refund = (p: Principal, orderId: string, amount: number, now: Date = T0) => call(p, "issue_refund", { order_id: orderId, amount, reason: `part ${++n}` }, now);

function ran(out: CallOutcome): boolean {
  return out.kind === "result" && !out.outcome.isError;
}

/** The approval request a task waits on now: who may approve and how many. */
async function requestOf(out: CallOutcome) {
  if (out.kind !== "task") throw new Error(`expected a task, got ${JSON.stringify(out)}`);
  const t = await taskRow(out.task.taskId);
  const r = await db().approvalRequest.findUniqueOrThrow({ where: { id: t.handle! } });
  return { taskId: t.id, ruleKey: t.policyRuleKey, approverGroup: r.approverGroup, approvalsRequired: r.approvalsRequired, generation: t.generation };
}

async function approve(taskId: string, email: string, now: Date) {
  const r = await decide({ requestId: await requestIdOf(taskId), reviewerId: await userId(email), decision: "approve" }, now);
  if (!r.ok) throw new Error(`approval by ${email} refused: ${r.error}`);
  return r;
}

describe(`splitting is judged on the total (${inject("databaseKind")})`, () => {
  it("twelve wire transfers of USD 25,000 to one account by the ops bot: the first runs, the other eleven need two treasury approvals", async () => {
    const ops = await principal("ops-bot");
    const outcomes: CallOutcome[] = [];
    for (let i = 0; i < 12; i++) outcomes.push(await wire(ops, "acct-split", 25_000, at(i * MIN)));
    expect(outcomes.map(ran)).toEqual([true, ...Array(11).fill(false)]);
    const requests = await Promise.all(outcomes.slice(1).map(requestOf));
    expect(new Set(requests.map((r) => r.taskId)).size).toBe(11);
    expect(requests.map((r) => [r.ruleKey, r.approverGroup, r.approvalsRequired])).toEqual(Array(11).fill(["wire-account-24h", "treasury", 2]));
    expect(await db().transfer.count({ where: { toAccount: "acct-split" } })).toBe(1);
    expect(await db().task.count({ where: { tool: "wire_transfer", status: "working" } })).toBe(11);
    // Another account has its own total; and after 24 hours the window is empty again.
    expect(ran(await wire(ops, "acct-other", 25_000, at(12 * MIN)))).toBe(true);
    expect(ran(await wire(ops, "acct-split", 25_000, at(24 * HOUR + 13 * MIN)))).toBe(true);
  });

  it("refunds of EUR 150, 150 and 20 on an order with EUR 320 left: the first runs, the second and the third need a support lead", async () => {
    const bot = await principal("support-bot");
    const order = await freshOrder("O-7320", 32_000);
    const first = await refund(bot, order, 150);
    const second = await refund(bot, order, 150, at(SEC));
    const third = await refund(bot, order, 20, at(2 * SEC));
    expect(ran(first)).toBe(true);
    expect(await requestOf(second)).toMatchObject({ ruleKey: "refund-order-total", approverGroup: "support-leads", approvalsRequired: 1 });
    expect(await requestOf(third)).toMatchObject({ ruleKey: "refund-order-total", approverGroup: "support-leads", approvalsRequired: 1 });
    expect(await db().refund.count({ where: { orderId: order } })).toBe(1);
  });

  it("a call pending approval counts in the window: after a pending USD 30,000 transfer, a USD 1,000 one to the same account needs treasury", async () => {
    const ops = await principal("ops-bot");
    const big = await wire(ops, "acct-pending", 30_000);
    expect(await requestOf(big)).toMatchObject({ ruleKey: "wire-over-25k", approvalsRequired: 2 });
    const small = await wire(ops, "acct-pending", 1_000, at(SEC));
    expect(await requestOf(small)).toMatchObject({ ruleKey: "wire-account-24h", approverGroup: "treasury", approvalsRequired: 2 });
    // The same small transfer to an account with nothing pending runs.
    expect(ran(await wire(ops, "acct-fresh", 1_000, at(2 * SEC)))).toBe(true);
  });

  it.each([6, 12])("%i parallel USD 25,000 transfers to one account: exactly one runs, the others need approval", async (n) => {
    const ops = await principal("ops-bot");
    const outcomes = await Promise.all(Array.from({ length: n }, () => wire(ops, `acct-race-${n}`, 25_000)));
    expect(outcomes.filter(ran)).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === "task")).toHaveLength(n - 1);
    expect(await db().transfer.count({ where: { toAccount: `acct-race-${n}` } })).toBe(1);
  });

  it("parallel refunds on one order: exactly as many run as the threshold permits (one), the rest need a lead", async () => {
    const bot = await principal("support-bot");
    const order = await freshOrder("O-7321", 50_000);
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => refund(bot, order, 100)));
    expect(outcomes.filter(ran)).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === "task")).toHaveLength(4);
    expect(await db().refund.count({ where: { orderId: order } })).toBe(1);
  });

  it("re-evaluation at execution re-measures history: an approved refund whose order total rose meanwhile needs the stricter approval", async () => {
    const tiers = {
      ...STEADY,
      policies: `${STEADY.policies}\n@id("refund-order-total-high")\n@reason("Refunds on one order above 300.00 in total need two support leads.")\n@approvers("support-leads")\n@quorum("2")\n@deadline("24h")\n@validity("1h")\nforbid (principal, action == Action::"issue_refund", resource)\nwhen {\n  context.history.refunds_per_order.count > 0 &&\n  context.history.refunds_per_order.total + resource.amount.minor > 30000\n};\n`,
      tests: [],
    };
    await save(tiers);
    const bot = await principal("support-bot");
    const order = await freshOrder("O-7322", 40_000);
    expect(ran(await refund(bot, order, 100))).toBe(true); // total 100
    const a = await requestOf(await refund(bot, order, 100, at(SEC))); // 100 + 100 > 150: one lead
    expect(a).toMatchObject({ ruleKey: "refund-order-total", approvalsRequired: 1 });
    const b = await requestOf(await refund(bot, order, 150, at(2 * SEC))); // 100 + 100 (pending) + 150 > 300: two leads
    expect(b).toMatchObject({ ruleKey: "refund-order-total-high", approvalsRequired: 2 });

    // One lead approves A. Re-evaluated now, A's window holds the first refund and the pending B: 100 + 150 + 100 > 300.
    await approve(a.taskId, LEADS[0], at(MIN));
    const after = await taskRow(a.taskId);
    expect(after).toMatchObject({ status: "working", generation: 2 });
    expect(await db().refund.count({ where: { orderId: order } })).toBe(1);
    const chained = await db().approvalRequest.findUniqueOrThrow({ where: { id: after.handle! } });
    expect(chained).toMatchObject({ approverGroup: "support-leads", approvalsRequired: 2, status: "pending" });

    // Two leads approve the chained request: A runs.
    await approve(a.taskId, LEADS[0], at(2 * MIN));
    await approve(a.taskId, LEADS[1], at(2 * MIN));
    expect(await taskRow(a.taskId)).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect(await db().refund.count({ where: { orderId: order } })).toBe(2);
  });

  /** A cap on large refunds read from a per-agent window of the day: over 300.00 in the agent's day, refused. */
  const PER_AGENT_CAP = {
    ...STEADY,
    history: [...STEADY.history, { name: "refunds_by_agent", tool: "issue_refund", window: "24h", per: "agent" }],
    policies: `${STEADY.policies}\n@id("refunds-by-agent-cap")\n@reason("A large refund is refused once the agent's refunds of the day pass 300.00.")\nforbid (principal, action == Action::"issue_refund", resource)\nwhen {\n  resource.amount.minor > 15000 &&\n  context.history.refunds_by_agent.total + resource.amount.minor > 30000\n};\n`,
    tests: [],
  };

  it("re-evaluation measures a per-agent window for the agent that asked: its own refunds since make the approved one refused", async () => {
    await save(PER_AGENT_CAP);
    const bot = await principal("support-bot");
    // A large refund: the agent's day holds nothing yet, so it waits for a lead.
    const a = await requestOf(await refund(bot, await freshOrder("O-7330", 40_000), 200));
    // A small one on another order (the cap reads large refunds only): it runs, and the agent's day now holds 120.00.
    expect(ran(await refund(bot, await freshOrder("O-7331", 40_000), 120, at(SEC)))).toBe(true);
    // Approved, A is measured again for this agent: 120.00 + 200.00 > 300.00, so it is refused and never runs.
    await approve(a.taskId, LEADS[0], at(MIN));
    expect(await taskRow(a.taskId)).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    expect(JSON.stringify((await taskRow(a.taskId)).result)).toMatch(/300\.00/);
    expect(await db().refund.count({ where: { orderId: "O-7330" } })).toBe(0);
  });

  it("re-evaluation measures a per-agent window for the agent that asked only: another agent's refunds since do not count", async () => {
    await save(PER_AGENT_CAP);
    const a = await requestOf(await refund(await principal("support-bot"), await freshOrder("O-7332", 40_000), 200));
    // Another agent's 120.00 since: in its own day, not in the support bot's.
    expect(ran(await refund(await principal("ops-bot"), await freshOrder("O-7333", 40_000), 120, at(SEC)))).toBe(true);
    await approve(a.taskId, LEADS[0], at(MIN));
    expect(await taskRow(a.taskId)).toMatchObject({ status: "completed", disposition: "approved-executed" });
    expect(await db().refund.count({ where: { orderId: "O-7332" } })).toBe(1);
  });
});

describe(`per-agent scoping (${inject("databaseKind")})`, () => {
  it("the support bot's wire transfer is a plain denial: no task, no transfer, cannot be approved; its refund runs", async () => {
    const bot = await principal("support-bot");
    const out = await wire(bot, "acct-991", 10);
    expect(out).toMatchObject({ kind: "result", outcome: { isError: true } });
    expect(out.kind === "result" && out.outcome.text).toMatch(/Denied by policy: The support bot may only issue refunds\..*cannot be approved/);
    expect(await db().task.count()).toBe(0);
    expect(await db().transfer.count()).toBe(0);
    expect(await db().callRecord.count({ where: { tool: "wire_transfer" } })).toBe(0);
    // A denial by a policy that held is not an evaluation error.
    expect(await db().auditEvent.count({ where: { type: "policy.evaluation-error" } })).toBe(0);
    expect(ran(await refund(bot, "O-1021", 20))).toBe(true);
  });

  async function listed(token: string): Promise<string[]> {
    const server = await serveRoute();
    try {
      const { headers, body } = buildRpcRequest("tools/list", {}, { token, caps: TASKS, clientName: "walkaround-test" });
      const res = await fetch(server.url, { method: "POST", headers, body });
      expect(res.status).toBe(200);
      const json = JSON.parse(await res.text());
      return (json.result.tools as { name: string }[]).map((t) => t.name).sort();
    } finally {
      await server.close();
    }
  }

  it("tools/list over the MCP endpoint: the support bot sees only issue_refund (and the approval helpers), the ops bot every demo tool", async () => {
    const support = await listed(DEMO_AGENTS[0].token);
    const ops = await listed(DEMO_AGENTS[1].token);
    const demoTools = ["delete_path", "deploy_service", "issue_refund", "wire_transfer"];
    const helpers = ops.filter((n) => !demoTools.includes(n));
    expect(helpers.sort()).toEqual(["answer_request", "get_request_status", "request_access"]);
    expect(support).toEqual(["issue_refund", ...helpers].sort());
    expect(ops).toEqual([...demoTools, ...helpers].sort());
  });

  it("default deny in tools/list: a document that permits only refunds shows the ops bot only issue_refund, and denies its other calls", async () => {
    await save({ ...STEADY, policies: `@id("refunds")\npermit (principal, action == Action::"issue_refund", resource);\n`, tests: [] });
    const ops = await listed(DEMO_AGENTS[1].token);
    expect(ops.filter((n) => ["delete_path", "deploy_service", "issue_refund", "wire_transfer"].includes(n))).toEqual(["issue_refund"]);
    const out = await wire(await principal("ops-bot"), "acct-991", 10);
    expect(out.kind === "result" && out.outcome.text).toMatch(/No policy permits ops-bot to call wire_transfer/);
    expect(await db().transfer.count()).toBe(0);
  });
});

describe(`business hours in Europe/Berlin (${inject("databaseKind")})`, () => {
  const deploy = async (utc: string) =>
    requestOf(await call(await principal("ops-bot"), "deploy_service", { service: "checkout-api", environment: "production", version: `1.4.${++n}` }, new Date(utc)));

  it("a production deploy at 10:00 Berlin needs one SRE; at 19:00 Berlin two SREs (winter, CET)", async () => {
    await save(DEMO_DOCUMENT, new Date("2100-11-30T08:00:00Z"));
    expect(await deploy("2100-11-30T09:00:00Z")).toMatchObject({ ruleKey: "deploy-production", approverGroup: "sre", approvalsRequired: 1 });
    expect(await deploy("2100-11-30T18:00:00Z")).toMatchObject({ ruleKey: "deploy-production-after-hours", approverGroup: "sre", approvalsRequired: 2 });
  });

  it("summer time (CEST): 16:30 UTC is 18:30 in Berlin and needs two SREs; in winter the same UTC time is 17:30 and needs one", async () => {
    await save(DEMO_DOCUMENT, new Date("2100-01-01T00:00:00Z"));
    expect(await deploy("2100-07-15T16:30:00Z")).toMatchObject({ ruleKey: "deploy-production-after-hours", approvalsRequired: 2 });
    expect(await deploy("2100-01-15T16:30:00Z")).toMatchObject({ ruleKey: "deploy-production", approvalsRequired: 1 });
  });
});

describe(`bad input saves nothing (${inject("databaseKind")})`, () => {
  it.each([
    ["a parse error", `@id("a")\npermit (principal, action, resource);\n\n@id("b")\nforbid (principal, action, resource)\nwhen { context.args.amount > };`, { line: 6, column: 30 }],
    ["a condition on an argument that does not exist", `@id("a")\npermit (principal, action, resource);\n\n@id("b")\nforbid (principal, action == Action::"wire_transfer", resource)\nwhen { context.args.beneficiary == "x" };`, { line: 6, column: 8 }],
    ["a condition of the wrong type", `@id("a")\npermit (principal, action, resource);\n\n@id("b")\nforbid (principal, action == Action::"wire_transfer", resource)\nwhen { context.args.to > 5 };`, { line: 6, column: 8 }],
    ["a policy without @id", `@id("a")\npermit (principal, action, resource);\n\npermit (principal, action, resource);`, { line: 4, column: 1 }],
    ["a bad annotation value", `@id("b")\n@approvers("treasury")\n@reason("Some words for reviewers.")\n@quorum("lots")\nforbid (principal, action, resource);`, { line: 4, column: 1 }],
  ])("%s: saveDocument returns the problem with its line and column; the version is unchanged", async (_label, policies, where) => {
    const before = await versions();
    const head = await db().policyDocument.findFirstOrThrow({ orderBy: { version: "desc" } });
    const r = await saveDocument({ ...STEADY, policies, tests: [] }, "admin@countersign.test", T0);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.problems[0]).toMatchObject(where);
    expect(await versions()).toBe(before);
    expect((await db().policyDocument.findFirstOrThrow({ orderBy: { version: "desc" } })).id).toBe(head.id);
    expect(await db().auditEvent.count({ where: { type: "policy.document-saved" } })).toBe(0);
  });

  it("a document that is not a policy document at all is refused, and nothing is saved", async () => {
    const before = await versions();
    const r = await saveDocument({ policies: 42, defaults: { posture: "maybe" } }, "admin@countersign.test", T0);
    expect(r.ok).toBe(false);
    expect(await versions()).toBe(before);
  });
});

describe(`evaluation errors deny and are audited (${inject("databaseKind")})`, () => {
  const overflow = `\n@id("overflow")\n@reason("Never meant to hold.")\nforbid (principal, action == Action::"issue_refund", resource)\nwhen { resource.amount.minor * 9223372036854775807 < 0 };\n`;

  it("a policy that errors at call time denies with the policy.evaluation-error audit event, and the tool does not run", async () => {
    await save({ ...STEADY, policies: STEADY.policies + overflow, tests: [] });
    const bot = await principal("support-bot");
    const out = await refund(bot, "O-1021", 20);
    expect(out).toMatchObject({ kind: "result", outcome: { isError: true } });
    expect(out.kind === "result" && out.outcome.text).toMatch(/could not be evaluated/);
    expect(await db().refund.count()).toBe(0);
    const events = await db().auditEvent.findMany({ where: { type: "policy.evaluation-error" } });
    expect(events).toHaveLength(1);
    expect(events[0].data).toMatchObject({ tool: "issue_refund", error: expect.stringContaining("overflow") });
    // In the name of the agent that called, at the call's time.
    expect(events[0]).toMatchObject({ actor: `agent:${bot.agentId}`, at: T0 });
    expect(JSON.stringify(events[0].data)).not.toContain("O-1021");
    // Other tools are decided as usual.
    expect(ran(await wire(await principal("ops-bot"), "acct-991", 10))).toBe(true);
  });

  /** A stored version that was valid once but no longer validates (written as a migration of old data would). */
  async function storeStale(policies: string) {
    const last = await db().policyDocument.findFirstOrThrow({ orderBy: { version: "desc" } });
    const body = PolicyDocument.parse({ ...STEADY, policies, tests: [] });
    await db().policyDocument.create({ data: { version: last.version + 1, body: body as object, digest: digest(body), createdBy: "migration", createdAt: T0 } });
  }
  const staleForbid = `\n@id("gone-argument")\n@reason("Screened beneficiaries only.")\nforbid (principal, action == Action::"wire_transfer", resource)\nwhen { context.args.beneficiary == "x" };\n`;

  it("a stored forbid that no longer validates denies its tool's calls as an evaluation error (audited); other tools run", async () => {
    await storeStale(STEADY.policies + staleForbid);
    const out = await wire(await principal("ops-bot"), "acct-991", 10);
    expect(out.kind === "result" && out.outcome.text).toMatch(/could not be evaluated/);
    expect(await db().transfer.count()).toBe(0);
    const events = await db().auditEvent.findMany({ where: { type: "policy.evaluation-error" } });
    expect(events.map((e) => (e.data as { rule: { ruleKey: string } }).rule.ruleKey)).toEqual(["gone-argument"]);
    expect(ran(await refund(await principal("support-bot"), "O-1021", 20))).toBe(true);
  });

  it("a stored permit that no longer validates is dropped: the calls only it permitted fall to the default deny", async () => {
    await storeStale(`@id("refunds")\npermit (principal, action == Action::"issue_refund", resource);\n\n@id("wires-if")\npermit (principal, action == Action::"wire_transfer", resource)\nwhen { context.args.beneficiary == "x" };\n`);
    const out = await wire(await principal("ops-bot"), "acct-991", 10);
    expect(out.kind === "result" && out.outcome.text).toMatch(/No policy permits ops-bot to call wire_transfer/);
    expect(ran(await refund(await principal("support-bot"), "O-1021", 20))).toBe(true);
  });

  it("an approved task whose policy no longer validates at execution is denied, audited, and never runs", async () => {
    const ops = await principal("ops-bot");
    const task = await requestOf(await wire(ops, "acct-exec", 30_000));
    await storeStale(STEADY.policies + staleForbid);
    await approve(task.taskId, "tara.treasury@countersign.test", at(MIN));
    await approve(task.taskId, "theo.treasury@countersign.test", at(MIN));
    expect(await taskRow(task.taskId)).toMatchObject({ status: "completed", disposition: "denied-not-executed" });
    expect(await db().transfer.count()).toBe(0);
    expect(await db().auditEvent.count({ where: { type: "policy.evaluation-error", taskId: task.taskId } })).toBe(1);
  });
});
