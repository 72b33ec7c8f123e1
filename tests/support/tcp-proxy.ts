/** A TCP proxy for fault tests (tests/db-outage.test.ts, lib/auth/agent-cache.test.ts). */
import net from "node:net";

/** A TCP proxy to PostgreSQL that can drop every connection and refuse new ones until restored, or hold back its replies. */
export async function startProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  let cut = false;
  // While paused, what the server sends is held back (in order) instead of reaching the clients.
  let paused = false;
  const held: [net.Socket, Buffer][] = [];
  const server = net.createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.on("data", (d: Buffer) => (paused ? held.push([client, d]) : client.write(d)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    cut() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      cut = false;
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      for (const [client, d] of held.splice(0)) client.write(d);
    },
    close: () =>
      new Promise<void>((resolve) => {
        cut = true;
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
