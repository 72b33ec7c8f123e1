/**
 * LISTEN across connections. PGlite is one session, so a notification comes back only in the reply of the statement
 * that committed it; lib/db/embedded.ts finds it there (NotificationScanner) and gives every other connection that
 * listens a copy. The connection tests run on both databases: on PostgreSQL they state what the embedded one must do.
 */
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { NotificationScanner } from "./embedded";
import { databaseUrl } from "./url";

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

const cstring = (s: string) => Buffer.from(`${s}\0`);
const notification = (pid: number, channel: string, payload: string) => {
  const p = Buffer.alloc(4);
  p.writeInt32BE(pid);
  return message("A", Buffer.concat([p, cstring(channel), cstring(payload)]));
};

describe("NotificationScanner", () => {
  const first = notification(1, "countersign_changes", "Agent");
  const second = notification(1, "countersign_changes", "x".repeat(300));
  const reply = Buffer.concat([
    message("C", cstring("UPDATE 1")),
    first,
    message("D", Buffer.from([0, 1, 0, 0, 0, 1, 65])),
    second,
    message("Z", Buffer.from("I")),
  ]);

  it("finds every notification in a reply however it is split", () => {
    for (let cut = 0; cut <= reply.length; cut++) {
      const s = new NotificationScanner();
      s.scan(reply.subarray(0, cut));
      s.scan(reply.subarray(cut));
      expect(s.found.map((m) => Buffer.from(m))).toEqual([first, second]);
    }
    const bytes = new NotificationScanner();
    for (const b of reply) bytes.scan(Uint8Array.of(b));
    expect(bytes.found.map((m) => Buffer.from(m))).toEqual([first, second]);
  });

  it("finds none in a reply without one, even where a body byte reads as its type", () => {
    const s = new NotificationScanner();
    s.scan(Buffer.concat([message("D", Buffer.from("AAAA")), message("Z", Buffer.from("I"))]));
    expect(s.found).toEqual([]);
  });
});

async function connected(): Promise<{ client: pg.Client; got: string[] }> {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  const got: string[] = [];
  client.on("notification", (n) => got.push(`${n.channel}:${n.payload}`));
  return { client, got };
}

describe("a connection that listens", () => {
  it("receives what another connection commits, when it commits, and a connection that does not listen receives nothing", async () => {
    const listener = await connected();
    const other = await connected();
    const bystander = await connected();
    try {
      await listener.client.query("LISTEN test_channel");
      await other.client.query("SELECT pg_notify('test_channel', 'at once')");
      await vi.waitFor(() => expect(listener.got).toEqual(["test_channel:at once"]), { timeout: 5_000, interval: 5 });

      await other.client.query("BEGIN");
      await other.client.query("SELECT pg_notify('test_channel', 'in a transaction')");
      // Not before the commit: a notification that might be rolled back is not sent. (The listener sends nothing
      // meanwhile: on the embedded database an open transaction holds every other connection's statements.)
      await other.client.query("SELECT 1");
      expect(listener.got).toEqual(["test_channel:at once"]);
      await other.client.query("COMMIT");
      await vi.waitFor(() => expect(listener.got).toEqual(["test_channel:at once", "test_channel:in a transaction"]), { timeout: 5_000, interval: 5 });

      await other.client.query("BEGIN");
      await other.client.query("SELECT pg_notify('test_channel', 'rolled back')");
      await other.client.query("ROLLBACK");
      await other.client.query("SELECT pg_notify('test_channel', 'after')");
      await vi.waitFor(() => expect(listener.got.at(-1)).toBe("test_channel:after"), { timeout: 5_000, interval: 5 });
      expect(listener.got).not.toContain("test_channel:rolled back");
      await bystander.client.query("SELECT 1");
      expect(bystander.got).toEqual([]);
    } finally {
      for (const c of [listener, other, bystander]) await c.client.end();
    }
  });
});
