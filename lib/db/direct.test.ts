/**
 * The statements every MCP call sends go straight to the pool (direct), not through Prisma's client: they must
 * read and write exactly what Prisma would. A time is stored as the same UTC instant whatever the process's time
 * zone (pg would otherwise send a JavaScript Date in local time, which a `timestamp` column takes without its offset),
 * an audit event appended on the pool links into the same hash chain, and an error is the driver's own. Each text is
 * prepared by name on its connection, and stays usable after a refused statement and after the table changes.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resetDb } from "../../tests/support/db";
import { appendAuditWith } from "../audit/append";
import { verifyAuditChain } from "../audit/verify";
import { db, direct, preparedName, Prisma, PREPARED_TEXTS_MAX } from "./client";

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

  // pg_prepared_statements lists the session's named statements, the one being executed among them: a statement
  // sent unnamed is not there.
  const selfListing = (marker: string) => Prisma.sql`SELECT name, statement FROM pg_prepared_statements WHERE statement LIKE ${`%${marker}%`} /* ${Prisma.raw(marker)} */`;

  it("prepares each text under one name, the same on every use, a digest of the text", async () => {
    const sql = selfListing("direct-named");
    for (let i = 0; i < 3; i++) {
      const rows = await direct().query<{ name: string; statement: string }>(sql);
      expect(rows).toEqual([{ name: preparedName(sql.text), statement: sql.text }]);
    }
    expect(preparedName(sql.text)).toMatch(/^cs_[0-9a-f]{24}$/);
    expect(preparedName(`${sql.text} `)).not.toBe(preparedName(sql.text));
  });

  it("runs one text on many connections at once (the embedded server serves them all in one session)", async () => {
    const sql = Prisma.sql`SELECT ${1}::int + count(*)::int AS n FROM "User" /* direct-many-connections */`;
    const [{ n }] = await direct().query<{ n: number }>(Prisma.sql`SELECT 1 + count(*)::int AS n FROM "User"`);
    // One at a time, then many (new connections open after the text was prepared), then again.
    for (const width of [1, 24, 1, 24]) {
      const rows = await Promise.all(Array.from({ length: width }, () => direct().query<{ n: number }>(sql)));
      expect(rows).toEqual(Array.from({ length: width }, () => [{ n }]));
    }
  });

  it("runs a prepared text again after the session's prepared statements were dropped (DEALLOCATE ALL)", async () => {
    const sql = Prisma.sql`SELECT ${2}::int AS n /* direct-deallocated */`;
    for (let round = 0; round < 3; round++) {
      const rows = await Promise.all(Array.from({ length: 12 }, () => direct().query<{ n: number }>(sql)));
      expect(rows).toEqual(Array.from({ length: 12 }, () => [{ n: 2 }]));
      // On the embedded server every connection shares this session; on PostgreSQL only Prisma's connection loses them.
      await db().$executeRawUnsafe("DEALLOCATE ALL");
    }
  });

  it("sends every text unnamed with DB_PREPARE=0", async () => {
    process.env.DB_PREPARE = "0";
    try {
      const sql = selfListing("direct-unnamed");
      expect(preparedName(sql.text)).toBeUndefined();
      expect(await direct().query(sql)).toEqual([]);
    } finally {
      delete process.env.DB_PREPARE;
    }
  });

  it("a named statement the database refused is refused again the same way, and the connection still serves", async () => {
    for (let i = 0; i < 2; i++) await expect(direct().$executeRawUnsafe(`INSERT INTO "NoSuchTable" VALUES ($1)`, i)).rejects.toMatchObject({ code: "42P01" });
    await db().$executeRawUnsafe(`CREATE TABLE "NoSuchTable" (a int)`);
    try {
      expect(await direct().$executeRawUnsafe(`INSERT INTO "NoSuchTable" VALUES ($1)`, 7)).toBe(1);
      // A column added under a prepared statement (a migration while the server runs): the server plans it again.
      await db().$executeRawUnsafe(`ALTER TABLE "NoSuchTable" ADD COLUMN b text DEFAULT 'x'`);
      expect(await direct().query(Prisma.sql`SELECT a FROM "NoSuchTable" WHERE a = ${7}`)).toEqual([{ a: 7 }]);
      expect(await direct().$executeRawUnsafe(`INSERT INTO "NoSuchTable" VALUES ($1)`, 8)).toBe(1);
      expect(await direct().query(Prisma.sql`SELECT a FROM "NoSuchTable" WHERE a = ${7}`)).toEqual([{ a: 7 }]);
    } finally {
      await db().$executeRawUnsafe(`DROP TABLE "NoSuchTable"`);
    }
  });

  it(`names at most ${PREPARED_TEXTS_MAX} texts; any other is sent unnamed and still runs`, async () => {
    const named = Array.from({ length: PREPARED_TEXTS_MAX + 1 }, (_, i) => preparedName(`SELECT ${i} AS cap_test`));
    // Texts named before this test (by earlier tests in this process) take places of the cap: named, then unnamed.
    const first = named.indexOf(undefined);
    expect(first).toBeGreaterThan(0);
    expect(named.slice(first).every((n) => n === undefined)).toBe(true);
    expect(new Set(named.slice(0, first)).size).toBe(first);
    expect(preparedName("SELECT 0 AS cap_test")).toBe(named[0]);
    expect(await direct().query(Prisma.sql`SELECT ${1}::int AS over_the_cap`)).toEqual([{ over_the_cap: 1 }]);
    expect(preparedName(`SELECT $1::int AS over_the_cap`)).toBeUndefined();
  });
});
