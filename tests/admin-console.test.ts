/**
 * The admin console's rules: the all-pending view (whom each request waits on), History's and the audit trail's
 * filters (people by name or email, dates, and an invalid filter reported rather than ignored), what a destructive
 * action ends, and a new agent's owner (nobody by default) and client configuration.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { AgentInput, agentOwnerChoice, revokeAgent } from "../lib/admin/agents";
import { mcpClientConfig, serverBaseUrl } from "../lib/admin/client-config";
import { endsSentence, pendingEndedByDeactivating, pendingEndedByRevoking } from "../lib/admin/ends";
import { parsePersonQuery } from "../lib/admin/find-person";
import { actorFilter, historyFiltersFrom, parseDateRange, parseDay } from "../lib/admin/filters";
import { pendingAcrossGroups, waitingOn, type Person } from "../lib/admin/pending";
import { updateUser } from "../lib/admin/people";
import { auditFilterFrom } from "../lib/audit/filter-params";
import { listAuditEvents } from "../lib/audit/list-events";
import { db } from "../lib/db/client";
import { historyPage } from "../lib/inbox/history";
import { callTool } from "../lib/tasks/call";
import { decide } from "../lib/tasks/decide";
import type { Principal } from "../lib/tasks/types";
import { principal, requestIdOf, resetDb, userId } from "./support/db";
import { T0 } from "./support/proof";

const at = (sec: number) => new Date(T0.getTime() + sec * 1000);

async function gated(agent: Principal, tool: string, args: unknown, now: Date): Promise<{ taskId: string; requestId: string }> {
  const out = await callTool(agent, tool, args, { tasks: true }, now);
  if (out.kind !== "task") throw new Error(`expected a task, got ${JSON.stringify(out)}`);
  return { taskId: out.task.taskId, requestId: await requestIdOf(out.task.taskId) };
}
const wire = async (n: number, now: Date) => gated(await principal("ops-bot"), "wire_transfer", { to: `acct-a${n}`, amount: 30_000 + n }, now);
const refund = async (order: string, now: Date) => gated(await principal("support-bot"), "issue_refund", { order_id: order }, now);

const person = (id: string, groups: string[], extra: Partial<Person> = {}): Person => ({ id, name: id.toUpperCase(), email: `${id}@x.test`, role: "reviewer", groups, active: true, ...extra });

describe("whom a pending request waits on", () => {
  const r = { approverGroup: "treasury", approvalsRequired: 2, requesterUserId: "req" };
  const people = [person("tara", ["treasury"]), person("theo", ["treasury"]), person("lena", ["support-leads"]), person("req", ["treasury"])];
  // Who may review is the eligibility rule's answer (lib/approvals/eligibility.ts, judged in SQL); here, its result.
  const eligible = new Set(["tara", "theo", "lena"]);

  it("its group, the approvals still needed, and the people the eligibility rule admits who have not reviewed it", () => {
    expect(waitingOn(r, [], people, eligible)).toEqual({
      approverGroup: "treasury",
      offeredTo: ["treasury"],
      stillNeeded: 2,
      eligible: [{ id: "lena", name: "LENA", email: "lena@x.test" }, { id: "tara", name: "TARA", email: "tara@x.test" }, { id: "theo", name: "THEO", email: "theo@x.test" }],
      stuck: false,
    });
    const after = waitingOn(r, [{ reviewerId: "tara", decision: "approve" }], people, eligible);
    expect(after.stillNeeded).toBe(1);
    expect(after.eligible.map((p) => p.id)).toEqual(["lena", "theo"]);
    // Escalated: offered to the fallback group too.
    expect(waitingOn({ ...r, fallbackGroup: "sre", escalatedAt: new Date() }, [], people, eligible).offeredTo).toEqual(["treasury", "sre"]);
  });

  it("says when fewer people may approve than approvals are still needed", () => {
    expect(waitingOn(r, [], people, new Set(["tara"])).stuck).toBe(true);
    expect(waitingOn({ ...r, approvalsRequired: 1 }, [], people, new Set(["tara"])).stuck).toBe(false);
  });
});

describe("the filters' parsing", () => {
  it("reads a day as whole UTC day bounds and refuses days that do not exist", () => {
    expect(parseDay("2026-03-31", "From", "start")).toEqual({ ok: true, at: new Date("2026-03-31T00:00:00.000Z") });
    expect(parseDay("2026-03-31", "To", "end")).toEqual({ ok: true, at: new Date("2026-03-31T23:59:59.999Z") });
    for (const bad of ["2026-02-30", "2026-13-01", "31/03/2026", "yesterday", "2026-3-1"]) {
      expect(parseDay(bad, "From", "start")).toEqual({ ok: false, error: `From must be a date like 2026-03-31, not “${bad}”.` });
    }
    expect(parseDateRange({ from: "2026-04-02", to: "2026-04-01" }).problems).toEqual(["From is after To: no day is in that range."]);
    expect(parseDateRange({ from: "2026-04-01", to: "2026-04-01" }).problems).toEqual([]);
  });

  it("tells an email from a name, and refuses what is neither", () => {
    expect(parsePersonQuery(" Tara.Treasury@Countersign.test ")).toEqual({ kind: "email", email: "tara.treasury@countersign.test" });
    expect(parsePersonQuery("Tara")).toEqual({ kind: "name", name: "Tara" });
    expect(parsePersonQuery("tara@")).toMatchObject({ kind: "invalid" });
    expect(parsePersonQuery("x".repeat(101))).toMatchObject({ kind: "invalid" });
  });
});

describe("History and the audit trail find people by name or email, and say when a filter cannot be read", () => {
  beforeEach(resetDb);

  it("History's reviewer filter takes a name or an email; its dates bound the decision day; search finds a requester by email", async () => {
    const tara = await userId("tara.treasury@countersign.test");
    const theo = await userId("theo.treasury@countersign.test");
    const byTara = await wire(1, at(0));
    await decide({ requestId: byTara.requestId, reviewerId: tara, decision: "deny", comment: "no" }, at(1));
    const byTheo = await wire(2, at(2));
    await decide({ requestId: byTheo.requestId, reviewerId: theo, decision: "deny", comment: "no" }, at(3));
    const admin = { id: await userId("admin@countersign.test"), role: "admin", groups: [] };
    const ids = async (raw: Record<string, string>) => {
      const { filters, problems } = await historyFiltersFrom(raw);
      expect(problems).toEqual([]);
      return (await historyPage(admin, filters)).items.map((i) => i.id);
    };

    expect(await ids({ reviewer: "Tara Treasury" })).toEqual([byTara.requestId]);
    expect(await ids({ reviewer: "THEO.treasury@countersign.test" })).toEqual([byTheo.requestId]);
    expect(await ids({ reviewer: "theo" })).toEqual([byTheo.requestId]);
    const day = T0.toISOString().slice(0, 10);
    expect(await ids({ from: day, to: day })).toEqual([byTheo.requestId, byTara.requestId]);
    expect(await ids({ to: "2100-11-29" })).toEqual([]);
    expect(await ids({ q: "otto.ops@countersign" })).toEqual([byTheo.requestId, byTara.requestId]);
    expect(await ids({ q: "tara.treasury@" })).toEqual([byTara.requestId]);
  });

  it("an unknown person, an ambiguous name, a bad date or a malformed value is a problem in words", async () => {
    const problems = async (raw: Record<string, string>) => (await historyFiltersFrom(raw)).problems;
    expect(await problems({ reviewer: "nobody@countersign.test" })).toEqual(["No one has the email nobody@countersign.test."]);
    expect(await problems({ reviewer: "Zed" })).toEqual(["No one is called “Zed”."]);
    expect((await problems({ reviewer: "treasury" }))[0]).toMatch(/matches Tara Treasury \(tara.treasury@countersign.test\), Theo Treasury .*type the email/);
    expect(await problems({ from: "2026-02-30" })).toEqual(["From must be a date like 2026-03-31, not “2026-02-30”."]);
    expect(await problems({ outcome: "approved-ish", tool: "Bad Tool" })).toEqual([
      "The tool “Bad Tool” is not valid: a tool name looks like issue_refund.",
      "The outcome “approved-ish” is not valid: choose one of executed, denied, expired, cancelled, error, unknown, in-progress.",
    ]);
  });

  it("the audit actor filter takes a name, an email, an agent's name or an actor id", async () => {
    const tara = await userId("tara.treasury@countersign.test");
    const w = await wire(3, at(0));
    await decide({ requestId: w.requestId, reviewerId: tara, decision: "approve" }, at(1));
    expect(await actorFilter("Tara Treasury")).toEqual({ actor: `user:${tara}`, problems: [] });
    expect(await actorFilter("tara.treasury@countersign.test")).toEqual({ actor: `user:${tara}`, problems: [] });
    const opsBot = await db().agent.findFirstOrThrow({ where: { name: "ops-bot" } });
    expect(await actorFilter("ops-bot")).toEqual({ actor: `agent:${opsBot.id}`, problems: [] });
    expect(await actorFilter("system")).toEqual({ actor: "system", problems: [] });
    expect(await actorFilter("nobody")).toEqual({ problems: ["No one and no agent is called “nobody”."] });

    const f = await auditFilterFrom({ actor: "tara.treasury@countersign.test" });
    const { events } = await listAuditEvents(f);
    expect(events.length).toBeGreaterThan(0);
    expect(new Set(events.map((e) => e.actor))).toEqual(new Set([`user:${tara}`]));
    expect((await auditFilterFrom({ actor: "nobody@countersign.test", from: "2026-99-01", taskId: "12", type: "Not A Type" })).problems).toEqual([
      "The event type “Not A Type” is not valid: a type looks like request.created.",
      "The task id “12” is not valid: a task id looks like 0b5e…-…, 36 characters.",
      "No one has the email nobody@countersign.test.",
      "From must be a date like 2026-03-31, not “2026-99-01”.",
    ]);
  });
});

describe("the all-pending view", () => {
  beforeEach(resetDb);

  it("lists every group's waiting requests, soonest deadline first, with whom each waits on; decided ones leave it", async () => {
    const t = await wire(1, at(0));
    const r = await refund("O-2289", at(1));
    const tara = await userId("tara.treasury@countersign.test");
    await decide({ requestId: t.requestId, reviewerId: tara, decision: "approve" }, at(2));
    const { rows } = await pendingAcrossGroups(at(3));
    const byId = new Map(rows.map((x) => [x.id, x]));
    expect([...byId.keys()].sort()).toEqual([t.requestId, r.requestId].sort());
    expect(byId.get(t.requestId)!.waitingOn).toMatchObject({ approverGroup: "treasury", stillNeeded: 1, eligible: [{ name: "Theo Treasury", email: "theo.treasury@countersign.test" }], stuck: false });
    expect(byId.get(r.requestId)!.waitingOn).toMatchObject({ approverGroup: "support-leads", stillNeeded: 1 });
    expect(byId.get(r.requestId)!.waitingOn.eligible.map((p) => p.name)).toEqual(["Lena Lead", "Sam Lead"]);
    const deadlines = rows.map((x) => x.deadline.getTime());
    expect(deadlines).toEqual([...deadlines].sort((a, b) => a - b));

    await decide({ requestId: r.requestId, reviewerId: await userId("lena.lead@countersign.test"), decision: "deny", comment: "no" }, at(4));
    expect((await pendingAcrossGroups(at(5))).rows.map((x) => x.id)).toEqual([t.requestId]);
    // Past its deadline a request waits on nobody.
    expect((await pendingAcrossGroups(at(30 * 86400))).rows).toEqual([]);
  });
});

describe("destructive actions say what they end", () => {
  beforeEach(resetDb);

  it("revoking an agent or deactivating its user ends exactly the pending requests counted beforehand", async () => {
    const bot = await db().agent.findFirstOrThrow({ where: { name: "support-bot" } });
    const rita = await userId("rita.requester@countersign.test");
    const admin = await userId("admin@countersign.test");
    await refund("O-2289", at(0));
    await refund("O-1145", at(1));
    const decided = await refund("O-4410", at(2));
    await decide({ requestId: decided.requestId, reviewerId: await userId("lena.lead@countersign.test"), decision: "deny", comment: "no" }, at(3));
    await wire(9, at(4)); // another agent's: not counted

    expect(await pendingEndedByRevoking(bot.id)).toBe(2);
    expect(await pendingEndedByDeactivating(rita)).toBe(2);
    expect(endsSentence(2)).toBe("This ends 2 pending requests.");
    expect(endsSentence(1)).toBe("This ends 1 pending request.");
    expect(endsSentence(0)).toBe("This ends no pending request.");

    await updateUser({ userId: rita, role: "requester", groups: [], active: false }, admin, at(5));
    expect(await db().task.count({ where: { agentId: bot.id, status: "completed", disposition: "denied-not-executed" } })).toBe(3);
    // Saving an inactive user again ends nothing new: nothing to confirm.
    expect(await pendingEndedByDeactivating(rita)).toBeNull();

    const ops = await db().agent.findFirstOrThrow({ where: { name: "ops-bot" } });
    expect(await pendingEndedByRevoking(ops.id)).toBe(1);
    expect(await revokeAgent(ops.id, admin, at(6))).toBe(true);
    expect(await pendingEndedByRevoking(ops.id)).toBe(0);
  });
});

describe("a new agent", () => {
  it("acts for nobody until the admin chooses someone: the form's default is no user, and no user is refused", () => {
    const users = [{ id: "a", active: true }, { id: "b", active: false }];
    expect(agentOwnerChoice(users)).toEqual({ defaultUserId: "", options: [{ id: "a", active: true }] });
    const parsed = AgentInput.safeParse({ name: "billing-bot", userId: "" });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({ path: ["userId"], message: "Choose whom the agent acts for." });
  });

  it("comes with a ready-to-paste MCP client configuration for this server's /mcp and its bearer token", () => {
    expect(serverBaseUrl("https://cs.example.com/", "http://127.0.0.1:4400")).toBe("https://cs.example.com");
    expect(serverBaseUrl(undefined, "http://127.0.0.1:4400")).toBe("http://127.0.0.1:4400");
    expect(serverBaseUrl("", "javascript:alert(1)")).toBe("http://localhost:3000");
    expect(JSON.parse(mcpClientConfig("billing-bot", "cs_abc", "https://cs.example.com"))).toEqual({
      mcpServers: { "countersign-billing-bot": { type: "http", url: "https://cs.example.com/mcp", headers: { Authorization: "Bearer cs_abc" } } },
    });
  });
});
