/**
 * Recent history as policy context: the sums and counts of a tool's calls over a window, grouped per resource,
 * agent, user or tool, counting calls that ran, may have run, are about to run or wait for approval, never the
 * call being judged. Splitting a call into parts, one after another or all at the same instant, is judged on
 * the total.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { db } from "../db/client";
import { T0, at, DAY, HOUR, SEC } from "../../tests/support/proof";
import {
  executedRecordWrite,
  groupLockKey,
  linkRecordToTask,
  recordPendingForTask,
  HistoryInputError,
  MAX_WINDOW_SEC,
  measureHistory,
  purgeCallRecords,
  settleRecord,
  withHistory,
  type HistoryCall,
  type HistoryDef,
} from "./history";

beforeEach(async () => {
  await db().callRecord.deleteMany();
});

const CALL: HistoryCall = {
  tool: "wire_transfer",
  agentId: "agent-a",
  userId: "user-u",
  resourceType: "account",
  resourceId: "DE89370400440532013000",
  money: { minor: 2_500_000, currency: "USD" },
};

type Status = "reserved" | "pending" | "executed" | "void";

/** A record as an earlier call left it. */
async function put(
  over: Partial<Omit<HistoryCall, "money">> & { minor?: number | null; currency?: string | null; status?: Status; createdAt?: Date; taskId?: string; snapshot?: object },
): Promise<string> {
  const minor = over.minor === undefined ? 100 : over.minor;
  const row = await db().callRecord.create({
    data: {
      tool: over.tool ?? CALL.tool,
      agentId: over.agentId ?? CALL.agentId,
      userId: over.userId ?? CALL.userId,
      resourceType: over.resourceType ?? CALL.resourceType,
      resourceId: over.resourceId ?? CALL.resourceId,
      amountMinor: minor === null ? null : BigInt(minor),
      currency: minor === null ? null : (over.currency ?? "USD"),
      status: over.status ?? "executed",
      taskId: over.taskId ?? null,
      createdAt: over.createdAt ?? at(-HOUR),
      ...(over.snapshot ? { snapshot: over.snapshot } : {}),
    },
  });
  return row.id;
}

const def = (per: HistoryDef["per"], windowSec = DAY / 1000, name = `by_${per}`): HistoryDef => ({ name, tool: CALL.tool, windowSec, per });

describe("windows: a call counts while it was made within the window before now", () => {
  it("a call made exactly windowSec before now is out of the window; one made 1 ms later is in", async () => {
    const defs = [def("resource", 3600)];
    await put({ minor: 100, createdAt: at(-HOUR) });
    expect(await measureHistory(defs, CALL, T0)).toEqual({ by_resource: { total: 0, count: 0 } });
    await put({ minor: 200, createdAt: at(-HOUR + 1) });
    expect(await measureHistory(defs, CALL, T0)).toEqual({ by_resource: { total: 200, count: 1 } });
    // The same two records one millisecond earlier: both inside.
    expect(await measureHistory(defs, CALL, at(-1))).toEqual({ by_resource: { total: 300, count: 2 } });
  });

  it("each definition has its own window: a 1-hour and a 24-hour total of the same group differ", async () => {
    await put({ minor: 100, createdAt: at(-30 * 60 * SEC) });
    await put({ minor: 200, createdAt: at(-5 * HOUR) });
    await put({ minor: 400, createdAt: at(-2 * DAY) });
    const values = await measureHistory([def("resource", 3600, "hour"), def("resource", 86400, "day")], CALL, T0);
    expect(values).toEqual({ hour: { total: 100, count: 1 }, day: { total: 300, count: 2 } });
  });
});

describe("grouping: per resource, per agent, per user, per tool", () => {
  it("each call is counted in the groups it shares with the call being judged, and only calls of the same tool count", async () => {
    await put({ minor: 100 }); // same everything
    await put({ minor: 200, resourceId: "other-account" }); // same agent and user
    await put({ minor: 400, agentId: "agent-b" }); // same resource and user, another agent of the same user
    await put({ minor: 800, agentId: "agent-c", userId: "user-v", resourceId: "third-account" }); // the tool only
    await put({ minor: 1600, tool: "issue_refund" }); // another tool: never counted
    await put({ minor: 3200, resourceType: "order" }); // same id, another kind of resource: not the same resource
    const values = await measureHistory([def("resource"), def("agent"), def("user"), def("tool")], CALL, T0);
    expect(values).toEqual({
      by_resource: { total: 500, count: 2 },
      by_agent: { total: 3500, count: 3 },
      by_user: { total: 3900, count: 4 },
      by_tool: { total: 4700, count: 5 },
    });
  });

  it("only the definitions of the call's tool get a value; the others are absent", async () => {
    await put({ minor: 100 });
    const values = await measureHistory([def("resource"), { name: "refunds", tool: "issue_refund", windowSec: 3600, per: "resource" }], CALL, T0);
    expect(values).toEqual({ by_resource: { total: 100, count: 1 } });
  });
});

describe("currency: the total sums the call's currency only; the count counts every counted call", () => {
  it("a USD call totals USD, an EUR call totals EUR, a call without money totals 0; all count three calls", async () => {
    await put({ minor: 100, currency: "EUR" });
    await put({ minor: 200, currency: "USD" });
    await put({ minor: null });
    const defs = [def("resource")];
    expect(await measureHistory(defs, { ...CALL, money: { minor: 1, currency: "EUR" } }, T0)).toEqual({ by_resource: { total: 100, count: 3 } });
    expect(await measureHistory(defs, CALL, T0)).toEqual({ by_resource: { total: 200, count: 3 } });
    expect(await measureHistory(defs, { ...CALL, money: null }, T0)).toEqual({ by_resource: { total: 0, count: 3 } });
  });
});

describe("status: reserved, pending and executed calls count; void calls do not", () => {
  it("a void call (it never ran) is neither summed nor counted", async () => {
    await put({ minor: 1, status: "reserved" });
    await put({ minor: 2, status: "pending" });
    await put({ minor: 4, status: "executed" });
    await put({ minor: 8, status: "void" });
    expect(await measureHistory([def("resource")], CALL, T0)).toEqual({ by_resource: { total: 7, count: 3 } });
  });

  it("a record is settled once: executed or void, and never changed again", async () => {
    const a = await put({ status: "pending" });
    expect(await settleRecord({ id: a }, "void", T0)).toBe(true);
    expect(await settleRecord({ id: a }, "executed", at(SEC))).toBe(false);
    expect(await db().callRecord.findUniqueOrThrow({ where: { id: a } })).toMatchObject({ status: "void", settledAt: T0 });
    const b = await put({ status: "reserved", taskId: "task-b" });
    expect(await settleRecord({ taskId: "task-b" }, "executed", T0)).toBe(true);
    expect(await settleRecord({ taskId: "task-b" }, "void", at(SEC))).toBe(false);
    expect(await db().callRecord.findUniqueOrThrow({ where: { id: b } })).toMatchObject({ status: "executed", settledAt: T0 });
  });
});

describe("the call being judged is never in its own history", () => {
  it("re-evaluation at execution leaves out the task's own record, and only it", async () => {
    await put({ minor: 100, status: "pending", taskId: "task-a" });
    await put({ minor: 200, status: "pending", taskId: "task-b" });
    await put({ minor: 400 });
    const defs = [def("resource")];
    expect(await measureHistory(defs, CALL, T0)).toEqual({ by_resource: { total: 700, count: 3 } });
    expect(await measureHistory(defs, CALL, T0, { excludeTaskId: "task-a" })).toEqual({ by_resource: { total: 600, count: 2 } });
  });

  it("withHistory decides on the calls before this one and then records this one", async () => {
    await put({ minor: 100 });
    const seen: unknown[] = [];
    const out = await withHistory([def("resource")], CALL, T0, (v) => {
      seen.push(v);
      return { result: "allowed", record: "reserved" };
    });
    expect(seen).toEqual([{ by_resource: { total: 100, count: 1 } }]);
    expect(out.result).toBe("allowed");
    const row = await db().callRecord.findUniqueOrThrow({ where: { id: out.recordId! } });
    expect(row).toMatchObject({
      tool: CALL.tool,
      agentId: CALL.agentId,
      userId: CALL.userId,
      resourceType: CALL.resourceType,
      resourceId: CALL.resourceId,
      amountMinor: 2_500_000n,
      currency: "USD",
      status: "reserved",
      taskId: null,
      createdAt: T0,
      settledAt: null,
    });
    expect(await measureHistory([def("resource")], CALL, at(SEC))).toEqual({ by_resource: { total: 2_500_100, count: 2 } });
  });
});

describe("recording", () => {
  it("a refused call (record null) writes nothing; a decide that throws writes nothing and its error reaches the caller", async () => {
    const refused = await withHistory([def("resource")], CALL, T0, () => ({ result: "denied", record: null }));
    expect(refused).toEqual({ result: "denied", recordId: null });
    await expect(
      withHistory([def("resource")], CALL, T0, () => {
        throw new Error("the policy could not be evaluated");
      }),
    ).rejects.toThrow("the policy could not be evaluated");
    expect(await db().callRecord.count()).toBe(0);
  });

  it("a tool without definitions still records its calls, for definitions added later", async () => {
    const seen: unknown[] = [];
    const reserved = await withHistory([], { ...CALL, money: null }, T0, (v) => {
      seen.push(v);
      return { result: null, record: "reserved" };
    });
    expect(seen).toEqual([{}]);
    expect(await db().callRecord.findUniqueOrThrow({ where: { id: reserved.recordId! } })).toMatchObject({ status: "reserved", amountMinor: null, currency: null });
    // A pending call is written with the task it opens, in that transaction (nothing waited for it).
    const pending = await withHistory([], CALL, T0, () => ({ result: null, record: "pending" }));
    expect(pending).toEqual({ result: null, recordId: null, recordWithTask: true });
    expect(await db().callRecord.count()).toBe(1);
    await db().$transaction((tx) => recordPendingForTask(tx, CALL, "task-1", T0));
    expect(await db().callRecord.findUniqueOrThrow({ where: { taskId: "task-1" } })).toMatchObject({ status: "pending", amountMinor: 2_500_000n, currency: "USD" });
    expect(await measureHistory([def("resource")], CALL, at(SEC))).toEqual({ by_resource: { total: 2_500_000, count: 2 } });
  });

  it("a record is linked to one task: again to the same task is a no-op, to another or once settled it is refused", async () => {
    const reserved = await put({ status: "reserved" });
    await linkRecordToTask(reserved, "task-1");
    expect(await db().callRecord.findUniqueOrThrow({ where: { id: reserved } })).toMatchObject({ status: "pending", taskId: "task-1" });
    await linkRecordToTask(reserved, "task-1");
    await expect(linkRecordToTask(reserved, "task-2")).rejects.toThrow("the call record is settled or belongs to another task");
    expect(await db().callRecord.findUniqueOrThrow({ where: { id: reserved } })).toMatchObject({ status: "pending", taskId: "task-1" });
    const settled = await put({ status: "void" });
    await expect(linkRecordToTask(settled, "task-3")).rejects.toThrow("the call record is settled or belongs to another task");
    expect(await db().callRecord.findUniqueOrThrow({ where: { id: settled } })).toMatchObject({ status: "void", taskId: null });
    await expect(linkRecordToTask("no-such-record", "task-4")).rejects.toThrow("the call record does not exist");
  });

  it("calls wait for each other by group: the tool, what the window is per, and every part of the group's key", () => {
    const key = (per: HistoryDef["per"], over: Partial<HistoryCall> = {}) => groupLockKey(over.tool ?? CALL.tool, per, { ...CALL, ...over });
    // Two resources of different types with the same id are two groups, so neither waits for the other.
    expect(key("resource", { resourceType: "order" })).not.toBe(key("resource"));
    expect(key("resource", { resourceId: "other" })).not.toBe(key("resource"));
    expect(key("resource", { agentId: "agent-b", userId: "user-v" })).toBe(key("resource"));
    expect(key("agent", { agentId: "agent-b" })).not.toBe(key("agent"));
    expect(key("agent", { resourceId: "other" })).toBe(key("agent"));
    expect(key("user", { userId: "user-v" })).not.toBe(key("user"));
    expect(key("tool", { agentId: "agent-b", resourceId: "other" })).toBe(key("tool"));
    expect(key("tool", { tool: "issue_refund" })).not.toBe(key("tool"));
    expect(new Set([key("resource"), key("agent"), key("user"), key("tool")]).size).toBe(4);
  });

  it("a definition or call it cannot count correctly is refused, never counted wrong", async () => {
    const ok = () => ({ result: null, record: "reserved" as const });
    await expect(withHistory([def("resource", 0)], CALL, T0, ok)).rejects.toThrow(HistoryInputError);
    await expect(withHistory([def("resource", MAX_WINDOW_SEC + 1)], CALL, T0, ok)).rejects.toThrow(/at most 400 days/);
    await expect(withHistory([def("resource"), def("agent", 60, "by_resource")], CALL, T0, ok)).rejects.toThrow(/share a name/);
    await expect(withHistory([{ ...def("resource"), per: "order" as never }], CALL, T0, ok)).rejects.toThrow(HistoryInputError);
    await expect(withHistory([{ ...def("resource"), per: "order" as never }], CALL, T0, ok)).rejects.toThrow(/: per must be resource, agent, user or tool$/);
    // Refused as input, not by a later conversion: a fraction, and a whole number past what a double holds exactly.
    await expect(withHistory([def("resource")], { ...CALL, money: { minor: 1.5, currency: "USD" } }, T0, ok)).rejects.toThrow(HistoryInputError);
    await expect(withHistory([def("resource")], { ...CALL, money: { minor: 2 ** 60, currency: "USD" } }, T0, ok)).rejects.toThrow(HistoryInputError);
    await expect(withHistory([], { ...CALL, money: { minor: 2 ** 60, currency: "USD" } }, T0, ok)).rejects.toThrow(HistoryInputError);
    await expect(withHistory([def("resource")], { ...CALL, money: { minor: -100, currency: "USD" } }, T0, ok)).rejects.toThrow(/non-negative/);
    await expect(withHistory([], { ...CALL, money: { minor: 100, currency: "" } }, T0, ok)).rejects.toThrow(/currency/);
    expect(await db().callRecord.count()).toBe(0);
  });

  it("every other way in refuses the same money, and an amount of zero is counted like any other", async () => {
    const bad = { ...CALL, money: { minor: -1, currency: "USD" } };
    expect(() => executedRecordWrite(bad, T0)).toThrow(/non-negative/);
    await expect(measureHistory([def("resource")], bad, T0)).rejects.toThrow(/non-negative/);
    await expect(db().$transaction((tx) => recordPendingForTask(tx, bad, "task-1", T0))).rejects.toThrow(/non-negative/);
    expect(await db().callRecord.count()).toBe(0);
    const zero = { ...CALL, money: { minor: 0, currency: "USD" } };
    await withHistory([def("resource")], zero, T0, () => ({ result: null, record: "reserved" as const }));
    expect(await measureHistory([def("resource")], zero, at(SEC))).toEqual({ by_resource: { total: 0, count: 1 } });
    expect(await measureHistory([{ ...def("resource"), tool: "issue_refund" }], zero, at(SEC))).toEqual({});
  });

  it("a call run by a tool no window reads is recorded after the fact with its money, counted by a window added later", async () => {
    const w = executedRecordWrite({ ...CALL, money: { minor: 2500, currency: "USD" } }, T0);
    await db().$executeRawUnsafe(w.sql, ...w.params);
    expect(await db().callRecord.findFirstOrThrow()).toMatchObject({ status: "executed", amountMinor: 2500n, currency: "USD" });
    expect(await measureHistory([def("resource")], CALL, at(SEC))).toEqual({ by_resource: { total: 2500, count: 1 } });
  });
});

/** Allows a call while the window's total plus its own amount stays within `limit`; beyond it, it needs approval. */
function withinLimit(name: string, amount: number, limit: number) {
  return (v: Record<string, { total: number; count: number }>) => {
    const allowed = v[name].total + amount <= limit;
    return { result: allowed ? ("allow" as const) : ("requestable" as const), record: allowed ? ("reserved" as const) : ("pending" as const) };
  };
}

describe("splitting: the parts of a split call are judged on their total", () => {
  it("refunds of EUR 150, 150 and 20 on one order: once the order's total crosses EUR 150, each next refund needs approval", async () => {
    const order = { ...CALL, tool: "issue_refund", resourceType: "order", resourceId: "O-2289" };
    const defs: HistoryDef[] = [{ name: "order_total", tool: "issue_refund", windowSec: 30 * 24 * 3600, per: "resource" }];
    const decisions: string[] = [];
    for (const [i, minor] of [15_000, 15_000, 2_000].entries()) {
      const out = await withHistory(defs, { ...order, money: { minor, currency: "EUR" } }, at(i * HOUR), withinLimit("order_total", minor, 15_000));
      decisions.push(out.result);
    }
    expect(decisions).toEqual(["allow", "requestable", "requestable"]);
    // The pending ones count too: the next refund is judged on EUR 320 already asked for.
    expect(await measureHistory(defs, { ...order, money: { minor: 1, currency: "EUR" } }, at(3 * HOUR))).toEqual({ order_total: { total: 32_000, count: 3 } });
  });

  it("twelve wire transfers of USD 25,000 to one account at the same instant: exactly one runs, eleven need approval", async () => {
    const defs = [def("resource", 24 * 3600, "account_24h")];
    const outs = await Promise.all(Array.from({ length: 12 }, () => withHistory(defs, CALL, T0, withinLimit("account_24h", 2_500_000, 2_500_000))));
    expect(outs.filter((o) => o.result === "allow")).toHaveLength(1);
    expect(await db().callRecord.groupBy({ by: ["status"], _count: true, orderBy: { status: "asc" } })).toEqual([
      { status: "pending", _count: 11 },
      { status: "reserved", _count: 1 },
    ]);
  });
});

describe("splitting by concurrency: calls of one group at the same instant take turns", () => {
  const N = 20;

  it(`${N} concurrent calls of USD 25,000 under a USD 100,000 limit: exactly 4 are allowed, never more`, async () => {
    const defs = [def("resource", 24 * 3600, "account_24h")];
    const outs = await Promise.all(
      Array.from({ length: N }, () => withHistory(defs, CALL, T0, withinLimit("account_24h", 2_500_000, 10_000_000))),
    );
    expect(outs.filter((o) => o.result === "allow")).toHaveLength(4);
    expect(await db().callRecord.count({ where: { status: "reserved" } })).toBe(4);
    expect(await db().callRecord.count({ where: { status: "pending" } })).toBe(N - 4);
  });

  it(`${N} concurrent calls counted in two groups each (per account and per agent): every group's limit holds exactly, without deadlock`, async () => {
    // Per account at most 2 calls a day, per agent at most 6; 5 calls to each of 4 accounts by one agent.
    // Whatever the order, exactly 6 run: each account's third call and the agent's seventh are refused.
    const defs = [def("resource", 24 * 3600, "account"), def("agent", 24 * 3600, "agent")];
    const outs = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        withHistory(defs, { ...CALL, resourceId: `account-${i % 4}` }, T0, (v) => {
          const allowed = v.account.count < 2 && v.agent.count < 6;
          return { result: allowed, record: allowed ? "reserved" : null };
        }),
      ),
    );
    expect(outs.filter((o) => o.result)).toHaveLength(6);
    const perAccount = await db().callRecord.groupBy({ by: ["resourceId"], _count: true });
    expect(perAccount.every((g) => g._count <= 2)).toBe(true);
    expect(await db().callRecord.count()).toBe(6);
  });
});

describe("retention: records older than 400 days are purged in small bounded batches", () => {
  it("a record created more than 400 days ago goes, one created exactly 400 days ago stays; each batch is bounded", async () => {
    const cutoff = at(-400 * DAY);
    for (let i = 0; i < 7; i++) await put({ createdAt: at(-1 - i, cutoff) });
    const kept = await put({ createdAt: cutoff });
    const recent = await put({ createdAt: at(-HOUR) });
    expect(await purgeCallRecords(T0, { batch: 3, maxBatches: 2 })).toBe(6);
    expect(await db().callRecord.count()).toBe(3);
    expect(await purgeCallRecords(T0, { batch: 3, maxBatches: 2 })).toBe(1);
    expect((await db().callRecord.findMany({ select: { id: true }, orderBy: { createdAt: "asc" } })).map((r) => r.id)).toEqual([kept, recent]);
    expect(await purgeCallRecords(T0)).toBe(0);
  });

  it("what policy evaluated is cleared 31 days after the call (the preview reads 30), and the record stays for its windows", async () => {
    const snapshot = { args: { to: "acct-1", amount: 10 }, resource: { type: "account", id: "acct-1", properties: {} } };
    const put31 = await put({ snapshot, createdAt: at(-31 * DAY - 1) });
    const putEdge = await put({ snapshot, createdAt: at(-31 * DAY) });
    const put30 = await put({ snapshot, createdAt: at(-30 * DAY) });
    expect(await purgeCallRecords(T0)).toBe(0);
    const rows = await db().callRecord.findMany({ where: { id: { in: [put31, putEdge, put30] } } });
    const snap = (id: string) => rows.find((r) => r.id === id)!.snapshot;
    expect(snap(put31)).toBeNull();
    expect(snap(putEdge)).toEqual(snapshot);
    expect(snap(put30)).toEqual(snapshot);
  });
});
