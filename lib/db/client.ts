/**
 * The one Prisma client of a process, through Prisma's `pg` driver adapter, for the embedded server and for a
 * real PostgreSQL alike. Created lazily on first use so that importing this module (for example during
 * `next build`) opens no connection.
 */
import { createHash } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { observePool } from "../metrics";
import { Prisma, PrismaClient } from "./generated/client";
import { sealedQuery } from "./sealed";
import { databaseUrl } from "./url";
import { logFailure } from "../log";

export type Db = PrismaClient;

const holder = globalThis as unknown as { __countersignDb?: PrismaClient; __countersignPool?: pg.Pool };

export function poolMax(): number {
  const n = Number(process.env.DB_POOL_MAX ?? 8);
  return Number.isInteger(n) && n > 0 ? n : 8;
}

const isJsonNull = (v: unknown) => v === null || v === Prisma.DbNull || v === Prisma.JsonNull || v === Prisma.AnyNull;

/**
 * A client whose every query passes the sealing boundary (lib/db/sealed.ts): sensitive columns are encrypted on
 * write and opened, or refused, on read. The extension changes no types, so the client keeps its own type.
 */
export function createDb(url = databaseUrl(), max = poolMax()): PrismaClient {
  return build(url, max).client;
}

function build(url: string, max: number): { client: PrismaClient; pool: pg.Pool } {
  // The pool is made here (not inside the adapter) so that /metrics can read its counts; disconnecting ends it.
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 5_000 });
  // A connection the server ends while it is checked out between statements (a terminated backend) emits 'error'
  // with no pool listener attached: without this one that would be an uncaught exception that ends the process.
  pool.on("connect", (client) => client.on("error", (err) => logFailure("database connection", err)));
  // A connection that fails while idle in the pool (the server restarted, a backend was terminated, the network
  // dropped) is discarded by the pool and replaced on next use; it is logged here and never thrown, so it cannot
  // take the process down. A query on a dead connection fails that query only.
  // (The adapter ships its own copy of the pg type declarations; the runtime pg is the one imported here.)
  const adapter = new PrismaPg(pool as unknown as ConstructorParameters<typeof PrismaPg>[0], {
    disposeExternalPool: true,
    onPoolError: (err) => logFailure("database idle connection", err),
    onConnectionError: (err) => logFailure("database connection", err),
  });
  // A transaction waits for a free connection (and for the row locks it needs) as long as a request may take,
  // instead of Prisma's 2 s default: a burst of calls queues on the pool rather than failing.
  const base = new PrismaClient({ adapter, transactionOptions: { maxWait: 20_000, timeout: 30_000 } });
  return { client: base.$extends({ query: { $allOperations: sealedQuery(isJsonNull) } }) as unknown as PrismaClient, pool };
}

export function db(): PrismaClient {
  if (!holder.__countersignDb) {
    const { client, pool } = build(databaseUrl(), poolMax());
    holder.__countersignDb = client;
    holder.__countersignPool = pool;
    observePool(pool);
  }
  return holder.__countersignDb;
}

export async function closeDb(): Promise<void> {
  const client = holder.__countersignDb;
  holder.__countersignDb = undefined;
  holder.__countersignPool = undefined;
  observePool(null);
  if (client) await client.$disconnect();
}

/** A value as the statement reads it: a Date as an ISO instant (the `timestamp(3)` columns hold UTC, as Prisma writes them). */
const param = (v: unknown) => (v instanceof Date ? v.toISOString() : v);

/** At most this many statement texts are prepared by name; any other text is sent unnamed (parsed each time). */
export const PREPARED_TEXTS_MAX = 64;
const preparedNames = new Map<string, string>();

/**
 * The name a statement text is prepared under on each connection of the pool (the server parses and plans it once
 * per connection, then only binds and executes), or undefined when it is sent unnamed: DB_PREPARE=0 (a pooler in
 * front of PostgreSQL that cannot keep named statements, such as PgBouncer before 1.21 in transaction mode), or
 * PREPARED_TEXTS_MAX texts are already named. The name is a digest of the text, so one name never means two texts.
 */
export function preparedName(text: string): string | undefined {
  if (process.env.DB_PREPARE === "0") return undefined;
  const known = preparedNames.get(text);
  if (known !== undefined || preparedNames.size >= PREPARED_TEXTS_MAX) return known;
  const name = `cs_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
  preparedNames.set(text, name);
  return name;
}

/** The parts of pg's connection that say which named statements it has parsed (pg 8: set on ParseComplete). */
type Parsed = { connection?: { parsedStatements?: Record<string, string> } };

/**
 * A statement on a connection of the pool, prepared under `name` when one is given. The embedded server serves
 * every connection in one session, so a name another connection (or another process) prepared exists there
 * already: the server refuses the Parse (42P05), and the statement (the same text, its name being the text's
 * digest) is then bound on this connection without parsing it again. A statement the session no longer has (26000:
 * someone ran DEALLOCATE ALL or DISCARD ALL) is parsed again. PostgreSQL gives each connection a session of its own,
 * where another connection's names are never seen.
 */
async function runPrepared(pool: pg.Pool, name: string | undefined, text: string, values: unknown[]): Promise<pg.QueryResult> {
  if (name === undefined) return pool.query(text, values);
  const client = await pool.connect();
  try {
    const result = await queryNamed(client, name, text, values);
    client.release();
    return result;
  } catch (e) {
    // As pg's pool does after a failed statement: the connection is discarded, not reused.
    client.release(e instanceof Error ? e : true);
    throw e;
  }
}

/** One named statement on one connection; connections of one shared session can each find the other's Parse done or undone, and a few tries settle it. */
async function queryNamed(client: pg.PoolClient, name: string, text: string, values: unknown[]): Promise<pg.QueryResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.query({ name, text, values });
    } catch (e) {
      const parsed = (client as unknown as Parsed).connection?.parsedStatements;
      const code = (e as { code?: string }).code;
      if (attempt >= 4 || !parsed || (code !== "42P05" && code !== "26000")) throw e;
      // 42P05: the shared session has it already; 26000: the session lost it (DEALLOCATE ALL, DISCARD ALL).
      if (code === "42P05") parsed[name] = text;
      else delete parsed[name];
    }
  }
}

/**
 * Single statements straight on the client's pool, without Prisma's client in between (its query building and
 * result mapping cost about as much CPU as the statement's round trip): for the statements every MCP call sends,
 * the agent's authentication and an allowed call's record with its audit event. Each is a fixed text, prepared by
 * name (preparedName): parsing and planning the authentication statement with the policy's head cost more than
 * executing it. Raw SQL, so the sealing boundary (lib/db/sealed.ts) does not apply: a caller seals what it writes
 * and reads no sealed column. Rows come as pg gives them (a bigint as text; cast in SQL what must be otherwise).
 */
export function direct(): { query<T>(sql: Prisma.Sql): Promise<T[]>; $executeRawUnsafe(text: string, ...values: unknown[]): Promise<number> } {
  db();
  const pool = holder.__countersignPool!;
  const run = (text: string, values: unknown[]) => runPrepared(pool, preparedName(text), text, values.map(param));
  return {
    query: async <T>(sql: Prisma.Sql) => (await run(sql.text, sql.values)).rows as T[],
    $executeRawUnsafe: async (text: string, ...values: unknown[]) => (await run(text, values)).rowCount ?? 0,
  };
}

export { Prisma };
