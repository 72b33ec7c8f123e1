/**
 * Runs once when the Next.js server starts (never during `next build`): the listener that lets authenticated agents
 * be kept in memory (lib/auth/agent-cache.ts; COUNTERSIGN_AGENT_CACHE=0 turns it off), and the sweeper that
 * advances expired and decided tasks and completes stale execution claims. Several servers may sweep one database
 * at once.
 */
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs" || !process.env.DATABASE_URL) return;
  const { startAgentCache } = await import("./lib/auth/agent-cache");
  // Not awaited: until it listens (it retries on its own), agents are authenticated by the database.
  void startAgentCache();
  if (process.env.COUNTERSIGN_SWEEP === "0") return;
  const { sweep } = await import("./lib/execution/sweep");
  const every = Number(process.env.COUNTERSIGN_SWEEP_MS ?? 2_000);
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      await sweep(new Date());
    } catch (e) {
      const { logFailure } = await import("./lib/log");
      logFailure("sweep", e);
    } finally {
      running = false;
    }
  }, every);
  timer.unref();
}
