import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, inject } from "vitest";
import { closeDb } from "../../lib/db/client";

process.env.DATABASE_URL = inject("databaseUrl");
process.env.DB_POOL_MAX ??= "6";
// The server log of a test run: failures and warnings only (tests that read the log capture it at info).
process.env.COUNTERSIGN_LOG_LEVEL ??= "warn";
// Tests create many approval tasks per agent at fixed instants; the limit tests lower these themselves.
process.env.COUNTERSIGN_MAX_PENDING_PER_AGENT ??= "100000";
process.env.COUNTERSIGN_SUBMISSIONS_PER_MINUTE ??= "100000";
process.env.COUNTERSIGN_SANDBOX_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), "countersign-sandbox-"));

afterAll(async () => {
  await closeDb();
});
