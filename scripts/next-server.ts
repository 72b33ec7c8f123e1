/**
 * How a Countersign `next start` process is launched from the production build in .next: by scripts/start.ts and
 * by the multi-replica tests (e2e-replicas/), so both run exactly what production runs.
 */
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import path from "node:path";

export const nextBin = path.join("node_modules", "next", "dist", "bin", "next");

/**
 * Idle keep-alive connections stay open longer than the clients and proxies in front keep theirs (Node closes them
 * after 5 s): a client that reuses a connection just as the server closes it gets a reset, not an answer.
 * COUNTERSIGN_KEEP_ALIVE_MS, default 65 s; null when it is not a whole number of milliseconds of at least 1000.
 */
export function keepAliveMs(env: NodeJS.ProcessEnv = process.env): number | null {
  const ms = Number(env.COUNTERSIGN_KEEP_ALIVE_MS ?? 65_000);
  return Number.isInteger(ms) && ms >= 1000 ? ms : null;
}

/** `next start` on `port` with `env` (DATABASE_URL, AUTH_SECRET... already in it). */
export function spawnNextStart(port: number, env: NodeJS.ProcessEnv, stdio: StdioOptions = "inherit"): ChildProcess {
  const keepAlive = keepAliveMs(env);
  if (keepAlive === null) throw new Error("COUNTERSIGN_KEEP_ALIVE_MS must be a whole number of milliseconds, at least 1000");
  return spawn(process.execPath, [nextBin, "start", "-p", String(port), "--keepAliveTimeout", String(keepAlive)], {
    stdio,
    env: { ...env, PORT: String(port), NEXT_TELEMETRY_DISABLED: "1" },
  });
}
