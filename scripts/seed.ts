/** Loads the demo data into the database named by DATABASE_URL (idempotent). */
import { closeDb, db } from "../lib/db/client";
import { seedDemo } from "../lib/db/seed";

await seedDemo(db());
await closeDb();
console.log("Demo data loaded.");
