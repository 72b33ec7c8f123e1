/**
 * Planner statistics kept fresh. Neither the embedded database (PGlite has no autovacuum) nor a PostgreSQL with
 * autovacuum off ever analyzes a table on its own; once a table has grown unanalyzed, or far past its last
 * statistics, the planner can turn a one-row conditional update into a scan. So:
 *
 * - after migrating, every table that was never analyzed is analyzed (a fresh database, or a data folder an older
 *   version created), and after new migrations the hot tables are analyzed again;
 * - the sweeper analyzes at most one hot table per pass, the one that changed most since its last statistics
 *   (pg_stat_user_tables.n_mod_since_analyze, which PGlite keeps as well), once it changed by more than
 *   autovacuum's own threshold (50 rows + 10 %), and a given table at most every COUNTERSIGN_ANALYZE_EVERY_MS
 *   (10 minutes) unless it was never analyzed. One replica analyzes at a time: the pass holds a transaction-scoped
 *   advisory lock and a replica that does not get it skips the pass.
 *
 * On the embedded database a statement holds the whole database, so there ANALYZE samples fewer rows
 * (default_statistics_target 10, 3,000 rows instead of 30,000): enough for the planner to know a table's size and
 * its dominant values, at a fraction of the stall.
 */
import type { PrismaClient } from "./generated/client";

/** The tables the request path and the sweeper query by state and time: they grow and their distributions move. */
export const HOT_TABLES = [
  "Task",
  "ApprovalRequest",
  "Review",
  "SubmissionIntent",
  "DedupSlot",
  "AuditEvent",
  "CallRecord",
  "Clarification",
  "ConsumedRequestState",
  "Notification",
  "WebhookDelivery",
] as const;

/** Autovacuum's defaults (autovacuum_analyze_threshold, autovacuum_analyze_scale_factor). */
const THRESHOLD_ROWS = 50;
const SCALE = 0.1;
/** Sample size on the embedded database, where ANALYZE stalls every other statement while it runs. */
const EMBEDDED_STATISTICS_TARGET = 10;
/** Key of the advisory lock one replica holds while it analyzes ("countersign:analyze"). */
export const ANALYZE_LOCK = 0x63734e41; // "csNA"

export function analyzeEveryMs(): number {
  const n = Number(process.env.COUNTERSIGN_ANALYZE_EVERY_MS ?? 10 * 60_000);
  return Number.isFinite(n) && n >= 0 ? n : 10 * 60_000;
}

type Sql = Pick<PrismaClient, "$queryRawUnsafe" | "$executeRawUnsafe">;

const quoted = (table: (typeof HOT_TABLES)[number]) => `"${table}"`;

export type TableStats = { table: string; neverAnalyzed: boolean; modifiedSinceAnalyze: number; rows: number; analyzedAt: Date | null };

/** What the database knows of each hot table's statistics: never analyzed (reltuples -1), changes since, when. */
export async function tableStatistics(sql: Sql): Promise<TableStats[]> {
  const rows = await sql.$queryRawUnsafe<{ relname: string; reltuples: number; n_mod: bigint | number | null; analyzed_at: Date | null }[]>(
    `SELECT c.relname, c.reltuples::float8 AS reltuples, s.n_mod_since_analyze AS n_mod,
            GREATEST(s.last_analyze, s.last_autoanalyze) AS analyzed_at
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
      WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname = ANY($1::text[])`,
    [...HOT_TABLES],
  );
  return rows.map((r) => ({
    table: r.relname,
    neverAnalyzed: Number(r.reltuples) < 0,
    modifiedSinceAnalyze: Number(r.n_mod ?? 0),
    rows: Math.max(0, Number(r.reltuples)),
    analyzedAt: r.analyzed_at ? new Date(r.analyzed_at) : null,
  }));
}

/**
 * The rule: which hot table, if any, this pass analyzes. A table never analyzed comes first; otherwise the one whose
 * changes since its statistics are the largest share of its size, among those past autovacuum's threshold and not
 * analyzed within `everyMs`.
 */
export function tableToAnalyze(stats: TableStats[], now: Date, everyMs: number): string | null {
  const never = stats.find((s) => s.neverAnalyzed);
  if (never) return never.table;
  let best: { table: string; share: number } | null = null;
  for (const s of stats) {
    if (s.modifiedSinceAnalyze <= THRESHOLD_ROWS + SCALE * s.rows) continue;
    if (s.analyzedAt && now.getTime() - s.analyzedAt.getTime() < everyMs) continue;
    const share = s.modifiedSinceAnalyze / Math.max(1, s.rows);
    if (!best || share > best.share) best = { table: s.table, share };
  }
  return best?.table ?? null;
}

async function embedded(sql: Sql): Promise<boolean> {
  const rows = await sql.$queryRawUnsafe<{ v: string }[]>(`SELECT version() AS v`);
  return /PGlite/i.test(rows[0]?.v ?? "");
}

async function analyzeTables(client: PrismaClient, tables: string[]): Promise<string[]> {
  const known = tables.filter((t): t is (typeof HOT_TABLES)[number] => (HOT_TABLES as readonly string[]).includes(t));
  if (known.length === 0) return [];
  const small = await embedded(client);
  return client.$transaction(async (tx) => {
    const got = await tx.$queryRawUnsafe<{ locked: boolean }[]>(`SELECT pg_try_advisory_xact_lock(${ANALYZE_LOCK}) AS locked`);
    if (!got[0]?.locked) return [];
    if (small) await tx.$executeRawUnsafe(`SET LOCAL default_statistics_target = ${EMBEDDED_STATISTICS_TARGET}`);
    for (const t of known) await tx.$executeRawUnsafe(`ANALYZE ${quoted(t)}`);
    return known;
  }, { timeout: 120_000 });
}

/**
 * Part of migrating: the hot tables never analyzed, or all of them when `migrated` (new migrations may have added
 * indexes or changed what the tables hold). Returns the tables analyzed.
 */
export async function analyzeAfterMigrations(client: PrismaClient, migrated: boolean): Promise<string[]> {
  const stats = await tableStatistics(client);
  const tables = migrated ? stats.map((s) => s.table) : stats.filter((s) => s.neverAnalyzed).map((s) => s.table);
  return analyzeTables(client, tables);
}

/** The sweeper's maintenance: analyzes at most one hot table (see tableToAnalyze). Returns it, or null. */
export async function refreshStatistics(client: PrismaClient, now: Date, everyMs = analyzeEveryMs()): Promise<string | null> {
  const table = tableToAnalyze(await tableStatistics(client), now, everyMs);
  if (!table) return null;
  const done = await analyzeTables(client, [table]);
  return done[0] ?? null;
}
