import { defineConfig } from "prisma/config";

// Prisma 7 reads no .env; the URL is only needed by commands that talk to a database,
// and Countersign applies migrations itself (lib/db/migrate.ts).
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
});
