/**
 * The one Prisma client of a process, through Prisma's `pg` driver adapter, for the embedded server and for a
 * real PostgreSQL alike. Created lazily on first use so that importing this module (for example during
 * `next build`) opens no connection.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/client";
import { databaseUrl } from "./url";

export type Db = PrismaClient;

const holder = globalThis as unknown as { __countersignDb?: PrismaClient };

export function poolMax(): number {
  const n = Number(process.env.DB_POOL_MAX ?? 8);
  return Number.isInteger(n) && n > 0 ? n : 8;
}

export function createDb(url = databaseUrl(), max = poolMax()): PrismaClient {
  const adapter = new PrismaPg({ connectionString: url, max, idleTimeoutMillis: 5_000 });
  return new PrismaClient({ adapter });
}

export function db(): PrismaClient {
  if (!holder.__countersignDb) holder.__countersignDb = createDb();
  return holder.__countersignDb;
}

export async function closeDb(): Promise<void> {
  const client = holder.__countersignDb;
  holder.__countersignDb = undefined;
  if (client) await client.$disconnect();
}

export { Prisma } from "./generated/client";
