/**
 * Gateway benchmark: `npm run bench:gateway`. Prints figures; it is not a test.
 *
 * In one run, against @modelcontextprotocol/server-everything over Streamable HTTP (a child process on a loopback
 * port) and a scratch database (in-memory embedded PGlite, or a fresh database on the PostgreSQL server
 * DATABASE_URL names): the same allowed call (`echo`) made directly to the upstream with the SDK client, and
 * through Countersign's /mcp (route handler behind a Node HTTP server, policy, audit, forwarding) running in a
 * process of its own as deployed (scripts/bench-gateway-server.ts); median latency over N sequential calls and
 * throughput with 8 concurrent clients; the database statements of one forwarded call (counted on a route in this
 * process); then the resident memory of one supervised stdio upstream (server-filesystem).
 *
 *   N=300 CONCURRENT_CALLS=400 npx tsx scripts/bench-gateway.ts
 *
 * COUNTERSIGN_DIRECT_CALLS=0 (passed on to the Countersign process) sends every request through the SDK's
 * per-request server, for comparison with plain calls answered without it (lib/mcp/direct-call.ts).
 */
import { fork, spawn } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import { freeLoopbackPort } from "../lib/net/free-port";
import os from "node:os";
import path from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { scratchDatabase } from "./bench-db";
import { applyMigrations } from "../lib/db/migrate";
import { countStatements, median } from "./bench-support";

const N = Number(process.env.N ?? 300);
const CONCURRENT_CALLS = Number(process.env.CONCURRENT_CALLS ?? 400);
const CLIENTS = 8;



async function waitListening(port: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, "127.0.0.1");
      c.once("connect", () => (c.destroy(), resolve(true)));
      c.once("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("server-everything did not start");
}

const server = await scratchDatabase();
process.env.DATABASE_URL = server.url;
process.env.COUNTERSIGN_DATA_KEYS ??= `bench:${Buffer.alloc(32, 7).toString("base64")}`;
await applyMigrations(server.url);
const { db, closeDb } = await import("../lib/db/client");
const { seedDemo, DEMO_AGENTS } = await import("../lib/db/seed");
const { saveUpstream } = await import("../lib/gateway/servers");
const { discoverServer } = await import("../lib/gateway/discover");
const { closeUpstreams, upstreamPid } = await import("../lib/gateway/connections");
const { currentDocument, saveDocument } = await import("../lib/policy/store");
const { serveRoute } = await import("../lib/mcp/testing");
await seedDemo(db(), { steadyClock: true });

const port = await freeLoopbackPort();
const everything = spawn(process.execPath, [path.resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "streamableHttp"], {
  env: { ...process.env, PORT: String(port) },
  stdio: "ignore",
});
await waitListening(port);
const upstreamUrl = new URL(`http://127.0.0.1:${port}/mcp`);
const now = new Date();
await saveUpstream({ name: "everything", transport: "streamable-http", url: upstreamUrl.toString() }, "system:bench", now);
await discoverServer("everything", now);
const doc = await currentDocument();
await saveDocument({ ...doc.body, policies: `${doc.body.policies}\n\n@id("bench-echo")\npermit (principal, action == Action::"everything__echo", resource);\n` }, "system:bench", now, { check: async () => [] });

// Countersign as deployed: its own process, sharing the scratch database.
const countersign = fork(path.resolve("scripts/bench-gateway-server.ts"), [], {
  // PROFILE_DIR=<folder>: the Countersign process writes a CPU profile there when it stops.
  execArgv: ["--import", "tsx", ...(process.env.PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.PROFILE_DIR}`] : [])],
  env: { ...process.env, COUNTERSIGN_LOG_LEVEL: process.env.COUNTERSIGN_LOG_LEVEL ?? "warn" },
  stdio: ["ignore", "inherit", "inherit", "ipc"],
});
const countersignUrl = await new Promise<URL>((resolve, reject) => {
  countersign.once("message", (m) => resolve(new URL((m as { url: string }).url)));
  countersign.once("exit", (code) => reject(new Error(`the Countersign process exited (${code}) before it listened`)));
});
// The floor of any gateway: a byte relay in its own process in front of the same upstream.
const relay = fork(path.resolve("scripts/bench-gateway-relay.ts"), [], {
  execArgv: ["--import", "tsx"],
  env: { ...process.env, UPSTREAM_URL: upstreamUrl.toString() },
  stdio: ["ignore", "inherit", "inherit", "ipc"],
});
const relayUrl = await new Promise<URL>((resolve, reject) => {
  relay.once("message", (m) => resolve(new URL((m as { url: string }).url)));
  relay.once("exit", (code) => reject(new Error(`the relay exited (${code}) before it listened`)));
});
// The same route in this process, only to count one call's statements at the driver.
const route = await serveRoute();
const token = DEMO_AGENTS[1].token;

async function directClient(url = upstreamUrl): Promise<Client> {
  const c = new Client({ name: "bench-direct", version: "1" }, { versionNegotiation: { mode: "auto" } } as never);
  await c.connect(new StreamableHTTPClientTransport(url));
  return c;
}
async function gatewayClient(url = countersignUrl): Promise<Client> {
  const c = new Client({ name: "bench-gateway", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await c.connect(new StreamableHTTPClientTransport(url, { authProvider: { token: async () => token } }));
  return c;
}

const echoArgs = (i: number) => ({ message: `m ${i}` });
const deployArgs = (i: number) => ({ service: "checkout-api", environment: "staging", version: `1.0.${i}` });

type Leg = { client: Client; tool: string; args?: (i: number) => Record<string, unknown> };

/**
 * The median latency of each leg over N sequential calls, the legs taken in turn (direct, relay, gateway, direct...):
 * a burst of noise on this shared machine lands on all of them alike instead of on whichever was measured then.
 */
async function latencies(legs: Leg[]): Promise<number[]> {
  const out = legs.map(() => [] as number[]);
  const once = async (leg: Leg, i: number) => {
    const r = await leg.client.callTool({ name: leg.tool, arguments: (leg.args ?? echoArgs)(i) });
    if (r.isError) throw new Error(`${leg.tool} failed: ${JSON.stringify(r.content)}`);
  };
  for (let i = 0; i < 30; i++) for (const leg of legs) await once(leg, 100_000 + i);
  for (let i = 0; i < N; i++) {
    for (const [k, leg] of legs.entries()) {
      const t = performance.now();
      await once(leg, i);
      out[k].push(performance.now() - t);
    }
  }
  return out.map(median);
}

async function throughput(clients: Client[], tool: string): Promise<number> {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    clients.map(async (c) => {
      while (next < CONCURRENT_CALLS) {
        const i = next++;
        await c.callTool({ name: tool, arguments: { message: `c ${i}` } });
      }
    }),
  );
  return (CONCURRENT_CALLS / (performance.now() - t)) * 1000;
}

const direct = await directClient();
const gateway = await gatewayClient();
const relayed = await directClient(relayUrl);
// The same route with a built-in allowed tool (a staging deploy): Countersign's own per-call work, no forwarding.
const [directMs, relayMs, gatewayMs, builtinMs] = await latencies([
  { client: direct, tool: "echo" },
  { client: relayed, tool: "echo" },
  { client: gateway, tool: "everything__echo" },
  { client: gateway, tool: "deploy_service", args: deployArgs },
]);
// The database statements of one call through Countersign (authentication, policy read, the call's record and
// audit event), counted at the driver: the part of the overhead that is round trips.
const local = await gatewayClient(route.url);
await local.callTool({ name: "everything__echo", arguments: echoArgs(1) });
const counter = await countStatements();
const oneCall = await counter.measure(() => local.callTool({ name: "everything__echo", arguments: echoArgs(0) }));
counter.restore();
await local.close();
const directClients = await Promise.all(Array.from({ length: CLIENTS }, directClient));
const gatewayClients = await Promise.all(Array.from({ length: CLIENTS }, gatewayClient));
const directRps = await throughput(directClients, "echo");
const relayClients = await Promise.all(Array.from({ length: CLIENTS }, () => directClient(relayUrl)));
const relayRps = await throughput(relayClients, "echo");
const gatewayRps = await throughput(gatewayClients, "everything__echo");

// One supervised stdio upstream: server-filesystem on a scratch folder, after one call.
const folder = await fs.mkdtemp(path.join(os.tmpdir(), "cs-bench-fs-"));
await saveUpstream(
  { name: "filesystem", transport: "stdio", command: process.execPath, args: [path.resolve("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), folder] },
  "system:bench",
  now,
);
await discoverServer("filesystem", now);
const fsServer = await db().upstreamServer.findUniqueOrThrow({ where: { name: "filesystem" } });
const pid = await upstreamPid(fsServer.id);
const status = pid ? await fs.readFile(`/proc/${pid}/status`, "utf8").catch(() => "") : "";
const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);

console.log(`gateway benchmark (${os.cpus().length} cores, Node ${process.version}, database: ${server.kind})`);
console.log(`  median latency, ${N} sequential echo calls each (taken in turn): direct ${directMs.toFixed(2)} ms, through Countersign ${gatewayMs.toFixed(2)} ms (ratio ${(gatewayMs / directMs).toFixed(2)}x)`);
console.log(`  the floor of any gateway, a byte relay in its own process: ${relayMs.toFixed(2)} ms (ratio ${(relayMs / directMs).toFixed(2)}x), ${relayRps.toFixed(0)}/s at ${CLIENTS} clients (${((relayRps / directRps) * 100).toFixed(0)}%)`);
console.log(`  database statements in one call through Countersign: ${oneCall.statements} (${oneCall.transactions} transactions, ${oneCall.dbMs.toFixed(2)} ms)`);
console.log(`  for comparison, an allowed built-in call (deploy_service to staging) through the same route: ${builtinMs.toFixed(2)} ms`);
console.log(`  throughput, ${CLIENTS} concurrent clients, ${CONCURRENT_CALLS} calls: direct ${directRps.toFixed(0)}/s, through Countersign ${gatewayRps.toFixed(0)}/s (${((gatewayRps / directRps) * 100).toFixed(0)}%)`);
console.log(`  one supervised stdio upstream (server-filesystem): resident memory ${(rssKb / 1024).toFixed(1)} MiB`);

for (const c of [direct, relayed, gateway, ...directClients, ...relayClients, ...gatewayClients]) await c.close().catch(() => {});
relay.disconnect();
await route.close();
countersign.disconnect();
await new Promise((r) => countersign.once("exit", r));
await closeUpstreams();
everything.kill();
await fs.rm(folder, { recursive: true, force: true });
await closeDb();
await server.drop();
process.exit(0);
