/**
 * The embedded PostgreSQL: PGlite (PostgreSQL compiled to WASM) served over the wire protocol on a loopback port,
 * so the app, scripts and tests talk to it with `pg` exactly as they would to a real server.
 *
 * Exactly one process may own a data folder: two PGlite instances on one folder lose writes silently. The owner
 * holds `<dir>/owner.json` (created with O_EXCL); a second opener reads it and, if the owner is alive, connects to
 * its port instead of opening the folder; if the owner is dead, the stale lock is taken over.
 */
import fs from "node:fs";
import net from "node:net";
import { freeLoopbackPort } from "../net/free-port";
import path from "node:path";

export const EMBEDDED_MAX_CONNECTIONS = 40;

export type EmbeddedServer = {
  url: string;
  port: number;
  owned: boolean;
  stop(): Promise<void>;
};

type Owner = { pid: number; port: number; startedAt: string };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function urlFor(port: number): string {
  return `postgres://postgres:postgres@127.0.0.1:${port}/postgres?sslmode=disable`;
}

async function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: "127.0.0.1" });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** Reads the owner record of a data folder, or null when nobody alive owns it. */
export function currentOwner(dataDir: string): Owner | null {
  const lock = path.join(dataDir, "owner.json");
  try {
    const owner = JSON.parse(fs.readFileSync(lock, "utf8")) as Owner;
    return alive(owner.pid) ? owner : null;
  } catch {
    return null;
  }
}

function takeLock(dataDir: string, owner: Owner): boolean {
  const lock = path.join(dataDir, "owner.json");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(lock, "wx");
      fs.writeSync(fd, JSON.stringify(owner));
      fs.closeSync(fd);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      if (currentOwner(dataDir)) return false;
      // Stale lock from a dead process: remove it and try once more (O_EXCL arbitrates a concurrent taker).
      try {
        fs.unlinkSync(lock);
      } catch {
        /* someone else removed it first */
      }
    }
  }
  return false;
}

/**
 * Starts (or joins) the embedded server for `dataDir`. `dataDir` null means an in-memory database (tests).
 * `port` 0 picks a free port.
 */
export async function startEmbedded(opts: { dataDir: string | null; port?: number; maxConnections?: number }): Promise<EmbeddedServer> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { PGLiteSocketServer, PGLiteSocketHandler } = await import("@electric-sql/pglite-socket");
  coalesceReplies(PGLiteSocketHandler.prototype);
  const port = opts.port && opts.port > 0 ? opts.port : await freeLoopbackPort();

  if (opts.dataDir) {
    fs.mkdirSync(opts.dataDir, { recursive: true });
    const me: Owner = { pid: process.pid, port, startedAt: new Date().toISOString() };
    if (!takeLock(opts.dataDir, me)) {
      const owner = currentOwner(opts.dataDir);
      if (owner && (await portAnswers(owner.port))) {
        return { url: urlFor(owner.port), port: owner.port, owned: false, stop: async () => {} };
      }
      throw new Error(
        `The embedded database folder ${opts.dataDir} is owned by process ${owner?.pid ?? "?"}, which does not answer on its port. ` +
          `Stop that process (or remove ${path.join(opts.dataDir, "owner.json")} if it is gone) and try again.`,
      );
    }
  }

  const release = () => {
    if (!opts.dataDir) return;
    try {
      const lock = path.join(opts.dataDir, "owner.json");
      const owner = JSON.parse(fs.readFileSync(lock, "utf8")) as Owner;
      if (owner.pid === process.pid) fs.unlinkSync(lock);
    } catch {
      /* already gone */
    }
  };

  try {
    const db = opts.dataDir ? await PGlite.create(path.join(opts.dataDir, "pgdata")) : await PGlite.create();
    const server = new PGLiteSocketServer({
      db,
      port,
      host: "127.0.0.1",
      maxConnections: opts.maxConnections ?? EMBEDDED_MAX_CONNECTIONS,
    });
    keepExtendedQueryGroupsTogether(server);
    await server.start();
    let stopped = false;
    return {
      url: urlFor(port),
      port,
      owned: true,
      async stop() {
        if (stopped) return;
        stopped = true;
        await server.stop();
        await db.close();
        release();
      },
    };
  } catch (e) {
    release();
    throw e;
  }
}

/** Client message types of the extended query protocol that leave a statement or portal half-done until Sync. */
const EXTENDED = new Set(["P", "B", "D", "E", "C", "H"].map((c) => c.charCodeAt(0)));

type QueueItem = { handlerId: number; message: Uint8Array; onData(d: Uint8Array): void; resolve(n: number): void; reject(e: unknown): void };
type QueryQueue = {
  queue: QueueItem[];
  processing: boolean;
  lastHandlerId: number | null;
  db: { isInTransaction(): boolean; runExclusive<T>(fn: () => Promise<T>): Promise<T>; execProtocolRawStream(m: Uint8Array, o: { onRawData(d: Uint8Array): void }): Promise<void> };
  processQueue(): Promise<void>;
  clearQueueForHandler(id: number): void;
};

/**
 * pglite-socket 0.2.17 serializes single protocol messages across connections, and keeps one connection exclusive
 * only while it is inside a transaction. Between transactions, two connections' extended-protocol messages
 * (Parse, Bind, Execute ... Sync) interleave, and one clobbers the other's unnamed statement ("unnamed prepared
 * statement does not exist", "portal does not exist") under any concurrency. This keeps a connection exclusive
 * from its first extended-protocol message to its Sync as well, exactly as the library already does for
 * transactions.
 */
function keepExtendedQueryGroupsTogether(server: unknown): void {
  const q = (server as { queryQueue: QueryQueue }).queryQueue;
  let midGroup = false;
  const notifications = new NotificationForwarding();
  q.processQueue = async function processQueue(this: QueryQueue) {
    if (this.processing || this.queue.length === 0) return;
    this.processing = true;
    try {
      while (this.queue.length > 0) {
        let item: QueueItem | undefined;
        if ((midGroup || this.db.isInTransaction()) && this.lastHandlerId !== null) {
          const i = this.queue.findIndex((r) => r.handlerId === this.lastHandlerId);
          if (i === -1) break; // wait for the exclusive connection's next message
          item = this.queue.splice(i, 1)[0];
        } else {
          item = this.queue.shift();
        }
        if (!item) break;
        const current = item;
        let bytes = 0;
        const reply = new NotificationScanner();
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(current.message, {
              onRawData: (d) => {
                bytes += d.length;
                reply.scan(d);
                current.onData(d);
              },
            }),
          );
        } catch (e) {
          current.reject(e);
          continue;
        }
        midGroup = EXTENDED.has(current.message[0]);
        this.lastHandlerId = current.handlerId;
        notifications.after(current, reply.found);
        current.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  }.bind(q);
  const clear = q.clearQueueForHandler.bind(q);
  q.clearQueueForHandler = (id: number) => {
    clear(id);
    notifications.forget(id);
    if (q.lastHandlerId === id && midGroup) {
      midGroup = false;
      q.lastHandlerId = null;
      void q.processQueue();
    }
  };
}

const NOTIFICATION = "A".charCodeAt(0);
const SIMPLE_QUERY = "Q".charCodeAt(0);

/** The NotificationResponse messages in one reply, which may reach onRawData in pieces split anywhere. */
export class NotificationScanner {
  found: Uint8Array[] = [];
  #header = new Uint8Array(5);
  #headerBytes = 0;
  #remaining = 0;
  #message: Uint8Array | null = null;
  #filled = 0;

  scan(d: Uint8Array): void {
    let i = 0;
    while (i < d.length) {
      if (this.#remaining > 0) {
        const take = Math.min(this.#remaining, d.length - i);
        if (this.#message) this.#message.set(d.subarray(i, i + take), this.#filled);
        this.#filled += take;
        this.#remaining -= take;
        i += take;
        if (this.#remaining === 0 && this.#message) {
          this.found.push(this.#message);
          this.#message = null;
        }
        continue;
      }
      this.#header[this.#headerBytes++] = d[i++];
      if (this.#headerBytes < 5) continue;
      this.#headerBytes = 0;
      const length = new DataView(this.#header.buffer).getInt32(1);
      // The length counts itself: a message's body is length - 4 bytes after the type and length.
      this.#remaining = Math.max(0, length - 4);
      this.#message = this.#header[0] === NOTIFICATION ? new Uint8Array(5 + this.#remaining) : null;
      if (this.#message) this.#message.set(this.#header, 0);
      this.#filled = 5;
      if (this.#remaining === 0 && this.#message) {
        this.found.push(this.#message);
        this.#message = null;
      }
    }
  }
}

/**
 * LISTEN across connections. PGlite is one database session that every connection shares, so a notification is
 * written only into the reply of the statement that committed it, whichever connection sent that. This remembers
 * the connections that sent LISTEN (a simple query, as node-postgres sends it) and gives each a copy of every
 * notification another connection's reply carried, once that reply is complete: every other connection is then
 * between messages, where the protocol lets a notification arrive. The session listens on every channel any
 * connection asked for, so a listener may also receive another channel's notifications; node-postgres hands each
 * to its client's 'notification' listeners, which check the channel.
 */
class NotificationForwarding {
  #listeners = new Map<number, (d: Uint8Array) => void>();

  after(item: QueueItem, found: Uint8Array[]): void {
    if (item.message[0] === SIMPLE_QUERY) {
      const sql = new TextDecoder().decode(item.message.subarray(5, Math.min(item.message.length, 64))).trimStart().toUpperCase();
      if (sql.startsWith("LISTEN ")) this.#listeners.set(item.handlerId, item.onData);
    }
    for (const message of found) {
      for (const [id, send] of this.#listeners) if (id !== item.handlerId) send(message);
    }
  }

  forget(handlerId: number): void {
    this.#listeners.delete(handlerId);
  }
}

type HandlerProto = { handleData(data: Buffer): Promise<number>; __coalesced?: true };

/**
 * pglite-socket 0.2.17 answers each protocol message of a client's packet with a write of its own: a statement
 * sent as Parse, Bind, Describe, Execute and Sync comes back as five TCP segments, and the client's process wakes
 * for each. Measured from another process on the 2-core machine, the agent's authentication statement took 1.96 ms
 * before and 1.31 ms after, an audited record 1.47 and 1.07 ms (medians of 300). The socket is corked while
 * one packet's messages are processed, so their replies leave in one write. Nothing waits on a reply inside the
 * packet: the client sent every message in it before reading any answer.
 */
export function coalesceReplies(proto: unknown): void {
  const p = proto as HandlerProto;
  if (p.__coalesced) return;
  const handleData = p.handleData;
  p.handleData = async function (this: { socket: import("node:net").Socket | null }, data: Buffer) {
    const socket = this.socket;
    socket?.cork();
    try {
      return await handleData.call(this, data);
    } finally {
      socket?.uncork();
    }
  };
  p.__coalesced = true;
}
