/**
 * Authenticated agents kept in memory, so that an MCP request with a known static token costs no database round
 * trip before its work begins: what the authentication statement read (the agent, its user, and the policy's head)
 * is kept per token hash, and forgotten, all of it, on every change that could alter any of it.
 *
 * Changes are pushed: triggers (prisma/routines.sql, countersign_announce_change) notify the channel
 * countersign_changes when a transaction that changes an agent, a user, the policy document, the form rules or the
 * tool catalog commits, and one connection per process LISTENs to it. On PostgreSQL that is LISTEN/NOTIFY; on the
 * embedded database, lib/db/embedded.ts forwards each notification to every connection that listens.
 *
 * The cache only answers while that connection is listening. Before it listens, when it fails or ends, and until it
 * listens again (with backoff), every request is authenticated by the database as before. A read during which a
 * change was announced is not kept (it carries the generation it began in). What this leaves: another
 * process's change takes effect here when its notification arrives, a few milliseconds after it commits; a change
 * made by this process is waited for (`changesSeen`) by the actions that revoke an agent or change a user, so their
 * effect is immediate here. Refusals are never kept: a new agent's token works at once.
 *
 * Started by the server (instrumentation.ts) unless COUNTERSIGN_AGENT_CACHE=0; not in tests unless a test starts it.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { logFailure } from "../log";
import { db } from "../db/client";
import { databaseUrl } from "../db/url";

export const CHANGES_CHANNEL = "countersign_changes";
/** Tokens remembered at most; the oldest is forgotten first. */
export const AGENT_CACHE_LIMIT = 10_000;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;
/** How long `changesSeen` waits for its own notification before it stops trusting the listener. */
const SEEN_TIMEOUT_MS = 5_000;

export type AgentCacheOptions = { url?: string; seenTimeoutMs?: number };

type State = {
  url: string;
  seenTimeoutMs: number;
  client: pg.Client | null;
  listening: boolean;
  stopped: boolean;
  generation: number;
  /** Each read in the current generation: a change clears them all, and nothing read before it is added. */
  entries: Map<string, unknown>;
  waiters: Map<string, () => void>;
  retryMs: number;
  timer: NodeJS.Timeout | null;
  ready: Promise<void> | null;
};

async function sendNotification(channel: string, payload: string): Promise<void> {
  await db().$executeRaw`SELECT pg_notify(${channel}, ${payload})`;
}

const holder = globalThis as unknown as { __countersignAgentCache?: State };

function forgetAll(s: State): void {
  s.generation++;
  s.entries.clear();
}

function lost(s: State, client: pg.Client, err?: unknown): void {
  if (s.client !== client) return;
  if (err) logFailure("agent cache listener", err);
  s.client = null;
  s.listening = false;
  forgetAll(s);
  client.end().catch(() => {});
  if (s.stopped) return;
  const wait = s.retryMs;
  s.retryMs = Math.min(RETRY_MAX_MS, s.retryMs * 2);
  s.timer = setTimeout(() => {
    s.timer = null;
    void listen(s);
  }, wait);
  s.timer.unref();
}

async function listen(s: State): Promise<void> {
  if (s.stopped) return;
  const client = new pg.Client({ connectionString: s.url, keepAlive: true });
  s.client = client;
  client.on("notification", (n) => {
    if (n.channel !== CHANGES_CHANNEL) return;
    const waiter = n.payload?.startsWith("seen:") ? s.waiters.get(n.payload) : undefined;
    if (waiter) return waiter();
    forgetAll(s);
  });
  client.on("error", (e) => lost(s, client, e));
  client.on("end", () => lost(s, client));
  try {
    await client.connect();
    await client.query(`LISTEN ${CHANGES_CHANNEL}`);
  } catch (e) {
    lost(s, client, e);
    return;
  }
  if (s.client !== client) return;
  // Whatever changed while nobody listened is unknown: start from nothing.
  forgetAll(s);
  s.listening = true;
  s.retryMs = RETRY_MIN_MS;
}

/**
 * Starts listening (once per process); resolves when the first attempt has listened or failed. A failed attempt is
 * retried in the background; until one succeeds the cache answers nothing.
 */
export function startAgentCache({ url = databaseUrl(), seenTimeoutMs = SEEN_TIMEOUT_MS }: AgentCacheOptions = {}): Promise<void> {
  // Turned off for the deployment: every request is authenticated by the database.
  if (process.env.COUNTERSIGN_AGENT_CACHE === "0") return Promise.resolve();
  const existing = holder.__countersignAgentCache;
  if (existing && !existing.stopped) return existing.ready ?? Promise.resolve();
  const s: State = {
    url,
    seenTimeoutMs,
    client: null,
    listening: false,
    stopped: false,
    generation: 0,
    entries: new Map(),
    waiters: new Map(),
    retryMs: RETRY_MIN_MS,
    timer: null,
    ready: null,
  };
  holder.__countersignAgentCache = s;
  s.ready = listen(s);
  return s.ready;
}

export async function stopAgentCache(): Promise<void> {
  const s = holder.__countersignAgentCache;
  if (!s) return;
  s.stopped = true;
  s.listening = false;
  if (s.timer) clearTimeout(s.timer);
  forgetAll(s);
  const client = s.client;
  s.client = null;
  holder.__countersignAgentCache = undefined;
  await client?.end().catch(() => {});
}

/** Whether the cache answers now (its connection is listening). */
export function agentCacheListening(): boolean {
  return holder.__countersignAgentCache?.listening === true;
}

/**
 * The generation a caller reads in: pass it to `rememberAgent` with what it read. Null while the cache does not
 * answer (nothing is remembered then).
 */
export function agentCacheGeneration(): number | null {
  const s = holder.__countersignAgentCache;
  return s?.listening ? s.generation : null;
}

export function cachedAgent<T>(tokenHash: string): T | undefined {
  const s = holder.__countersignAgentCache;
  if (!s?.listening) return undefined;
  return s.entries.get(tokenHash) as T | undefined;
}

/** Keeps `value`, read in `generation`, unless a change was announced since (or the listener was lost). */
export function rememberAgent(tokenHash: string, value: unknown, generation: number): void {
  const s = holder.__countersignAgentCache;
  if (!s?.listening || s.generation !== generation) return;
  s.entries.delete(tokenHash);
  s.entries.set(tokenHash, value);
  if (s.entries.size > AGENT_CACHE_LIMIT) s.entries.delete(s.entries.keys().next().value!);
}

/**
 * Returns once this process's listener has received every change committed before the call (notifications arrive
 * in commit order, so receiving one sent now is enough). When it is not received in time, or cannot be sent, the
 * listener is treated as lost: the cache answers nothing until it listens again.
 */
export async function changesSeen(notify = sendNotification): Promise<void> {
  const s = holder.__countersignAgentCache;
  if (!s?.listening || !s.client) return;
  const client = s.client;
  const payload = `seen:${randomUUID()}`;
  let timer: NodeJS.Timeout | undefined;
  const seen = new Promise<boolean>((resolve) => {
    s.waiters.set(payload, () => resolve(true));
    timer = setTimeout(() => resolve(false), s.seenTimeoutMs);
  });
  try {
    try {
      await notify(CHANGES_CHANNEL, payload);
    } catch (e) {
      // Whether the listener is current cannot be known: it stops answering until it listens again.
      return lost(s, client, e);
    }
    if (!(await seen)) lost(s, client, new Error("the listener did not receive a notification in time"));
  } finally {
    clearTimeout(timer);
    s.waiters.delete(payload);
  }
}
