/**
 * Planner statistics kept fresh: the rule that picks the table a sweep analyzes, analysis after migrating (also
 * when nothing new was applied but tables were never analyzed), and one replica at a time.
 */
import pg from "pg";
import { beforeEach, describe, expect, inject, it } from "vitest";
import { resetDb } from "../../tests/support/db";
import { db } from "./client";
import { applyMigrations } from "./migrate";
import { ANALYZE_LOCK, refreshStatistics, tableStatistics, tableToAnalyze, type TableStats } from "./statistics";

const NOW = new Date("2100-01-01T12:00:00Z");
const MIN = 60_000;
const stat = (table: string, over: Partial<TableStats> = {}): TableStats => ({
  table, neverAnalyzed: false, modifiedSinceAnalyze: 0, rows: 1_000, analyzedAt: new Date(NOW.getTime() - 60 * MIN), ...over,
});

describe("which table a sweep analyzes (one per pass)", () => {
  it("a table never analyzed first, then the one changed most past autovacuum's threshold (50 rows + 10 %)", () => {
    expect(tableToAnalyze([stat("Task", { modifiedSinceAnalyze: 900 }), stat("AuditEvent", { neverAnalyzed: true })], NOW, 10 * MIN)).toBe("AuditEvent");
    expect(tableToAnalyze([stat("Task", { modifiedSinceAnalyze: 150 })], NOW, 10 * MIN)).toBeNull();
    expect(tableToAnalyze([stat("Task", { modifiedSinceAnalyze: 151 })], NOW, 10 * MIN)).toBe("Task");
    expect(tableToAnalyze([stat("Task", { modifiedSinceAnalyze: 200 }), stat("Notification", { rows: 100, modifiedSinceAnalyze: 100 })], NOW, 10 * MIN)).toBe("Notification");
  });

  it("a changed table is analyzed at most every interval; a never-analyzed one at once", () => {
    const recent = new Date(NOW.getTime() - 5 * MIN);
    expect(tableToAnalyze([stat("Task", { modifiedSinceAnalyze: 10_000, analyzedAt: recent })], NOW, 10 * MIN)).toBeNull();
    expect(tableToAnalyze([stat("Task", { modifiedSinceAnalyze: 10_000, analyzedAt: recent })], NOW, 4 * MIN)).toBe("Task");
    expect(tableToAnalyze([stat("Task", { neverAnalyzed: true, analyzedAt: recent })], NOW, 10 * MIN)).toBe("Task");
  });
});

const taskStats = async () => (await tableStatistics(db())).find((s) => s.table === "Task")!;

describe("statistics on the database", () => {
  beforeEach(resetDb);

  it("migrating analyzes the tables never analyzed even when no migration is new (a first start on an existing data folder)", async () => {
    // Emptied tables are as good as never analyzed.
    expect((await taskStats()).neverAnalyzed).toBe(true);
    expect(await applyMigrations(inject("databaseUrl"))).toEqual([]);
    expect((await taskStats()).neverAnalyzed).toBe(false);
  }, 120_000);

  // Several replicas share a PostgreSQL. The embedded database has one owner process and one backend for all its
  // connections (a connection inside a transaction holds the whole database), so there is no other replica to race.
  it.skipIf(inject("databaseKind") === "embedded")("only one replica analyzes at a time: while another holds the lock a pass skips, after it the pass analyzes", async () => {
    const other = new pg.Client({ connectionString: inject("databaseUrl") });
    await other.connect();
    try {
      await other.query("BEGIN");
      expect((await other.query("SELECT pg_try_advisory_xact_lock($1) AS locked", [ANALYZE_LOCK])).rows[0].locked).toBe(true);
      expect(await refreshStatistics(db(), NOW)).toBeNull();
      expect((await taskStats()).neverAnalyzed).toBe(true);
      await other.query("COMMIT");
    } finally {
      await other.end();
    }
    const analyzed: string[] = [];
    for (let i = 0; i < 20; i++) {
      const t = await refreshStatistics(db(), NOW);
      if (!t) break;
      analyzed.push(t);
    }
    expect(analyzed).toContain("Task");
    expect(new Set(analyzed).size).toBe(analyzed.length);
    expect((await taskStats()).neverAnalyzed).toBe(false);
  });
});
