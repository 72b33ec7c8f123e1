/**
 * Countersign replicas for the multi-replica tests: real `next start` processes from the production build
 * (scripts/next-server.ts, as `npm start` launches them) on one PostgreSQL database, with one shared set of
 * secrets. The global setup starts three; a spec may start a fourth of its own (with a fault point armed) and kill it.
 */
import { type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { spawnNextStart } from "../scripts/next-server";
import { buildRpcRequest, parseRpcBody, TASKS } from "../lib/mcp/raw-request";

export type Replica = { name: string; url: string; port: number; child: ChildProcess; log: string };

/** The server behind TEST_DATABASE_URL, as a URL to one of its databases (`postgres` by default). */
export function databaseOn(testDatabaseUrl: string, name = "postgres"): string {
  const u = new URL(testDatabaseUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(testDatabaseUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: databaseOn(testDatabaseUrl) });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function createDatabase(testDatabaseUrl: string, name: string): Promise<string> {
  if (!/^cs_repl_[a-z0-9_]+$/.test(name)) throw new Error(`not a replica test database name: ${name}`);
  await admin(testDatabaseUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  return databaseOn(testDatabaseUrl, name);
}

export async function dropDatabase(testDatabaseUrl: string, name: string): Promise<void> {
  if (!/^cs_repl_[a-z0-9_]+$/.test(name)) throw new Error(`not a replica test database name: ${name}`);
  await admin(testDatabaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/** What every replica of one deployment shares: the database and the secrets (fresh random ones per run). */
export function sharedEnvironment(databaseUrl: string, scratch: string): Record<string, string> {
  const key = () => randomBytes(32).toString("base64");
  return {
    DATABASE_URL: databaseUrl,
    AUTH_SECRET: randomBytes(32).toString("base64url"),
    AUTH_TRUST_HOST: "true",
    COUNTERSIGN_REQUEST_STATE_KEYS: randomBytes(32).toString("base64url"),
    COUNTERSIGN_DATA_KEYS: `replicas1:${key()}`,
    COUNTERSIGN_DATA_DIR: path.join(scratch, "data"),
    COUNTERSIGN_SANDBOX_DIR: path.join(scratch, "sandbox"),
    // Sweepers run often, so what one replica leaves is picked up soon; a claim expires soon after its holder died.
    COUNTERSIGN_SWEEP_MS: "500",
    COUNTERSIGN_EXECUTION_DEADLINE_MS: "8000",
    COUNTERSIGN_POLL_INTERVAL_MS: "500",
    DB_POOL_MAX: "4",
  };
}

/** Starts one replica; its output goes to `<logDir>/<name>.log`. */
export function startReplica(name: string, port: number, env: Record<string, string>, logDir: string): Replica {
  fs.mkdirSync(logDir, { recursive: true });
  const log = path.join(logDir, `${name}.log`);
  const out = fs.openSync(log, "a");
  const base = { ...process.env };
  delete base.NODE_OPTIONS;
  const child = spawnNextStart(port, { ...base, ...env, COUNTERSIGN_INSTANCE: name, NODE_ENV: "production" }, ["ignore", out, out]);
  fs.closeSync(out);
  return { name, port, url: `http://127.0.0.1:${port}`, child, log };
}

/** Waits until the replica answers /login (bounded: 90 s); throws with its log's tail if it died or never did. */
export async function waitReady(r: Replica, timeoutMs = 90_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (let i = 0; Date.now() < until && i < 1000; i++) {
    if (r.child.exitCode !== null || r.child.signalCode !== null) break;
    const ok = await fetch(`${r.url}/login`).then((res) => res.ok, () => false);
    if (ok) return;
    await new Promise((res) => setTimeout(res, 250));
  }
  const tail = fs.existsSync(r.log) ? fs.readFileSync(r.log, "utf8").split("\n").slice(-30).join("\n") : "";
  throw new Error(`replica ${r.name} on port ${r.port} did not start:\n${tail}`);
}

/** Stops a replica (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. */
export async function stopReplica(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((res) => child.once("exit", () => res()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Kills a process by pid (the global setup's replicas, from a spec): SIGKILL, then waits until it is gone. */
export async function killPid(pid: number, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((res) => setTimeout(res, 50));
  }
}

export type RpcReply = { status: number; message: any };

let rpcId = 1;

/** One JSON-RPC request to `${baseUrl}/mcp` as the agent holding `token`. Throws when the replica is unreachable. */
export async function mcpAt(baseUrl: string, token: string, method: string, params: Record<string, unknown> = {}, caps: object = TASKS): Promise<RpcReply> {
  const { headers, body } = buildRpcRequest(method, params, { token, caps, id: `repl-${rpcId++}`, clientName: "countersign-replicas-test" });
  const res = await fetch(`${baseUrl}/mcp`, { method: "POST", headers, body, signal: AbortSignal.timeout(120_000) });
  const text = await res.text();
  return { status: res.status, message: parseRpcBody(text, res.headers.get("content-type") ?? "") };
}

/** The replicas the global setup started, as it published them to the specs. */
export function publishedReplicas(): { name: string; url: string; pid: number }[] {
  return JSON.parse(process.env.REPLICAS ?? "[]");
}

/** The shared environment the global setup used (for a spec that starts a replica of its own). */
export function publishedEnvironment(): Record<string, string> {
  return JSON.parse(process.env.REPLICAS_ENV ?? "{}");
}

/** A client of the replicas' database, for the specs' assertions. */
export async function withDb<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: publishedEnvironment().DATABASE_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Polls `probe` until it returns a value other than undefined (bounded in count and time), else throws `what`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000, everyMs = 200): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (let i = 0; i < 5000 && Date.now() < end; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((res) => setTimeout(res, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}
