/**
 * The embedded server answers one packet of protocol messages with one write (coalesceReplies in ./embedded.ts):
 * a parameterized statement (Parse, Bind, Describe, Execute, Sync) is answered in one write, not one per message.
 * Counted at the server's socket, so the test reads what crossed to the kernel, not how long it took.
 */
import net from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbedded, type EmbeddedServer } from "./embedded";

let server: EmbeddedServer;
beforeAll(async () => {
  server = await startEmbedded({ dataDir: null });
});
afterAll(() => server.stop());

/**
 * The writes the server's side of the connection hands to the kernel for each statement. Node's sockets send every
 * write, or every corked batch of writes, through `_writeGeneric` (one call per syscall); only server-side sockets
 * (accepted by a net.Server) are counted.
 */
async function writesPerStatement(client: pg.Client, statements: number): Promise<number[]> {
  const proto = net.Socket.prototype as unknown as { _writeGeneric: (...a: unknown[]) => unknown };
  const original = proto._writeGeneric;
  let writes = 0;
  proto._writeGeneric = function (this: net.Socket & { server?: unknown }, ...a: unknown[]) {
    if (this.server) writes++;
    return original.apply(this, a);
  };
  const counts: number[] = [];
  try {
    for (let i = 0; i < statements; i++) {
      writes = 0;
      const { rows } = await client.query({ text: "SELECT $1::int + 1 AS n, repeat('x', $1::int) AS pad", values: [i] });
      expect(rows).toEqual([{ n: i + 1, pad: "x".repeat(i) }]);
      counts.push(writes);
    }
  } finally {
    proto._writeGeneric = original;
  }
  return counts;
}

describe("the embedded server's replies", () => {
  it("leave in one write per statement of the extended protocol, with the right rows", async () => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      const counts = await writesPerStatement(client, 40);
      expect(counts).toEqual(counts.map(() => 1));
    } finally {
      await client.end();
    }
  });

  it("still keep two connections' statements apart when they interleave", async () => {
    const clients = [new pg.Client({ connectionString: server.url }), new pg.Client({ connectionString: server.url })];
    await Promise.all(clients.map((c) => c.connect()));
    try {
      const results = await Promise.all(
        clients.flatMap((c, k) => Array.from({ length: 25 }, (_, i) => c.query({ text: "SELECT $1::text AS v", values: [`${k}:${i}`] }).then((r) => r.rows[0].v))),
      );
      expect(results).toEqual(clients.flatMap((_, k) => Array.from({ length: 25 }, (_, i) => `${k}:${i}`)));
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });
});
