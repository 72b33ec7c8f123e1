import net from "node:net";

/**
 * A loopback port free now, for a server whose URL must be known before it starts (the embedded database, an
 * issuer that names its own port) or that is restarted on the same URL. Tests use it instead of fixed numbers,
 * which collide when two suites run on one machine.
 */
export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
