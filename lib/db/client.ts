/**
 * The one Prisma client of a process, through Prisma's `pg` driver adapter, for the embedded server and for a
 * real PostgreSQL alike. Created lazily on first use so that importing this module (for example during
 * `next build`) opens no connection.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { observePool } from "../metrics";
import { Prisma, PrismaClient } from "./generated/client";
import { sealedQuery } from "./sealed";
import { databaseUrl } from "./url";
import { logFailure } from "../log";

export type Db = PrismaClient;

const holder = globalThis as unknown as { __countersignDb?: PrismaClient };

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
    observePool(pool);
  }
  return holder.__countersignDb;
}

export async function closeDb(): Promise<void> {
  const client = holder.__countersignDb;
  holder.__countersignDb = undefined;
  observePool(null);
  if (client) await client.$disconnect();
}

export { Prisma };
