import net from "node:net";

/**
 * A loopback port free now, for a test server whose URL must be known before it starts (an issuer names its own
 * port) or that is restarted on the same URL. Never a fixed number: two suites on one machine would collide.
 */
export async function freeLoopbackPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", resolve);
  });
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
