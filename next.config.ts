import type { NextConfig } from "next";

const config: NextConfig = {
  // The embedded database and the WASM schema engine are started by the launcher, never bundled into pages.
  serverExternalPackages: ["@electric-sql/pglite", "@electric-sql/pglite-socket", "@prisma/schema-engine-wasm", "pg"],
  poweredByHeader: false,
  typedRoutes: false,
};

export default config;
