/**
 * The gateway client: one MCP client connection per upstream server, opened on first use with the MCP SDK's
 * client, negotiating the revision the upstream speaks (`versionNegotiation: auto`: 2026-07-28 servers and
 * 2025-11-25 ones such as the SDK 1.x servers). stdio upstreams are child processes Countersign starts and
 * supervises: when one exits unexpectedly its health is recorded and it is restarted with bounded exponential
 * backoff; a call that arrives meanwhile connects at once. `closeUpstreams()` and the process's exit stop them.
 *
 * An upstream's `notifications/tools/list_changed` makes the gateway list its tools again at once
 * (lib/gateway/rediscover.ts).
 *
 * Forwarding a call tells apart what happened (ToolError classes of lib/tools/types):
 *  - the upstream could not be reached, nothing was sent: UpstreamUnavailableError (a ToolBusyError: re-evaluation
 *    may retry it within the approval's validity; at call time the agent reads that the tool did not run);
 *  - the request was sent and no answer came (the transport failed, the process died, the deadline passed):
 *    ToolOutcomeUnknownError, never retried;
 *  - the upstream answered with a JSON-RPC error: ToolError (it refused the call).
 */
import { Client, ProtocolError, SdkError, SdkErrorCode, StreamableHTTPClientTransport, type CallToolResult, type Tool } from "@modelcontextprotocol/client";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/client/stdio";
import { db } from "../db/client";
import { logFailure } from "../log";
import { sanitizeForModel } from "../sanitize";
import { ToolBusyError, ToolError, ToolOutcomeUnknownError } from "../tools/types";
import { Redirected, postToolCall, postsOnSession, type Session } from "./post-call";
import { connectionOf, UpstreamSecretError, type UpstreamConnection } from "./servers";

export class UpstreamUnavailableError extends ToolBusyError {}

const CLIENT_INFO = { name: "countersign-gateway", version: "0.1.0" };
const CONNECT_TIMEOUT_MS = Number(process.env.COUNTERSIGN_UPSTREAM_CONNECT_TIMEOUT_MS ?? 15_000);
const CALL_TIMEOUT_MS = Number(process.env.COUNTERSIGN_UPSTREAM_CALL_TIMEOUT_MS ?? 60_000);
const MAX_TIMER_MS = 2_147_483_647;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 30_000;

type Conn = {
  client: Client;
  transport: StdioClientTransport | StreamableHTTPClientTransport;
  name: string;
  stdio: boolean;
  pid: number | null;
  closing: boolean;
  /** A 2025-era HTTP session: its calls are posted directly (./post-call.ts). */
  session: Omit<Session, "sessionId" | "protocolVersion"> | null;
};

type Slot = {
  conn: Promise<Conn> | null;
  failures: number;
  restart: NodeJS.Timeout | null;
};

const slots = new Map<string, Slot>();
const children = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A stdio upstream does not outlive Countersign: on exit every child still running is killed.
  process.once("exit", () => {
    for (const pid of children) {
      try {
        process.kill(pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
  });
}

function slotOf(serverId: string): Slot {
  let s = slots.get(serverId);
  if (!s) {
    s = { conn: null, failures: 0, restart: null };
    slots.set(serverId, s);
  }
  return s;
}

export function backoffMs(failures: number): number {
  return Math.min(BACKOFF_MIN_MS * 2 ** Math.max(0, failures - 1), BACKOFF_MAX_MS);
}

async function recordHealth(serverId: string, health: "up" | "down", note: string | null): Promise<void> {
  await db()
    .upstreamServer.updateMany({ where: { id: serverId }, data: { health, healthNote: note, healthAt: new Date() } })
    .catch((e) => logFailure("upstream health", e));
}

function transportOf(c: UpstreamConnection): StdioClientTransport | StreamableHTTPClientTransport {
  if (c.transport === "stdio") {
    return new StdioClientTransport({ command: c.command!, args: c.args, env: { ...getDefaultEnvironment(), ...c.env }, stderr: "pipe" });
  }
  // No resuming of a dropped response stream: a call whose answer was cut off has an unknown outcome, at once.
  return new StreamableHTTPClientTransport(new URL(c.url!), {
    requestInit: { headers: c.headers },
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 100, maxReconnectionDelay: 100, reconnectionDelayGrowFactor: 1 },
  });
}

/** A new client connected to the server `settings` describe, within the connect timeout; `prepare` runs before connecting. */
async function connectTo(settings: UpstreamConnection, prepare?: (client: Client) => void): Promise<{ client: Client; transport: StdioClientTransport | StreamableHTTPClientTransport }> {
  const transport = transportOf(settings);
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: "auto" } } as never);
  prepare?.(client);
  if (transport instanceof StdioClientTransport) {
    // The child's diagnostics are not forwarded (they can quote arguments); drain them so it never blocks.
    transport.stderr?.on("data", () => {});
  }
  const timer = AbortSignal.timeout(CONNECT_TIMEOUT_MS);
  try {
    await Promise.race([
      client.connect(transport),
      new Promise((_, reject) => timer.addEventListener("abort", () => reject(new Error("connect timed out")))),
    ]);
  } catch (e) {
    await client.close().catch(() => {});
    throw e;
  }
  return { client, transport };
}

async function open(serverId: string): Promise<Conn> {
  const settings = await connectionOf(serverId).catch((e) => {
    if (e instanceof UpstreamSecretError) throw new UpstreamUnavailableError(e.message);
    throw e;
  });
  if (!settings) throw new UpstreamUnavailableError("The upstream server is not registered or is disabled.");
  const { client, transport } = await connectTo(settings, (c) => {
    c.setNotificationHandler("notifications/tools/list_changed", () => rediscover(settings.name));
  });
  const session = transport instanceof StreamableHTTPClientTransport ? { url: new URL(settings.url!), headers: settings.headers ?? {} } : null;
  const conn: Conn = { client, transport, name: settings.name, stdio: settings.transport === "stdio", pid: null, closing: false, session };
  if (transport instanceof StdioClientTransport && transport.pid) {
    conn.pid = transport.pid;
    children.add(transport.pid);
    installExitHook();
  }
  client.onclose = () => lost(serverId, conn);
  if (!conn.stdio) {
    // A response stream that broke off ends the connection, so calls waiting on it fail now rather than at their deadline.
    client.onerror = () => {
      if (!conn.closing) void client.close().catch(() => {});
    };
  }
  return conn;
}

/** An upstream that says its tool list changed is rediscovered at once: a changed tool is held before it is called. */
function rediscover(name: string): void {
  void import("./rediscover").then((m) => m.rediscoverNow(name)).catch((e) => logFailure("rediscovery on list_changed", e));
}

/** A connection ended: forget it; a supervised stdio server that exited on its own is started again after a backoff. */
function lost(serverId: string, conn: Conn): void {
  if (conn.pid) children.delete(conn.pid);
  const slot = slotOf(serverId);
  if (conn.closing) return;
  slot.conn = null;
  slot.failures += 1;
  void recordHealth(serverId, "down", conn.stdio ? "the process exited" : "the connection closed");
  if (conn.stdio) scheduleRestart(serverId, slot);
}

function scheduleRestart(serverId: string, slot: Slot): void {
  if (slot.restart) return;
  slot.restart = setTimeout(() => {
    slot.restart = null;
    connection(serverId).catch(() => {});
  }, backoffMs(slot.failures));
  slot.restart.unref();
}

/** The open connection to a server, opening it when there is none. Throws UpstreamUnavailableError. */
export async function connection(serverId: string): Promise<Conn> {
  const slot = slotOf(serverId);
  if (!slot.conn) {
    if (slot.restart) {
      clearTimeout(slot.restart);
      slot.restart = null;
    }
    const pending = open(serverId);
    slot.conn = pending;
    pending.then(
      () => {
        slot.failures = 0;
        void recordHealth(serverId, "up", null);
      },
      (e) => {
        if (slot.conn === pending) slot.conn = null;
        slot.failures += 1;
        void recordHealth(serverId, "down", e instanceof UpstreamUnavailableError ? e.message : "could not connect");
        const row = slots.get(serverId);
        if (row) void isStdio(serverId).then((stdio) => stdio && scheduleRestart(serverId, row));
      },
    );
  }
  try {
    return await slot.conn;
  } catch (e) {
    if (e instanceof UpstreamUnavailableError) throw e;
    throw new UpstreamUnavailableError("The upstream server could not be reached.");
  }
}

async function isStdio(serverId: string): Promise<boolean> {
  const row = await db().upstreamServer.findUnique({ where: { id: serverId }, select: { transport: true, enabled: true } });
  return !!row && row.enabled && row.transport === "stdio";
}

/** Drops a connection (for an HTTP upstream whose request failed: the next call opens a new session). */
async function drop(serverId: string, conn: Conn): Promise<void> {
  const slot = slotOf(serverId);
  if (slot.conn) {
    const current = await slot.conn.catch(() => null);
    if (current === conn) slot.conn = null;
  }
  conn.closing = true;
  await conn.client.close().catch(() => {});
  if (conn.pid) children.delete(conn.pid);
}

function causeCodes(e: unknown): string[] {
  const codes: string[] = [];
  for (let c: unknown = e, i = 0; c && i < 6; c = (c as { cause?: unknown }).cause, i++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === "string") codes.push(code);
  }
  return codes;
}

/** The request never left: the peer refused the connection (HTTP), or the transport was not connected. */
function neverSent(e: unknown): boolean {
  const codes = causeCodes(e);
  return codes.includes("ECONNREFUSED") || codes.includes(SdkErrorCode.NotConnected);
}

/** Lists every tool of a server (all pages). */
export async function listUpstreamTools(serverId: string): Promise<Tool[]> {
  return listAll((await connection(serverId)).client);
}

async function listAll(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const r = await client.listTools(cursor ? { cursor } : undefined, { timeout: CALL_TIMEOUT_MS });
    tools.push(...r.tools);
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/**
 * The tools of a server that is not registered (one a policy file is about to register), through a connection of
 * its own that is closed at once (a stdio server is started and stopped again). Nothing is recorded.
 */
export async function probeUpstreamTools(settings: UpstreamConnection): Promise<Tool[]> {
  const { client } = await connectTo(settings);
  try {
    return await listAll(client);
  } finally {
    await client.close().catch(() => {});
  }
}

/**
 * Forwards one tools/call and returns the upstream's result as it gave it. `deadline` bounds the call (an
 * approval task's execution deadline); past it the outcome is unknown.
 */
export async function callUpstream(serverId: string, tool: string, args: Record<string, unknown>, deadline?: Date): Promise<CallToolResult> {
  const conn = await connection(serverId);
  // A timer longer than 2^31-1 ms fires at once: a deadline that far off is no bound.
  const timeout = deadline ? Math.min(MAX_TIMER_MS, Math.max(1, deadline.getTime() - Date.now())) : CALL_TIMEOUT_MS;
  try {
    const version = conn.client.getNegotiatedProtocolVersion();
    if (conn.session && conn.transport instanceof StreamableHTTPClientTransport && postsOnSession(version)) {
      const session = { ...conn.session, sessionId: conn.transport.sessionId, protocolVersion: version };
      try {
        return await postToolCall(session, tool, args, timeout, (method) => method === "notifications/tools/list_changed" && rediscover(conn.name));
      } catch (e) {
        if (!(e instanceof Redirected)) throw e;
        // Not taken: this connection's calls go through the SDK client, which follows the redirect.
        conn.session = null;
      }
    }
    return (await conn.client.callTool({ name: tool, arguments: args }, { timeout })) as CallToolResult;
  } catch (e) {
    if (!conn.stdio) await drop(serverId, conn);
    if (e instanceof ProtocolError) {
      throw new ToolError(`The upstream server refused the call: ${sanitizeForModel(e.message)}.`);
    }
    if (neverSent(e)) {
      await recordHealth(serverId, "down", "could not be reached");
      throw new UpstreamUnavailableError(`The upstream server ${conn.name} could not be reached.`);
    }
    await recordHealth(serverId, "down", "the connection failed during a call");
    if (e instanceof SdkError && e.code === SdkErrorCode.RequestTimeout) {
      throw new ToolOutcomeUnknownError(`The upstream server ${conn.name} did not answer before the deadline.`);
    }
    throw new ToolOutcomeUnknownError(`The connection to the upstream server ${conn.name} failed after the call was sent.`);
  }
}

/** Closes a server's connection (its settings changed): the next call connects with the new ones. */
export async function dropUpstream(serverId: string): Promise<void> {
  const slot = slots.get(serverId);
  if (!slot) return;
  if (slot.restart) clearTimeout(slot.restart);
  slot.restart = null;
  const conn = slot.conn ? await slot.conn.catch(() => null) : null;
  if (conn) await drop(serverId, conn);
  slot.conn = null;
}

/** The pid of a server's supervised process, when it runs (for tests and the console). */
export async function upstreamPid(serverId: string): Promise<number | null> {
  const slot = slots.get(serverId);
  const conn = slot?.conn ? await slot.conn.catch(() => null) : null;
  return conn?.pid ?? null;
}

/** Stops every connection and supervised process (Countersign's shutdown, and tests). */
export async function closeUpstreams(): Promise<void> {
  const all = [...slots.entries()];
  slots.clear();
  await Promise.all(
    all.map(async ([, slot]) => {
      if (slot.restart) clearTimeout(slot.restart);
      const conn = slot.conn ? await slot.conn.catch(() => null) : null;
      if (conn) {
        conn.closing = true;
        await conn.client.close().catch(() => {});
        if (conn.pid) children.delete(conn.pid);
      }
    }),
  );
}
