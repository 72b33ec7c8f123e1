/**
 * The statements every MCP call sends go straight to the pool (direct), not through Prisma's client: they must
 * read and write exactly what Prisma would. A time is stored as the same UTC instant whatever the process's time
 * zone (pg would otherwise send a JavaScript Date in local time, which a `timestamp` column takes without its offset),
 * an audit event appended on the pool links into the same hash chain, and an error is the driver's own.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resetDb } from "../../tests/support/db";
import { appendAuditWith } from "../audit/append";
import { verifyAuditChain } from "../audit/verify";
import { db, direct, Prisma } from "./client";

beforeEach(resetDb);
const zone = process.env.TZ;
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

describe("direct", () => {
  it("reads rows with Prisma's placeholders and values, nested fragments included", async () => {
    const also = Prisma.sql`${"x"}::text AS extra`;
    const rows = await direct().query<{ n: number; extra: string; email: string }>(
      Prisma.sql`SELECT 1 AS n, ${also}, email FROM "User" WHERE email = ${"lena.lead@countersign.test"} OR email = ${"nobody@x"}`,
    );
    expect(rows).toEqual([{ n: 1, extra: "x", email: "lena.lead@countersign.test" }]);
  });

  it.each(["America/New_York", "Asia/Kolkata", "UTC"])("stores a time as its UTC instant with the process in %s, and the chain still verifies", async (tz) => {
    process.env.TZ = tz;
    const at = new Date("2026-07-01T23:30:00.123Z");
    await appendAuditWith(direct(), { type: "test.direct", actor: "system:test", at, data: { tz } }, null);
    const row = await db().auditEvent.findFirstOrThrow({ where: { type: "test.direct" } });
    expect(row.at.toISOString()).toBe(at.toISOString());
    expect((await verifyAuditChain()).ok).toBe(true);
  });

  it("fails with the driver's error for a statement the database refuses", async () => {
    await expect(direct().$executeRawUnsafe(`INSERT INTO "NoSuchTable" VALUES ($1)`, 1)).rejects.toMatchObject({ code: "42P01" });
  });
});
