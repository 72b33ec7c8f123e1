/**
 * `npm start`: everything needed to run Countersign on one machine.
 *  1. the database: DATABASE_URL when set (a real PostgreSQL), else the embedded PGlite server on .data/,
 *     owned by this process (a second `npm start` refuses instead of opening the folder);
 *  2. migrations (a no-op when up to date), the demo data (idempotent; SEED=0 skips it), reconciliation of
 *     submission intents a crash left behind;
 *  3. `next build` when the sources are newer than the last build;
 *  4. `next start` on PORT (default 3000), with DATABASE_URL pointing at the database.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { keyFilePath, keyRing } from "../lib/crypto/keys";
import { closeDb, createDb } from "../lib/db/client";
import { currentOwner, startEmbedded, type EmbeddedServer } from "../lib/db/embedded";
import { applyMigrations } from "../lib/db/migrate";
import { seedDemo } from "../lib/db/seed";
import { describeNotifySettings } from "../lib/notify/settings";
import { describeSlackSettings } from "../lib/slack/settings";
import { describeOAuthSettings } from "../lib/auth/oauth-config";
import { describeSessionSettings, SessionSettingsError } from "../lib/auth/session-lifetime";
import { parseSsoConfig, SsoConfigError } from "../lib/auth/sso-config";
import { logFailure, logInfo } from "../lib/log";
import { registerDemoFilesystem } from "../lib/gateway/demo";
import { reconcileIntents } from "../lib/tasks/reconcile";
import { keepAliveMs, nextBin, spawnNextStart } from "./next-server";
import { dataDir } from "./paths";

const port = Number(process.env.PORT ?? 3000);
// Progress lines are server log lines (JSON, lib/log.ts); refusals to start are written for the person at the terminal.
const log = (msg: string) => logInfo(msg);

function authSecret(): string {
  if (process.env.AUTH_SECRET) return process.env.AUTH_SECRET;
  const file = path.join(dataDir(), "auth-secret");
  fs.mkdirSync(dataDir(), { recursive: true });
  if (!fs.existsSync(file)) fs.writeFileSync(file, randomBytes(32).toString("base64url"), { mode: 0o600 });
  return fs.readFileSync(file, "utf8").trim();
}

function newestMtime(dir: string): number {
  let newest = 0;
  if (!fs.existsSync(dir)) return newest;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "generated" || entry.name.startsWith(".")) continue;
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

function needsBuild(): boolean {
  if (process.env.COUNTERSIGN_REBUILD === "1") return true;
  // 0: serve the build in .next as it is (test suites that start their own server from a build made once).
  if (process.env.COUNTERSIGN_REBUILD === "0") return false;
  const stamp = path.join(".next", "BUILD_ID");
  if (!fs.existsSync(stamp)) return true;
  const built = fs.statSync(stamp).mtimeMs;
  const sources = ["app", "lib", "components", "public"].map(newestMtime);
  const files = ["next.config.ts", "proxy.ts", "package.json", "postcss.config.mjs", "instrumentation.ts"].filter((f) => fs.existsSync(f)).map((f) => fs.statSync(f).mtimeMs);
  return Math.max(...sources, ...files) > built;
}

// Bad single sign-on or session settings stop the start here, with every problem named, rather than at the first sign-in.
try {
  const sso = parseSsoConfig(process.env);
  if (sso.providers.length) log(`single sign-on: ${sso.providers.map((p) => p.name).join(", ")}; password sign-in ${sso.passwordSignIn ? "on" : "off"}`);
  log(describeSessionSettings());
} catch (e) {
  if (!(e instanceof SsoConfigError) && !(e instanceof SessionSettingsError)) throw e;
  console.error(`[countersign] ${e.message}`);
  process.exit(1);
}

let embedded: EmbeddedServer | null = null;
let url = process.env.DATABASE_URL;
if (url) {
  log(`using the PostgreSQL at DATABASE_URL`);
} else {
  const owner = currentOwner(dataDir());
  if (owner && owner.pid !== process.pid) {
    console.error(
      `[countersign] Another Countersign (process ${owner.pid}) already owns the embedded database in ${dataDir()}. ` +
        `Stop it first, or run this one against it with DATABASE_URL=postgres://postgres:postgres@127.0.0.1:${owner.port}/postgres?sslmode=disable.`,
    );
    process.exit(1);
  }
  embedded = await startEmbedded({ dataDir: dataDir(), port: Number(process.env.COUNTERSIGN_DB_PORT ?? 0) });
  url = embedded.url;
  log(`embedded PostgreSQL (PGlite) on 127.0.0.1:${embedded.port}, data in ${dataDir()}`);
}

const stopDb = async () => {
  await closeDb().catch(() => {});
  await embedded?.stop().catch(() => {});
};

try {
  log(describeNotifySettings());
  log(describeSlackSettings());
  log(describeOAuthSettings());
  const applied = await applyMigrations(url);
  log(applied.length ? `migrations applied: ${applied.join(", ")}` : "database schema is up to date");
  const keys = keyRing();
  log(`sensitive records sealed under data key ${keys.current.kid} (${keys.source === "env" ? "COUNTERSIGN_DATA_KEYS" : `generated key file ${keyFilePath()}`})`);
  const client = createDb(url, 2);
  if (process.env.SEED !== "0") {
    // The test scripts' scratch servers leave out the demo policy's business-hours rule (see SeedOptions).
    await seedDemo(client, { steadyClock: process.env.COUNTERSIGN_DEMO_STEADY_CLOCK === "1" });
    log("demo data loaded");
  }
  process.env.DATABASE_URL = url;
  if (process.env.SEED !== "0") {
    // The gateway demo: server-filesystem over stdio on a folder beside the demo shop.
    const folder = path.join(dataDir(), "demo-files");
    await registerDemoFilesystem(folder, new Date())
      .then((added) => added && log(`registered the demo upstream server-filesystem on ${folder} (tools filesystem__*)`))
      .catch((e) => log(`the demo upstream was not registered: ${(e as Error).message}`));
  }
  const r = await reconcileIntents(new Date(), embedded ? 0 : 30_000);
  if (r.recovered || r.closed) log(`reconciled submission intents: ${r.recovered} recovered, ${r.closed} closed`);
  await client.$disconnect();
  await closeDb();
} catch (e) {
  logFailure("start-up", e);
  console.error(`[countersign] start-up failed: ${(e as Error).message}`);
  await stopDb();
  process.exit(1);
}

const env = { ...process.env, DATABASE_URL: url, AUTH_SECRET: authSecret(), AUTH_TRUST_HOST: "true", PORT: String(port) };
if (needsBuild()) {
  log("building the app (next build)...");
  const build = spawnSync(process.execPath, [nextBin, "build"], { stdio: "inherit", env: { ...env, NEXT_TELEMETRY_DISABLED: "1" } });
  if (build.status !== 0) {
    await stopDb();
    process.exit(build.status ?? 1);
  }
}

log(`serving on http://localhost:${port} (MCP endpoint: http://localhost:${port}/mcp)`);
if (keepAliveMs() === null) {
  console.error("[start] COUNTERSIGN_KEEP_ALIVE_MS must be a whole number of milliseconds, at least 1000");
  await stopDb();
  process.exit(1);
}
const server = spawnNextStart(port, env);
let stopping = false;
const shutdown = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  server.kill(signal);
};
process.on("SIGINT", () => shutdown("SIGINT"));
process.on("SIGTERM", () => shutdown("SIGTERM"));
server.on("exit", async (code) => {
  await stopDb();
  process.exit(code ?? 0);
});
