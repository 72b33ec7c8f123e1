/**
 * Countersign's /mcp in a process of its own, for `npm run bench:gateway`: as deployed, the agents, Countersign
 * and the upstream are three processes (with the embedded database, its PGlite lives in the process that started
 * it, as `npm start` keeps it beside the web server). Started with DATABASE_URL and COUNTERSIGN_DATA_KEYS of the
 * benchmark's scratch database; sends { url } over IPC once it listens and stops when its parent disconnects.
 */
import { startAgentCache, stopAgentCache } from "../lib/auth/agent-cache";
import { closeDb } from "../lib/db/client";
import { closeUpstreams } from "../lib/gateway/connections";
import { serveRoute } from "../lib/mcp/testing";

// As the server runs (instrumentation.ts): authenticated agents in memory, unless COUNTERSIGN_AGENT_CACHE=0.
await startAgentCache();
const route = await serveRoute();
process.send?.({ url: route.url.toString() });
process.on("disconnect", async () => {
  await route.close();
  await closeUpstreams();
  await stopAgentCache();
  await closeDb();
  process.exit(0);
});
