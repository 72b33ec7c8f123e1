import { afterAll, inject } from "vitest";
import { closeDb } from "../../lib/db/client";

process.env.DATABASE_URL = inject("databaseUrl");
process.env.DB_POOL_MAX ??= "6";

afterAll(async () => {
  await closeDb();
});
