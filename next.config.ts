import type { NextConfig } from "next";
import { HSTS, NON_PAGE_CSP, STATIC_SECURITY_HEADERS } from "./lib/web/security-headers";

const config: NextConfig = {
  // The embedded database and the WASM schema engine are started by the launcher, never bundled into pages; the
  // logger and the metrics client are loaded once from node_modules by every bundle of the server.
  serverExternalPackages: ["@cedar-policy/cedar-wasm", "@electric-sql/pglite", "@electric-sql/pglite-socket", "@prisma/schema-engine-wasm", "pg", "pino", "prom-client"],
  poweredByHeader: false,
  typedRoutes: false,
  async headers() {
    return [
      { source: "/:path*", headers: [...STATIC_SECURITY_HEADERS] },
      // Pages get a nonce-based policy from proxy.ts; the rest a policy that lets nothing load or frame them.
      { source: "/api/:path*", headers: [{ key: "Content-Security-Policy", value: NON_PAGE_CSP }] },
      { source: "/mcp", headers: [{ key: "Content-Security-Policy", value: NON_PAGE_CSP }] },
      { source: "/:path(healthz|readyz|metrics)", headers: [{ key: "Content-Security-Policy", value: NON_PAGE_CSP }] },
      { source: "/:path*", has: [{ type: "header", key: "x-forwarded-proto", value: "https" }], headers: [HSTS] },
    ];
  },
};

export default config;
