/**
 * The policy head's change epochs (ChangeEpoch in prisma/schema.prisma): every MCP request learns from them whether
 * the form rules or the upstream catalog changed, instead of fingerprinting the rows. Triggers keep them, so a change
 * made any way (the console, the policy file, plain SQL) moves them; a server's health or discovery claim does not;
 * a change rolled back leaves them; a value is never reused, even after the tables are emptied.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { resetDb } from "../../tests/support/db";
import { db } from "../db/client";
import { currentPolicy } from "./store";

beforeEach(resetDb);

async function epochs(): Promise<{ rules: bigint; catalog: bigint }> {
  const rows = await db().changeEpoch.findMany();
  const of = (name: string) => rows.find((r) => r.name === name)?.value ?? -1n;
  return { rules: of("rules"), catalog: of("catalog") };
}

async function server(): Promise<string> {
  await db().$executeRaw`INSERT INTO "UpstreamServer" ("id", "name", "transport", "url") VALUES ('srv-1', 'files', 'streamable-http', 'http://127.0.0.1:9/mcp')`;
  return "srv-1";
}

describe("the change epochs", () => {
  it("move for every change to the form rules, by any statement, and leave the catalog's as it was", async () => {
    for (const change of [
      () => db().$executeRaw`UPDATE "PolicyRule" SET "reason" = 'Changed by hand.' WHERE "active"`,
      () => db().$executeRaw`DELETE FROM "PolicyRule" WHERE "id" = (SELECT "id" FROM "PolicyRule" ORDER BY "id" LIMIT 1)`,
    ]) {
      const before = await epochs();
      await change();
      const after = await epochs();
      expect(after.rules).toBeGreaterThan(before.rules);
      expect(after.catalog).toBe(before.catalog);
    }
  });

  it("move the catalog's for a server registered, changed or removed and a tool added or changed, not for health or a discovery claim", async () => {
    const moves = async (change: () => Promise<unknown>) => {
      const before = await epochs();
      await change();
      const after = await epochs();
      expect(after.rules).toBe(before.rules);
      return after.catalog > before.catalog;
    };
    expect(await moves(server)).toBe(true);
    expect(await moves(() => db().upstreamServer.update({ where: { id: "srv-1" }, data: { enabled: false } }))).toBe(true);
    expect(await moves(() => db().upstreamServer.update({ where: { id: "srv-1" }, data: { root: "/srv/files" } }))).toBe(true);
    expect(
      await moves(() =>
        db().upstreamTool.create({ data: { id: "t-1", serverId: "srv-1", name: "read_file", accepted: { description: "reads" }, acceptedDigest: "d1" } }),
      ),
    ).toBe(true);
    expect(await moves(() => db().upstreamTool.update({ where: { id: "t-1" }, data: { status: "changed" } }))).toBe(true);
    expect(await moves(() => db().upstreamServer.update({ where: { id: "srv-1" }, data: { health: "down", healthNote: "gone", healthAt: new Date() } }))).toBe(false);
    expect(await moves(() => db().upstreamServer.update({ where: { id: "srv-1" }, data: { discoveredAt: new Date() } }))).toBe(false);
    expect(await moves(() => db().upstreamServer.delete({ where: { id: "srv-1" } }))).toBe(true);
  });

  it("stay as they were when the change is rolled back", async () => {
    const before = await epochs();
    await expect(
      db().$transaction(async (tx) => {
        await tx.$executeRaw`UPDATE "PolicyRule" SET "reason" = 'Never committed.' WHERE "active"`;
        await tx.$executeRaw`INSERT INTO "UpstreamServer" ("id", "name", "transport", "url") VALUES ('srv-2', 'other', 'streamable-http', 'http://127.0.0.1:9/mcp')`;
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await epochs()).toEqual(before);
  });

  it("never take a value again, even after every table is emptied and filled", async () => {
    const before = await epochs();
    await resetDb();
    const after = await epochs();
    expect(after.rules).toBeGreaterThan(before.rules);
    expect(after.catalog).toBeGreaterThan(before.catalog);
  });
});

describe("currentPolicy", () => {
  it("reuses the compiled policy while the epochs stay, and compiles the rules changed by plain SQL at the next call", async () => {
    const first = await currentPolicy();
    expect(await currentPolicy()).toBe(first);
    await db().$executeRaw`UPDATE "PolicyRule" SET "reason" = 'Changed by hand.' WHERE "active"`;
    const next = await currentPolicy();
    expect(next).not.toBe(first);
    expect([...next.meta.values()].some((m) => m.reason === "Changed by hand.")).toBe(true);
  });

  it("compiles afresh on every call while the rules' epoch is missing", async () => {
    await db().$executeRaw`DELETE FROM "ChangeEpoch"`;
    const first = await currentPolicy();
    expect(await currentPolicy()).not.toBe(first);
  });
});
