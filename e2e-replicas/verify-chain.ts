/** Child process of the multi-replica tests (DATABASE_URL set): prints the audit chain's verification as JSON. */
import { closeDb } from "../lib/db/client";
import { verifyAuditChain } from "../lib/audit/verify";

console.log(JSON.stringify(await verifyAuditChain()));
await closeDb();
