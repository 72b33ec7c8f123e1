/**
 * An audited write: a state change and its audit event in one statement. Both are written or neither is, the chain
 * stays whole either way, and a record written this way reads back like one the client wrote (its snapshot sealed
 * and opened by the same boundary).
 */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../db/client";
import { executedRecordWrite } from "../policy/history";
import { principal, resetDb } from "../../tests/support/db";
import { T0 } from "../../tests/support/proof";
import { appendAudit, appendAuditWith } from "./append";
import { verifyAuditChain } from "./verify";

const event = (type: string) => ({ type, actor: "agent:test", data: { n: 1 }, at: T0 });

async function head(): Promise<string | null> {
  const rows = await db().$queryRawUnsafe<{ hash: string }[]>(`SELECT "hash" FROM "AuditHead" WHERE "id" = 1`);
  return rows[0]?.hash ?? null;
}

let agent = { agentId: "", userId: "" };
const call = () => ({
  tool: "deploy_service",
  agentId: agent.agentId,
  userId: agent.userId,
  resourceType: "Service",
  resourceId: "payments",
  money: null,
  snapshot: { args: { service: "payments", secret: "do-not-store-in-plain-text" }, resource: { type: "Service", id: "payments", properties: { environment: "staging" } } },
});

describe("appendAuditWith", () => {
  beforeEach(async () => {
    await resetDb();
    agent = await principal();
  });

  it("writes the record and its event together, in the chain, the snapshot sealed at rest and open to the client", async () => {
    await appendAudit(db() as never, event("before"));
    await appendAuditWith(db(), event("call.executed"), executedRecordWrite(call(), T0));
    const events = await db().auditEvent.findMany({ orderBy: { seq: "asc" }, select: { type: true } });
    expect(events.map((e) => e.type)).toEqual(["before", "call.executed"]);
    expect(await verifyAuditChain()).toEqual({ ok: true, events: 2 });

    const [raw] = await db().$queryRawUnsafe<{ snapshot: unknown; status: string; settledAt: Date }[]>(
      `SELECT "snapshot", "status", "settledAt" FROM "CallRecord"`,
    );
    expect(raw.status).toBe("executed");
    expect(raw.settledAt.toISOString()).toBe(T0.toISOString());
    expect(JSON.stringify(raw.snapshot)).not.toContain("do-not-store-in-plain-text");
    const read = await db().callRecord.findFirstOrThrow({ select: { snapshot: true } });
    expect(read.snapshot).toEqual(call().snapshot);
  });

  it("writes neither when the write fails, and the chain's head does not move", async () => {
    await appendAudit(db() as never, event("before"));
    const first = executedRecordWrite(call(), T0);
    await appendAuditWith(db(), event("call.executed"), first);
    const before = await head();
    // The same record id again: the write violates the primary key, so the statement fails as a whole.
    await expect(appendAuditWith(db(), event("call.executed"), first)).rejects.toThrow();
    expect(await head()).toBe(before);
    expect(await db().callRecord.count()).toBe(1);
    expect(await db().auditEvent.count()).toBe(2);
    expect(await verifyAuditChain()).toEqual({ ok: true, events: 2 });
  });

  it("appends no event for a write that changes no row, and says so", async () => {
    await appendAudit(db() as never, event("before"));
    const before = await head();
    const nothing = { sql: `UPDATE "CallRecord" SET "status" = 'void' WHERE "id" = $1`, params: ["no-such-record"] };
    await expect(appendAuditWith(db(), event("call.settled"), nothing)).rejects.toThrow(/changed nothing/);
    expect(await head()).toBe(before);
    expect(await db().auditEvent.count()).toBe(1);
    expect(await verifyAuditChain()).toEqual({ ok: true, events: 1 });
  });
});
