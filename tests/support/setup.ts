import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, inject } from "vitest";
import { closeDb } from "../../lib/db/client";

process.env.DATABASE_URL = inject("databaseUrl");
process.env.DB_POOL_MAX ??= "6";
process.env.COUNTERSIGN_SANDBOX_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), "countersign-sandbox-"));

afterAll(async () => {
  await closeDb();
});
